//! The CF.SCANDUMP / CF.LOADCHUNK stream of a cuckoo filter (also the AOF rewrite): a header,
//! then the sub-filters' slot arrays, in RedisBloom's format so that its dumps load here.
//!
//! The header is 38 bytes, packed little-endian:
//!
//! ```text
//! u64 items  u64 buckets (first sub-filter)  u64 deletes  u64 filters
//! u16 bucket size  u16 max iterations  u16 expansion
//! ```
//!
//! A filter with a seed of its own (every filter rsbloom creates) appends [`SEED_TAG`] and its
//! `u64 seed`: 54 bytes, which RedisBloom refuses (it takes exactly 38), so it cannot misread
//! them with its own hashing.
//!
//! The slot arrays form one byte stream; iterator `it >= 1` names position `it - 1`. A
//! sub-filter of at most [`MAX_CHUNK`](crate::scandump::MAX_CHUNK) bytes is sent whole whatever the position inside it (as
//! RedisBloom does); a larger one in chunks of at most [`MAX_CHUNK`](crate::scandump::MAX_CHUNK) from the position. The
//! reply's next iterator is `it + len`, and LOADCHUNK takes each chunk with the iterator that
//! came with it, so the chunk starts at `it - len - 1`.

use crate::codec::DecodeError;
use crate::cuckoo::builder::{CuckooBuilder, CuckooHeader};
use crate::cuckoo::filter::Cuckoo;
use crate::scandump::engine::{
    check_limit, chunks_of, load_arrays, scan_arrays, ChunkRule, DumpError, Fields, Scan,
};

/// RedisBloom's header length.
pub const HEADER_BYTES: usize = 38;

/// Marks rsbloom's seed trailer after the 38 bytes.
pub const SEED_TAG: [u8; 8] = *b"rsbloomS";

/// The header SCANDUMP sends at iterator 0.
pub fn header(cf: &Cuckoo) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + 16);
    for v in [
        cf.items(),
        cf.buckets(),
        cf.deletes(),
        cf.filter_count() as u64,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [
        u16::from(cf.bucket_size()),
        cf.max_iterations(),
        cf.expansion(),
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    if cf.seed() != 0 {
        out.extend_from_slice(&SEED_TAG);
        out.extend_from_slice(&cf.seed().to_le_bytes());
    }
    out
}

/// Parses a header without allocating (a wrong length is [`DecodeError::HeaderLength`]).
pub fn parse_header(data: &[u8]) -> Result<CuckooHeader, DumpError> {
    let seed = match data.len() {
        HEADER_BYTES => 0,
        n if n == HEADER_BYTES + 16 && data[HEADER_BYTES..HEADER_BYTES + 8] == SEED_TAG => {
            u64::from_le_bytes(data[HEADER_BYTES + 8..].try_into().expect("8 bytes"))
        }
        _ => return Err(DumpError::BadData(Some(DecodeError::HeaderLength))),
    };
    let mut f = Fields(data);
    let [items, buckets, deletes, filters] = std::array::from_fn(|_| f.u64());
    let [bucket_size, max_iterations, expansion] = std::array::from_fn(|_| u64::from(f.u16()));
    Ok(CuckooHeader {
        items,
        buckets,
        deletes,
        filters,
        bucket_size,
        max_iterations,
        expansion,
        seed,
    })
}

/// The empty filter a header (LOADCHUNK at iterator 1) describes, within `max_bytes`.
pub fn filter_from_header(data: &[u8], max_bytes: u64) -> Result<Cuckoo, DumpError> {
    let header = parse_header(data)?;
    // The builder checks the shape first, then every bucket count and the memory, so a forged
    // header is refused before any allocation.
    let mut builder = CuckooBuilder::new(header)?;
    let buckets = (0..header.filters)
        .map(|k| header.grown_buckets(k))
        .collect::<Result<Vec<u64>, DecodeError>>()?;
    let needed = buckets.iter().fold(0u64, |sum, n| {
        sum.saturating_add(n.saturating_mul(header.bucket_size))
    });
    check_limit(needed, max_bytes)?;
    for n in buckets {
        builder.filter(n)?;
    }
    builder.finish().map_err(DumpError::from)
}

/// The SCANDUMP reply for `iterator`: the header at 0, then the slot arrays. RedisBloom dumps
/// nothing of a filter with no items, at any iterator (`End`: `[0, nil]`).
pub fn scan(cf: &Cuckoo, iterator: i64) -> Scan<'_> {
    if cf.items() == 0 {
        return Scan::End;
    }
    if iterator == 0 {
        return Scan::Header(header(cf));
    }
    let arrays: Vec<&[u8]> = cf.slot_arrays().collect();
    scan_arrays(&arrays, iterator, ChunkRule::WholeSmallArrays)
}

