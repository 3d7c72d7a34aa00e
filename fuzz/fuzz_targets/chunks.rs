//! BF.LOADCHUNK's decoder: a header builds an empty chain (`chain_from_header`), then chunks
//! are copied in (`load_chunk`). Whatever the bytes, nothing panics or allocates past the
//! limit, a refused chunk changes nothing, and a chain that loaded is a sound filter.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom::core::scandump;
use rsbloom_fuzz::{check_chain, check_loaded_chunk, decode_dump, CHUNKS_LIMIT};

fuzz_target!(|data: &[u8]| {
    let Some((header, chunks)) = decode_dump(data) else {
        return;
    };
    let Ok(mut chain) = scandump::chain_from_header(header, 0x5eed, CHUNKS_LIMIT) else {
        return;
    };
    assert!(
        chain.bit_bytes() <= CHUNKS_LIMIT,
        "header over the limit accepted"
    );
    assert!(chain
        .links()
        .iter()
        .all(|l| l.words().iter().all(|&w| w == 0)));
    for (iterator, chunk) in chunks {
        let before = chain.clone();
        match scandump::load_chunk(&mut chain, iterator, chunk) {
            Ok(()) => check_loaded_chunk(&chain, iterator, chunk),
            Err(_) => assert_eq!(chain, before, "a refused chunk changed the filter"),
        }
        // Loading bits never changes the parameters.
        assert_eq!(chain.items(), before.items());
        assert_eq!(chain.links().len(), before.links().len());
    }
    check_chain(&chain, CHUNKS_LIMIT);
});
