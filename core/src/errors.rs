//! Every error reply text, in one table, and the one place that turns each domain error into
//! its reply text. The texts are RedisBloom 2.8.2's, byte for byte (several lack the `ERR`
//! prefix, and the error-rate range text ends in a space), plus rsbloom's own for the cases
//! RedisBloom mishandles.

use crate::codec::DecodeError;
use crate::cuckoo::filter::CuckooError;
use crate::outcome::FilterError;
use crate::scandump::DumpError;
use crate::sizing::MAX_LINK_BITS;

/// BF.RESERVE: the error rate is not a number.
pub const BAD_ERROR_RATE: &str = "ERR bad error rate";
/// BF.RESERVE: the error rate is not in (0, 1).
pub const ERROR_RATE_RANGE: &str = "ERR (0 < error rate range < 1) ";
/// BF.RESERVE: the capacity is not an integer.
pub const BAD_CAPACITY: &str = "ERR bad capacity";
/// BF.RESERVE: the capacity is below 1.
pub const CAPACITY_RANGE: &str = "ERR (capacity should be larger than 0)";
/// BF.RESERVE: `EXPANSION` without a value.
pub const NO_EXPANSION: &str = "ERR no expansion";
/// BF.RESERVE: the expansion is not an integer.
pub const BAD_EXPANSION: &str = "ERR bad expansion";
/// BF.RESERVE: the expansion is below 1.
pub const EXPANSION_RANGE: &str = "ERR expansion should be greater or equal to 1";
/// BF.RESERVE: `EXPANSION` with `NONSCALING`.
pub const NONSCALING_EXPANSION: &str = "Nonscaling filters cannot expand";
/// BF.RESERVE, CF.RESERVE, CF.LOADCHUNK's header: the key exists.
pub const ITEM_EXISTS: &str = "ERR item exists";
/// Every command: the key holds another type.
pub const WRONG_TYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// An add to a full NONSCALING filter.
pub const FULL: &str = "ERR non scaling filter is full";
/// A command that needs an existing filter (INFO, DEBUG, SCANDUMP, INSERT with NOCREATE, ...) on a missing key.
pub const NOT_FOUND: &str = "ERR not found";
/// BF.INSERT: `ERROR` is not a number.
pub const INSERT_BAD_ERROR_RATE: &str = "Bad error rate";
/// BF.INSERT: `CAPACITY` is not an integer.
pub const INSERT_BAD_CAPACITY: &str = "Bad capacity";
/// BF.INSERT: `EXPANSION` is not an integer.
pub const INSERT_BAD_EXPANSION: &str = "Bad expansion";
/// BF.INSERT: an option value out of range (error rate, capacity or expansion).
pub const INSERT_BAD_ARGUMENT: &str = "Bad argument received";
/// BF.INSERT, CF.INSERT: an option the command does not know.
pub const INSERT_UNKNOWN_ARGUMENT: &str = "Unknown argument received";
/// BF.INFO: a field it does not know.
pub const INVALID_INFO_VALUE: &str = "Invalid information value";
/// valkey-bloom's replies to a replayed `BF.INSERT`'s SEED that is not 32 bytes, and to its
/// TIGHTENING that is not a number or not in (0, 1).
pub const VALKEY_BAD_SEED: &str = "ERR invalid seed";
/// See [`VALKEY_BAD_SEED`].
pub const VALKEY_BAD_TIGHTENING: &str = "ERR bad tightening ratio";
/// See [`VALKEY_BAD_SEED`].
pub const VALKEY_TIGHTENING_RANGE: &str = "ERR (0 < tightening ratio range < 1)";
/// valkey-bloom's replies to a `BF.LOAD` whose key exists, whose blob has another version, or
/// whose blob is not a filter.
pub const VALKEY_KEY_EXISTS: &str = "BUSYKEY Target key name already exists.";
/// See [`VALKEY_KEY_EXISTS`].
pub const VALKEY_UNSUPPORTED_VERSION: &str =
    "ERR bloom object decoding failed. Unsupported version";
/// See [`VALKEY_KEY_EXISTS`].
pub const VALKEY_DECODING_FAILED: &str = "ERR bloom object decoding failed";
/// rsbloom's `SEED` (BF.RESERVE, CF.RESERVE): not an unsigned 64-bit integer.
pub const BAD_SEED: &str = "ERR SEED needs an unsigned 64-bit integer";
/// BF.SCANDUMP: the iterator is not an integer.
pub const SCANDUMP_BAD_ITERATOR: &str = "Second argument must be numeric";
/// BF.LOADCHUNK: the iterator is not an integer.
pub const LOADCHUNK_BAD_ITERATOR: &str = "ERR Second argument must be numeric";
/// BF.LOADCHUNK: a header it cannot build, or a chunk with an impossible iterator.
pub const BAD_DATA: &str = "ERR received bad data";
/// BF.LOADCHUNK: a chunk whose position is in no link.
pub const NO_LINK: &str = "ERR invalid offset - no link found";
/// BF.LOADCHUNK: a chunk running past the end of its link.
pub const CHUNK_TOO_BIG: &str = "ERR invalid chunk - Too big for current filter";
/// An add that needs a new link whose error rate or capacity is out of range.
pub const CANNOT_GROW: &str =
    "ERR cannot add a link: its error rate or capacity is out of range (error underflow)";
