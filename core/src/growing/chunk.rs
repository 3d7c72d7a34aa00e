//! One chunk of a growing filter: the entries of the items whose hashes fall in the chunk's
//! address, in one block of 64-bit words.
//!
//! An item's entry sits in one of the chunk's `2^q` cells (the `q` hash bits after the
//! address) and is a slot of `S` bits: the remainder bits it still knows, after a marker bit
//! that says how many that is (`slot = 1 << len | remainder`, `len` up to `S - 1`). A slot of
//! `len` 0 is a void entry: it matches every item of its cell.
//!
//! The cells come in groups of 32 (fewer when a chunk has fewer), each group one run of bits:
//!
//! ```text
//! per group, bit-packed from bit 0 on:
//!   header: per cell, one 1 bit per entry then a 0 bit     (32 + entries bits)
//!   slots:  the group's entries × S bits, cell by cell
//! then zero bits to the end of the block (the allocator's class)
//! ```
//! The header is a unary code of the cells' entry counts (two bits per entry where a cell holds
//! about one, as a quotient filter's metadata). The entries before each group are kept beside
//! the block, in the chunk table ([`Chunk`]), so a lookup goes straight to its group: a header
//! word and the slots after it, about 45 bytes, one or two lines that the look-ahead asks for
//! from the table alone. (Groups of 64 with their counts in the block's first word cost a line
//! more per lookup: 0.76 of a reserved filter's BF.MEXISTS at 2M items.) Memory grows entry by
//! entry: the block grows to the allocator's next class when its bits outgrow it, never by
//! doubling.

use crate::growing::bits::{
    bits128_at, bits_at, get_bits, move_up_one, ones_from, open_gap, put_bits, select_zero,
    select_zero_128, Select,
};
#[cfg(test)]
use crate::growing::bits::{run_batch, Batch, Broadword};
use crate::memory::{allocated, zeroed, OutOfMemory};

/// Cells per group.
const GROUP_CELLS: usize = 32;

/// Groups a chunk has at most (256 cells).
pub(crate) const MAX_GROUPS: usize = 8;

/// The widths every chunk of a filter shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// `q`: a chunk has `2^q` cells (at most 256: [`MAX_GROUPS`] groups).
    pub(crate) cell_bits: u16,
    /// `S`: bits per slot, the marker bit included (so up to `S - 1` remainder bits).
    pub(crate) slot_bits: u16,
}

impl Shape {
    #[inline(always)]
    pub(crate) fn cells(self) -> usize {
        1 << self.cell_bits
    }

    /// Remainder bits a new entry keeps.
    #[inline(always)]
    pub(crate) fn remainder_bits(self) -> u32 {
        u32::from(self.slot_bits) - 1
    }

    /// `log2` of the cells per group: shifts, not divisions, on a lookup's path.
    #[inline(always)]
    fn group_bits(self) -> u32 {
        u32::from(self.cell_bits).min(GROUP_CELLS.trailing_zeros())
    }

    #[inline(always)]
    fn group_cells(self) -> usize {
        1 << self.group_bits()
    }

    #[inline(always)]
    fn groups(self) -> usize {
        1 << (u32::from(self.cell_bits) - self.group_bits())
    }

    /// The group of `cell` and its place in the group.
    #[inline(always)]
    fn group_of(self, cell: usize) -> (usize, usize) {
        (cell >> self.group_bits(), cell & (self.group_cells() - 1))
    }

    /// Bits a chunk of `entries` entries uses.
    fn bits(self, entries: usize) -> usize {
        self.cells() + entries * (self.slot_bits as usize + 1)
    }

    /// Words a chunk of `entries` entries uses (its block may have more, zero).
    pub(crate) fn words(self, entries: usize) -> usize {
        match entries {
            0 => 0,
            n => self.bits(n).div_ceil(64),
        }
    }

