//! The BF.SCANDUMP / BF.LOADCHUNK stream (also used by AOF rewrite): a header describing every
//! link, then the links' bit arrays in chunks.
//!
//! The header uses RedisBloom's packed little-endian layout, so RedisBloom's own SCANDUMP
//! output loads here (migration):
//!
//! ```text
//! u64 chain size (items)   u32 nfilters   u32 options   u32 growth
//! per link, 53 bytes:
//!   u64 bytes  u64 bits  u64 size (items)  f64 error  f64 bpe  u32 hashes  u64 entries  u8 n2
//! ```
//!
//! rsbloom's own header sets [`OPT_RSBLOOM`] in `options` and appends a trailer after those
//! `20 + 53n` bytes: `u64 seed`, then one `u8` layout tag per link. A header without that bit is
//! RedisBloom's: its links keep RedisBloom's hashing ([`Layout::RedisBloom`](crate::Layout::RedisBloom)).
//!
//! A window filter's header (the window dialect) sets [`OPT_WINDOW`] too, with its slice count
//! where the link count goes, and its own fields after those 20 bytes, all little-endian:
//!
//! ```text
//! u8 kind  u64 seed  f64 error  u64 capacity  u64 window  u64 span  u32 hashes  u32 generations
//! u64 base capacity  u64 base bits  u64 clock  u64 next generation
//! per slice, 64 bytes: u64 generation  started  ended  count  load  capacity  level  bits
//! ```
//! With [`OPT_RING`] too (the blocked layout), the data starts with the ring's bits, and a
//! slice in the ring has 0 bits of its own. Older rsbloom builds refuse the option bits;
//! RedisBloom refuses the length (it expects `20 + 53n` bytes), so neither misreads it.
//!
//! With [`OPT_ROTATING`] instead of [`OPT_RING`] (the rotating layout), the array count goes
//! where the link count goes, and after the 20 bytes:
//!
//! ```text
//! u8 kind  u64 seed  f64 error  u64 capacity  u64 window  u64 span  u32 generations  u32 hashes
//! u64 blocks  u64 generation items  u64 clock
//! per slot (r + 1), 28 bytes: u64 generation  u64 load  u64 limit  u32 extras
//!   per extra, 28 bytes: u32 hashes  u64 blocks  u64 capacity  u64 load
//! ```
//! Its data is the interleaved base arrays, then each slot's extras. A filter in the
//! `NOREFRESH` mode sets [`OPT_NOREFRESH`] too (older builds refuse its header).
//!
//! A valkey-bloom filter's header (options `OPT_RSBLOOM | 0x1000`) is in [`crate::valkey::scandump`].
//!
//! The data of all links (or slices) is one concatenated byte stream; iterator `it >= 1` names position
//! `it - 1` in it. A chunk runs from there to the end of the link holding that position, at most
//! [`MAX_CHUNK`] bytes, and is answered with the iterator `it + len` that fetches the next one.

use crate::codec::DecodeError;
use crate::filter::Filter;
use crate::{bloom, valkey, window};

/// Largest chunk of data in one SCANDUMP reply (RedisBloom's 16 MiB, for both kinds).
pub const MAX_CHUNK: usize = 16 << 20;

/// RedisBloom option: sizes are not rounded to a power of two.
pub const OPT_NOROUND: u32 = 1;
/// RedisBloom option: `entries` counts bits (legacy).
pub const OPT_ENTS_IS_BITS: u32 = 2;
/// RedisBloom option: 64-bit hashing, which every filter since 2018 has.
pub const OPT_FORCE64: u32 = 4;
/// RedisBloom option: the chain never grows.
pub const OPT_NONSCALING: u32 = 8;
/// rsbloom's own header: a trailer with the seed and the link layouts follows.
pub const OPT_RSBLOOM: u32 = 0x100;
/// rsbloom's window dialect (with [`OPT_RSBLOOM`]): a window filter's fields follow.
pub const OPT_WINDOW: u32 = 0x200;
/// With [`OPT_WINDOW`]: the blocked layout, whose ring's bits come first.
pub const OPT_RING: u32 = 0x400;
/// With [`OPT_WINDOW`]: the rotating layout, whose own fields follow instead.
pub const OPT_ROTATING: u32 = 0x800;
/// With [`OPT_ROTATING`]: the `NOREFRESH` mode.
pub const OPT_NOREFRESH: u32 = 0x2000;
/// Every option bit RedisBloom defines.
pub const REDISBLOOM_OPTIONS: u32 = OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NONSCALING;
/// The fields every Bloom header starts with: items, links (or slices), options, expansion.
pub(crate) const COMMON_HEADER: usize = 20;

