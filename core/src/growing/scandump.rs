//! A growing filter's SCANDUMP stream. Options [`GROWING_OPTIONS`] (older rsbloom builds refuse
//! the bit, RedisBloom the length), the chunk count (at most `u32::MAX`) where the link count
//! goes, expansion 0, and after the 20 common bytes, little-endian:
//!
//! ```text
//! u64 seed  f64 error  u64 capacity  u8 cell bits  u8 slot bits  u8 start level  u8 level
//! u64 split pointer
//! ```
//! Each data step is whole chunk records ([`crate::growing::records`]), at most
//! [`MAX_CHUNK`] bytes (one record more when a single one is larger): the step at iterator `it`
//! starts at chunk `it - 1` and answers `it + records`, so the iterator a LOADCHUNK gets says
//! where its records end, as a Bloom stream's says where its bytes end.

use crate::codec::DecodeError;
use crate::growing::builder::{self, Parameters};
use crate::growing::filter::Growing;
use crate::growing::records;
use crate::scandump::engine::{first_record, record_step, DumpError, Fields, Scan, MAX_CHUNK};
use crate::scandump::options::{COMMON_HEADER, GROWING_OPTIONS};

/// Bytes of the dialect's fields.
const FIXED: usize = 8 + 8 + 8 + 4 + 8;

/// The header (iterator 0).
pub(crate) fn header(g: &Growing) -> Vec<u8> {
    let mut h = Vec::with_capacity(COMMON_HEADER + FIXED);
    h.extend(g.items.to_le_bytes());
    h.extend(
        u32::try_from(g.chunk_count())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    h.extend(GROWING_OPTIONS.to_le_bytes());
    h.extend(0u32.to_le_bytes());
    h.extend(g.seed.to_le_bytes());
    h.extend(g.error.to_le_bytes());
    h.extend(g.capacity.to_le_bytes());
    for width in [g.shape.cell_bits, g.shape.slot_bits, g.start_level, g.level] {
        h.push(width as u8);
    }
    h.extend(g.split.to_le_bytes());
    h
}

/// The data step at `iterator >= 1`.
pub(crate) fn scan(g: &Growing, iterator: i64) -> Scan<'_> {
    record_step(iterator, g.chunk_count(), |first| {
        records::piece(g, first, MAX_CHUNK)
    })
}

/// An empty filter from a header whose common fields were read; `max_bytes` bounds its table.
pub(crate) fn from_header(
    mut f: Fields<'_>,
    items: u64,
    max_bytes: u64,
) -> Result<Growing, DumpError> {
    if f.0.len() != FIXED {
        return Err(DecodeError::HeaderLength.into());
    }
    let p = Parameters {
        items,
        seed: f.u64(),
        error: f.f64(),
        capacity: f.u64(),
        cell_bits: f.u8().into(),
        slot_bits: f.u8().into(),
        start_level: f.u8().into(),
        level: f.u8().into(),
        split: f.u64(),
    };
    Ok(builder::empty(&p, max_bytes)?)
}

/// Loads a data step sent with `iterator` (the one SCANDUMP answered with it): its records
/// end at chunk `iterator - 1`.
pub(crate) fn load_chunk(g: &mut Growing, iterator: i64, data: &[u8]) -> Result<(), DumpError> {
    let chunks = records::decode(g, data)?;
    let first = first_record(iterator, chunks.len() as u64)?;
    records::install(g, first, chunks)?;
    Ok(())
}
