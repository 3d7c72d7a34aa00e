//! The RDB decoders, through a FieldReader over typed fields: rsbloom's own encoding
//! (`rdb::decode`, version 100, chains and window filters) and RedisBloom's (`redisbloom_rdb::decode`, versions 0 to 4). A
//! value either is refused or loads as a sound filter, and nothing panics. A value may declare
//! more bits than it holds: see `lazy_alloc` for how the harness allocates those as Redis does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom_core::bloom::redisbloom_rdb::{self, MAX_ENCODING_VERSION};
use rsbloom_core::codec::FieldSlice;
use rsbloom_core::rdb::{self, ENCODING_VERSION};
use rsbloom_core::Filter;
use rsbloom_fuzz::{check_filter, decode_rdb};

/// Per-filter limit for growth in `check_chain`.
const GROWTH_LIMIT: u64 = 1 << 24;

fuzz_target!(init: rsbloom_fuzz::lazy_alloc::install(), |data: &[u8]| {
    let Some((encver, fields)) = decode_rdb(data) else {
        return;
    };
    let encver = i32::from(encver);
    let decoded = if encver == ENCODING_VERSION {
        rdb::decode(&mut FieldSlice(&fields))
    } else {
        let decoded =
            redisbloom_rdb::decode(&mut FieldSlice(&fields), encver, 0x5eed).map(Filter::Chain);
        if !(0..=MAX_ENCODING_VERSION).contains(&encver) {
            assert!(decoded.is_err(), "unknown encoding {encver} accepted");
        }
        decoded
    };
    if let Ok(filter) = decoded {
        check_filter(&filter, GROWTH_LIMIT);
    }
});
