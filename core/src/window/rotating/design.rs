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
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::window::common::HEADROOM;

/// Bits in a block: one 64-byte cache line, so an item's bits of one generation are one line.
pub const BLOCK_BITS: u64 = 512;

/// Fewest generations per window: the slack (how long an item may outlive the window) is one
/// generation, `1/r` of the window, at most an eighth.
pub const MIN_GENERATIONS: u32 = 8;

/// Most generations per window the search tries: each is one more line per lookup, for a
/// slack that shrinks and bits that grow (the optimum is at or near [`MIN_GENERATIONS`]).
pub const MAX_GENERATIONS: u32 = 16;

/// Most bits an item sets in its block: one multiplier each from a fixed table.
pub const MAX_BLOCK_HASHES: u32 = 64;

/// The most items per block a rate table covers, in throws (`i·k`): past it the rate is taken
/// as 1, which only ever makes an array take fewer items than it could.
const MAX_THROWS: usize = 6 * BLOCK_BITS as usize;

/// `rates[i]`: the probability that a never-added item's `k` probes all find set bits in a
/// block holding `i` items, for `i` up to `MAX_THROWS / k`. Every `k`'s table comes from one
/// run of the occupancy recurrence (the set bits' distribution after each throw does not
/// depend on `k`, only where it is sampled does): about 9 million multiply-adds, 10 ms, once
/// per process ([`prepare`] runs it at module load, so no command pays for it). Computing
/// each `k`'s table on its first use ran the recurrence once per `k`, 1.5 ms each, inside
/// the command that first needed it.
pub fn block_rates(hashes: u32) -> &'static [f64] {
    &all_block_rates()[hashes.clamp(1, MAX_BLOCK_HASHES) as usize]
}

/// Computes the rate tables now, so that no later command pays for them.
pub fn prepare() {
    all_block_rates();
}

fn all_block_rates() -> &'static [Box<[f64]>] {
    static TABLES: OnceLock<Box<[Box<[f64]>]>> = OnceLock::new();
    TABLES.get_or_init(occupancy_rates)
}

/// The table of every `k` from 0 (empty, unused) to [`MAX_BLOCK_HASHES`].
fn occupancy_rates() -> Box<[Box<[f64]>]> {
    let bins = BLOCK_BITS as usize;
    let ks = MAX_BLOCK_HASHES as usize;
    // hit[k][x]: the chance that k probes all hit set bits when `x` bits are set.
    let hit: Vec<Vec<f64>> = (0..=ks)
        .map(|k| {
            (0..=bins)
                .map(|x| (x as f64 / bins as f64).powi(k as i32))
                .collect()
        })
        .collect();
    let mut tables: Vec<Vec<f64>> = (0..=ks).map(|_| vec![0.0]).collect();
    // dist[x]: the chance that x bits are set after the throws so far.
    let mut dist = vec![0f64; bins + 1];
    dist[0] = 1.0;
    for throws in 1..=MAX_THROWS {
        for x in (1..=throws.min(bins)).rev() {
            let stay = x as f64 / bins as f64;
            let new = (bins - x + 1) as f64 / bins as f64;
            dist[x] = dist[x] * stay + dist[x - 1] * new;
        }
        dist[0] = 0.0;
        for k in (1..=ks).filter(|k| throws % k == 0) {
            tables[k].push(dist.iter().zip(&hit[k]).map(|(p, h)| p * h).sum());
        }
    }
    tables.into_iter().map(Vec::into_boxed_slice).collect()
}

/// Poisson weights smaller than this share of the sum so far end the walk away from the mode:
/// far below a double's precision, so the sum is the full sum's to the last bits.
const NEGLIGIBLE: f64 = 1e-22;

/// The false-positive rate of a blocked array with `k` bits per item at `per_block` items per
/// block on average (a Poisson law of blocks' loads); blocks past the table count as all set.
pub fn array_rate(hashes: u32, per_block: f64) -> f64 {
    rate_and_slope(hashes, per_block).0
}

/// [`array_rate`] and its derivative in `per_block`. The Poisson weights are walked out from
/// the mode, each from its neighbour (one multiply, where an `exp` per term over the whole
/// table made the design search 30 ms), until they are [`NEGLIGIBLE`]. The derivative of
/// `Σ p_i(λ)·c_i` is `Σ p_i·(c_{i+1} − c_i)`.
fn rate_and_slope(hashes: u32, per_block: f64) -> (f64, f64) {
    let rates = block_rates(hashes);
    let lambda = per_block;
    if lambda <= 0.0 {
        return (0.0, rates.get(1).copied().unwrap_or(1.0));
    }
    let factorials = ln_factorials();
    let mode = lambda.floor() as usize;
    if mode >= factorials.len() {
        // Hundreds of standard deviations past every table: every block is full.
        return (1.0, 0.0);
    }
    let c = |i: usize| rates.get(i).copied().unwrap_or(1.0);
    let at_mode = (mode as f64 * lambda.ln() - lambda - factorials[mode]).exp();
    let (mut rate, mut slope, mut mass) = (0f64, 0f64, 0f64);
    // Upwards from the mode (`up`), then downwards from below it.
    for up in [true, false] {
        let (mut i, mut p) = (mode, at_mode);
        loop {
            if !up {
                if i == 0 {
                    break;
                }
                p *= i as f64 / lambda;
                i -= 1;
            }
            if p < NEGLIGIBLE * mass || p < f64::MIN_POSITIVE {
                break;
            }
            rate += p * c(i);
            slope += p * (c(i + 1) - c(i));
            mass += p;
            if up {
                i += 1;
                p *= lambda / i as f64;
            }
        }
    }
    (rate.min(1.0), slope)
}

