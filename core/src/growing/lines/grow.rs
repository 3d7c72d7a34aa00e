//! The one-line filter's writes: an entry's insert, a full line's rebuild (its last cells sent
//! to its buddy or the overflow), and a growth step (a group grown by a bucket, or in a level's
//! last pass written as the next level's two groups). A growth step is staged ([`Step`]): the
//! lines it changes are copied and changed there, and written back only once the overflow has
//! room for what it sends there, so a refused allocation changes nothing.

use crate::growing::bits::Select;
use crate::growing::lines::filter::{cells_of, max_level, physical, Cells, LineFilter};
use crate::growing::lines::line::{
    put_bits, select0, span, Bucket, Entry, Widths, CELL_BITS, FOREIGN_END, G0,
};
use crate::lines::Line;
use crate::memory::OutOfMemory;
use crate::outcome::FilterError;

/// Lines a growth step may change: a group's `2 * G0` lines and their buddies.
const STAGED: usize = 4 * G0 as usize;

/// A write's buffers, kept between writes ([`SCRATCH`]).
#[derive(Debug, Default)]
struct Scratch {
    /// A growth step's entries.
    entries: Vec<Entry>,
    /// Each target line's.
    targets: [Vec<Entry>; 2 * G0 as usize],
    /// Those a growth step sends to the overflow.
    spills: Vec<(u64, Entry)>,
    /// The slots a full line sheds.
    shed: Vec<u32>,
}

thread_local! {
    /// The writes' buffers, one set for the thread that writes (the server's main thread), not
    /// one per filter: kept in each filter, they were some 5 KB of a small filter's memory (84.6
    /// bits an item at 800 items, against 19.6 for the chunk layout).
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// Pushes onto a buffer, or the allocator's refusal (nothing else changed yet).
fn push<T>(v: &mut Vec<T>, x: T) -> Result<(), OutOfMemory> {
    v.try_reserve(1).map_err(|_| OutOfMemory {
        bytes: std::mem::size_of::<T>() as u64,
    })?;
    v.push(x);
    Ok(())
}

/// A staged write: the filter as it stands and the writes so far.
struct Step<'f> {
    filter: &'f LineFilter,
    widths: Widths,
    /// Lines in use once the step is written.
    lines: u64,
    writes: Writes,
}

/// A step's writes: the lines changed (their numbers and contents apart, as a line's
/// alignment would pad each pair to 128 bytes), the lines whose overflow entries were taken,
/// and the entries sent to the overflow.
struct Writes {
    at: [u64; STAGED],
    lines: [Line; STAGED],
    staged: usize,
    cleared: [u64; 2 * G0 as usize],
    cleared_len: usize,
    spills: Vec<(u64, Entry)>,
}

impl<'f> Step<'f> {
    fn new(filter: &'f LineFilter, lines: u64, spills: Vec<(u64, Entry)>) -> Self {
        Step {
            filter,
            widths: filter.widths,
            lines,
            writes: Writes {
                at: [0; STAGED],
                lines: [Line::default(); STAGED],
                staged: 0,
                cleared: [0; 2 * G0 as usize],
                cleared_len: 0,
                spills,
            },
        }
    }

    fn line(&self, b: u64) -> Line {
        let w = &self.writes;
        match w.at[..w.staged].iter().position(|&at| at == b) {
            Some(i) => w.lines[i],
            None if b < self.filter.line_count() => *self.filter.line(b),
            None => Line::default(),
        }
    }

    fn set(&mut self, b: u64, line: Line) {
        let w = &mut self.writes;
        let i = w.at[..w.staged]
            .iter()
            .position(|&at| at == b)
            .unwrap_or_else(|| {
                w.staged += 1;
                w.staged - 1
            });
        (w.at[i], w.lines[i]) = (b, line);
    }

    /// An entry of a spilled cell of line `b`: into its buddy (the other line of its 128-byte
    /// pair) when that has room, else to the overflow.
    fn put_elsewhere(&mut self, b: u64, e: Entry) -> Result<(), OutOfMemory> {
        let w = self.widths;
        let buddy = b ^ 1;
        if buddy < self.lines {
            let mut other = self.line(buddy);
            if other.takes_foreign(&w) {
                other.push_foreign(e, &w);
                self.set(buddy, other);
                return Ok(());
            }
        }
        let mut line = self.line(b);
        line.set_trailer(line.entries(), line.foreign(), line.spill_mark(), true);
        self.set(b, line);
        push(&mut self.writes.spills, (b, e))
    }

