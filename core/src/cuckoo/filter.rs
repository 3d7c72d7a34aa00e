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

use crate::defrag::Defrag;
use crate::hash::murmur64a;
use crate::hints::{advise_huge_pages, prefetch_byte};
use crate::lookahead::{answer_ahead, each_ahead};
use crate::memory::{allocated, Block, OutOfMemory, ShortSlice};
use crate::spec::CuckooSpec;

/// The most sub-filters a filter holds (RedisBloom's count is 16 bits, and wraps past this;
/// a [`ShortSlice`]'s length is too).
pub const MAX_FILTERS: usize = u16::MAX as usize;

/// Bucket counts must stay below this (RedisBloom's "Insufficient memory" bound).
pub(crate) const MAX_BUCKETS: u64 = 1 << 56;

/// The largest stored expansion (CF.RESERVE's 32768).
pub(crate) const MAX_EXPANSION: u16 = 32768;

/// The multiplier RedisBloom mixes a fingerprint with to find the alternate bucket.
const ALT_MULTIPLIER: u64 = 0x5bd1_e995;

/// RedisBloom's struct sizes, which `CF.INFO Size` reports (its test expects them): the filter
/// header, and one per sub-filter. rsbloom's own are the same 40 and 16 bytes, pinned by a unit
/// test; `MEMORY USAGE` reports what its blocks really take ([`Cuckoo::heap_bytes`]).
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
    TooLarge {
        /// Bytes the filter would need.
        needed: u64,
        /// The per-filter limit.
        limit: u64,
    },
    /// A sub-filter of 2^56 buckets or more, or more than [`MAX_FILTERS`] sub-filters
    /// (RedisBloom's `Insufficient memory`).
    Insufficient,
}

/// An item's hash: its fingerprint and the 64-bit value its buckets come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooHash {
    /// The value both candidate buckets come from.
    pub h: u64,
    /// The fingerprint, never 0 (an empty slot).
    pub fp: u8,
}

/// A filler for the batch look-ahead's ring (never read as an item's hash).
impl Default for CuckooHash {
    fn default() -> Self {
        CuckooHash { h: 0, fp: 1 }
    }
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
    pub(super) fn first(&self, n: u64) -> u64 {
        self.h & (n - 1)
    }
}

/// The other candidate bucket of fingerprint `fp` in bucket `b` of `n` buckets.
#[inline(always)]
pub(super) fn alt(b: u64, fp: u8, n: u64) -> u64 {
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

/// One sub-filter: its slots, a power of two of buckets. 16 bytes, so a filter's records
/// take as little as RedisBloom's (`tests/memory.rs`); its bucket count is found from the
/// slots' length without a division ([`Cuckoo::filter_buckets`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sub {
    slots: Block<u8>,
}

