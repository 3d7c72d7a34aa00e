//! One bucket of the one-line layout: a 64-byte line holding a unary header of its cells'
//! entry counts, the entries' slots, up to [`MAX_FOREIGN`] entries its buddy sent it, and a
//! 17-bit trailer; and the widths a filter's rate gives its slots.

use crate::growing::bits::Select;
use crate::lines::Line;

/// Cells of a group: the first `CELL_BITS` bits of an item's fraction of its group.
pub(crate) const CELL_BITS: u32 = 8;

/// Buckets of a group at the start of a level: a level's passes grow each group by a bucket,
/// from `G0` to `2 * G0`, which the last pass writes as two groups of the next level. Groups
/// of 4 to 8, not 2 to 4: a group's buckets not yet grown at the end of a pass hold `(g + 1) /
/// g` of the mean load (1.25, not 1.5), and those are the lines that overflow
/// (docs/growing.md: 17.9 against 19.9 bits an item at 2M, the same share of lookups reading
/// past the line).
pub(crate) const G0: u64 = 4;

/// The most cells a bucket spans (one of a group of `G0`), for a line whose group is not at
/// hand: a buddy's room for a foreign entry is judged as if its header were this long.
pub(crate) const HEADER_CELLS: u32 = (1u32 << CELL_BITS).div_ceil(G0 as u32) + 1;

/// Where the line's own header and slots must end when it holds no foreign entry: the
/// trailer's 17 bits follow.
pub(crate) const FOREIGN_END: u32 = 495;

/// Foreign entries a line holds at most (3 bits of the trailer).
pub(crate) const MAX_FOREIGN: u32 = 7;

/// Bits of a line's own room the mean load fills: 87% (at 1%, 31 entries of 12 bits). At 81%
/// (29) a line overflowed half as often, but a 2M-item filter took 1.57 times a reserved
/// filter's memory on an allocator without size classes (Valkey 9.1's), 1.49-1.50 at 87%.
const LOAD_BITS: u32 = 372;

/// The rate an entry of `rem` bits gives, over `2^-rem` a compared entry, for a line of
/// `load` entries: the entries of a cell a lookup meets and their aging over 20 levels, as
/// measured (0.86% at 104.9M items with 10 bits and 29 a line, 0.304 a load; 0.064% at 2M
/// with 13 and 23), with 8% to spare (a tenth left 31 a line just over 1%).
const RATE_PER_LOAD: f64 = 0.33;

/// The most remainder bits a slot holds (slots of up to 32 bits: a 64-bit hash's level,
/// cell and remainder bits must fit it).
pub(crate) const MAX_REM: u32 = 31;

/// The least: a slot of 8 bits keeps the entries a line holds under 64 (its 6-bit count) and
/// its header under 128 bits.
const MIN_REM: u32 = 7;

/// A filter's widths, from its error rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Widths {
    /// Remainder bits an entry keeps when added.
    pub(crate) rem: u32,
    /// A slot: the remainder bits still kept, a one, then zeros for the bits given up.
    pub(crate) slot: u32,
    /// Mean entries a line: a group grows by a line every `load` adds a line.
    pub(crate) load: u32,
}

impl Widths {
    /// The widths holding `error`, or None below what [`MAX_REM`] holds (about 1e-9).
    pub(crate) fn for_rate(error: f64) -> Option<Widths> {
        (MIN_REM..=MAX_REM)
            .map(Widths::of)
            .find(|w| f64::from(w.load) * RATE_PER_LOAD * (-f64::from(w.rem)).exp2() <= error)
    }

    /// The widths of `rem` remainder bits.
    pub(crate) fn of(rem: u32) -> Widths {
        let slot = rem + 1;
        Widths {
            rem,
            slot,
            load: LOAD_BITS / (slot + 1),
        }
    }

    /// A slot's mask.
    #[inline(always)]
    pub(crate) fn slot_mask(&self) -> u64 {
        (1u64 << self.slot) - 1
    }

    /// Bits of a foreign entry: its cell and slot.
    pub(crate) fn foreign_bits(&self) -> u32 {
        CELL_BITS + self.slot
    }
}

/// An entry: its group cell and slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Entry {
    pub(crate) cell: u32,
    pub(crate) slot: u32,
}

impl Entry {
    /// Bits of the remainder still kept.
    #[inline(always)]
    pub(crate) fn kept(self, w: &Widths) -> u32 {
        w.rem - self.slot.trailing_zeros()
    }

    /// The fraction's known prefix as the range `[lo, hi]` of a 64-bit fraction.
    pub(crate) fn range(self, w: &Widths) -> (u64, u64) {
        let kept = self.kept(w);
        let bits = CELL_BITS + kept;
        let prefix = u64::from(self.cell) << kept | u64::from(self.slot) >> (w.slot - kept);
        let lo = prefix << (64 - bits);
        (lo, lo | (u64::MAX >> bits))
    }

