//! Cuckoo filters (the `CF.*` commands): membership with deletion, laid out and hashed exactly as
//! RedisBloom 2.8.2 does, so that its RDB, DUMP and SCANDUMP data load here and answer the same.
//!
//! A filter is a chain of 1 to [`MAX_FILTERS`] *sub-filters*. Sub-filter `k` holds
//! `buckets × expansion^k` buckets of `bucket_size` one-byte slots; a slot holds a fingerprint
//! 1..=255, or 0 when empty. An item is hashed once to a 64-bit `h`: its fingerprint is
//! `h mod 255 + 1`, and in a sub-filter of `n` buckets (a power of two) its candidate buckets are
//! `h mod n` and `alt = (b XOR fp × 0x5bd1e995) mod n`, which maps each to the other.
//!
//! - Insert: the first empty slot of either candidate bucket, newest sub-filter first; else
//!   *kick* fingerprints to their alternate buckets in the newest sub-filter, at most
//!   `max_iterations` times, undoing every move if that fails; else grow a sub-filter.
//! - Delete: the first copy of the fingerprint, newest sub-filter first; once deletes pass a
//!   tenth of the items, fingerprints move down into older sub-filters (compaction) and an
//!   emptied newest sub-filter is dropped.
//!
//! The hash is RedisBloom's MurmurHash64A under seed 0 for filters that came from RedisBloom
//! (and `SEED 0`), and xxh3 under a random per-filter seed for every filter rsbloom creates:
//! with a public hash anyone can craft `2 × bucket_size + 1` items sharing both buckets and the
//! fingerprint, which forces growth, and whose deletion removes another user's item.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::hash::murmur64a;
use crate::hints::{advise_huge_pages, prefetch_byte};
use crate::spec::CuckooSpec;

/// The most sub-filters a filter holds (RedisBloom's count is 16 bits, and wraps past this).
pub const MAX_FILTERS: usize = 65535;

/// Bucket counts must stay below this (RedisBloom's "Insufficient memory" bound).
pub const MAX_BUCKETS: u64 = 1 << 56;

/// The largest stored expansion (CF.RESERVE's 32768).
pub const MAX_EXPANSION: u16 = 32768;

/// The multiplier RedisBloom mixes a fingerprint with to find the alternate bucket.
const ALT_MULTIPLIER: u64 = 0x5bd1_e995;

/// RedisBloom's struct sizes, which `CF.INFO Size` and MEMORY USAGE report (its test expects
/// them): the filter header, and one per sub-filter. rsbloom's own are 56 and 24 bytes (the
/// seed, and each sub-filter's bucket mask), pinned by a unit test: a few dozen bytes per
/// filter beside its slots, which the figures count exactly.
const REPORTED_HEADER_BYTES: u64 = 40;
const REPORTED_FILTER_BYTES: u64 = 16;

/// Why an item could not be inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CuckooError {
    /// Expansion 0, and kicking failed (RedisBloom's `Filter is full`).
    Full,
    /// Growing would pass the per-command sub-filter limit (CF_MAX_EXPANSIONS).
    MaxFilters,
    /// The filter would take more than the per-filter memory limit.
    TooLarge { needed: u64, limit: u64 },
    /// A sub-filter of 2^56 buckets or more, or more than [`MAX_FILTERS`] sub-filters
    /// (RedisBloom's `Insufficient memory`).
    Insufficient,
}

/// An item's hash: its fingerprint and the 64-bit value its buckets come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooHash {
    pub h: u64,
    pub fp: u8,
}

impl CuckooHash {
    /// The hash of `item` under `seed` (0: RedisBloom's MurmurHash64A with seed 0).
    #[inline]
    pub fn new(item: &[u8], seed: u64) -> Self {
        let h = if seed == 0 {
            murmur64a(item, 0)
        } else {
            xxh3_64_with_seed(item, seed)
        };
        CuckooHash {
            h,
            fp: (h % 255 + 1) as u8,
        }
    }

    /// The first candidate bucket in a sub-filter of `n` buckets (a power of two).
    #[inline(always)]
    fn first(&self, n: u64) -> u64 {
        self.h & (n - 1)
    }
}

/// The other candidate bucket of fingerprint `fp` in bucket `b` of `n` buckets.
#[inline(always)]
fn alt(b: u64, fp: u8, n: u64) -> u64 {
    (b ^ u64::from(fp).wrapping_mul(ALT_MULTIPLIER)) & (n - 1)
}

/// The byte offset of bucket `b`: RedisBloom computes it in 32 bits, so in a sub-filter of 4 GiB
/// or more it wraps, and data RedisBloom wrote there is found only by wrapping the same way.
#[inline(always)]
fn offset(b: u64, bucket_size: u8) -> usize {
    (b.wrapping_mul(u64::from(bucket_size)) as u32) as usize
}

