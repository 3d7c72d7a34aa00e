//! RedisBloom's RDB value for `MBbloom--` (its encoding versions 0 to 4), so that an RDB written
//! by RedisBloom loads into rsbloom unchanged (drop-in migration). The links keep RedisBloom's
//! hashing ([`Layout::RedisBloom`], or [`Layout::RedisBloom32`] for filters without FORCE64);
//! links grown later are native ones. rsbloom always saves its own encoding
//! ([`crate::rdb::ENCODING_VERSION`]).
//!
//! ```text
//! unsigned  chain size (items)
//! unsigned  nfilters
//! unsigned  options            encoding >= 2 (else 0: 32-bit hashing)
//! unsigned  growth             encoding >= 4 (else 2)
//! per link:
//!   unsigned  entries (capacity)
//!   double    error
//!   unsigned  hashes
//!   double    bpe
//!   unsigned  bits             encoding >= 1 (else (u64)(entries * bpe))
//!   unsigned  n2               encoding >= 1 (else 0)
//!   string    the bit array, `bytes` long with bits == bytes * 8
//!   unsigned  size (items in this link)
//! ```
//!
//! Validation is RedisBloom 8.x's (`bloom_validate_integrity` on every link, nfilters > 0) plus
//! what rsbloom needs to hold the link (whole 64-bit words, bounded sizes) and a chain size equal
//! to the sum of the link sizes.

use crate::bloom::builder::{ChainBuilder, ChainHeader, LinkHeader};
use crate::bloom::chain::Chain;
use crate::bloom::link::Layout;
use crate::bloom::scandump::redisbloom_hashes_ok;
use crate::codec::{read_pieces, DecodeError, FieldReader};
use crate::scandump::options::{OPT_FORCE64, OPT_NONSCALING, REDISBLOOM_OPTIONS};

/// The newest RedisBloom encoding version (RedisBloom 2.x to 8.x write it).
pub const MAX_ENCODING_VERSION: i32 = 4;
/// First encoding with the per-link `bits` and `n2` fields.
const MIN_BITS_ENC: i32 = 1;
/// First encoding with the options field (RedisBloom's `BF_MIN_OPTIONS_ENC`).
const MIN_OPTIONS_ENC: i32 = 2;
/// First encoding with the growth field (RedisBloom's `BF_MIN_GROWTH_ENC`).
const MIN_GROWTH_ENC: i32 = 4;
/// Growth of chains saved before the field existed.
const DEFAULT_GROWTH: u64 = 2;