    /// Whether the entry answers for an item of slot `slot` (all its kept bits equal): the
    /// two differ in no bit above the entry's marker, its lowest one. Without a count of
    /// trailing zeros or a shift by one, four compares vectorise on any x86-64 (a lookup 29.0
    /// -> 0 ns at 2M items). A zero slot (past a line's entries) matches nothing.
    #[inline(always)]
    pub(crate) fn matches(self, slot: u32) -> bool {
        // In 64 bits: the marker of a 32-bit slot doubled is 2^32.
        let marker = u64::from(self.slot & self.slot.wrapping_neg());
        u64::from(self.slot ^ slot) < marker << 1
    }
}

/// The one-line layout's view of a [`Line`]: its trailer's fields, its bit fields, and its
/// entries. The trailer is the line's last 17 bits: the first of its cells whose entries go
/// elsewhere, plus one (7 bits at 495; 0: none), its buddy's entries it holds (3 bits at
/// 502, stored downward from [`FOREIGN_END`]), its own entries (6 bits at 505), and whether it
/// sent entries to the overflow map (bit 511).
pub(crate) trait Bucket {
    fn entries(&self) -> u32;
    fn mapped(&self) -> bool;
    fn foreign(&self) -> u32;
    fn spill_mark(&self) -> u32;
    /// The first local cell whose entries are not all in this line (`u32::MAX`: none).
    fn spill_from(&self) -> u32 {
        self.spill_mark().wrapping_sub(1)
    }
    fn set_trailer(&mut self, entries: u32, foreign: u32, spill_mark: u32, mapped: bool);
    /// Where the line's own header and slots must end: below its buddy's entries.
    fn own_end(&self, w: &Widths) -> u32 {
        FOREIGN_END - w.foreign_bits() * self.foreign()
    }
    /// `n` (at most 64) bits at bit `at`.
    fn bits(&self, at: u32, n: u32) -> u64;
    /// The header's first 128 bits (a bucket spans at most 65 cells and holds at most 47
    /// entries).
    fn header(&self) -> u128;
    /// Whether it has room for one more of its buddy's entries (its own header judged as
    /// long as the longest, as its group is not at hand).
    fn takes_foreign(&self, w: &Widths) -> bool {
        let used = HEADER_CELLS + self.entries() * (w.slot + 1) + w.foreign_bits();
        used <= self.own_end(w) && self.foreign() < MAX_FOREIGN
    }
    fn foreign_entry(&self, i: u32, w: &Widths) -> Entry;
    fn push_foreign(&mut self, e: Entry, w: &Widths);
    /// Inserts an entry in one pass: its header one at `one_at` and its slot at `slot_at`
    /// (where it ends up), the bits between moving up by one and those after the slot by a
    /// slot and one, up to the line's own end (two general inserts: 14% of a fill).
    fn insert_entry(&mut self, one_at: u32, slot_at: u32, slot: u64, w: &Widths);
    /// The local cell of its last entry and how many entries that cell holds (0 when the
    /// line holds none), for a header of `cells` cells.
    fn last_cell(&self, cells: u32) -> (u32, u32);
    /// Takes out the entries of its last occupied local cell (their slots into `out`, which
    /// has room), the bits after them moving down (an insert undone), and marks that cell as
    /// the first it sends elsewhere; returns the cell.
    fn shed_last_cell(&mut self, cells: u32, w: &Widths, out: &mut Vec<u32>) -> u32;
}

