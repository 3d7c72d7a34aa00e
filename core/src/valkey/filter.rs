//! [`ValkeyBloom`]: valkey-bloom's scaling Bloom filter, as its `bloomfltr` keys hold it, with
//! its hashing, sizing and growth, so that a key loaded from valkey-bloom answers every item as
//! valkey-bloom did and grows as valkey-bloom would.
//!
//! Its rules, read from valkey-bloom's behaviour (and the `bloomfilter` crate 3.x it stores):
//! - Each sub-filter keeps valkey-bloom's serialised bit array whole: a 45-byte header (version
//!   1, the length in bytes as u64 LE, `k` as u32 LE, the 32-byte seed), then the bits, least
//!   significant first in each byte, `8 × length` of them (any whole number of bytes).
//! - An item hashes to `h0` and `h1`: SipHash-1-3 keyed with seed bytes 0–15 and 16–31 over the
//!   item's length (u64 LE) then the item. Probe 0 is `h0`, probe 1 `h1`, probe `i ≥ 2` is
//!   `(h0 + i·h1 mod 2^64) mod 0xFFFF_FFFF_FFFF_FFC5`; its bit is the probe modulo the bit count.
//! - Sub-filter `n` has the previous capacity × expansion and the rate `error × tightening^n`:
//!   `bytes = ceil(capacity · ln p / (−8 ln² 2))`, `k = round(8 · bytes / capacity · ln 2)`.
//! - An add of an item every sub-filter may hold is not counted; a new one goes to the last
//!   sub-filter until it holds its capacity, then a new sub-filter takes it (expansion 0: the
//!   filter is full).

use std::f64::consts::LN_2;
use std::hash::Hasher;

use siphasher::sip::SipHasher13;

use crate::defrag::Defrag;
use crate::hints;
use crate::lookahead::{answer_ahead, each_ahead};
use crate::memory::{self, allocated, OutOfMemory};
use crate::outcome::{AddOutcome, FilterError};
use crate::spec::{FilterSpec, Growth};

/// The version byte of a sub-filter's bit array header.
pub(crate) const BITMAP_VERSION: u8 = 1;
/// Bytes of a sub-filter's bit array header: version, length, `k`, seed.
pub(crate) const BITMAP_HEADER: usize = 1 + 8 + 4 + SEED_BYTES;
/// Bytes of a seed.
pub(crate) const SEED_BYTES: usize = 32;
/// The seed valkey-bloom gives every filter with `bf.bloom-use-random-seed no`.
pub const FIXED_SEED: [u8; SEED_BYTES] = [
    89, 15, 245, 34, 234, 120, 17, 218, 167, 20, 216, 9, 59, 62, 123, 217, 29, 137, 138, 115, 62,
    152, 136, 135, 48, 127, 151, 205, 40, 7, 51, 131,
];
/// The modulus of probes from the third on: the largest prime below 2^64.
const PROBE_MODULUS: u64 = 0xFFFF_FFFF_FFFF_FFC5;

/// Bytes of bit array valkey-bloom gives `capacity` items at rate `error`.
pub(crate) fn bitmap_bytes(capacity: u64, error: f64) -> f64 {
    (capacity as f64 * error.ln() / (-8.0 * (LN_2 * LN_2))).ceil()
}

/// Hash functions valkey-bloom gives `bytes` of bit array for `capacity` items.
pub(crate) fn hash_count(bytes: u64, capacity: u64) -> u32 {
    let k = ((bytes * 8) as f64 / capacity as f64 * 2f64.ln()).round();
    (k as u32).max(1)
}

/// An item's two SipHash values under one seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SipPair {
    h0: u64,
    h1: u64,
}

impl SipPair {
    /// Hashes `item` under `seed`.
    pub fn new(item: &[u8], seed: &[u8; SEED_BYTES]) -> Self {
        let half = |key: &[u8]| {
            let mut h = SipHasher13::new_with_key(key.try_into().expect("16 bytes"));
            h.write(&(item.len() as u64).to_le_bytes());
            h.write(item);
            h.finish()
        };
        SipPair {
            h0: half(&seed[..16]),
            h1: half(&seed[16..]),
        }
    }

    /// Probe `i`, before the reduction to a bit.
    #[inline]
    fn probe(&self, i: u32) -> u64 {
        match i {
            0 => self.h0,
            1 => self.h1,
            _ => self.h0.wrapping_add(u64::from(i).wrapping_mul(self.h1)) % PROBE_MODULUS,
        }
    }
}

