//! Lookups: an item's `r + 1` base lines are consecutive (block `b` of every slot), requested
//! together; a batch hashes and prefetches them a block of [`DEPTH`] items ahead, as a
//! blocked link's adds do (BF.BULKEXISTS on a 10M time window holding 5M: 6.5-6.9 -> 7.5-7.7
//! M items/s in blocks, where a ring interleaved the requests with the probes).

use crate::blocked::{holds, pattern};
use crate::hash::{reduce, ItemHash};
use crate::hints;
use crate::lookahead::answer_in_blocks;
use crate::window::rotating::Rotating;

/// An item's place in the base arrays: its first line (block `b` of slot 0) and its bits.
pub(crate) struct Probe {
    pub(crate) first: usize,
    pub(crate) mask: [u64; 8],
}

/// Items a batch prepares ahead: each is `r + 1` lines in flight (the chains' 16 items are
/// about as many lines).
pub(crate) const DEPTH: usize = 8;

impl Rotating {
    /// An item's hash under this filter's seed.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> ItemHash {
        ItemHash::native(item, self.base.seed)
    }

    /// The first of the item's `r + 1` base lines (its block in slot 0).
    #[inline(always)]
    pub(crate) fn first_line(&self, h: &ItemHash) -> usize {
        reduce(h.h1, self.blocks) as usize * self.slots.len()
    }

    /// Requests the item's base lines, and its line in every extra array.
    #[inline(always)]
    pub(crate) fn prefetch(&self, h: &ItemHash) {
        let first = self.first_line(h);
        for line in &self.base_lines[first..first + self.slots.len()] {
            hints::prefetch(&line.0[0]);
        }
        // A burst's extra arrays too: an absent item reads a line in each, and a present one
        // added during the burst is found there; unrequested, each was a miss in turn. A 10M
        // time window fed 5M items in one generation, BF.BULKEXISTS of present items: 3.2-3.4
        // -> 5.7-5.8 M items/s (3 alternating pairs).
        if self.has_extras {
            for extra in self.slots.iter().flat_map(|s| &s.extras) {
                hints::prefetch(&extra.lines[extra.line_of(h)].0[0]);
            }
        }
    }

    /// The item's base lines and bit pattern, computed once for every test and write of it.
    #[inline]
    pub(crate) fn probe(&self, h: &ItemHash) -> Probe {
        Probe {
            first: self.first_line(h),
            mask: pattern(h.h2, self.hashes),
        }
    }

    /// Whether the item is in one of the slots of `live` (a mask).
    #[inline]
    pub(crate) fn holds_in(&self, h: &ItemHash, live: u32) -> bool {
        self.holds_probe(&self.probe(h), h, live)
    }

    /// [`Rotating::holds_in`] for an item already probed.
    #[inline]
    pub(crate) fn holds_probe(&self, p: &Probe, h: &ItemHash, live: u32) -> bool {
        let lines = &self.base_lines[p.first..p.first + self.slots.len()];
        let in_base = lines
            .iter()
            .enumerate()
            .any(|(s, line)| live & 1 << s != 0 && holds(line, &p.mask));
        in_base || (self.has_extras && self.in_extras(h, live))
    }

    /// Whether the item is in an extra array of one of the slots of `live`.
    pub(crate) fn in_extras(&self, h: &ItemHash, live: u32) -> bool {
        self.slots
            .iter()
            .enumerate()
            .filter(|&(s, _)| live & 1 << s != 0)
            .any(|(_, slot)| slot.extras.iter().any(|e| e.holds(h)))
    }

    /// The live slots a read at server time `now` (Unix ms) sees.
    pub(crate) fn live_at(&self, now: u64) -> u32 {
        self.live_mask(self.generation_at(self.clock_at(now)))
    }

    /// Whether the item may have been added within the window, at server time `now`.
    pub fn contains(&self, item: &[u8], now: u64) -> bool {
        self.holds_in(&self.hash(item), self.live_at(now))
    }

    /// Checks items in order at server time `now`, passing each answer on.
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        now: u64,
        answer: impl FnMut(bool),
    ) {
        let live = self.live_at(now);
        answer_in_blocks::<_, _, _, DEPTH>(
            self,
            items,
            |f, item| {
                let h = f.hash(item);
                f.prefetch(&h);
                h
            },
            |f, h| f.holds_in(&h, live),
            answer,
        );
    }
}
