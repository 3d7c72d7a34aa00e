//! Sliding-window filters: Bloom filters that forget. An age-partitioned Bloom filter (Shtul,
//! Baquero, Almeida, "Age-Partitioned Bloom Filters", 2020) with rsbloom's own clock and growth
//! rules.
//!
//! The filter is a row of equal-purpose slices, oldest first. A **generation** is the time one
//! slice is the newest. An add sets one bit in each of the `k` newest slices; a lookup answers
//! "present" when `k` consecutive slices all have the item's bit. When the newest generation
//! ends, a new empty slice becomes the newest, and the oldest slices are dropped once no item
//! inside the window needs them.
//!
//! One mechanism serves both kinds, through the **clock** the window is measured in:
//! - `SLIDING` (count window): the clock counts inserts; the window is `capacity` inserts, and a
//!   generation ends after `g = ceil(capacity / l)` of them.
//! - `WINDOW seconds` (time window): the clock is Unix time in milliseconds, as the primary saw
//!   it (it travels with what is replicated); the window is `seconds`, and a generation ends
//!   after `window / l`, or earlier when it has taken its share of items (a burst).
//!
//! Slice `j` is kept while the generation of slice `j + k - 1` (whose items have their oldest
//! bit in `j`) ended less than one window ago. So an item is never forgotten inside the window;
//! past it, it fades over `k` generations (its oldest slices go one by one), after which it
//! reads present no more often than a never-added item: the **slack**, `k` generations.
//!
//! Sizing ([`Design`]): `k`, `l` and the load per bit are searched so that the false-positive
//! rate, computed exactly over the slices' fills (the "k consecutive set" recurrence of the
//! paper, [`window_fpr`](crate::window::partitioned::design::window_fpr)), stays under [`HEADROOM`](crate::window::common::HEADROOM) × the request at the worst moment (just
//! before a shift), with the fewest bits per window item and `l >= 4k` (slack at most a quarter
//! window). `l` is a multiple of `k` so the slices pack into cache lines (below). 1%: k 11,
//! l 66, 19.9 bits per item; 0.1%: k 14, l 70, 26.4.
//!
//! Layout ([`Ring`]): the base slices live **within cache lines**. A lookup's `k` probes of a
//! run fall in `k` lines chosen from the item's hash alone, loaded together before any bit is
//! tested, so a lookup waits for memory once, not once per probe (`bench/window.py`, a 10 M
//! filter at 1%: BF.EXISTS at 0.49x a plain filter's commands/s with a slice per array, 0.86x
//! to 0.97x in lines). A single item prefetches its lines and then scans the runs
//! (`Sliding::exists`); a batch scans many items round-robin, each probe prefetched a turn
//! ahead (`Sliding::scan_many`). Slices grown for a burst, and filters saved by versions
//! before the layout, keep a bit array per slice.
//!
//! A time window that takes more than `capacity` items within a window ends generations early;
//! each shift re-checks the computed rate over the live slices and, when it would pass the
//! request, makes the new slice larger (`EXPANSION` times the capacity per burst generation,
//! half the fill per step) so the rate holds; the large slices age out with the burst. With
//! `NONSCALING`, or past the memory limit, the add is refused and nothing changes.

pub(crate) mod builder;
mod describe;
pub(crate) mod design;
pub mod limits;
pub(crate) mod lookup;
pub(crate) mod rdb;
pub(crate) mod ring;
pub(crate) mod scandump;
pub(crate) mod write;

#[cfg(test)]
mod tests;

use crate::defrag::Defrag;
use crate::memory::allocated;
use crate::outcome::FilterError;
use crate::sizing::MAX_LINK_BITS;
use crate::spec::{FilterSpec, Window};
use crate::window::common::{WindowBase, MAX_CLOCK};
use crate::window::partitioned::design::Design;
use crate::window::partitioned::limits::OPEN;
use crate::window::partitioned::ring::{Ring, Slice, Storage};

