//! A working prototype of the layout docs/growing.md's model points to ("One line a lookup"),
//! measured beside the core's growing filter and a reserved one: one 64-byte bucket a lookup, found by
//! arithmetic (no table), growing by Larson's partial expansions with InfiniFilter's aging.
//! `cargo run --release -p rsbloom-core --example growing_lines -- [items] [rounds] [load]`
//!
//! - An item's 64-bit hash gives its **group** (its first `level` bits: 2^level groups) and a
//!   fraction `u` of the group (the bits after). A group has `G0` (4) to `2 * G0 - 1` buckets;
//!   its bucket is `floor(u * g)`, so growing a group by a bucket moves no bit of any entry into
//!   an address: nothing is lost, only the boundaries move (an entry whose known prefix a new
//!   boundary cuts is kept in both buckets).
//! - A group's `u` has 256 **cells** (its first 8 bits); an entry keeps the cell (in its bucket's
//!   unary header: a zero for each cell the bucket spans, so a bucket of a larger group has a
//!   shorter header) and the next 10 bits (its slot, 11 bits with the marker that says how many
//!   of the 10 it still has).
//! - Every `load` adds, one group grows by a bucket (`G0` passes over the groups a level), so
//!   memory follows the items. The last pass writes its groups' `2 * G0` buckets as the next
//!   level's two groups of `G0`: `u`'s first bit becomes the group's address and each entry
//!   gives its cell the first bit it kept (InfiniFilter's sacrifice: one bit a doubling). An
//!   entry with no bit left (void) matches its whole cell and is copied to both halves. A growth
//!   step writes each of its lines whole.
//! - Why groups of 4 to 8 buckets, not 2 to 4: a group's buckets not yet grown hold
//!   `(g + 1) / g` of the mean load at the end of a pass (1.5 for a group of 2, 1.25 for 4), and
//!   those are the lines that overflow. Cells grow with the group (entries a cell stay about
//!   one), which pays for the rate of a bit less a slot. From 2M to 3.4M items, with about 1% of
//!   lookups reading past the buddy: groups of 2 over 64 cells and 11 bits, 19.9 bits an item
//!   (rate 0.56%); 3 over 128 and 11, 19.2 (0.45%); 4 over 256 and 10, 17.9 (0.64%); 3 over
//!   128 and 10, 17.8 but a rate of 0.97-0.99%.
//! - Bucket `b` of group `j` is line `j + b * 2^level`: the lines only ever grow at the end (2
//!   MiB segments), and a group's `2 * G0` lines are the next level's groups `j` and
//!   `j + 2^level` without a move.
//! - A bucket that is full sends the entries of its last cells (from its highest cell holding
//!   entries, or the new entry's if higher) to its buddy (the other line of its 128-byte pair:
//!   up to 7 entries of 19 bits, cell and slot, at the buddy's end) and, when that is full too,
//!   to an overflow map; only lookups of those cells read there (marking the whole line sent
//!   all its lookups there: 0.83 against 0.96 of a reserved filter's speed at 2M).
//! - Lookups in batches: every item placed, then each line requested 32 items before it is read;
//!   a cell's first four slots compared at once, with no branch on how many it has.
//!
//! Not a build: no persistence, no removal; the lines are 2 MiB segments never freed. It prints
//! memory (lines in use and the map at 16 bits an entry plus 64 a bucket), the share of absent
//! lookups that read the buddy and the map, the rate among a million absent items, the time per
//! add over the whole fill, and absent lookups (batches of 100, hashing included) of it and the
//! core's growing filter against the core's reserved filter holding the same items, in one
//! process, alternating, `rounds` times.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

use rsbloom_core::{Chain, Filter, FilterSpec, Growing, Growth, Window};
use std::alloc::{GlobalAlloc, Layout, System};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Buckets of a group at the start of a level: a level's passes grow each group by one bucket,
/// from `G0` to `2 * G0`, which the last pass writes as two groups of the next level.
const G0: u64 = 4;
/// Cells of a group: a fraction's first `CELL_BITS` bits.
const CELL_BITS: u32 = 8;
/// The remainder bits an entry keeps when added.
const REM_BITS: u32 = 10;
/// A slot: the remainder's bits still kept, a one, then zeros for the bits given up.
const SLOT_BITS: u32 = REM_BITS + 1;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
const SEGMENT_LINES_LOG: u32 = 15;

/// The overflow map's keys are line numbers: a multiply spreads them, where SipHash would be
/// most of an overflowing lookup's work.
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("keys are u64")
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Overflow = HashMap<u64, Vec<Entry>, BuildHasherDefault<LineHasher>>;

#[repr(C, align(64))]
#[derive(Clone, Copy, Default)]
struct Line([u64; 8]);

