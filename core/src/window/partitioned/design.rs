//! The design search: `k`, `l` and the load per bit that hold the requested rate at the worst
//! moment with the fewest bits per window item ([`Design::for_error`]), from the exact
//! false-positive rate of a run scan over slices of given fills ([`window_fpr`]).

use crate::lines::LINE_BITS;
use crate::sizing::MAX_LINK_BITS;
use crate::sizing::WORD_BITS;
use crate::window::common::HEADROOM;
use crate::window::partitioned::limits::{fill, supports_error};
use crate::window::partitioned::limits::{MAX_GENERATIONS, MAX_SLICE_HASHES};
use crate::window::partitioned::ring::{Ring, MIN_SEGMENTS};

/// The false-positive rate of a lookup over slices of the given fills (in lookup order): the
/// probability that `k` consecutive slices all have the probed bit set, slices independent.
/// A recurrence over the length of the current run of set bits.
pub(crate) fn window_fpr(k: u32, fills: impl IntoIterator<Item = f64>) -> f64 {
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
pub(crate) struct Design {
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
    pub(super) fn worst_fpr(&self, generation_items: u64) -> f64 {
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
    pub(super) fn slice_bits(&self, capacity: u64) -> u64 {
        match Ring::shape(self.hashes.into(), self.generations.into()) {
            Some((_, segment_bits)) => Ring::slice_bits(capacity, self.load_per_bit, segment_bits),
            None => slice_bits(capacity, self.load_per_bit),
        }
    }

    /// Bits per window item, the bits a ring's lines leave unused included.
    pub(crate) fn bits_per_item(&self) -> f64 {
        let (k, l) = (f64::from(self.hashes), f64::from(self.generations));
        let used = Ring::shape(self.hashes.into(), self.generations.into())
            .map_or(1.0, |(segments, bits)| {
                (segments * bits) as f64 / LINE_BITS as f64
            });
        (k + l) * k / (l * self.load_per_bit * used)
    }

    /// The design with the fewest bits per item whose worst-case rate is at most
    /// [`HEADROOM`] × `error`; None when the rate needs more than [`MAX_SLICE_HASHES`] bits per item.
    /// Takes a few milliseconds (a search over `k`, `l` and the fill), at creation only.
    pub(crate) fn for_error(error: f64) -> Option<Design> {
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
        for k in (centre - 3).max(1)..=(centre + 6).min(i64::from(MAX_SLICE_HASHES)) {
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
pub(super) fn slice_bits(capacity: u64, load_per_bit: f64) -> u64 {
    let bits = (capacity as f64 / load_per_bit).ceil();
    if bits.is_nan() || bits >= MAX_LINK_BITS as f64 {
        return MAX_LINK_BITS + WORD_BITS;
    }
    (bits as u64).max(1).div_ceil(WORD_BITS) * WORD_BITS
}
