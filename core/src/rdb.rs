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
//! A growing filter of the chunk layout ([`crate::growing`]) has flag bit 5 (`GROWING`) alone,
//! and its fields follow ([`crate::growing::rdb`]); one of the one-line layout (every new
//! one) has bit 6 (`LINES`) alone ([`crate::growing::lines::format`]).
//! Splitting the bit array keeps Redis's per-string work (LZF attempt, read buffer) bounded
//! instead of allocating a second copy of a multi-gigabyte array.
//! Older rsbloom builds wrote 16 MiB pieces; the reader takes pieces of any size.

use crate::bloom::redisbloom_rdb;
use crate::codec::{DecodeError, FieldReader, FieldWriter};
use crate::filter::Filter;
use crate::growing::lines::LineFilter;
use crate::hash::FIXED_SEED;
use crate::window::{partitioned, rotating};
use crate::{bloom, growing, valkey};

/// RDB encoding version of rsbloom's format. RedisBloom writes 4 and refuses anything above,
/// so it cannot misread an rsbloom RDB.
pub const ENCODING_VERSION: i32 = 100;

/// A chain that never grows.
const FLAG_NONSCALING: u64 = 1;
/// A window filter (of the first layout, unless [`FLAG_ROTATING`]).
const FLAG_WINDOW: u64 = 2;
/// With [`FLAG_WINDOW`]: the blocked layout, the ring's bits before the slices (an older
/// rsbloom refuses the flags cleanly).
const FLAG_RING: u64 = 4;
/// With [`FLAG_WINDOW`]: the rotating layout ([`crate::window::rotating`]), whose fields follow
/// instead (an older rsbloom refuses the flags cleanly).
const FLAG_ROTATING: u64 = 8;
/// With [`FLAG_ROTATING`]: the `NOREFRESH` mode (an older rsbloom refuses the flags cleanly
/// rather than load the filter as refreshing).
const FLAG_NOREFRESH: u64 = 16;
/// A growing filter ([`crate::growing`]), whose fields follow (an older rsbloom refuses the
/// flag cleanly).
const FLAG_GROWING: u64 = 32;
/// A growing filter of the one-line layout ([`crate::growing::lines`]), whose fields follow
/// (an older rsbloom refuses the flag cleanly).
const FLAG_LINES: u64 = 64;

/// Writes a filter: the `MBbloom--` value (its items, its flags, then the kind's fields), or
/// for a valkey-bloom filter the `bloomfltr` value ([`crate::valkey::rdb`]), the type its key
/// has.
pub fn encode(filter: &Filter, w: &mut impl FieldWriter) {
    let flag = |set: bool, flag: u64| if set { flag } else { 0 };
    match filter {
        Filter::Chain(chain) => {
            w.unsigned(chain.items());
            w.unsigned(flag(chain.is_nonscaling(), FLAG_NONSCALING));
            bloom::rdb::encode(chain, w);
        }
        Filter::Sliding(sliding) => {
            w.unsigned(sliding.base().added());
            w.unsigned(FLAG_WINDOW | flag(sliding.ring().is_some(), FLAG_RING));
            partitioned::rdb::encode(sliding, w);
        }
        Filter::Rotating(rotating) => {
            w.unsigned(rotating.base().added());
            w.unsigned(FLAG_WINDOW | FLAG_ROTATING | flag(!rotating.refresh(), FLAG_NOREFRESH));
            rotating::rdb::encode(rotating, w);
        }
        Filter::Valkey(v) => valkey::rdb::encode(v, w),
        Filter::Growing(g) => {
            w.unsigned(g.items());
            w.unsigned(FLAG_GROWING);
            growing::rdb::encode(g, w);
        }
        Filter::Lines(f) => {
            w.unsigned(f.items());
            w.unsigned(FLAG_LINES);
            f.encode(w);
        }
    }
}

/// Reads an `MBbloom--` value of encoding version `encver`: rsbloom's, or RedisBloom's own
/// (0 to 4, drop-in migration), whose chains grow native links under [`FIXED_SEED`] so that
/// replicas and AOF replays grow identical ones.
pub fn decode_version(r: &mut impl FieldReader, encver: i32) -> Result<Filter, DecodeError> {
    match encver {
        ENCODING_VERSION => decode(r),
        0..=redisbloom_rdb::MAX_ENCODING_VERSION => {
            redisbloom_rdb::decode(r, encver, FIXED_SEED).map(Filter::Chain)
        }
        _ => Err(DecodeError::UnknownEncoding),
    }
}

/// Reads a filter of rsbloom's encoding, validating every field before it allocates or trusts
/// it.
pub fn decode(r: &mut impl FieldReader) -> Result<Filter, DecodeError> {
    let items = r.unsigned()?;
    let flags = r.unsigned()?;
    match flags {
        FLAG_WINDOW => partitioned::rdb::decode(r, items, false).map(Filter::from),
        f if f == FLAG_WINDOW | FLAG_RING => {
            partitioned::rdb::decode(r, items, true).map(Filter::from)
        }
        f if f & !FLAG_NOREFRESH == FLAG_WINDOW | FLAG_ROTATING => {
            let refresh = f & FLAG_NOREFRESH == 0;
            rotating::rdb::decode(r, items, refresh).map(Filter::from)
        }
        FLAG_GROWING => growing::rdb::decode(r, items).map(Filter::from),
        FLAG_LINES => LineFilter::decode(r, items).map(Filter::from),
        0 | FLAG_NONSCALING => {
            bloom::rdb::decode(r, items, flags == FLAG_NONSCALING).map(Filter::Chain)
        }
        _ => Err(DecodeError::UnknownFlags),
    }
}