    /// Writes line `b`'s own part whole (its buddy's entries kept) with `entries`: sorted by
    /// cell, as many whole cells as fit, the entries of the cells after sent elsewhere.
    fn rebuild(
        &mut self,
        b: u64,
        cells: Cells,
        entries: &mut Vec<Entry>,
    ) -> Result<(), OutOfMemory> {
        let w = self.widths;
        // Entries arrive mostly in cell order (drained bucket by bucket), so a stable sort by
        // cell takes the runs (sorting by cell and slot cost 50-70 ns an add). An entry kept in
        // two buckets (its known prefix crossed a boundary) comes back twice when its group
        // grows again and both land here: one is kept, as identical entries answer alike
        // (without this, copies piled up: 35,340 entries in the overflow at 2M, not 21,768).
        entries.sort_by_key(|e| e.cell);
        let mut kept = 0;
        let mut run = 0;
        for i in 0..entries.len() {
            let e = entries[i];
            if kept > 0 && entries[kept - 1].cell != e.cell {
                run = kept;
            }
            if !entries[run..kept].iter().any(|x| x.slot == e.slot) {
                entries[kept] = e;
                kept += 1;
            }
        }
        entries.truncate(kept);
        let mut line = self.line(b);
        let room = ((line.own_end(&w) - cells.count) / (w.slot + 1)) as usize;
        let (fit, spill_mark) = match entries.get(room) {
            None => (entries.len(), 0),
            Some(first_out) => {
                let from = first_out.cell;
                let fit = entries.partition_point(|e| e.cell < from);
                (fit, from - cells.first + 1)
            }
        };
        let end = line.own_end(&w);
        for (i, word) in line.0.iter_mut().enumerate() {
            *word &= span(i, end, 512);
        }
        let slots_at = cells.count + fit as u32;
        for (i, e) in entries[..fit].iter().enumerate() {
            let one = i as u32 + e.cell - cells.first;
            line.0[(one / 64) as usize] |= 1 << (one % 64);
            put_bits(&mut line.0, slots_at + i as u32 * w.slot, u64::from(e.slot));
        }
        line.set_trailer(fit as u32, line.foreign(), spill_mark, line.mapped());
        self.set(b, line);
        entries[fit..]
            .iter()
            .try_for_each(|&e| self.put_elsewhere(b, e))
    }

    /// Takes every entry of line `b` (bucket cells `cells`) wherever it is, leaving the line
    /// empty but for its buddy's entries.
    fn drain(&mut self, b: u64, cells: Cells, out: &mut Vec<Entry>) -> Result<(), OutOfMemory> {
        let w = self.widths;
        let line = self.line(b);
        out.try_reserve(64)
            .map_err(|_| OutOfMemory { bytes: 512 })?;
        own_entries(&line, cells, &w, out);
        if line.spill_mark() != 0 && b ^ 1 < self.lines {
            let mut buddy = self.line(b ^ 1);
            for i in 0..buddy.foreign() {
                push(out, buddy.foreign_entry(i, &w))?;
            }
            let end = buddy.own_end(&w);
            for (i, word) in buddy.0.iter_mut().enumerate() {
                *word &= !span(i, end, FOREIGN_END);
            }
            buddy.set_trailer(buddy.entries(), 0, buddy.spill_mark(), buddy.mapped());
            self.set(b ^ 1, buddy);
        }
        if line.mapped() {
            self.filter.overflow.collect(b, out)?;
            self.writes.cleared[self.writes.cleared_len] = b;
            self.writes.cleared_len += 1;
        }
        let mut fresh = Line::default();
        for i in 0..line.foreign() {
            fresh.push_foreign(line.foreign_entry(i, &w), &w);
        }
        self.set(b, fresh);
        Ok(())
    }
}

impl LineFilter {
    /// Inserts an absent item's entry into line `b` of bucket cells `cells`; a full line is
    /// rebuilt (staged), which the allocator may refuse (nothing changes then).
    pub(crate) fn insert<S: Select>(
        &mut self,
        b: u64,
        cells: Cells,
        e: Entry,
    ) -> Result<(), FilterError> {
        let w = self.widths;
        let line = *self.line(b);
        let local = e.cell - cells.first;
        let entries = line.entries();
        let full = cells.count + (entries + 1) * (w.slot + 1) > line.own_end(&w);
        if local >= line.spill_from() {
            return self.put_elsewhere(b, e);
        }
        if full {
            return self.make_room::<S>(b, cells, e);
        }
        let start = select0::<S>(line.header() << 1, local);
        let index = start - local;
        let slots_at = cells.count + entries + 1;
        let l = self.line_mut(b);
        l.insert_entry(start, slots_at + index * w.slot, u64::from(e.slot), &w);
        l.set_trailer(
            entries + 1,
            line.foreign(),
            line.spill_mark(),
            line.mapped(),
        );
        Ok(())
    }

