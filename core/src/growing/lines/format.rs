//! The one-line filter's saved fields, and the checks a decoded one must pass before any of
//! its lines is used: every line as inserts and growth steps leave one, every overflow entry
//! where a lookup would look for it. Not yet behind an RDB flag (the layout is not served).
//!
//! ```text
//! unsigned  seed
//! double    error
//! unsigned  capacity       the starting size it was created with
//! unsigned  remainder bits, entries a line, level, pass, next group
//! unsigned  lines
//! unsigned  pieces
//! string*   the lines (64 bytes each, little-endian words), whole lines per piece
//! unsigned  overflow entries
//! unsigned  pieces
//! string*   the overflow entries (16 bytes each: line u64, cell u32, slot u32), whole per piece
//! ```
//! The widths are stored, not derived from the rate, so a later build that sizes new filters
//! otherwise still reads this one.

use crate::codec::{machine_memory, DecodeError, FieldReader, FieldWriter, CHUNK_BYTES};
use crate::growing::lines::filter::{cells_of, max_level, Cells, LineFilter, Scratch};
use crate::growing::lines::line::{span, Bucket, Entry, Widths, CELL_BITS, G0};
use crate::growing::lines::overflow::Overflow;
use crate::lines::Line;

/// Bytes of a saved overflow entry.
const ENTRY_BYTES: usize = 16;

/// Lines and overflow entries per piece: whole records, at most [`CHUNK_BYTES`].
const LINES_PER_PIECE: usize = CHUNK_BYTES / 64;
const ENTRIES_PER_PIECE: usize = CHUNK_BYTES / ENTRY_BYTES;

/// Writes a filter's fields ([`LineFilter::encode`]).
fn encode(f: &LineFilter, w: &mut impl FieldWriter) {
    w.unsigned(f.seed);
    w.double(f.error);
    w.unsigned(f.capacity);
    let fields = [f.widths.rem, f.widths.load, f.level, f.pass];
    for field in fields {
        w.unsigned(field.into());
    }
    w.unsigned(f.next);
    let lines = f.line_count();
    w.unsigned(lines);
    w.unsigned(lines.div_ceil(LINES_PER_PIECE as u64));
    let mut piece = Vec::with_capacity(CHUNK_BYTES);
    for first in (0..lines).step_by(LINES_PER_PIECE) {
        piece.clear();
        for b in first..lines.min(first + LINES_PER_PIECE as u64) {
            piece.extend(f.line(b).0.iter().flat_map(|word| word.to_le_bytes()));
        }
        w.bytes(&piece);
    }
    let entries = f.overflow.all();
    w.unsigned(entries.len() as u64);
    w.unsigned(entries.len().div_ceil(ENTRIES_PER_PIECE) as u64);
    for part in entries.chunks(ENTRIES_PER_PIECE) {
        piece.clear();
        for &(b, e) in part {
            piece.extend(b.to_le_bytes());
            piece.extend(e.cell.to_le_bytes());
            piece.extend(e.slot.to_le_bytes());
        }
        w.bytes(&piece);
    }
}

/// Reads a filter of `items` items ([`LineFilter::decode`]).
fn decode(r: &mut impl FieldReader, items: u64) -> Result<LineFilter, DecodeError> {
    let bad = DecodeError::GrowingParameters;
    let (seed, error, capacity) = (r.unsigned()?, r.double()?, r.unsigned()?);
    let (rem, load, level, pass) = (r.unsigned()?, r.unsigned()?, r.unsigned()?, r.unsigned()?);
    let (next, lines) = (r.unsigned()?, r.unsigned()?);
    let narrow = |v: u64, lo: u64, hi: u64| (lo..=hi).contains(&v).then_some(v as u32);
    let rem = narrow(rem, 7, 31).ok_or(bad)?;
    let widths = Widths {
        rem,
        slot: rem + 1,
        load: narrow(load, 1, 47).ok_or(bad)?,
    };
    let level = narrow(level, 0, max_level(&widths).into()).ok_or(bad)?;
    let pass = narrow(pass, 0, G0 - 1).ok_or(bad)?;
    let expected = (G0 + u64::from(pass)) << level;
    let valid = error > 0.0 && error < 1.0 && next < 1 << level && lines == expected + next;
    if !valid || items > u64::from(widths.load) * lines {
        return Err(bad);
    }
    if machine_memory().is_some_and(|m| lines.saturating_mul(64) > m) {
        return Err(DecodeError::MachineMemory);
    }
    let mut f = LineFilter {
        seed,
        error,
        capacity,
        widths,
        level,
        pass,
        next,
        items,
        segments: Vec::new(),
        overflow: Overflow::new(&widths),
        scratch: Scratch::default(),
    };
    read_lines(r, &mut f, lines)?;
    read_overflow(r, &mut f)?;
    let well_formed = (0..lines).all(|b| line_is_whole(&f, b));
    if !well_formed {
        return Err(DecodeError::GrowingLine);
    }
    Ok(f)
}

/// The lines' pieces, each of whole lines, until `lines` are read.
fn read_lines(r: &mut impl FieldReader, f: &mut LineFilter, lines: u64) -> Result<(), DecodeError> {
    let bad = DecodeError::GrowingLine;
    let pieces = r.unsigned()?;
    let mut read = 0;
    for _ in 0..pieces {
        let piece = r.bytes(CHUNK_BYTES as u64)?;
        let count = (piece.len() / 64) as u64;
        if piece.is_empty() || piece.len() % 64 != 0 || read + count > lines {
            return Err(bad);
        }
        f.reserve_lines(read + count)
            .map_err(|_| DecodeError::OutOfMemory)?;
        for (i, bytes) in piece.chunks_exact(64).enumerate() {
            let line = f.line_mut(read + i as u64);
            for (word, b) in line.0.iter_mut().zip(bytes.chunks_exact(8)) {
                *word = u64::from_le_bytes(b.try_into().expect("8 bytes"));
            }
        }
        read += count;
    }
    if read != lines {
        return Err(bad);
    }
    Ok(())
}

