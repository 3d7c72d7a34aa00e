//! The invariants a decoded growing filter must hold, checked before anything is allocated:
//! widths a chunk can have, levels in order, the split pointer inside its level, and the
//! chunk count the adds' split schedule gives for its items.

use crate::codec::{machine_memory, DecodeError};
use crate::growing::chunk::{Chunk, Shape};
use crate::growing::design::MAX_START_LEVEL;
use crate::growing::design::PER_CHUNK;
use crate::growing::filter::{Growing, MAX_LEVEL};
use crate::outcome::FilterError;

/// A growing filter's stored parameters, as read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Parameters {
    pub(crate) items: u64,
    pub(crate) seed: u64,
    pub(crate) error: f64,
    pub(crate) capacity: u64,
    pub(crate) cell_bits: u64,
    pub(crate) slot_bits: u64,
    pub(crate) start_level: u64,
    pub(crate) level: u64,
    pub(crate) split: u64,
}

/// The chunks a filter starting at `start_level` has after `items` adds: one split per
/// [`PER_CHUNK`] items past the start's room.
pub(crate) fn chunks_for(start_level: u16, items: u64) -> u64 {
    (1u64 << start_level).max(items.div_ceil(PER_CHUNK))
}

/// A filter with these parameters and empty chunks (its records come next), or the check
/// that failed. `max_bytes` bounds its chunk table.
pub(crate) fn empty(p: &Parameters, max_bytes: u64) -> Result<Growing, DecodeError> {
    let bad = DecodeError::GrowingParameters;
    let in_range = |v: u64, lo: u64, hi: u64| (lo..=hi).contains(&v);
    let rate_ok = p.error > 0.0 && p.error < 1.0;
    if !rate_ok
        || p.capacity == 0
        || !in_range(p.cell_bits, 1, 8)
        || !in_range(p.slot_bits, 2, 32)
        || !in_range(p.start_level, 0, MAX_START_LEVEL.into())
        || !in_range(p.level, p.start_level, u64::from(MAX_LEVEL))
        || p.split >= 1u64 << p.level
    {
        return Err(bad);
    }
    let (start_level, level) = (p.start_level as u16, p.level as u16);
    let count = (1u64 << level) + p.split;
    if count != chunks_for(start_level, p.items) {
        return Err(bad);
    }
    let table = count.saturating_mul(std::mem::size_of::<Chunk>() as u64);
    if table > max_bytes || machine_memory().is_some_and(|m| table > m) {
        return Err(DecodeError::MachineMemory);
    }
    let mut g = Growing {
        seed: p.seed,
        error: p.error,
        capacity: p.capacity,
        shape: Shape {
            cell_bits: p.cell_bits as u16,
            slot_bits: p.slot_bits as u16,
        },
        start_level,
        level,
        split: p.split,
        items: p.items,
        segments: Vec::new(),
        block_bytes: 0,
    };
    for _ in 0..count {
        g.push_chunk(Chunk::default()).map_err(|e| match e {
            FilterError::OutOfMemory { .. } => DecodeError::OutOfMemory,
            _ => bad,
        })?;
    }
    Ok(g)
}
