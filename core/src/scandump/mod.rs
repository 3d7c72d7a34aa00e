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
//! rsbloom's own header sets [`OPT_RSBLOOM`](options::OPT_RSBLOOM) in `options` and appends a trailer after those
//! `20 + 53n` bytes: `u64 seed`, then one `u8` layout tag per link. A header without that bit is
//! RedisBloom's: its links keep RedisBloom's hashing ([`Layout::RedisBloom`](crate::Layout::RedisBloom)).
//!
//! A window filter's header (the window dialect) sets [`OPT_WINDOW`](options::OPT_WINDOW) too, with its slice count
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
//! With [`OPT_ROTATING`](options::OPT_ROTATING) instead of [`OPT_RING`] (the rotating layout), the array count goes
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

pub(crate) mod engine;
pub mod options;

pub use engine::{DumpError, Scan, MAX_CHUNK};

use std::borrow::Cow;

use crate::codec::DecodeError;
use crate::filter::Filter;
use crate::growing::lines;
use crate::window::{partitioned, rotating};
use crate::{bloom, growing, valkey};
use engine::{chunks_of, load_arrays, scan_arrays, ChunkRule, Fields};
use options::{
    COMMON_HEADER, GROWING_OPTIONS, LINES_OPTIONS, OPT_NOREFRESH, OPT_RING, ROTATING_OPTIONS,
    VALKEY_OPTIONS, WINDOW_OPTIONS,
};

/// The SCANDUMP reply for `iterator` (`End` past the data: `[0, ""]`).
pub fn scan(filter: &Filter, iterator: i64) -> Scan<'_> {
    if iterator == 0 {
        return Scan::Header(header(filter));
    }
    match filter {
        Filter::Growing(g) => return growing::scandump::scan(g, iterator),
        Filter::Lines(f) => return lines::scandump::scan(f, iterator),
        _ => {}
    }
    scan_arrays(&filter.bit_arrays(), iterator, ChunkRule::FromPosition)
}

/// Every SCANDUMP step after the header, in order.
pub fn chunks(filter: &Filter) -> impl Iterator<Item = (i64, Cow<'_, [u8]>)> {
    chunks_of(move |iterator| scan(filter, iterator))
}

/// The header of a filter (iterator 0): rsbloom's chain header, or the window dialect.
pub fn header(filter: &Filter) -> Vec<u8> {
    match filter {
        Filter::Chain(chain) => bloom::scandump::header(chain),
        Filter::Sliding(sliding) => partitioned::scandump::header(sliding),
        Filter::Rotating(rotating) => rotating::scandump::header(rotating),
        Filter::Valkey(v) => valkey::scandump::header(v),
        Filter::Growing(g) => growing::scandump::header(g),
        Filter::Lines(f) => lines::scandump::header(f),
    }
}

/// What DEBUG DIGEST covers after the header: the bit arrays, or a growing filter's chunk
/// records or pieces.
pub fn digest_parts(filter: &Filter) -> Vec<Cow<'_, [u8]>> {
    match filter {
        Filter::Growing(_) | Filter::Lines(_) => chunks(filter).map(|(_, data)| data).collect(),
        _ => filter.bit_arrays().into_iter().map(Cow::Borrowed).collect(),
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
    if options == LINES_OPTIONS && expansion == 0 {
        return lines::scandump::from_header(f, items, max_bytes).map(Filter::from);
    }
    if options == GROWING_OPTIONS && expansion == 0 {
        return growing::scandump::from_header(f, items, max_bytes).map(Filter::from);
    }
    if options == VALKEY_OPTIONS {
        return valkey::scandump::from_header(f, items, nlinks, expansion, max_bytes)
            .map(Filter::from);
    }
    if options & !OPT_NOREFRESH == ROTATING_OPTIONS {
        let refresh = options & OPT_NOREFRESH == 0;
        return rotating::scandump::from_header(f, items, nlinks, expansion, refresh, max_bytes)
            .map(Filter::from);
    }
    if options & !OPT_RING == WINDOW_OPTIONS {
        let ring = options & OPT_RING != 0;
        return partitioned::scandump::from_header(f, items, nlinks, expansion, ring, max_bytes)
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
    match filter {
        Filter::Growing(g) => return growing::scandump::load_chunk(g, iterator, data),
        Filter::Lines(f) => return lines::scandump::load_chunk(f, iterator, data),
        _ => {}
    }
    load_arrays(filter.bit_arrays_mut(), iterator, data)
}