/// `ln(i!)` for every `i` up to twice the most items per block a table covers.
fn ln_factorials() -> &'static [f64] {
    static TABLE: OnceLock<Box<[f64]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut sum = 0f64;
        (0..=2 * MAX_THROWS)
            .map(|i| {
                if i > 0 {
                    sum += (i as f64).ln();
                }
                sum
            })
            .collect()
    })
}

/// The most items per block an array of `k` bits per item takes at a rate of at most `rate`:
/// the root of `array_rate = rate`, by Newton's method on the logarithm of the rate (a
/// handful of steps, where a bisection took 60), kept inside a bracket that every step
/// narrows.
pub fn max_per_block(hashes: u32, rate: f64) -> f64 {
    let (mut low, mut high) = (0f64, MAX_THROWS as f64 / f64::from(hashes.max(1)));
    if array_rate(hashes, high) <= rate {
        return high;
    }
    // The textbook estimate, (1 − e^(−kλ/512))^k = rate, as the first guess.
    let k = f64::from(hashes.max(1));
    let guess = -(BLOCK_BITS as f64) / k * (1.0 - rate.powf(1.0 / k)).ln();
    let mut x = if guess > 0.0 && guess < high {
        guess
    } else {
        high / 2.0
    };
    for _ in 0..100 {
        let (f, slope) = rate_and_slope(hashes, x);
        if f <= rate {
            low = x;
        } else {
            high = x;
        }
        if high - low <= 1e-14 * high {
            break;
        }
        let step = if f > 0.0 && slope > 0.0 {
            (f.ln() - rate.ln()) * f / slope
        } else {
            f64::NAN
        };
        let next = x - step;
        x = if next > low && next < high {
            // Converged: the step is below the precision of the rate.
            if step.abs() <= 1e-15 * x {
                break;
            }
            next
        } else {
            0.5 * (low + high)
        };
    }
    // The steps may have come from above: walk down from `high` until the rate holds.
    let (mut x, mut delta) = (high, 1e-15 * high);
    while x > low && array_rate(hashes, x) > rate {
        x -= delta;
        delta *= 2.0;
    }
    x.max(low)
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
    /// None when no `k` up to [`MAX_BLOCK_HASHES`] reaches it.
    pub fn for_rate(rate: f64) -> Option<ArrayDesign> {
        if !(rate > 0.0 && rate < 1.0) {
            return None;
        }
        let bits = (1.0 / rate).log2();
        let low = ((bits * 0.6).floor() as u32).clamp(1, MAX_BLOCK_HASHES);
        let high = ((bits * 1.6).ceil() as u32 + 2).clamp(1, MAX_BLOCK_HASHES);
        // Items per block at `k`, 0 when no load reaches the rate.
        let per_block = |hashes: u32| {
            let per_block = max_per_block(hashes, rate);
            let holds = per_block > 0.0 && array_rate(hashes, per_block) <= rate;
            if holds {
                per_block
            } else {
                0.0
            }
        };
        // Items per block rise with `k` to one peak and fall after it: climb from near the
        // peak each way until two `k` in a row do worse (4 to 6 tries, where every `k` of the
        // range was 13 to 50; the same choice at every rate, `tests::climbing_finds_the_best_k`).
        let start = ((bits * 0.9).round() as u32).clamp(low, high);
        let mut best = (start, per_block(start));
        for step in [1i64, -1] {
            let mut worse = 0;
            let mut hashes = i64::from(start) + step;
            while (i64::from(low)..=i64::from(high)).contains(&hashes) && worse < 2 {
                let value = per_block(hashes as u32);
                // On a tie, the larger k (as a scan in rising k keeps the last best).
                if value > best.1 || (value == best.1 && hashes as u32 > best.0) {
                    best = (hashes as u32, value);
                    worse = 0;
                } else {
                    worse += 1;
                }
                hashes += step;
            }
        }
        (best.1 > 0.0).then_some(ArrayDesign {
            hashes: best.0,
            per_block: best.1,
        })
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