/// A line's last 17 bits: its entries (6 bits, at 505), whether it sent entries to the
/// overflow map (511), how many of its buddy's entries it holds (3 bits, at 502, stored downward
/// from bit 495 at `FOREIGN_BITS` each, cell and slot), and the first of its cells whose entries
/// it sends elsewhere, plus one (7 bits at 495; 0: none).
const FOREIGN_END: u32 = 495;
const FOREIGN_BITS: u32 = CELL_BITS + SLOT_BITS;
const MAX_FOREIGN: u32 = 7;

impl Line {
    fn entries(&self) -> u32 {
        ((self.0[7] >> 57) & 0x3f) as u32
    }
    fn mapped(&self) -> bool {
        self.0[7] >> 63 != 0
    }
    fn foreign(&self) -> u32 {
        ((self.0[7] >> 54) & 7) as u32
    }
    fn spill_mark(&self) -> u32 {
        ((self.0[7] >> 47) & 0x7f) as u32
    }
    /// The first local cell whose entries are not all in this line (`u32::MAX`: none).
    fn spill_from(&self) -> u32 {
        self.spill_mark().wrapping_sub(1)
    }
    fn set_trailer(&mut self, entries: u32, foreign: u32, spill_mark: u32, mapped: bool) {
        self.0[7] = (self.0[7] & !(0x1ffff << 47))
            | (spill_mark as u64) << 47
            | (foreign as u64) << 54
            | (entries as u64) << 57
            | (mapped as u64) << 63;
    }
    /// Where the line's own header and slots must end: below its buddy's entries.
    fn own_end(&self) -> u32 {
        FOREIGN_END - FOREIGN_BITS * self.foreign()
    }
    /// `n` (at most 32) bits at bit `at`.
    fn bits(&self, at: u32, n: u32) -> u64 {
        let w = (at / 64) as usize;
        let pair = self.0[w] as u128 | (self.0[(w + 1).min(7)] as u128) << 64;
        ((pair >> (at % 64)) as u64) & ((1 << n) - 1)
    }
    fn set_bits(&mut self, at: u32, n: u32, value: u64) {
        for i in 0..n {
            let (w, b) = (((at + i) / 64) as usize, (at + i) % 64);
            self.0[w] = (self.0[w] & !(1 << b)) | (value.checked_shr(i).unwrap_or(0) & 1) << b;
        }
    }
    fn foreign_entry(&self, i: u32) -> Entry {
        let v = self.bits(FOREIGN_END - FOREIGN_BITS * (i + 1), FOREIGN_BITS);
        Entry {
            cell: (v >> SLOT_BITS) as u32,
            slot: (v & SLOT_MASK) as u16,
        }
    }
    fn push_foreign(&mut self, e: Entry) {
        let f = self.foreign();
        let v = (e.cell as u64) << SLOT_BITS | e.slot as u64;
        self.set_bits(FOREIGN_END - FOREIGN_BITS * (f + 1), FOREIGN_BITS, v);
        self.set_trailer(self.entries(), f + 1, self.spill_mark(), self.mapped());
    }
    /// The `SLOT_BITS`-bit slot at bit `at`.
    fn slot(&self, at: u32) -> u16 {
        self.bits(at, SLOT_BITS) as u16
    }
    /// The header's first 128 bits (a bucket spans at most 65 cells and holds at most 36
    /// entries).
    fn header(&self) -> u128 {
        self.0[0] as u128 | (self.0[1] as u128) << 64
    }
    /// Inserts an entry in one pass over the line: its header one at `one_at` and its slot
    /// at `slot_at` (where it ends up), the bits between moving up by one and those after the
    /// slot by `SLOT_BITS + 1`, up to the line's own end (two passes of a general insert: 14% of
    /// a fill).
    fn insert_entry(&mut self, one_at: u32, slot_at: u32, slot: u64) {
        let old = self.0;
        let (by1, by_slot) = (shifted(&old, 1), shifted(&old, SLOT_BITS + 1));
        let end = self.own_end();
        let mut out = [0u64; 8];
        for (i, o) in out.iter_mut().enumerate() {
            *o = old[i] & (span(i, 0, one_at) | span(i, end, 512))
                | by1[i] & span(i, one_at + 1, slot_at)
                | by_slot[i] & span(i, slot_at + SLOT_BITS, end);
        }
        out[(one_at / 64) as usize] |= 1 << (one_at % 64);
        put_slot(&mut out, slot_at, slot);
        self.0 = out;
    }
}

/// The line's bits moved up by `n` (1 to 63) as one 512-bit number.
fn shifted(w: &[u64; 8], n: u32) -> [u64; 8] {
    std::array::from_fn(|i| w[i] << n | if i > 0 { w[i - 1] >> (64 - n) } else { 0 })
}

