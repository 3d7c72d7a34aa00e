//! Hashing: one 128-bit hash per item, split into two 64-bit halves for Kirsch–Mitzenmacher
//! double hashing (`h1 + i*h2`), and multiply-shift range reduction instead of `%`.
//! RedisBloom's MurmurHash64A pair is here too, for links that came from RedisBloom.

use xxhash_rust::xxh3::xxh3_128_with_seed;

/// The hash seed of the native links a filter without a seed of its own grows: filters loaded
/// from RedisBloom's RDB or SCANDUMP data, whose own links keep RedisBloom's hashing. One fixed
/// value ("rsbloom1"), so that a replica or an AOF replay that loads the same data grows
/// identical links. Every filter rsbloom creates draws a random seed instead.
pub const FIXED_SEED: u64 = 0x7273_626c_6f6f_6d31;

/// The two halves of an item's hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ItemHash {
    /// The first probe's hash.
    pub h1: u64,
    /// The step between probes.
    pub h2: u64,
}

impl ItemHash {
    /// rsbloom's hash: xxh3-128 under the filter's seed. `h2` is forced odd so that the probe
    /// sequence never collapses onto one position.
    #[inline]
    pub fn native(item: &[u8], seed: u64) -> Self {
        let h = xxh3_128_with_seed(item, seed);
        ItemHash {
            h1: h as u64,
            h2: ((h >> 64) as u64) | 1,
        }
    }

    /// RedisBloom's hash pair (64-bit mode): `a = murmur(item, 0xc6a4a7935bd1e995)`,
    /// `b = murmur(item, a)`.
    pub fn redisbloom(item: &[u8]) -> Self {
        let a = murmur64a(item, 0xc6a4a7935bd1e995);
        ItemHash {
            h1: a,
            h2: murmur64a(item, a),
        }
    }

    /// RedisBloom's legacy 32-bit hash pair: `a = murmur2(item, 0x9747b28c)`,
    /// `b = murmur2(item, a)`, both zero-extended to 64 bits.
    pub fn redisbloom32(item: &[u8]) -> Self {
        let a = murmur2(item, 0x9747_b28c);
        ItemHash {
            h1: u64::from(a),
            h2: u64::from(murmur2(item, a)),
        }
    }

    /// The `i`-th probe as a raw 64-bit value.
    #[inline(always)]
    pub fn probe(&self, i: u32) -> u64 {
        self.h1.wrapping_add(u64::from(i).wrapping_mul(self.h2))
    }
}

/// SplitMix64's finaliser: a bijection of 64-bit values whose every output bit depends on
/// every input bit, so values in arithmetic progression come out as good as independent.
#[inline(always)]
pub const fn mix64(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Maps a uniform 64-bit value onto `0..n` (Lemire's multiply-shift).
#[inline(always)]
pub fn reduce(x: u64, n: u64) -> u64 {
    ((u128::from(x) * u128::from(n)) >> 64) as u64
}

/// Austin Appleby's MurmurHash64A.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4a7935bd1e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let mut k = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// Austin Appleby's 32-bit MurmurHash2 (little-endian blocks), as RedisBloom uses it.
pub fn murmur2(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    // C's `seed ^ len` with an `int` length.
    let mut h = seed ^ (data.len() as u32);
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes(chunk.try_into().expect("4-byte chunk"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redisbloom_vectors() {
        let cases: [(&[u8], u64, u64); 4] = [
            (b"", 0x1ab11ea5a7b2c56e, 0xbbddcb5ab56dd547),
            (b"foo", 0x822b4f99b121f10d, 0x9d63d52a557f61c2),
            (b"hello world!", 0x6fc090f3e01a7b8c, 0xac7352133b63861a),
            (b"12345678", 0x700bea34339441c4, 0x94ccce0994c5c064),
        ];
        for (item, a, b) in cases {
            assert_eq!(ItemHash::redisbloom(item), ItemHash { h1: a, h2: b });
        }
    }

    #[test]
    fn native_depends_on_seed_and_h2_is_odd() {
        let a = ItemHash::native(b"x", 1);
        let b = ItemHash::native(b"x", 2);
        assert_ne!(a, b);
        assert_eq!(a.h2 & 1, 1);
    }

    #[test]
    fn reduce_stays_in_range() {
        for n in [1u64, 7, 1152, u64::MAX] {
            for x in [0u64, 1, u64::MAX / 3, u64::MAX] {
                assert!(reduce(x, n) < n);
            }
        }
    }
}
