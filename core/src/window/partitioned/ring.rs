//! The layout: where an item's bit in each slice is. The base slices live in cache lines
//! ([`Ring`]); slices grown for a burst, and those of filters saved before the blocked layout,
//! keep an array each ([`Slice`]).

use crate::hash::{mix64, reduce, ItemHash};
use crate::hints;
use crate::lines::{self, Line, LINE_BITS};
use crate::memory::{Block, OutOfMemory};
use crate::sizing::{words_as_bytes, words_as_bytes_mut};
use crate::sizing::{MAX_LINK_BITS, WORD_BITS};
use crate::window::partitioned::limits::fill;
use crate::window::partitioned::limits::MIN_SLACK_DIVISOR;
use crate::window::partitioned::limits::OPEN;

/// The hash multiplier of slice number `generation`: odd, and far from those of its
/// neighbours (SplitMix64's finaliser of the number).
pub(super) fn salt(generation: u64) -> u64 {
    mix64(generation.wrapping_add(0x9e37_79b9_7f4a_7c15)) | 1
}

/// The 64 bits of an item's hash that pick its bit in every slice.
#[inline(always)]
pub(super) fn key(h: &ItemHash) -> u64 {
    h.h1 ^ h.h2.rotate_left(32)
}

/// Fewest and most generations per window, in multiples of `k`, the blocked layout takes:
/// `k + l` slices fill lines of `(k + l) / k` segments (5 to 8 of 102 to 64 bits).
pub(super) const MIN_SEGMENTS: u32 = MIN_SLACK_DIVISOR + 1;

/// The hash multiplier of group `g`'s line choice (numbers no generation reaches).
pub(super) fn group_salt(group: u64) -> u64 {
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
    pub(super) groups: u64,
    pub(super) segments: u64,
    pub(super) segment_bits: u64,
    /// Lines per group.
    pub(super) lines: u64,
    pub(super) group_salts: Box<[u64]>,
    pub(super) data: Block<Line>,
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
    pub(super) fn slice_bits(capacity: u64, load_per_bit: f64, segment_bits: u64) -> u64 {
        let bits = (capacity as f64 / load_per_bit).ceil();
        if bits.is_nan() || bits >= MAX_LINK_BITS as f64 {
            return MAX_LINK_BITS + WORD_BITS;
        }
        (bits as u64).max(1).div_ceil(segment_bits) * segment_bits
    }

    /// A zeroed ring for slices of `slice_bits` bits (a multiple of the segment).
    pub(super) fn new(hashes: u64, generations: u64, slice_bits: u64) -> Result<Self, OutOfMemory> {
        let (segments, segment_bits) = Ring::shape(hashes, generations).expect("a ring shape");
        let lines = slice_bits / segment_bits;
        let count = (hashes * lines) as usize;
        let data = lines::zeroed(count)?;
        Ok(Ring {
            groups: hashes,
            segments,
            segment_bits,
            lines,
            group_salts: (0..hashes).map(group_salt).collect(),
            data,
        })
    }

    /// Bytes of a ring for `hashes` groups of slices of `slice_bits` bits; saturating, since a
    /// SCANDUMP header's fields are sized before they are checked (the fuzzer found the
    /// overflow).
    pub(super) fn bytes_for(hashes: u64, slice_bits: u64, segment_bits: u64) -> u64 {
        (slice_bits / segment_bits)
            .saturating_mul(hashes)
            .saturating_mul(LINE_BITS / 8)
    }

    /// Where slice number `generation` lives.
    pub(super) fn place(&self, generation: u64) -> Storage {
        Storage::Ring {
            group: (generation % self.groups) as u32,
            offset: ((generation / self.groups) % self.segments * self.segment_bits) as u32,
        }
    }

    /// Every slice a ring holds at once: `k + l`.
    pub(super) fn slots(&self) -> u64 {
        self.groups * self.segments
    }

    pub(super) fn words(&self) -> &[u64] {
        lines::words(&self.data)
    }

    pub(super) fn words_mut(&mut self) -> &mut [u64] {
        lines::words_mut(&mut self.data)
    }

    /// The ring's bits (little-endian words, lines in order), as the formats store them.
    pub fn bytes(&self) -> &[u8] {
        lines::bytes(&self.data)
    }

    /// The bits as bytes, for a decoder or LOADCHUNK to fill.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        lines::bytes_mut(&mut self.data)
    }

    /// Loads the item's line in every group.
    #[inline(always)]
    pub(super) fn prefetch(&self, x: u64) {
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
    pub(super) fn spot(&self, group: u32, offset: u32, salt: u64, x: u64) -> u64 {
        let group_salt = self.group_salts[group as usize];
        let line = u64::from(group) * self.lines + reduce(x.wrapping_mul(group_salt), self.lines);
        line * LINE_BITS + u64::from(offset) + reduce(x.wrapping_mul(salt), self.segment_bits)
    }

    /// Clears a slice's segment in every line of its group (a new slice in a reused place).
    pub(super) fn clear(&mut self, group: u32, offset: u32) {
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
pub(super) enum Storage {
    /// Its own bit array: a slice of the sliced layout (a filter from before the blocked one),
    /// or one the ring has no place for (a grown slice, or a base slice while its place is
    /// taken during a burst).
    Own(Block<u64>),
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
    pub(super) salt: u64,
    pub(super) bits: u64,
    pub(super) storage: Storage,
}

impl Slice {
    /// A zeroed slice of `bits` bits (a multiple of 64) with its own bit array.
    pub fn new(
        generation: u64,
        started: u64,
        bits: u64,
        capacity: u64,
        level: u32,
    ) -> Result<Self, OutOfMemory> {
        let mut words = Block::<u64>::zeroed((bits / WORD_BITS) as usize)?;
        hints::advise_huge_pages(&mut words);
        Ok(Slice::with_storage(
            generation,
            started,
            bits,
            capacity,
            level,
            Storage::Own(words),
        ))
    }

    pub(super) fn with_storage(
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

    /// Bits in this slice (of its own array, or of its segments in the ring).
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

    /// The bits as bytes, for a decoder or LOADCHUNK to fill.
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
    pub(super) fn generation_items(&self, hashes: u32) -> u64 {
        (self.capacity / u64::from(hashes)).max(1)
    }
}