/// Sets a slot's bits at bit `at` of a line's words, where they are zero.
fn put_slot(words: &mut [u64; 8], at: u32, slot: u64) {
    let (w, off) = ((at / 64) as usize, at % 64);
    words[w] |= slot << off;
    if off + SLOT_BITS > 64 {
        words[w + 1] |= slot >> (64 - off);
    }
}

/// Word `i`'s part of the bits `[lo, hi)` of a line.
fn span(i: usize, lo: u32, hi: u32) -> u64 {
    let below = |x: u32| {
        let n = x.saturating_sub(i as u32 * 64).min(64);
        ((1u128 << n) - 1) as u64
    };
    below(hi) & !below(lo)
}

/// The `n`-th (from 0) zero of `x`.
fn select0(x: u128, n: u32) -> u32 {
    let lo = !(x as u64);
    let ones = lo.count_ones();
    // Both words' selects, then a pick without a branch: a header of more than 64 bits (up to
    // 65 cells and their entries) leaves the first word on a coin toss per lookup.
    let in_lo = select64(lo, n & 63);
    let in_hi = 64 + select64(!((x >> 64) as u64), n.wrapping_sub(ones) & 63);
    if n < ones {
        in_lo
    } else {
        in_hi
    }
}

fn select64(x: u64, n: u32) -> u32 {
    #[cfg(target_feature = "bmi2")]
    {
        // SAFETY: the target has BMI2 (checked by the cfg above).
        unsafe { core::arch::x86_64::_pdep_u64(1 << n, x).trailing_zeros() }
    }
    #[cfg(not(target_feature = "bmi2"))]
    {
        let mut x = x;
        for _ in 0..n {
            x &= x.wrapping_sub(1);
        }
        x.trailing_zeros()
    }
}

/// An entry decoded: the group's cell and its slot.
#[derive(Clone, Copy)]
struct Entry {
    cell: u32,
    slot: u16,
}

impl Entry {
    /// Bits of the remainder still kept.
    fn kept(self) -> u32 {
        REM_BITS - self.slot.trailing_zeros()
    }
    /// The fraction's known prefix as the range `[lo, hi]` of a 64-bit fraction.
    fn range(self) -> (u64, u64) {
        let bits = CELL_BITS + self.kept();
        let prefix =
            (self.cell as u64) << self.kept() | (self.slot as u64 >> (SLOT_BITS - self.kept()));
        let lo = prefix << (64 - bits);
        (lo, lo | (u64::MAX >> bits))
    }
    fn matches(self, slot: u16) -> bool {
        ((self.slot ^ slot) >> self.slot.trailing_zeros()) >> 1 == 0
    }
}

struct Proto {
    segments: Vec<&'static mut [Line]>,
    lines: usize,
    level: u32,
    pass: u32,
    next: u64,
    overflow: Overflow,
    overflow_entries: usize,
    /// A growth step's buffers, kept between steps: its entries, and each target line's.
    scratch: (Vec<Entry>, [Vec<Entry>; 2 * G0 as usize]),
    added: u64,
    load: u64,
}

/// Where an item is looked for: a line, its bucket's cells, the item's cell and slot.
#[derive(Clone, Copy, Default)]
struct Place {
    line: u64,
    bucket: Bucket,
    cell: u32,
    slot: u16,
}

/// The cells a bucket spans: its first (the one holding its lower boundary) and how many (the
/// zeros its header starts with: a bucket of a larger group has fewer, and room for more entries).
#[derive(Clone, Copy, Default)]
struct Bucket {
    first: u32,
    cells: u32,
}

/// Bucket `k` of a group of `g`, from a table: a division on every lookup's path held it at
/// 0.67-0.70 of a reserved filter's speed at 2M (0.83 with the table).
fn bucket(k: u64, g: u64) -> Bucket {
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
    let (first, cells) = TABLE[g as usize][k as usize];
    Bucket {
        first: first as u32,
        cells: cells as u32,
    }
}

impl Proto {
    fn new(load: u64) -> Proto {
        let mut p = Proto {
            segments: Vec::new(),
            lines: 0,
            level: 0,
            pass: 0,
            next: 0,
            overflow: Overflow::default(),
            overflow_entries: 0,
            scratch: Default::default(),
            added: 0,
            load,
        };
        for _ in 0..G0 {
            p.push_line();
        }
        p
    }

    fn push_line(&mut self) -> u64 {
        if self.lines >> SEGMENT_LINES_LOG == self.segments.len() {
            self.segments.push(huge_segment());
        }
        self.lines += 1;
        self.lines as u64 - 1
    }

    fn line(&self, b: u64) -> &Line {
        &self.segments[(b >> SEGMENT_LINES_LOG) as usize]
            [(b & ((1 << SEGMENT_LINES_LOG) - 1)) as usize]
    }

    fn line_mut(&mut self, b: u64) -> &mut Line {
        &mut self.segments[(b >> SEGMENT_LINES_LOG) as usize]
            [(b & ((1 << SEGMENT_LINES_LOG) - 1)) as usize]
    }

