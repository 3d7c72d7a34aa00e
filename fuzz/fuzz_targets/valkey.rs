//! valkey-bloom's filters: its `bloomfltr` RDB value (through a FieldReader over typed fields,
//! as the `rdb` target), its `BF.LOAD` blob, and the replayed `BF.INSERT … TIGHTENING t SEED s`
//! that creates one. The first byte picks the form: 0 the RDB value (then an `rdb` input), 1 the
//! blob, 2 the arguments (separated by newlines). A value either is refused or loads as a sound
//! filter, and nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom_core::bloom::args::insert;
use rsbloom_core::codec::FieldSlice;
use rsbloom_core::valkey::{load, rdb};
use rsbloom_core::{Filter, FilterSpec, Growth, ValkeyBloom, ValkeySpec, Window};
use rsbloom_fuzz::{check_filter, decode_rdb};

/// Per-filter limit for creation and growth: every accepted filter is cheap to check.
const LIMIT: u64 = 1 << 20;

fuzz_target!(init: rsbloom_fuzz::lazy_alloc::install(), |data: &[u8]| {
    let Some((&form, rest)) = data.split_first() else {
        return;
    };
    let decoded = match form {
        0 => {
            let Some((encver, fields)) = decode_rdb(rest) else {
                return;
            };
            let decoded = rdb::decode(&mut FieldSlice(&fields), i32::from(encver));
            if i32::from(encver) != rdb::ENCODING_VERSION {
                assert!(decoded.is_err(), "unknown encoding {encver} accepted");
            }
            decoded.ok()
        }
        1 => load::decode(rest).ok(),
        2 => {
            let mut argv: Vec<&[u8]> = vec![b"BF.INSERT", b"k"];
            argv.extend(rest.split(|&b| b == b'\n'));
            let defaults = FilterSpec {
                error: 0.01,
                capacity: 100,
                growth: Growth::Scaling(2),
                window: Window::Unbounded,
                refresh: true,
            };
            let Ok(i) = insert(&argv, defaults, true) else {
                return;
            };
            assert!(i.first_item <= argv.len());
            match (i.create, i.valkey) {
                (Some(spec), Some(v)) => {
                    let spec = ValkeySpec::of_insert(&spec, v.tightening, v.seed.unwrap_or([0; 32]));
                    let created = ValkeyBloom::new(&spec, LIMIT);
                    if let Ok(f) = &created {
                        assert!(f.bit_bytes() <= LIMIT, "created past the limit");
                    }
                    created.ok()
                }
                _ => None,
            }
        }
        _ => None,
    };
    if let Some(v) = decoded {
        check_filter(&Filter::from(v), LIMIT);
    }
});