    /// An entry for a full line `b`: its last occupied cell's entries go elsewhere (or the
    /// entry itself, when its cell is past them), so only that cell's lookups read a second
    /// place. The line's other entries stay where they are: a rebuild of the whole line
    /// (sorted, written whole, staged) made adds 1.05-1.15 times as slow at 2M items (3
    /// alternating pairs), with the same answers.
    fn make_room<S: Select>(&mut self, b: u64, cells: Cells, e: Entry) -> Result<(), FilterError> {
        let w = self.widths;
        let local = e.cell - cells.first;
        let (last, run) = self.line(b).last_cell(cells.count);
        if run == 0 || local > last {
            self.overflow.reserve(b, 1)?;
            let line = self.line_mut(b);
            line.set_trailer(line.entries(), line.foreign(), local + 1, line.mapped());
            return self.put_elsewhere(b, e);
        }
        // Room for every entry it sends to the overflow first: a refusal changes nothing.
        self.overflow.reserve(b, run as usize)?;
        let mut scratch = SCRATCH.take();
        let shed = &mut scratch.shed;
        shed.clear();
        if shed.try_reserve(run as usize).is_err() {
            SCRATCH.set(scratch);
            return Err(FilterError::OutOfMemory {
                needed: 4 * u64::from(run),
            });
        }
        self.line_mut(b).shed_last_cell(cells.count, &w, shed);
        let cell = cells.first + last;
        let sent = shed
            .iter()
            .try_for_each(|&slot| self.put_elsewhere(b, Entry { cell, slot }));
        SCRATCH.set(scratch);
        sent?;
        self.insert::<S>(b, cells, e)
    }

    /// An entry of a cell line `b` already sends elsewhere: into its buddy when that has room,
    /// else into the overflow, room made there first (a refusal changes nothing).
    fn put_elsewhere(&mut self, b: u64, e: Entry) -> Result<(), FilterError> {
        let w = self.widths;
        let buddy = b ^ 1;
        if buddy < self.line_count() && self.line(buddy).takes_foreign(&w) {
            self.line_mut(buddy).push_foreign(e, &w);
            return Ok(());
        }
        self.overflow.reserve(b, 1)?;
        let line = self.line_mut(b);
        line.set_trailer(line.entries(), line.foreign(), line.spill_mark(), true);
        self.overflow.push(b, e);
        Ok(())
    }