    /// Bytes held: the lines in use (whole segments are a prototype's shortcut) and the
    /// overflow at 16 bits an entry plus 64 bits a bucket.
    fn bytes(&self) -> usize {
        self.lines * 64 + self.overflow_entries * 2 + self.overflow.len() * 8
    }

    #[inline(always)]
    fn place(&self, hash: u64) -> Place {
        // The group's address is the fraction's first `level` bits, first bit lowest, so that a
        // split gives each group the next bit as its top address bit.
        let u = hash;
        let reversed = u.reverse_bits();
        let j = reversed & ((1u64 << self.level) - 1);
        let slot_of =
            |f: u64| ((f >> (64 - CELL_BITS - REM_BITS)) as u16 & ((1 << REM_BITS) - 1)) << 1 | 1;
        if self.pass as u64 == G0 - 1 && j < self.next {
            // Already written as the next level's two groups of G0 buckets.
            let j = reversed & ((2u64 << self.level) - 1);
            let f = u << (self.level + 1);
            let k = ((f as u128 * G0 as u128) >> 64) as u64;
            return Place {
                line: physical(j, k, self.level + 1),
                bucket: bucket(k, G0),
                cell: (f >> (64 - CELL_BITS)) as u32,
                slot: slot_of(f),
            };
        }
        let f = u << self.level;
        let g = G0 + self.pass as u64 + (j < self.next) as u64;
        let k = ((f as u128 * g as u128) >> 64) as u64;
        Place {
            line: physical(j, k, self.level),
            bucket: bucket(k, g),
            cell: (f >> (64 - CELL_BITS)) as u32,
            slot: slot_of(f),
        }
    }

    fn probe(&self, p: Place) -> bool {
        let line = self.line(p.line);
        let local = p.cell - p.bucket.first;
        let header = line.header();
        // A zero put before the header stands for the cell before the first: the cell's run
        // starts after the `local`-th zero, with no branch for the first cell.
        let start = select0(header << 1, local);
        let count = (!(header >> start)).trailing_zeros();
        let first_entry = start - local;
        let at = p.bucket.cells + line.entries() + first_entry * SLOT_BITS;
        // Four slots compared at once, without a branch on the count (a cell holds 4 or fewer
        // entries but for one lookup in 250).
        let w = (at / 64) as usize;
        let pair = line.0[w] as u128 | (line.0[(w + 1).min(7)] as u128) << 64;
        let window = (pair >> (at % 64)) as u64;
        let mut hit = false;
        for i in 0..4 {
            let slot = (window >> (i * SLOT_BITS)) as u32 & SLOT_MASK as u32;
            let kept_from = (slot | 1 << SLOT_BITS).trailing_zeros();
            hit |= (((slot ^ p.slot as u32) >> kept_from) >> 1 == 0) & (i < count);
        }
        if hit {
            return true;
        }
        for e in first_entry + 4..first_entry + count {
            let slot = line.slot(p.bucket.cells + line.entries() + e * SLOT_BITS);
            if (Entry { cell: 0, slot }).matches(p.slot) {
                return true;
            }
        }
        if local >= line.spill_from() && p.line ^ 1 < self.lines as u64 {
            let buddy = self.line(p.line ^ 1);
            for i in 0..buddy.foreign() {
                let e = buddy.foreign_entry(i);
                if e.cell == p.cell && e.matches(p.slot) {
                    return true;
                }
            }
        }
        if local >= line.spill_from() && line.mapped() {
            if let Some(v) = self.overflow.get(&p.line) {
                return v.iter().any(|e| e.cell == p.cell && e.matches(p.slot));
            }
        }
        false
    }

    /// Of lookups of `hashes`, how many read the buddy line and how many the map as well.
    fn second_reads(&self, hashes: impl Iterator<Item = u64>) -> (usize, usize) {
        let (mut buddy, mut map) = (0, 0);
        for h in hashes {
            let p = self.place(h);
            let line = self.line(p.line);
            if p.cell - p.bucket.first >= line.spill_from() {
                buddy += 1;
                map += line.mapped() as usize;
            }
        }
        (buddy, map)
    }

    fn contains_batch(&self, hashes: &[u64], out: &mut Vec<bool>) {
        // Lines are requested AHEAD items before they are read: more requests at once than
        // the core has fill buffers for only queue.
        const AHEAD: usize = 32;
        let mut places = [Place::default(); 128];
        for (p, &h) in places.iter_mut().zip(hashes) {
            *p = self.place(h);
        }
        let places = &places[..hashes.len()];
        for p in places.iter().take(AHEAD) {
            prefetch(self.line(p.line));
        }
        for (i, p) in places.iter().enumerate() {
            if let Some(ahead) = places.get(i + AHEAD) {
                prefetch(self.line(ahead.line));
            }
            out.push(self.probe(*p));
        }
    }

