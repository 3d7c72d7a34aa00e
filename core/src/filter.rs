//! The value behind one Bloom key: a scaling chain (RedisBloom's filters), a window filter or a
//! growing filter (keys of the `MBbloom--` type), or a valkey-bloom filter (keys of valkey-bloom's `bloomfltr`
//! type). The commands reach all of them through [`Filter`]; each kind keeps its own rules.

use crate::bloom::chain::Chain;
use crate::defrag::Defrag;
use crate::describe::{Summary, WindowSummary};
use crate::growing::lines::LineFilter;
use crate::growing::Growing;
use crate::memory::allocated;
use crate::outcome::{AddOutcome, FilterError};
use crate::spec::{FilterSpec, Growth, Window};
use crate::valkey::ValkeyBloom;
use crate::window::partitioned::Sliding;
use crate::window::rotating::Rotating;

/// A Bloom filter of either kind. The chain, which a million small filters have, is inline and
/// the rarer kinds are boxed, so the value a key holds is one 48-byte block (with the largest
/// kind inline it was 208, in jemalloc's 224-byte class: 176 bytes more per key than
/// RedisBloom's, `tests/memory.rs`).
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// A scaling chain of links (RedisBloom's filters).
    Chain(Chain),
    /// A window filter of the first layout (age-partitioned), loaded from data saved before
    /// the rotating one.
    Sliding(Box<Sliding>),
    /// A window filter of the rotating layout: every new one.
    Rotating(Box<Rotating>),
    /// A valkey-bloom filter, whose key keeps valkey-bloom's type (`bloomfltr`) and format.
    Valkey(Box<ValkeyBloom>),
    /// A growing filter of the chunk layout, loaded from data saved before the one-line
    /// layout: never sized, one chunk per lookup at any size.
    Growing(Box<Growing>),
    /// A growing filter of the one-line layout (`EXPANDABLE`: every new one): never sized,
    /// one 64-byte line per lookup at any size.
    Lines(Box<LineFilter>),
}

impl Filter {
    /// Moves its blocks where the server's defrag allocator says: a boxed kind's own block,
    /// then the kind's (the filter's own block is the key's, which the module moves).
    pub fn defrag(&mut self, d: &mut Defrag) {
        match self {
            Filter::Chain(c) => c.defrag(d),
            Filter::Sliding(s) => {
                d.boxed(s);
                s.defrag(d);
            }
            Filter::Rotating(r) => {
                d.boxed(r);
                r.defrag(d);
            }
            Filter::Valkey(v) => {
                d.boxed(v);
                v.defrag(d);
            }
            Filter::Growing(g) => {
                d.boxed(g);
                g.defrag(d);
            }
            Filter::Lines(f) => {
                d.boxed(f);
                f.defrag(d);
            }
        }
    }

    /// A new filter for `spec`, hashed under `seed`, within `max_bytes`.
    pub fn new(spec: &FilterSpec, seed: u64, max_bytes: u64) -> Result<Self, FilterError> {
        match spec.window {
            Window::Unbounded if spec.growth == Growth::Expandable => {
                LineFilter::new(spec.error, spec.capacity, seed, max_bytes).map(Filter::from)
            }
            Window::Unbounded => Chain::new(spec, seed, max_bytes).map(Filter::Chain),
            Window::Count | Window::Time { .. } => {
                Rotating::new(spec, seed, max_bytes).map(Filter::from)
            }
        }
    }

    /// What the filter remembers: `Unbounded` for a chain, a window filter's window.
    pub fn window(&self) -> Window {
        match self {
            Filter::Chain(_) | Filter::Valkey(_) | Filter::Growing(_) | Filter::Lines(_) => {
                Window::Unbounded
            }
            Filter::Sliding(s) => s.base().kind(),
            Filter::Rotating(r) => r.base().kind(),
        }
    }

    /// A time window's clock (the latest write's time), whose writes depend on the clock (and
    /// so replicate it); None for the other kinds.
    pub fn time_clock(&self) -> Option<u64> {
        match self {
            Filter::Sliding(s) if matches!(s.base().kind(), Window::Time { .. }) => {
                Some(s.base().clock())
            }
            Filter::Rotating(r) if matches!(r.base().kind(), Window::Time { .. }) => {
                Some(r.base().clock())
            }
            _ => None,
        }
    }

