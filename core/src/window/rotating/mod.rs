//! The second window layout: **rotating blocked generations**. New window filters have it;
//! filters of the first layout ([`crate::window::partitioned`]) keep theirs.
//!
//! A window of `W` items (or `T` seconds) is `r` generations of `W/r` items (or `T/r`
//! seconds); the filter holds `r + 1` of them, each a Bloom filter **blocked** so that an
//! item's `k` bits of one generation sit in one 64-byte line. Adds go to the newest
//! generation; when the clock (inserts, or Unix milliseconds) enters a new generation, the
//! oldest one is cleared and becomes the newest. A lookup is positive when any live generation
//! holds the item. Every item of the last `W` inserts (or `T` seconds) is in a live
//! generation, and an item leaves at most one generation (the **slack**, `1/r` window) after
//! its time.
//!
//! Generation number `x` holds the inserts (or milliseconds) `x·span .. (x+1)·span` and lives
//! in slot `x % (r+1)`; it is **live** at clock `c` while `c / span <= x + r`. A slot whose
//! number is past that is stale: reads skip it, and the write that reuses it clears it. So no
//! clock value, however far it jumps, can keep old generations alive.
//!
//! The slots' lines are **interleaved**: the `r + 1` lines of block `b` are consecutive, so a
//! lookup's lines are one run of memory, all requested at once; an add writes one of them.
//!
//! Sizing ([`design`]): every generation at `ε_g = 1 − (1 − 0.9ε)^(1/(r+1))`, so the window's
//! worst moment (every generation full) computes at 0.9 × the request; 1%: `r` 8, `k` 9,
//! 17.48 bits per window item; 0.1%: `r` 8, `k` 12, 24.78.
//!
//! Bursts (a time window only): a generation's base array takes items while the window's
//! computed rate, over every live array at its load, stays at most [`BASE_CEILING`] × the
//! request (its **limit**, fixed when the generation starts). Past it, the generation grows
//! an extra array of its own (a generation's items, then `EXPANSION` times the last, each at a
//! `1/(r+1)` share of the rate left under [`BURST_CEILING`]), and the extras go with their
//! generation.

pub(crate) mod builder;
mod describe;
pub mod design;
pub(crate) mod lookup;
pub(crate) mod rdb;
pub(crate) mod scandump;
pub(crate) mod write;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::defrag::Defrag;
use crate::hash::{reduce, ItemHash};
use crate::lines::{self, Line};
use crate::memory::{allocated, Block, OutOfMemory};
use crate::outcome::FilterError;
use crate::sizing::MAX_LINK_BITS;
use crate::spec::{FilterSpec, Window};
use crate::window::common::{WindowBase, HEADROOM, MAX_CLOCK};

use crate::blocked::{holds, pattern};
use design::{Design, BLOCK_BITS};

/// Share of the request the computed rate of a time window may reach in a burst, its extras
/// included: above [`HEADROOM`], which sizes the steady state, and below 1, so a measured rate
/// stays under the request.
pub const BURST_CEILING: f64 = (1.0 + HEADROOM) / 2.0;

/// Share of the request up to which a generation's base array takes items: between the two,
/// so that a generation a little over its share (a time window fed at its capacity) needs no
/// extra, and a burst's extras have a budget left.
pub const BASE_CEILING: f64 = (HEADROOM + BURST_CEILING) / 2.0;

/// Most extra arrays one generation grows in a burst.
pub const MAX_EXTRAS: usize = 32;

/// The generation number of a slot that never held one.
pub const EMPTY: u64 = u64::MAX;

/// An array a generation grew in a burst: a blocked Bloom filter of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Extra {
    /// Bits an item sets in its block.
    pub hashes: u32,
    /// Blocks (lines).
    pub blocks: u64,
    /// Items it is sized for.
    pub capacity: u64,
    /// Items added to it.
    pub load: u64,
    pub(crate) lines: Block<Line>,
}

impl Extra {
    pub(crate) fn new(hashes: u32, blocks: u64, capacity: u64) -> Result<Self, OutOfMemory> {
        Ok(Extra {
            hashes,
            blocks,
            capacity,
            load: 0,
            lines: lines::zeroed(blocks as usize)?,
        })
    }