    /// The slot of a new entry with remainder bits `rest` (the hash bits past the cell).
    pub(crate) fn new_slot(self, rest: u64) -> u64 {
        let len = self.remainder_bits();
        1 << len | (rest & ((1 << len) - 1))
    }
}

/// Whether `slot` (a marker and its remainder) matches an item whose remainder bits are `rest`.
#[inline(always)]
pub(crate) fn slot_matches(slot: u64, rest: u64) -> bool {
    let len = 63 - (slot | 1).leading_zeros();
    let mask = (1u64 << len) - 1;
    (slot ^ rest) & mask == 0
}

/// Words of a block holding at least `needed`: all of the allocator's class, which the block
/// takes anyway, so a chunk grows into it before it moves.
fn block_words(needed: usize) -> usize {
    (allocated(needed * 8) / 8) as usize
}

/// Where a new entry of a cell goes: its header bit and its slot's first bit, as the chunk is
/// now ([`Chunk::find`], [`Chunk::place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    group: usize,
    header_bit: usize,
    slot_bit: usize,
}

/// One group's bounds: where it starts and its entries.
#[derive(Debug, Clone, Copy, Default)]
struct Group {
    start: usize,
    entries: usize,
}

impl Group {
    /// The first bit of the group's slot `index`.
    #[inline(always)]
    fn slot_bit(&self, shape: Shape, index: usize) -> usize {
        self.start + shape.group_cells() + self.entries + index * shape.slot_bits as usize
    }
}

/// One chunk: its block, its entry count and the entries before each group but the first
/// (32 bytes in the table).
#[derive(Debug, PartialEq, Eq, Default)]
pub(crate) struct Chunk {
    words: Box<[u64]>,
    entries: u16,
    starts: [u16; MAX_GROUPS - 1],
}

/// A copy whose block the allocator may refuse ([`OutOfMemory::refuse_copy`]), where the
/// derived copy aborted the server.
impl Clone for Chunk {
    fn clone(&self) -> Self {
        let mut words = zeroed(self.words.len()).unwrap_or_else(|refused| refused.refuse_copy());
        words.copy_from_slice(&self.words);
        Chunk {
            words,
            entries: self.entries,
            starts: self.starts,
        }
    }
}

/// The most entries a chunk holds: a chunk has about [`PER_CHUNK`](super::design::PER_CHUNK)
/// (twice as many before its split), so an add that would pass this is refused.
pub(crate) const MAX_ENTRIES: usize = u16::MAX as usize;

impl Chunk {
    pub(crate) fn entries(&self) -> usize {
        self.entries as usize
    }

    /// The block (its unused tail included, zero).
    pub(crate) fn block(&self) -> &[u64] {
        &self.words
    }

    pub(crate) fn block_mut(&mut self) -> &mut Box<[u64]> {
        &mut self.words
    }

    /// The words its entries use (what is saved).
    pub(crate) fn used_words(&self, shape: Shape) -> &[u64] {
        &self.words[..shape.words(self.entries())]
    }

    /// Entries before group `g` (bounded by the entry count).
    #[inline(always)]
    fn before(&self, g: usize) -> usize {
        match g {
            0 => 0,
            g => usize::from(self.starts[g - 1]).min(self.entries()),
        }
    }

    /// The entries before each group but the first (what is saved beside the words).
    pub(crate) fn starts(&self) -> [u16; MAX_GROUPS - 1] {
        self.starts
    }

    #[inline(always)]
    fn group(&self, shape: Shape, g: usize) -> Group {
        let before = self.before(g);
        let after = if g + 1 == shape.groups() {
            self.entries()
        } else {
            self.before(g + 1)
        };
        Group {
            start: g * shape.group_cells() + before * (shape.slot_bits as usize + 1),
            entries: after.saturating_sub(before),
        }
    }

