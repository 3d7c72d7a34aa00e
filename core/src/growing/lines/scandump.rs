//! The one-line filter's SCANDUMP stream. Options [`LINES_OPTIONS`] (older rsbloom builds
//! refuse the bit, RedisBloom the length), the line count (at most `u32::MAX`) where the link
//! count goes, expansion 0, and after the 20 common bytes, little-endian:
//!
//! ```text
//! u64 seed  f64 error  u64 capacity  u8 remainder bits  u8 entries a line  u8 level  u8 pass
//! u64 next group
//! ```
//! Each data step is one piece ([`super::format`]: whole pairs of lines and their overflow
//! entries), at most [`MAX_CHUNK`] bytes: the step at iterator `it` starts at line `it - 1`
//! and answers `it + lines`, so the iterator a LOADCHUNK gets says where its lines end.

use crate::codec::DecodeError;
use crate::growing::lines::filter::LineFilter;
use crate::growing::lines::format::{self, Parameters};
use crate::scandump::engine::{
    check_limit, first_record, record_step, DumpError, Fields, Scan, MAX_CHUNK,
};
use crate::scandump::options::{COMMON_HEADER, LINES_OPTIONS};

/// Bytes of the dialect's fields.
const FIXED: usize = 8 + 8 + 8 + 4 + 8;

/// The header (iterator 0).
pub(crate) fn header(f: &LineFilter) -> Vec<u8> {
    let p = Parameters::of(f);
    let mut h = Vec::with_capacity(COMMON_HEADER + FIXED);
    h.extend(p.items.to_le_bytes());
    let lines = u32::try_from(f.line_count()).unwrap_or(u32::MAX);
    h.extend(lines.to_le_bytes());
    h.extend(LINES_OPTIONS.to_le_bytes());
    h.extend(0u32.to_le_bytes());
    h.extend(p.seed.to_le_bytes());
    h.extend(p.error.to_le_bytes());
    h.extend(p.capacity.to_le_bytes());
    for width in [p.rem, p.load, p.level, p.pass] {
        h.push(width as u8);
    }
    h.extend(p.next.to_le_bytes());
    h
}

/// The data step at `iterator >= 1`.
pub(crate) fn scan(f: &LineFilter, iterator: i64) -> Scan<'_> {
    record_step(iterator, f.line_count(), |first| {
        format::piece(f, first, MAX_CHUNK)
    })
}

/// A filter with its lines (empty) from a header whose common fields were read, within
/// `max_bytes`.
pub(crate) fn from_header(
    mut h: Fields<'_>,
    items: u64,
    max_bytes: u64,
) -> Result<LineFilter, DumpError> {
    if h.0.len() != FIXED {
        return Err(DecodeError::HeaderLength.into());
    }
    let p = Parameters {
        items,
        seed: h.u64(),
        error: h.f64(),
        capacity: h.u64(),
        rem: h.u8().into(),
        load: h.u8().into(),
        level: h.u8().into(),
        pass: h.u8().into(),
        next: h.u64(),
    };
    let mut f = format::empty(&p)?;
    check_limit(f.line_count().saturating_mul(64), max_bytes)?;
    f.reserve_lines(f.line_count())
        .map_err(|_| DecodeError::OutOfMemory)?;
    Ok(f)
}

/// Loads a data step sent with `iterator` (the one SCANDUMP answered with it): its lines end
/// at line `iterator - 1`.
pub(crate) fn load_chunk(f: &mut LineFilter, iterator: i64, data: &[u8]) -> Result<(), DumpError> {
    let piece = format::decode_piece(data)?;
    let first = first_record(iterator, piece.lines())?;
    format::install(f, first, piece)?;
    Ok(())
}
