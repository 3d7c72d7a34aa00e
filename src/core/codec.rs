//! rsbloom's serialised form of a chain, written as a sequence of typed fields (unsigned,
//! double, byte string) so that the same schema serves the RDB (through Redis's module I/O)
//! and in-memory tests. The RDB encoding version is [`ENCODING_VERSION`].
//!
//! ```text
//! unsigned  items            items in the whole chain
//! unsigned  flags            bit 0: NONSCALING
//! unsigned  expansion
//! unsigned  seed             per-filter hash seed
//! unsigned  links            >= 1
//! per link:
//!   unsigned  layout         Layout tag (1 classic, 2 RedisBloom)
//!   unsigned  capacity
//!   double    error
//!   unsigned  hashes
//!   unsigned  bits           multiple of 64
//!   unsigned  items          items in this link
//!   string*   the bit array, little-endian words, in pieces of at most CHUNK_BYTES
//! ```
//! Splitting the bit array keeps Redis's per-string work (LZF attempt, read buffer) bounded
//! instead of allocating a second copy of a multi-gigabyte array.
//! Older rsbloom builds wrote 16 MiB pieces; the reader takes pieces of any size.

use super::chain::Chain;
use super::link::{Layout, Link};
use super::sizing::{Geometry, MAX_HASHES};

/// RDB encoding version of rsbloom's format. RedisBloom writes 4 and refuses anything above,
/// so it cannot misread an rsbloom RDB.
pub const ENCODING_VERSION: i32 = 100;

/// Largest piece of a bit array stored as one string. Below jemalloc's 8 MiB "oversize"
/// threshold, so the buffer Redis allocates per piece (LZF output on save, the read buffer on
/// load) is recycled, warm in cache, instead of being mapped, zeroed by the kernel and unmapped
/// each time: a 1 GiB filter saved in 16 MiB pieces took 7.4 s to load, in 4 MiB pieces 5.2 s.
pub const CHUNK_BYTES: usize = 4 << 20;

/// Most links a chain may have on load (a 1e-300 EXPANSION 1 chain underflows near 1000).
pub const MAX_LINKS: u64 = 1 << 16;

/// Largest link accepted on load: 2^40 bits (128 GiB).
pub const MAX_LINK_BITS: u64 = 1 << 40;

const FLAG_NONSCALING: u64 = 1;

/// Why a serialised chain was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

/// Sink of typed fields.
pub trait FieldWriter {
    fn unsigned(&mut self, v: u64);
    fn double(&mut self, v: f64);
    fn bytes(&mut self, v: &[u8]);
}

/// Source of typed fields; every read may fail (truncated or corrupt input).
pub trait FieldReader {
    fn unsigned(&mut self) -> Result<u64, DecodeError>;
    fn double(&mut self) -> Result<f64, DecodeError>;
    /// Reads one string field into the start of `dst` and returns its length; a field longer
    /// than `dst` is an error.
    fn bytes_into(&mut self, dst: &mut [u8]) -> Result<usize, DecodeError>;
}

/// Counts a link's `bytes` into the `total` of a chain being decoded, refusing a chain larger
/// than the machine's memory (RAM and swap) before anything is allocated: a forged header must
/// not make the server ask for terabytes, which the allocator answers by aborting Redis when
/// the kernel will not overcommit that much. A genuine filter that large could not have been
/// held here either.
pub fn count_link_bytes(total: &mut u64, bytes: u64) -> Result<(), DecodeError> {
    *total = total.saturating_add(bytes);
    match machine_memory() {
        Some(memory) if *total > memory => {
            Err(DecodeError("filter larger than this machine's memory"))
        }
        _ => Ok(()),
    }
}

/// Bytes of RAM plus swap, when the OS tells.
fn machine_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysinfo is plain integers, for which all-zero bytes are a valid value.
        let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable sysinfo struct.
        if unsafe { libc::sysinfo(&mut info) } == 0 {
            let unit = u64::from(info.mem_unit.max(1));
            let total = (info.totalram as u64).saturating_add(info.totalswap as u64);
            return Some(total.saturating_mul(unit));
        }
    }
    None
}

/// Fills `dst` from consecutive non-empty string fields (a bit array's pieces).
pub fn read_pieces(r: &mut impl FieldReader, mut dst: &mut [u8]) -> Result<(), DecodeError> {
    while !dst.is_empty() {
        match r.bytes_into(dst)? {
            0 => return Err(DecodeError("empty bit-array piece")),
            n => dst = &mut dst[n..],
        }
    }
    Ok(())
}

/// Views words as their little-endian bytes.
pub fn word_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding and any byte pattern is a valid u8; the slice covers exactly
    // the words' memory. The layout is little-endian, checked at compile time in lib.rs.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), std::mem::size_of_val(words)) }
}

