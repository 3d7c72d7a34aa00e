//! The one-line growing filter's model ([`LineFilter`]): where an item's line is, its lookups
//! in batches, its adds. Growth steps are in [`super::grow`].

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::defrag::Defrag;
use crate::growing::bits::{run_batch, Batch, Select};
use crate::growing::lines::line::{select0, Bucket, Entry, Widths, CELL_BITS, G0, MAX_REM};
use crate::growing::lines::overflow::Overflow;
use crate::hints;
use crate::lines::{self, Line};
use crate::memory::{allocated, copied_vec, Block};
use crate::outcome::{AddOutcome, FilterError};

/// Lines of a full segment: 2 MiB. The last grows a size class at a time until it is full, so
/// a small filter's memory follows its lines. Larger segments put more lines on huge pages (a
/// 2 MiB page is huge only where it lies whole inside a segment, whose start is not aligned
/// to one): in the server, BF.BULKEXISTS at 26.2M items read 0.48-0.54 of a reserved filter's
/// speed with 2 MiB, 0.58-0.64 with 4 MiB, 0.68-0.73 with 8 MiB, but the last segment's size
/// classes left up to a quarter of it unused (8 MiB: 21.4 bits an item at 2M, 1.67 times a
/// reserved filter's memory; 4 MiB: 1.66 times at 1.2M), small segments first with large
/// ones after cost lookups at 2M 3% in the addressing alone (0.83-0.85 against 0.85-0.87),
/// and a filter's small segments copied into 8 MiB ones past 16 MiB (0.68-0.73 at 26.2M, the
/// same memory, 1.5% at 2M) made adds of 1,000 items take 12-15 ms (four in a fill to 12M,
/// against 4.9 ms at most): a fresh segment's huge pages are found by compaction on the fault.
pub(crate) const SEGMENT_LOG: u32 = 15;
const SEGMENT: u64 = 1 << SEGMENT_LOG;

/// The highest level a filter starts at: 2^18 lines (16 MiB, about 7.6M items at 1%), so no
/// `BF.RESERVE` of a billion items takes their memory at once (past that, it grows).
pub(crate) const MAX_START_LEVEL: u32 = 16;

/// Items a batch places (and requests the lines of) before it reads the first.
const BLOCK: usize = 32;

/// A growing filter whose lookup reads one 64-byte line, found by arithmetic (see the
/// folder's documentation).
#[derive(Debug)]
pub struct LineFilter {
    pub(crate) seed: u64,
    pub(crate) error: f64,
    pub(crate) capacity: u64,
    pub(crate) widths: Widths,
    /// Groups are `2^level`; those before `next` have `G0 + pass + 1` buckets, the others
    /// `G0 + pass` (in the last pass, those before `next` are the next level's).
    pub(crate) level: u8,
    pub(crate) pass: u8,
    pub(crate) next: u64,
    pub(crate) items: u64,
    /// The lines, in segments of `2^SEGMENT_LOG`; only the last may be shorter.
    pub(crate) segments: Vec<Block<Line>>,
    pub(crate) overflow: Overflow,
}

/// A copy (COPY of a key) whose blocks the allocator may refuse
/// ([`crate::memory::OutOfMemory::refuse_copy`]).
impl Clone for LineFilter {
    fn clone(&self) -> Self {
        let mut segments = copied_vec(&[], self.segments.len());
        for segment in &self.segments {
            let mut copy = lines::zeroed(segment.len()).unwrap_or_else(|r| r.refuse_copy());
            hints::advise_huge_pages_from(&mut copy, 0);
            copy.copy_from_slice(segment);
            segments.push(copy);
        }
        LineFilter {
            segments,
            overflow: self.overflow.clone(),
            ..*self
        }
    }
}

/// Filters are equal when they save the same fields (the overflow's table sizes aside).
impl PartialEq for LineFilter {
    fn eq(&self, other: &Self) -> bool {
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        self.encode(&mut mine);
        other.encode(&mut theirs);
        self.items == other.items && mine == theirs
    }
}