/// A saved bit array of `bytes` zero bytes: its header (version, length, `k`, seed), then the
/// bits.
pub(crate) fn empty_bitmap(
    bytes: u64,
    hashes: u32,
    seed: &[u8; SEED_BYTES],
) -> Result<Vec<u8>, OutOfMemory> {
    let size = usize::try_from(bytes)
        .ok()
        .and_then(|b| b.checked_add(BITMAP_HEADER))
        .ok_or(OutOfMemory { bytes })?;
    let mut raw = Vec::from(memory::zeroed::<u8>(size)?);
    raw[0] = BITMAP_VERSION;
    raw[1..9].copy_from_slice(&bytes.to_le_bytes());
    raw[9..13].copy_from_slice(&hashes.to_le_bytes());
    raw[13..BITMAP_HEADER].copy_from_slice(seed);
    Ok(raw)
}

/// One sub-filter: valkey-bloom's bit array (header included, as it is saved), its capacity
/// and its items.
#[derive(Debug, PartialEq)]
pub struct SubFilter {
    raw: Vec<u8>,
    /// Items this sub-filter was sized for.
    pub capacity: u64,
    /// Items added to it (adds of items that no sub-filter held).
    pub items: u64,
}

/// A copy whose bit array the allocator may refuse ([`OutOfMemory::refuse_copy`]), where the
/// derived copy aborted the server.
impl Clone for SubFilter {
    fn clone(&self) -> Self {
        SubFilter {
            raw: memory::copied_vec(&self.raw, self.raw.capacity()),
            capacity: self.capacity,
            items: self.items,
        }
    }
}

impl SubFilter {
    /// A sub-filter from a bit array whose header was checked ([`crate::valkey::builder`]).
    pub(crate) fn from_raw(raw: Vec<u8>, capacity: u64, items: u64) -> Self {
        SubFilter {
            raw,
            capacity,
            items,
        }
    }

    /// The bit array as valkey-bloom saves it: header, then bits.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The bits alone.
    pub fn bits(&self) -> &[u8] {
        &self.raw[BITMAP_HEADER..]
    }

    /// The bits alone, writable (LOADCHUNK fills them; any bits make a valid filter).
    pub fn bits_mut(&mut self) -> &mut [u8] {
        &mut self.raw[BITMAP_HEADER..]
    }

    /// The seed its hashes are keyed with.
    pub fn seed(&self) -> &[u8; SEED_BYTES] {
        self.raw[13..BITMAP_HEADER].try_into().expect("32 bytes")
    }

    /// Hash functions (`k`), as its header says.
    pub fn hashes(&self) -> u32 {
        u32::from_le_bytes(self.raw[9..13].try_into().expect("4 bytes"))
    }

    /// Bits in the array.
    pub fn bit_count(&self) -> u64 {
        self.bits().len() as u64 * 8
    }

    #[inline]
    fn position(&self, pair: &SipPair, i: u32) -> (usize, u8) {
        let bit = pair.probe(i) % self.bit_count();
        (BITMAP_HEADER + (bit >> 3) as usize, 1u8 << (bit & 7))
    }

    /// Whether every probe of `pair` is set.
    pub fn contains(&self, pair: &SipPair) -> bool {
        (0..self.hashes()).all(|i| {
            let (byte, mask) = self.position(pair, i);
            self.raw[byte] & mask != 0
        })
    }

    fn insert(&mut self, pair: &SipPair) {
        for i in 0..self.hashes() {
            let (byte, mask) = self.position(pair, i);
            self.raw[byte] |= mask;
        }
    }
}

/// A valkey-bloom filter: its parameters and its sub-filters, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct ValkeyBloom {
    pub(crate) expansion: u32,
    pub(crate) error: f64,
    pub(crate) tightening: f64,
    pub(crate) seed_is_random: bool,
    pub(crate) filters: Vec<SubFilter>,
}

/// What a new valkey-bloom filter is asked to be (the replicated `BF.INSERT … TIGHTENING t SEED
/// s` that valkey-bloom writes for every filter it creates).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValkeySpec {
    /// Items the first sub-filter holds.
    pub capacity: u64,
    /// The filter's rate.
    pub error: f64,
    /// Each new sub-filter's rate is the previous one's times this.
    pub tightening: f64,
    /// Each new sub-filter's capacity is the previous one's times this; 0: never grows.
    pub expansion: u32,
    /// The seed every sub-filter is keyed with.
    pub seed: [u8; SEED_BYTES],
}