/// Mutable byte view of words.
pub fn word_bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: as in `word_bytes`; every byte pattern is also a valid u64, so writes through
    // the byte view cannot create an invalid value.
    unsafe {
        std::slice::from_raw_parts_mut(
            words.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(words),
        )
    }
}

/// Writes a chain.
pub fn encode(chain: &Chain, w: &mut impl FieldWriter) {
    w.unsigned(chain.items);
    w.unsigned(if chain.nonscaling { FLAG_NONSCALING } else { 0 });
    w.unsigned(u64::from(chain.expansion));
    w.unsigned(chain.seed);
    w.unsigned(chain.links.len() as u64);
    for link in &chain.links {
        w.unsigned(link.layout.tag());
        w.unsigned(link.capacity);
        w.double(link.error);
        w.unsigned(u64::from(link.hashes));
        w.unsigned(link.bit_count());
        w.unsigned(link.items);
        for piece in word_bytes(link.words()).chunks(CHUNK_BYTES) {
            w.bytes(piece);
        }
    }
}

/// Reads a chain, validating every field before it allocates or trusts it.
pub fn decode(r: &mut impl FieldReader) -> Result<Chain, DecodeError> {
    let items = r.unsigned()?;
    let flags = r.unsigned()?;
    if flags & !FLAG_NONSCALING != 0 {
        return Err(DecodeError("unknown chain flags"));
    }
    let expansion = u32::try_from(r.unsigned()?).map_err(|_| DecodeError("bad expansion"))?;
    let seed = r.unsigned()?;
    let nlinks = r.unsigned()?;
    if nlinks == 0 || nlinks > MAX_LINKS {
        return Err(DecodeError("bad link count"));
    }
    let mut links = Vec::with_capacity(nlinks as usize);
    let mut sum = 0u64;
    let mut total_bytes = 0u64;
    for _ in 0..nlinks {
        let layout = Layout::from_tag(r.unsigned()?).ok_or(DecodeError("unknown link layout"))?;
        let capacity = r.unsigned()?;
        let error = r.double()?;
        let hashes = r.unsigned()?;
        let bits = r.unsigned()?;
        let link_items = r.unsigned()?;
        if capacity == 0 || !(error > 0.0 && error < 1.0) {
            return Err(DecodeError("bad link capacity or error"));
        }
        if hashes == 0 || hashes > u64::from(MAX_HASHES) {
            return Err(DecodeError("bad hash count"));
        }
        if bits == 0 || bits % 64 != 0 || bits > MAX_LINK_BITS {
            return Err(DecodeError("bad bit count"));
        }
        count_link_bytes(&mut total_bytes, bits / 8)?;
        let geometry = Geometry {
            bits,
            hashes: hashes as u32,
        };
        let mut link = Link::new(layout, capacity, error, geometry);
        link.items = link_items;
        sum = sum
            .checked_add(link_items)
            .ok_or(DecodeError("item counts overflow"))?;
        read_pieces(r, word_bytes_mut(link.words_mut()))?;
        links.push(link);
    }
    if sum != items {
        return Err(DecodeError("link item counts disagree with the chain's"));
    }
    let nonscaling = flags & FLAG_NONSCALING != 0;
    if !nonscaling && expansion == 0 {
        return Err(DecodeError("scaling chain without expansion"));
    }
    Ok(Chain {
        items,
        expansion,
        nonscaling,
        seed,
        links,
    })
}

/// In-memory field stream, for tests and fuzzing.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Field {
    #[default]
    None,
    Unsigned(u64),
    Double(f64),
    Bytes(Vec<u8>),
}

impl FieldWriter for Vec<Field> {
    fn unsigned(&mut self, v: u64) {
        self.push(Field::Unsigned(v));
    }
    fn double(&mut self, v: f64) {
        self.push(Field::Double(v));
    }
    fn bytes(&mut self, v: &[u8]) {
        self.push(Field::Bytes(v.to_vec()));
    }
}

/// Reads back a `Vec<Field>`.
pub struct FieldSlice<'a>(pub &'a [Field]);

impl FieldSlice<'_> {
    fn next(&mut self) -> Result<&Field, DecodeError> {
        let (first, rest) = self.0.split_first().ok_or(DecodeError("truncated"))?;
        self.0 = rest;
        Ok(first)
    }
}

