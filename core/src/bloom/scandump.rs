//! A chain's SCANDUMP header: rsbloom's, or RedisBloom's (the layout is in [`crate::scandump`]).

use crate::bloom::builder::{ChainBuilder, ChainHeader, LinkHeader};
use crate::bloom::chain::Chain;
use crate::bloom::link::Layout;
use crate::codec::DecodeError;
use crate::scandump::engine::{check_limit, DumpError, Fields};
use crate::scandump::options::{
    COMMON_HEADER, OPT_FORCE64, OPT_NONSCALING, OPT_NOROUND, OPT_RSBLOOM, REDISBLOOM_OPTIONS,
};
use crate::sizing::REDISBLOOM_LN2;

/// Bytes of one link's header.
const LINK_HEADER: usize = 53;

/// rsbloom's header for a chain.
pub(crate) fn header(chain: &Chain) -> Vec<u8> {
    let n = chain.links().len();
    let mut out = Vec::with_capacity(COMMON_HEADER + (LINK_HEADER + 1) * n + 8);
    let mut options = OPT_NOROUND | OPT_FORCE64 | OPT_RSBLOOM;
    if chain.is_nonscaling() {
        options |= OPT_NONSCALING;
    }
    out.extend_from_slice(&chain.items().to_le_bytes());
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&options.to_le_bytes());
    out.extend_from_slice(&chain.expansion().to_le_bytes());
    for link in chain.links() {
        out.extend_from_slice(&link.byte_count().to_le_bytes());
        out.extend_from_slice(&link.bit_count().to_le_bytes());
        out.extend_from_slice(&link.items.to_le_bytes());
        out.extend_from_slice(&link.error.to_le_bytes());
        let bpe = link.bit_count() as f64 / link.capacity as f64;
        out.extend_from_slice(&bpe.to_le_bytes());
        out.extend_from_slice(&link.hashes.to_le_bytes());
        out.extend_from_slice(&link.capacity.to_le_bytes());
        out.push(0); // n2: never rounded to a power of two
    }
    out.extend_from_slice(&chain.seed().to_le_bytes());
    out.extend(chain.links().iter().map(|l| l.layout.tag() as u8));
    out
}

/// One link's 53 bytes of a chain header (`layout`: what RedisBloom's links hash with;
/// `ours`: rsbloom's header, whose hash counts are rsbloom's), checked.
fn link_header(f: &mut Fields, layout: Layout, ours: bool) -> Result<LinkHeader, DumpError> {
    let bytes = f.u64();
    let header = LinkHeader {
        layout,
        bits: f.u64(),
        items: f.u64(),
        error: f.f64(),
        hashes: {
            let bpe = f.f64();
            let hashes = u64::from(f.u32());
            if !ours && !redisbloom_hashes_ok(bpe, hashes) {
                return Err(DumpError::from(DecodeError::BitsPerEntry));
            }
            hashes
        },
        capacity: f.u64(),
    };
    // A power-of-two link (RedisBloom without NOROUND) probes modulo 2^n2: with bits ==
    // 2^n2 that is `% bits`, which every RedisBloom version wrote; nothing else is taken.
    let n2 = f.u8();
    if n2 != 0 && (n2 > 63 || header.bits != 1u64 << n2) {
        return Err(DumpError::from(DecodeError::PowerOfTwo));
    }
    header.check()?;
    if bytes.checked_mul(8) != Some(header.bits) {
        return Err(DumpError::from(DecodeError::BitCount));
    }
    Ok(header)
}

