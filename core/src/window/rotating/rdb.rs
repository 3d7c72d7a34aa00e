//! A rotating window filter's fields in rsbloom's RDB value (the layout is in [`crate::rdb`]).

use crate::codec::{read_pieces, write_pieces, DecodeError, FieldReader, FieldWriter};
use crate::lines;
use crate::window::common::WindowHead;
use crate::window::rotating::builder::{ExtraHeader, RotatingBuilder, RotatingHeader, SlotHeader};
use crate::window::rotating::Rotating;

/// Writes a rotating window filter's fields, base arrays, then each slot with its extras,
/// after its added count and flags.
pub(crate) fn encode(f: &Rotating, w: &mut impl FieldWriter) {
    let h = RotatingHeader::of(f);
    h.head.write(w);
    for v in [
        h.generations,
        h.hashes,
        h.blocks,
        h.generation_items,
        h.expansion,
        h.clock,
    ] {
        w.unsigned(v);
    }
    write_pieces(w, lines::bytes(&f.base_lines));
    for slot in f.slots() {
        let s = SlotHeader::of(slot);
        for v in [s.generation, s.load, s.limit, s.extras] {
            w.unsigned(v);
        }
        for extra in &slot.extras {
            let e = ExtraHeader::of(extra);
            for v in [e.hashes, e.blocks, e.capacity, e.load] {
                w.unsigned(v);
            }
            write_pieces(w, extra.bytes());
        }
    }
}

/// Reads a rotating window filter after its added count and flags (`refresh`: without the
/// `NOREFRESH` flag), validating every field before it allocates or trusts it.
pub(crate) fn decode(
    r: &mut impl FieldReader,
    added: u64,
    refresh: bool,
) -> Result<Rotating, DecodeError> {
    let head = WindowHead::read(r)?;
    let mut next = || r.unsigned();
    let header = RotatingHeader {
        head,
        generations: next()?,
        hashes: next()?,
        blocks: next()?,
        generation_items: next()?,
        expansion: next()?,
        clock: next()?,
        added,
        refresh,
    };
    let mut builder = RotatingBuilder::new(header)?;
    read_pieces(r, builder.base_lines())?;
    for _ in 0..=header.generations {
        let mut next = || r.unsigned();
        let slot = SlotHeader {
            generation: next()?,
            load: next()?,
            limit: next()?,
            extras: next()?,
        };
        builder.slot(slot)?;
        for _ in 0..slot.extras {
            let mut next = || r.unsigned();
            let extra = ExtraHeader {
                hashes: next()?,
                blocks: next()?,
                capacity: next()?,
                load: next()?,
            };
            read_pieces(r, builder.extra(extra)?)?;
        }
    }
    builder.finish()
}
