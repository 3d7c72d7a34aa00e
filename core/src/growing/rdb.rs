//! A growing filter's fields in the RDB value, after the envelope's items and flags
//! ([`crate::rdb`], flag `GROWING`):
//!
//! ```text
//! unsigned  seed
//! double    error
//! unsigned  capacity       the starting size it was created with
//! unsigned  cell bits (q), slot bits (S), start level, level, split pointer
//! unsigned  pieces
//! string*   the chunk records (crate::growing::records), whole records per piece
//! ```
//! The widths are stored, not derived from the rate, so a later build that sizes new filters
//! otherwise still reads this one.

use crate::codec::{DecodeError, FieldReader, FieldWriter, CHUNK_BYTES};
use crate::growing::builder::{self, Parameters};
use crate::growing::filter::Growing;
use crate::growing::records;

/// Writes a filter's fields.
pub(crate) fn encode(g: &Growing, w: &mut impl FieldWriter) {
    w.unsigned(g.seed);
    w.double(g.error);
    w.unsigned(g.capacity);
    for field in [
        g.shape.cell_bits.into(),
        g.shape.slot_bits.into(),
        g.start_level.into(),
        g.level.into(),
        g.split,
    ] {
        w.unsigned(field);
    }
    let pieces: Vec<Vec<u8>> = records::pieces(g, CHUNK_BYTES).map(|(_, p)| p).collect();
    w.unsigned(pieces.len() as u64);
    for piece in &pieces {
        w.bytes(piece);
    }
}

/// Reads a filter of `items` items, every field checked before it allocates.
pub(crate) fn decode(r: &mut impl FieldReader, items: u64) -> Result<Growing, DecodeError> {
    let p = Parameters {
        items,
        seed: r.unsigned()?,
        error: r.double()?,
        capacity: r.unsigned()?,
        cell_bits: r.unsigned()?,
        slot_bits: r.unsigned()?,
        start_level: r.unsigned()?,
        level: r.unsigned()?,
        split: r.unsigned()?,
    };
    let mut g = builder::empty(&p, u64::MAX)?;
    let pieces = r.unsigned()?;
    let mut at = 0;
    for _ in 0..pieces {
        let piece = r.bytes(CHUNK_BYTES as u64 * 2)?;
        if piece.is_empty() {
            return Err(DecodeError::EmptyPiece);
        }
        let chunks = records::decode(&g, &piece)?;
        at = records::install(&mut g, at, chunks)?;
    }
    if at != g.chunk_count() {
        return Err(DecodeError::GrowingChunk);
    }
    Ok(g)
}
