//! Sizing of one link: how many bits and hash functions a classic Bloom filter needs so that,
//! once it holds `capacity` items, its expected false-positive rate is at or below `error`.
//!
//! RedisBloom uses the textbook `bits = n * -ln(p) / ln(2)^2` with `k = ceil(ln2 * bits/n)`,
//! which lands slightly *above* the requested rate (0.01004 for 0.01) because `k` is rounded.
//! rsbloom searches the integer `k` around the optimum and takes the smallest bit count whose
//! rate `(1 - e^(-kn/m))^k` is at or below the request, so the rate it promises is the rate
//! it delivers.

/// Bits are allocated in whole 64-bit words.
pub const WORD_BITS: u64 = 64;

/// The most bits one link may have: 2^40 (128 GiB). The one per-link limit, for creation and
/// for every decoder alike, so that any filter rsbloom builds can be saved and loaded back.
/// (A chain may have many links; the per-filter limit is `bf.max-filter-bytes`.)
pub const MAX_LINK_BITS: u64 = 1 << 40;

/// The most hash functions a link may use; beyond this the error rate is absurdly small and
/// every add would cost thousands of probes.
pub const MAX_LINK_HASHES: u32 = 4096;

/// The geometry of one classic link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// Number of bits, a multiple of [`WORD_BITS`].
    pub bits: u64,
    /// Number of probes per item.
    pub hashes: u32,
}

impl Geometry {
    /// Bytes of bit storage.
    pub fn bytes(&self) -> u64 {
        self.bits / 8
    }
}

/// Expected false-positive rate of a classic Bloom filter with `bits` bits and `hashes`
/// probes once it holds `items` items.
pub fn classic_fpr(bits: u64, hashes: u32, items: u64) -> f64 {
    let k = f64::from(hashes);
    let fill = -(-k * items as f64 / bits as f64).exp_m1();
    fill.powf(k)
}

/// The cheapest classic geometry for `capacity` items at `error`, or `None` when no geometry
/// within [`MAX_LINK_HASHES`] and [`MAX_LINK_BITS`] can honour it (error underflowed, capacity too large).
pub fn classic(capacity: u64, error: f64) -> Option<Geometry> {
    if capacity == 0 || !(error > 0.0 && error < 1.0) || !error.is_normal() {
        return None;
    }
    let ln_err = error.ln();
    // Bits per item at the real-valued optimum, and the optimal k around which we search.
    let bpe = -ln_err / (std::f64::consts::LN_2 * std::f64::consts::LN_2);
    let k_opt = (std::f64::consts::LN_2 * bpe).round().max(1.0) as i64;
    let mut best: Option<Geometry> = None;
    for k in (k_opt - 2).max(1)..=(k_opt + 2) {
        if k > i64::from(MAX_LINK_HASHES) {
            break;
        }
        let kf = k as f64;
        // (1 - e^(-kn/m))^k = p  <=>  m = -k n / ln(1 - p^(1/k)); computed without cancellation.
        let per_item = -kf / (-(ln_err / kf).exp_m1()).ln();
        let bits_f = (per_item * capacity as f64).ceil();
        if !bits_f.is_finite() || bits_f <= 0.0 || bits_f > MAX_LINK_BITS as f64 {
            continue;
        }
        let mut bits = (bits_f as u64).div_ceil(WORD_BITS) * WORD_BITS;
        // Guard against the float formula landing a hair above the target.
        while classic_fpr(bits, k as u32, capacity) > error {
            bits += WORD_BITS;
        }
        if bits > MAX_LINK_BITS {
            continue;
        }
        let candidate = Geometry {
            bits,
            hashes: k as u32,
        };
        if best.is_none_or(|b| candidate.bits < b.bits) {
            best = Some(candidate);
        }
    }
    best
}

/// Bytes a classic link for `capacity` items at `error` would need, saturating: used to name
/// the size of a request too large to build.
pub fn estimate_bytes(capacity: u64, error: f64) -> u64 {
    let bpe = -error.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2);
    // `as` saturates for floats beyond u64's range.
    (capacity as f64 * bpe / 8.0) as u64
}

