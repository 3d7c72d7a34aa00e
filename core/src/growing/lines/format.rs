//! The one-line filter's saved form and the checks a decoded one must pass before any of its
//! lines is used: every line as inserts and growth steps leave one, every overflow entry where
//! a lookup would look for it. Both formats carry the same **pieces**: the RDB value's
//! strings (after the envelope's items and flag `LINES`, [`crate::rdb`]) and SCANDUMP's data
//! steps ([`super::scandump`]), so one decoder checks them.
//!
//! ```text
//! unsigned  seed
//! double    error
//! unsigned  capacity       the starting size it was created with
//! unsigned  remainder bits, entries a line, level, pass, next group
//! unsigned  pieces
//! string*   the pieces, in order of line
//! ```
//! A piece, little-endian: `u32 lines`, `u32 entries`, the lines (64 bytes each, little-endian
//! words), then the overflow entries of those lines (16 bytes each: `u64 line`, `u32 cell`, `u32 slot`, in
//! order of line, cell and slot). A piece starts at an even line and holds whole pairs of
//! buddies (but for a last line without one), so each is checked on its own: a line's
//! entries may be in its buddy and the overflow, never in another piece.
//! The widths are stored, not derived from the rate, so a later build that sizes new filters
//! otherwise still reads this one; the line count follows from the level, pass and next group.

use crate::codec::{machine_memory, DecodeError, FieldReader, FieldWriter, CHUNK_BYTES};
use crate::growing::lines::filter::{cells_of, max_level, Cells, LineFilter};
use crate::growing::lines::line::{span, Bucket, Entry, Widths, CELL_BITS, G0};
use crate::growing::lines::overflow::Overflow;
use crate::lines::Line;

/// Bytes of a saved overflow entry.
const ENTRY_BYTES: usize = 16;

/// Bytes of a piece before its lines: their count and its overflow entries'.
const PIECE_HEAD: usize = 8;

/// A filter's stored parameters, as read (the RDB value's fields, SCANDUMP's header).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parameters {
    pub(crate) items: u64,
    pub(crate) seed: u64,
    pub(crate) error: f64,
    pub(crate) capacity: u64,
    pub(crate) rem: u64,
    pub(crate) load: u64,
    pub(crate) level: u64,
    pub(crate) pass: u64,
    pub(crate) next: u64,
}

impl Parameters {
    /// A filter's own.
    pub(crate) fn of(f: &LineFilter) -> Self {
        Parameters {
            items: f.items,
            seed: f.seed,
            error: f.error,
            capacity: f.capacity,
            rem: f.widths.rem.into(),
            load: f.widths.load.into(),
            level: f.level.into(),
            pass: f.pass.into(),
            next: f.next,
        }
    }
}

/// A filter with these parameters and no line yet (its pieces come next), or the check that
/// failed.
pub(crate) fn empty(p: &Parameters) -> Result<LineFilter, DecodeError> {
    let bad = DecodeError::GrowingParameters;
    let narrow = |v: u64, lo: u64, hi: u64| (lo..=hi).contains(&v).then_some(v as u32);
    let rem = narrow(p.rem, 7, 31).ok_or(bad)?;
    let widths = Widths {
        rem,
        slot: rem + 1,
        load: narrow(p.load, 1, 47).ok_or(bad)?,
    };
    let level = narrow(p.level, 0, max_level(&widths).into()).ok_or(bad)?;
    let pass = narrow(p.pass, 0, G0 - 1).ok_or(bad)?;
    if !(p.error > 0.0 && p.error < 1.0 && p.next < 1 << level) {
        return Err(bad);
    }
    let lines = ((G0 + u64::from(pass)) << level) + p.next;
    if p.items > u64::from(widths.load) * lines {
        return Err(bad);
    }
    if machine_memory().is_some_and(|m| lines.saturating_mul(64) > m) {
        return Err(DecodeError::MachineMemory);
    }
    Ok(LineFilter {
        seed: p.seed,
        error: p.error,
        capacity: p.capacity,
        widths,
        level: level as u8,
        pass: pass as u8,
        next: p.next,
        items: p.items,
        segments: Vec::new(),
        overflow: Overflow::new(&widths),
    })
}