impl ValkeySpec {
    /// The filter a replayed `BF.INSERT` with valkey-bloom's options creates: the spec's
    /// capacity and rate, its expansion (NONSCALING: 0), the tightening ratio and the seed.
    pub fn of_insert(spec: &FilterSpec, tightening: f64, seed: [u8; SEED_BYTES]) -> Self {
        ValkeySpec {
            capacity: spec.capacity,
            error: spec.error,
            tightening,
            expansion: match spec.growth {
                Growth::Fixed | Growth::Expandable => 0,
                Growth::Scaling(e) => e,
            },
            seed,
        }
    }
}

impl ValkeyBloom {
    /// Moves its blocks (the sub-filters' records and bits) where the server's defrag
    /// allocator says.
    pub fn defrag(&mut self, d: &mut Defrag) {
        d.vec(&mut self.filters);
        for f in &mut self.filters {
            d.vec(&mut f.raw);
        }
    }

    /// An empty filter as valkey-bloom creates it for `spec`, within `max_bytes` of bits.
    pub fn new(spec: &ValkeySpec, max_bytes: u64) -> Result<Self, FilterError> {
        let first = sub_filter(spec.capacity, spec.error, &spec.seed, 0, max_bytes)?;
        Ok(ValkeyBloom {
            expansion: spec.expansion,
            error: spec.error,
            tightening: spec.tightening,
            seed_is_random: spec.seed != FIXED_SEED,
            filters: vec![first],
        })
    }

    /// Expansion: each new sub-filter's capacity over the previous one's; 0 for NONSCALING.
    pub fn expansion(&self) -> u32 {
        self.expansion
    }

    /// Whether the seed was drawn at random (else it is [`FIXED_SEED`]).
    pub fn seed_is_random(&self) -> bool {
        self.seed_is_random
    }

    /// The sub-filters, oldest first.
    pub fn filters(&self) -> &[SubFilter] {
        &self.filters
    }

    /// The sub-filters, writable.
    pub fn filters_mut(&mut self) -> &mut [SubFilter] {
        &mut self.filters
    }

    /// The rate sub-filter `n` was sized for.
    pub fn rate_of(&self, n: usize) -> f64 {
        self.error * self.tightening.powi(n as i32)
    }

    /// BF.CARD: items added.
    pub fn items(&self) -> u64 {
        self.filters.iter().map(|f| f.items).sum()
    }

    /// Items the sub-filters were sized for, together.
    pub fn capacity(&self) -> u64 {
        self.filters
            .iter()
            .fold(0u64, |sum, f| sum.saturating_add(f.capacity))
    }

    /// Bytes of bits (headers excluded).
    pub fn bit_bytes(&self) -> u64 {
        self.filters.iter().map(|f| f.bits().len() as u64).sum()
    }

    /// Bytes in memory.
    pub fn memory_usage(&self) -> u64 {
        (std::mem::size_of::<Self>()
            + self.filters.capacity() * std::mem::size_of::<SubFilter>()
            + self.filters.iter().map(|f| f.raw.capacity()).sum::<usize>()) as u64
    }

    /// Bytes its allocations take from the allocator (not its own struct): the sub-filters'
    /// records and bits.
    pub fn heap_bytes(&self) -> u64 {
        self.filters.iter().fold(
            allocated(self.filters.capacity() * std::mem::size_of::<SubFilter>()),
            |sum, f| sum + allocated(f.raw.capacity()),
        )
    }