/// The overflow's entries, each in its line's cells, for a line that says it sent some.
fn read_overflow(r: &mut impl FieldReader, f: &mut LineFilter) -> Result<(), DecodeError> {
    let bad = DecodeError::GrowingLine;
    let (entries, pieces) = (r.unsigned()?, r.unsigned()?);
    let mut read = 0;
    for _ in 0..pieces {
        let piece = r.bytes(CHUNK_BYTES as u64)?;
        if piece.is_empty() || piece.len() % ENTRY_BYTES != 0 {
            return Err(bad);
        }
        for record in piece.chunks_exact(ENTRY_BYTES) {
            let b = u64::from_le_bytes(record[..8].try_into().expect("8 bytes"));
            let cell = u32::from_le_bytes(record[8..12].try_into().expect("4 bytes"));
            let slot = u32::from_le_bytes(record[12..].try_into().expect("4 bytes"));
            let e = Entry { cell, slot };
            if b >= f.line_count() || read >= entries {
                return Err(bad);
            }
            let cells = f.cells_of_line(b);
            let fits = f.line(b).mapped()
                && in_cells(cell, cells)
                && cell - cells.first >= f.line(b).spill_from()
                && slot_is_valid(slot, &f.widths);
            if !fits {
                return Err(bad);
            }
            f.overflow
                .reserve(b, 1)
                .map_err(|_| DecodeError::OutOfMemory)?;
            f.overflow.push(b, e);
            read += 1;
        }
    }
    if read != entries {
        return Err(bad);
    }
    Ok(())
}

fn in_cells(cell: u32, cells: Cells) -> bool {
    (cells.first..cells.first + cells.count).contains(&cell) && cell < 1 << CELL_BITS
}

/// A slot with its marker among its bits.
fn slot_is_valid(slot: u32, w: &Widths) -> bool {
    slot != 0 && slot.trailing_zeros() <= w.rem && u64::from(slot) >> w.slot == 0
}

/// Whether line `b` is as inserts and growth steps leave one: its header's ones are its entry
/// count, its header and slots end before its buddy's entries with the bits between clear,
/// every slot has its marker, none of its entries is of a cell it sends elsewhere (a shed
/// would move that mark up past cells whose entries are elsewhere: found by the fuzz target),
/// and the buddy's entries it holds are of cells the buddy sends elsewhere.
fn line_is_whole(f: &LineFilter, b: u64) -> bool {
    let w = &f.widths;
    let line: &Line = f.line(b);
    let cells = f.cells_of_line(b);
    let entries = line.entries();
    let len = cells.count + entries;
    let end = line.own_end(w);
    let slots_end = len + entries * w.slot;
    if len > 127 || slots_end > end || line.spill_mark() > cells.count {
        return false;
    }
    let header = line.header() & ((1u128 << len) - 1);
    if header.count_ones() != entries {
        return false;
    }
    let clear = (0..8).all(|i| line.0[i] & span(i, slots_end, end) == 0);
    let slots_ok =
        (0..entries).all(|i| slot_is_valid(line.bits(len + i * w.slot, w.slot) as u32, w));
    let (last, run) = line.last_cell(cells.count);
    let kept_ok = run == 0 || last < line.spill_from();
    clear && slots_ok && kept_ok && foreign_is_whole(f, b)
}

/// Whether the buddy's entries line `b` holds are of cells the buddy sends elsewhere.
fn foreign_is_whole(f: &LineFilter, b: u64) -> bool {
    let w = &f.widths;
    let line = f.line(b);
    if line.foreign() == 0 {
        return true;
    }
    let buddy = b ^ 1;
    if buddy >= f.line_count() {
        return false;
    }
    let cells = f.cells_of_line(buddy);
    let spill_from = f.line(buddy).spill_from();
    (0..line.foreign()).all(|i| {
        let e = line.foreign_entry(i, w);
        in_cells(e.cell, cells) && e.cell - cells.first >= spill_from && slot_is_valid(e.slot, w)
    })
}

impl LineFilter {
    /// Writes its fields (the layout is not served yet, so no RDB flag or SCANDUMP header
    /// carries them: the module's format for it comes with serving it).
    pub fn encode(&self, w: &mut impl FieldWriter) {
        encode(self, w);
    }

    /// Reads a filter of `items` items written by [`Self::encode`], every field checked; its
    /// lines are allocated as their pieces arrive, so a count the data does not back fails
    /// before it takes the memory.
    pub fn decode(r: &mut impl FieldReader, items: u64) -> Result<LineFilter, DecodeError> {
        decode(r, items)
    }

    /// The cells of line `b`'s bucket: which group and bucket it is, by the level, pass and
    /// next group (the inverse of `physical`).
    pub(crate) fn cells_of_line(&self, b: u64) -> Cells {
        let j = b & ((1 << self.level) - 1);
        if u64::from(self.pass) == G0 - 1 && j < self.next {
            return cells_of(b >> (self.level + 1), G0);
        }
        let g = G0 + u64::from(self.pass) + u64::from(j < self.next);
        cells_of((b >> self.level).min(g - 1), g)
    }
}