/// Reads RedisBloom's RDB value of encoding `encver`. `seed` is the hash seed of the native
/// links the chain grows later (it must be the same on every replica and AOF replay).
pub fn decode(r: &mut impl FieldReader, encver: i32, seed: u64) -> Result<Chain, DecodeError> {
    if !(0..=MAX_ENCODING_VERSION).contains(&encver) {
        return Err(DecodeError::UnknownEncoding);
    }
    let items = r.unsigned()?;
    let links = r.unsigned()?;
    let options = if encver >= MIN_OPTIONS_ENC {
        r.unsigned()?
    } else {
        0
    };
    if options & !u64::from(REDISBLOOM_OPTIONS) != 0 {
        return Err(DecodeError::UnknownFlags);
    }
    let expansion = if encver >= MIN_GROWTH_ENC {
        r.unsigned()?
    } else {
        DEFAULT_GROWTH
    };
    let layout = if options & u64::from(OPT_FORCE64) != 0 {
        Layout::RedisBloom
    } else {
        Layout::RedisBloom32
    };
    // The builder checks the link count before the loop runs.
    let mut chain = ChainBuilder::new(ChainHeader {
        items,
        links,
        expansion,
        nonscaling: options & u64::from(OPT_NONSCALING) != 0,
        seed,
    })?;
    for _ in 0..links {
        let capacity = r.unsigned()?;
        let error = r.double()?;
        let hashes = r.unsigned()?;
        let bpe = r.double()?;
        let (bits, n2) = if encver >= MIN_BITS_ENC {
            (r.unsigned()?, r.unsigned()?)
        } else {
            // RedisBloom's `(double)entries * bpe` stored in a u64 (saturating, as Rust casts).
            ((capacity as f64 * bpe) as u64, 0)
        };
        // A power-of-two link probes modulo 2^n2; with bits == 2^n2 that is `% bits`, which is
        // what every RedisBloom version wrote. Any other combination is refused.
        if n2 > 63 || (n2 != 0 && bits != 1u64 << n2) {
            return Err(DecodeError::PowerOfTwo);
        }
        let header = LinkHeader {
            layout,
            capacity,
            error,
            hashes,
            bits,
            items: 0,
        };
        header.check()?;
        if !redisbloom_hashes_ok(bpe, hashes) {
            return Err(DecodeError::BitsPerEntry);
        }
        // `bits == bytes * 8`: the bit array must be bits / 8 long, which read_pieces checks.
        let link = chain.link(header)?;
        read_pieces(r, link.bytes_mut())?;
        link.items = r.unsigned()?;
    }
    chain.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::link::Link;
    use crate::codec::{Field, FieldSlice, FieldWriter};
    use crate::hash::ItemHash;
    use crate::{rdb, sizing};

    const SEED: u64 = 0x5eed;

    /// One link as RedisBloom sizes it for `capacity` at `error`, with `items` set the way
    /// RedisBloom sets them (`layout` chooses its hash).
    fn rb_link(layout: Layout, capacity: u64, error: f64, items: &[String]) -> (Link, f64) {
        let g = sizing::redisbloom(capacity, error).unwrap();
        let bpe = (error.ln() / 0.480453013918201).abs();
        let mut link = Link::new(layout, capacity, error, g).unwrap();
        for it in items {
            let h = match layout {
                Layout::RedisBloom => ItemHash::redisbloom(it.as_bytes()),
                _ => ItemHash::redisbloom32(it.as_bytes()),
            };
            if link.insert(&h) {
                link.items += 1;
            }
        }
        (link, bpe)
    }

    fn names(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    /// RedisBloom's rdb_save for one or two links, in the field order of `encver`.
    fn rdb(encver: i32, options: u64, growth: u64, links: &[(Link, f64)]) -> Vec<Field> {
        let mut w = Vec::new();
        w.unsigned(links.iter().map(|(l, _)| l.items).sum());
        w.unsigned(links.len() as u64);
        if encver >= 2 {
            w.unsigned(options);
        }
        if encver >= 4 {
            w.unsigned(growth);
        }
        for (l, bpe) in links {
            w.unsigned(l.capacity);
            w.double(l.error);
            w.unsigned(u64::from(l.hashes));
            w.double(*bpe);
            if encver >= 1 {
                w.unsigned(l.bit_count());
                w.unsigned(0);
            }
            w.bytes(l.bytes());
            w.unsigned(l.items);
        }
        w
    }

    #[test]
    fn every_encoding_loads_with_redisbloom_hashing() {
        let first = names("a", 100);
        let second = names("b", 150);
        for (encver, options, layout) in [
            (4, 5, Layout::RedisBloom),
            (4, 13, Layout::RedisBloom),
            (3, 5, Layout::RedisBloom),
            (2, 5, Layout::RedisBloom),
            (2, 1, Layout::RedisBloom32),
            (1, 0, Layout::RedisBloom32),
        ] {
            let links = [
                rb_link(layout, 100, 0.005, &first),
                rb_link(layout, 400, 0.0025, &second),
            ];
            let fields = rdb(encver, options, 4, &links);
            let c = decode(&mut FieldSlice(&fields), encver, SEED).unwrap();
            assert_eq!(c.links().len(), 2);
            assert_eq!(c.items(), links[0].0.items + links[1].0.items);
            assert_eq!(c.seed(), SEED);
            assert_eq!(c.is_nonscaling(), options & 8 != 0);
            assert_eq!(c.expansion(), if encver >= 4 { 4 } else { 2 });
            for (got, (want, _)) in c.links().iter().zip(&links) {
                assert_eq!(got, want);
                assert_eq!(got.layout, layout);
            }
            assert!(first
                .iter()
                .chain(&second)
                .all(|i| c.contains(i.as_bytes())));
            // rsbloom's own encoding keeps the layouts.
            let mut ours = Vec::new();
            let c = crate::Filter::Chain(c);
            rdb::encode(&c, &mut ours);
            assert_eq!(rdb::decode(&mut FieldSlice(&ours)).unwrap(), c);
        }
    }

    #[test]
    fn encoding_zero_derives_bits_from_entries() {
        // entries * bpe truncated must land on whole words for RedisBloom's bits == bytes * 8.
        let bpe = (0.01f64.ln() / 0.480453013918201).abs();
        let hashes = (crate::sizing::REDISBLOOM_LN2 * bpe).ceil() as u64;
        let capacity = (1000u64..)
            .find(|&c| ((c as f64 * bpe) as u64).is_multiple_of(64))
            .unwrap();
        let bits = (capacity as f64 * bpe) as u64;
        let mut w = Vec::new();
        w.unsigned(0);
        w.unsigned(1);
        w.unsigned(capacity);
        w.double(0.01);
        w.unsigned(hashes);
        w.double(bpe);
        w.bytes(&vec![0u8; (bits / 8) as usize]);
        w.unsigned(0);
        let c = decode(&mut FieldSlice(&w), 0, SEED).unwrap();
        assert_eq!(c.links()[0].bit_count(), bits);
        assert_eq!(c.links()[0].layout, Layout::RedisBloom32);
    }

    #[test]
    fn corrupt_values_are_refused() {
        let links = [rb_link(Layout::RedisBloom, 100, 0.005, &names("x", 60))];
        let good = rdb(4, 5, 2, &links);
        assert!(decode(&mut FieldSlice(&good), 4, SEED).is_ok());
        for cut in 0..good.len() {
            assert_eq!(
                decode(&mut FieldSlice(&good[..cut]), 4, SEED),
                Err(DecodeError::Read("truncated")),
                "cut at {cut}"
            );
        }
        for encver in [5, -1] {
            assert_eq!(
                decode(&mut FieldSlice(&good), encver, SEED),
                Err(DecodeError::UnknownEncoding)
            );
        }
        let tamper = |i: usize, f: Field| {
            let mut bad = good.clone();
            bad[i] = f;
            decode(&mut FieldSlice(&bad), 4, SEED)
        };
        let u = Field::Unsigned;
        let read = DecodeError::Read;
        for (at, field, check) in [
            (0, u(61), DecodeError::ItemSum),
            (1, u(0), DecodeError::LinkCount),
            (2, u(5 | 16), DecodeError::UnknownFlags),
            (3, u(0), DecodeError::Expansion),
            (4, u(0), DecodeError::Capacity),
            (5, Field::Double(1.0), DecodeError::ErrorRate),
            (5, Field::Double(0.0), DecodeError::ErrorRate),
            (6, u(9), DecodeError::BitsPerEntry),
            (7, Field::Double(f64::NAN), DecodeError::BitsPerEntry),
            (8, u(1160), DecodeError::BitCount),
            (8, u(0), DecodeError::BitCount),
            // More bits than the array holds: the next field is read as more of it.
            (8, u(2048), read("expected a string field")),
            (9, u(64), DecodeError::PowerOfTwo),
            (9, u(10), DecodeError::PowerOfTwo),
            (
                10,
                Field::Bytes(vec![0; 143]),
                read("expected a string field"),
            ),
            (10, Field::Bytes(vec![0; 152]), DecodeError::LongPiece),
            (10, u(3), read("expected a string field")),
        ] {
            assert_eq!(tamper(at, field.clone()), Err(check), "{at} = {field:?}");
        }
        // A power-of-two link of exactly 2^n2 bits loads (its probes are `% 2^n2`).
        let mut pow2 = good.clone();
        pow2[8] = u(1024);
        pow2[9] = u(10);
        pow2[10] = Field::Bytes(vec![0; 128]);
        pow2[11] = u(0);
        pow2[0] = u(0);
        let c = decode(&mut FieldSlice(&pow2), 4, SEED).unwrap();
        assert_eq!(c.links()[0].bit_count(), 1024);
    }

    #[test]
    fn loaded_chain_grows_native_links() {
        let its = names("g", 100);
        let links = [rb_link(Layout::RedisBloom, 100, 0.005, &its)];
        let mut fields = rdb(4, 5, 2, &links);
        // Make the link exactly full.
        let n = links[0].0.items;
        fields[0] = Field::Unsigned(100);
        *fields.last_mut().unwrap() = Field::Unsigned(100);
        let mut c = decode(&mut FieldSlice(&fields), 4, SEED).unwrap();
        assert!(n <= 100);
        for i in 0..50 {
            c.add(format!("new{i}").as_bytes(), u64::MAX).unwrap();
        }
        assert_eq!(c.links().len(), 2);
        assert_eq!(c.links()[1].layout, Layout::NativeMixed);
        assert_eq!(c.links()[1].capacity, 200);
        assert_eq!(c.links()[1].error, 0.0025);
        assert!(its.iter().all(|i| c.contains(i.as_bytes())));
        assert!((0..50).all(|i| c.contains(format!("new{i}").as_bytes())));
    }
}