/// A cuckoo filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cuckoo {
    /// The slot arrays, oldest first; sub-filter `k` has `len / bucket_size` buckets. A
    /// [`ShortSlice`] (no spare capacity, 10 bytes where a `Vec` takes 24): it changes only
    /// when the filter grows or compacts away its newest sub-filter, and holds at most
    /// [`MAX_FILTERS`].
    filters: ShortSlice<Sub>,
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
    /// Moves its blocks (the sub-filters' records and slots) where the server's defrag
    /// allocator says (the filter's own block is the key's, which the module moves).
    pub fn defrag(&mut self, d: &mut Defrag) {
        let mut filters = std::mem::take(&mut self.filters).into_box();
        d.slice(&mut filters);
        self.filters = ShortSlice::from_box(filters).expect("as many sub-filters as before");
        for f in self.filters.iter_mut() {
            d.block(&mut f.slots);
        }
    }

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
            filters: ShortSlice::from_box(Box::new([Sub {
                slots: zeroed(bytes)?,
            }]))
            .expect("one sub-filter"),
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
        filters: Vec<Block<u8>>,
        bucket_size: u8,
        max_iterations: u16,
        expansion: u16,
        items: u64,
        deletes: u64,
        seed: u64,
    ) -> Self {
        Cuckoo {
            filters: ShortSlice::from_vec(filters.into_iter().map(|slots| Sub { slots }).collect())
                .expect("at most MAX_FILTERS, which the decoder checked"),
            items,
            deletes,
            seed,
            bucket_size,
            max_iterations,
            expansion,
        }
    }

    /// The hash seed (0: RedisBloom's public hashing).
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Slots per bucket.
    pub fn bucket_size(&self) -> u8 {
        self.bucket_size
    }
    /// Kicks tried before the filter grows.
    pub fn max_iterations(&self) -> u16 {
        self.max_iterations
    }
    /// Growth factor of each new sub-filter's buckets (0: never grows).
    pub fn expansion(&self) -> u16 {
        self.expansion
    }
    /// Inserts minus deletes, as RedisBloom keeps it (it wraps below zero).
    pub fn items(&self) -> u64 {
        self.items
    }
    /// Deletes since creation, as RedisBloom counts them (CF.INFO).
    pub fn deletes(&self) -> u64 {
        self.deletes
    }
    /// Buckets of the first sub-filter (CF.INFO's `Number of buckets`).
    pub fn buckets(&self) -> u64 {
        self.filter_buckets(0)
    }
    /// Buckets of sub-filter `k`.
    pub fn filter_buckets(&self, k: usize) -> u64 {
        // slots = buckets · bucket_size with buckets 2^b, so the slots' trailing zeros are b
        // plus the bucket size's.
        let zeros =
            self.filters[k].slots.len().trailing_zeros() - self.bucket_size.trailing_zeros();
        1 << zeros
    }
    /// How many sub-filters the filter has.
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

    /// Bytes its allocations take from the allocator, its own block included (a key holds it
    /// boxed): the sub-filters' records and slots.
    pub fn heap_bytes(&self) -> u64 {
        self.filters.iter().fold(
            allocated(std::mem::size_of::<Cuckoo>())
                + allocated(std::mem::size_of_val(&*self.filters)),
            |sum, f| sum + allocated(f.slots.len()),
        )
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
        answer: impl FnMut(bool),
    ) {
        answer_ahead::<_, _, _, AHEAD>(self, items, Self::hash_and_prefetch, Self::lookup, answer);
    }

    /// Runs `f` on each item's hash in order, with the item hashed and its lines requested
    /// [`AHEAD`] items before (the insert path of CF.INSERT, which may grow the filter: a line
    /// requested in a sub-filter that is then compacted away is only a wasted hint).
    pub fn for_each_ahead<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        mut f: impl FnMut(&mut Self, CuckooHash),
    ) {
        each_ahead::<_, _, AHEAD>(
            self,
            items,
            |cf, item| cf.hash_and_prefetch(item),
            |cf, hash| {
                f(cf, hash);
                true
            },
        );
    }

    /// An item's hash, its candidate buckets requested.
    fn hash_and_prefetch(&self, item: &[u8]) -> CuckooHash {
        let hash = self.hash(item);
        self.prefetch(hash);
        hash
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
    pub(super) fn grow(&mut self, max_filters: usize, max_bytes: u64) -> Result<u64, CuckooError> {
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
        let slots = zeroed(bytes)?;
        self.change_filters(|filters| filters.push(Sub { slots }));
        Ok(bytes)
    }

    /// Adds or removes sub-filters: the only changes of their count, which stays within
    /// [`MAX_FILTERS`] (grow's check), so the short slice takes it.
    fn change_filters(&mut self, change: impl FnOnce(&mut Vec<Sub>)) {
        let mut filters = std::mem::take(&mut self.filters).into_box().into_vec();
        change(&mut filters);
        self.filters = ShortSlice::from_vec(filters).expect("at most MAX_FILTERS");
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
                self.change_filters(|filters| {
                    filters.pop();
                });
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

/// How many items ahead a cuckoo batch hashes and prefetches: enough misses in flight to cover
/// a DRAM round trip (an item requests a line in every sub-filter), few enough for the core's
/// miss buffers.
pub(crate) const AHEAD: usize = 8;

/// A zeroed slot array (calloc: the kernel's zero pages until written), on huge pages when it
/// is large: a lookup in a big sub-filter touches two random lines, and with 4 KiB pages each
/// is also a TLB miss.
pub(super) fn zeroed(bytes: u64) -> Result<Block<u8>, OutOfMemory> {
    let mut slots =
        Block::<u8>::zeroed(usize::try_from(bytes).map_err(|_| OutOfMemory { bytes })?)?;
    advise_huge_pages(&mut slots);
    Ok(slots)
}

impl From<OutOfMemory> for CuckooError {
    fn from(_: OutOfMemory) -> Self {
        CuckooError::Insufficient
    }
}