/// `WINDOW` without whole seconds in range.
pub const BAD_WINDOW: &str = "ERR WINDOW takes whole seconds, from 1 to 4294967295";
/// `SLIDING` and `WINDOW` together.
pub const SLIDING_AND_WINDOW: &str =
    "ERR SLIDING and WINDOW exclude each other: SLIDING keeps the newest items by count, WINDOW by time";
/// `EXPANSION` with `SLIDING`.
pub const SLIDING_EXPANSION: &str =
    "ERR SLIDING filters do not grow (their memory is fixed): EXPANSION does not apply";
/// `EXPANDABLE` with a window, `NONSCALING` or `EXPANSION`.
pub const EXPANDABLE_CONFLICT: &str =
    "ERR EXPANDABLE filters grow on their own: NONSCALING, EXPANSION, SLIDING and WINDOW do not apply";
/// `EXPANDABLE` with an error rate a growing filter cannot honour.
pub const EXPANDABLE_ERROR_RATE: &str = "ERR EXPANDABLE filters take error rates from 5.2e-9";
/// A window filter asked for an error rate it cannot honour.
pub const WINDOW_ERROR_RATE: &str = "ERR window filters take error rates from 5.6e-16";
/// BF.INSERT's `AT` without a time in range.
pub const BAD_AT: &str = "ERR AT takes a Unix time in milliseconds, up to 2^62";
/// `BF.INFO key WINDOW` on a filter without a window.
pub const NOT_A_WINDOW: &str = "ERR not a window filter (created without SLIDING or WINDOW)";
/// An add to a full NONSCALING time window.
pub const WINDOW_FULL: &str = "ERR window filter is full: NONSCALING and more than its capacity \
    within one window";

/// A filter (or a link, or a window's extra array) whose bits the allocator refused
/// (RedisBloom's text): the server goes on, and nothing changed.
pub const OUT_OF_MEMORY: &str = "ERR Insufficient memory to create filter";
/// A bulk command whose answers (a byte per item) the allocator refused, before anything
/// changed.
pub const BULK_OUT_OF_MEMORY: &str =
    "ERR Insufficient memory for the answers to this blob (nothing was changed)";
/// `NOREFRESH` where no window filter is created or added to.
pub const NOREFRESH_WITHOUT_WINDOW: &str =
    "ERR NOREFRESH applies only to window filters: give SLIDING or WINDOW seconds with it";

/// An option given twice (the last would silently win).
pub fn given_twice(option: &str) -> String {
    format!("ERR {option} is given twice")
}

/// `*.RESERVE`: an option it does not know (RedisBloom ignores it), named; `BF.INSERT`: a word
/// RedisBloom would read as an option by its first letters (`NOXYZ` as `NONSCALING`).
pub fn unknown_argument(command: &str, arg: &[u8]) -> String {
    format!(
        "ERR unknown argument '{}' for {command}",
        crate::args::text(arg)
    )
}

/// A window word (`SLIDING`, `WINDOW`, `AT`) given to a cuckoo command.
pub fn window_word_on_cuckoo(word: &[u8]) -> String {
    format!(
        "ERR {} is an option of Bloom filters (BF.RESERVE, BF.INSERT): cuckoo filters have no \
         window",
        crate::args::text(word).to_ascii_uppercase()
    )
}

/// A link over the most one link may have (2^40 bits), although the per-filter limit allows it.
pub fn link_too_large(needed: u64) -> String {
    format!(
        "ERR filter would need a link of {needed} bytes, over the largest link rsbloom stores \
         ({} bytes)",
        MAX_LINK_BITS / 8
    )
}

/// The per-filter memory limit error, naming the limit and the config / module argument that
/// set it.
pub fn too_large(needed: u64, limit: u64) -> String {
    format!(
        "ERR filter would need {needed} bytes, over the per-filter limit of {limit} bytes \
         (config bf.max-filter-bytes, module argument MAX_FILTER_BYTES)"
    )
}

