//! The checks a decoded cuckoo filter must pass: [`CuckooBuilder`] owns its parameters, each
//! sub-filter's buckets, and the memory.

use crate::codec::{machine_memory, DecodeError};
use crate::cuckoo::filter::{self, Cuckoo, MAX_BUCKETS, MAX_EXPANSION, MAX_FILTERS};
use crate::memory::Block;

/// A cuckoo filter as a serialised form describes it, before its sub-filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooHeader {
    /// Items in the whole filter (RedisBloom's count, which may wrap).
    pub items: u64,
    /// Deletes since creation (RedisBloom's count).
    pub deletes: u64,
    /// Buckets of the first sub-filter.
    pub buckets: u64,
    /// How many sub-filters follow.
    pub filters: u64,
    /// Slots per bucket.
    pub bucket_size: u64,
    /// Kicks tried before growing.
    pub max_iterations: u64,
    /// Growth factor of each new sub-filter's buckets.
    pub expansion: u64,
    /// The hash seed (0: RedisBloom's hashing).
    pub seed: u64,
}

impl CuckooHeader {
    /// Buckets of sub-filter `k` as growth makes it (`buckets × expansion^k`), for the forms
    /// that do not store each count (the SCANDUMP header, RedisBloom's oldest RDB encodings).
    pub fn grown_buckets(&self, k: u64) -> Result<u64, DecodeError> {
        u32::try_from(k)
            .ok()
            .and_then(|k| self.expansion.checked_pow(k))
            .and_then(|factor| factor.checked_mul(self.buckets))
            .filter(|&n| n < MAX_BUCKETS)
            .ok_or(DecodeError::Buckets)
    }
}

/// Builds a decoded cuckoo filter sub-filter by sub-filter, checking each before allocating it.
#[derive(Debug)]
pub(crate) struct CuckooBuilder {
    header: CuckooHeader,
    filters: Vec<Block<u8>>,
    bytes: u64,
}

impl CuckooBuilder {
    /// Starts a filter: checks the sub-filter count, bucket size, iterations and expansion.
    pub(crate) fn new(header: CuckooHeader) -> Result<Self, DecodeError> {
        if header.filters == 0 || header.filters > MAX_FILTERS as u64 {
            return Err(DecodeError::FilterCount);
        }
        if !(1..=255).contains(&header.bucket_size) {
            return Err(DecodeError::BucketSize);
        }
        if !(1..=65535).contains(&header.max_iterations) {
            return Err(DecodeError::Iterations);
        }
        let e = header.expansion;
        let expansion_ok = if e == 0 {
            header.filters == 1
        } else {
            e.is_power_of_two() && e <= u64::from(MAX_EXPANSION)
        };
        if !expansion_ok {
            return Err(DecodeError::CuckooExpansion);
        }
        Ok(CuckooBuilder {
            header,
            filters: Vec::with_capacity(header.filters as usize),
            bytes: 0,
        })
    }

    /// Checks the next sub-filter's bucket count and allocates its zeroed slots, refusing a
    /// filter larger than the machine's memory first (as [`ChainBuilder::link`](crate::bloom::builder::ChainBuilder::link) does). Returns
    /// the slots for the decoder to fill.
    pub(crate) fn filter(&mut self, buckets: u64) -> Result<&mut [u8], DecodeError> {
        if self.filters.len() as u64 == self.header.filters {
            return Err(DecodeError::FilterCount);
        }
        let first_ok = !self.filters.is_empty() || buckets == self.header.buckets;
        if !buckets.is_power_of_two() || buckets >= MAX_BUCKETS || !first_ok {
            return Err(DecodeError::Buckets);
        }
        let bytes = buckets * self.header.bucket_size;
        self.bytes = self.bytes.saturating_add(bytes);
        if machine_memory().is_some_and(|memory| self.bytes > memory) {
            return Err(DecodeError::MachineMemory);
        }
        self.filters.push(filter::zeroed(bytes)?);
        Ok(self.filters.last_mut().expect("just pushed"))
    }

    /// The filter, once every sub-filter is in.
    pub(crate) fn finish(self) -> Result<Cuckoo, DecodeError> {
        if self.filters.len() as u64 != self.header.filters {
            return Err(DecodeError::FilterCount);
        }
        let h = self.header;
        Ok(Cuckoo::from_parts(
            self.filters,
            h.bucket_size as u8,
            h.max_iterations as u16,
            h.expansion as u16,
            h.items,
            h.deletes,
            h.seed,
        ))
    }
}