/// rsbloom's chain header or RedisBloom's, after the first 20 bytes.
pub(crate) fn from_header(
    mut f: Fields,
    items: u64,
    nlinks: u32,
    options: u32,
    expansion: u32,
    foreign_seed: u64,
    max_bytes: u64,
) -> Result<Chain, DumpError> {
    let ours = options & OPT_RSBLOOM != 0;
    if options & !(REDISBLOOM_OPTIONS | OPT_RSBLOOM) != 0 || (ours && options & OPT_FORCE64 == 0) {
        return Err(DumpError::from(DecodeError::UnknownFlags));
    }
    // RedisBloom's links keep its hashing: 64-bit, or the legacy 32-bit one without FORCE64.
    let foreign_layout = if options & OPT_FORCE64 != 0 {
        Layout::RedisBloom
    } else {
        Layout::RedisBloom32
    };
    let n = nlinks as usize;
    let body = LINK_HEADER * n;
    if f.0.len() != if ours { body + 8 + n } else { body } {
        return Err(DumpError::from(DecodeError::HeaderLength));
    }
    let mut links = (0..n)
        .map(|_| link_header(&mut f, foreign_layout, ours))
        .collect::<Result<Vec<_>, _>>()?;
    let seed = if ours {
        let seed = f.u64();
        for link in &mut links {
            link.layout = Layout::from_tag(u64::from(f.u8()))
                .ok_or(DumpError::from(DecodeError::UnknownLayout))?;
        }
        seed
    } else {
        foreign_seed
    };
    // Checked before anything is allocated, so a header cannot make the server allocate past
    // the limit even briefly.
    let needed = links
        .iter()
        .fold(0u64, |sum, l| sum.saturating_add(l.bytes()));
    check_limit(needed, max_bytes)?;
    let mut chain = ChainBuilder::new(ChainHeader {
        items,
        links: u64::from(nlinks),
        expansion: u64::from(expansion),
        nonscaling: options & OPT_NONSCALING != 0,
        seed,
    })?;
    for header in links {
        chain.link(header)?;
    }
    chain.finish().map_err(DumpError::from)
}