    #[inline]
    pub(crate) fn line_of(&self, h: &ItemHash) -> usize {
        reduce(h.h1, self.blocks) as usize
    }

    pub(crate) fn holds(&self, h: &ItemHash) -> bool {
        holds(&self.lines[self.line_of(h)], &pattern(h.h2, self.hashes))
    }

    /// Its bits, as the formats store them.
    pub fn bytes(&self) -> &[u8] {
        lines::bytes(&self.lines)
    }
}

/// One of the `r + 1` places a generation lives in.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// The generation it holds ([`EMPTY`] before its first).
    pub generation: u64,
    /// Items in its base array (its lines in the interleaved storage).
    pub load: u64,
    /// The most its base array takes: a generation's items for a count window, the burst
    /// limit for a time window.
    pub limit: u64,
    /// Arrays it grew in a burst, oldest first.
    pub extras: Vec<Extra>,
}

impl Slot {
    pub(crate) fn empty() -> Self {
        Slot {
            generation: EMPTY,
            load: 0,
            limit: 0,
            extras: Vec::new(),
        }
    }

    /// Items its generation took.
    pub fn count(&self) -> u64 {
        self.extras
            .iter()
            .fold(self.load, |sum, e| sum.saturating_add(e.load))
    }
}

/// When a reader of a time window was last promised a signal that the window forgot
/// something: not part of the value (a copy, a load or a replica starts without one).
#[derive(Debug, Default)]
pub struct Watch(AtomicU64);

impl Clone for Watch {
    fn clone(&self) -> Self {
        Watch::default()
    }
}

impl PartialEq for Watch {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A window filter of the rotating layout. Built by [`Rotating::new`] or, from a serialised
/// form, by [`builder::RotatingBuilder`], which between them own its invariants.
#[derive(Debug, Clone, PartialEq)]
pub struct Rotating {
    /// What it is beyond its layout (window, seed, rate, capacity, growth, clock, count).
    pub(crate) base: WindowBase,
    /// Clock units per generation: inserts, or milliseconds.
    pub(crate) span: u64,
    /// Generations per window (`r`).
    pub(crate) generations: u32,
    /// Bits an item sets in its block of a base array.
    pub(crate) hashes: u32,
    /// Blocks of each generation's base array.
    pub(crate) blocks: u64,
    /// Items a generation is sized for: `ceil(capacity / r)`.
    pub(crate) generation_items: u64,
    /// Whether an add of an item the window holds refreshes it (false: `NOREFRESH`).
    pub(crate) refresh: bool,
    /// `r + 1` slots; generation `x` in slot `x % (r + 1)`.
    pub(crate) slots: Vec<Slot>,
    /// The base arrays, interleaved: line `b·(r+1) + s` is block `b` of slot `s`.
    pub(crate) base_lines: Block<Line>,
    /// Whether some slot has extras (a lookup then tests them too).
    pub(crate) has_extras: bool,
    pub(crate) watch: Watch,
}

impl Rotating {
    /// Moves its blocks (the slots, their extras, the base arrays) where the server's defrag
    /// allocator says.
    pub fn defrag(&mut self, d: &mut Defrag) {
        d.vec(&mut self.slots);
        for slot in &mut self.slots {
            d.vec(&mut slot.extras);
            for extra in &mut slot.extras {
                d.block(&mut extra.lines);
            }
        }
        d.block(&mut self.base_lines);
    }