/// Why a header or a chunk was refused (either kind's stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpError {
    /// Not a valid header (the check that fired), or a chunk with an impossible iterator.
    BadData(Option<DecodeError>),
    /// The chunk's position is in no bit or slot array.
    NoLink,
    /// The chunk runs past the end of its array.
    TooBig,
    /// The header describes more storage than the per-filter limit.
    TooLarge {
        /// Bytes the header asks for.
        needed: u64,
        /// The per-filter limit.
        limit: u64,
    },
}

impl From<DecodeError> for DumpError {
    fn from(e: DecodeError) -> Self {
        DumpError::BadData(Some(e))
    }
}

/// Refuses a header that describes more storage than the per-filter limit, before anything is
/// allocated, so a header cannot make the server allocate past the limit even briefly.
pub(crate) fn check_limit(needed: u64, max_bytes: u64) -> Result<(), DumpError> {
    if needed > max_bytes {
        return Err(DumpError::TooLarge {
            needed,
            limit: max_bytes,
        });
    }
    Ok(())
}

/// One step of SCANDUMP (either kind).
#[derive(Debug, PartialEq)]
pub enum Scan<'a> {
    /// Iterator 0: the header; the next iterator is 1.
    Header(Vec<u8>),
    /// Data, with the iterator that fetches what follows.
    Chunk {
        /// The iterator of the next step.
        next: i64,
        /// The bytes of this step.
        data: &'a [u8],
    },
    /// Past the end (or a negative iterator).
    End,
}

/// How much of an array a chunk takes from its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChunkRule {
    /// From the position to the array's end, at most [`MAX_CHUNK`] (RedisBloom's Bloom stream).
    FromPosition,
    /// An array of at most [`MAX_CHUNK`] whole, whatever the position inside it; a larger one
    /// as [`ChunkRule::FromPosition`] (RedisBloom's cuckoo stream).
    WholeSmallArrays,
}

/// The data step at `iterator >= 1` over arrays that form one byte stream: position
/// `iterator - 1`, answered with the iterator `iterator + len` that fetches the next one.
pub(crate) fn scan_arrays<'a>(arrays: &[&'a [u8]], iterator: i64, rule: ChunkRule) -> Scan<'a> {
    let Some(position) = iterator.checked_sub(1).and_then(|p| u64::try_from(p).ok()) else {
        return Scan::End;
    };
    let Some((i, start)) = locate(arrays.iter().map(|a| a.len() as u64), position) else {
        return Scan::End;
    };
    let array = arrays[i];
    let data = if rule == ChunkRule::WholeSmallArrays && array.len() <= MAX_CHUNK {
        array
    } else {
        &array[start..array.len().min(start + MAX_CHUNK)]
    };
    Scan::Chunk {
        next: iterator + data.len() as i64,
        data,
    }
}

/// Every data step from iterator 1 on, in order: `(next_iterator, chunk)`, the sequence a
/// client gets by following the iterators. The AOF rewrite emits it.
pub(crate) fn chunks_of<'a>(
    scan: impl Fn(i64) -> Scan<'a>,
) -> impl Iterator<Item = (i64, &'a [u8])> {
    let mut iterator = 1i64;
    std::iter::from_fn(move || match scan(iterator) {
        Scan::Chunk { next, data } => {
            iterator = next;
            Some((next, data))
        }
        _ => None,
    })
}