    /// Grows the next group by a bucket: its entries drained, placed, and each line written
    /// whole (an entry at a time, each insert moving the line's bits, took 356 against 233 ns
    /// an add at 2M in the prototype). On a refusal (the limit, the allocator, the hash's
    /// bits) nothing changed.
    pub(crate) fn grow(&mut self, max_bytes: u64) -> Result<(), FilterError> {
        let last = u64::from(self.pass) == G0 - 1;
        if last && u32::from(self.level) + 1 > max_level(&self.widths) {
            return Err(FilterError::CannotGrow);
        }
        let needed = self.counted_bytes() + 64;
        if needed > max_bytes {
            return Err(FilterError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        let lines = self.line_count() + 1;
        self.reserve_lines(lines)?;
        let mut scratch = SCRATCH.take();
        let mut step = Step::new(self, lines, std::mem::take(&mut scratch.spills));
        let staged = self.stage_growth(&mut step, &mut scratch.entries, &mut scratch.targets);
        let writes = staged.map(|()| step.into_writes());
        let committed = self.commit(writes, &mut scratch.spills);
        SCRATCH.set(scratch);
        committed?;
        self.next += 1;
        if self.next == 1 << self.level {
            self.next = 0;
            self.pass += 1;
            if u64::from(self.pass) == G0 {
                self.pass = 0;
                self.level += 1;
            }
        }
        Ok(())
    }

    /// A growth step's writes, staged in `step`.
    fn stage_growth(
        &self,
        step: &mut Step<'_>,
        entries: &mut Vec<Entry>,
        targets: &mut [Vec<Entry>; 2 * G0 as usize],
    ) -> Result<(), OutOfMemory> {
        let last = u64::from(self.pass) == G0 - 1;
        let j = self.next;
        let g = G0 + u64::from(self.pass);
        entries.clear();
        for k in 0..g {
            step.drain(physical(j, k, self.level), cells_of(k, g), entries)?;
        }
        targets.iter_mut().for_each(Vec::clear);
        let w = self.widths;
        for &e in entries.iter() {
            if !last {
                let (lo, hi) = e.range(&w);
                for k in buckets_of(lo, hi, g + 1) {
                    push(&mut targets[k as usize], e)?;
                }
                continue;
            }
            // The next level: the fraction's first bit picks the group, the cell takes the
            // first bit the entry kept (both halves for a void entry).
            let top = e.range(&w).0 >> 63;
            let cell_hi = (e.cell << 1) & ((1 << CELL_BITS) - 1);
            let (first, second) = if e.kept(&w) == 0 {
                ((cell_hi, e.slot), Some((cell_hi | 1, e.slot)))
            } else {
                let bit = (e.slot >> (w.slot - 1)) & 1;
                ((cell_hi | bit, (e.slot << 1) & w.slot_mask() as u32), None)
            };
            for (cell, slot) in std::iter::once(first).chain(second) {
                let aged = Entry { cell, slot };
                let (lo, hi) = aged.range(&w);
                for k in buckets_of(lo, hi, G0) {
                    push(&mut targets[(top * G0 + k) as usize], aged)?;
                }
            }
        }
        for (i, t) in targets.iter_mut().enumerate() {
            let i = i as u64;
            if !last && i <= g {
                step.rebuild(physical(j, i, self.level), cells_of(i, g + 1), t)?;
            } else if last {
                let (top, k) = (i / G0, i % G0);
                let line = physical(j + (top << self.level), k, self.level + 1);
                step.rebuild(line, cells_of(k, G0), t)?;
            }
        }
        Ok(())
    }

    /// Writes a staged step: room in the overflow for what it sends there first (a refusal
    /// changes nothing), then its lines, then the overflow's changes; its spills' buffer goes
    /// back to `spills`.
    fn commit(
        &mut self,
        writes: Result<Writes, OutOfMemory>,
        spills: &mut Vec<(u64, Entry)>,
    ) -> Result<(), FilterError> {
        let mut writes = writes?;
        // Each run's table once, for all the step sends it (a step's lines lie in at most
        // `2 * G0` runs).
        let mut done = [u64::MAX; 2 * G0 as usize];
        let overflow = &mut self.overflow;
        let reserved = writes.spills.iter().try_for_each(|&(b, _)| {
            let run = overflow.run_of(b);
            if done.contains(&run) {
                return Ok(());
            }
            let more = writes
                .spills
                .iter()
                .filter(|(s, _)| overflow.run_of(*s) == run);
            let more = more.count();
            if let Some(free) = done.iter_mut().find(|d| **d == u64::MAX) {
                *free = run;
            }
            overflow.reserve(b, more)
        });
        if let Err(e) = reserved {
            *spills = writes.spills;
            return Err(e.into());
        }
        for i in 0..writes.staged {
            *self.line_mut(writes.at[i]) = writes.lines[i];
        }
        for &b in &writes.cleared[..writes.cleared_len] {
            self.overflow.remove(b);
        }
        for &(b, e) in &writes.spills {
            self.overflow.push(b, e);
        }
        for &b in &writes.cleared[..writes.cleared_len] {
            self.overflow.shrink(b);
        }
        writes.spills.clear();
        *spills = writes.spills;
        Ok(())
    }
}

impl Step<'_> {
    fn into_writes(self) -> Writes {
        self.writes
    }
}

/// The entries a line holds itself, with their group cells, in header order; `out` has room.
pub(crate) fn own_entries(line: &Line, cells: Cells, w: &Widths, out: &mut Vec<Entry>) {
    let n = line.entries();
    let slots_at = cells.count + n;
    // The header's ones, lowest first: the `i`-th one at bit `p` is an entry of local cell
    // `p - i` (a loop over the bits with a branch on each: 325 against 243-250 ns an add at 2M).
    let mut ones = line.header() & ((1u128 << (cells.count + n)) - 1);
    for i in 0..n {
        let p = ones.trailing_zeros();
        ones &= ones.wrapping_sub(1);
        out.push(Entry {
            cell: cells.first + p - i,
            slot: line.bits(slots_at + i * w.slot, w.slot) as u32,
        });
    }
}

/// The buckets of a group of `g` that a fraction's range `[lo, hi]` falls in.
fn buckets_of(lo: u64, hi: u64, g: u64) -> std::ops::RangeInclusive<u64> {
    let bucket = |f: u64| ((u128::from(f) * u128::from(g)) >> 64) as u64;
    bucket(lo)..=bucket(hi)
}
