//! The design search of the rotating layout: how many generations (`r`), how many bits an item
//! sets in its block (`k`), and how many items a block takes, for a requested rate.
//!
//! The rate of one blocked array is computed, not approximated: items fall on blocks by a
//! Poisson law of mean `λ` (items per block), and a block holding `i` items has its set bits
//! distributed as the occupancy of `i·k` uniform throws into [`BLOCK_BITS`] bins (a dynamic
//! programme over the throws, [`block_rates`]); a never-added item's `k` uniform probes all
//! land on set bits with probability `(set / 512)^k`. The usual formula, which takes the
//! expected fill for the fill, understates the rate by the fill's spread (Jensen's
//! inequality): 2.2% at `k` 9 and 33 items per block (0.983e-3 against 1.004e-3), and the
//! understatement grows with `k`.
//!
//! The window at its worst moment holds `r + 1` full generations (the newest just before it
//! turns), so each is sized for `ε_g = 1 − (1 − HEADROOM·ε)^(1/(r+1))`. The search tries every
//! `r` from [`MIN_GENERATIONS`] (slack at most 1/8 window) to [`MAX_GENERATIONS`] and the `k`
//! around `log2(1/ε_g)`, and keeps the fewest bits per window item, `(r+1)/r · 512/λ`.
//! `cargo run --release -p rsbloom-core --example rotating_design` prints the table the docs
//! quote.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::blocked::MAX_THROWS;
pub use crate::blocked::{
    array_rate, block_rates, max_per_block, prepare, ArrayDesign, BLOCK_BITS, MAX_BLOCK_HASHES,
};
use crate::window::common::HEADROOM;

/// Fewest generations per window: the slack (how long an item may outlive the window) is one
/// generation, `1/r` of the window, at most an eighth.
pub const MIN_GENERATIONS: u32 = 8;

/// Most generations per window the search tries: each is one more line per lookup, for a
/// slack that shrinks and bits that grow (the optimum is at or near [`MIN_GENERATIONS`]).
pub const MAX_GENERATIONS: u32 = 16;

/// A window's design: its generations and the array every generation has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    /// Generations per window (`r`); the filter holds `r + 1`.
    pub generations: u32,
    /// Each generation's array.
    pub array: ArrayDesign,
}

/// Whether a rotating window filter can honour `error`: down to about 5.6e-16 (below it,
/// a generation's share `1 − (1 − 0.9ε)^(1/(r+1))` is lost in a double's rounding).
pub fn supports_error(error: f64) -> bool {
    Design::for_error(error).is_some()
}

impl Design {
    /// The design with the fewest bits per window item for a requested rate `error`, whose
    /// worst moment (every generation full) computes at most [`HEADROOM`] × `error`. A rate
    /// asked for before is answered from a memo (a server creates its windows at a few rates).
    pub fn for_error(error: f64) -> Option<Design> {
        /// Rates the memo keeps; past it, it starts again (a client cycling through rates
        /// costs the search, never memory).
        const MEMO_RATES: usize = 1024;
        static MEMO: Mutex<BTreeMap<u64, Option<Design>>> = Mutex::new(BTreeMap::new());
        let memo = || MEMO.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&design) = memo().get(&error.to_bits()) {
            return design;
        }
        let design = Self::search(error);
        let mut memo = memo();
        if memo.len() >= MEMO_RATES {
            memo.clear();
        }
        memo.insert(error.to_bits(), design);
        design
    }

    fn search(error: f64) -> Option<Design> {
        (MIN_GENERATIONS..=MAX_GENERATIONS)
            .filter_map(|generations| {
                let array = ArrayDesign::for_rate(generation_rate(error, generations))?;
                Some(Design { generations, array })
            })
            .min_by(|a, b| {
                a.bits_per_window_item()
                    .total_cmp(&b.bits_per_window_item())
            })
    }

    /// Bits per window item: `r + 1` generations of a window's `1/r` each.
    pub fn bits_per_window_item(&self) -> f64 {
        let r = f64::from(self.generations);
        (r + 1.0) / r * self.array.bits_per_item()
    }

    /// The computed rate at the worst moment: every generation full.
    pub fn worst_rate(&self) -> f64 {
        let g = array_rate(self.array.hashes, self.array.per_block);
        1.0 - (1.0 - g).powi(self.generations as i32 + 1)
    }
}

/// The rate each of `r + 1` generations may have for the window's worst moment to compute at
/// most [`HEADROOM`] × `error`.
pub fn generation_rate(error: f64, generations: u32) -> f64 {
    1.0 - (1.0 - HEADROOM * error).powf(1.0 / f64::from(generations + 1))
}

