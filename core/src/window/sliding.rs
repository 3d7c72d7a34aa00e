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
//! paper, [`window_fpr`]), stays under [`HEADROOM`] × the request at the worst moment (just
//! before a shift), with the fewest bits per window item and `l >= 4k` (slack at most a quarter
//! window). `l` is a multiple of `k` so the slices pack into cache lines (below). 1%: k 11,
//! l 66, 19.9 bits per item; 0.1%: k 14, l 70, 26.4.
//!
//! Layout ([`Ring`]): the base slices live **within cache lines**. A lookup's `k` probes of a
//! run fall in `k` lines chosen from the item's hash alone, loaded together before any bit is
//! tested, so a lookup waits for memory once, not once per probe (`bench/window.py`, a 10 M
//! filter at 1%: BF.EXISTS at 0.49x a plain filter's commands/s with a slice per array, 0.86x
//! to 0.97x in lines). A single item prefetches its lines and then scans the runs
//! ([`Sliding::exists`]); a batch scans many items round-robin, each probe prefetched a turn
//! ahead ([`Sliding::scan_many`]). Slices grown for a burst, and filters saved by versions
//! before the layout, keep a bit array per slice.
//!
//! A time window that takes more than `capacity` items within a window ends generations early;
//! each shift re-checks the computed rate over the live slices and, when it would pass the
//! request, makes the new slice larger (`EXPANSION` times the capacity per burst generation,
//! half the fill per step) so the rate holds; the large slices age out with the burst. With
//! `NONSCALING`, or past the memory limit, the add is refused and nothing changes.

use crate::bloom::chain::{AddOutcome, ChainError};
use crate::bloom::link::{words_as_bytes, words_as_bytes_mut};
use crate::hash::{reduce, ItemHash};
use crate::hints;
use crate::sizing::{MAX_LINK_BITS, WORD_BITS};
use crate::spec::{FilterSpec, Growth, Window};

/// Share of the requested rate the computed worst-case rate may reach: room for sampling
/// noise, so a measured rate stays under the request (as NONSCALING chains have).
pub const HEADROOM: f64 = 0.9;

/// Generations per window, at least this many times `k`: an item is forgotten within `k`
/// generations after it leaves the window (the slack), so the slack is at most a quarter
/// window.
pub const MIN_SLACK_DIVISOR: u32 = 4;

/// Generations per window the search goes up to (the next multiple of `k`) when `4k` is
/// fewer: each one is a slice an absent item's scan may test, for a fraction of a bit per
/// item less.
pub const MAX_GENERATIONS: u32 = 64;

/// Most bits an item sets (`k`). A window filter's rate needs about `log2(1/error)` of them:
/// 48 is an error rate near 1e-14, and every add sets that many bits in different slices.
pub const MAX_HASHES: u32 = 48;

/// Most slices a filter may hold (the growth of a time window included).
pub const MAX_SLICES: usize = 1 << 12;

/// Most times a new slice's fill may be halved to hold the rate (see [`Sliding`]'s growth).
const MAX_FILL_STEPS: u32 = 40;

/// `ended` of the newest slice: its generation is still open.
pub const OPEN: u64 = u64::MAX;

/// The latest clock a filter takes (2^62: about 146 million years of milliseconds, or that
/// many inserts): every time plus a window stays far from overflowing, so no sum saturates
/// into "expired at once". Later times are taken as this one.
pub const MAX_CLOCK: u64 = 1 << 62;

/// Whether a window filter can honour `error`: it needs about `log2(1/error)` bits per item,
/// at most [`MAX_HASHES`].
pub fn supports_error(error: f64) -> bool {
    error > 0.0 && error < 1.0 && (1.0 / error).log2().ceil() <= f64::from(MAX_HASHES)
}

/// The kind of window, which decides what the clock counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `SLIDING`: the clock counts inserts.
    Count,
    /// `WINDOW`: the clock is Unix time in milliseconds.
    Time,
}

/// e^-x for x >= 0, from additions and multiplications only, so that every build on every
/// machine (a primary and its replica, a save and a later load) computes the same sizes: the
/// platform's `exp` may differ in the last bit.
fn exp_neg(x: f64) -> f64 {
    // NaN too.
    if x.is_nan() || x >= 700.0 {
        return 0.0;
    }
    // e^-x = (e^(-x/2^s))^(2^s) with x/2^s < 1/16, where 12 Taylor terms are exact to f64.
    let mut s = 0;
    let mut y = x;
    while y > 0.0625 {
        y *= 0.5;
        s += 1;
    }
    let mut term = 1.0;
    let mut sum = 1.0;
    for i in 1..=12 {
        term *= -y / f64::from(i);
        sum += term;
    }
    for _ in 0..s {
        sum *= sum;
    }
    sum
}

/// The hash multiplier of slice number `generation`: odd, and far from those of its
/// neighbours (SplitMix64's finaliser of the number).
fn salt(generation: u64) -> u64 {
    let mut x = generation.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) | 1
}

/// The 64 bits of an item's hash that pick its bit in every slice.
#[inline(always)]
fn key(h: &ItemHash) -> u64 {
    h.h1 ^ h.h2.rotate_left(32)
}

/// The fill (share of set bits) of a slice of `bits` bits after `load` items each set one bit.
fn fill(load: u64, bits: u64) -> f64 {
    1.0 - exp_neg(load as f64 / bits as f64)
}

/// The false-positive rate of a lookup over slices of the given fills (in lookup order): the
/// probability that `k` consecutive slices all have the probed bit set, slices independent.
/// A recurrence over the length of the current run of set bits.
pub fn window_fpr(k: u32, fills: impl IntoIterator<Item = f64>) -> f64 {
    let k = k as usize;
    let mut runs = vec![0.0f64; k];
    runs[0] = 1.0;
    let mut found = 0.0;
    for p in fills {
        let mut next = vec![0.0f64; k];
        for (len, &prob) in runs.iter().enumerate() {
            if prob == 0.0 {
                continue;
            }
            if len + 1 == k {
                found += prob * p;
            } else {
                next[len + 1] += prob * p;
            }
            next[0] += prob * (1.0 - p);
        }
        runs = next;
    }
    found
}

/// The shape of a window filter: hashes, generations per window, and how full a slice gets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    /// Bits an item sets, one per slice: `k`.
    pub hashes: u32,
    /// Generations per window: `l`.
    pub generations: u32,
    /// Items per bit a slice takes before a shift (its load at capacity over its bits).
    pub load_per_bit: f64,
}

impl Design {
    /// The worst-case computed rate of this design: just before a shift, slice `i` (newest
    /// first) of the `k + l` has taken `min(i + 1, k)` generations.
    fn worst_fpr(&self, generation_items: u64) -> f64 {
        let k = u64::from(self.hashes);
        let capacity = k * generation_items;
        let bits = self.slice_bits(capacity);
        let slices = u64::from(self.hashes + self.generations);
        window_fpr(
            self.hashes,
            (0..slices).map(|i| fill((i + 1).min(k) * generation_items, bits)),
        )
    }

    /// Bits of a base slice of `capacity` loads: whole segments of the ring.
    fn slice_bits(&self, capacity: u64) -> u64 {
        match Ring::shape(self.hashes.into(), self.generations.into()) {
            Some((_, segment_bits)) => Ring::slice_bits(capacity, self.load_per_bit, segment_bits),
            None => slice_bits(capacity, self.load_per_bit),
        }
    }

    /// Bits per window item, the bits a ring's lines leave unused included.
    pub fn bits_per_item(&self) -> f64 {
        let (k, l) = (f64::from(self.hashes), f64::from(self.generations));
        let used = Ring::shape(self.hashes.into(), self.generations.into())
            .map_or(1.0, |(segments, bits)| {
                (segments * bits) as f64 / LINE_BITS as f64
            });
        (k + l) * k / (l * self.load_per_bit * used)
    }

    /// The design with the fewest bits per item whose worst-case rate is at most
    /// [`HEADROOM`] × `error`; None when the rate needs more than [`MAX_HASHES`] bits per item.
    /// Takes a few milliseconds (a search over `k`, `l` and the fill), at creation only.
    pub fn for_error(error: f64) -> Option<Design> {
        if !(error > 0.0 && error < 1.0) {
            return None;
        }
        let target = error * HEADROOM;
        // The optimum sits a few hashes above log2(1/error).
        if !supports_error(error) {
            return None;
        }
        let centre = (1.0 / error).log2().ceil() as i64;
        let mut best: Option<Design> = None;
        for k in (centre - 3).max(1)..=(centre + 6).min(i64::from(MAX_HASHES)) {
            let k = k as u32;
            // The slack is k generations: at least 4k of them per window keep it at a
            // quarter window at most. The ring needs a multiple of k.
            let fewest = (MIN_SEGMENTS - 1) * k;
            let most = fewest.max(MAX_GENERATIONS.next_multiple_of(k));
            for l in (fewest..=most).step_by(k as usize) {
                let mut design = Design {
                    hashes: k,
                    generations: l,
                    load_per_bit: 0.0,
                };
                // The rate rises with the load per bit: bisect for the largest that fits.
                let (mut lo, mut hi) = (0.0f64, 4.0f64);
                for _ in 0..30 {
                    design.load_per_bit = (lo + hi) / 2.0;
                    // Sized on a large generation, where rounding to words is negligible.
                    if design.worst_fpr(1 << 20) <= target {
                        lo = design.load_per_bit;
                    } else {
                        hi = design.load_per_bit;
                    }
                }
                design.load_per_bit = lo;
                if lo > 0.0 && best.is_none_or(|b| design.bits_per_item() < b.bits_per_item()) {
                    best = Some(design);
                }
            }
        }
        best
    }
}

