//! The cuckoo filter's decoders and parsers: CF.LOADCHUNK's header and chunks
//! (`cuckoo_scandump`), the `MBbloomCF` RDB value in RedisBloom's encodings and rsbloom's
//! (`cuckoo_rdb`), and CF.RESERVE's and CF.INSERT's arguments. The first byte picks which; the
//! rest is the input. Whatever the bytes, nothing panics or allocates past the limit, a refused
//! chunk changes nothing, and a filter that loaded takes inserts, lookups, deletes and
//! compaction soundly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom_core::args::Refusal;
use rsbloom_core::codec::FieldSlice;
use rsbloom_core::cuckoo::args as cuckoo_args;
use rsbloom_core::cuckoo::{rdb as cuckoo_rdb, scandump as cuckoo_scandump};
use rsbloom_core::{Cuckoo, CuckooError, CuckooSpec};
use rsbloom_fuzz::{decode_dump, decode_rdb, CHUNKS_LIMIT};

fuzz_target!(init: rsbloom_fuzz::lazy_alloc::install(), |data: &[u8]| {
    let Some((&mode, input)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => loadchunk(input),
        1 => rdb(input),
        _ => arguments(input),
    }
});

fn loadchunk(input: &[u8]) {
    let Some((header, chunks)) = decode_dump(input) else {
        return;
    };
    let Ok(mut cf) = cuckoo_scandump::filter_from_header(header, CHUNKS_LIMIT) else {
        return;
    };
    assert!(
        cf.slot_bytes() <= CHUNKS_LIMIT,
        "header over the limit accepted"
    );
    assert!(cf.slot_arrays().all(|a| a.iter().all(|&b| b == 0)));
    for (iterator, chunk) in chunks {
        let before = cf.clone();
        if cuckoo_scandump::load_chunk(&mut cf, iterator, chunk).is_err() {
            assert_eq!(cf, before, "a refused chunk changed the filter");
        }
        assert_eq!(cf.slot_bytes(), before.slot_bytes());
    }
    exercise(cf);
}

fn rdb(input: &[u8]) {
    let Some((encver, fields)) = decode_rdb(input) else {
        return;
    };
    let encver = i32::from(encver);
    match cuckoo_rdb::decode(&mut FieldSlice(&fields), encver) {
        Ok(cf) => {
            assert!(matches!(encver, 0..=4 | cuckoo_rdb::ENCODING_VERSION));
            // A decoded filter encodes back to a value that decodes to itself.
            let mut again = Vec::new();
            cuckoo_rdb::encode(&cf, &mut again);
            let back = cuckoo_rdb::decode(&mut FieldSlice(&again), cuckoo_rdb::ENCODING_VERSION);
            assert_eq!(back.as_ref(), Ok(&cf));
            if cf.slot_bytes() <= CHUNKS_LIMIT {
                exercise(cf);
            }
        }
        Err(_) => {}
    }
}

/// Inserts, looks up, deletes and compacts on a loaded filter: no panic, no false negative for
/// what was inserted, growth within the limits, a refusal changes nothing.
fn exercise(mut cf: Cuckoo) {
    const MAX_FILTERS: usize = 8;
    let mut inserted = Vec::new();
    for i in 0u32..64 {
        let hash = cf.hash(&i.to_le_bytes());
        let before = cf.clone();
        match cf.insert(hash, MAX_FILTERS.max(cf.filter_count()), CHUNKS_LIMIT) {
            Ok(_) => {
                assert!(cf.contains(hash));
                inserted.push(hash);
            }
            Err(CuckooError::TooLarge { needed, limit }) => {
                assert!(needed > limit);
                assert_eq!(cf, before);
            }
            Err(_) => assert_eq!(cf, before),
        }
    }
    assert!(cf.filter_count() <= MAX_FILTERS.max(cf.filter_count()));
    for hash in inserted.iter().step_by(2) {
        assert!(cf.delete(*hash), "an inserted copy was not found");
    }
    for hash in inserted.iter().skip(1).step_by(2) {
        assert!(cf.contains(*hash), "a kept item went missing");
    }
    cf.compact();
    for hash in inserted.iter().skip(1).step_by(2) {
        assert!(cf.contains(*hash), "a kept item went missing in compaction");
    }
    assert_eq!(cf.deletes(), 0);
}

/// RedisBloom's defaults, as a server without configs for them has.
const DEFAULTS: CuckooSpec = CuckooSpec::implicit(CuckooSpec::DEFAULT_CAPACITY);

fn arguments(input: &[u8]) {
    let argv: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let mut reserve = vec![&b"CF.RESERVE"[..], b"key"];
    reserve.extend(&argv);
    match cuckoo_args::reserve(&reserve, DEFAULTS) {
        Ok(r) => {
            let s = r.spec;
            assert!((1..=255).contains(&s.bucket_size));
            assert!(s.max_iterations >= 1);
            assert!(s.expansion == 0 || s.expansion.is_power_of_two());
            assert!(s.capacity >= 2 * u64::from(s.bucket_size));
            // The replicated form parses back to the same spec and seed.
            let seed = r.seed.unwrap_or(7);
            let words = cuckoo_args::reserve_words(&s, seed);
            let mut again: Vec<&[u8]> = vec![b"CF.RESERVE", b"key"];
            again.extend(words.iter().map(|w| w.as_bytes()));
            let back = cuckoo_args::reserve(&again, DEFAULTS).expect("the replicated form parses");
            assert_eq!((back.spec, back.seed), (s, Some(seed)));
        }
        Err(Refusal::Arity) => {
            assert!(reserve.len() < 3 || reserve.len() % 2 == 0);
        }
        Err(Refusal::Reply(_) | Refusal::Named(_)) => {}
    }
    let mut insert = vec![&b"CF.INSERT"[..], b"key"];
    insert.extend(&argv);
    if let Ok(i) = cuckoo_args::insert(&insert, DEFAULTS) {
        assert!(i.first_item >= 3 && i.first_item < insert.len());
        if let Some(spec) = i.create {
            assert!(spec.capacity >= 4);
        }
    }
}