    /// Adds a batch, each item's line requested `AHEAD` items before its add (the place is
    /// found again at the add, as a growth step in between may have moved it): 240-246 against
    /// 250-268 ns an add at 2M without the requests.
    fn add_batch(&mut self, hashes: &[u64]) {
        const AHEAD: usize = 16;
        for (i, &h) in hashes.iter().enumerate() {
            if let Some(&ahead) = hashes.get(i + AHEAD) {
                prefetch(self.line(self.place(ahead).line));
            }
            self.add(h);
        }
    }

    fn add(&mut self, hash: u64) -> bool {
        let p = self.place(hash);
        if self.probe(p) {
            return false;
        }
        self.insert(
            p.line,
            p.bucket,
            Entry {
                cell: p.cell,
                slot: p.slot,
            },
        );
        self.added += 1;
        if self.added > self.load * self.lines as u64 {
            self.expand_one();
        }
        true
    }

    fn insert(&mut self, b: u64, bk: Bucket, e: Entry) {
        let line = *self.line(b);
        let local = e.cell - bk.first;
        if local >= line.spill_from() {
            self.put_elsewhere(b, e);
            return;
        }
        let entries = line.entries();
        if bk.cells + (entries + 1) * (SLOT_BITS + 1) > line.own_end() {
            self.make_room(b, bk, e);
            return;
        }
        let start = select0(line.header() << 1, local);
        let index = start - local;
        let l = self.line_mut(b);
        let slots_at = bk.cells + entries + 1;
        l.insert_entry(start, slots_at + index * SLOT_BITS, e.slot as u64);
        l.set_trailer(
            entries + 1,
            line.foreign(),
            line.spill_mark(),
            line.mapped(),
        );
    }

    /// A full line sends the entries of its last cells elsewhere (from its highest cell
    /// holding entries, or from the new entry's cell when that is higher), so that only the
    /// lookups of those cells, not the whole line's, read a second place.
    fn make_room(&mut self, b: u64, bk: Bucket, e: Entry) {
        let mut own = Vec::with_capacity(40);
        own_entries(self.line(b), bk, &mut own);
        own.push(e);
        self.rebuild(b, bk, &mut own);
    }

    /// An entry of a spilled cell of line `b`: into its buddy (the other line of its 128-byte
    /// pair) when that has room, else into the map.
    fn put_elsewhere(&mut self, b: u64, e: Entry) {
        let buddy = b ^ 1;
        if buddy < self.lines as u64 {
            let other = *self.line(buddy);
            let fits =
                HEADER_CELLS + other.entries() * (SLOT_BITS + 1) + FOREIGN_BITS <= other.own_end();
            if fits && other.foreign() < MAX_FOREIGN {
                self.line_mut(buddy).push_foreign(e);
                return;
            }
        }
        let line = *self.line(b);
        self.line_mut(b)
            .set_trailer(line.entries(), line.foreign(), line.spill_mark(), true);
        self.overflow.entry(b).or_default().push(e);
        self.overflow_entries += 1;
    }

    /// Writes line `b`'s own part whole (its buddy's entries kept) with `entries`: sorted by
    /// cell, as many whole cells as fit, the entries of the cells after sent elsewhere.
    fn rebuild(&mut self, b: u64, bk: Bucket, entries: &mut Vec<Entry>) {
        // Entries arrive mostly in cell order (drained bucket by bucket), so a stable sort by
        // cell takes the runs (sorting by cell and slot cost 50-70 ns an add). An entry kept in
        // two buckets (its known prefix crossed a boundary) comes back twice when its group grows
        // again and both land here: one is kept, as identical entries answer alike (without
        // this, copies piled up: 35,340 entries in the map at 2M, not 21,768).
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
        let line = *self.line(b);
        let room = ((line.own_end() - bk.cells) / (SLOT_BITS + 1)) as usize;
        let (fit, spill_mark) = match entries.get(room) {
            None => (entries.len(), 0),
            Some(first_out) => {
                let from = first_out.cell;
                let fit = entries.partition_point(|e| e.cell < from);
                (fit, from - bk.first + 1)
            }
        };
        let mut words = line.0;
        for (w, word) in words.iter_mut().enumerate() {
            *word &= span(w, line.own_end(), 512);
        }
        let slots_at = bk.cells + fit as u32;
        for (i, e) in entries[..fit].iter().enumerate() {
            let one = i as u32 + e.cell - bk.first;
            words[(one / 64) as usize] |= 1 << (one % 64);
            put_slot(&mut words, slots_at + i as u32 * SLOT_BITS, e.slot as u64);
        }
        let l = self.line_mut(b);
        l.0 = words;
        l.set_trailer(fit as u32, line.foreign(), spill_mark, line.mapped());
        for &e in &entries[fit..] {
            self.put_elsewhere(b, e);
        }
    }