/// Bits of a slice taking `capacity` loads at `load_per_bit`, in whole words.
fn slice_bits(capacity: u64, load_per_bit: f64) -> u64 {
    let bits = (capacity as f64 / load_per_bit).ceil();
    if bits.is_nan() || bits >= MAX_LINK_BITS as f64 {
        return MAX_LINK_BITS + WORD_BITS;
    }
    (bits as u64).max(1).div_ceil(WORD_BITS) * WORD_BITS
}

/// One cache line of a [`Ring`]: 512 bits, aligned so that a group's line is one miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
struct Line([u64; 8]);

/// Bits in a [`Line`].
const LINE_BITS: u64 = 512;

/// Fewest and most generations per window, in multiples of `k`, the blocked layout takes:
/// `k + l` slices fill lines of `(k + l) / k` segments (5 to 8 of 102 to 64 bits).
const MIN_SEGMENTS: u32 = MIN_SLACK_DIVISOR + 1;

/// The hash multiplier of group `g`'s line choice (numbers no generation reaches).
fn group_salt(group: u64) -> u64 {
    salt(group | 1 << 63)
}

/// The blocked layout's storage of the base slices: **slices within cache lines**.
///
/// Slice number `g` belongs to group `g % k`; each group owns `lines` consecutive cache
/// lines, and each line holds one segment of `segment` bits for each of the group's
/// `(k + l) / k` slices (slice `g` in segment `(g / k) % segments`). An item picks one line
/// per group, the same for every slice of the group, and one bit in its slice's segment.
///
/// A run of `k` consecutive slices holds one slice of every group, so a lookup loads `k`
/// lines, all at once, and then tests bits that are in cache: one wait for memory instead of
/// a chain of them (a slice per array costs a miss per probe, and the probes of a run scan
/// depend on each other). The slices of one group are `k` generations apart, so no item has a
/// bit in two of them: the bits an item's probes meet in different slices come from different
/// items, and the false-positive rate is the sliced layout's (the segment an item picks is as
/// full as the slice on average).
#[derive(Debug, Clone, PartialEq)]
pub struct Ring {
    groups: u64,
    segments: u64,
    segment_bits: u64,
    /// Lines per group.
    lines: u64,
    group_salts: Box<[u64]>,
    data: Box<[Line]>,
}

impl Ring {
    /// The segments per line and bits per segment of a filter of `k` hashes and `l`
    /// generations, when `l` is a multiple of `k` the layout takes.
    pub fn shape(hashes: u64, generations: u64) -> Option<(u64, u64)> {
        if hashes == 0 || !generations.is_multiple_of(hashes) {
            return None;
        }
        let segments = (hashes + generations) / hashes;
        (segments > u64::from(MIN_SLACK_DIVISOR) && segments <= LINE_BITS)
            .then(|| (segments, LINE_BITS / segments))
    }

    /// Bits of a ring slice holding `capacity` loads at `load_per_bit`: whole segments.
    fn slice_bits(capacity: u64, load_per_bit: f64, segment_bits: u64) -> u64 {
        let bits = (capacity as f64 / load_per_bit).ceil();
        if bits.is_nan() || bits >= MAX_LINK_BITS as f64 {
            return MAX_LINK_BITS + WORD_BITS;
        }
        (bits as u64).max(1).div_ceil(segment_bits) * segment_bits
    }

    /// A zeroed ring for slices of `slice_bits` bits (a multiple of the segment).
    pub(super) fn new(hashes: u64, generations: u64, slice_bits: u64) -> Self {
        let (segments, segment_bits) = Ring::shape(hashes, generations).expect("a ring shape");
        let lines = slice_bits / segment_bits;
        let count = (hashes * lines) as usize;
        let layout = std::alloc::Layout::array::<Line>(count.max(1)).expect("a ring's size");
        // SAFETY: the layout is non-zero in size; a Line is eight u64s, for which all-zero
        // bytes are a valid value, so the zeroed block is `count` initialised Lines, owned by
        // the Box from here on (allocated by the global allocator, as Box frees it).
        let mut data = unsafe {
            let block = std::alloc::alloc_zeroed(layout).cast::<Line>();
            if block.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(block, count.max(1)))
        };
        hints::advise_huge_pages(&mut data);
        Ring {
            groups: hashes,
            segments,
            segment_bits,
            lines,
            group_salts: (0..hashes).map(group_salt).collect(),
            data,
        }
    }

    /// Bytes of a ring for `hashes` groups of slices of `slice_bits` bits.
    pub(super) fn bytes_for(hashes: u64, slice_bits: u64, segment_bits: u64) -> u64 {
        (slice_bits / segment_bits).saturating_mul(hashes) * (LINE_BITS / 8)
    }

    /// Where slice number `generation` lives.
    fn place(&self, generation: u64) -> Storage {
        Storage::Ring {
            group: (generation % self.groups) as u32,
            offset: ((generation / self.groups) % self.segments * self.segment_bits) as u32,
        }
    }

    /// Every slice a ring holds at once: `k + l`.
    fn slots(&self) -> u64 {
        self.groups * self.segments
    }

    fn words(&self) -> &[u64] {
        // SAFETY: a Line is `repr(C)` over [u64; 8] with no padding, so the lines are exactly
        // `8 * len` initialised u64s.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr().cast::<u64>(), self.data.len() * 8) }
    }

    fn words_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `words`; any u64 is a valid value, so writes cannot break a Line.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.data.as_mut_ptr().cast::<u64>(),
                self.data.len() * 8,
            )
        }
    }

    /// The ring's bits (little-endian words, lines in order), as the formats store them.
    pub fn bytes(&self) -> &[u8] {
        words_as_bytes(self.words())
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        words_as_bytes_mut(self.words_mut())
    }

    /// Loads the item's line in every group.
    #[inline(always)]
    fn prefetch(&self, x: u64) {
        let words = self.words();
        for (group, &salt) in self.group_salts.iter().enumerate() {
            let line = group as u64 * self.lines + reduce(x.wrapping_mul(salt), self.lines);
            hints::prefetch(&words[(line * 8) as usize]);
        }
    }

    /// The bit (in the ring's words) of an item's key `x` in the slice of multiplier `salt`
    /// at `offset` bits into the lines of `group`: the line from the group's multiplier, the
    /// bit in the segment from the slice's.
    #[inline(always)]
    fn spot(&self, group: u32, offset: u32, salt: u64, x: u64) -> u64 {
        let group_salt = self.group_salts[group as usize];
        let line = u64::from(group) * self.lines + reduce(x.wrapping_mul(group_salt), self.lines);
        line * LINE_BITS + u64::from(offset) + reduce(x.wrapping_mul(salt), self.segment_bits)
    }

    /// Clears a slice's segment in every line of its group (a new slice in a reused place).
    fn clear(&mut self, group: u32, offset: u32) {
        let (first_line, offset) = (u64::from(group) * self.lines, u64::from(offset));
        let (first_word, last_word) = (offset / 64, (offset + self.segment_bits - 1) / 64);
        let masks: Vec<(usize, u64)> = (first_word..=last_word)
            .map(|w| {
                let low = offset.max(w * 64) - w * 64;
                let high = (offset + self.segment_bits).min(w * 64 + 64) - w * 64;
                let mask = if high - low == 64 {
                    u64::MAX
                } else {
                    ((1u64 << (high - low)) - 1) << low
                };
                (w as usize, mask)
            })
            .collect();
        let lines = first_line as usize..(first_line + self.lines) as usize;
        for line in &mut self.data[lines] {
            for &(w, mask) in &masks {
                line.0[w] &= !mask;
            }
        }
    }
}

/// Where a slice's bits are.
#[derive(Debug, Clone, PartialEq)]
enum Storage {
    /// Its own bit array: a slice of the sliced layout (a filter from before the blocked one),
    /// or one the ring has no place for (a grown slice, or a base slice while its place is
    /// taken during a burst).
    Own(Box<[u64]>),
    /// A segment of the ring: at `offset` bits into one line (per item) of its group's.
    Ring { group: u32, offset: u32 },
}

