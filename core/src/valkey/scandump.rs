//! rsbloom's SCANDUMP header of a valkey-bloom filter (`BF.SCANDUMP` works on `bloomfltr` keys
//! too; valkey-bloom itself has no SCANDUMP). Options [`VALKEY_OPTIONS`] (rsbloom's and the valkey
//! dialect's bits: older rsbloom builds refuse them, RedisBloom refuses the length), the
//! sub-filter count where the link count goes, and after the 20 common bytes, little-endian:
//!
//! ```text
//! f64 error rate  f64 tightening ratio  u8 seed is random
//! per sub-filter, 60 bytes: 32-byte seed  u32 k  u64 bytes  u64 capacity  u64 items
//! ```
//! The data is the sub-filters' bits (without their headers), oldest first.

use crate::codec::DecodeError;
use crate::scandump::engine::{check_limit, DumpError, Fields};
use crate::scandump::options::{COMMON_HEADER, VALKEY_OPTIONS};
use crate::valkey::builder::{ValkeyBuilder, ValkeyHeader};
use crate::valkey::filter::{empty_bitmap, ValkeyBloom, SEED_BYTES};

/// Bytes of the dialect's fields before the sub-filters.
const FIXED: usize = 8 + 8 + 1;
/// Bytes per sub-filter.
const PER_FILTER: usize = SEED_BYTES + 4 + 8 + 8 + 8;

/// The header (iterator 0).
pub(crate) fn header(v: &ValkeyBloom) -> Vec<u8> {
    let mut h = Vec::with_capacity(COMMON_HEADER + FIXED + PER_FILTER * v.filters.len());
    h.extend(v.items().to_le_bytes());
    h.extend((v.filters.len() as u32).to_le_bytes());
    h.extend(VALKEY_OPTIONS.to_le_bytes());
    h.extend(v.expansion.to_le_bytes());
    h.extend(v.error.to_le_bytes());
    h.extend(v.tightening.to_le_bytes());
    h.push(u8::from(v.seed_is_random));
    for f in &v.filters {
        h.extend(f.seed());
        h.extend(f.hashes().to_le_bytes());
        h.extend((f.bits().len() as u64).to_le_bytes());
        h.extend(f.capacity.to_le_bytes());
        h.extend(f.items.to_le_bytes());
    }
    h
}

/// An empty-bitted filter from a header whose common fields were read, validating every
/// field, and the storage against `max_bytes`, before allocating.
pub(crate) fn from_header(
    mut f: Fields<'_>,
    items: u64,
    count: u32,
    expansion: u32,
    max_bytes: u64,
) -> Result<ValkeyBloom, DumpError> {
    if f.0.len() != FIXED + PER_FILTER * count as usize {
        return Err(DecodeError::HeaderLength.into());
    }
    let error = f.f64();
    let tightening = f.f64();
    let mut b = ValkeyBuilder::new(ValkeyHeader {
        expansion: u64::from(expansion),
        error,
        tightening,
        seed_flag: u64::from(f.u8()),
    })?;
    let mut filters = Vec::with_capacity(count as usize);
    let mut needed = 0u64;
    for _ in 0..count {
        let seed = f.take::<SEED_BYTES>();
        let hashes = f.u32();
        let bytes = f.u64();
        let capacity = f.u64();
        let items = f.u64();
        needed = needed.saturating_add(bytes);
        filters.push((seed, hashes, bytes, capacity, items));
    }
    check_limit(needed, max_bytes)?;
    for (seed, hashes, bytes, capacity, items) in filters {
        b.check_room(bytes)?;
        let raw = empty_bitmap(bytes, hashes, &seed).map_err(DecodeError::from)?;
        b.push(raw, capacity, items)?;
    }
    let v = b.build()?;
    if v.items() != items {
        return Err(DecodeError::ItemSum.into());
    }
    Ok(v)
}