/// The most items an array of `blocks` blocks and `k` bits per item may hold while the window's
/// rate stays at most `ceiling`, given that an absent item passes every other live array with
/// probability `others_pass` (the product of `1 − rate` over them).
pub fn max_load(blocks: u64, hashes: u32, others_pass: f64, ceiling: f64) -> u64 {
    let fits = |load: u64| {
        let rate = array_rate(hashes, load as f64 / blocks as f64);
        1.0 - others_pass * (1.0 - rate) <= ceiling
    };
    let (mut low, mut high) = (0u64, blocks.saturating_mul(MAX_THROWS as u64));
    if fits(high) {
        return high;
    }
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if fits(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table against a direct simulation of one block: throw `i·k` bits, probe `k`.
    #[test]
    fn block_rates_match_a_simulated_block() {
        let k = 9;
        let rates = block_rates(k);
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state = crate::hash::mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state
        };
        for items in [20usize, 40, 60] {
            let trials = 100_000;
            let mut hits = 0u64;
            for _ in 0..trials {
                let mut block = [0u64; 8];
                for _ in 0..items * k as usize {
                    let bit = next() % 512;
                    block[(bit / 64) as usize] |= 1 << (bit % 64);
                }
                hits += (0..k).all(|_| {
                    let bit = next() % 512;
                    block[(bit / 64) as usize] & (1 << (bit % 64)) != 0
                }) as u64;
            }
            let measured = hits as f64 / trials as f64;
            let computed = rates[items];
            let sigma = (computed * (1.0 - computed) / trials as f64).sqrt();
            assert!(
                (measured - computed).abs() < 5.0 * sigma + 1e-5,
                "{items} items: measured {measured}, computed {computed}"
            );
        }
    }

    #[test]
    fn designs_meet_the_memory_and_slack_targets() {
        let one = Design::for_error(0.01).unwrap();
        assert!(one.generations >= MIN_GENERATIONS);
        assert!(one.bits_per_window_item() <= 17.5, "{one:?}");
        assert!(
            one.worst_rate() <= HEADROOM * 0.01 * 1.0001,
            "{}",
            one.worst_rate()
        );
        let tenth = Design::for_error(0.001).unwrap();
        assert!(tenth.bits_per_window_item() <= 25.0, "{tenth:?}");
        assert!(tenth.worst_rate() <= HEADROOM * 0.001 * 1.0001);
    }

    #[test]
    fn every_rate_a_window_takes_has_a_design() {
        for error in [0.9, 0.5, 0.1, 1e-2, 1e-4, 1e-6, 1e-9, 1e-12] {
            let d = Design::for_error(error).unwrap_or_else(|| panic!("no design for {error}"));
            assert!(
                d.worst_rate() <= HEADROOM * error * 1.0001,
                "{error}: {d:?}"
            );
        }
    }

    /// The fast search (Newton's steps, weights from the mode, climbing in `k`) picks the
    /// design the exhaustive bisection picked before it, recorded in
    /// `tests/fixtures/rotating-designs.tsv`: the same `r`, `k` and blocks, items per block
    /// within a millionth (the old sum's rounding noise, about 1e-16 of a rate).
    #[test]
    fn designs_are_the_ones_picked_before() {
        let table = include_str!("../../../../tests/fixtures/rotating-designs.tsv");
        let bits = |field: &str| f64::from_bits(u64::from_str_radix(field, 16).unwrap());
        let mut rows = 0;
        for line in table.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split('\t').collect();
            let error = bits(f[0]);
            let d = Design::search(error).unwrap();
            let want = (f[1].parse::<u32>().unwrap(), f[2].parse::<u32>().unwrap());
            assert_eq!((d.generations, d.array.hashes), want, "{error}");
            let per_block = bits(f[3]);
            assert!(
                (d.array.per_block / per_block - 1.0).abs() < 1e-6,
                "{error}: {} against {per_block}",
                d.array.per_block
            );
            for (items, blocks) in [(1_000, f[4]), (1_000_000, f[5])] {
                assert_eq!(d.array.blocks_for(items).to_string(), blocks, "{error}");
            }
            rows += 1;
        }
        assert_eq!(rows, 179);
    }

    /// Climbing from near the peak finds the `k` a scan of the whole range finds.
    #[test]
    fn climbing_finds_the_best_k() {
        for i in 0..60 {
            let rate = 10f64.powf(-0.3 - i as f64 * 0.25);
            let bits = (1.0 / rate).log2();
            let low = ((bits * 0.6).floor() as u32).clamp(1, MAX_BLOCK_HASHES);
            let high = ((bits * 1.6).ceil() as u32 + 2).clamp(1, MAX_BLOCK_HASHES);
            let scanned = (low..=high)
                .map(|k| (k, max_per_block(k, rate)))
                .filter(|&(k, p)| p > 0.0 && array_rate(k, p) <= rate)
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(k, _)| k);
            assert_eq!(
                ArrayDesign::for_rate(rate).map(|d| d.hashes),
                scanned,
                "{rate}"
            );
        }
    }

    /// The root found is the last load under the rate: a millionth more passes it.
    #[test]
    fn max_per_block_is_the_root() {
        for (k, rate) in [(9, 1e-3), (6, 0.05), (30, 1e-10), (1, 0.5), (64, 1e-15)] {
            let p = max_per_block(k, rate);
            assert!(array_rate(k, p) <= rate, "{k} {rate}");
            assert!(array_rate(k, p * (1.0 + 1e-6)) > rate, "{k} {rate}: {p}");
        }
    }

    #[test]
    fn max_load_is_the_last_load_under_the_ceiling() {
        let (blocks, k) = (1000, 9);
        let l = max_load(blocks, k, 0.995, 0.0095);
        let rate = |load: u64| 1.0 - 0.995 * (1.0 - array_rate(k, load as f64 / blocks as f64));
        assert!(rate(l) <= 0.0095 && rate(l + 1) > 0.0095);
        assert_eq!(max_load(blocks, k, 0.5, 0.0095), 0);
    }
}