/// Compaction after a delete stops at the first sub-filter it cannot empty; CF.COMPACT goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compaction {
    Stop,
    Continue,
}

/// One sub-filter: its slots, and its bucket count less one (a power of two less one), kept
/// so that finding a bucket is a mask, not a division by the bucket size (several per item).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sub {
    slots: Box<[u8]>,
    mask: u64,
}

impl Sub {
    fn new(slots: Box<[u8]>, bucket_size: u8) -> Self {
        let buckets = (slots.len() / usize::from(bucket_size)) as u64;
        Sub {
            slots,
            mask: buckets.wrapping_sub(1),
        }
    }
}

/// A cuckoo filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cuckoo {
    /// The slot arrays, oldest first; sub-filter `k` has `len / bucket_size` buckets.
    filters: Vec<Sub>,
    /// Inserts minus deletes; wraps below 0 as RedisBloom's does (a loaded filter can say 0).
    items: u64,
    /// Deletes since the last compaction.
    deletes: u64,
    seed: u64,
    bucket_size: u8,
    max_iterations: u16,
    /// 0 (never grows) or a power of two.
    expansion: u16,
}

impl Cuckoo {
    /// A new empty filter for `spec`, hashed under `seed`, within `max_bytes`.
    pub fn new(spec: &CuckooSpec, seed: u64, max_bytes: u64) -> Result<Self, CuckooError> {
        let buckets = spec.buckets();
        if buckets >= MAX_BUCKETS {
            return Err(CuckooError::Insufficient);
        }
        let bytes = buckets * u64::from(spec.bucket_size);
        if bytes > max_bytes {
            return Err(CuckooError::TooLarge {
                needed: bytes,
                limit: max_bytes,
            });
        }
        Ok(Cuckoo {
            filters: vec![Sub::new(zeroed(bytes), spec.bucket_size)],
            items: 0,
            deletes: 0,
            seed,
            bucket_size: spec.bucket_size,
            max_iterations: spec.max_iterations,
            expansion: spec.expansion,
        })
    }

    /// A filter of the given parts, from a decoder that checked them
    /// ([`crate::cuckoo::builder::CuckooBuilder::finish`] and the tests).
    pub(super) fn from_parts(
        filters: Vec<Box<[u8]>>,
        bucket_size: u8,
        max_iterations: u16,
        expansion: u16,
        items: u64,
        deletes: u64,
        seed: u64,
    ) -> Self {
        Cuckoo {
            filters: filters
                .into_iter()
                .map(|slots| Sub::new(slots, bucket_size))
                .collect(),
            items,
            deletes,
            seed,
            bucket_size,
            max_iterations,
            expansion,
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn bucket_size(&self) -> u8 {
        self.bucket_size
    }
    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }
    pub fn expansion(&self) -> u16 {
        self.expansion
    }
    /// Inserts minus deletes, as RedisBloom keeps it (it wraps below zero).
    pub fn items(&self) -> u64 {
        self.items
    }
    pub fn deletes(&self) -> u64 {
        self.deletes
    }
    /// Buckets of the first sub-filter (CF.INFO's `Number of buckets`).
    pub fn buckets(&self) -> u64 {
        self.filter_buckets(0)
    }
    /// Buckets of sub-filter `k`.
    pub fn filter_buckets(&self, k: usize) -> u64 {
        self.filters[k].mask + 1
    }
    pub fn filter_count(&self) -> usize {
        self.filters.len()
    }
    /// The slot arrays, oldest first (what SCANDUMP streams and the RDB stores).
    pub fn slot_arrays(&self) -> impl Iterator<Item = &[u8]> {
        self.filters.iter().map(|f| &f.slots[..])
    }
    /// The slot arrays, for a loader to fill.
    pub fn slot_arrays_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        self.filters.iter_mut().map(|f| &mut f.slots[..])
    }
    /// Bytes of slots in every sub-filter.
    pub fn slot_bytes(&self) -> u64 {
        self.filters.iter().map(|f| f.slots.len() as u64).sum()
    }
    /// RedisBloom's `Size` (CF.INFO, MEMORY USAGE): header, per-sub-filter records, slots.
    pub fn memory_usage(&self) -> u64 {
        REPORTED_HEADER_BYTES
            + REPORTED_FILTER_BYTES * self.filters.len() as u64
            + self.slot_bytes()
    }