    /// Where a lookup of `cell` reads (its group's bounds come from the table entry alone).
    #[inline(always)]
    pub(crate) fn probe(&self, shape: Shape, cell: usize) -> CellProbe<'_> {
        let (g, local) = shape.group_of(cell);
        CellProbe {
            words: &self.words,
            group: self.group(shape, g),
            local,
        }
    }

    /// Whether an entry of `cell` matches remainder bits `rest`.
    #[cfg(test)]
    fn contains<S: Select>(&self, shape: Shape, cell: usize, rest: u64) -> bool {
        self.probe(shape, cell).matches::<S>(shape, rest)
    }

    /// Whether an entry of `cell` matches `rest`, else where a new entry of the cell goes (for
    /// [`Chunk::insert_at`], while the chunk is unchanged). Always inlined, as the lookups are:
    /// out of line, it was compiled without the batch's BMI2 and POPCNT (a call per select, a
    /// dozen instructions per count of ones), 16% of a server's BF.BULKADD fill.
    #[inline(always)]
    pub(crate) fn find<S: Select>(
        &self,
        shape: Shape,
        cell: usize,
        rest: u64,
    ) -> Result<(), Place> {
        let probe = self.probe(shape, cell);
        let (start, count) = probe.entries::<S>(shape);
        match probe.slots_match(shape, start, count, rest) {
            true => Ok(()),
            false => Err(probe.place_after(shape, shape.group_of(cell).0, start + count)),
        }
    }

    /// Where a new entry of `cell` goes (inlined as [`Chunk::find`] is).
    #[inline(always)]
    pub(crate) fn place<S: Select>(&self, shape: Shape, cell: usize) -> Place {
        let probe = self.probe(shape, cell);
        let (start, count) = probe.entries::<S>(shape);
        probe.place_after(shape, shape.group_of(cell).0, start + count)
    }

    /// Adds `slot` at `place` (from [`Chunk::find`] or [`Chunk::place`] on the chunk as it
    /// is). On the allocator's refusal nothing changed.
    pub(crate) fn insert_at(
        &mut self,
        shape: Shape,
        place: Place,
        slot: u64,
    ) -> Result<(), OutOfMemory> {
        let entries = self.entries();
        if entries == MAX_ENTRIES {
            return Err(OutOfMemory {
                bytes: 8 * shape.words(entries + 1) as u64,
            });
        }
        let needed = shape.words(entries + 1);
        if needed > self.words.len() {
            let mut grown = zeroed(block_words(needed))?;
            grown[..self.words.len()].copy_from_slice(&self.words);
            self.words = grown;
        }
        // One gap of S + 1 bits at the slot, then the bits from the header bit to the slot move
        // up by one: the tail moves once (a gap for each moved it twice, the block's zero tail
        // to its class with it: a third of BF.MADD's time).
        let used = &mut self.words[..needed];
        open_gap(used, place.slot_bit, u32::from(shape.slot_bits) + 1);
        move_up_one(used, place.header_bit, place.slot_bit);
        put_bits(&mut self.words, place.header_bit, 1, 1);
        put_bits(
            &mut self.words,
            place.slot_bit + 1,
            shape.slot_bits.into(),
            slot,
        );
        // Every group after the entry's has one more before it: all seven starts at once, no
        // loop of as many steps as there are such groups.
        let groups = shape.groups();
        for (i, start) in self.starts.iter_mut().enumerate() {
            *start += u16::from(i >= place.group && i + 1 < groups);
        }
        self.entries += 1;
        Ok(())
    }

    /// Adds an entry to `cell`.
    #[cfg(test)]
    fn insert(&mut self, shape: Shape, cell: usize, slot: u64) -> Result<(), OutOfMemory> {
        self.insert_at(shape, self.place::<Broadword>(shape, cell), slot)
    }

    /// A chunk holding `entries` (cell, slot) pairs, in cell order.
    pub(crate) fn from_entries(shape: Shape, entries: &[(u32, u64)]) -> Result<Chunk, OutOfMemory> {
        if entries.is_empty() {
            return Ok(Chunk::default());
        }
        debug_assert!(entries.windows(2).all(|w| w[0].0 <= w[1].0));
        let count = entries.len();
        if count > MAX_ENTRIES {
            return Err(OutOfMemory {
                bytes: 8 * shape.words(count) as u64,
            });
        }
        let mut words = zeroed(block_words(shape.words(count)))?;
        let mut starts = [0u16; MAX_GROUPS - 1];
        let group_cells = shape.group_cells();
        let mut at = 0;
        let mut next = 0;
        for g in 0..shape.groups() {
            let first = next;
            let limit = ((g + 1) * group_cells) as u32;
            while next < count && entries[next].0 < limit {
                next += 1;
            }
            if g > 0 {
                starts[g - 1] = first as u16;
            }
            let group = &entries[first..next];
            let mut cell = (g * group_cells) as u32;
            for &(c, _) in group {
                // A zero closes each cell before `c` (already zero); a one is the entry.
                at += (c - cell) as usize;
                cell = c;
                put_bits(&mut words, at, 1, 1);
                at += 1;
            }
            at += (limit - cell) as usize;
            for &(_, slot) in group {
                put_bits(&mut words, at, shape.slot_bits.into(), slot);
                at += shape.slot_bits as usize;
            }
        }
        Ok(Chunk {
            words,
            entries: count as u16,
            starts,
        })
    }

    /// Every entry as (cell, slot), in cell order.
    pub(crate) fn entries_by_cell(&self, shape: Shape) -> Vec<(u32, u64)> {
        let mut out = Vec::with_capacity(self.entries());
        if self.entries == 0 {
            return out;
        }
        let group_cells = shape.group_cells();
        for g in 0..shape.groups() {
            let group = self.group(shape, g);
            // Each one of the header is an entry, of the cell whose zeros come before it:
            // the ones found a word at a time, with no branch on how many a cell holds.
            let header = group_cells + group.entries;
            let mut index = 0;
            for at in (0..header).step_by(64) {
                let valid = (header - at).min(64) as u32;
                let mut ones = bits_at(&self.words, group.start + at) & (u64::MAX >> (64 - valid));
                while ones != 0 && index < group.entries {
                    let cell = g * group_cells + at + ones.trailing_zeros() as usize - index;
                    let slot = get_bits(
                        &self.words,
                        group.slot_bit(shape, index),
                        shape.slot_bits.into(),
                    );
                    out.push((cell as u32, slot));
                    index += 1;
                    ones &= ones - 1;
                }
            }
        }
        out
    }

    /// The two chunks this one's entries go to when its address gains a bit: the cell's lowest
    /// bit picks the chunk, and the cell gains the remainder's lowest bit at the top (the
    /// entry keeps one remainder bit less). A void entry, whose new bit is unknown, goes to
    /// both cells it may belong to.
    ///
    /// Walking the cells in order, each half's entries whose new top bit is 0 come out in cell
    /// order, and so do those whose bit is 1 (whose cells are all higher): each half is the
    /// first walk's then the second's, in cell order with no sort (four runs grown push by
    /// push, then joined: 3% more per add in a 500K-item fill, in allocations).
    pub(crate) fn split(&self, shape: Shape) -> Result<(Chunk, Chunk), OutOfMemory> {
        let top = u32::from(shape.cell_bits) - 1;
        let entries = self.entries_by_cell(shape);
        // Every entry is written to its half at that half's end, which moves on only for the
        // entries kept: no branch on the remainder's bit, a coin toss per entry (a branch
        // there, and one per cell's entries in `entries_by_cell`, took a 2M-item fill's splits
        // to 37 ns per add). A void entry is kept in both walks.
        let voids = entries.iter().filter(|&&(_, slot)| slot == 1).count();
        let room = entries.len() + voids + 1;
        let mut halves = [vec![(0u32, 0u64); room], vec![(0u32, 0u64); room]];
        let mut ends = [0usize; 2];
        for bit in 0..2u32 {
            for &(cell, slot) in &entries {
                let void = slot == 1;
                let keep = void | ((slot & 1) as u32 == bit);
                // One remainder bit less: the marker and the remainder move down together
                // (`1 << len | rest` becomes `1 << (len - 1) | rest >> 1`); a void stays void.
                let shorter = slot >> 1 | u64::from(void);
                let half = (cell & 1) as usize;
                halves[half][ends[half]] = (cell >> 1 | bit << top, shorter);
                ends[half] += usize::from(keep);
            }
        }
        let [low, high] = halves;
        Ok((
            Chunk::from_entries(shape, &low[..ends[0]])?,
            Chunk::from_entries(shape, &high[..ends[1]])?,
        ))
    }

    /// A chunk from saved words and group starts, every bit checked: the starts in order (0
    /// past the groups), each group's header with its count of ones and one zero per cell,
    /// every slot with its marker, every bit past them zero.
    pub(crate) fn from_saved(
        shape: Shape,
        entries: u32,
        starts: [u16; MAX_GROUPS - 1],
        saved: &[u64],
    ) -> Option<Chunk> {
        let count = entries as usize;
        if count > MAX_ENTRIES || saved.len() != shape.words(count) {
            return None;
        }
        let groups = shape.groups();
        let (used, unused) = starts.split_at(groups - 1);
        let ordered = used.windows(2).all(|w| w[0] <= w[1]);
        if !ordered
            || used.iter().any(|&s| usize::from(s) > count)
            || unused.iter().any(|&s| s != 0)
        {
            return None;
        }
        if count == 0 {
            return (starts == [0; MAX_GROUPS - 1]).then(Chunk::default);
        }
        let mut words = zeroed(block_words(saved.len())).ok()?;
        words[..saved.len()].copy_from_slice(saved);
        let chunk = Chunk {
            words,
            entries: count as u16,
            starts,
        };
        let group_cells = shape.group_cells();
        for g in 0..groups {
            let group = chunk.group(shape, g);
            let header = group_cells + group.entries;
            let ones: usize = (0..header)
                .step_by(64)
                .map(|at| {
                    let w = bits_at(saved, group.start + at);
                    let valid = (header - at).min(64);
                    let w = if valid < 64 {
                        w & ((1 << valid) - 1)
                    } else {
                        w
                    };
                    w.count_ones() as usize
                })
                .sum();
            let slots_ok = (0..group.entries)
                .all(|i| get_bits(saved, group.slot_bit(shape, i), shape.slot_bits.into()) != 0);
            // The last cell's closing zero ends the header: a one after it would be an entry of
            // a cell past the group (as many ones and zeros, in another order).
            let closed = get_bits(saved, group.start + header - 1, 1) == 0;
            if ones != group.entries || !slots_ok || !closed {
                return None;
            }
        }
        let used = shape.bits(count);
        (used.is_multiple_of(64) || saved[used / 64] >> (used % 64) == 0).then_some(chunk)
    }
}

