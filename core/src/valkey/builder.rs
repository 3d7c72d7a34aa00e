//! [`ValkeyBuilder`]: every invariant a decoded valkey-bloom filter must hold, the same for its
//! RDB value, its `BF.LOAD` blob and rsbloom's SCANDUMP header of it.

use crate::codec::{machine_memory, DecodeError};
use crate::sizing::{MAX_LINK_BITS, MAX_LINK_HASHES};
use crate::valkey::filter::{
    SubFilter, ValkeyBloom, BITMAP_HEADER, BITMAP_VERSION, FIXED_SEED, SEED_BYTES,
};

/// A valkey-bloom filter's parameters, before its sub-filters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ValkeyHeader {
    /// Expansion (0: NONSCALING); a stored value past 32 bits is refused.
    pub expansion: u64,
    /// The filter's rate.
    pub error: f64,
    /// The tightening ratio.
    pub tightening: f64,
    /// The stored "seed is random" flag: 1 (random) or 0 (valkey-bloom's fixed seed).
    pub seed_flag: u64,
}

/// Collects sub-filters and checks them, then the whole filter.
pub(crate) struct ValkeyBuilder {
    header: ValkeyHeader,
    seed_is_random: bool,
    filters: Vec<SubFilter>,
    bytes: u64,
}

impl ValkeyBuilder {
    /// Checks the filter's parameters.
    pub(crate) fn new(header: ValkeyHeader) -> Result<Self, DecodeError> {
        let seed_is_random = match header.seed_flag {
            0 => false,
            1 => true,
            _ => return Err(DecodeError::Seed),
        };
        if header.expansion > u64::from(u32::MAX) {
            return Err(DecodeError::Expansion);
        }
        let in_range = |x: f64| x > 0.0 && x < 1.0;
        if !in_range(header.error) || !in_range(header.tightening) {
            return Err(DecodeError::ErrorRate);
        }
        Ok(ValkeyBuilder {
            header,
            seed_is_random,
            filters: Vec::new(),
            bytes: 0,
        })
    }

    /// The bytes a bit array of `len` bytes (header included) may have: refused before it is
    /// read when past this machine's memory with the sub-filters so far.
    pub(crate) fn check_room(&self, len: u64) -> Result<(), DecodeError> {
        let total = self.bytes.saturating_add(len);
        match machine_memory() {
            Some(memory) if total > memory => Err(DecodeError::MachineMemory),
            _ => Ok(()),
        }
    }

    /// Adds a sub-filter: its saved bit array (header and bits), capacity and items.
    pub(crate) fn push(
        &mut self,
        raw: Vec<u8>,
        capacity: u64,
        items: u64,
    ) -> Result<(), DecodeError> {
        check_bitmap_header(&raw, self.seed_is_random)?;
        if capacity == 0 || capacity > i64::MAX as u64 {
            return Err(DecodeError::Capacity);
        }
        if items > i64::MAX as u64 {
            return Err(DecodeError::ItemSum);
        }
        self.check_room(raw.len() as u64)?;
        self.bytes += raw.len() as u64;
        self.filters.push(SubFilter::from_raw(raw, capacity, items));
        Ok(())
    }

    /// The filter; refused without a sub-filter.
    pub(crate) fn build(self) -> Result<ValkeyBloom, DecodeError> {
        if self.filters.is_empty() {
            return Err(DecodeError::FilterCount);
        }
        // The RDB value counts every sub-filter but the last as full: both counts must fit
        // valkey-bloom's i64, or a filter taken from a blob could not be loaded back.
        let (last, earlier) = self.filters.split_last().expect("not empty");
        let items = i64_sum(self.filters.iter().map(|f| f.items));
        let saved = i64_sum(earlier.iter().map(|f| f.capacity).chain([last.items]));
        if items.is_none() || saved.is_none() {
            return Err(DecodeError::ItemSum);
        }
        Ok(ValkeyBloom {
            expansion: self.header.expansion as u32,
            error: self.header.error,
            tightening: self.header.tightening,
            seed_is_random: self.seed_is_random,
            filters: self.filters,
        })
    }
}

/// Checks a saved bit array's header against its length: version 1, a length
/// of at least one byte that is the rest of the array, at most [`MAX_LINK_BITS`] bits, `k` from
/// 1 to [`MAX_LINK_HASHES`] (the most valkey-bloom makes is 1,026: capacity 1 at the smallest
/// positive rate), and, for a filter whose seed is not random, valkey-bloom's fixed seed (it
/// refuses any other).
pub(crate) fn check_bitmap_header(raw: &[u8], seed_is_random: bool) -> Result<(), DecodeError> {
    if raw.len() < BITMAP_HEADER || raw[0] != BITMAP_VERSION {
        return Err(DecodeError::BitmapHeader);
    }
    let bytes = u64::from_le_bytes(raw[1..9].try_into().expect("8 bytes"));
    if bytes == 0 || bytes != (raw.len() - BITMAP_HEADER) as u64 || bytes > MAX_LINK_BITS / 8 {
        return Err(DecodeError::BitCount);
    }
    let hashes = u32::from_le_bytes(raw[9..13].try_into().expect("4 bytes"));
    if hashes == 0 || hashes > MAX_LINK_HASHES {
        return Err(DecodeError::HashCount);
    }
    let seed: &[u8; SEED_BYTES] = raw[13..BITMAP_HEADER].try_into().expect("32 bytes");
    if !seed_is_random && *seed != FIXED_SEED {
        return Err(DecodeError::Seed);
    }
    Ok(())
}

/// The sum of `counts`, when it fits an i64 (valkey-bloom's counts).
fn i64_sum(mut counts: impl Iterator<Item = u64>) -> Option<u64> {
    counts
        .try_fold(0u64, u64::checked_add)
        .filter(|&n| n <= i64::MAX as u64)
}