    /// The hash of `item` in this filter.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> CuckooHash {
        CuckooHash::new(item, self.seed)
    }

    #[inline(always)]
    fn bucket(&self, k: usize, b: u64) -> &[u8] {
        let at = offset(b, self.bucket_size);
        &self.filters[k].slots[at..at + usize::from(self.bucket_size)]
    }

    #[inline(always)]
    fn bucket_mut(&mut self, k: usize, b: u64) -> &mut [u8] {
        let at = offset(b, self.bucket_size);
        let size = usize::from(self.bucket_size);
        &mut self.filters[k].slots[at..at + size]
    }

    /// Both candidate buckets of `hash` in sub-filter `k`.
    #[inline(always)]
    fn candidates(&self, k: usize, hash: CuckooHash) -> (u64, u64) {
        let n = self.filter_buckets(k);
        let b1 = hash.first(n);
        (b1, alt(b1, hash.fp, n))
    }

    /// Whether the item may be in the filter (any copy in any sub-filter). Every candidate
    /// line is requested before the first is read, so that in a filter larger than the cache
    /// the two (or more) misses overlap instead of following one another.
    pub fn contains(&self, hash: CuckooHash) -> bool {
        self.prefetch(hash);
        self.lookup(hash)
    }

    /// [`Self::contains`] once the lines are requested.
    fn lookup(&self, hash: CuckooHash) -> bool {
        (0..self.filters.len()).any(|k| {
            let (b1, b2) = self.candidates(k, hash);
            // `|`, not `||`: both buckets are read either way, with no branch between them.
            self.bucket(k, b1).contains(&hash.fp) | self.bucket(k, b2).contains(&hash.fp)
        })
    }

    /// Checks many items, passing each answer on in order. Each item is hashed, and its lines
    /// requested, [`AHEAD`] items before it is read, so that a large filter's cache misses
    /// overlap instead of following one another.
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        mut answer: impl FnMut(bool),
    ) {
        let mut ahead = Ahead::new(items);
        while let Some(hash) = ahead.next(self) {
            answer(self.lookup(hash));
        }
    }

    /// Runs `f` on each item's hash in order, with the item hashed and its lines requested
    /// [`AHEAD`] items before (the insert path of CF.INSERT, which may grow the filter: a line
    /// requested in a sub-filter that is then compacted away is only a wasted hint).
    pub fn for_each_ahead<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        mut f: impl FnMut(&mut Self, CuckooHash),
    ) {
        let mut ahead = Ahead::new(items);
        while let Some(hash) = ahead.next(self) {
            f(self, hash);
        }
    }

    /// Starts loading every candidate bucket of `hash` into the cache.
    #[inline]
    pub fn prefetch(&self, hash: CuckooHash) {
        for k in 0..self.filters.len() {
            let (b1, b2) = self.candidates(k, hash);
            prefetch_byte(&self.filters[k].slots[offset(b1, self.bucket_size)]);
            prefetch_byte(&self.filters[k].slots[offset(b2, self.bucket_size)]);
        }
    }

    /// CF.COUNT: the copies of the fingerprint in both candidate buckets of every sub-filter
    /// (RedisBloom counts a bucket twice when both candidates are the same one).
    pub fn count(&self, hash: CuckooHash) -> u64 {
        self.prefetch(hash);
        (0..self.filters.len())
            .map(|k| {
                let (b1, b2) = self.candidates(k, hash);
                let in_bucket =
                    |b| self.bucket(k, b).iter().filter(|&&s| s == hash.fp).count() as u64;
                in_bucket(b1) + in_bucket(b2)
            })
            .sum()
    }

    /// Inserts one copy. `max_filters` is the sub-filter count growth may not reach past
    /// (CF_MAX_EXPANSIONS), `max_bytes` the per-filter memory limit. A refusal changes nothing.
    /// Returns the bytes of a sub-filter grown for it (0 if none).
    pub fn insert(
        &mut self,
        hash: CuckooHash,
        max_filters: usize,
        max_bytes: u64,
    ) -> Result<u64, CuckooError> {
        if self.place(hash) || self.make_room(hash) {
            self.items = self.items.wrapping_add(1);
            return Ok(0);
        }
        let grown = self.grow(max_filters, max_bytes)?;
        // An empty sub-filter always has room in the first candidate bucket.
        let placed = self.place(hash);
        debug_assert!(placed);
        self.items = self.items.wrapping_add(1);
        Ok(grown)
    }

    /// The first empty slot of either candidate bucket, newest sub-filter first.
    fn place(&mut self, hash: CuckooHash) -> bool {
        self.prefetch(hash);
        for k in (0..self.filters.len()).rev() {
            let (b1, b2) = self.candidates(k, hash);
            for b in [b1, b2] {
                if let Some(slot) = self.bucket_mut(k, b).iter_mut().find(|s| **s == 0) {
                    *slot = hash.fp;
                    return true;
                }
            }
        }
        false
    }

    /// Makes room for `hash` in the newest sub-filter by kicking. A filter with RedisBloom's
    /// hashing (seed 0) kicks exactly as RedisBloom does: one walk from the first candidate
    /// bucket, victim slot 0 first, so its slots stay byte for byte RedisBloom's. A filter of
    /// rsbloom's own (which only rsbloom reads) tries, when that walk fails, the walks from the
    /// second bucket and from every other first victim, each bounded by the same max
    /// iterations and undone if it fails: the same moves per walk, a wider search, so it grows
    /// later (the README has the load factors).
    fn make_room(&mut self, hash: CuckooHash) -> bool {
        let k = self.filters.len() - 1;
        let n = self.filter_buckets(k);
        let (b1, b2) = self.candidates(k, hash);
        if self.kick(hash.fp, b1, 0) {
            return true;
        }
        if self.seed == 0 {
            return false;
        }
        let size = usize::from(self.bucket_size);
        let starts = if b1 == b2 || n == 1 {
            vec![b1]
        } else {
            vec![b1, b2]
        };
        (0..size).any(|victim| {
            starts
                .iter()
                .any(|&b| (victim, b) != (0, b1) && self.kick(hash.fp, b, victim))
        })
    }

    /// One kicking walk in the newest sub-filter, RedisBloom's way: the carried fingerprint
    /// takes slot `victim` of bucket `b`, the evicted one goes to its alternate bucket, the
    /// victim slot advancing each round; at most `max_iterations` moves, every one undone if
    /// no empty slot turns up.
    fn kick(&mut self, fp: u8, start: u64, first_victim: usize) -> bool {
        let k = self.filters.len() - 1;
        let n = self.filter_buckets(k);
        let size = usize::from(self.bucket_size);
        // RedisBloom's victim slot advances by one each round; rsbloom's own filters take a
        // pseudo-random one per round (a function of the round, so the undo can replay it),
        // which keeps a walk from circling between the same few buckets.
        let native = self.seed != 0;
        let victim_at = |round: u16| {
            let step = if native {
                (u64::from(round) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40
            } else {
                u64::from(round)
            };
            (first_victim + (step % size as u64) as usize) % size
        };
        let mut carried = fp;
        let mut b = start;
        for round in 0..self.max_iterations {
            std::mem::swap(&mut carried, &mut self.bucket_mut(k, b)[victim_at(round)]);
            b = alt(b, carried, n);
            if let Some(slot) = self.bucket_mut(k, b).iter_mut().find(|s| **s == 0) {
                *slot = carried;
                return true;
            }
        }
        for round in (0..self.max_iterations).rev() {
            b = alt(b, carried, n);
            std::mem::swap(&mut carried, &mut self.bucket_mut(k, b)[victim_at(round)]);
        }
        false
    }

    /// Appends sub-filter `k` of `buckets × expansion^k` buckets. Returns its bytes.
    fn grow(&mut self, max_filters: usize, max_bytes: u64) -> Result<u64, CuckooError> {
        if self.expansion == 0 {
            return Err(CuckooError::Full);
        }
        let k = self.filters.len();
        if k >= MAX_FILTERS {
            return Err(CuckooError::Insufficient);
        }
        if k >= max_filters {
            return Err(CuckooError::MaxFilters);
        }
        let buckets = u32::try_from(k)
            .ok()
            .and_then(|k| u64::from(self.expansion).checked_pow(k))
            .and_then(|factor| factor.checked_mul(self.buckets()))
            .filter(|&n| n < MAX_BUCKETS)
            .ok_or(CuckooError::Insufficient)?;
        let bytes = buckets * u64::from(self.bucket_size);
        let needed = self.slot_bytes().saturating_add(bytes);
        if needed > max_bytes {
            return Err(CuckooError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        self.filters.push(Sub::new(zeroed(bytes), self.bucket_size));
        Ok(bytes)
    }

    /// Deletes one copy: the first slot holding the fingerprint, newest sub-filter first, in
    /// the first then the second candidate bucket. Returns whether one was found. Once deletes
    /// pass a tenth of the items, compaction runs (and may drop the newest sub-filter).
    pub fn delete(&mut self, hash: CuckooHash) -> bool {
        self.prefetch(hash);
        let found = (0..self.filters.len()).rev().any(|k| {
            let (b1, b2) = self.candidates(k, hash);
            [b1, b2].into_iter().any(|b| {
                match self.bucket_mut(k, b).iter_mut().find(|s| **s == hash.fp) {
                    Some(slot) => {
                        *slot = 0;
                        true
                    }
                    None => false,
                }
            })
        });
        if !found {
            return false;
        }
        self.items = self.items.wrapping_sub(1);
        // Wrapping, as RedisBloom's count does: a LOADCHUNK header may start it anywhere.
        self.deletes = self.deletes.wrapping_add(1);
        // RedisBloom compares in doubles: deletes > 0.1 × items.
        if self.filters.len() > 1 && self.deletes as f64 > self.items as f64 * 0.1 {
            self.compact_with(Compaction::Stop);
        }
        true
    }

    /// CF.COMPACT.
    pub fn compact(&mut self) {
        self.compact_with(Compaction::Continue);
    }

    /// Moves fingerprints from each sub-filter, newest down to the second, into older ones
    /// (oldest first); drops the newest sub-filter when it empties. Resets the delete count.
    fn compact_with(&mut self, mode: Compaction) {
        for j in (1..self.filters.len()).rev() {
            let n = self.filter_buckets(j);
            let size = usize::from(self.bucket_size);
            let mut stuck = false;
            for i in 0..n {
                for slot in 0..size {
                    let at = offset(i, self.bucket_size) + slot;
                    let fp = self.filters[j].slots[at];
                    if fp == 0 {
                        continue;
                    }
                    if self.relocate(j, i, fp) {
                        self.filters[j].slots[at] = 0;
                    } else {
                        stuck = true;
                    }
                }
            }
            if !stuck && j == self.filters.len() - 1 {
                self.filters.pop();
            } else if stuck && mode == Compaction::Stop {
                break;
            }
        }
        self.deletes = 0;
    }

    /// Puts fingerprint `fp`, found in bucket `i` of sub-filter `j`, into the first free slot of
    /// its candidate buckets in an older sub-filter, oldest first.
    fn relocate(&mut self, j: usize, i: u64, fp: u8) -> bool {
        for k in 0..j {
            let n = self.filter_buckets(k);
            let b1 = i & (n - 1);
            for b in [b1, alt(b1, fp, n)] {
                if let Some(slot) = self.bucket_mut(k, b).iter_mut().find(|s| **s == 0) {
                    *slot = fp;
                    return true;
                }
            }
        }
        false
    }
}

/// How many items ahead a batch hashes and prefetches: enough misses in flight to cover a DRAM
/// round trip, few enough for the core's miss buffers.
pub const AHEAD: usize = 8;

/// The items of a batch, hashed and prefetched [`AHEAD`] ahead of the one being processed.
struct Ahead<I> {
    items: I,
    ring: [CuckooHash; AHEAD],
    head: usize,
    len: usize,
}

impl<'a, I: Iterator<Item = &'a [u8]>> Ahead<I> {
    fn new(items: I) -> Self {
        Ahead {
            items,
            ring: [CuckooHash { h: 0, fp: 1 }; AHEAD],
            head: 0,
            len: 0,
        }
    }

    /// The next item's hash, after hashing and prefetching in `cf` the ones that keep the ring
    /// full.
    fn next(&mut self, cf: &Cuckoo) -> Option<CuckooHash> {
        while self.len < AHEAD {
            let Some(item) = self.items.next() else { break };
            let hash = cf.hash(item);
            cf.prefetch(hash);
            self.ring[(self.head + self.len) % AHEAD] = hash;
            self.len += 1;
        }
        if self.len == 0 {
            return None;
        }
        let hash = self.ring[self.head];
        self.head = (self.head + 1) % AHEAD;
        self.len -= 1;
        Some(hash)
    }
}

/// A zeroed slot array (calloc: the kernel's zero pages until written), on huge pages when it
/// is large: a lookup in a big sub-filter touches two random lines, and with 4 KiB pages each
/// is also a TLB miss.
pub(super) fn zeroed(bytes: u64) -> Box<[u8]> {
    let mut slots = vec![0u8; bytes as usize].into_boxed_slice();
    advise_huge_pages(&mut slots);
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_LIMIT: u64 = u64::MAX;

    fn spec(capacity: u64, bucket_size: u8, max_iterations: u16, expansion: u16) -> CuckooSpec {
        CuckooSpec {
            capacity,
            bucket_size,
            max_iterations,
            expansion,
        }
    }

    fn add(cf: &mut Cuckoo, item: &[u8]) -> Result<u64, CuckooError> {
        let h = cf.hash(item);
        cf.insert(h, MAX_FILTERS, NO_LIMIT)
    }

    /// The concatenated slot arrays, as SCANDUMP streams them.
    fn bytes(cf: &Cuckoo) -> Vec<u8> {
        cf.slot_arrays().flatten().copied().collect()
    }

    #[test]
    fn redisbloom_hash_fingerprint_and_buckets() {
        // The spec's table: item, h, fp, (b1, b2) for n = 4 and n = 512.
        type Case = (&'static [u8], u64, u8, (u64, u64), (u64, u64));
        let cases: [Case; 9] = [
            (b"", 0, 1, (0, 1), (0, 405)),
            (b"foo", 0xcdde38358fd25b01, 217, (1, 0), (257, 76)),
            (b"item1", 0x7930a108c52a9032, 7, (2, 1), (50, 289)),
            (b"hello world!", 0x64db099bd1512951, 131, (1, 2), (337, 110)),
            (b"12345678", 0x758f67d162b2d202, 41, (2, 3), (2, 223)),
            (b"x", 0x8295151af8224269, 15, (1, 2), (105, 466)),
            (b"a", 0x071717d2d36b6b11, 196, (1, 1), (273, 261)),
            (b"0", 0x4ccb322c4bcf1d63, 19, (3, 0), (355, 364)),
            (b"3", 0xd2aaca16aa05478e, 228, (2, 2), (398, 314)),
        ];
        for (item, h, fp, small, large) in cases {
            let hash = CuckooHash::new(item, 0);
            assert_eq!((hash.h, hash.fp), (h, fp), "{item:?}");
            for (n, (b1, b2)) in [(4, small), (512, large)] {
                assert_eq!(hash.first(n), b1);
                assert_eq!(alt(b1, fp, n), b2);
                assert_eq!(alt(b2, fp, n), b1);
            }
        }
    }

    #[test]
    fn spec_test_vectors_byte_for_byte() {
        // Vector 1.
        let mut v1 = Cuckoo::new(&spec(8, 2, 20, 1), 0, NO_LIMIT).unwrap();
        for item in [&b"item1"[..], b"foo", b""] {
            add(&mut v1, item).unwrap();
        }
        assert_eq!(bytes(&v1), [0x01, 0x00, 0xd9, 0x00, 0x07, 0, 0, 0]);
        assert_eq!((v1.items(), v1.buckets(), v1.filter_count()), (3, 4, 1));

        // Vector 2: kicks and one growth.
        let mut v2 = Cuckoo::new(&spec(8, 1, 20, 1), 0, NO_LIMIT).unwrap();
        for item in b"abcdefghij" {
            add(&mut v2, &[*item]).unwrap();
        }
        assert_eq!(
            bytes(&v2),
            [
                0x00, 0x06, 0xcb, 0, 0, 0xc4, 0x00, 0x10, 0x00, 0xbc, 0xa9, 0x1c, 0x00, 0xcd, 0x15,
                0x4b
            ]
        );
        assert_eq!((v2.items(), v2.filter_count()), (10, 2));

        // Vector 3: growth by 2, then a delete that compacts.
        let mut v3 = Cuckoo::new(&spec(4, 2, 20, 2), 0, NO_LIMIT).unwrap();
        for item in b"0123456789" {
            add(&mut v3, &[*item]).unwrap();
        }
        assert_eq!(
            bytes(&v3),
            [0xdd, 0xe4, 0x13, 0x65, 0x0a, 0x81, 0, 0, 0x6c, 0xd4, 0xe3, 0xad]
        );
        let h = v3.hash(b"3");
        assert!(v3.delete(h));
        assert_eq!(
            bytes(&v3),
            [0xdd, 0x0a, 0x13, 0x65, 0x00, 0x81, 0, 0, 0x6c, 0xd4, 0xe3, 0xad]
        );
        assert_eq!((v3.items(), v3.deletes(), v3.filter_count()), (9, 0, 2));

        // Vector 4: expansion 0, duplicates.
        let mut v4 = Cuckoo::new(&spec(16, 4, 5, 0), 0, NO_LIMIT).unwrap();
        for item in [&b"hello world!"[..], b"12345678", b"x", b"x", b"x"] {
            add(&mut v4, item).unwrap();
        }
        assert_eq!(
            bytes(&v4),
            [0, 0, 0, 0, 0x83, 0x0f, 0x0f, 0x0f, 0x29, 0, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn observed_shapes_and_sizes() {
        // (capacity, bucket size, iterations, expansion, adds) → (Size, filters), from the spec.
        let cases = [
            ((64, 1, 20, 1, 1000), (1480, 18)),
            ((64, 2, 20, 1, 1000), (1400, 17)),
            ((256, 4, 500, 1, 1000), (1128, 4)),
            ((64, 2, 20, 2, 1000), (2104, 5)),
            ((64, 2, 500, 4, 1000), (1432, 3)),
            ((1000, 2, 20, 1, 1000), (2120, 2)),
            ((1000, 2, 20, 1, 2000), (3160, 3)),
            ((4, 2, 20, 2, 300), (660, 7)),
        ];
        for ((capacity, size, iterations, expansion, adds), (bytes, filters)) in cases {
            let mut cf =
                Cuckoo::new(&spec(capacity, size, iterations, expansion), 0, NO_LIMIT).unwrap();
            for i in 0..adds {
                add(&mut cf, i.to_string().as_bytes()).unwrap();
            }
            assert_eq!(
                (cf.memory_usage(), cf.filter_count()),
                (bytes, filters),
                "{capacity} {size} {iterations} {expansion}"
            );
        }
        let empty = Cuckoo::new(&spec(1000, 2, 20, 1), 0, NO_LIMIT).unwrap();
        assert_eq!((empty.memory_usage(), empty.buckets()), (1080, 512));
        // The structs behind the reported 40 + 16 per sub-filter (see REPORTED_HEADER_BYTES).
        assert_eq!(
            (std::mem::size_of::<Cuckoo>(), std::mem::size_of::<Sub>()),
            (56, 24)
        );
    }

    #[test]
    fn count_double_counts_a_bucket_that_is_both_candidates() {
        let mut cf = Cuckoo::new(&spec(8, 2, 20, 1), 0, NO_LIMIT).unwrap();
        add(&mut cf, b"3").unwrap();
        assert_eq!(cf.count(cf.hash(b"3")), 2);
    }

    #[test]
    fn counts_wrap_as_redisbloom_does() {
        // A LOADCHUNK'd filter says 0 items and u64::MAX deletes, but holds a fingerprint.
        let mut cf = Cuckoo::from_parts(vec![zeroed(8)], 2, 20, 1, 0, u64::MAX, 0);
        let hash = cf.hash(b"item1");
        assert!(cf.insert(hash, MAX_FILTERS, NO_LIMIT).is_ok());
        let mut loaded = Cuckoo::from_parts(vec![zeroed(8)], 2, 20, 1, 0, u64::MAX, 0);
        loaded
            .slot_arrays_mut()
            .next()
            .unwrap()
            .copy_from_slice(&bytes(&cf));
        assert!(loaded.delete(hash));
        // CF.INFO shows -1 items (RedisBloom's underflow); the delete count wrapped to 0.
        assert_eq!((loaded.items() as i64, loaded.deletes()), (-1, 0));
        assert!(!loaded.delete(hash));
    }

    #[test]
    fn full_refusals_change_nothing() {
        let mut cf = Cuckoo::new(&spec(4, 1, 3, 0), 7, NO_LIMIT).unwrap();
        let mut refused = 0;
        for i in 0..20u32 {
            let before = cf.clone();
            match add(&mut cf, &i.to_le_bytes()) {
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e, CuckooError::Full);
                    assert_eq!(cf, before);
                    refused += 1;
                }
            }
        }
        assert!(refused >= 16, "{refused}");
        // The memory limit and the sub-filter limit refuse growth the same way.
        let mut cf = Cuckoo::new(&spec(4, 1, 1, 1), 7, NO_LIMIT).unwrap();
        let mut i = 0u32;
        let err = loop {
            let h = cf.hash(&i.to_le_bytes());
            let before = cf.clone();
            if let Err(e) = cf.insert(h, 3, 10) {
                assert_eq!(cf, before);
                break e;
            }
            i += 1;
        };
        assert!(matches!(
            err,
            CuckooError::MaxFilters | CuckooError::TooLarge { limit: 10, .. }
        ));
        assert!(cf.filter_count() <= 3 && cf.slot_bytes() <= 10);
    }

    #[test]
    fn growth_past_the_bucket_bound_is_insufficient_memory() {
        // Sub-filter 11 of expansion 32768 would need 2 × 2^165 buckets.
        let mut cf = Cuckoo::from_parts(vec![zeroed(2); 11], 1, 1, 32768, 0, 0, 1);
        assert_eq!(
            cf.grow(MAX_FILTERS, NO_LIMIT),
            Err(CuckooError::Insufficient)
        );
        // At 2^56 buckets exactly, too.
        let mut cf = Cuckoo::from_parts(vec![zeroed(1 << 26), zeroed(1)], 1, 1, 1 << 15, 0, 0, 1);
        assert_eq!(
            cf.grow(MAX_FILTERS, NO_LIMIT),
            Err(CuckooError::Insufficient)
        );
        assert_eq!(cf.filter_count(), 2);
    }

    /// Distinct items `prefix` 0, 1, ... as bytes.
    fn item(prefix: u64, i: u64) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&prefix.to_le_bytes());
        b[8..].copy_from_slice(&i.to_le_bytes());
        b
    }

    /// A small deterministic generator (xorshift), so the tests replay exactly.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn no_false_negative_and_deleting_an_item_never_removes_another() {
        for (seed, bucket_size) in [(0, 2), (0x5eed, 1), (0xfeed, 4)] {
            let mut cf = Cuckoo::new(&spec(1000, bucket_size, 20, 2), seed, NO_LIMIT).unwrap();
            let mut rng = Rng(0x1234_5678 ^ seed);
            // 20,000 adds of 8,000 distinct items: duplicates, kicks, growth.
            let mut copies = vec![0u32; 8000];
            for _ in 0..20_000 {
                let i = rng.next() % 8000;
                cf.insert(cf.hash(&item(1, i)), MAX_FILTERS, NO_LIMIT)
                    .unwrap();
                copies[i as usize] += 1;
            }
            assert!(cf.filter_count() > 1);
            // Delete about half the copies, in random order; compactions run as they come.
            let mut deleted = 0;
            for _ in 0..10_000 {
                let i = (rng.next() % 8000) as usize;
                if copies[i] > 0 {
                    assert!(
                        cf.delete(cf.hash(&item(1, i as u64))),
                        "an added copy is found"
                    );
                    copies[i] -= 1;
                    deleted += 1;
                }
            }
            assert!(deleted > 5000);
            for (i, &n) in copies.iter().enumerate() {
                let hash = cf.hash(&item(1, i as u64));
                if n > 0 {
                    assert!(
                        cf.contains(hash),
                        "item {i} with {n} copies left is missing"
                    );
                    assert!(cf.count(hash) >= u64::from(n));
                }
            }
            let left: u64 = copies.iter().map(|&n| u64::from(n)).sum();
            assert_eq!(cf.items(), left);
        }
    }

    #[test]
    fn false_positive_rate_stays_within_the_fingerprint_bound() {
        // A lookup compares 2 buckets of `b` slots per sub-filter with an 8-bit fingerprint
        // (255 values): at load α, FPR ≈ 1 - (1 - 1/255)^(2 b α) ≤ 2 b α / 255.
        for bucket_size in [1u8, 2, 4] {
            let mut cf = Cuckoo::new(&spec(1 << 16, bucket_size, 500, 0), 0xabc, NO_LIMIT).unwrap();
            let slots = cf.slot_bytes();
            let mut added = 0;
            while added < slots * 85 / 100 {
                if cf.insert(cf.hash(&item(2, added)), 1, NO_LIMIT).is_err() {
                    break;
                }
                added += 1;
            }
            let load = added as f64 / slots as f64;
            let probes = 400_000u64;
            let hits = (0..probes)
                .filter(|&i| cf.contains(cf.hash(&item(3, i))))
                .count();
            let rate = hits as f64 / probes as f64;
            let bound = 2.0 * f64::from(bucket_size) * load / 255.0;
            let sigma = (bound / probes as f64).sqrt();
            assert!(
                rate <= bound + 5.0 * sigma,
                "bucket size {bucket_size}: load {load:.3}, rate {rate:.5} > bound {bound:.5}"
            );
            assert!(
                rate >= bound * 0.8 - 5.0 * sigma,
                "suspiciously low: {rate} vs {bound}"
            );
        }
    }

    /// The share of slots filled when a non-growing filter first answers "full" to distinct
    /// items, averaged over three filters: seeds 1, 2, 3 (rsbloom's own kicking), or seed 0
    /// (RedisBloom's hashing and kicking) with three sets of items.
    fn load_before_full(bucket_size: u8, max_iterations: u16, redisbloom: bool) -> f64 {
        let mut loads = Vec::new();
        for run in [1u64, 2, 3] {
            let seed = if redisbloom { 0 } else { run };
            let mut cf = Cuckoo::new(
                &spec(1 << 16, bucket_size, max_iterations, 0),
                seed,
                NO_LIMIT,
            )
            .unwrap();
            let mut i = 0;
            while cf.insert(cf.hash(&item(4 + run, i)), 1, NO_LIMIT).is_ok() {
                i += 1;
            }
            loads.push(i as f64 / cf.slot_bytes() as f64);
        }
        loads.iter().sum::<f64>() / loads.len() as f64
    }

    #[test]
    fn load_factor_before_full_at_bucket_sizes_1_2_4() {
        // (bucket size, max iterations, the lowest mean load accepted for rsbloom's filters):
        // the README's figures, which this deterministic run reproduces. RedisBloom's single
        // walk from the first bucket, victim slot advancing by one, gets stuck early (its
        // figures: the seed-0 runs, printed); rsbloom's filters also walk from the second
        // bucket and from each first victim, with a pseudo-random victim per round.
        for (bucket_size, iterations, at_least) in [
            (1, 20, 0.45),
            (2, 20, 0.79),
            (4, 20, 0.93),
            (1, 500, 0.46),
            (2, 500, 0.88),
            (4, 500, 0.97),
        ] {
            let ours = load_before_full(bucket_size, iterations, false);
            let redisbloom = load_before_full(bucket_size, iterations, true);
            eprintln!(
                "bucket size {bucket_size}, {iterations} iterations: load {ours:.4} (RedisBloom's kicking: {redisbloom:.4})"
            );
            assert!(
                ours >= at_least,
                "bucket size {bucket_size}: {ours} < {at_least}"
            );
            assert!(
                ours > redisbloom,
                "bucket size {bucket_size}: {ours} <= {redisbloom}"
            );
        }
    }
}