impl FieldReader for FieldSlice<'_> {
    fn unsigned(&mut self) -> Result<u64, DecodeError> {
        match self.next()? {
            Field::Unsigned(v) => Ok(*v),
            _ => Err(DecodeError("expected unsigned")),
        }
    }
    fn double(&mut self) -> Result<f64, DecodeError> {
        match self.next()? {
            Field::Double(v) => Ok(*v),
            _ => Err(DecodeError("expected double")),
        }
    }
    fn bytes_into(&mut self, dst: &mut [u8]) -> Result<usize, DecodeError> {
        match self.next()? {
            Field::Bytes(v) if v.len() <= dst.len() => {
                dst[..v.len()].copy_from_slice(v);
                Ok(v.len())
            }
            _ => Err(DecodeError("expected a bit-array piece that fits")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ChainParams;

    fn sample() -> Chain {
        let p = ChainParams {
            error: 0.01,
            capacity: 50,
            expansion: 2,
            nonscaling: false,
            seed: 7,
            max_bytes: u64::MAX,
        };
        let mut c = Chain::new(&p).unwrap();
        for i in 0..400 {
            c.add(format!("{i}").as_bytes(), u64::MAX).unwrap();
        }
        c
    }

    #[test]
    fn round_trips_exactly() {
        let c = sample();
        let mut fields = Vec::new();
        encode(&c, &mut fields);
        assert_eq!(decode(&mut FieldSlice(&fields)).unwrap(), c);
    }

    #[test]
    fn truncation_and_tampering_are_refused() {
        let c = sample();
        let mut fields = Vec::new();
        encode(&c, &mut fields);
        for cut in 0..fields.len() {
            assert!(
                decode(&mut FieldSlice(&fields[..cut])).is_err(),
                "cut at {cut}"
            );
        }
        let mut bad = fields.clone();
        bad[0] = Field::Unsigned(c.items + 1);
        assert!(decode(&mut FieldSlice(&bad)).is_err());
        let mut bad = fields.clone();
        bad[4] = Field::Unsigned(0);
        assert!(decode(&mut FieldSlice(&bad)).is_err());
        let mut bad = fields;
        bad[9] = Field::Unsigned(65); // bits not a multiple of 64
        assert!(decode(&mut FieldSlice(&bad)).is_err());
    }

    /// Re-splits every bit array of an encoded chain into pieces of `sizes` (cycled).
    fn repieced(fields: &[Field], sizes: &[usize]) -> Vec<Field> {
        let mut out = Vec::new();
        let mut pending = Vec::new();
        let flush = |pending: &mut Vec<u8>, out: &mut Vec<Field>| {
            let mut at = 0;
            for &n in sizes.iter().cycle() {
                if at == pending.len() {
                    break;
                }
                let end = at.saturating_add(n).min(pending.len());
                out.push(Field::Bytes(pending[at..end].to_vec()));
                at = end;
            }
            pending.clear();
        };
        for f in fields {
            match f {
                Field::Bytes(b) => pending.extend_from_slice(b),
                other => {
                    flush(&mut pending, &mut out);
                    out.push(other.clone());
                }
            }
        }
        flush(&mut pending, &mut out);
        out
    }

    #[test]
    fn bit_arrays_load_from_pieces_of_any_size() {
        let c = sample();
        let mut fields = Vec::new();
        encode(&c, &mut fields);
        // One whole piece per link (as 16 MiB pieces of older builds were for small links),
        // and odd sizes that cut words in two.
        for sizes in [&[usize::MAX][..], &[1], &[3, 7, 64]] {
            let split = repieced(&fields, sizes);
            assert_eq!(decode(&mut FieldSlice(&split)).unwrap(), c, "{sizes:?}");
        }
        // An empty piece, or a piece running past its link's end, is refused.
        let mut empty = repieced(&fields, &[8]);
        let at = empty
            .iter()
            .position(|f| matches!(f, Field::Bytes(_)))
            .unwrap();
        empty.insert(at, Field::Bytes(Vec::new()));
        assert!(decode(&mut FieldSlice(&empty)).is_err());
        let mut long = fields;
        let at = long
            .iter()
            .position(|f| matches!(f, Field::Bytes(_)))
            .unwrap();
        if let Field::Bytes(b) = &mut long[at] {
            b.push(0);
        }
        assert!(decode(&mut FieldSlice(&long)).is_err());
    }

    #[test]
    fn a_chain_larger_than_memory_is_refused_before_allocating() {
        let c = sample();
        let mut fields = Vec::new();
        encode(&c, &mut fields);
        // Every link's bit count raised to 2^40 bits (128 GiB): refused once the total passes
        // this machine's memory (RAM and swap), before that link is allocated (an allocation past what the
        // kernel will overcommit would abort the test process).
        let ram = machine_memory().expect("machine memory");
        let mut huge = fields.clone();
        let mut at = 9; // the first link's `bits`; each link is 6 fields plus its pieces
        while at < huge.len() {
            huge[at] = Field::Unsigned(MAX_LINK_BITS);
            at += 6 + huge[at + 2..]
                .iter()
                .take_while(|f| matches!(f, Field::Bytes(_)))
                .count();
        }
        let refused = decode(&mut FieldSlice(&huge));
        if ram < (c.links.len() as u64) << 37 {
            assert_eq!(
                refused,
                Err(DecodeError("filter larger than this machine's memory"))
            );
        } else {
            assert!(refused.is_err());
        }
        let mut total = 0;
        assert!(count_link_bytes(&mut total, ram / 2).is_ok());
        assert!(count_link_bytes(&mut total, ram / 2 + 8).is_err());
    }
}