/// Every SCANDUMP step after the header, in order (the AOF rewrite emits them all).
pub fn chunks(cf: &Cuckoo) -> impl Iterator<Item = (i64, std::borrow::Cow<'_, [u8]>)> {
    chunks_of(move |iterator| scan(cf, iterator))
}

/// LOADCHUNK of a data chunk sent with `iterator` (not 0 or 1): copies it to stream position
/// `iterator - len - 1`. Refuses (changing nothing) an empty chunk, a position before the
/// stream or outside every sub-filter, and a chunk running past its sub-filter's end.
pub fn load_chunk(cf: &mut Cuckoo, iterator: i64, data: &[u8]) -> Result<(), DumpError> {
    if data.is_empty() {
        return Err(DumpError::BadData(None));
    }
    load_arrays(cf.slot_arrays_mut().collect(), iterator, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuckoo::filter::MAX_FILTERS;
    use crate::CuckooSpec;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn vector(
        capacity: u64,
        bucket_size: u8,
        iterations: u16,
        expansion: u16,
        items: &[&[u8]],
    ) -> Cuckoo {
        let spec = CuckooSpec {
            capacity,
            bucket_size,
            max_iterations: iterations,
            expansion,
        };
        let mut cf = Cuckoo::new(&spec, 0, u64::MAX).unwrap();
        for item in items {
            cf.insert(cf.hash(item), MAX_FILTERS, u64::MAX).unwrap();
        }
        cf
    }

    /// The SCANDUMP replies after the header, `(next, hex)`.
    fn steps(cf: &Cuckoo) -> Vec<(i64, Vec<u8>)> {
        chunks(cf).map(|(next, c)| (next, c.to_vec())).collect()
    }

    #[test]
    fn the_spec_vectors_byte_for_byte() {
        let v1 = vector(8, 2, 20, 1, &[b"item1", b"foo", b""]);
        assert_eq!(
            header(&v1),
            hex("0300000000000000 0400000000000000 0000000000000000 0100000000000000 0200 1400 0100")
        );
        assert_eq!(steps(&v1), [(9, hex("0100d900 07000000"))]);
        assert_eq!(scan(&v1, 9), Scan::End);

        let letters: Vec<[u8; 1]> = b"abcdefghij".iter().map(|&b| [b]).collect();
        let items: Vec<&[u8]> = letters.iter().map(|b| &b[..]).collect();
        let v2 = vector(8, 1, 20, 1, &items);
        assert_eq!(
            header(&v2),
            hex("0a00000000000000 0800000000000000 0000000000000000 0200000000000000 0100 1400 0100")
        );
        assert_eq!(
            steps(&v2),
            [(9, hex("0006cb0000c40010")), (17, hex("00bca91c00cd154b"))]
        );

        let v4 = vector(
            16,
            4,
            5,
            0,
            &[b"hello world!", b"12345678", b"x", b"x", b"x"],
        );
        assert_eq!(
            header(&v4),
            hex("0500000000000000 0400000000000000 0000000000000000 0100000000000000 0400 0500 0000")
        );
        assert_eq!(
            steps(&v4),
            [(17, hex("00000000 830f0f0f 29000000 00000000"))]
        );
        // A small sub-filter is sent whole whatever the position inside it.
        assert_eq!(
            scan(&v1, 3),
            Scan::Chunk {
                next: 11,
                data: v1.slot_arrays().next().unwrap().into()
            }
        );
    }

    #[test]
    fn a_dump_reloads_to_the_same_filter_seed_included() {
        for seed in [0, 99] {
            let spec = CuckooSpec {
                capacity: 64,
                bucket_size: 4,
                max_iterations: 20,
                expansion: 2,
            };
            let mut cf = Cuckoo::new(&spec, seed, u64::MAX).unwrap();
            for i in 0..500u32 {
                cf.insert(cf.hash(&i.to_le_bytes()), MAX_FILTERS, u64::MAX)
                    .unwrap();
            }
            let h = header(&cf);
            assert_eq!(h.len(), if seed == 0 { 38 } else { 54 });
            let mut back = filter_from_header(&h, u64::MAX).unwrap();
            for (next, chunk) in chunks(&cf) {
                load_chunk(&mut back, next, &chunk).unwrap();
            }
            assert_eq!(back, cf);
        }
    }

    #[test]
    fn headers_and_chunks_that_do_not_fit_are_refused() {
        let v1 = vector(8, 2, 20, 1, &[b"item1"]);
        let good = header(&v1);
        let with = |at: usize, bytes: &[u8]| {
            let mut h = good.clone();
            h[at..at + bytes.len()].copy_from_slice(bytes);
            h
        };
        let invalid = |h: &[u8]| match filter_from_header(h, u64::MAX) {
            Err(DumpError::BadData(Some(e))) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            filter_from_header(&good[..37], 1 << 20).err(),
            Some(DumpError::BadData(Some(DecodeError::HeaderLength)))
        );
        assert_eq!(invalid(&with(32, &[0, 0])), DecodeError::BucketSize);
        assert_eq!(invalid(&with(32, &[0, 1])), DecodeError::BucketSize);
        assert_eq!(invalid(&with(34, &[0, 0])), DecodeError::Iterations);
        assert_eq!(invalid(&with(8, &[3])), DecodeError::Buckets);
        assert_eq!(invalid(&with(8, &[0])), DecodeError::Buckets);
        assert_eq!(invalid(&with(24, &[0])), DecodeError::FilterCount);
        // 65537 sub-filters: RedisBloom takes the count mod 65536.
        assert_eq!(invalid(&with(24, &[1, 0, 1])), DecodeError::FilterCount);
        // Expansion 0 with two sub-filters (RedisBloom: a 0-bucket sub-filter, then SIGFPE).
        let mut two = with(24, &[2]);
        two[36..38].copy_from_slice(&[0, 0]);
        assert_eq!(invalid(&two), DecodeError::CuckooExpansion);
        assert_eq!(invalid(&with(36, &[3, 0])), DecodeError::CuckooExpansion);
        // numBuckets 2^55: RedisBloom's OOM abort; here the limit refuses it before allocating.
        let huge = with(8, &(1u64 << 55).to_le_bytes());
        assert_eq!(
            filter_from_header(&huge, 1 << 30).err(),
            Some(DumpError::TooLarge {
                needed: 1 << 56,
                limit: 1 << 30
            })
        );
        // Five sub-filters of expansion 32768: RedisBloom's 143 s stall and abort.
        let mut wide = with(24, &[5]);
        wide[36..38].copy_from_slice(&32768u16.to_le_bytes());
        assert_eq!(
            filter_from_header(&wide, 1 << 30),
            Err(DumpError::BadData(Some(DecodeError::Buckets)))
        );

        let mut cf = filter_from_header(&good, u64::MAX).unwrap();
        let before = cf.clone();
        assert_eq!(load_chunk(&mut cf, 9, b""), Err(DumpError::BadData(None)));
        assert_eq!(
            load_chunk(&mut cf, 5, &[1; 8]),
            Err(DumpError::BadData(None)),
            "starts before the stream"
        );
        assert_eq!(
            load_chunk(&mut cf, 10, &[5]),
            Err(DumpError::NoLink),
            "past the end: no wrap"
        );
        assert_eq!(
            load_chunk(&mut cf, 10, &[1; 2]),
            Err(DumpError::TooBig),
            "runs past the end"
        );
        assert_eq!(
            load_chunk(&mut cf, i64::MIN, &[1]),
            Err(DumpError::BadData(None))
        );
        assert_eq!(cf, before);
        assert_eq!(load_chunk(&mut cf, 9, &[5]), Ok(()));
        assert_eq!(cf.slot_arrays().next().unwrap()[7], 5);
    }
}