/// The piece of the lines from `first`: whole pairs while they fit in `max_bytes` (at least
/// one), and the line after its last.
pub(crate) fn piece(f: &LineFilter, first: u64, max_bytes: usize) -> (Vec<u8>, u64) {
    let lines = f.line_count();
    let mut out = vec![0; PIECE_HEAD];
    let (mut entries, mut pair) = (Vec::new(), Vec::new());
    let mut next = first;
    while next < lines {
        let end = (next + 2).min(lines);
        pair.clear();
        for b in (next..end).filter(|&b| f.line(b).mapped()) {
            let from = pair.len();
            f.overflow
                .collect(b, &mut pair)
                .expect("a piece's buffer grows");
            let line_entries = pair[from..].iter().map(|&e| (b, e)).collect::<Vec<_>>();
            entries.extend(line_entries);
        }
        let size = out.len() + entries.len() * ENTRY_BYTES + (end - next) as usize * 64;
        if next > first && size > max_bytes {
            entries.truncate(entries.len() - pair.len());
            break;
        }
        for b in next..end {
            out.extend(f.line(b).0.iter().flat_map(|word| word.to_le_bytes()));
        }
        next = end;
    }
    out[..4].copy_from_slice(&((next - first) as u32).to_le_bytes());
    out[4..PIECE_HEAD].copy_from_slice(&(entries.len() as u32).to_le_bytes());
    for (b, e) in entries {
        out.extend(b.to_le_bytes());
        out.extend(e.cell.to_le_bytes());
        out.extend(e.slot.to_le_bytes());
    }
    (out, next)
}

/// A piece's lines and overflow entries, read but not yet checked against a filter.
#[derive(Debug)]
pub(crate) struct Piece {
    lines: Vec<Line>,
    entries: Vec<(u64, Entry)>,
}

impl Piece {
    /// Lines it holds.
    pub(crate) fn lines(&self) -> u64 {
        self.lines.len() as u64
    }
}

/// Reads a piece's fields: at least one line, whole records, entries in order.
pub(crate) fn decode_piece(data: &[u8]) -> Result<Piece, DecodeError> {
    let bad = DecodeError::GrowingLine;
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let half = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let (head, rest) = data.split_first_chunk::<PIECE_HEAD>().ok_or(bad)?;
    let (count, entry_count) = (half(&head[..4]) as u64, half(&head[4..]) as u64);
    let whole = count * 64 + entry_count * ENTRY_BYTES as u64 == rest.len() as u64;
    if count == 0 || !whole {
        return Err(bad);
    }
    let (lines, entries) = rest.split_at(count as usize * 64);
    let lines = lines
        .chunks_exact(64)
        .map(|l| {
            let mut line = Line::default();
            for (w, b) in line.0.iter_mut().zip(l.chunks_exact(8)) {
                *w = word(b);
            }
            line
        })
        .collect();
    let entries: Vec<(u64, Entry)> = entries
        .chunks_exact(ENTRY_BYTES)
        .map(|r| {
            let e = Entry {
                cell: half(&r[8..12]),
                slot: half(&r[12..]),
            };
            (word(&r[..8]), e)
        })
        .collect();
    let key = |&(b, e): &(u64, Entry)| (b, e.cell, e.slot);
    if !entries.windows(2).all(|p| key(&p[0]) <= key(&p[1])) {
        return Err(bad);
    }
    Ok(Piece { lines, entries })
}

