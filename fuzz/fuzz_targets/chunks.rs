//! BF.LOADCHUNK's decoder: a header (a chain's, RedisBloom's or the window dialect) builds an
//! empty filter (`filter_from_header`), then chunks are copied in (`load_chunk`). Whatever the
//! bytes, nothing panics or allocates past the limit, a refused chunk changes nothing, and a
//! filter that loaded is sound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom_core::scandump;
use rsbloom_fuzz::{check_filter, check_loaded_chunk, decode_dump, CHUNKS_LIMIT};

fuzz_target!(|data: &[u8]| {
    let Some((header, chunks)) = decode_dump(data) else {
        return;
    };
    let Ok(mut filter) = scandump::filter_from_header(header, 0x5eed, CHUNKS_LIMIT) else {
        return;
    };
    assert!(
        filter.bit_bytes() <= CHUNKS_LIMIT,
        "header over the limit accepted"
    );
    assert!(filter
        .bit_arrays()
        .iter()
        .all(|a| a.iter().all(|&b| b == 0)));
    for (iterator, chunk) in chunks {
        let before = filter.clone();
        match scandump::load_chunk(&mut filter, iterator, chunk) {
            Ok(()) => check_loaded_chunk(&filter, iterator, chunk),
            Err(_) => assert_eq!(filter, before, "a refused chunk changed the filter"),
        }
        // Loading bits never changes the parameters (a growing filter's chunk blocks are
        // what its records load, and a one-line filter's overflow what its pieces send
        // there, so their size changes with them).
        assert_eq!(filter.added(), before.added());
        if !matches!(
            filter,
            rsbloom_core::Filter::Growing(_) | rsbloom_core::Filter::Lines(_)
        ) {
            assert_eq!(filter.bit_bytes(), before.bit_bytes());
        }
    }
    check_filter(&filter, CHUNKS_LIMIT);
});