/// Where a lookup of one cell reads: the chunk's words, the cell's group and its place in the
/// group, found from the chunk table. A batch finds it when it prefetches the group's lines
/// and keeps it for the item's step, which then reads no table entry again. An empty chunk's
/// probe reads zeros: an empty cell.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CellProbe<'c> {
    words: &'c [u64],
    group: Group,
    local: usize,
}

impl CellProbe<'_> {
    /// The cell's first entry's index in its group and its entry count; within the group's
    /// entries even for a header that lies, so no lookup reads past them. The cell ends at
    /// its group's `local`-th header zero: found in the header's first 128 bits (a group holds
    /// about 24 entries, 48 before its chunk splits: 56-80 header bits), its run of ones is
    /// the ones just below it. Past those bits (a crowded group), zero by zero.
    #[inline(always)]
    fn entries<S: Select>(&self, shape: Shape) -> (usize, usize) {
        let (group, local) = (self.group, self.local);
        let window = bits128_at(self.words, group.start);
        let (start, count) = match select_zero_128::<S>(window, local as u32) {
            Some(0) => (0, 0),
            Some(end) => {
                let count = (window << (128 - end)).leading_ones() as usize;
                (end as usize - count - local, count)
            }
            None => {
                let span = shape.group_cells() + group.entries;
                // The cell's ones follow the previous cell's terminating zero.
                let first_bit = match local {
                    0 => group.start,
                    _ => match select_zero::<S>(self.words, group.start, span, local - 1) {
                        Some(zero) => zero + 1,
                        None => return (group.entries, 0),
                    },
                };
                let start = first_bit - group.start - local;
                (start, ones_from(self.words, first_bit, span))
            }
        };
        let start = start.min(group.entries);
        (start, count.min(group.entries - start))
    }

    /// Whether one of the group's `count` slots from index `start` matches `rest`. A cell holds
    /// none, one or two entries, by chance: a branch on the count mispredicts about every
    /// other lookup, so two slots (of up to 32 bits: one 64-bit read) are always compared,
    /// those past the count masked off, and a crowded cell reads on. (Four 16-bit slots a read:
    /// 28 ns per lookup at 2M items against 24; one slot a step, 29.)
    #[inline(always)]
    fn slots_match(&self, shape: Shape, start: usize, count: usize, rest: u64) -> bool {
        let width = u32::from(shape.slot_bits);
        let per_read = 2;
        let mask = (1u64 << width) - 1;
        let mut at = self.group.slot_bit(shape, start);
        let mut left = count;
        loop {
            let bits = bits_at(self.words, at);
            let mut found = false;
            for i in 0..per_read {
                let slot = bits >> (i * width) & mask;
                found |= ((i as usize) < left) & slot_matches(slot, rest);
            }
            if found || left <= per_read as usize {
                return found;
            }
            at += (per_read * width) as usize;
            left -= per_read as usize;
        }
    }

    /// Whether an entry of the cell matches remainder bits `rest`.
    #[inline(always)]
    pub(crate) fn matches<S: Select>(&self, shape: Shape, rest: u64) -> bool {
        let (start, count) = self.entries::<S>(shape);
        self.slots_match(shape, start, count, rest)
    }

    /// Where a new entry of the cell goes, group `g`'s entry `index` (the cell's end).
    #[inline(always)]
    fn place_after(&self, shape: Shape, g: usize, index: usize) -> Place {
        Place {
            group: g,
            header_bit: self.group.start + index + self.local,
            slot_bit: self.group.slot_bit(shape, index),
        }
    }

    /// Starts loading the lines a lookup of the cell reads: its group's first and last. No
    /// more: the look-ahead's prefetches fill the core's miss buffers (a prefetch of the
    /// block's first line as well stalled on them). (The next line only when the cell's slots
    /// are likely past the first, by the group's mean, was slower: 0.70-0.73 of a reserved
    /// filter's server time per BF.MEXISTS at 2M items against 0.77-0.78.)
    #[inline(always)]
    pub(crate) fn prefetch(&self, shape: Shape) {
        let group = self.group;
        let end =
            group.start + shape.group_cells() + group.entries * (shape.slot_bits as usize + 1);
        // Both ends, always: a group crosses a line about every other lookup, and a branch on
        // it mispredicts as often; a second prefetch of the same line costs nearly nothing.
        let last_word = self.words.len().saturating_sub(1);
        if let (Some(first), Some(last)) = (
            self.words.get((group.start / 64).min(last_word)),
            self.words.get(((end - 1) / 64).min(last_word)),
        ) {
            crate::hints::prefetch(first);
            crate::hints::prefetch(last);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: Shape = Shape {
        cell_bits: 4,
        slot_bits: 11,
    };

    fn sorted(mut v: Vec<(u32, u64)>) -> Vec<(u32, u64)> {
        v.sort_unstable();
        v
    }

    #[test]
    fn inserts_land_in_their_cells_and_every_one_is_found() {
        let mut chunk = Chunk::default();
        let mut oracle = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let cell = (x >> 60) as u32;
            let slot = SHAPE.new_slot(x >> 20);
            chunk.insert(SHAPE, cell as usize, slot).unwrap();
            oracle.push((cell, slot));
            assert_eq!(sorted(chunk.entries_by_cell(SHAPE)), sorted(oracle.clone()));
        }
        for &(cell, slot) in &oracle {
            assert!(chunk.contains::<Broadword>(SHAPE, cell as usize, slot));
        }
        assert_eq!(chunk.block().len(), block_words(SHAPE.words(300)));
    }

    /// Lookups against the entries themselves, in chunks from sparse (every header in its
    /// first 128 bits) to crowded (cells of more slots than one read holds, headers past 128
    /// bits): a slot past the cell's count, or a header's zero past the window, would show.
    #[test]
    fn lookups_agree_with_the_entries_at_every_density() {
        let wide = Shape {
            cell_bits: 8,
            slot_bits: 12,
        };
        let mut x = 0x5851_f42d_4c95_7f2du64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 11
        };
        for (shape, count) in [(wide, 60), (wide, 400), (wide, 3000), (SHAPE, 200)] {
            // Few remainder bits, so that strangers match some entries.
            let mut entries: Vec<(u32, u64)> = (0..count)
                .map(|_| {
                    let cell = (next() % shape.cells() as u64) as u32;
                    let len = 1 + next() % 4;
                    (cell, 1 << len | next() & ((1 << len) - 1))
                })
                .collect();
            entries.sort_unstable();
            let chunk = Chunk::from_entries(shape, &entries).unwrap();
            let (mut hits, mut misses) = (0, 0);
            for cell in 0..shape.cells() {
                for rest in 0..40u64 {
                    let expected = entries
                        .iter()
                        .any(|&(c, slot)| c as usize == cell && slot_matches(slot, rest));
                    assert_eq!(
                        chunk.contains::<Broadword>(shape, cell, rest),
                        expected,
                        "{count} entries, cell {cell}, rest {rest}"
                    );
                    assert_eq!(run_batch(Contains(&chunk, shape, cell, rest)), expected);
                    assert_eq!(chunk.find::<Broadword>(shape, cell, rest).is_ok(), expected);
                    if expected {
                        hits += 1
                    } else {
                        misses += 1
                    }
                }
            }
            assert!(
                hits > 0 && misses > 0,
                "{count}: {hits} hits, {misses} misses"
            );
        }
    }

    /// [`Chunk::contains`] with the select [`run_batch`] picks.
    struct Contains<'c>(&'c Chunk, Shape, usize, u64);

    impl Batch for Contains<'_> {
        type Output = bool;

        fn run<S: Select>(self) -> bool {
            self.0.contains::<S>(self.1, self.2, self.3)
        }
    }

    #[test]
    fn a_void_slot_matches_everything_and_a_full_one_its_remainder() {
        assert!(slot_matches(1, 12345));
        let slot = SHAPE.new_slot(0b10_1101_1011);
        assert!(slot_matches(slot, 0b10_1101_1011));
        assert!(slot_matches(slot, 0b1_1110_1101_1011));
        assert!(!slot_matches(slot, 0b10_1101_1010));
    }

    #[test]
    fn a_split_sends_each_entry_by_its_cells_low_bit_and_keeps_it_findable() {
        let mut chunk = Chunk::default();
        let hashes: Vec<u64> = (0..200u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17))
            .collect();
        // Cell: hash bits 0..4; remainder: bits 4.. (10 of them kept).
        for &h in &hashes {
            chunk
                .insert(SHAPE, (h & 15) as usize, SHAPE.new_slot(h >> 4))
                .unwrap();
        }
        let (low, high) = chunk.split(SHAPE).unwrap();
        assert_eq!(low.entries() + high.entries(), 200);
        for &h in &hashes {
            // After the split the address takes bit 0; the cell is bits 1..5.
            let half = if h & 1 == 0 { &low } else { &high };
            assert!(half.contains::<Broadword>(SHAPE, ((h >> 1) & 15) as usize, h >> 5));
        }
    }

    #[test]
    fn void_entries_go_to_both_cells() {
        let chunk = Chunk::from_entries(SHAPE, &[(3, 1)]).unwrap();
        let (low, high) = chunk.split(SHAPE).unwrap();
        assert_eq!(low.entries(), 0);
        assert_eq!(high.entries_by_cell(SHAPE), vec![(1, 1), (9, 1)]);
    }

    #[test]
    fn saved_words_load_back_and_lies_are_refused() {
        let mut entries: Vec<(u32, u64)> = (0..40)
            .map(|i| (i % 16, SHAPE.new_slot(u64::from(i) * 77)))
            .collect();
        entries.sort_unstable();
        let chunk = Chunk::from_entries(SHAPE, &entries).unwrap();
        let saved = chunk.used_words(SHAPE).to_vec();
        let none = [0; MAX_GROUPS - 1];
        assert_eq!(Chunk::from_saved(SHAPE, 40, none, &saved), Some(chunk));
        assert_eq!(Chunk::from_saved(SHAPE, 41, none, &saved), None);
        let mut extra_one = saved.clone();
        extra_one[0] ^= 1 << 40;
        assert_eq!(Chunk::from_saved(SHAPE, 40, none, &extra_one), None);
        // The header's last zero and the one before it swapped: the same counts, an entry of a
        // 17th cell.
        let header_end = 16 + 40 - 1;
        let last_one = 63 - (saved[0] & ((1 << header_end) - 1)).leading_zeros();
        let mut unclosed = saved.clone();
        unclosed[0] ^= 1 << header_end | 1 << last_one;
        assert_eq!(Chunk::from_saved(SHAPE, 40, none, &unclosed), None);
        let mut tail = saved.clone();
        *tail.last_mut().unwrap() |= 1 << 63;
        assert_eq!(Chunk::from_saved(SHAPE, 40, none, &tail), None);
        assert_eq!(
            Chunk::from_saved(SHAPE, 0, none, &[]),
            Some(Chunk::default())
        );
        assert_eq!(Chunk::from_saved(SHAPE, 0, none, &[0]), None);
        assert_eq!(
            Chunk::from_saved(SHAPE, 40, [1, 0, 0, 0, 0, 0, 0], &saved),
            None
        );
        // 256 cells: four groups, their counts in word 0.
        let wide = Shape {
            cell_bits: 8,
            slot_bits: 12,
        };
        let mut entries: Vec<(u32, u64)> = (0..300u32)
            .map(|i| ((i * 37) % 256, wide.new_slot(u64::from(i))))
            .collect();
        entries.sort_unstable();
        let chunk = Chunk::from_entries(wide, &entries).unwrap();
        let saved = chunk.used_words(wide).to_vec();
        let starts = chunk.starts();
        assert_eq!(
            Chunk::from_saved(wide, 300, starts, &saved),
            Some(chunk.clone())
        );
        let mut moved = starts;
        moved[2] += 1;
        assert_eq!(Chunk::from_saved(wide, 300, moved, &saved), None);
        let mut unordered = starts;
        unordered[0] = unordered[6];
        assert_eq!(Chunk::from_saved(wide, 300, unordered, &saved), None);
        assert_eq!(chunk.entries_by_cell(wide), entries);
    }
}