/// Where an item is looked for: its line, its bucket's cells, the item's cell and slot.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Place {
    pub(crate) line: u64,
    pub(crate) cells: Cells,
    pub(crate) cell: u32,
    pub(crate) slot: u32,
}

/// The cells a bucket spans: its first (the one holding its lower boundary) and how many (the
/// zeros its header holds: a bucket of a larger group has fewer, and room for more entries).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cells {
    pub(crate) first: u32,
    pub(crate) count: u32,
}

/// The cells of bucket `k` of a group of `g`, from a table: a division on every lookup's path
/// held the prototype at 0.67-0.70 of a reserved filter's speed at 2M (0.83 with the table).
#[inline(always)]
pub(crate) fn cells_of(k: u64, g: u64) -> Cells {
    const N: usize = 2 * G0 as usize;
    const TABLE: [[(u8, u8); N]; N + 1] = {
        let mut t = [[(0u8, 0u8); N]; N + 1];
        let mut g = 1;
        while g <= N {
            let mut k = 0;
            while k < g {
                let first = (k << CELL_BITS) / g;
                let end = ((k + 1) << CELL_BITS).div_ceil(g);
                t[g][k] = (first as u8, (end - first) as u8);
                k += 1;
            }
            g += 1;
        }
        t
    };
    let (first, count) = TABLE[g as usize][k as usize];
    Cells {
        first: u32::from(first),
        count: u32::from(count),
    }
}

/// Line of bucket `k` of group `j` at `level`: the lines only ever grow at the end, and a
/// group's `2 * G0` lines are the next level's groups `j` and `j + 2^level` without a move.
#[inline(always)]
pub(crate) fn physical(j: u64, k: u64, level: u8) -> u64 {
    j + (k << level)
}

