//! A window filter's fields in rsbloom's RDB value (the layout is in [`crate::rdb`]).

use crate::codec::{read_pieces, write_pieces, DecodeError, FieldReader, FieldWriter};
use crate::window::common::WindowHead;
use crate::window::partitioned::builder::{SliceHeader, SlidingBuilder, SlidingHeader};
use crate::window::partitioned::ring::Ring;
use crate::window::partitioned::Sliding;

/// Writes a window filter's fields and slices, after its added count and flags.
pub(crate) fn encode(f: &Sliding, w: &mut impl FieldWriter) {
    let h = SlidingHeader::of(f);
    h.head.write(w);
    for v in [
        h.hashes,
        h.generations,
        h.base_capacity,
        h.base_bits,
        h.expansion,
        h.clock,
        h.next_generation,
        h.slices,
    ] {
        w.unsigned(v);
    }
    write_pieces(w, f.ring().map_or(&[][..], Ring::bytes));
    for slice in f.slices() {
        for v in SliceHeader::of(slice).fields() {
            w.unsigned(v);
        }
        write_pieces(w, slice.bytes());
    }
}

/// Reads a window filter after its added count and flags (`ring`: the blocked layout's flag),
/// validating every field before it allocates or trusts it.
pub(crate) fn decode(
    r: &mut impl FieldReader,
    added: u64,
    ring: bool,
) -> Result<Sliding, DecodeError> {
    let head = WindowHead::read(r)?;
    let mut next = || r.unsigned();
    let header = SlidingHeader {
        head,
        hashes: next()?,
        generations: next()?,
        base_capacity: next()?,
        base_bits: next()?,
        expansion: next()?,
        clock: next()?,
        added,
        next_generation: next()?,
        slices: next()?,
        ring,
    };
    let mut builder = SlidingBuilder::new(header)?;
    read_pieces(r, builder.ring())?;
    for _ in 0..header.slices {
        let mut fields = [0u64; 8];
        for field in &mut fields {
            *field = r.unsigned()?;
        }
        let slice = SliceHeader::from_fields(fields);
        read_pieces(r, builder.slice(slice)?)?;
    }
    builder.finish()
}