    /// Hashes `item` under the key's seed (the first sub-filter's, which every sub-filter
    /// valkey-bloom makes shares) and starts loading every byte it probes.
    fn prepare<'a>(&self, item: &'a [u8]) -> Prepared<'a> {
        let seed = self.filters[0].seed();
        let pair = SipPair::new(item, seed);
        for f in self.filters.iter().filter(|f| f.seed() == seed) {
            for i in 0..f.hashes() {
                hints::prefetch_byte(&f.raw[f.position(&pair, i).0]);
            }
        }
        Prepared { pair, item }
    }

    /// Whether some sub-filter may hold the prepared item (a sub-filter with a seed of its
    /// own, which valkey-bloom never writes, hashes it under that seed).
    fn holds(&self, p: &Prepared<'_>) -> bool {
        let seed = self.filters[0].seed();
        self.filters.iter().any(|f| {
            if f.seed() == seed {
                f.contains(&p.pair)
            } else {
                f.contains(&SipPair::new(p.item, f.seed()))
            }
        })
    }

    /// Whether some sub-filter may hold `item`.
    pub fn contains(&self, item: &[u8]) -> bool {
        self.holds(&self.prepare(item))
    }

    /// Checks items in order, passing each answer on; each item is hashed and its bytes
    /// requested 16 items before its check.
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        answer: impl FnMut(bool),
    ) {
        answer_ahead::<_, _, _, AHEAD>(self, items, Self::prepare, |v, p| v.holds(&p), answer);
    }

    /// Adds `item` as valkey-bloom does; a new sub-filter must fit in `max_bytes` of bits.
    pub fn add(&mut self, item: &[u8], max_bytes: u64) -> Result<AddOutcome, FilterError> {
        let p = self.prepare(item);
        self.add_prepared(&p, max_bytes)
    }

    fn add_prepared(
        &mut self,
        p: &Prepared<'_>,
        max_bytes: u64,
    ) -> Result<AddOutcome, FilterError> {
        if self.holds(p) {
            return Ok(AddOutcome::Present);
        }
        let first_seed = *self.filters[0].seed();
        let pair_for = |f: &SubFilter| {
            if *f.seed() == first_seed {
                p.pair
            } else {
                SipPair::new(p.item, f.seed())
            }
        };
        let last = self.filters.last_mut().expect("at least one sub-filter");
        if last.items < last.capacity {
            last.insert(&pair_for(last));
            last.items += 1;
            return Ok(AddOutcome::Added);
        }
        if self.expansion == 0 {
            return Err(FilterError::Full);
        }
        let capacity = last
            .capacity
            .checked_mul(u64::from(self.expansion))
            .filter(|&c| c <= i64::MAX as u64)
            .ok_or(FilterError::CannotGrow)?;
        let n = self.filters.len();
        let budget = max_bytes.saturating_sub(self.bit_bytes());
        let mut next =
            sub_filter(capacity, self.rate_of(n), &first_seed, n, budget).map_err(|e| match e {
                FilterError::TooLarge { needed, .. } => FilterError::TooLarge {
                    needed: needed.saturating_add(self.bit_bytes()),
                    limit: max_bytes,
                },
                e => e,
            })?;
        next.insert(&p.pair);
        next.items = 1;
        self.filters.push(next);
        Ok(AddOutcome::Added)
    }

    /// Adds items in order, passing each outcome to `outcome`, which returns whether to go on;
    /// each item is hashed and its bytes requested 16 items before its add.
    pub fn add_many<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        max_bytes: u64,
        mut outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        each_ahead::<_, _, AHEAD>(self, items, Self::prepare, |v, p| {
            outcome(v.add_prepared(&p, max_bytes))
        });
    }
}

/// How many items a batch hashes and prefetches ahead: the chains' depth (two SipHash-1-3
/// passes per item take longer than xxh3's one, so a deeper ring gains nothing more).
const AHEAD: usize = 16;

/// An item hashed under its key's seed, its bytes requested.
#[derive(Debug, Clone, Copy, Default)]
struct Prepared<'a> {
    pair: SipPair,
    item: &'a [u8],
}

/// Sub-filter `n` of a filter: `capacity` items at rate `error` (already tightened), keyed with
/// `seed`, refused past `max_bytes` of bits or when no rate is left (valkey-bloom stops at the
/// smallest positive double).
fn sub_filter(
    capacity: u64,
    error: f64,
    seed: &[u8; SEED_BYTES],
    n: usize,
    max_bytes: u64,
) -> Result<SubFilter, FilterError> {
    if n > 0 && error <= f64::MIN_POSITIVE {
        return Err(FilterError::CannotGrow);
    }
    let bytes = bitmap_bytes(capacity, error);
    // NaN (no rate) fails the range test too.
    if !(1.0..=(crate::sizing::MAX_LINK_BITS / 8) as f64).contains(&bytes) {
        return Err(FilterError::LinkTooLarge {
            needed: bytes.min(u64::MAX as f64) as u64,
        });
    }
    let bytes = bytes as u64;
    if bytes > max_bytes {
        return Err(FilterError::TooLarge {
            needed: bytes,
            limit: max_bytes,
        });
    }
    let raw = empty_bitmap(bytes, hash_count(bytes, capacity), seed)?;
    Ok(SubFilter::from_raw(raw, capacity, 0))
}