impl LineFilter {
    /// An empty filter for `error` (None below what its widths hold) sized to hold about
    /// `capacity` items before it first grows, hashed under `seed`, within `max_bytes`.
    pub fn new(error: f64, capacity: u64, seed: u64, max_bytes: u64) -> Result<Self, FilterError> {
        let widths = Widths::for_rate(error).ok_or(FilterError::CannotGrow)?;
        // The most groups the capacity fills: the filter holds it, or about half of it more.
        let per_group = G0 * u64::from(widths.load);
        let level = (capacity / per_group).max(1).ilog2().min(MAX_START_LEVEL);
        let mut filter = LineFilter {
            seed,
            error,
            capacity,
            widths,
            // At most MAX_START_LEVEL.
            level: level as u8,
            pass: 0,
            next: 0,
            items: 0,
            segments: Vec::new(),
            overflow: Overflow::new(&widths),
        };
        let lines = G0 << level;
        let needed = lines * 64;
        if needed > max_bytes {
            return Err(FilterError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        filter.reserve_lines(lines)?;
        Ok(filter)
    }

    /// Items added.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The false-positive rate it was asked for.
    pub fn error(&self) -> f64 {
        self.error
    }

    /// The starting capacity it was created with.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Lines in use: a level's groups, each of its pass's buckets, and a bucket more for each
    /// group before the next to grow.
    #[inline(always)]
    pub fn line_count(&self) -> u64 {
        ((G0 + u64::from(self.pass)) << self.level) + self.next
    }

    /// Entries in the overflow (no line had room for them).
    pub fn overflow_entries(&self) -> u64 {
        self.overflow.entries()
    }

    #[inline(always)]
    pub(crate) fn line(&self, b: u64) -> &Line {
        &self.segments[(b >> SEGMENT_LOG) as usize][(b & (SEGMENT - 1)) as usize]
    }

    #[inline(always)]
    pub(crate) fn line_mut(&mut self, b: u64) -> &mut Line {
        &mut self.segments[(b >> SEGMENT_LOG) as usize][(b & (SEGMENT - 1)) as usize]
    }

    /// Makes room for `lines` lines in all (new ones zeroed): the last segment grows by a
    /// 32nd at least (an eighth left 2% of a 2M-item filter unused on a server whose allocator
    /// has no size classes: 1.49 times a reserved filter's memory, not 1.47), to the end of the
    /// allocator's size class (which it would round the
    /// block up to anyway: up to a quarter past 16 KiB), full segments follow. On a refusal
    /// nothing changed.
    pub(crate) fn reserve_lines(&mut self, lines: u64) -> Result<(), FilterError> {
        let room = |s: &Vec<Block<Line>>| {
            s.len().saturating_sub(1) as u64 * SEGMENT + s.last().map_or(0, |l| l.len() as u64)
        };
        while room(&self.segments) < lines {
            let last_full = self
                .segments
                .last()
                .is_none_or(|l| l.len() as u64 == SEGMENT);
            let full = self.segments.len().saturating_sub(usize::from(!last_full)) as u64;
            let last = if last_full {
                0
            } else {
                room(&self.segments) - full * SEGMENT
            };
            let wanted = (lines - full * SEGMENT)
                .max(last + last / 32 + 1)
                .min(SEGMENT);
            let wanted = (allocated(wanted as usize * 64) / 64).min(SEGMENT) as usize;
            let mut grown = lines::zeroed(wanted)?;
            hints::advise_huge_pages_from(&mut grown, 0);
            if last_full {
                // One more, not the doubling a Vec grows by: a small filter's table stays 16
                // bytes, not 64.
                self.segments
                    .try_reserve_exact(1)
                    .map_err(|_| FilterError::OutOfMemory {
                        needed: std::mem::size_of::<Block<Line>>() as u64,
                    })?;
                self.segments.push(grown);
            } else {
                let old = self.segments.last_mut().expect("a last segment");
                grown[..old.len()].copy_from_slice(old);
                *old = grown;
            }
        }
        Ok(())
    }

    /// Where a hash's item is looked for.
    #[inline(always)]
    pub(crate) fn place(&self, hash: u64) -> Place {
        // The group's address is the hash's first `level` bits, first bit lowest, so that the
        // last pass gives each group the next bit as its top address bit.
        let reversed = hash.reverse_bits();
        let j = reversed & ((1u64 << self.level) - 1);
        let rem = self.widths.rem;
        let slot_of = |f: u64| ((f >> (64 - CELL_BITS - rem)) as u32 & ((1 << rem) - 1)) << 1 | 1;
        if u64::from(self.pass) == G0 - 1 && j < self.next {
            // Already written as the next level's two groups of G0 buckets.
            let j = reversed & ((2u64 << self.level) - 1);
            let f = hash << (self.level + 1);
            let k = ((u128::from(f) * u128::from(G0)) >> 64) as u64;
            return Place {
                line: physical(j, k, self.level + 1),
                cells: cells_of(k, G0),
                cell: (f >> (64 - CELL_BITS)) as u32,
                slot: slot_of(f),
            };
        }
        let f = hash << self.level;
        let g = G0 + u64::from(self.pass) + u64::from(j < self.next);
        let k = ((u128::from(f) * u128::from(g)) >> 64) as u64;
        Place {
            line: physical(j, k, self.level),
            cells: cells_of(k, g),
            cell: (f >> (64 - CELL_BITS)) as u32,
            slot: slot_of(f),
        }
    }

    /// Whether an item of this place may have been added: its cell's slots in its line, then,
    /// for a cell the line sent elsewhere, its buddy's foreign entries and the overflow map.
    #[inline(always)]
    pub(crate) fn probe<S: Select>(&self, p: Place) -> bool {
        let w = &self.widths;
        let line = self.line(p.line);
        let local = p.cell.wrapping_sub(p.cells.first) & 0x7f;
        let header = line.header();
        // A zero put before the header stands for the cell before the first: the cell's run
        // starts after the `local`-th zero, with no branch for the first cell.
        let start = select0::<S>(header << 1, local);
        let count = (!(header >> (start & 127))).trailing_zeros();
        let first_entry = start.saturating_sub(local);
        // At most the line's last bit (a damaged line's lookup reads in the line).
        let at = (p.cells.count + line.entries() + first_entry * w.slot).min(511);
        // The slots a word holds compared at once, without a branch on the count (a cell
        // holds as many or fewer entries but for a lookup in 250 at 1%).
        let window = line.bits(at, 64);
        let per_window = 64 / w.slot;
        let mut hit = false;
        for i in 0..per_window.min(4) {
            let slot = (window >> (i * w.slot)) as u32 & w.slot_mask() as u32;
            hit |= (Entry { cell: 0, slot }).matches(p.slot) & (i < count);
        }
        if hit {
            return true;
        }
        let end = (first_entry + count).min(63);
        for e in first_entry + per_window.min(4)..end {
            let at = p.cells.count + line.entries() + e * w.slot;
            if at + w.slot > 512 {
                break;
            }
            let slot = line.bits(at, w.slot) as u32;
            if (Entry { cell: 0, slot }).matches(p.slot) {
                return true;
            }
        }
        if local < line.spill_from() {
            return false;
        }
        self.probe_elsewhere(p)
    }

    /// The rest of a lookup of a cell its line sent elsewhere: 0.5-1.2% of absent lookups.
    #[cold]
    fn probe_elsewhere(&self, p: Place) -> bool {
        let w = &self.widths;
        let buddy = p.line ^ 1;
        if buddy < self.line_count() {
            let buddy = self.line(buddy);
            let found = (0..buddy.foreign()).any(|i| {
                let e = buddy.foreign_entry(i, w);
                e.cell == p.cell && e.matches(p.slot)
            });
            if found {
                return true;
            }
        }
        self.line(p.line).mapped() && self.overflow.matches(p.line, p.cell, p.slot)
    }

    /// An item's hash.
    #[inline(always)]
    pub fn hash(&self, item: &[u8]) -> u64 {
        xxh3_64_with_seed(item, self.seed)
    }

    /// Whether the item may have been added.
    pub fn contains(&self, item: &[u8]) -> bool {
        let mut found = false;
        self.contains_many(std::iter::once(item), |present| found = present);
        found
    }

    /// Checks items in order, passing each answer on: in blocks of [`BLOCK`], every item of a
    /// block placed and its line requested before the first is read.
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        answer: impl FnMut(bool),
    ) {
        run_batch(Lookups {
            filter: self,
            items,
            answer,
        });
    }

    /// Adds an item: `Present` when it may be in already (nothing changes), else a new entry,
    /// after the growth step its count asks for. `max_bytes` is the per-filter limit.
    pub fn add(&mut self, item: &[u8], max_bytes: u64) -> Result<AddOutcome, FilterError> {
        let mut result = Ok(AddOutcome::Present);
        self.add_many(std::iter::once(item), max_bytes, |r| {
            result = r;
            true
        });
        result
    }

    /// Adds items in order, passing each outcome to `outcome`, which returns whether to go on;
    /// each item's line requested [`BLOCK`] / 2 adds before its own.
    pub fn add_many<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        max_bytes: u64,
        outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        run_batch(Adds {
            filter: self,
            items,
            max_bytes,
            outcome,
        });
    }