    /// Every entry of line `b` with its group cell, wherever it is.
    fn drain(&mut self, b: u64, bk: Bucket, out: &mut Vec<Entry>) {
        let line = *self.line(b);
        own_entries(&line, bk, out);
        if line.spill_mark() != 0 && b ^ 1 < self.lines as u64 {
            let buddy = self.line_mut(b ^ 1);
            for i in 0..buddy.foreign() {
                out.push(buddy.foreign_entry(i));
            }
            let end = buddy.own_end();
            for (w, word) in buddy.0.iter_mut().enumerate() {
                *word &= !span(w, end, FOREIGN_END);
            }
            buddy.set_trailer(buddy.entries(), 0, buddy.spill_mark(), buddy.mapped());
        }
        if let Some(v) = self.overflow.remove(&b) {
            self.overflow_entries -= v.len();
            out.extend(v);
        }
        // The line keeps its buddy's entries.
        let mut fresh = Line::default();
        for i in 0..line.foreign() {
            fresh.push_foreign(line.foreign_entry(i));
        }
        *self.line_mut(b) = fresh;
    }

    /// Grows the next group by a bucket: its entries drained, placed, and each line written
    /// whole (an entry at a time, each insert moving the line's bits, took 356 against 233 ns
    /// an add at 2M with groups of 2).
    fn expand_one(&mut self) {
        let j = self.next;
        let g = G0 + self.pass as u64;
        let (mut entries, mut targets) = std::mem::take(&mut self.scratch);
        entries.clear();
        for k in 0..g {
            let b = physical(j, k, self.level);
            self.drain(b, bucket(k, g), &mut entries);
        }
        let new = self.push_line();
        debug_assert_eq!(new, physical(j, g, self.level));
        // Each target line's entries: bucket `k` of the grown group, or (the last pass) bucket
        // `k` of the next level's group `j + top * 2^level` at index `top * G0 + k`.
        targets.iter_mut().for_each(Vec::clear);
        let last = self.pass as u64 == G0 - 1;
        for &e in &entries {
            let (lo, hi) = e.range();
            if !last {
                for k in buckets_of(lo, hi, g + 1) {
                    targets[k as usize].push(e);
                }
            } else {
                // The next level: the fraction's first bit picks the group, the cell takes the
                // first bit the entry kept (both halves for a void entry).
                let top = lo >> 63;
                let cell_hi = (e.cell << 1) & ((1 << CELL_BITS) - 1);
                let (first, second) = if e.kept() == 0 {
                    ((cell_hi, e.slot), Some((cell_hi | 1, e.slot)))
                } else {
                    let bit = (e.slot >> (SLOT_BITS - 1)) as u32 & 1;
                    ((cell_hi | bit, (e.slot << 1) & SLOT_MASK as u16), None)
                };
                for (cell, slot) in std::iter::once(first).chain(second) {
                    let aged = Entry { cell, slot };
                    let (lo, hi) = aged.range();
                    for k in buckets_of(lo, hi, G0) {
                        targets[(top * G0 + k) as usize].push(aged);
                    }
                }
            }
        }
        for (i, t) in targets.iter_mut().enumerate() {
            let i = i as u64;
            if !last && i <= g {
                self.rebuild(physical(j, i, self.level), bucket(i, g + 1), t);
            } else if last {
                let (top, k) = (i / G0, i % G0);
                let line = physical(j + (top << self.level), k, self.level + 1);
                self.rebuild(line, bucket(k, G0), t);
            }
        }
        self.scratch = (entries, targets);
        self.next += 1;
        if self.next == 1 << self.level {
            self.next = 0;
            self.pass += 1;
            if self.pass as u64 == G0 {
                self.pass = 0;
                self.level += 1;
            }
        }
    }
}

/// The entries a line holds itself, with their group cells, in header order.
fn own_entries(line: &Line, bk: Bucket, out: &mut Vec<Entry>) {
    let n = line.entries();
    let slots_at = bk.cells + n;
    // The header's ones, lowest first: the `i`-th one at bit `p` is an entry of local cell
    // `p - i` (a loop over the bits with a branch on each: 325 against 243-250 ns an add at 2M).
    let mut ones = line.header() & ((1u128 << (bk.cells + n)) - 1);
    for i in 0..n {
        let p = ones.trailing_zeros();
        ones &= ones - 1;
        out.push(Entry {
            cell: bk.first + p - i,
            slot: line.slot(slots_at + i * SLOT_BITS),
        });
    }
}

/// The most cells a bucket spans (one of a group of `G0`), for a line whose group is not at hand:
/// a buddy's room for a foreign entry is judged as if its header were this long.
const HEADER_CELLS: u32 = (1u32 << CELL_BITS).div_ceil(G0 as u32) + 1;