/// One slice: the bits an item sets while this slice is among the `k` newest.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// Its number in the filter's sequence of slices; it picks the slice's hash function, so
    /// an item's bit in a slice stays put however the slices move.
    pub generation: u64,
    /// The clock when it became the newest.
    pub started: u64,
    /// The clock when its generation ended, [`OPEN`] while it is the newest.
    pub ended: u64,
    /// Items added while it was the newest.
    pub count: u64,
    /// Items that set a bit in it.
    pub load: u64,
    /// The load it is sized for; a shift comes before it would take more.
    pub capacity: u64,
    /// Its growth step (0 for a slice of the base size): a burst generation grows the next one.
    pub level: u32,
    /// The odd multiplier of its hash function, from its number.
    salt: u64,
    bits: u64,
    storage: Storage,
}

impl Slice {
    /// A zeroed slice of `bits` bits (a multiple of 64) with its own bit array.
    pub fn new(generation: u64, started: u64, bits: u64, capacity: u64, level: u32) -> Self {
        let mut words = vec![0u64; (bits / WORD_BITS) as usize];
        hints::advise_huge_pages(&mut words);
        Slice::with_storage(
            generation,
            started,
            bits,
            capacity,
            level,
            Storage::Own(words.into()),
        )
    }

    fn with_storage(
        generation: u64,
        started: u64,
        bits: u64,
        capacity: u64,
        level: u32,
        storage: Storage,
    ) -> Self {
        Slice {
            generation,
            started,
            ended: OPEN,
            count: 0,
            load: 0,
            capacity,
            level,
            salt: salt(generation),
            bits,
            storage,
        }
    }

    pub fn bit_count(&self) -> u64 {
        self.bits
    }

    /// Whether its bits are in the filter's ring.
    pub fn in_ring(&self) -> bool {
        matches!(self.storage, Storage::Ring { .. })
    }

    /// Its own bit array as bytes (little-endian words), as SCANDUMP and the RDB store it;
    /// empty for a slice in the ring.
    pub fn bytes(&self) -> &[u8] {
        match &self.storage {
            Storage::Own(words) => words_as_bytes(words),
            Storage::Ring { .. } => &[],
        }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Storage::Own(words) => words_as_bytes_mut(words),
            Storage::Ring { .. } => &mut [],
        }
    }

    /// The estimated share of set bits, from the load.
    pub fn fill(&self) -> f64 {
        fill(self.load, self.bit_count())
    }

    /// Items a generation may take while this slice is the newest.
    fn generation_items(&self, hashes: u32) -> u64 {
        (self.capacity / u64::from(hashes)).max(1)
    }
}

/// A sliding-window filter: the value behind a key created with `SLIDING` or `WINDOW`. Built by
/// [`Sliding::new`] or, from a serialised form, by [`crate::window::builder::SlidingBuilder`], which
/// between them own its invariants.
#[derive(Debug, Clone, PartialEq)]
pub struct Sliding {
    pub(super) kind: Kind,
    pub(super) seed: u64,
    /// The requested false-positive rate.
    pub(super) error: f64,
    /// Items a window holds.
    pub(super) capacity: u64,
    /// The window in clock units: inserts (`capacity`) or milliseconds.
    pub(super) window: u64,
    /// Milliseconds a time window's generation lasts at most (0 for a count window).
    pub(super) span: u64,
    pub(super) hashes: u32,
    pub(super) generations: u32,
    /// The load capacity and bits of a base slice.
    pub(super) base_capacity: u64,
    pub(super) base_bits: u64,
    /// How a time window grows past its capacity (`Fixed` for a count window).
    pub(super) growth: Growth,
    /// The latest clock a write happened at.
    pub(super) clock: u64,
    /// Items added (not re-added) since creation: the module's item gauge.
    pub(super) added: u64,
    pub(super) next_generation: u64,
    /// Oldest first.
    pub(super) slices: Vec<Slice>,
    /// The blocked layout's storage of the base slices; None for a filter of the sliced
    /// layout (saved before the blocked one existed), whose slices each have their own array.
    pub(super) ring: Option<Ring>,
    /// Whether some slice has its own array (see [`Sliding::note_own_arrays`]).
    pub(super) own_arrays: bool,
}

/// Items a batch lookup scans at once (see [`Sliding::scan_many`]): enough misses in flight to
/// cover DRAM's latency, few enough for the core's miss buffers.
const SCANS: usize = 16;

/// Below this many items, a command looks them up one by one ([`Sliding::exists`]).
const FEW: usize = 4;

/// Items a batch add looks up ahead of applying them (see [`Sliding::add_many`]): a shift in
/// the middle makes the rest look up again, so a filter that shifts often (a tiny generation)
/// repeats at most this much.
const SPECULATE: usize = 32;

/// One item's run scan as a state machine, for many items at once ([`Sliding::scan_many`]):
/// it tests the far end of each candidate run first and skips past any unset bit; `age` is
/// the next age to test, ages `start..known` are known to be set, `end` is the current run's
/// end. It answers as [`Sliding::exists`] does.
#[derive(Debug, Clone, Copy)]
struct Scan {
    h: ItemHash,
    start: usize,
    known: usize,
    end: usize,
    age: usize,
}

impl Scan {
    /// A scan of `k`-runs, testing the first run's far end first (`live >= k`).
    fn new(h: ItemHash, k: usize) -> Self {
        Scan {
            h,
            start: 0,
            known: 0,
            end: k,
            age: k - 1,
        }
    }

    /// Takes the bit at `age`; the answer once the scan is over (whether a run was found).
    #[inline]
    fn step(&mut self, set: bool, k: usize, live: usize) -> Option<bool> {
        if set {
            if self.age == self.known {
                return Some(true);
            }
            self.age -= 1;
        } else {
            self.known = self.end;
            self.start = self.age + 1;
            if self.start + k > live {
                return Some(false);
            }
            self.end = self.start + k;
            self.age = self.end - 1;
        }
        None
    }
}

/// Why a shift happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shift {
    /// The newest generation's time is up.
    Time,
    /// The newest generation took its share of items before its time was up (a burst).
    Burst,
    /// An older slice among the `k` newest reached its load.
    Load,
}

/// What a write did, to undo it when a later step is refused: the filter is left exactly as
/// it was, so a refused add changes nothing (and is not replicated).
struct Undo {
    clock: u64,
    next_generation: u64,
    dropped: Vec<Slice>,
    pushed: usize,
}