    /// Adds an item of this hash (see [`Self::add`]).
    #[inline(always)]
    fn add_hashed<S: Select>(
        &mut self,
        hash: u64,
        max_bytes: u64,
    ) -> Result<AddOutcome, FilterError> {
        let p = self.place(hash);
        if self.probe::<S>(p) {
            return Ok(AddOutcome::Present);
        }
        if self.items >= u64::from(self.widths.load) * self.line_count() {
            self.grow(max_bytes)?;
        }
        // Placed again: the growth step may have moved its bucket.
        let p = self.place(hash);
        let e = Entry {
            cell: p.cell,
            slot: p.slot,
        };
        self.insert::<S>(p.line, p.cells, e)?;
        self.items += 1;
        Ok(AddOutcome::Added)
    }

    /// Moves its blocks where the server's defrag allocator says: the segments' table and
    /// each segment, the overflow's tables.
    pub fn defrag(&mut self, d: &mut Defrag) {
        d.vec(&mut self.segments);
        for segment in &mut self.segments {
            d.block(segment);
        }
        self.overflow.defrag(d);
    }

    /// Bytes counted against the per-filter limit on every growth step, without a walk: the
    /// lines and the overflow's entries (its tables' slack aside).
    pub(crate) fn counted_bytes(&self) -> u64 {
        self.line_count() * 64 + self.overflow.entries() * 8
    }