/// Large blocks straight from `mmap`, as the server's allocator gives them: Rust's system
/// allocator zeroes a block aligned past 16 bytes with a write (its `alloc_zeroed`), which
/// faults every page in at 4 KiB before the reserved filter's huge-page advice can act, so
/// its array ran on 4 KiB pages in this example (28,672 kB of `AnonHugePages` at 13.1M, the
/// prototype's segments only), where the server's (jemalloc's calloc) runs on 2 MiB ones.
struct FreshPages;

/// Blocks from this size on are mapped fresh.
const MAPPED_FROM: usize = 1 << 20;

// SAFETY: blocks of MAPPED_FROM bytes or more are anonymous private mappings (page-aligned,
// zeroed, covering any alignment up to a page, which no type here exceeds), freed by munmap of
// the same length; smaller ones are the system allocator's, freed by it. Each block is freed
// by the branch that made it, as both decide on the layout's size alone.
unsafe impl GlobalAlloc for FreshPages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() < MAPPED_FROM {
            // SAFETY: forwarded contract.
            return unsafe { System.alloc(layout) };
        }
        // SAFETY: a new anonymous mapping; MAP_FAILED is turned into the null refusal.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                layout.size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            p.cast()
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() < MAPPED_FROM {
            // SAFETY: forwarded contract.
            return unsafe { System.alloc_zeroed(layout) };
        }
        // SAFETY: forwarded contract; a fresh mapping is zeroed.
        unsafe { self.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() < MAPPED_FROM {
            // SAFETY: forwarded contract: the system allocator made it.
            return unsafe { System.dealloc(ptr, layout) };
        }
        // SAFETY: `alloc` mapped this block with this length.
        unsafe { libc::munmap(ptr.cast(), layout.size()) };
    }
}

#[global_allocator]
static ALLOCATOR: FreshPages = FreshPages;

/// A segment of lines on one 2 MiB page, as a reserved filter's array asks for: fresh pages
/// from `mmap` (an allocator's zeroing would touch them first and fix them at 4 KiB), aligned
/// to 2 MiB, never freed (a prototype's process ends).
fn huge_segment() -> &'static mut [Line] {
    let bytes = 64usize << SEGMENT_LINES_LOG;
    // SAFETY: an anonymous private mapping of twice the size, checked; the aligned half is
    // zeroed memory (a valid empty Line array) that is never unmapped, so it lives for the
    // program; madvise changes only how the kernel backs the pages.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            2 * bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert!(p != libc::MAP_FAILED);
        let aligned = (p as usize).next_multiple_of(bytes) as *mut libc::c_void;
        libc::madvise(aligned, bytes, libc::MADV_HUGEPAGE);
        std::slice::from_raw_parts_mut(aligned as *mut Line, 1 << SEGMENT_LINES_LOG)
    }
}

/// The buckets of a group of `g` that a fraction's range `[lo, hi]` falls in.
fn buckets_of(lo: u64, hi: u64, g: u64) -> std::ops::RangeInclusive<u64> {
    let bucket = |f: u64| ((f as u128 * g as u128) >> 64) as u64;
    bucket(lo)..=bucket(hi)
}

fn physical(j: u64, k: u64, level: u32) -> u64 {
    j + (k << level)
}

fn prefetch(line: &Line) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally; the pointer is a live line.
    unsafe {
        core::arch::x86_64::_mm_prefetch(
            line as *const Line as *const i8,
            core::arch::x86_64::_MM_HINT_T0,
        )
    };
}

fn url(prefix: &str, i: u64) -> Vec<u8> {
    format!("https://{prefix}.example.com/p/{i:012}").into_bytes()
}

/// A filter of the core filled with the items in batches of 1,000 (as BF.MADD sends them),
/// and its time per add.
fn filled(mut filter: Filter, items: u64) -> (Filter, f64) {
    let t = Instant::now();
    for b in (0..items).step_by(1000) {
        let batch: Vec<Vec<u8>> = (b..(b + 1000).min(items)).map(|i| url("q", i)).collect();
        filter.add_many(batch.iter().map(|v| v.as_slice()), 0, u64::MAX, true, |r| {
            r.is_ok()
        });
    }
    (filter, t.elapsed().as_nanos() as f64 / items as f64)
}

