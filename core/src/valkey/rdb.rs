//! The `bloomfltr` RDB value (encoding version [`ENCODING_VERSION`]), field for field as
//! valkey-bloom writes it, so that a key loaded from valkey-bloom and saved again untouched is
//! byte for byte what valkey-bloom saved, and valkey-bloom can load what rsbloom saves:
//!
//! ```text
//! unsigned  sub-filters         >= 1
//! unsigned  expansion           0: NONSCALING
//! double    error rate
//! double    tightening ratio
//! unsigned  seed is random      1 or 0
//! per sub-filter, oldest first:
//!   string    its bit array, with its 45-byte header (version, length, k, seed)
//!   unsigned  its capacity
//!   unsigned  (the last sub-filter only) its items; every earlier one holds its capacity
//! ```

use crate::codec::{DecodeError, FieldReader, FieldWriter};
use crate::sizing::MAX_LINK_BITS;
use crate::valkey::builder::{ValkeyBuilder, ValkeyHeader};
use crate::valkey::filter::{ValkeyBloom, BITMAP_HEADER};

/// The `bloomfltr` type's encoding version (valkey-bloom 1.0's).
pub const ENCODING_VERSION: i32 = 1;

/// Writes a filter.
pub fn encode(v: &ValkeyBloom, w: &mut impl FieldWriter) {
    w.unsigned(v.filters.len() as u64);
    w.unsigned(u64::from(v.expansion));
    w.double(v.error);
    w.double(v.tightening);
    w.unsigned(u64::from(v.seed_is_random));
    let last = v.filters.len() - 1;
    for (i, f) in v.filters.iter().enumerate() {
        w.bytes(f.raw());
        w.unsigned(f.capacity);
        if i == last {
            w.unsigned(f.items);
        }
    }
}

/// Reads a filter of encoding version `encver`, validating every field before it trusts it.
pub fn decode(r: &mut impl FieldReader, encver: i32) -> Result<ValkeyBloom, DecodeError> {
    if encver != ENCODING_VERSION {
        return Err(DecodeError::UnknownEncoding);
    }
    let count = r.unsigned()?;
    let expansion = r.unsigned()?;
    let error = r.double()?;
    let tightening = r.double()?;
    let mut b = ValkeyBuilder::new(ValkeyHeader {
        expansion,
        error,
        tightening,
        seed_flag: r.unsigned()?,
    })?;
    if count == 0 {
        return Err(DecodeError::FilterCount);
    }
    for i in 0..count {
        let raw = r.bytes(BITMAP_HEADER as u64 + MAX_LINK_BITS / 8)?;
        let capacity = r.unsigned()?;
        let items = if i == count - 1 {
            r.unsigned()?
        } else {
            capacity
        };
        b.push(raw, capacity, items)?;
    }
    b.build()
}
