//! rsbloom's serialised form of a chain, written as a sequence of typed fields (unsigned,
//! double, byte string) so that the same schema serves the RDB (through Redis's module I/O)
//! and in-memory tests. The RDB encoding version is [`ENCODING_VERSION`].
//!
//! ```text
//! unsigned  items            items in the whole chain
//! unsigned  flags            bit 0: NONSCALING
//! unsigned  expansion
//! unsigned  seed             per-filter hash seed
//! unsigned  links            >= 1
//! per link:
//!   unsigned  layout         Layout tag (1 classic, 2 RedisBloom)
//!   unsigned  capacity
//!   double    error
//!   unsigned  hashes
//!   unsigned  bits           multiple of 64
//!   unsigned  items          items in this link
//!   string*   the bit array, little-endian words, in pieces of at most `codec::CHUNK_BYTES`
//! ```
//!
//! A window filter ([`crate::Sliding`]) sets flag bit 1 (`WINDOW`), which older builds refuse
//! as an unknown flag, and its fields follow the flags instead:
//!
//! ```text
//! unsigned  kind, seed       1 count window, 2 time window; the hash seed
//! double    error
//! unsigned  capacity, window, span, hashes, generations, base capacity, base bits,
//!           expansion (0: does not grow), clock, added, next generation, slices (0 or >= k)
//! string*   with flag bit 2 (`RING`, the blocked layout): the ring's bits, as a link's
//! per slice, oldest first:
//!   unsigned  generation, started, ended, count, load, capacity, level, bits
//!   string*   the bit array, as a link's (none for a slice in the ring: 0 bits of its own)
//! ```
//! A window filter of the rotating layout ([`crate::window::rotating`]) has flags `WINDOW` and
//! bit 3 (`ROTATING`), with bit 4 (`NOREFRESH`) in that mode, and these fields:
//!
//! ```text
//! unsigned  kind, seed       1 count window, 2 time window; the hash seed
//! double    error
//! unsigned  capacity, window, span, generations (r), hashes, blocks, generation items,
//!           expansion (0: does not grow), clock
//! string*   the interleaved base arrays of the r + 1 slots, as a link's bits
//! per slot (r + 1 of them, slot 0 first):
//!   unsigned  generation (2^64 - 1: none yet), load, limit, extras
//!   per extra: unsigned hashes, blocks, capacity, load; string* its bits
//! ```
//! Filters saved before the blocked layout have flags `WINDOW` alone and a bit array per
//! slice; they still load, and keep that layout.
//! Splitting the bit array keeps Redis's per-string work (LZF attempt, read buffer) bounded
//! instead of allocating a second copy of a multi-gigabyte array.
//! Older rsbloom builds wrote 16 MiB pieces; the reader takes pieces of any size.

use crate::codec::{DecodeError, FieldReader, FieldWriter};
use crate::filter::Filter;
use crate::{bloom, valkey, window};

/// RDB encoding version of rsbloom's format. RedisBloom writes 4 and refuses anything above,
/// so it cannot misread an rsbloom RDB.
pub const ENCODING_VERSION: i32 = 100;

pub(crate) const FLAG_NONSCALING: u64 = 1;
pub(crate) const FLAG_WINDOW: u64 = 2;
/// With [`FLAG_WINDOW`]: the blocked layout, the ring's bits before the slices (an older
/// rsbloom refuses the flags cleanly).
pub(crate) const FLAG_RING: u64 = 4;
/// With [`FLAG_WINDOW`]: the rotating layout ([`crate::window::rotating`]), whose fields follow
/// instead (an older rsbloom refuses the flags cleanly).
pub(crate) const FLAG_ROTATING: u64 = 8;
/// With [`FLAG_ROTATING`]: the `NOREFRESH` mode (an older rsbloom refuses the flags cleanly
/// rather than load the filter as refreshing).
pub(crate) const FLAG_NOREFRESH: u64 = 16;

/// Writes a filter: the `MBbloom--` value, or for a valkey-bloom filter the `bloomfltr` value
/// ([`crate::valkey::rdb`]), the type its key has.
pub fn encode(filter: &Filter, w: &mut impl FieldWriter) {
    match filter {
        Filter::Chain(chain) => bloom::rdb::encode(chain, w),
        Filter::Sliding(sliding) => window::partitioned::rdb::encode(sliding, w),
        Filter::Rotating(rotating) => window::rotating::rdb::encode(rotating, w),
        Filter::Valkey(v) => valkey::rdb::encode(v, w),
    }
}

/// Reads a filter, validating every field before it allocates or trusts it.
pub fn decode(r: &mut impl FieldReader) -> Result<Filter, DecodeError> {
    let items = r.unsigned()?;
    let flags = r.unsigned()?;
    match flags {
        FLAG_WINDOW => window::partitioned::rdb::decode(r, items, false).map(Filter::from),
        f if f == FLAG_WINDOW | FLAG_RING => {
            window::partitioned::rdb::decode(r, items, true).map(Filter::from)
        }
        f if f & !FLAG_NOREFRESH == FLAG_WINDOW | FLAG_ROTATING => {
            let refresh = f & FLAG_NOREFRESH == 0;
            window::rotating::rdb::decode(r, items, refresh).map(Filter::from)
        }
        0 | FLAG_NONSCALING => bloom::rdb::decode(r, items, flags).map(Filter::Chain),
        _ => Err(DecodeError::UnknownFlags),
    }
}