/// RedisBloom's `ln 2`, truncated as in its source: its hash counts are `ceil(LN2 * bpe)` with
/// this value, so reproducing them needs it rather than `std::f64::consts::LN_2`.
#[allow(clippy::approx_constant)]
pub const REDISBLOOM_LN2: f64 = 0.693147180559945;

/// RedisBloom's own sizing (its `bloom_init` with NOROUND|FORCE64), for links that came from
/// RedisBloom and for reproducing its figures.
pub fn redisbloom(capacity: u64, error: f64) -> Option<Geometry> {
    const LN2: f64 = REDISBLOOM_LN2;
    const DENOM: f64 = 0.480453013918201;
    if capacity == 0 || !(error > 0.0 && error < 1.0) {
        return None;
    }
    let bpe = (-(error.ln() / DENOM)).abs();
    let bits_f = capacity as f64 * bpe;
    if bits_f.is_nan() || bits_f > MAX_LINK_BITS as f64 {
        return None;
    }
    let bits0 = (bits_f as u64).max(1);
    let bytes = if !bits0.is_multiple_of(64) {
        (bits0 / 64 + 1) * 8
    } else {
        bits0 / 8
    };
    let hashes = (LN2 * bpe).ceil() as u32;
    (bytes * 8 <= MAX_LINK_BITS).then_some(Geometry {
        bits: bytes * 8,
        hashes,
    })
}

/// A bit array's words as bytes, as every serialised form stores them: little-endian words.
pub fn words_as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding and any byte pattern is a valid u8; the slice covers exactly
    // the words' memory. The layout is little-endian, checked at compile time in lib.rs.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), size_of_val(words)) }
}

/// Mutable byte view of a bit array (see [`words_as_bytes`]).
pub fn words_as_bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: as in `words_as_bytes`; every byte pattern is also a valid u64, so writes through
    // the byte view cannot create an invalid value.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), size_of_val(words)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_meets_the_rate_with_the_least_memory_near_redisbloom() {
        for (n, p) in [
            (100u64, 0.005),
            (1_000_000, 0.005),
            (1_000_000, 0.0005),
            (1000, 0.01),
        ] {
            let g = classic(n, p).unwrap();
            let rb = redisbloom(n, p).unwrap();
            assert!(classic_fpr(g.bits, g.hashes, n) <= p, "{n} {p} {g:?}");
            // Within 0.2% (plus a word) of RedisBloom's bits, which undershoot the rate.
            assert!(
                (g.bits as f64) < rb.bits as f64 * 1.002 + 64.0,
                "{g:?} vs {rb:?}"
            );
            assert_eq!(g.bits % 64, 0);
        }
    }

    #[test]
    fn classic_figures() {
        // 1,000,000 items at 0.5%: 11.035 bits per item, 8 probes.
        let g = classic(1_000_000, 0.005).unwrap();
        assert_eq!(g.hashes, 8);
        assert!((11_030_000..11_040_000).contains(&g.bits), "{g:?}");
        // 0.1%: 14.38 bits per item, 10 probes.
        let g = classic(1_000_000, 0.001).unwrap();
        assert_eq!(g.hashes, 10);
        assert!((14_370_000..14_390_000).contains(&g.bits), "{g:?}");
    }

    #[test]
    fn redisbloom_figures_match_its_reference_table() {
        let cases = [
            (100, 0.0005, 1600, 11),
            (100, 0.005, 1152, 8),
            (3, 0.01, 64, 7),
            (1000, 0.01, 9600, 7),
            (1000, 0.025, 7680, 6),
            (3, 0.99, 64, 1),
            (15_000_000, 0.01, 143_775_936, 7),
        ];
        for (n, p, bits, k) in cases {
            assert_eq!(
                redisbloom(n, p),
                Some(Geometry { bits, hashes: k }),
                "{n} {p}"
            );
        }
    }

    #[test]
    fn impossible_requests_are_none() {
        assert_eq!(classic(0, 0.01), None);
        assert_eq!(classic(10, 0.0), None);
        assert_eq!(classic(10, 1.0), None);
        assert_eq!(classic(10, f64::NAN), None);
        assert_eq!(classic(10, 5e-324), None); // subnormal: the halving chain underflowed
        assert_eq!(classic(u64::MAX, 0.01), None);
        assert!(classic(1, 1e-300).is_some());
    }
}