impl Bucket for Line {
    #[inline(always)]
    fn entries(&self) -> u32 {
        ((self.0[7] >> 57) & 0x3f) as u32
    }
    #[inline(always)]
    fn mapped(&self) -> bool {
        self.0[7] >> 63 != 0
    }
    #[inline(always)]
    fn foreign(&self) -> u32 {
        ((self.0[7] >> 54) & 7) as u32
    }
    #[inline(always)]
    fn spill_mark(&self) -> u32 {
        ((self.0[7] >> 47) & 0x7f) as u32
    }
    fn set_trailer(&mut self, entries: u32, foreign: u32, spill_mark: u32, mapped: bool) {
        self.0[7] = (self.0[7] & !(0x1ffff << 47))
            | u64::from(spill_mark) << 47
            | u64::from(foreign) << 54
            | u64::from(entries) << 57
            | u64::from(mapped) << 63;
    }
    #[inline(always)]
    fn bits(&self, at: u32, n: u32) -> u64 {
        let w = (at / 64) as usize;
        let pair = u128::from(self.0[w]) | u128::from(self.0[(w + 1).min(7)]) << 64;
        ((pair >> (at % 64)) as u64) & (u64::MAX >> (64 - n))
    }
    #[inline(always)]
    fn header(&self) -> u128 {
        u128::from(self.0[0]) | u128::from(self.0[1]) << 64
    }
    fn foreign_entry(&self, i: u32, w: &Widths) -> Entry {
        let v = self.bits(FOREIGN_END - w.foreign_bits() * (i + 1), w.foreign_bits());
        Entry {
            cell: (v >> w.slot) as u32,
            slot: (v & w.slot_mask()) as u32,
        }
    }
    fn push_foreign(&mut self, e: Entry, w: &Widths) {
        let f = self.foreign();
        let v = u64::from(e.cell) << w.slot | u64::from(e.slot);
        put_bits(&mut self.0, FOREIGN_END - w.foreign_bits() * (f + 1), v);
        self.set_trailer(self.entries(), f + 1, self.spill_mark(), self.mapped());
    }
    fn insert_entry(&mut self, one_at: u32, slot_at: u32, slot: u64, w: &Widths) {
        let old = self.0;
        let (by1, by_slot) = (shifted(&old, 1), shifted(&old, w.slot + 1));
        let end = self.own_end(w);
        let mut out = [0u64; 8];
        for (i, o) in out.iter_mut().enumerate() {
            *o = old[i] & (span(i, 0, one_at) | span(i, end, 512))
                | by1[i] & span(i, one_at + 1, slot_at)
                | by_slot[i] & span(i, slot_at + w.slot, end);
        }
        out[(one_at / 64) as usize] |= 1 << (one_at % 64);
        put_bits(&mut out, slot_at, slot);
        self.0 = out;
    }
    fn last_cell(&self, cells: u32) -> (u32, u32) {
        let entries = self.entries();
        let header = self.header() & ((1u128 << (cells + entries).min(127)) - 1);
        if header == 0 {
            return (0, 0);
        }
        let last_one = 127 - header.leading_zeros();
        // The cell's entries are the run of ones ending at its last one.
        let run = (!(header << (127 - last_one))).leading_zeros();
        // Saturating: a damaged line's header may hold more ones than its count says.
        (last_one.saturating_sub(entries.saturating_sub(1)), run)
    }
    fn shed_last_cell(&mut self, cells: u32, w: &Widths, out: &mut Vec<u32>) -> u32 {
        let entries = self.entries();
        let len = cells + entries;
        let (local, run) = self.last_cell(cells);
        let last_one = local + entries - 1;
        for i in entries - run..entries {
            out.push(self.bits(len + i * w.slot, w.slot) as u32);
        }
        let kept_slots = (entries - run) * w.slot;
        let down = shifted_down(&self.0, run);
        let end = self.own_end(w);
        let old = self.0;
        for (i, word) in self.0.iter_mut().enumerate() {
            *word = old[i] & (span(i, 0, last_one + 1 - run) | span(i, end, 512))
                | down[i] & span(i, len - run, len - run + kept_slots);
        }
        self.set_trailer(entries - run, self.foreign(), local + 1, self.mapped());
        local
    }
}

/// The line's bits moved down by `n` (1 to 63) as one 512-bit number.
fn shifted_down(w: &[u64; 8], n: u32) -> [u64; 8] {
    std::array::from_fn(|i| w[i] >> n | if i < 7 { w[i + 1] << (64 - n) } else { 0 })
}

/// The line's bits moved up by `n` (1 to 63) as one 512-bit number.
fn shifted(w: &[u64; 8], n: u32) -> [u64; 8] {
    std::array::from_fn(|i| w[i] << n | if i > 0 { w[i - 1] >> (64 - n) } else { 0 })
}

/// Sets bits at bit `at` of a line's words to `value` (at most 64 bits, none past the line),
/// where they are zero.
#[inline(always)]
pub(crate) fn put_bits(words: &mut [u64; 8], at: u32, value: u64) {
    let (w, off) = ((at / 64) as usize, at % 64);
    words[w] |= value << off;
    if off > 0 && w < 7 {
        words[w + 1] |= value >> (64 - off);
    }
}

/// Word `i`'s part of the bits `[lo, hi)` of a line.
#[inline(always)]
pub(crate) fn span(i: usize, lo: u32, hi: u32) -> u64 {
    let below = |x: u32| {
        let n = x.saturating_sub(i as u32 * 64).min(64);
        ((1u128 << n) - 1) as u64
    };
    below(hi) & !below(lo)
}

/// The `n`-th (from 0) zero of `x`, found by `S` (an unspecified position of at most 128 when
/// it has fewer: a damaged line's lookup answers wrong, never out of the line).
#[inline(always)]
pub(crate) fn select0<S: Select>(x: u128, n: u32) -> u32 {
    let lo = !(x as u64);
    let ones = lo.count_ones();
    // Both words' selects, then a pick without a branch: a header of more than 64 bits (up to
    // 65 cells and their entries) leaves the first word on a coin toss per lookup.
    let in_lo = S::in_word(lo, n & 63);
    let in_hi = 64 + S::in_word(!((x >> 64) as u64), n.wrapping_sub(ones) & 63);
    if n < ones {
        in_lo.min(64)
    } else {
        in_hi.min(128)
    }
}
