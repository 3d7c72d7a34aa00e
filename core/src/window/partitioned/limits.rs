//! The first layout's limits and the two formulas its sizing and its slices share (a slice's
//! fill, and the `exp` every build computes alike): a leaf the model, the design search and
//! the ring all read.

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
pub const MAX_SLICE_HASHES: u32 = 48;

/// Whether a window filter can honour `error`: it needs about `log2(1/error)` bits per item,
/// at most [`MAX_SLICE_HASHES`].
pub fn supports_error(error: f64) -> bool {
    error > 0.0 && error < 1.0 && (1.0 / error).log2().ceil() <= f64::from(MAX_SLICE_HASHES)
}

/// Most slices a filter may hold (the growth of a time window included).
pub const MAX_SLICES: usize = 1 << 12;

/// Most times a new slice's fill may be halved to hold the rate (see [`Sliding`](super::Sliding)'s growth).
pub(crate) const MAX_FILL_STEPS: u32 = 40;

/// `ended` of the newest slice: its generation is still open.
pub const OPEN: u64 = u64::MAX;

/// e^-x for x >= 0, from additions and multiplications only, so that every build on every
/// machine (a primary and its replica, a save and a later load) computes the same sizes: the
/// platform's `exp` may differ in the last bit.
pub(crate) fn exp_neg(x: f64) -> f64 {
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

/// The fill (share of set bits) of a slice of `bits` bits after `load` items each set one bit.
pub(crate) fn fill(load: u64, bits: u64) -> f64 {
    1.0 - exp_neg(load as f64 / bits as f64)
}