/// The CF.* texts, RedisBloom 2.8.2's byte for byte (most without `ERR`, some with a full stop).
pub mod cf {
    /// CF.RESERVE, CF.INSERT: the capacity is not an integer.
    pub const BAD_CAPACITY: &str = "Bad capacity";
    /// CF.RESERVE, CF.INSERT: the capacity holds fewer than two buckets.
    pub const CAPACITY_RANGE: &str = "Capacity must be at least (BucketSize * 2)";
    /// CF.RESERVE: `MAXITERATIONS` is not an integer.
    pub const PARSE_MAX_ITERATIONS: &str = "Couldn't parse MAXITERATIONS";
    /// CF.RESERVE: `BUCKETSIZE` is not an integer.
    pub const PARSE_BUCKET_SIZE: &str = "Couldn't parse BUCKETSIZE";
    /// CF.RESERVE: `EXPANSION` is not an integer.
    pub const PARSE_EXPANSION: &str = "Couldn't parse EXPANSION";
    /// CF.RESERVE: `MAXITERATIONS` out of range.
    pub const MAX_ITERATIONS_RANGE: &str =
        "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.";
    /// CF.RESERVE: `BUCKETSIZE` out of range.
    pub const BUCKET_SIZE_RANGE: &str =
        "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.";
    /// CF.RESERVE: `EXPANSION` out of range.
    pub const EXPANSION_RANGE: &str =
        "EXPANSION: value must be an integer between 0 and 32768, inclusive.";
    /// A cuckoo filter that cannot be created.
    pub const INSUFFICIENT_MEMORY_CREATE: &str = "ERR Insufficient memory to create filter";
    /// CF.ADD: a sub-filter that cannot be allocated.
    pub const INSUFFICIENT_MEMORY: &str = "ERR Insufficient memory";
    /// CF.ADD: a full filter that does not grow.
    pub const FULL: &str = "Filter is full";
    /// CF.ADD, CF.INSERT: the filter has the most sub-filters allowed.
    pub const MAX_EXPANSIONS: &str = "Maximum expansions reached";
    /// CF.DEL on a missing key.
    pub const DEL_NOT_FOUND: &str = "Not found";
    /// CF.COMPACT on a missing key.
    pub const COMPACT_NOT_FOUND: &str = "Cuckoo filter was not found";
    /// CF.SCANDUMP, CF.LOADCHUNK: a bad iterator.
    pub const INVALID_POSITION: &str = "Invalid position";
    /// CF.LOADCHUNK: a header of the wrong length.
    pub const INVALID_HEADER: &str = "Invalid header";
    /// CF.LOADCHUNK: a header it cannot build.
    pub const CANNOT_CREATE: &str = "Couldn't create filter!";
    /// CF.LOADCHUNK: a chunk that does not fit.
    pub const CANNOT_LOAD_CHUNK: &str = "Couldn't load chunk!";
    /// rsbloom: CF.RESERVE refuses what RedisBloom silently ignores.
    pub const UNKNOWN_RESERVE_ARGUMENT: &str = "ERR unknown argument for CF.RESERVE";
}

/// The reply to a Bloom or window filter's refused creation or add.
pub fn filter_error(e: &FilterError) -> String {
    match e {
        FilterError::Full => FULL.to_string(),
        FilterError::TooLarge { needed, limit } => too_large(*needed, *limit),
        FilterError::LinkTooLarge { needed } => link_too_large(*needed),
        FilterError::CannotGrow => CANNOT_GROW.to_string(),
        FilterError::WindowFull => WINDOW_FULL.to_string(),
        FilterError::OutOfMemory { .. } => OUT_OF_MEMORY.to_string(),
    }
}

/// The reply to a refused BF.LOADCHUNK (header or chunk).
pub fn bloom_dump_error(e: &DumpError) -> String {
    match e {
        DumpError::BadData(_) => BAD_DATA.to_string(),
        DumpError::NoLink => NO_LINK.to_string(),
        DumpError::TooBig => CHUNK_TOO_BIG.to_string(),
        DumpError::TooLarge { needed, limit } => too_large(*needed, *limit),
    }
}

/// The reply to a cuckoo filter's refused creation.
pub fn cuckoo_create_error(e: &CuckooError) -> String {
    match e {
        CuckooError::TooLarge { needed, limit } => too_large(*needed, *limit),
        _ => cf::INSUFFICIENT_MEMORY_CREATE.to_string(),
    }
}

/// The reply to a refused CF.ADD / CF.ADDNX (in the arrays of CF.INSERT every refusal is -1).
pub fn cuckoo_insert_error(e: &CuckooError) -> String {
    match e {
        CuckooError::Full => cf::FULL.to_string(),
        CuckooError::MaxFilters => cf::MAX_EXPANSIONS.to_string(),
        CuckooError::TooLarge { needed, limit } => too_large(*needed, *limit),
        CuckooError::Insufficient => cf::INSUFFICIENT_MEMORY.to_string(),
    }
}

/// The reply to a refused CF.LOADCHUNK: RedisBloom's header texts (a wrong length, a header it
/// cannot build) and its one text for every chunk that does not fit.
pub fn cuckoo_dump_error(e: &DumpError, header: bool) -> String {
    match e {
        DumpError::TooLarge { needed, limit } => too_large(*needed, *limit),
        DumpError::BadData(Some(DecodeError::HeaderLength)) if header => {
            cf::INVALID_HEADER.to_string()
        }
        _ if header => cf::CANNOT_CREATE.to_string(),
        _ => cf::CANNOT_LOAD_CHUNK.to_string(),
    }
}
