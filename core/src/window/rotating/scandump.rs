//! A rotating window filter's SCANDUMP header (the layout is in [`crate::scandump`]).

use crate::codec::DecodeError;
use crate::scandump::engine::{check_limit, DumpError, Fields};
use crate::scandump::options::{COMMON_HEADER, OPT_NOREFRESH, ROTATING_OPTIONS};
use crate::window::common::WindowHead;
use crate::window::rotating::builder::{ExtraHeader, RotatingBuilder, RotatingHeader, SlotHeader};
use crate::window::rotating::design::MAX_GENERATIONS;
use crate::window::rotating::Rotating;

/// Bytes of the filter's own fields after the common 20.
const FIELDS: usize = WindowHead::DUMP_BYTES + 2 * 4 + 3 * 8;
/// Bytes of one slot's fields.
const SLOT: usize = 3 * 8 + 4;
/// Bytes of one extra array's fields.
const EXTRA: usize = 4 + 3 * 8;

/// The header: the common fields (the array count where a chain has its links), the filter's
/// fields, then each slot's and each of its extras'.
pub(crate) fn header(f: &Rotating) -> Vec<u8> {
    let h = RotatingHeader::of(f);
    let extras: usize = f.slots().iter().map(|s| s.extras.len()).sum();
    let mut out =
        Vec::with_capacity(COMMON_HEADER + FIELDS + SLOT * f.slots().len() + EXTRA * extras);
    out.extend_from_slice(&h.added.to_le_bytes());
    out.extend_from_slice(&(1 + extras as u32).to_le_bytes());
    let mode = if h.refresh { 0 } else { OPT_NOREFRESH };
    out.extend_from_slice(&(ROTATING_OPTIONS | mode).to_le_bytes());
    out.extend_from_slice(&(h.expansion as u32).to_le_bytes());
    h.head.dump(&mut out);
    out.extend_from_slice(&(h.generations as u32).to_le_bytes());
    out.extend_from_slice(&(h.hashes as u32).to_le_bytes());
    for v in [h.blocks, h.generation_items, h.clock] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for slot in f.slots() {
        let s = SlotHeader::of(slot);
        for v in [s.generation, s.load, s.limit] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(s.extras as u32).to_le_bytes());
        for extra in &slot.extras {
            let e = ExtraHeader::of(extra);
            out.extend_from_slice(&(e.hashes as u32).to_le_bytes());
            for v in [e.blocks, e.capacity, e.load] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    out
}

/// The filter a header describes (`refresh`: without [`OPT_NOREFRESH`]), its bits zeroed, after
/// the first 20 bytes: refused before
/// anything is allocated when the length does not match or the arrays pass `max_bytes`.
pub(crate) fn from_header(
    mut f: Fields,
    added: u64,
    arrays: u32,
    expansion: u32,
    refresh: bool,
    max_bytes: u64,
) -> Result<Rotating, DumpError> {
    let length = DumpError::from(DecodeError::HeaderLength);
    if f.0.len() < FIELDS || arrays == 0 {
        return Err(length);
    }
    let head = WindowHead::undump(&mut f);
    let (generations, hashes) = (u64::from(f.u32()), u64::from(f.u32()));
    let (blocks, generation_items, clock) = (f.u64(), f.u64(), f.u64());
    let extras = arrays as usize - 1;
    if generations > u64::from(MAX_GENERATIONS)
        || f.0.len() != SLOT * (generations as usize + 1) + EXTRA * extras
    {
        return Err(length);
    }
    let header = RotatingHeader {
        head,
        generations,
        hashes,
        blocks,
        generation_items,
        expansion: u64::from(expansion),
        clock,
        added,
        refresh,
    };
    let mut slots = Vec::new();
    let mut needed = header.base_bytes();
    let mut owed = 0usize;
    for _ in 0..=generations {
        let slot = SlotHeader {
            generation: f.u64(),
            load: f.u64(),
            limit: f.u64(),
            extras: u64::from(f.u32()),
        };
        owed += slot.extras as usize;
        if owed > extras {
            return Err(length);
        }
        let mut list = Vec::new();
        for _ in 0..slot.extras {
            let e = ExtraHeader {
                hashes: u64::from(f.u32()),
                blocks: f.u64(),
                capacity: f.u64(),
                load: f.u64(),
            };
            needed = needed.saturating_add(e.bytes());
            list.push(e);
        }
        slots.push((slot, list));
    }
    if owed != extras {
        return Err(length);
    }
    check_limit(needed, max_bytes)?;
    let mut builder = RotatingBuilder::new(header)?;
    for (slot, list) in slots {
        builder.slot(slot)?;
        for e in list {
            builder.extra(e)?;
        }
    }
    builder.finish().map_err(DumpError::from)
}
