//! A blocked Bloom array: every item's `k` bits in one 64-byte block (one cache line), so a
//! lookup loads one line where a classic array loads `k`. What the rotating windows' arrays
//! and the chains' blocked links share: the exact false-positive rate of an array at a load
//! ([`array_rate`], from the occupancy of a block: [`block_rates`]), the design that takes the
//! most items per block at a rate ([`ArrayDesign`]), and where an item's bits go in its block
//! ([`pattern`], [`holds`]).
//!
//! The rate is computed, not approximated: items fall on blocks by a Poisson law of mean `λ`
//! (items per block), and a block holding `i` items has its set bits distributed as the
//! occupancy of `i·k` uniform throws into [`BLOCK_BITS`] bins (a dynamic programme over the
//! throws); a never-added item's `k` uniform probes all land on set bits with probability
//! `(set / 512)^k`. The usual formula, which takes the expected fill for the fill, understates
//! the rate by the fill's spread (Jensen's inequality): 2.2% at `k` 9 and 33 items per block
//! (0.983e-3 against 1.004e-3), and the understatement grows with `k`.

use std::sync::OnceLock;

use crate::hash::mix64;
use crate::lines::Line;

/// Bits in a block: one 64-byte cache line, so an item's bits of one generation are one line.
pub const BLOCK_BITS: u64 = 512;

/// Most bits an item sets in its block: one multiplier each from a fixed table.
pub const MAX_BLOCK_HASHES: u32 = 64;

/// The most items per block a rate table covers, in throws (`i·k`): past it the rate is taken
/// as 1, which only ever makes an array take fewer items than it could.
pub(crate) const MAX_THROWS: usize = 6 * BLOCK_BITS as usize;

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

/// The multipliers that place an item's `k` bits in its block: fixed odd numbers, each bit
/// the top 9 bits of the item's key times one of them.
const SALTS: [u64; MAX_BLOCK_HASHES as usize] = {
    let mut salts = [0u64; MAX_BLOCK_HASHES as usize];
    let mut i = 0;
    while i < salts.len() {
        salts[i] = mix64(0x6a09_e667_f3bc_c909 ^ i as u64) | 1;
        i += 1;
    }
    salts
};

/// An item's `k` bits in a block, as the block's eight words would hold them.
#[inline(always)]
pub(crate) fn pattern(key: u64, hashes: u32) -> [u64; 8] {
    let mut mask = [0u64; 8];
    for &salt in &SALTS[..hashes as usize] {
        let bit = key.wrapping_mul(salt) >> 55;
        mask[(bit >> 6) as usize] |= 1 << (bit & 63);
    }
    mask
}

/// Whether `block` holds every bit of the pattern of `key` ([`pattern`]), testing bit by bit
/// and stopping at the first one clear: an absent item in a filter under half full is
/// refuted by its first or second bit, so building the whole mask (`k` multiplies and
/// stores) was most of a lookup's time once its line was in cache.
#[inline(always)]
pub(crate) fn has_pattern(block: &[u64; 8], key: u64, hashes: u32) -> bool {
    SALTS[..hashes as usize].iter().all(|&salt| {
        let bit = key.wrapping_mul(salt) >> 55;
        block[(bit >> 6) as usize] & (1 << (bit & 63)) != 0
    })
}

/// Whether a line holds every bit of a pattern.
#[inline(always)]
pub(crate) fn holds(line: &Line, mask: &[u64; 8]) -> bool {
    let missing = line
        .0
        .iter()
        .zip(mask)
        .fold(0, |missing, (word, bits)| missing | (bits & !word));
    missing == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_early_exit_test_agrees_with_the_whole_pattern() {
        let mut seen = [0u32; 2];
        for i in 0..200_000u64 {
            let key = mix64(i);
            let hashes = 1 + (i % u64::from(MAX_BLOCK_HASHES)) as u32;
            let mask = pattern(key, hashes);
            // Blocks from sparse to dense; every third one holds the pattern over its noise.
            let mut block = [0u64; 8];
            for (w, word) in block.iter_mut().enumerate() {
                let noise = mix64(i ^ (w as u64) << 40);
                *word = match i % 3 {
                    0 => noise & mix64(noise),
                    1 => noise | mix64(noise),
                    _ => noise | mask[w],
                };
            }
            let whole = block
                .iter()
                .zip(&mask)
                .all(|(word, bits)| word & bits == *bits);
            assert_eq!(
                has_pattern(&block, key, hashes),
                whole,
                "key {key:#x}, k {hashes}"
            );
            seen[usize::from(whole)] += 1;
        }
        // Both answers were exercised, many times.
        assert!(seen.iter().all(|&n| n > 10_000), "{seen:?}");
    }
}