/// Puts a piece whose first line is `first` in: its lines replace those there (and their
/// overflow entries), once every line and entry passed its checks; on a refusal nothing that
/// the filter answers changed. Returns the line after its last.
pub(crate) fn install(f: &mut LineFilter, first: u64, piece: Piece) -> Result<u64, DecodeError> {
    let bad = DecodeError::GrowingLine;
    let lines = f.line_count();
    let end = first.checked_add(piece.lines()).ok_or(bad)?;
    if !first.is_multiple_of(2) || end > lines || (!end.is_multiple_of(2) && end != lines) {
        return Err(bad);
    }
    let line = |b: u64| &piece.lines[(b - first) as usize];
    let buddy = |b: u64| (b ^ 1 < lines).then(|| line(b ^ 1));
    if !(first..end).all(|b| line_is_whole(f, b, line(b), buddy(b))) {
        return Err(bad);
    }
    let entry_fits = |&(b, e): &(u64, Entry)| {
        (first..end).contains(&b)
            && line(b).mapped()
            && in_cells(e.cell, f.cells_of_line(b))
            && e.cell - f.cells_of_line(b).first >= line(b).spill_from()
            && slot_is_valid(e.slot, &f.widths)
    };
    if !piece.entries.iter().all(entry_fits) {
        return Err(bad);
    }
    f.reserve_lines(end).map_err(|_| DecodeError::OutOfMemory)?;
    // Room for every entry before any is put in: per run, the entries are in order of line.
    let runs: Vec<(u64, usize)> = piece
        .entries
        .chunk_by(|a, b| f.overflow.run_of(a.0) == f.overflow.run_of(b.0))
        .map(|run| (run[0].0, run.len()))
        .collect();
    for (b, count) in runs {
        f.overflow
            .reserve(b, count)
            .map_err(|_| DecodeError::OutOfMemory)?;
    }
    for b in first..end {
        if f.line(b).mapped() {
            f.overflow.remove(b);
        }
        *f.line_mut(b) = *line(b);
    }
    for &(b, e) in &piece.entries {
        f.overflow.push(b, e);
    }
    Ok(end)
}

/// Writes a filter's fields ([`LineFilter::encode`]).
fn encode(f: &LineFilter, w: &mut impl FieldWriter) {
    let p = Parameters::of(f);
    w.unsigned(p.seed);
    w.double(p.error);
    for field in [p.capacity, p.rem, p.load, p.level, p.pass, p.next] {
        w.unsigned(field);
    }
    let mut first = 0;
    while first < f.line_count() {
        let (bytes, next) = piece(f, first, CHUNK_BYTES);
        w.bytes(&bytes);
        first = next;
    }
}

/// Reads a filter of `items` items ([`LineFilter::decode`]): pieces until its lines are read.
fn decode(r: &mut impl FieldReader, items: u64) -> Result<LineFilter, DecodeError> {
    let (seed, error) = (r.unsigned()?, r.double()?);
    let p = Parameters {
        items,
        seed,
        error,
        capacity: r.unsigned()?,
        rem: r.unsigned()?,
        load: r.unsigned()?,
        level: r.unsigned()?,
        pass: r.unsigned()?,
        next: r.unsigned()?,
    };
    let mut f = empty(&p)?;
    let mut read = 0;
    while read < f.line_count() {
        let data = r.bytes(CHUNK_BYTES as u64 * 2)?;
        read = install(&mut f, read, decode_piece(&data)?)?;
    }
    Ok(f)
}

fn in_cells(cell: u32, cells: Cells) -> bool {
    (cells.first..cells.first + cells.count).contains(&cell) && cell < 1 << CELL_BITS
}

/// A slot with its marker among its bits.
fn slot_is_valid(slot: u32, w: &Widths) -> bool {
    slot != 0 && slot.trailing_zeros() <= w.rem && u64::from(slot) >> w.slot == 0
}

/// Whether `line`, to be line `b` beside `buddy`, is as inserts and growth steps leave one:
/// its header's ones are its entry count, its header and slots end before its buddy's entries
/// with the bits between clear, every slot has its marker, none of its entries is of a cell
/// it sends elsewhere (a shed would move that mark up past cells whose entries are elsewhere:
/// found by the fuzz target), and the buddy's entries it holds are of cells the buddy sends
/// elsewhere.
fn line_is_whole(f: &LineFilter, b: u64, line: &Line, buddy: Option<&Line>) -> bool {
    let w = &f.widths;
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
    clear && slots_ok && kept_ok && foreign_is_whole(f, b, line, buddy)
}

/// Whether the buddy's entries `line` (line `b`) holds are of cells the buddy sends
/// elsewhere.
fn foreign_is_whole(f: &LineFilter, b: u64, line: &Line, buddy: Option<&Line>) -> bool {
    let w = &f.widths;
    if line.foreign() == 0 {
        return true;
    }
    let Some(buddy) = buddy else {
        return false;
    };
    let cells = f.cells_of_line(b ^ 1);
    let spill_from = buddy.spill_from();
    (0..line.foreign()).all(|i| {
        let e = line.foreign_entry(i, w);
        in_cells(e.cell, cells) && e.cell - cells.first >= spill_from && slot_is_valid(e.slot, w)
    })
}

impl LineFilter {
    /// Writes its fields (the RDB value's, after the envelope's items and flags).
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