/// A sliding-window filter: the value behind a key created with `SLIDING` or `WINDOW`. Built by
/// [`Sliding::new`] or, from a serialised form, by [`crate::window::partitioned::builder::SlidingBuilder`], which
/// between them own its invariants.
#[derive(Debug, Clone, PartialEq)]
pub struct Sliding {
    /// What it is beyond its layout (window, seed, rate, capacity, growth, clock, count).
    pub(crate) base: WindowBase,
    /// Milliseconds a time window's generation lasts at most (0 for a count window).
    pub(super) span: u64,
    pub(super) hashes: u32,
    pub(super) generations: u32,
    /// The load capacity and bits of a base slice.
    pub(super) base_capacity: u64,
    pub(super) base_bits: u64,
    pub(super) next_generation: u64,
    /// Oldest first.
    pub(super) slices: Vec<Slice>,
    /// The blocked layout's storage of the base slices; None for a filter of the sliced
    /// layout (saved before the blocked one existed), whose slices each have their own array.
    pub(super) ring: Option<Ring>,
    /// Whether some slice has its own array (see [`Sliding::note_own_arrays`]).
    pub(super) own_arrays: bool,
}

impl Sliding {
    /// Moves its blocks (the slices' records and own arrays, the ring) where the server's
    /// defrag allocator says.
    pub fn defrag(&mut self, d: &mut Defrag) {
        d.vec(&mut self.slices);
        for slice in &mut self.slices {
            if let Storage::Own(words) = &mut slice.storage {
                d.block(words);
            }
        }
        if let Some(ring) = &mut self.ring {
            d.slice(&mut ring.group_salts);
            d.block(&mut ring.data);
        }
    }