    /// Checks items in order at server time `now` (Unix ms), passing each answer on.
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        now: u64,
        answer: impl FnMut(bool),
    ) {
        match self {
            Filter::Chain(c) => c.contains_many(items, answer),
            Filter::Sliding(s) => s.contains_many(items, now, answer),
            Filter::Rotating(r) => r.contains_many(items, now, answer),
            Filter::Valkey(v) => v.contains_many(items, answer),
            Filter::Growing(g) => g.contains_many(items, answer),
            Filter::Lines(f) => f.contains_many(items, answer),
        }
    }

    /// Adds items in order at server time `now`, passing each outcome to `outcome`, which
    /// returns whether to go on. With `refresh` false (`NOREFRESH` on this call), an item a
    /// window holds answers `Present` and stays as it was; a window filter whose mode is
    /// `NOREFRESH` does so whatever `refresh` says. Filters without a window never refresh.
    pub fn add_many<'a>(
        &mut self,
        items: impl ExactSizeIterator<Item = &'a [u8]>,
        now: u64,
        max_bytes: u64,
        refresh: bool,
        outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        match self {
            Filter::Chain(c) => c.add_many(items, max_bytes, outcome),
            Filter::Sliding(s) => s.add_many(items, now, max_bytes, refresh, outcome),
            Filter::Rotating(r) => r.add_many(items, now, max_bytes, refresh, outcome),
            Filter::Valkey(v) => v.add_many(items, max_bytes, outcome),
            Filter::Growing(g) => g.add_many(items, max_bytes, outcome),
            Filter::Lines(f) => f.add_many(items, max_bytes, outcome),
        }
    }

    /// BF.INFO's fields (but `Size`) at server time `now`, as the kind gives them.
    pub fn summary(&self, now: u64) -> Summary {
        match self {
            Filter::Chain(c) => c.summary(),
            Filter::Sliding(s) => s.summary(now),
            Filter::Rotating(r) => r.summary(now),
            Filter::Valkey(v) => v.summary(),
            Filter::Growing(g) => g.summary(),
            Filter::Lines(f) => f.summary(),
        }
    }

    /// `BF.INFO key WINDOW` at server time `now`; None for a filter without a window.
    pub fn window_summary(&self, now: u64) -> Option<WindowSummary> {
        match self {
            Filter::Chain(_) | Filter::Valkey(_) | Filter::Growing(_) | Filter::Lines(_) => None,
            Filter::Sliding(s) => Some(s.window_summary(now)),
            Filter::Rotating(r) => Some(r.window_summary(now)),
        }
    }

    /// BF.DEBUG's lines at server time `now`, as the kind gives them.
    pub fn debug_lines(&self, now: u64) -> Vec<String> {
        match self {
            Filter::Chain(c) => c.debug_lines(),
            Filter::Sliding(s) => s.debug_lines(now),
            Filter::Rotating(r) => r.debug_lines(now),
            Filter::Valkey(v) => v.debug_lines(),
            Filter::Growing(g) => g.debug_lines(),
            Filter::Lines(f) => f.debug_lines(),
        }
    }

    /// BF.CARD: items inserted; for a window filter, those inside the window at `now`.
    pub fn card(&self, now: u64) -> u64 {
        match self {
            Filter::Chain(c) => c.items(),
            Filter::Sliding(s) => s.card(now),
            Filter::Rotating(r) => r.card(now),
            Filter::Valkey(v) => v.items(),
            Filter::Growing(g) => g.items(),
            Filter::Lines(f) => f.items(),
        }
    }

    /// Items ever added, for the module's item gauge (it changes only by adds).
    pub fn added(&self) -> u64 {
        match self {
            Filter::Chain(c) => c.items(),
            Filter::Sliding(s) => s.base().added(),
            Filter::Rotating(r) => r.base().added(),
            Filter::Valkey(v) => v.items(),
            Filter::Growing(g) => g.items(),
            Filter::Lines(f) => f.items(),
        }
    }

    /// Bytes in memory (MEMORY USAGE, BF.INFO's Size).
    pub fn memory_usage(&self) -> u64 {
        match self {
            Filter::Chain(c) => c.memory_usage(),
            Filter::Sliding(s) => s.memory_usage(),
            Filter::Rotating(r) => r.memory_usage(),
            Filter::Valkey(v) => v.memory_usage(),
            Filter::Growing(g) => allocated(std::mem::size_of::<Growing>()) + g.heap_bytes(),
            Filter::Lines(f) => allocated(std::mem::size_of::<LineFilter>()) + f.heap_bytes(),
        }
    }

    /// Bytes its allocations take from the allocator, its own block included (a key holds it
    /// boxed): what `MEMORY USAGE` reports, with the server's own record of the value.
    pub fn heap_bytes(&self) -> u64 {
        allocated(std::mem::size_of::<Filter>())
            + match self {
                Filter::Chain(c) => c.heap_bytes(),
                Filter::Sliding(s) => allocated(std::mem::size_of::<Sliding>()) + s.heap_bytes(),
                Filter::Rotating(r) => allocated(std::mem::size_of::<Rotating>()) + r.heap_bytes(),
                Filter::Valkey(v) => allocated(std::mem::size_of::<ValkeyBloom>()) + v.heap_bytes(),
                Filter::Growing(g) => allocated(std::mem::size_of::<Growing>()) + g.heap_bytes(),
                Filter::Lines(f) => allocated(std::mem::size_of::<LineFilter>()) + f.heap_bytes(),
            }
    }

    /// Bytes of bit storage.
    pub fn bit_bytes(&self) -> u64 {
        match self {
            Filter::Chain(c) => c.bit_bytes(),
            Filter::Sliding(s) => s.bit_bytes(),
            Filter::Rotating(r) => r.bit_bytes(),
            Filter::Valkey(v) => v.bit_bytes(),
            Filter::Growing(g) => g.bit_bytes(),
            Filter::Lines(f) => f.counted_bytes(),
        }
    }

    /// Every bit array, in the order SCANDUMP streams them (none for a growing filter, whose
    /// stream is its chunk records or pieces).
    pub fn bit_arrays(&self) -> Vec<&[u8]> {
        match self {
            Filter::Chain(c) => c.links().iter().map(|l| l.bytes()).collect(),
            Filter::Sliding(s) => s.bit_arrays().collect(),
            Filter::Rotating(r) => r.bit_arrays().collect(),
            Filter::Valkey(v) => v.filters().iter().map(|f| f.bits()).collect(),
            Filter::Growing(_) | Filter::Lines(_) => Vec::new(),
        }
    }

    /// Every bit array, writable (LOADCHUNK fills them; any bits make a valid filter).
    pub fn bit_arrays_mut(&mut self) -> Vec<&mut [u8]> {
        match self {
            Filter::Chain(c) => c.links_mut().iter_mut().map(|l| l.bytes_mut()).collect(),
            Filter::Sliding(s) => s.bit_arrays_mut().collect(),
            Filter::Rotating(r) => r.bit_arrays_mut().collect(),
            Filter::Valkey(v) => v.filters_mut().iter_mut().map(|f| f.bits_mut()).collect(),
            Filter::Growing(_) | Filter::Lines(_) => Vec::new(),
        }
    }
}

impl From<Chain> for Filter {
    fn from(chain: Chain) -> Self {
        Filter::Chain(chain)
    }
}

impl From<Sliding> for Filter {
    fn from(sliding: Sliding) -> Self {
        Filter::Sliding(Box::new(sliding))
    }
}

impl From<Rotating> for Filter {
    fn from(rotating: Rotating) -> Self {
        Filter::Rotating(Box::new(rotating))
    }
}

impl From<Growing> for Filter {
    fn from(growing: Growing) -> Self {
        Filter::Growing(Box::new(growing))
    }
}

impl From<LineFilter> for Filter {
    fn from(f: LineFilter) -> Self {
        Filter::Lines(Box::new(f))
    }
}

impl From<ValkeyBloom> for Filter {
    fn from(valkey: ValkeyBloom) -> Self {
        Filter::Valkey(Box::new(valkey))
    }
}