impl Sliding {
    /// A new, empty window filter for `spec` (whose window is `Count` or `Time`), hashed under
    /// `seed`, whose steady state fits within `max_bytes`. It allocates its first slices on the
    /// first add.
    pub fn new(spec: &FilterSpec, seed: u64, max_bytes: u64) -> Result<Self, ChainError> {
        let design = Design::for_error(spec.error).ok_or(ChainError::CannotGrow)?;
        let (kind, window, span, growth) = match spec.window {
            Window::Unbounded | Window::Count => (Kind::Count, spec.capacity, 0, Growth::Fixed),
            Window::Time { seconds } => {
                let window = seconds * 1000;
                let span = window.div_ceil(u64::from(design.generations));
                (Kind::Time, window, span, spec.growth)
            }
        };
        let generation_items = spec.capacity.div_ceil(u64::from(design.generations));
        let base_capacity = generation_items
            .checked_mul(u64::from(design.hashes))
            .ok_or(ChainError::CannotGrow)?;
        let base_bits = design.slice_bits(base_capacity);
        let (k, l) = (u64::from(design.hashes), u64::from(design.generations));
        let (_, segment_bits) = Ring::shape(k, l).expect("designs take the ring's shape");
        let needed = Ring::bytes_for(k, base_bits, segment_bits);
        if base_bits > MAX_LINK_BITS {
            return Err(ChainError::LinkTooLarge {
                needed: (base_capacity as f64 / design.load_per_bit / 8.0) as u64,
            });
        }
        if needed > max_bytes {
            return Err(ChainError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        Ok(Sliding {
            kind,
            seed,
            error: spec.error,
            capacity: spec.capacity,
            window,
            span,
            hashes: design.hashes,
            generations: design.generations,
            base_capacity,
            base_bits,
            growth,
            clock: 0,
            added: 0,
            next_generation: 0,
            // The steady state's k + l slices, without the doubling of a growing VecDeque.
            slices: Vec::with_capacity((k + l) as usize),
            // Allocated now, as a plain filter's bits are: the memory is fixed at creation.
            ring: Some(Ring::new(k, l, base_bits)),
            own_arrays: false,
        })
    }

    /// Notes whether some slice has its own array, for a lookup to prefetch those slices'
    /// words too. Called where slices come and go (a write's [`Sliding::make_room`], the
    /// decoder), so that a lookup on the ring alone skips a walk over every slice's header:
    /// 9% of `Sliding::exists`'s samples in perf (BF.EXISTS P32, 10 M at 1%, 77 slices).
    pub(super) fn note_own_arrays(&mut self) {
        self.own_arrays = self.slices.iter().any(|slice| !slice.in_ring());
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Items a window holds.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The window, in inserts (count window) or milliseconds (time window).
    pub fn window(&self) -> u64 {
        self.window
    }

    /// The most an item outlives the window, in the same unit: `k` base generations. An item
    /// is found until the oldest of its `k` slices goes (at most one generation past the
    /// window), then reads present less and less often (a run of `k` set bits then needs
    /// newer slices' bits set by chance, about half of them are), and once its newest slice
    /// goes, no more often than a never-added item.
    pub fn slack(&self) -> u64 {
        let generation = match self.kind {
            Kind::Count => self.base_capacity / u64::from(self.hashes),
            Kind::Time => self.span,
        };
        generation * u64::from(self.hashes)
    }

    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    pub fn generations(&self) -> u32 {
        self.generations
    }

    pub fn growth(&self) -> Growth {
        self.growth
    }

    /// The latest clock a write happened at.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Items added since creation (re-adds not counted).
    pub fn added(&self) -> u64 {
        self.added
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

    /// The clock a read or write at server time `now` (Unix ms) uses: a count window's own;
    /// for a time window, `now`, but never before the latest write, so a clock that steps back
    /// neither resurrects forgotten items nor stamps new ones in the past.
    pub fn clock_at(&self, now: u64) -> u64 {
        match self.kind {
            Kind::Count => self.clock,
            Kind::Time => self.clock.max(now.min(MAX_CLOCK)),
        }
    }

    /// When slice `i`'s generation ended, or will end by the clock (the newest of a time
    /// window ends after its span; the newest of a count window, never by itself).
    fn end_of(&self, i: usize) -> u64 {
        let slice = &self.slices[i];
        match (slice.ended, self.kind) {
            (OPEN, Kind::Time) => slice.started.saturating_add(self.span),
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
                    .saturating_add(self.window)
                    > clock
            })
            .unwrap_or(n)
    }

    /// Items added within the window at `now` (BF.CARD): the counts of the generations that
    /// ended less than a window ago, re-adds included.
    pub fn card(&self, now: u64) -> u64 {
        let clock = self.clock_at(now);
        (self.first_live(clock)..self.slices.len())
            .filter(|&i| self.end_of(i).saturating_add(self.window) > clock)
            .fold(0u64, |sum, i| sum.saturating_add(self.slices[i].count))
    }

    /// Whether the item may have been added within the window, at server time `now`.
    pub fn contains(&self, item: &[u8], now: u64) -> bool {
        let clock = self.clock_at(now);
        self.exists(&self.hash(item), self.first_live(clock))
    }

    #[inline]
    pub fn hash(&self, item: &[u8]) -> ItemHash {
        ItemHash::native(item, self.seed)
    }

    /// The item's bit in `slice`: its word (in the slice's own array, or in the ring's) and
    /// mask.
    ///
    /// Multiply-shift hashing of the item's key under the slice's own odd multiplier (a
    /// universal family), so an item's positions in two slices are unrelated (plain double
    /// hashing `h1 + i*h2` would put them on one line, and an item that collides with another
    /// in one slice would likely collide in the next).
    #[inline(always)]
    fn spot(&self, slice: &Slice, h: &ItemHash) -> (usize, u64) {
        let x = key(h);
        let bit = match (&slice.storage, &self.ring) {
            (Storage::Own(_), _) => reduce(x.wrapping_mul(slice.salt), slice.bits),
            (&Storage::Ring { group, offset }, Some(ring)) => {
                ring.spot(group, offset, slice.salt, x)
            }
            (Storage::Ring { .. }, None) => unreachable!("a ring slice in a filter without a ring"),
        };
        ((bit >> 6) as usize, 1u64 << (bit & 63))
    }

    /// The item's bit in `slice`.
    #[inline(always)]
    fn test(&self, slice: &Slice, h: &ItemHash) -> bool {
        let (word, mask) = self.spot(slice, h);
        self.words_of(slice)[word] & mask != 0
    }

    /// Starts loading the line of the item's bit in `slice`.
    #[inline(always)]
    fn prefetch(&self, slice: &Slice, h: &ItemHash) {
        hints::prefetch(&self.words_of(slice)[self.spot(slice, h).0]);
    }

    #[inline(always)]
    fn words_of<'a>(&'a self, slice: &'a Slice) -> &'a [u64] {
        match (&slice.storage, &self.ring) {
            (Storage::Own(words), _) => words,
            (Storage::Ring { .. }, Some(ring)) => ring.words(),
            (Storage::Ring { .. }, None) => unreachable!("a ring slice in a filter without a ring"),
        }
    }

    /// Sets the item's bit in the newest `k` slices.
    fn set_newest(&mut self, h: &ItemHash) {
        let k = self.hashes as usize;
        let n = self.slices.len();
        for i in n - k..n {
            let (word, mask) = self.spot(&self.slices[i], h);
            let slice = &mut self.slices[i];
            match (&mut slice.storage, &mut self.ring) {
                (Storage::Own(words), _) => words[word] |= mask,
                (Storage::Ring { .. }, Some(ring)) => ring.words_mut()[word] |= mask,
                (Storage::Ring { .. }, None) => unreachable!("a ring slice without a ring"),
            }
            slice.load += 1;
        }
    }

    /// Whether the item has `k` consecutive set bits among the slices from `first` on.
    ///
    /// Every line the scan may touch is loaded first, together: the item's line in each of
    /// the ring's groups (`k` lines hold all its bits there), and its word in each live slice
    /// with its own array. The scan then tests the far end of each candidate run and skips
    /// past any unset bit ([`Scan`]).
    #[inline]
    fn exists(&self, h: &ItemHash, first: usize) -> bool {
        let live = self.slices.len() - first;
        let k = self.hashes as usize;
        if live < k {
            return false;
        }
        if let Some(ring) = &self.ring {
            ring.prefetch(key(h));
        }
        if self.own_arrays {
            self.slices[first..]
                .iter()
                .filter(|slice| !slice.in_ring())
                .for_each(|slice| self.prefetch(slice, h));
        }
        let newest = self.slices.len() - 1;
        let mut scan = Scan::new(*h, k);
        loop {
            let set = self.test(&self.slices[newest - scan.age], h);
            if let Some(found) = scan.step(set, k, live) {
                return found;
            }
        }
    }

    /// Checks items in order at server time `now`, passing each answer to `answer`: exactly
    /// those of [`Sliding::contains`], found by [`Sliding::scan_many`].
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        now: u64,
        mut answer: impl FnMut(bool),
    ) {
        let hashes: Vec<ItemHash> = items.map(|item| self.hash(item)).collect();
        let first = self.first_live(self.clock_at(now));
        if hashes.len() < FEW {
            return hashes.iter().for_each(|h| answer(self.exists(h, first)));
        }
        let mut found = vec![false; hashes.len()];
        self.scan_many(&hashes, first, |i, f| found[i] = f);
        found.into_iter().for_each(&mut answer);
    }

    /// Whether each item has a run among the slices from `first` on, reported as `(index,
    /// found)` in any order.
    ///
    /// An item's scan is a chain of dependent probes (the next age to test depends on the last
    /// bit), each a likely cache miss in another slice: one item at a time, they queue. So this
    /// scans [`SCANS`] items at once, round-robin: each turn tests one probe per item and
    /// prefetches that item's next one, which has arrived by its next turn.
    fn scan_many(&self, hashes: &[ItemHash], first: usize, mut report: impl FnMut(usize, bool)) {
        let live = self.slices.len() - first;
        let k = self.hashes as usize;
        if live < k {
            return (0..hashes.len()).for_each(|i| report(i, false));
        }
        let newest = self.slices.len() - 1;
        let line = |h: &ItemHash, age: usize| self.prefetch(&self.slices[newest - age], h);
        let mut scans: [Option<(usize, Scan)>; SCANS] = [None; SCANS];
        let mut next = 0;
        loop {
            let mut active = false;
            for slot in scans.iter_mut() {
                let Some((i, scan)) = slot else {
                    if next < hashes.len() {
                        let scan = Scan::new(hashes[next], k);
                        if let Some(ring) = &self.ring {
                            ring.prefetch(key(&scan.h));
                        }
                        line(&scan.h, scan.age);
                        *slot = Some((next, scan));
                        next += 1;
                        active = true;
                    }
                    continue;
                };
                active = true;
                let set = self.test(&self.slices[newest - scan.age], &scan.h);
                match scan.step(set, k, live) {
                    Some(found) => {
                        report(*i, found);
                        *slot = None;
                    }
                    None => line(&scan.h, scan.age),
                }
            }
            if !active {
                break;
            }
        }
    }

    /// Adds items in order at server time `now`, passing each outcome to `outcome`, which
    /// returns whether to go on.
    pub fn add_many<'a>(
        &mut self,
        items: impl ExactSizeIterator<Item = &'a [u8]>,
        now: u64,
        max_bytes: u64,
        mut outcome: impl FnMut(Result<AddOutcome, ChainError>) -> bool,
    ) {
        if items.len() < FEW {
            for item in items {
                let h = self.hash(item);
                if !outcome(self.add_hashed(&h, now, max_bytes)) {
                    return;
                }
            }
            return;
        }
        let hashes: Vec<ItemHash> = items.map(|item| self.hash(item)).collect();
        let k = self.hashes as usize;
        let mut at = 0;
        while at < hashes.len() {
            // Look the next items up together, against the filter as it is now.
            let chunk = &hashes[at..hashes.len().min(at + SPECULATE)];
            let clock = self.clock_at(now);
            let first = self.first_live(clock);
            let state = (self.next_generation, self.slices.len(), first);
            let mut found = vec![false; chunk.len()];
            self.scan_many(chunk, first, |i, f| found[i] = f);
            for (j, h) in chunk.iter().enumerate() {
                // Prefetch a later item's lines in the newest slices (its insert, and the
                // re-check of an item not found).
                if let Some(later) = chunk.get(j + 8) {
                    let n = self.slices.len();
                    for slice in self.slices[n.saturating_sub(2 * k - 1)..].iter() {
                        self.prefetch(slice, later);
                    }
                }
                let clock = self.clock_at(now);
                let first = self.first_live(clock);
                if (self.next_generation, self.slices.len(), first) != state {
                    // A shift (or an expiry) since the look-up: look the rest up again.
                    break;
                }
                // Since the look-up only the newest k slices took bits. A run found then is
                // still there; a run not found then can only have appeared among the runs
                // that reach into those k slices: those starting at ages 0..k-1.
                let newest_run = self.run_at(h, 0);
                let exists = found[j]
                    || newest_run
                    || self.exists(h, first.max(self.slices.len().saturating_sub(2 * k - 1)));
                at += 1;
                if !outcome(self.apply(h, exists, newest_run, clock, max_bytes)) {
                    return;
                }
            }
        }
    }

    /// Adds one item at server time `now`. `Added` when it was absent; `Present` when it was
    /// found, in which case it is refreshed (set again in the newest slices) unless the newest
    /// generation holds it already. A refused add changes nothing.
    pub fn add(&mut self, item: &[u8], now: u64, max_bytes: u64) -> Result<AddOutcome, ChainError> {
        let h = self.hash(item);
        self.add_hashed(&h, now, max_bytes)
    }

    fn add_hashed(
        &mut self,
        h: &ItemHash,
        now: u64,
        max_bytes: u64,
    ) -> Result<AddOutcome, ChainError> {
        let clock = self.clock_at(now);
        // The lookup loads every line the insert then writes (the newest k slices are live).
        let exists = self.exists(h, self.first_live(clock));
        self.apply(h, exists, exists && self.run_at(h, 0), clock, max_bytes)
    }

    /// The add of an item whose run was looked up: `exists` when it has one, `newest_run` when
    /// one starts at the newest slice.
    fn apply(
        &mut self,
        h: &ItemHash,
        exists: bool,
        newest_run: bool,
        clock: u64,
        max_bytes: u64,
    ) -> Result<AddOutcome, ChainError> {
        if newest_run && self.next_shift(clock).is_none() {
            // In the newest generation already: nothing to refresh.
            return Ok(AddOutcome::Present);
        }
        self.make_room(clock, max_bytes)?;
        self.set_newest(h);
        if let Some(newest) = self.slices.last_mut() {
            newest.count += 1;
        }
        if self.kind == Kind::Count {
            self.clock = (self.clock + 1).min(MAX_CLOCK);
        }
        Ok(if exists {
            AddOutcome::Present
        } else {
            self.added = self.added.saturating_add(1);
            AddOutcome::Added
        })
    }

    /// Whether the `k` slices from `age` on (counting from the newest) all hold the item.
    fn run_at(&self, h: &ItemHash, age: usize) -> bool {
        let n = self.slices.len();
        let k = self.hashes as usize;
        n >= age + k && (age..age + k).all(|a| self.test(&self.slices[n - 1 - a], h))
    }

    /// Why the newest generation must end before the next insert at `clock`, if it must.
    fn next_shift(&self, clock: u64) -> Option<Shift> {
        let newest = self.slices.last()?;
        let k = self.hashes as usize;
        if self.kind == Kind::Time && newest.started.saturating_add(self.span) <= clock {
            Some(Shift::Time)
        } else if newest.count >= newest.generation_items(self.hashes) {
            Some(Shift::Burst)
        } else if self.slices[self.slices.len().saturating_sub(k)..]
            .iter()
            .any(|s| s.load >= s.capacity)
        {
            Some(Shift::Load)
        } else {
            None
        }
    }

    /// Brings the filter to `clock` before an insert: drops the slices no longer needed, starts
    /// the first `k` slices of an empty filter, and shifts as often as the newest generation
    /// must end. On a refusal every step is undone.
    fn make_room(&mut self, clock: u64, max_bytes: u64) -> Result<(), ChainError> {
        let mut undo = Undo {
            clock: self.clock,
            next_generation: self.next_generation,
            dropped: Vec::new(),
            pushed: 0,
        };
        let result = self.make_room_logged(clock, max_bytes, &mut undo);
        let slices_changed = undo.pushed > 0 || !undo.dropped.is_empty();
        if let (Ok(()), Some(ring)) = (&result, &mut self.ring) {
            // New slices in the ring take places older ones left with their bits (cleared
            // only now, so that an undo gives those back intact).
            let pushed = self.slices.iter().rev();
            for slice in pushed.take_while(|s| s.generation >= undo.next_generation) {
                if let &Storage::Ring { group, offset } = &slice.storage {
                    ring.clear(group, offset);
                }
            }
        }
        if result.is_err() {
            for _ in 0..undo.pushed {
                self.slices.pop();
            }
            if let Some(newest) = self.slices.last_mut() {
                newest.ended = OPEN;
            }
            self.slices.splice(0..0, undo.dropped);
            self.clock = undo.clock;
            self.next_generation = undo.next_generation;
        }
        if slices_changed {
            self.note_own_arrays();
        }
        result
    }

    fn make_room_logged(
        &mut self,
        clock: u64,
        max_bytes: u64,
        undo: &mut Undo,
    ) -> Result<(), ChainError> {
        self.clock = clock;
        // Expired slices go at a shift (or all at once when none is live): a read skips them
        // meanwhile, and a count window keeps exactly k + l slices in its steady state.
        if self.first_live(clock) == self.slices.len() {
            self.drop_expired(undo);
        }
        if self.slices.is_empty() {
            // A new start: k empty slices, so the first items have their k bits.
            let new = self
                .new_bytes(self.base_bits)
                .saturating_mul(self.hashes.into());
            let needed = self.bit_bytes().saturating_add(new);
            if new > 0 && needed > max_bytes {
                return Err(ChainError::TooLarge {
                    needed,
                    limit: max_bytes,
                });
            }
            for _ in 0..self.hashes {
                if let Some(newest) = self.slices.last_mut() {
                    newest.ended = clock;
                }
                self.push(clock, self.base_bits, self.base_capacity, 0, undo);
            }
            return Ok(());
        }
        while let Some(cause) = self.next_shift(clock) {
            self.shift(cause, clock, max_bytes, undo)?;
        }
        Ok(())
    }

    fn drop_expired(&mut self, undo: &mut Undo) {
        let expired = self.first_live(self.clock);
        undo.dropped.extend(self.slices.drain(..expired));
    }

    /// The ring's place for the next slice, when it has `bits` bits (a base slice) and the
    /// place is free (it is not, for a while, when a burst made more than `k + l` slices).
    fn ring_place(&self, bits: u64) -> Option<Storage> {
        self.ring_place_of(self.next_generation, bits)
    }

    fn ring_place_of(&self, generation: u64, bits: u64) -> Option<Storage> {
        let ring = self.ring.as_ref().filter(|_| bits == self.base_bits)?;
        let slots = ring.slots();
        let taken = self
            .slices
            .iter()
            .any(|s| s.in_ring() && s.generation % slots == generation % slots);
        (!taken).then(|| ring.place(generation))
    }

    /// Slice number `generation` in its place in the ring, if the filter has one and the place
    /// is free (for the decoders).
    pub(super) fn ring_slice(&self, generation: u64, capacity: u64, level: u32) -> Option<Slice> {
        let place = self.ring_place_of(generation, self.base_bits)?;
        Some(Slice::with_storage(
            generation,
            0,
            self.base_bits,
            capacity,
            level,
            place,
        ))
    }

    /// Bytes a new slice of `bits` bits allocates: none in the ring, its own array elsewhere
    /// (whole words).
    fn new_bytes(&self, bits: u64) -> u64 {
        match self.ring_place(bits) {
            Some(_) => 0,
            None => bits.div_ceil(WORD_BITS) * 8,
        }
    }

    fn push(&mut self, started: u64, bits: u64, capacity: u64, level: u32, undo: &mut Undo) {
        let generation = self.next_generation;
        let slice = match self.ring_place(bits) {
            Some(place) => Slice::with_storage(generation, started, bits, capacity, level, place),
            None => {
                let bits = bits.next_multiple_of(WORD_BITS);
                Slice::new(generation, started, bits, capacity, level)
            }
        };
        self.next_generation += 1;
        self.slices.push(slice);
        undo.pushed += 1;
    }

    /// Ends the newest generation and starts a new slice. A count window's slices are all of
    /// the base size. A time window's new slice follows the rate (after a burst generation it
    /// takes `EXPANSION` times the previous one's items, after a generation its time ended, a
    /// step less), and its fill is halved until the computed rate over the live slices is back
    /// under the request.
    fn shift(
        &mut self,
        cause: Shift,
        clock: u64,
        max_bytes: u64,
        undo: &mut Undo,
    ) -> Result<(), ChainError> {
        let newest = self.slices.last().expect("shift needs a newest slice");
        let newest_level = newest.level;
        let (level, fixed) = match (self.kind, self.growth) {
            (Kind::Count, _) => (0, true),
            (Kind::Time, Growth::Fixed) => (0, true),
            (Kind::Time, Growth::Scaling(_)) => match cause {
                Shift::Burst => (newest_level + 1, false),
                Shift::Load => (newest_level, false),
                Shift::Time => (newest_level.saturating_sub(1), false),
            },
        };
        let newest_started = newest.started;
        let ended = match cause {
            Shift::Time => newest_started.saturating_add(self.span),
            Shift::Burst | Shift::Load => clock,
        };
        self.drop_expired(undo);
        self.slices.last_mut().expect("checked above").ended = ended;
        if cause == Shift::Time {
            // After an idle spell, the generations that passed without adds get their empty
            // slices (up to k): the next items' runs then start in fresh slices instead of
            // reaching back into old ones, which would keep old items alive past their time.
            let spans = (clock - newest_started) / self.span.max(1);
            for i in 1..spans.min(u64::from(self.hashes)) {
                self.check_room(fixed, self.base_bits, max_bytes)?;
                let started = newest_started + i * self.span;
                self.push(started, self.base_bits, self.base_capacity, level, undo);
                self.slices.last_mut().expect("just pushed").ended = started + self.span;
            }
        }
        let (bits, capacity) = if fixed {
            (self.base_bits, self.base_capacity)
        } else {
            self.grown_slice(level)?
        };
        self.check_room(fixed, bits, max_bytes)?;
        self.push(clock, bits, capacity, level, undo);
        Ok(())
    }

    /// Whether one more slice of `bits` fits: under the per-filter limit, and for a
    /// NONSCALING time window within its fixed budget of `k + l` slices.
    fn check_room(&self, fixed: bool, bits: u64, max_bytes: u64) -> Result<(), ChainError> {
        if self.slices.len() >= MAX_SLICES {
            return Err(ChainError::CannotGrow);
        }
        if fixed
            && self.kind == Kind::Time
            && self.slices.len() >= (self.hashes + self.generations) as usize
        {
            return Err(ChainError::WindowFull);
        }
        let new = self.new_bytes(bits);
        let needed = self.bit_bytes().saturating_add(new);
        if new > 0 && needed > max_bytes {
            return Err(ChainError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        Ok(())
    }

    /// The bits and load capacity of a time window's new slice at growth `level`: the base
    /// capacity times `EXPANSION^level`, at the base load per bit, halved until the computed
    /// worst-case rate over the live slices (each at the most it may take before the next
    /// shift) is within [`HEADROOM`] of the request.
    fn grown_slice(&self, level: u32) -> Result<(u64, u64), ChainError> {
        let Growth::Scaling(expansion) = self.growth else {
            unreachable!("only a scaling time window grows");
        };
        let capacity = u64::from(expansion)
            .checked_pow(level)
            .and_then(|f| f.checked_mul(self.base_capacity))
            .ok_or(ChainError::CannotGrow)?;
        let base_load_per_bit = self.base_capacity as f64 / self.base_bits as f64;
        let k = self.hashes as usize;
        let generation = (capacity / k as u64).max(1);
        // The live slices that stay among the k newest take at most one more generation.
        let n = self.slices.len();
        let fills: Vec<f64> = (0..n)
            .map(|i| {
                let s = &self.slices[i];
                let load = if i + k > n {
                    s.capacity.min(s.load.saturating_add(generation))
                } else {
                    s.load
                };
                fill(load, s.bit_count())
            })
            .collect();
        let target = self.error * HEADROOM;
        let mut load_per_bit = base_load_per_bit;
        for step in 0..MAX_FILL_STEPS {
            // A base slice at the base fill is the ring's size, and goes there.
            let bits = if step == 0 && capacity == self.base_capacity {
                self.base_bits
            } else {
                slice_bits(capacity, load_per_bit)
            };
            if bits > MAX_LINK_BITS {
                return Err(ChainError::LinkTooLarge { needed: bits / 8 });
            }
            let new_fill = fill(generation, bits);
            // Lookup order: newest first.
            let rate = window_fpr(
                self.hashes,
                std::iter::once(new_fill).chain(fills.iter().rev().copied()),
            );
            if rate <= target {
                return Ok((bits, capacity));
            }
            load_per_bit *= 0.5;
        }
        Err(ChainError::CannotGrow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::FieldSlice;
    use crate::{rdb, Filter};

    const HOUR: u64 = 3_600_000;

    fn count_filter(error: f64, capacity: u64) -> Sliding {
        let spec = FilterSpec {
            error,
            capacity,
            growth: Growth::Fixed,
            window: Window::Count,
        };
        Sliding::new(&spec, 0x5eed, u64::MAX).unwrap()
    }

    fn time_filter(error: f64, capacity: u64, seconds: u64, growth: Growth) -> Sliding {
        let spec = FilterSpec {
            error,
            capacity,
            growth,
            window: Window::Time { seconds },
        };
        Sliding::new(&spec, 0x5eed, u64::MAX).unwrap()
    }

    fn item(tag: &str, i: u64) -> Vec<u8> {
        format!("{tag}:{i}").into_bytes()
    }

    /// A one-sided 95% upper bound on a rate measured as `hits` in `trials`.
    fn upper_bound(hits: u64, trials: u64) -> f64 {
        let p = hits as f64 / trials as f64;
        p + 1.645 * (p * (1.0 - p) / trials as f64).sqrt()
    }

    #[test]
    fn exp_neg_matches_the_platform() {
        for x in [0.0, 1e-9, 0.01, 0.5, 0.7, 1.0, 3.7, 20.0, 100.0] {
            let (ours, std) = (exp_neg(x), (-x).exp());
            assert!((ours - std).abs() <= 1e-12 * std, "{x}");
        }
        assert_eq!(exp_neg(1e9), 0.0);
    }

    #[test]
    fn window_fpr_agrees_with_enumeration() {
        // Every pattern of 6 slices, k = 3.
        let fills = [0.5, 0.3, 0.9, 0.2, 0.7, 0.6];
        let mut want = 0.0;
        for mask in 0u32..64 {
            let p: f64 = (0..6)
                .map(|i| {
                    if mask >> i & 1 == 1 {
                        fills[i]
                    } else {
                        1.0 - fills[i]
                    }
                })
                .product();
            if (0..4).any(|s| (s..s + 3).all(|i| mask >> i & 1 == 1)) {
                want += p;
            }
        }
        assert!((window_fpr(3, fills) - want).abs() < 1e-12);
    }

    #[test]
    fn designs_meet_the_memory_targets() {
        // The budgets: 20 bits per window item at 1%, 30 at 0.1%, slack at most a
        // quarter window (l >= 4).
        let one = Design::for_error(0.01).unwrap();
        assert_eq!((one.hashes, one.generations), (11, 66));
        assert!(one.bits_per_item() < 20.0, "{one:?}");
        let tenth = Design::for_error(0.001).unwrap();
        assert_eq!((tenth.hashes, tenth.generations), (14, 70));
        assert!(tenth.bits_per_item() < 30.0, "{tenth:?}");
        for error in [0.5, 0.1, 0.01, 0.001, 1e-4, 1e-6, 1e-9, 1e-13] {
            let d = Design::for_error(error).unwrap();
            assert!(
                d.generations >= MIN_SLACK_DIVISOR * d.hashes,
                "{error} {d:?}"
            );
            // Every design takes the blocked layout.
            assert!(Ring::shape(d.hashes.into(), d.generations.into()).is_some());
            assert!(d.worst_fpr(1 << 20) <= error * HEADROOM, "{error} {d:?}");
        }
        assert_eq!(Design::for_error(1e-16), None);
        assert_eq!(Design::for_error(0.0), None);
    }

    /// Adds `adds` items one by one to a count window, checking that each of the newest
    /// `capacity` is present after every generation, and measures the false-positive rate on
    /// never-added items and the rate at which items past the window + slack still read
    /// present.
    fn churn_count_window(error: f64, capacity: u64, adds: u64, probes: u64) {
        let mut f = count_filter(error, capacity);
        let slack = f.slack();
        let most_slices = (f.hashes + f.generations) as usize;
        let (mut false_positives, mut trials) = (0, 0);
        let (mut remembered, mut forgotten_trials) = (0, 0);
        for i in 0..adds {
            // An add answers Present for a false positive; it is set all the same.
            assert!(f.add(&item("in", i), 0, u64::MAX).is_ok());
            assert!(f.slices.len() <= most_slices);
            if (i + 1) % (capacity / 2) == 0 {
                // Zero false negatives inside the window.
                for j in (i + 1).saturating_sub(capacity)..=i {
                    assert!(f.contains(&item("in", j), 0), "item {j} at {i}");
                }
                for p in 0..probes {
                    false_positives += u64::from(f.contains(&item("never", i * probes + p), 0));
                    trials += 1;
                }
                // Past window + slack: forgotten (read present only at the rate).
                let old = (i + 1).saturating_sub(capacity + slack + 1);
                for j in old.saturating_sub(probes)..old {
                    remembered += u64::from(f.contains(&item("in", j), 0));
                    forgotten_trials += 1;
                }
            }
        }
        let rate = false_positives as f64 / trials as f64;
        eprintln!(
            "count window {error} x {capacity}: {adds} adds, fpr {rate:.5} ({false_positives}/{trials}), \
             forgotten read present {remembered}/{forgotten_trials}, {:.2} bits per item",
            f.bit_bytes() as f64 * 8.0 / capacity as f64
        );
        assert!(upper_bound(false_positives, trials) <= error * 1.05 || rate <= error);
        assert!(rate <= error, "{rate}");
        assert!(
            remembered as f64 <= (forgotten_trials as f64 * error * 1.5).max(3.0),
            "{remembered}/{forgotten_trials}"
        );
        // The computed worst case bounds the measured average, and is no loose bound: the
        // measured rate is within a factor of two of it.
        let design = Design::for_error(error).unwrap();
        let computed = design.worst_fpr(capacity.div_ceil(u64::from(design.generations)));
        eprintln!("computed worst case {computed:.5}, measured {rate:.5}");
        assert!(
            rate <= computed && rate >= computed / 2.0,
            "{rate} {computed}"
        );
    }

    #[test]
    fn count_window_one_percent_over_a_million_adds() {
        churn_count_window(0.01, 100_000, 1_000_000, 4000);
    }

    #[test]
    fn count_window_a_tenth_of_a_percent_over_a_million_adds() {
        churn_count_window(0.001, 100_000, 1_000_000, 20_000);
    }

    #[test]
    fn count_window_forgets_exactly_after_window_plus_at_most_the_slack() {
        let mut f = count_filter(0.001, 1000);
        let slack = f.slack();
        let generation = 1000u64.div_ceil(u64::from(f.generations));
        assert_eq!(slack, generation * u64::from(f.hashes));
        assert!(slack <= 250);
        f.add(b"first", 0, u64::MAX).unwrap();
        let mut after = 0;
        while f.contains(b"first", 0) {
            f.add(&item("x", after), 0, u64::MAX).unwrap();
            after += 1;
        }
        // Present for at least the window, gone within window + slack.
        assert!(after >= 1000 && after <= 1000 + slack, "{after}");
    }

    #[test]
    fn batch_lookups_answer_exactly_as_single_ones() {
        let mut f = time_filter(0.05, 2000, 60, Growth::Scaling(2));
        let t0 = 2_000_000;
        for i in 0..20_000u64 {
            f.add(&item("x", i), t0 + i * 5, u64::MAX).unwrap();
        }
        let probes: Vec<Vec<u8>> = (0..30_000u64)
            .map(|i| item(if i % 3 == 0 { "never" } else { "x" }, i * 7 % 20_000))
            .collect();
        for now in [t0, t0 + 60_000, t0 + 100_000, t0 + 200_000] {
            let mut batch = Vec::new();
            f.contains_many(probes.iter().map(Vec::as_slice), now, |b| batch.push(b));
            let single: Vec<bool> = probes.iter().map(|p| f.contains(p, now)).collect();
            assert_eq!(batch, single, "{now}");
            assert!(batch.iter().any(|&b| b) || now > t0 + 150_000);
        }
        let empty = count_filter(0.01, 10);
        let mut answers = Vec::new();
        empty.contains_many([&b"a"[..], b"b"].into_iter(), 0, |b| answers.push(b));
        assert_eq!(answers, [false, false]);
    }

    #[test]
    fn batch_adds_do_exactly_what_single_adds_do() {
        // Small generations (many shifts inside a batch), duplicates inside and across
        // batches, re-adds of older items, both kinds, a time window that grows.
        let kinds = [
            (Window::Count, Growth::Fixed, 300u64),
            (Window::Time { seconds: 2 }, Growth::Scaling(2), 300),
            (Window::Time { seconds: 60 }, Growth::Fixed, 5000),
            (Window::Count, Growth::Fixed, 3),
        ];
        for (window, growth, capacity) in kinds {
            let spec = FilterSpec {
                error: 0.02,
                capacity,
                growth,
                window,
            };
            let mut one = Sliding::new(&spec, 9, u64::MAX).unwrap();
            let mut batch = one.clone();
            let mut state = 1u64;
            for round in 0..300u64 {
                let now = 5_000_000 + round * 37;
                let size = 1 + (round * 7919 % 97) as usize;
                let items: Vec<Vec<u8>> = (0..size)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        item("b", (state >> 33) % 2000)
                    })
                    .collect();
                let singles: Vec<_> = items.iter().map(|it| one.add(it, now, 4 << 20)).collect();
                let mut batched = Vec::new();
                batch.add_many(items.iter().map(Vec::as_slice), now, 4 << 20, |r| {
                    batched.push(r);
                    true
                });
                assert_eq!(batched, singles, "{window:?} round {round}");
                assert_eq!(batch, one, "{window:?} round {round}");
            }
        }
    }

    #[test]
    fn re_adding_refreshes_an_item() {
        let mut f = count_filter(0.01, 1000);
        f.add(b"keep", 0, u64::MAX).unwrap();
        for i in 0..5000 {
            if i % 500 == 0 {
                assert_eq!(f.add(b"keep", 0, u64::MAX), Ok(AddOutcome::Present));
            }
            f.add(&item("x", i), 0, u64::MAX).unwrap();
        }
        assert!(f.contains(b"keep", 0));
        // Re-adds are not counted (nor are the few new items that read present).
        assert!((4900..=5001).contains(&f.added()), "{}", f.added());
    }

    #[test]
    fn time_window_keeps_the_window_and_forgets_after_the_slack() {
        let mut f = time_filter(0.01, 10_000, 3600, Growth::Scaling(2));
        let t0 = 1_700_000_000_000u64;
        // 100 items a minute for 3 hours (about half the capacity per window).
        let mut added_at = Vec::new();
        for minute in 0..180u64 {
            let now = t0 + minute * 60_000;
            for j in 0..100 {
                let i = minute * 100 + j;
                f.add(&item("t", i), now, u64::MAX).unwrap();
                added_at.push(now);
            }
            for (i, &at) in added_at.iter().enumerate() {
                let age = now - at;
                let present = f.contains(&item("t", i as u64), now);
                if age < HOUR {
                    assert!(present, "item {i} of age {age} at minute {minute}");
                }
            }
        }
        // Everything older than window + slack is forgotten (up to the rate).
        let now = t0 + 179 * 60_000;
        let old = added_at
            .iter()
            .enumerate()
            .filter(|(_, &at)| now - at >= HOUR + f.slack())
            .map(|(i, _)| i as u64);
        let (mut present, mut total) = (0, 0);
        for i in old {
            present += u64::from(f.contains(&item("t", i), now));
            total += 1;
        }
        assert!(total > 5000);
        assert!(
            present as f64 <= total as f64 * 0.01 * 2.0 + 3.0,
            "{present}/{total}"
        );
        // The steady state holds at most k + l slices, all of the base size.
        assert!(f.slices.len() <= (f.hashes + f.generations) as usize);
        assert!(f
            .slices
            .iter()
            .all(|s| s.level == 0 && s.bit_count() == f.base_bits));
    }

    /// A time window over 11 windows of churn and 1,100,000 adds at its capacity's rate (one
    /// item every 36 ms for an hour-long window of 100,000): every item inside the window is
    /// found at every check, the false-positive rate stays under the request, items past the
    /// window plus the slack read present no more often, and the memory is the steady state's.
    #[test]
    fn time_window_over_a_million_adds() {
        let mut f = time_filter(0.01, 100_000, 3600, Growth::Scaling(2));
        let t0 = 1_750_000_000_000u64;
        let at = |i: u64| t0 + i * 36;
        let total = 1_100_000u64;
        let (mut fp, mut trials, mut remembered, mut old_trials) = (0u64, 0u64, 0u64, 0u64);
        for i in 0..total {
            f.add(&item("w", i), at(i), u64::MAX).unwrap();
            if (i + 1) % 50_000 == 0 {
                let now = at(i);
                // Every item of the last hour.
                let first = (i + 1).saturating_sub(100_000);
                for j in first..=i {
                    assert!(f.contains(&item("w", j), now), "item {j} at {i}");
                }
                for p in 0..5000 {
                    fp += u64::from(f.contains(&item("never", i * 5000 + p), now));
                    trials += 1;
                }
                // Items added before the window and its slack (none in the first hour).
                let gone = now.saturating_sub(t0 + HOUR + f.slack()) / 36;
                for j in gone.saturating_sub(2000)..gone {
                    remembered += u64::from(f.contains(&item("w", j), now));
                    old_trials += 1;
                }
            }
        }
        let rate = fp as f64 / trials as f64;
        let bits = f.bit_bytes() as f64 * 8.0 / 100_000.0;
        eprintln!(
            "time window: {total} adds, fpr {rate:.5} ({fp}/{trials}), forgotten read present \
             {remembered}/{old_trials}, {bits:.2} bits per window item, {} slices",
            f.slices.len()
        );
        assert!(rate <= 0.01, "{rate}");
        assert!(remembered as f64 <= old_trials as f64 * 0.015 + 3.0);
        assert!(bits < 20.5, "{bits}");
        assert!(f.slices.iter().all(|s| s.level == 0));
    }

    #[test]
    fn new_items_after_an_idle_spell_do_not_keep_old_ones_alive() {
        let mut f = time_filter(0.01, 1000, 3600, Growth::Scaling(2));
        let t0 = 1_800_000_000_000u64;
        let old: Vec<Vec<u8>> = (0..300).map(|i| item("old", i)).collect();
        let young: Vec<Vec<u8>> = (0..300).map(|i| item("young", i)).collect();
        for it in &old {
            f.add(it, t0, u64::MAX).unwrap();
        }
        // 50 minutes without adds, then a burst.
        for it in &young {
            f.add(it, t0 + 50 * 60_000, u64::MAX).unwrap();
        }
        let past = t0 + HOUR + f.slack();
        let remembered = old.iter().filter(|it| f.contains(it, past)).count();
        assert!(
            remembered <= 6,
            "{remembered}/300 old items past window + slack"
        );
        assert!(young.iter().all(|it| f.contains(it, past)));
    }

    #[test]
    fn the_far_future_is_the_latest_clock_not_an_overflow() {
        // Found by the chunks fuzz target: at u64::MAX, "ended + window" saturated and every
        // slice read as expired, so an item was missing right after its add.
        let mut f = time_filter(0.01, 100, 60, Growth::Scaling(2));
        for now in [MAX_CLOCK - 1, MAX_CLOCK, u64::MAX] {
            f.add(b"late", now, u64::MAX).unwrap();
            assert!(f.contains(b"late", now), "{now}");
            assert!(f.clock() >= MAX_CLOCK - 1 && f.clock() <= MAX_CLOCK);
        }
    }

    #[test]
    fn reads_use_the_clock_and_never_write() {
        let mut f = time_filter(0.01, 1000, 60, Growth::Scaling(2));
        let t0 = 1_000_000;
        f.add(b"a", t0, u64::MAX).unwrap();
        let before = f.clone();
        assert!(f.contains(b"a", t0 + 59_999));
        // Past the window plus the slack, a read treats the slices as gone, without dropping.
        assert!(!f.contains(b"a", t0 + 60_000 + f.slack()));
        assert_eq!(f.card(t0 + 60_000 + f.slack()), 0);
        assert_eq!(f.card(t0), 1);
        assert_eq!(f, before);
    }

    #[test]
    fn a_clock_that_steps_back_neither_resurrects_nor_drops() {
        let mut f = time_filter(0.01, 1000, 60, Growth::Scaling(2));
        let t0 = 5_000_000;
        f.add(b"old", t0, u64::MAX).unwrap();
        // A write two windows later forgets "old" (and drops its slices).
        f.add(b"new", t0 + 120_000, u64::MAX).unwrap();
        assert!(!f.contains(b"old", t0 + 120_000));
        // The clock steps back an hour: "old" stays forgotten, "new" stays.
        let back = t0 + 120_000 - HOUR;
        assert!(!f.contains(b"old", back));
        assert!(f.contains(b"new", back));
        // An add at the stepped-back time is stamped at the filter's clock, so it lasts a
        // full window from there.
        f.add(b"during", back, u64::MAX).unwrap();
        assert_eq!(f.clock(), t0 + 120_000);
        assert!(f.contains(b"during", t0 + 120_000 + 59_999));
        assert!(f.contains(b"new", t0 + 120_000 + 59_999));
    }

    #[test]
    fn a_burst_grows_the_filter_holds_the_rate_and_shrinks_back() {
        let mut f = time_filter(0.01, 1000, 60, Growth::Scaling(2));
        // The steady state: the ring alone.
        let base = f.ring().unwrap().bytes().len() as u64;
        let t0 = 10_000_000;
        // 20,000 items within one second: 20 times the capacity.
        for i in 0..20_000 {
            f.add(&item("burst", i), t0 + i / 20, u64::MAX).unwrap();
        }
        let now = t0 + 1000;
        for i in 0..20_000 {
            assert!(f.contains(&item("burst", i), now), "{i}");
        }
        let (mut fp, trials) = (0, 200_000u64);
        for i in 0..trials {
            fp += u64::from(f.contains(&item("never", i), now));
        }
        let rate = fp as f64 / trials as f64;
        eprintln!(
            "burst: {} slices, {} bytes (steady state {base}), fpr {rate}",
            f.slices.len(),
            f.bit_bytes()
        );
        assert!(rate <= 0.01, "{rate}");
        assert!(f.bit_bytes() > base);
        // Grown slices have their own arrays, which lookups prefetch: the filter notes them,
        // and so does one decoded from its RDB form.
        assert!(f.own_arrays);
        let mut fields = Vec::new();
        rdb::encode(&Filter::Sliding(f.clone()), &mut fields);
        let decoded = rdb::decode(&mut FieldSlice(&fields)).unwrap();
        assert_eq!(decoded, Filter::Sliding(f.clone()));
        // After the window the burst ages out: a light load brings it back to base slices.
        for minute in 2..6u64 {
            f.add(&item("calm", minute), now + minute * 60_000, u64::MAX)
                .unwrap();
        }
        assert!(f.bit_bytes() <= base, "{}", f.bit_bytes());
        assert!(!f.own_arrays);
    }

    #[test]
    fn nonscaling_and_the_memory_limit_refuse_without_changing_anything() {
        let mut f = time_filter(0.01, 100, 60, Growth::Fixed);
        let t0 = 1_000;
        let mut refused = None;
        for i in 0..10_000u64 {
            let before = f.clone();
            match f.add(&item("x", i), t0, u64::MAX) {
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e, ChainError::WindowFull);
                    assert_eq!(f, before);
                    refused = Some(i);
                    break;
                }
            }
        }
        // The fixed budget takes more than the capacity, never less.
        let refused = refused.expect("a NONSCALING window refuses a burst");
        assert!(refused >= 100, "{refused}");
        // Every item taken is still there.
        for i in 0..refused {
            assert!(f.contains(&item("x", i), t0));
        }
        let mut g = time_filter(0.01, 100, 60, Growth::Scaling(2));
        let limit = g.base_bits / 8 * u64::from(g.hashes + g.generations + 2);
        let mut refused = false;
        for i in 0..100_000u64 {
            let before = g.clone();
            if let Err(e) = g.add(&item("y", i), t0, limit) {
                assert!(matches!(e, ChainError::TooLarge { .. }), "{e:?}");
                assert_eq!(g, before);
                refused = true;
                break;
            }
        }
        assert!(refused);
    }

    #[test]
    fn filters_with_tiny_capacities_work() {
        for capacity in [1, 2, 3, 7] {
            let mut f = count_filter(0.01, capacity);
            for i in 0..100 {
                f.add(&item("t", i), 0, u64::MAX).unwrap();
                for j in (i + 1).saturating_sub(capacity)..=i {
                    assert!(f.contains(&item("t", j), 0), "{capacity} {j} {i}");
                }
            }
        }
    }
}