/// Nanoseconds per absent lookup, batches of 100 items of `record` bytes from `absent`.
fn lookup_ns(absent: &[u8], record: usize, mut batch: impl FnMut(&[u8]) -> usize) -> (f64, usize) {
    let t = Instant::now();
    let positives = absent.chunks(100 * record).map(&mut batch).sum();
    let lookups = absent.len() / record;
    (t.elapsed().as_nanos() as f64 / lookups as f64, positives)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let items: u64 = args.get(1).map_or(2_000_000, |s| s.parse().unwrap());
    let rounds: usize = args.get(2).map_or(5, |s| s.parse().unwrap());
    let load: u64 = args.get(3).map_or(29, |s| s.parse().unwrap());
    let seed = 7;
    let mut proto = Proto::new(load);
    let t = Instant::now();
    // Batches of 1,000, hashed first, as the core's filters are filled.
    for b in (0..items).step_by(1000) {
        let hashes: Vec<u64> = (b..(b + 1000).min(items))
            .map(|i| xxh3_64_with_seed(&url("q", i), seed))
            .collect();
        proto.add_batch(&hashes);
    }
    let proto_add_ns = t.elapsed().as_nanos() as f64 / items as f64;
    let spec = FilterSpec {
        error: 0.01,
        capacity: items,
        growth: Growth::Fixed,
        window: Window::Unbounded,
        refresh: true,
    };
    let (reserved, reserved_add_ns) = filled(
        Filter::Chain(Chain::new(&spec, seed, u64::MAX).unwrap()),
        items,
    );
    let growing = Filter::Growing(Box::new(Growing::new(0.01, 100, seed, u64::MAX).unwrap()));
    let (growing, growing_add_ns) = filled(growing, items);
    let mut out = Vec::new();
    for b in (0..items).step_by(100) {
        let h: Vec<u64> = (b..(b + 100).min(items))
            .map(|i| xxh3_64_with_seed(&url("q", i), seed))
            .collect();
        out.clear();
        proto.contains_batch(&h, &mut out);
        assert!(out.iter().all(|&x| x), "a false negative near item {b}");
    }
    // One buffer of equal-length items, as a bulk command's blob: no item is a cache miss of
    // its own.
    let record = url("absent", 0).len();
    let probes = 1_000_000;
    let absent: Vec<u8> = (0..probes).flat_map(|i| url("absent", i)).collect();
    let mut hashes = Vec::with_capacity(100);
    let mut proto_batch = |chunk: &[u8]| {
        hashes.clear();
        hashes.extend(chunk.chunks(record).map(|v| xxh3_64_with_seed(v, seed)));
        out.clear();
        proto.contains_batch(&hashes, &mut out);
        out.iter().filter(|&&x| x).count()
    };
    let core_batch = |f: &Filter, chunk: &[u8]| {
        let mut positives = 0;
        f.contains_many(chunk.chunks(record), 0, |p| positives += p as usize);
        positives
    };
    let (buddy_reads, map_reads) =
        proto.second_reads(absent.chunks(record).map(|v| xxh3_64_with_seed(v, seed)));
    let (mut ratio_proto, mut ratio_growing, mut ns) = (Vec::new(), Vec::new(), Vec::new());
    let mut fp = 0;
    for _ in 0..rounds {
        let (p, positives) = lookup_ns(&absent, record, &mut proto_batch);
        let (r, _) = lookup_ns(&absent, record, |c| core_batch(&reserved, c));
        let (g, _) = lookup_ns(&absent, record, |c| core_batch(&growing, c));
        fp = positives;
        ratio_proto.push(r / p);
        ratio_growing.push(r / g);
        ns.push(format!("{p:.1}/{g:.1}/{r:.1}"));
    }
    let per_item = |bytes: f64| bytes * 8.0 / items as f64;
    let reserved_bits = per_item(reserved.memory_usage() as f64);
    println!(
        "{items} items, load {load}: level {} pass {} next {}; bits per item: prototype {:.1}, growing {:.1}, reserved {reserved_bits:.1}; \
         overflow {} entries in {} of {} lines; absent lookups reading the buddy {:.2}%, the map {:.2}%; prototype's rate {:.3}%; ns per add: prototype {proto_add_ns:.0}, growing {growing_add_ns:.0}, \
         reserved {reserved_add_ns:.0}; ns per lookup (prototype/growing/reserved) {ns:?}: speed against reserved, medians: prototype {:.3}, growing {:.3}",
        proto.level,
        proto.pass,
        proto.next,
        per_item(proto.bytes() as f64),
        per_item(growing.memory_usage() as f64),
        proto.overflow_entries,
        proto.overflow.len(),
        proto.lines,
        buddy_reads as f64 * 100.0 / probes as f64,
        map_reads as f64 * 100.0 / probes as f64,
        fp as f64 * 100.0 / probes as f64,
        median(ratio_proto),
        median(ratio_growing),
    );
    println!(
        "huge pages: {} kB in the process, {} kB of them the prototype's segments",
        huge_page_kb(),
        proto.segments.len() * 2048
    );
}

/// The process's memory on transparent huge pages (`AnonHugePages` summed over
/// `/proc/self/smaps`), to tell whether the reserved filter's array got them too.
fn huge_page_kb() -> u64 {
    std::fs::read_to_string("/proc/self/smaps")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("AnonHugePages:"))
        .filter_map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .sum()
}
