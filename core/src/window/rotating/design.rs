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

use std::sync::OnceLock;

use crate::window::sliding::HEADROOM;

/// Bits in a block: one 64-byte cache line, so an item's bits of one generation are one line.
pub const BLOCK_BITS: u64 = 512;

/// Fewest generations per window: the slack (how long an item may outlive the window) is one
/// generation, `1/r` of the window, at most an eighth.
pub const MIN_GENERATIONS: u32 = 8;

/// Most generations per window the search tries: each is one more line per lookup, for a
/// slack that shrinks and bits that grow (the optimum is at or near [`MIN_GENERATIONS`]).
pub const MAX_GENERATIONS: u32 = 16;

/// Most bits an item sets in its block: one multiplier each from a fixed table.
pub const MAX_HASHES: u32 = 64;

/// The most items per block a rate table covers, in throws (`i·k`): past it the rate is taken
/// as 1, which only ever makes an array take fewer items than it could.
const MAX_THROWS: usize = 6 * BLOCK_BITS as usize;

/// `rates[i]`: the probability that a never-added item's `k` probes all find set bits in a
/// block holding `i` items, for `i` up to `MAX_THROWS / k`. Computed once per `k`, on first
/// use (about 1.5 million multiply-adds), and shared by every filter.
pub fn block_rates(hashes: u32) -> &'static [f64] {
    static TABLES: [OnceLock<Box<[f64]>>; MAX_HASHES as usize + 1] =
        [const { OnceLock::new() }; MAX_HASHES as usize + 1];
    let k = hashes.clamp(1, MAX_HASHES);
    TABLES[k as usize].get_or_init(|| occupancy_rates(k))
}

fn occupancy_rates(k: u32) -> Box<[f64]> {
    let bins = BLOCK_BITS as usize;
    let k = k as usize;
    // The chance that k probes all hit set bits when `x` bits are set.
    let hit: Vec<f64> = (0..=bins)
        .map(|x| (x as f64 / bins as f64).powi(k as i32))
        .collect();
    // dist[x]: the chance that x bits are set after the throws so far.
    let mut dist = vec![0f64; bins + 1];
    dist[0] = 1.0;
    let mut rates = vec![0.0];
    for throws in 1..=MAX_THROWS {
        for x in (1..=throws.min(bins)).rev() {
            let stay = x as f64 / bins as f64;
            let new = (bins - x + 1) as f64 / bins as f64;
            dist[x] = dist[x] * stay + dist[x - 1] * new;
        }
        dist[0] = 0.0;
        if throws % k == 0 {
            rates.push(dist.iter().zip(&hit).map(|(p, h)| p * h).sum());
        }
    }
    rates.into()
}

/// The false-positive rate of a blocked array with `k` bits per item at `per_block` items per
/// block on average (a Poisson law of blocks' loads); blocks past the table count as all set.
pub fn array_rate(hashes: u32, per_block: f64) -> f64 {
    let rates = block_rates(hashes);
    if per_block <= 0.0 {
        return 0.0;
    }
    let ln_mean = per_block.ln();
    let mut ln_factorial = 0f64;
    let (mut rate, mut mass) = (0f64, 0f64);
    for (i, &r) in rates.iter().enumerate() {
        if i > 0 {
            ln_factorial += (i as f64).ln();
        }
        let p = (i as f64 * ln_mean - per_block - ln_factorial).exp();
        rate += p * r;
        mass += p;
    }
    (rate + (1.0 - mass).max(0.0)).min(1.0)
}

/// The most items per block an array of `k` bits per item takes at a rate of at most `rate`.
pub fn max_per_block(hashes: u32, rate: f64) -> f64 {
    let (mut low, mut high) = (0f64, MAX_THROWS as f64 / f64::from(hashes.max(1)));
    if array_rate(hashes, high) <= rate {
        return high;
    }
    for _ in 0..60 {
        let mid = 0.5 * (low + high);
        if array_rate(hashes, mid) <= rate {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// One blocked array's shape for a rate: `k` and the items per block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArrayDesign {
    /// Bits an item sets in its block.
    pub hashes: u32,
    /// Items per block at the rate.
    pub per_block: f64,
}

impl ArrayDesign {
    /// The `k` (tried around `log2(1/rate)`) that takes the most items per block at `rate`;
    /// None when no `k` up to [`MAX_HASHES`] reaches it.
    pub fn for_rate(rate: f64) -> Option<ArrayDesign> {
        if !(rate > 0.0 && rate < 1.0) {
            return None;
        }
        let bits = (1.0 / rate).log2();
        let low = ((bits * 0.6).floor() as u32).clamp(1, MAX_HASHES);
        let high = ((bits * 1.6).ceil() as u32 + 2).clamp(1, MAX_HASHES);
        (low..=high)
            .map(|hashes| ArrayDesign {
                hashes,
                per_block: max_per_block(hashes, rate),
            })
            .filter(|d| d.per_block > 0.0 && array_rate(d.hashes, d.per_block) <= rate)
            .max_by(|a, b| a.per_block.total_cmp(&b.per_block))
    }

    /// Blocks for `items` at this design: at least one.
    pub fn blocks_for(&self, items: u64) -> u64 {
        ((items as f64 / self.per_block).ceil() as u64).max(1)
    }

    /// Bits per item.
    pub fn bits_per_item(&self) -> f64 {
        BLOCK_BITS as f64 / self.per_block
    }
}

/// A window's design: its generations and the array every generation has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    /// Generations per window (`r`); the filter holds `r + 1`.
    pub generations: u32,
    /// Each generation's array.
    pub array: ArrayDesign,
}

impl Design {
    /// The design with the fewest bits per window item for a requested rate `error`, whose
    /// worst moment (every generation full) computes at most [`HEADROOM`] × `error`.
    pub fn for_error(error: f64) -> Option<Design> {
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

    #[test]
    fn max_load_is_the_last_load_under_the_ceiling() {
        let (blocks, k) = (1000, 9);
        let l = max_load(blocks, k, 0.995, 0.0095);
        let rate = |load: u64| 1.0 - 0.995 * (1.0 - array_rate(k, load as f64 / blocks as f64));
        assert!(rate(l) <= 0.0095 && rate(l + 1) > 0.0095);
        assert_eq!(max_load(blocks, k, 0.5, 0.0095), 0);
    }
}