/// Copies a data chunk sent with `iterator` (the one SCANDUMP returned alongside it) into the
/// arrays of one byte stream: the chunk covers positions `iterator - len - 1 ..`, inside one
/// array.
pub(crate) fn load_arrays(
    mut arrays: Vec<&mut [u8]>,
    iterator: i64,
    data: &[u8],
) -> Result<(), DumpError> {
    let len = data.len() as u64;
    if iterator <= 0 || (iterator as u64) < len {
        return Err(DumpError::BadData(None));
    }
    let pos = (iterator as u64 - len)
        .checked_sub(1)
        .ok_or(DumpError::NoLink)?;
    let (i, start) = locate(arrays.iter().map(|a| a.len() as u64), pos).ok_or(DumpError::NoLink)?;
    let dst = arrays[i]
        .get_mut(start..)
        .and_then(|rest| rest.get_mut(..data.len()))
        .ok_or(DumpError::TooBig)?;
    dst.copy_from_slice(data);
    Ok(())
}

/// The array (of the given lengths) holding byte `pos` of the concatenated data, and the
/// offset inside it.
fn locate(lengths: impl Iterator<Item = u64>, pos: u64) -> Option<(usize, usize)> {
    let mut base = 0u64;
    for (i, len) in lengths.enumerate() {
        if pos < base + len {
            return Some((i, (pos - base) as usize));
        }
        base += len;
    }
    None
}

/// The SCANDUMP reply for `iterator` (`End` past the data: `[0, ""]`).
pub fn scan(filter: &Filter, iterator: i64) -> Scan<'_> {
    if iterator == 0 {
        return Scan::Header(header(filter));
    }
    scan_arrays(&filter.bit_arrays(), iterator, ChunkRule::FromPosition)
}

/// Every SCANDUMP step after the header, in order.
pub fn chunks(filter: &Filter) -> impl Iterator<Item = (i64, &[u8])> {
    chunks_of(move |iterator| scan(filter, iterator))
}

/// The header of a filter (iterator 0): rsbloom's chain header, or the window dialect.
pub fn header(filter: &Filter) -> Vec<u8> {
    match filter {
        Filter::Chain(chain) => bloom::scandump::header(chain),
        Filter::Sliding(sliding) => window::partitioned::scandump::header(sliding),
        Filter::Rotating(rotating) => window::rotating::scandump::header(rotating),
        Filter::Valkey(v) => valkey::scandump::header(v),
    }
}

/// Little-endian field reader over a header whose length was checked already.
pub(crate) struct Fields<'a>(pub(crate) &'a [u8]);

impl Fields<'_> {
    pub(crate) fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        head.try_into().expect("split at N")
    }
    pub(crate) fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub(crate) fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    pub(crate) fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub(crate) fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub(crate) fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
}

/// Builds an empty-bitted filter from a header (rsbloom's, its window dialect, or
/// RedisBloom's), validating every field before allocating. `foreign_seed` is the seed of a
/// chain from a RedisBloom header (used by the native links it grows later); `max_bytes` is the
/// per-filter limit.
pub fn filter_from_header(
    data: &[u8],
    foreign_seed: u64,
    max_bytes: u64,
) -> Result<Filter, DumpError> {
    let bad = |e: DecodeError| DumpError::BadData(Some(e));
    if data.len() < COMMON_HEADER {
        return Err(bad(DecodeError::HeaderLength));
    }
    let mut f = Fields(data);
    let items = f.u64();
    let nlinks = f.u32();
    let options = f.u32();
    let expansion = f.u32();
    if options == valkey::scandump::OPTIONS {
        return valkey::scandump::from_header(f, items, nlinks, expansion, max_bytes)
            .map(Filter::from);
    }
    if options & !OPT_NOREFRESH == window::rotating::scandump::OPTIONS {
        let refresh = options & OPT_NOREFRESH == 0;
        return window::rotating::scandump::from_header(
            f, items, nlinks, expansion, refresh, max_bytes,
        )
        .map(Filter::from);
    }
    if options & !OPT_RING == window::partitioned::scandump::OPTIONS {
        let ring = options & OPT_RING != 0;
        return window::partitioned::scandump::from_header(
            f, items, nlinks, expansion, ring, max_bytes,
        )
        .map(Filter::from);
    }
    bloom::scandump::from_header(
        f,
        items,
        nlinks,
        options,
        expansion,
        foreign_seed,
        max_bytes,
    )
    .map(Filter::Chain)
}

/// Copies a data chunk sent with `iterator` into the filter's bit arrays.
pub fn load_chunk(filter: &mut Filter, iterator: i64, data: &[u8]) -> Result<(), DumpError> {
    load_arrays(filter.bit_arrays_mut(), iterator, data)
}