    /// A new, empty window filter for `spec` (whose window is `Count` or `Time`), hashed under
    /// `seed`, within `max_bytes`.
    pub fn new(spec: &FilterSpec, seed: u64, max_bytes: u64) -> Result<Self, FilterError> {
        let design = Design::for_error(spec.error).ok_or(FilterError::CannotGrow)?;
        let base = WindowBase::for_spec(spec, seed);
        let r = u64::from(design.generations);
        let generation_items = spec.capacity.div_ceil(r);
        let span = match base.kind {
            Window::Time { .. } => base.window.div_ceil(r).max(1),
            Window::Unbounded | Window::Count => generation_items,
        };
        let blocks = design.array.blocks_for(generation_items);
        if blocks.saturating_mul(BLOCK_BITS) > MAX_LINK_BITS {
            return Err(FilterError::LinkTooLarge {
                needed: blocks.saturating_mul(BLOCK_BITS / 8),
            });
        }
        let needed = Self::base_bytes(blocks, design.generations);
        if needed > max_bytes {
            return Err(FilterError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        Ok(Rotating {
            base,
            span,
            generations: design.generations,
            hashes: design.array.hashes,
            blocks,
            generation_items,
            refresh: spec.refresh,
            slots: (0..=r).map(|_| Slot::empty()).collect(),
            base_lines: lines::zeroed((blocks * (r + 1)) as usize)?,
            has_extras: false,
            watch: Watch::default(),
        })
    }

    /// What it is beyond its layout: its window, seed, rate, capacity, growth, clock, count.
    pub fn base(&self) -> &WindowBase {
        &self.base
    }

    /// Bytes of the base arrays of `r + 1` generations of `blocks` blocks.
    pub(crate) fn base_bytes(blocks: u64, generations: u32) -> u64 {
        blocks
            .saturating_mul(u64::from(generations) + 1)
            .saturating_mul(BLOCK_BITS / 8)
    }

    /// The most an item outlives the window, in the same unit: one generation.
    pub fn slack(&self) -> u64 {
        self.span
    }

    /// Generations per window (`r`).
    pub fn generations(&self) -> u32 {
        self.generations
    }

    /// Bits an item sets in its block of a base array (`k`).
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Blocks of each generation's base array.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Whether an add of an item the window holds refreshes it (false: the `NOREFRESH` mode).
    pub fn refresh(&self) -> bool {
        self.refresh
    }

    /// The `r + 1` slots.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// The clock a read or write at server time `now` (Unix ms) uses: a count window's own;
    /// for a time window, `now`, but never before the latest write, so a clock that steps back
    /// neither resurrects forgotten items nor stamps new ones in the past.
    pub fn clock_at(&self, now: u64) -> u64 {
        match self.base.kind {
            Window::Count | Window::Unbounded => self.base.clock,
            Window::Time { .. } => self.base.clock.max(now.min(MAX_CLOCK)),
        }
    }

    /// The generation the clock `clock` is in.
    pub fn generation_at(&self, clock: u64) -> u64 {
        clock / self.span
    }

    /// Whether slot `s` holds a live generation when the newest is `newest`.
    pub fn is_live(&self, s: usize, newest: u64) -> bool {
        let g = self.slots[s].generation;
        g != EMPTY && g <= newest && g.saturating_add(u64::from(self.generations)) >= newest
    }

    /// The slots live when the newest generation is `newest`, as a bit mask.
    pub(crate) fn live_mask(&self, newest: u64) -> u32 {
        (0..self.slots.len())
            .filter(|&s| self.is_live(s, newest))
            .fold(0, |mask, s| mask | 1 << s)
    }

    /// Live generations at `now` (BF.INFO's "filters").
    pub fn live_generations(&self, now: u64) -> u64 {
        let newest = self.generation_at(self.clock_at(now));
        u64::from(self.live_mask(newest).count_ones())
    }

    /// Items the window holds at `now` (BF.CARD): for a count window, the last `capacity`
    /// inserts (every insert counts, a re-add that refreshed an item too); for a time window,
    /// the items of its live generations, the ones it still answers for. That count changes
    /// only with a write or when a generation leaves, the moments caching clients are told
    /// of ([`Rotating::next_forget`]), so a cached count is never stale. (Counting the
    /// oldest generation in proportion to its share still inside the window made the count
    /// fall with every millisecond, unseen by a client's cache.)
    pub fn card(&self, now: u64) -> u64 {
        let clock = self.clock_at(now);
        match self.base.kind {
            Window::Count | Window::Unbounded => clock.min(self.base.capacity),
            Window::Time { .. } => {
                let live = self.live_mask(self.generation_at(clock));
                (0..self.slots.len())
                    .filter(|&s| live & 1 << s != 0)
                    .fold(0u64, |sum, s| sum.saturating_add(self.slots[s].count()))
            }
        }
    }

    /// When (Unix ms) the next generation that holds items leaves a time window read at
    /// `now`: the moment its answers change with no write. None for a count window, or when no
    /// live generation holds items.
    pub fn next_forget(&self, now: u64) -> Option<u64> {
        if !matches!(self.base.kind, Window::Time { .. }) {
            return None;
        }
        let newest = self.generation_at(self.clock_at(now));
        let live = self.live_mask(newest);
        (0..self.slots.len())
            .filter(|&s| live & 1 << s != 0 && self.slots[s].count() > 0)
            .map(|s| {
                let gone = self.slots[s].generation + u64::from(self.generations) + 1;
                gone.saturating_mul(self.span)
            })
            .min()
    }

    /// Notes a read at `now` for caching clients: the moment (Unix ms) a signal must be sent
    /// at, when one is due and was not noted yet (the caller schedules it), else None. A noted
    /// moment still ahead is the next one (writes fill the newest generation, which leaves
    /// last), so the usual read costs one load and one comparison instead of a walk over the
    /// slots (`make bench-core`, `time_window_1M`: 62 ns a lookup, 25 ns more with the walk).
    pub fn note_read(&self, now: u64) -> Option<u64> {
        let noted = self.watch.0.load(Ordering::Relaxed);
        if noted != 0 && now < noted {
            return None;
        }
        let at = self.next_forget(now)?;
        (noted != at).then(|| {
            self.watch.0.store(at, Ordering::Relaxed);
            at
        })
    }

    /// Takes back the promise of a signal at `at` (the signal is being sent), so that the next
    /// reader asks for the next one. True when the signal is owed: this filter was promised one
    /// then, or a later one (a read after `at` but before the signal went noted the next
    /// moment, and `at`'s signal is owed all the same: without it, a count read before `at`
    /// stayed cached after its generation left). False when it was promised none (a key
    /// replaced since, whose readers the write told).
    pub fn unwatch(&self, at: u64) -> bool {
        match self
            .watch
            .0
            .compare_exchange(at, 0, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => true,
            Err(noted) => noted > at,
        }
    }

    /// Every bit array, as the formats store them: the interleaved base arrays, then each
    /// slot's extras, slot by slot.
    pub fn bit_arrays(&self) -> impl Iterator<Item = &[u8]> {
        let extras = self.slots.iter().flat_map(|s| s.extras.iter());
        std::iter::once(lines::bytes(&self.base_lines)).chain(extras.map(Extra::bytes))
    }

    /// Every bit array, in SCANDUMP order, for LOADCHUNK to fill.
    pub fn bit_arrays_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        let extras = self.slots.iter_mut().flat_map(|s| s.extras.iter_mut());
        std::iter::once(lines::bytes_mut(&mut self.base_lines))
            .chain(extras.map(|e| lines::bytes_mut(&mut e.lines)))
    }

    /// Bytes of every bit array.
    pub fn bit_bytes(&self) -> u64 {
        self.bit_arrays().map(|a| a.len() as u64).sum()
    }

    /// Bytes in memory: the structs and the bit arrays (MEMORY USAGE, BF.INFO's Size).
    pub fn memory_usage(&self) -> u64 {
        let extras: usize = self.slots.iter().map(|s| s.extras.capacity()).sum();
        (std::mem::size_of::<Rotating>()
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + extras * std::mem::size_of::<Extra>()) as u64
            + self.bit_bytes()
    }

    /// Bytes its allocations take from the allocator (not its own struct): the slots, their
    /// extras' records, and every bit array.
    pub fn heap_bytes(&self) -> u64 {
        let records = self.slots.iter().fold(
            allocated(self.slots.capacity() * std::mem::size_of::<Slot>()),
            |sum, s| sum + allocated(s.extras.capacity() * std::mem::size_of::<Extra>()),
        );
        self.bit_arrays()
            .fold(records, |sum, a| sum + allocated(a.len()))
    }

    /// Notes whether some slot has extras, where slots change.
    pub(crate) fn note_extras(&mut self) {
        self.has_extras = self.slots.iter().any(|s| !s.extras.is_empty());
    }
}
