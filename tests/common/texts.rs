//! RedisBloom 2.8.2's reply texts (the spec's), once for every test. The module keeps its own
//! table in core/src/errors.rs; these are the tests' independent copy, so a wrong text there
//! fails.
#![allow(dead_code)]

pub const BAD_ERROR_RATE: &str = "ERR bad error rate";
/// Ends in a space, as RedisBloom's does.
pub const ERROR_RATE_RANGE: &str = "ERR (0 < error rate range < 1) ";
pub const BAD_CAPACITY: &str = "ERR bad capacity";
pub const CAPACITY_RANGE: &str = "ERR (capacity should be larger than 0)";
pub const NO_EXPANSION: &str = "ERR no expansion";
pub const BAD_EXPANSION: &str = "ERR bad expansion";
pub const EXPANSION_RANGE: &str = "ERR expansion should be greater or equal to 1";
pub const NONSCALING_EXPANSION: &str = "Nonscaling filters cannot expand";
pub const ITEM_EXISTS: &str = "ERR item exists";
pub const FULL: &str = "ERR non scaling filter is full";
pub const NOT_FOUND: &str = "ERR not found";
pub const INSERT_BAD_ERROR_RATE: &str = "Bad error rate";
pub const INSERT_BAD_CAPACITY: &str = "Bad capacity";
pub const INSERT_BAD_EXPANSION: &str = "Bad expansion";
pub const INSERT_BAD_ARGUMENT: &str = "Bad argument received";
pub const INSERT_UNKNOWN_ARGUMENT: &str = "Unknown argument received";
pub const INVALID_INFO_VALUE: &str = "Invalid information value";
pub const SCANDUMP_BAD_ITERATOR: &str = "Second argument must be numeric";
pub const LOADCHUNK_BAD_ITERATOR: &str = "ERR Second argument must be numeric";
pub const BAD_DATA: &str = "ERR received bad data";
pub const NO_LINK: &str = "ERR invalid offset - no link found";
pub const CHUNK_TOO_BIG: &str = "ERR invalid chunk - Too big for current filter";
/// rsbloom's own.
pub const BAD_SEED: &str = "ERR SEED needs an unsigned 64-bit integer";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// rsbloom's own: `*.RESERVE` refuses, by name, an argument RedisBloom silently ignores.
pub fn unknown_argument(command: &str, arg: &str) -> String {
    format!("ERR unknown argument '{arg}' for {command}")
}

/// rsbloom's own: a Bloom filter's window word given to a cuckoo command.
pub fn window_word_on_cuckoo(word: &str) -> String {
    format!(
        "ERR {word} is an option of Bloom filters (BF.RESERVE, BF.INSERT): cuckoo filters \
         have no window"
    )
}

/// Redis's own RESTORE text for a payload its module type refused.
pub const RESTORE_BAD_DATA: &str = "ERR Bad data format";

/// The CF.* texts, RedisBloom 2.8.2's (most without `ERR`, some with a full stop).
pub mod cf {
    pub const BAD_CAPACITY: &str = "Bad capacity";
    pub const CAPACITY_RANGE: &str = "Capacity must be at least (BucketSize * 2)";
    pub const PARSE_MAX_ITERATIONS: &str = "Couldn't parse MAXITERATIONS";
    pub const PARSE_BUCKET_SIZE: &str = "Couldn't parse BUCKETSIZE";
    pub const PARSE_EXPANSION: &str = "Couldn't parse EXPANSION";
    pub const MAX_ITERATIONS_RANGE: &str =
        "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.";
    pub const BUCKET_SIZE_RANGE: &str =
        "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.";
    pub const EXPANSION_RANGE: &str =
        "EXPANSION: value must be an integer between 0 and 32768, inclusive.";
    pub const INSUFFICIENT_MEMORY_CREATE: &str = "ERR Insufficient memory to create filter";
    pub const FULL: &str = "Filter is full";
    pub const MAX_EXPANSIONS: &str = "Maximum expansions reached";
    pub const DEL_NOT_FOUND: &str = "Not found";
    pub const COMPACT_NOT_FOUND: &str = "Cuckoo filter was not found";
    pub const INVALID_POSITION: &str = "Invalid position";
    pub const INVALID_HEADER: &str = "Invalid header";
    pub const CANNOT_CREATE: &str = "Couldn't create filter!";
    pub const CANNOT_LOAD_CHUNK: &str = "Couldn't load chunk!";
}
/// rsbloom's own: `EXPANDABLE` with another growth or a window.
pub const EXPANDABLE_CONFLICT: &str =
    "ERR EXPANDABLE filters grow on their own: NONSCALING, EXPANSION, SLIDING and WINDOW do not apply";
/// rsbloom's own: `EXPANDABLE` with a rate too small for its slots.
pub const EXPANDABLE_ERROR_RATE: &str = "ERR EXPANDABLE filters take error rates from 5.2e-9";