    /// Bytes its allocations take from the allocator (not its own struct): the segments and
    /// their table, the overflow.
    pub fn heap_bytes(&self) -> u64 {
        let segments: u64 = self.segments.iter().map(|s| allocated(s.len() * 64)).sum();
        let table = allocated(self.segments.capacity() * std::mem::size_of::<Block<Line>>());
        segments + table + self.overflow.heap_bytes()
    }
}

/// The highest level a filter of these widths reaches: a place takes `level + 1` bits of the
/// hash for the group, then the cell's and the remainder's.
pub(crate) fn max_level(w: &Widths) -> u32 {
    64 - 1 - CELL_BITS - w.rem.min(MAX_REM)
}

/// A lookup batch, compiled for the CPU's select ([`run_batch`]).
struct Lookups<'f, I, A> {
    filter: &'f LineFilter,
    items: I,
    answer: A,
}

impl<'a, I: Iterator<Item = &'a [u8]>, A: FnMut(bool)> Batch for Lookups<'_, I, A> {
    type Output = ();

    /// A sliding window: each item placed and its line requested [`BLOCK`] items before it
    /// is read (blocks of 32, placed whole and then read: 0.842 against 0.877 of a reserved
    /// filter's speed at 13.1M).
    #[inline(always)]
    fn run<S: Select>(mut self) {
        let f = self.filter;
        let mut ring = [Place::default(); BLOCK];
        let mut n = 0;
        for item in self.items.by_ref().take(BLOCK) {
            ring[n] = f.place(f.hash(item));
            hints::prefetch_any(f.line(ring[n].line));
            n += 1;
        }
        let mut oldest = 0;
        for item in self.items {
            let p = f.place(f.hash(item));
            hints::prefetch_any(f.line(p.line));
            (self.answer)(f.probe::<S>(std::mem::replace(&mut ring[oldest], p)));
            oldest = (oldest + 1) % BLOCK;
        }
        for i in 0..n {
            (self.answer)(f.probe::<S>(ring[(oldest + i) % n.max(1)]));
        }
    }
}

/// An add batch, compiled for the CPU's select: each item hashed and its line requested
/// `BLOCK / 2` items ahead (placed again at its add, as a growth step between may move it).
struct Adds<'f, I, O> {
    filter: &'f mut LineFilter,
    items: I,
    max_bytes: u64,
    outcome: O,
}

impl<'a, I, O> Batch for Adds<'_, I, O>
where
    I: Iterator<Item = &'a [u8]>,
    O: FnMut(Result<AddOutcome, FilterError>) -> bool,
{
    type Output = ();

    #[inline(always)]
    fn run<S: Select>(mut self) {
        const AHEAD: usize = BLOCK / 2;
        let mut hashes = [0u64; AHEAD];
        loop {
            let mut n = 0;
            while n < AHEAD {
                let Some(item) = self.items.next() else { break };
                hashes[n] = self.filter.hash(item);
                let line = self.filter.place(hashes[n]).line;
                hints::prefetch_any(self.filter.line(line));
                n += 1;
            }
            if n == 0 {
                return;
            }
            for &hash in &hashes[..n] {
                if !(self.outcome)(self.filter.add_hashed::<S>(hash, self.max_bytes)) {
                    return;
                }
            }
        }
    }
}