    /// A new, empty window filter for `spec` (whose window is `Count` or `Time`), hashed under
    /// `seed`, whose steady state fits within `max_bytes`. It allocates its first slices on the
    /// first add.
    pub fn new(spec: &FilterSpec, seed: u64, max_bytes: u64) -> Result<Self, FilterError> {
        let design = Design::for_error(spec.error).ok_or(FilterError::CannotGrow)?;
        let base = WindowBase::for_spec(spec, seed);
        let span = match base.kind {
            Window::Unbounded | Window::Count => 0,
            Window::Time { .. } => base.window.div_ceil(u64::from(design.generations)),
        };
        let generation_items = spec.capacity.div_ceil(u64::from(design.generations));
        let base_capacity = generation_items
            .checked_mul(u64::from(design.hashes))
            .ok_or(FilterError::CannotGrow)?;
        let base_bits = design.slice_bits(base_capacity);
        let (k, l) = (u64::from(design.hashes), u64::from(design.generations));
        let (_, segment_bits) = Ring::shape(k, l).expect("designs take the ring's shape");
        let needed = Ring::bytes_for(k, base_bits, segment_bits);
        if base_bits > MAX_LINK_BITS {
            return Err(FilterError::LinkTooLarge {
                needed: (base_capacity as f64 / design.load_per_bit / 8.0) as u64,
            });
        }
        if needed > max_bytes {
            return Err(FilterError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        Ok(Sliding {
            base,
            span,
            hashes: design.hashes,
            generations: design.generations,
            base_capacity,
            base_bits,
            next_generation: 0,
            // The steady state's k + l slices, without the doubling of a growing VecDeque.
            slices: Vec::with_capacity((k + l) as usize),
            // Allocated now, as a plain filter's bits are: the memory is fixed at creation.
            ring: Some(Ring::new(k, l, base_bits)?),
            own_arrays: false,
        })
    }

    /// What it is beyond its layout: its window, seed, rate, capacity, growth, clock, count.
    pub fn base(&self) -> &WindowBase {
        &self.base
    }

    /// Notes whether some slice has its own array, for a lookup to prefetch those slices'
    /// words too. Called where slices come and go (a write's [`Sliding::make_room`], the
    /// decoder), so that a lookup on the ring alone skips a walk over every slice's header:
    /// 9% of `Sliding::exists`'s samples in perf (BF.EXISTS P32, 10 M at 1%, 77 slices).
    pub(super) fn note_own_arrays(&mut self) {
        self.own_arrays = self.slices.iter().any(|slice| !slice.in_ring());
    }

    /// The most an item outlives the window, in the same unit: `k` base generations. An item
    /// is found until the oldest of its `k` slices goes (at most one generation past the
    /// window), then reads present less and less often (a run of `k` set bits then needs
    /// newer slices' bits set by chance, about half of them are), and once its newest slice
    /// goes, no more often than a never-added item.
    pub fn slack(&self) -> u64 {
        let generation = match self.base.kind {
            Window::Count | Window::Unbounded => self.base_capacity / u64::from(self.hashes),
            Window::Time { .. } => self.span,
        };
        generation * u64::from(self.hashes)
    }

    /// Bits each item sets (`k`).
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Generations per window (`l`).
    pub fn generations(&self) -> u32 {
        self.generations
    }

    /// Every slice held, oldest first, live or not.
    pub fn slices(&self) -> &[Slice] {
        &self.slices
    }

    /// The ring, for a filter of the blocked layout.
    pub fn ring(&self) -> Option<&Ring> {
        self.ring.as_ref()
    }

    /// Every bit array, as the formats store them: the ring's (if any), then each slice's own
    /// array, oldest first (empty for a slice in the ring).
    pub fn bit_arrays(&self) -> impl Iterator<Item = &[u8]> {
        let ring = self.ring.iter().map(Ring::bytes);
        ring.chain(self.slices.iter().map(Slice::bytes))
    }

    /// Every bit array, in SCANDUMP order, for LOADCHUNK to fill.
    pub fn bit_arrays_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        let ring = self.ring.iter_mut().map(Ring::bytes_mut);
        ring.chain(self.slices.iter_mut().map(Slice::bytes_mut))
    }

    /// Bytes of every bit array.
    pub fn bit_bytes(&self) -> u64 {
        self.bit_arrays().map(|a| a.len() as u64).sum()
    }

    /// Bytes in memory: the structs and the bit arrays (MEMORY USAGE, BF.INFO's Size).
    pub fn memory_usage(&self) -> u64 {
        let ring_salts = self.ring.as_ref().map_or(0, |r| r.group_salts.len() * 8);
        (std::mem::size_of::<Sliding>()
            + self.slices.capacity() * std::mem::size_of::<Slice>()
            + ring_salts) as u64
            + self.bit_bytes()
    }

    /// Bytes its allocations take from the allocator (not its own struct): the slices' records,
    /// the ring's salts, and every bit array.
    pub fn heap_bytes(&self) -> u64 {
        let ring_salts = self.ring.as_ref().map_or(0, |r| r.group_salts.len() * 8);
        let records = allocated(self.slices.capacity() * std::mem::size_of::<Slice>())
            + allocated(ring_salts);
        self.bit_arrays()
            .fold(records, |sum, a| sum + allocated(a.len()))
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

    /// When slice `i`'s generation ended, or will end by the clock (the newest of a time
    /// window ends after its span; the newest of a count window, never by itself).
    pub(super) fn end_of(&self, i: usize) -> u64 {
        let slice = &self.slices[i];
        match (slice.ended, self.base.kind) {
            (OPEN, Window::Time { .. }) => slice.started.saturating_add(self.span),
            (ended, _) => ended,
        }
    }

    /// The oldest slice still needed at `clock`: slice `i` is, while the generation of slice
    /// `i + k - 1` (or the newest, for the newest `k - 1`) ended less than a window ago.
    /// Older slices are forgotten: a read skips them, the next write drops them.
    pub fn first_live(&self, clock: u64) -> usize {
        let n = self.slices.len();
        let k = self.hashes as usize;
        (0..n)
            .find(|&i| {
                self.end_of((i + k - 1).min(n - 1))
                    .saturating_add(self.base.window)
                    > clock
            })
            .unwrap_or(n)
    }

    /// Items added within the window at `now` (BF.CARD): the counts of the generations that
    /// ended less than a window ago, re-adds included.
    pub fn card(&self, now: u64) -> u64 {
        let clock = self.clock_at(now);
        (self.first_live(clock)..self.slices.len())
            .filter(|&i| self.end_of(i).saturating_add(self.base.window) > clock)
            .fold(0u64, |sum, i| sum.saturating_add(self.slices[i].count))
    }
}
