//! The one-line growing layout's decoder (`LineFilter::decode`, the RDB value's fields after
//! the flag `LINES`; the `rdb` and `chunks` targets reach it through their dispatch): the first field is the item count, the rest the filter's fields. Whatever the fields, the
//! decode refuses them or gives a filter whose lookups and adds go on without a panic, whose
//! saved fields load again and save the same (its pieces may be cut otherwise than the
//! input's, and fields may follow it), and which holds every item whose add succeeded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom_core::codec::{Field, FieldSlice};
use rsbloom_core::growing::lines::LineFilter;
use rsbloom_fuzz::decode_rdb;

/// Per-filter limit for the adds' growth.
const GROWTH_LIMIT: u64 = 1 << 24;

fuzz_target!(init: rsbloom_fuzz::lazy_alloc::install(), |data: &[u8]| {
    let Some((_, fields)) = decode_rdb(data) else {
        return;
    };
    let Some((Field::Unsigned(items), fields)) = fields.split_first() else {
        return;
    };
    let Ok(mut filter) = LineFilter::decode(&mut FieldSlice(fields), *items) else {
        return;
    };
    let mut saved = Vec::new();
    filter.encode(&mut saved);
    let again = LineFilter::decode(&mut FieldSlice(&saved), *items).expect("its save loads");
    let mut resaved = Vec::new();
    again.encode(&mut resaved);
    assert!(resaved == saved, "a loaded save saves the same");
    let probes: Vec<[u8; 8]> = (0u64..256).map(u64::to_le_bytes).collect();
    filter.contains_many(probes.iter().map(|p| &p[..]), |_| {});
    let mut taken = Vec::new();
    filter.add_many(probes.iter().map(|p| &p[..]), GROWTH_LIMIT, |outcome| {
        taken.push(outcome.is_ok());
        true
    });
    let mut i = 0;
    filter.contains_many(probes.iter().map(|p| &p[..]), |found| {
        assert!(found || !taken[i], "item {i}'s add succeeded, and it is missing");
        i += 1;
    });
});