/// RedisBloom's integrity rule `hashes == ceil(LN2 * bpe)`, with the float compared before any
/// cast.
pub(crate) fn redisbloom_hashes_ok(bpe: f64, hashes: u64) -> bool {
    bpe.is_finite() && bpe > 0.0 && (REDISBLOOM_LN2 * bpe).ceil() == hashes as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::link::Link;
    use crate::filter::Filter;
    use crate::scandump::{chunks, filter_from_header, header, load_chunk, scan, Scan, MAX_CHUNK};
    use crate::sizing::{self, Geometry};
    use crate::{FilterSpec, Growth, Window};

    fn sample(nonscaling: bool) -> Filter {
        let spec = FilterSpec {
            error: 0.01,
            capacity: 50,
            growth: if nonscaling {
                Growth::Fixed
            } else {
                Growth::Scaling(2)
            },
            window: Window::Unbounded,
            refresh: true,
        };
        let mut c = Chain::new(&spec, 0xdead_beef, u64::MAX).unwrap();
        for i in 0..if nonscaling { 40 } else { 400 } {
            c.add(format!("item{i}").as_bytes(), u64::MAX).unwrap();
        }
        Filter::Chain(c)
    }

    /// A chain from a header that must hold one.
    fn chain_from_header(data: &[u8], seed: u64, max_bytes: u64) -> Result<Chain, DumpError> {
        filter_from_header(data, seed, max_bytes).map(|f| match f {
            Filter::Chain(c) => c,
            _ => panic!("a chain"),
        })
    }

    fn chain(f: &Filter) -> &Chain {
        match f {
            Filter::Chain(c) => c,
            _ => panic!("a chain"),
        }
    }

    /// Dumps a chain and loads it back the way a client does.
    fn round_trip(c: &Filter) -> Filter {
        let mut out = filter_from_header(&header(c), 1, u64::MAX).unwrap();
        for (next, data) in chunks(c) {
            load_chunk(&mut out, next, &data).unwrap();
        }
        out
    }

    #[test]
    fn header_and_chunks_round_trip_exactly() {
        for nonscaling in [false, true] {
            let c = sample(nonscaling);
            assert_eq!(
                header(&c).len(),
                20 + 53 * chain(&c).links().len() + 8 + chain(&c).links().len()
            );
            assert_eq!(round_trip(&c), c);
        }
    }

    #[test]
    fn iterators_follow_redisbloom() {
        let c = sample(false);
        let sizes: Vec<u64> = chain(&c).links().iter().map(Link::byte_count).collect();
        assert!(sizes.len() >= 3);
        assert!(matches!(scan(&c, 0), Scan::Header(_)));
        let mut it = 1i64;
        for &s in &sizes {
            match scan(&c, it) {
                Scan::Chunk { next, data } => {
                    assert_eq!(data.len() as u64, s);
                    assert_eq!(next, it + s as i64);
                    it = next;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(scan(&c, it), Scan::End);
        assert_eq!(scan(&c, -5), Scan::End);
        assert_eq!(scan(&c, i64::MAX), Scan::End);
        // A cursor in the middle of a link gets the rest of that link.
        match scan(&c, 6) {
            Scan::Chunk { next, data } => {
                assert_eq!(data.len() as u64, sizes[0] - 5);
                assert_eq!(next, 1 + sizes[0] as i64);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(chunks(&c).count(), sizes.len());
    }

    #[test]
    fn big_links_come_in_16_mib_chunks() {
        let mut c = sample(true);
        let Filter::Chain(inner) = &mut c else {
            unreachable!()
        };
        inner.links_mut()[0] = Link::new(
            Layout::Native,
            1,
            0.01,
            Geometry {
                bits: 17_971_992 * 8,
                hashes: 7,
            },
        )
        .unwrap();
        let steps: Vec<(i64, usize)> = chunks(&c).map(|(n, d)| (n, d.len())).collect();
        assert_eq!(
            steps,
            vec![(16_777_217, MAX_CHUNK), (17_971_993, 1_194_776)]
        );
    }

    #[test]
    fn chunk_errors() {
        let c = sample(false);
        let first = chain(&c).links()[0].byte_count() as usize;
        let mut out = filter_from_header(&header(&c), 1, u64::MAX).unwrap();
        let data = vec![0xffu8; first];
        let bad_iterator = Err(DumpError::BadData(None));
        assert_eq!(load_chunk(&mut out, 0, &data), bad_iterator);
        assert_eq!(load_chunk(&mut out, -1, &[]), bad_iterator);
        assert_eq!(load_chunk(&mut out, 3, &data), bad_iterator);
        assert_eq!(
            load_chunk(&mut out, first as i64, &data),
            Err(DumpError::NoLink)
        );
        let total = c.bit_bytes() as i64;
        assert_eq!(
            load_chunk(&mut out, total + 10, &[1]),
            Err(DumpError::NoLink)
        );
        // One byte more than the first link holds, ending inside the second.
        let long = vec![0u8; first + 1];
        assert_eq!(
            load_chunk(&mut out, first as i64 + 2, &long),
            Err(DumpError::TooBig)
        );
        assert_eq!(load_chunk(&mut out, 5, &[]), Ok(()));
        assert_eq!(load_chunk(&mut out, first as i64 + 1, &data), Ok(()));
        assert!(chain(&out).links()[0].bytes().iter().all(|&b| b == 0xff));
    }

    /// A header as RedisBloom 2.8 writes it for `BF.RESERVE k 0.01 1000` with `items` adds.
    fn redisbloom_header(items: u64, options: u32) -> Vec<u8> {
        let g = sizing::redisbloom(1000, 0.005).unwrap();
        let bpe = (0.005f64.ln() / 0.480453013918201).abs();
        let mut h = Vec::new();
        h.extend_from_slice(&items.to_le_bytes());
        h.extend_from_slice(&1u32.to_le_bytes());
        h.extend_from_slice(&options.to_le_bytes());
        h.extend_from_slice(&2u32.to_le_bytes());
        h.extend_from_slice(&(g.bits / 8).to_le_bytes());
        h.extend_from_slice(&g.bits.to_le_bytes());
        h.extend_from_slice(&items.to_le_bytes());
        h.extend_from_slice(&0.005f64.to_le_bytes());
        h.extend_from_slice(&bpe.to_le_bytes());
        h.extend_from_slice(&g.hashes.to_le_bytes());
        h.extend_from_slice(&1000u64.to_le_bytes());
        h.push(0);
        h
    }

    #[test]
    fn redisbloom_headers_load_with_its_layout() {
        let h = redisbloom_header(500, OPT_NOROUND | OPT_FORCE64);
        assert_eq!(h.len(), 73);
        let c = chain_from_header(&h, 99, u64::MAX).unwrap();
        assert_eq!(c.seed(), 99);
        assert_eq!(c.items(), 500);
        assert!(!c.is_nonscaling());
        assert_eq!(c.links()[0].layout, Layout::RedisBloom);
        assert_eq!(c.links()[0].bit_count(), 11_072);
        assert_eq!(c.links()[0].hashes, 8);
        let ns = chain_from_header(&redisbloom_header(0, 12), 1, u64::MAX).unwrap();
        assert!(ns.is_nonscaling());
        // Without FORCE64: RedisBloom's legacy 32-bit hashing.
        let legacy = chain_from_header(&redisbloom_header(0, OPT_NOROUND), 1, u64::MAX).unwrap();
        assert_eq!(legacy.links()[0].layout, Layout::RedisBloom32);
        // Unknown options, or rsbloom's own header without FORCE64.
        for options in [4 | 16, 4 | 0x200, OPT_RSBLOOM] {
            let h = redisbloom_header(0, options);
            assert_eq!(
                chain_from_header(&h, 1, u64::MAX),
                Err(DumpError::BadData(Some(DecodeError::UnknownFlags)))
            );
        }
        // Each field refused by its own check: (byte offset, new byte, check).
        for (at, byte, check) in [
            (0, 1, DecodeError::ItemSum),       // chain size != sum of link sizes
            (8, 0, DecodeError::HeaderLength),  // nfilters 0: a 20-byte header expected
            (16, 0, DecodeError::Expansion),    // scaling without growth
            (20, 0, DecodeError::BitCount),     // bytes != bits / 8
            (20 + 8, 1, DecodeError::BitCount), // bits not whole words
            (20 + 24 + 7, 0xbf, DecodeError::ErrorRate), // error 1.0 or more
            (20 + 40, 9, DecodeError::BitsPerEntry), // hashes disagree with bpe
            (20 + 44, 0, DecodeError::Capacity), // capacity 0 (its low byte was 0xe8)
            (20 + 52, 3, DecodeError::PowerOfTwo), // n2
        ] {
            let mut bad = h.clone();
            bad[at] = byte;
            if at == 20 + 44 {
                bad[at + 1] = 0; // 1000 = 0x3e8
            }
            if at == 20 + 24 + 7 {
                bad[at - 1] = 0xf0; // 0xbff0... is -1.0
                bad[at] = 0x3f; // 0x3ff0... is 1.0
            }
            assert_eq!(
                chain_from_header(&bad, 1, u64::MAX),
                Err(DumpError::BadData(Some(check))),
                "byte {at} = {byte}"
            );
        }
        assert_eq!(
            chain_from_header(&h, 1, 1000),
            Err(DumpError::TooLarge {
                needed: 1384,
                limit: 1000
            })
        );
    }

    #[test]
    fn truncated_headers_are_refused() {
        for h in [
            header(&sample(false)),
            redisbloom_header(3, OPT_NOROUND | OPT_FORCE64),
        ] {
            for cut in 0..h.len() {
                assert_eq!(
                    chain_from_header(&h[..cut], 1, u64::MAX),
                    Err(DumpError::BadData(Some(DecodeError::HeaderLength))),
                    "cut at {cut}"
                );
            }
            let mut long = h.clone();
            long.push(0);
            assert_eq!(
                chain_from_header(&long, 1, u64::MAX),
                Err(DumpError::BadData(Some(DecodeError::HeaderLength)))
            );
        }
    }

    /// xorshift64*, so the mutation test is reproducible without a dependency.
    fn rng(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[test]
    fn mutated_headers_never_panic_or_overallocate() {
        let originals = [
            header(&sample(false)),
            header(&sample(true)),
            redisbloom_header(7, OPT_NOROUND | OPT_FORCE64),
        ];
        let mut state = 0x1234_5678_9abc_def0u64;
        let limit = 1 << 20;
        for round in 0..5000 {
            let mut h = originals[round % originals.len()].clone();
            for _ in 0..1 + rng(&mut state) % 4 {
                let i = (rng(&mut state) as usize) % h.len();
                match rng(&mut state) % 3 {
                    0 => h[i] ^= 1 << (rng(&mut state) % 8),
                    1 => h[i] = rng(&mut state) as u8,
                    _ => h.truncate(i),
                }
                if h.is_empty() {
                    break;
                }
            }
            if let Ok(c) = chain_from_header(&h, 1, limit) {
                assert!(c.bit_bytes() <= limit);
                assert_eq!(c.items(), c.links().iter().map(|l| l.items).sum::<u64>());
                // A chain that loaded is usable.
                let mut c = c;
                let _ = c.contains(b"x");
                let _ = c.add(b"y", limit);
                let mut f = Filter::Chain(c);
                for (next, data) in chunks(&f.clone()) {
                    load_chunk(&mut f, next, &data).unwrap();
                }
            }
        }
    }
}
