//! valkey-bloom's `BF.LOAD <key> <blob>`, the command its AOF rewrite writes per key, which
//! rsbloom's AOF rewrite of a `bloomfltr` key writes too, so that either module replays it.
//! The blob is a version byte (1), then bincode's fixed-width little-endian encoding of:
//!
//! ```text
//! u32 expansion   f64 error rate   f64 tightening ratio   u8 seed is random (0 or 1)
//! u64 sub-filters, then per sub-filter:
//!   u64 length, its bit array (45-byte header, then bits)   i64 items   i64 capacity
//! ```

use crate::codec::DecodeError;
use crate::memory;
use crate::scandump::engine::Fields;
use crate::valkey::builder::{ValkeyBuilder, ValkeyHeader};
use crate::valkey::filter::ValkeyBloom;

/// The blob's version byte.
pub const BLOB_VERSION: u8 = 1;

/// Why a blob was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadError {
    /// A version byte other than [`BLOB_VERSION`] (or none).
    Version,
    /// The blob is not a valid filter: the check that fired.
    Invalid(DecodeError),
}

impl From<DecodeError> for LoadError {
    fn from(e: DecodeError) -> Self {
        LoadError::Invalid(e)
    }
}

/// The blob of a filter.
pub fn encode(v: &ValkeyBloom) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(30 + v.filters.iter().map(|f| f.raw().len() + 24).sum::<usize>());
    out.push(BLOB_VERSION);
    out.extend(v.expansion.to_le_bytes());
    out.extend(v.error.to_le_bytes());
    out.extend(v.tightening.to_le_bytes());
    out.push(u8::from(v.seed_is_random));
    out.extend((v.filters.len() as u64).to_le_bytes());
    for f in &v.filters {
        out.extend((f.raw().len() as u64).to_le_bytes());
        out.extend(f.raw());
        out.extend(f.items.to_le_bytes());
        out.extend(f.capacity.to_le_bytes());
    }
    out
}

/// Reads a blob, validating every field before it allocates or trusts it.
pub fn decode(blob: &[u8]) -> Result<ValkeyBloom, LoadError> {
    let Some((&version, rest)) = blob.split_first() else {
        return Err(LoadError::Version);
    };
    if version != BLOB_VERSION {
        return Err(LoadError::Version);
    }
    let mut f = Blob(Fields(rest));
    let expansion = f.take::<4>().map(u32::from_le_bytes)?;
    let error = f.take::<8>().map(f64::from_le_bytes)?;
    let tightening = f.take::<8>().map(f64::from_le_bytes)?;
    let mut b = ValkeyBuilder::new(ValkeyHeader {
        expansion: u64::from(expansion),
        error,
        tightening,
        seed_flag: u64::from(f.take::<1>()?[0]),
    })?;
    let count = f.u64()?;
    for _ in 0..count {
        let len = f.u64()?;
        let raw = memory::try_copied(f.bytes(len)?, 0).map_err(DecodeError::from)?;
        let items = f.u64()?;
        let capacity = f.u64()?;
        b.push(raw, capacity, items)?;
    }
    if !f.0 .0.is_empty() {
        return Err(DecodeError::TrailingBytes.into());
    }
    Ok(b.build()?)
}

/// Fields of a blob whose length was not checked: each read checks it.
struct Blob<'a>(Fields<'a>);

impl<'a> Blob<'a> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        if self.0 .0.len() < N {
            return Err(DecodeError::Read("truncated BF.LOAD blob"));
        }
        Ok(self.0.take())
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        self.take::<8>().map(u64::from_le_bytes)
    }
    fn bytes(&mut self, len: u64) -> Result<&'a [u8], DecodeError> {
        let rest = self.0 .0;
        if (rest.len() as u64) < len {
            return Err(DecodeError::Read("truncated BF.LOAD blob"));
        }
        let (head, tail) = rest.split_at(len as usize);
        self.0 .0 = tail;
        Ok(head)
    }
}
