//! The Bloom filter core: sizing, hashing, bit storage, links, the scalable chain and its
//! serialised forms. Nothing in here knows about Redis, so it is unit-tested and benchmarked on
//! its own.
//!
//! - [`spec`]: what a new filter is asked to be ([`FilterSpec`], [`Growth`]).
//! - [`sizing`], [`hash`], [`link`], [`chain`]: RedisBloom's scaling filter.
//! - [`sliding`]: window filters, which forget (`SLIDING`, `WINDOW`).
//! - [`filter`]: the value of a key, either kind ([`Filter`]).
//! - [`cuckoo`]: cuckoo filters (`CF.*`), which delete: RedisBloom's layout and algorithms.
//! - [`decode`]: the one decoder skeleton every serialised form builds through.
//! - [`rdb`]: rsbloom's RDB format; [`redisbloom_rdb`]: RedisBloom's RDB encodings (migration);
//!   [`scandump`]: the BF.SCANDUMP / BF.LOADCHUNK stream (also the AOF rewrite).

pub mod args;
pub mod bloom;
pub mod codec;
pub mod cuckoo;
pub mod errors;
pub mod filter;
pub mod hash;
pub mod hints;
pub mod lookahead;
pub mod outcome;
pub mod rdb;
pub mod scandump;
pub mod sizing;
pub mod spec;
pub mod window;

pub use bloom::chain::Chain;
pub use bloom::link::{Layout, Link};
pub use codec::DecodeError;
pub use cuckoo::filter::{Cuckoo, CuckooError, CuckooHash};
pub use filter::Filter;
pub use hash::FIXED_SEED;
pub use outcome::{AddOutcome, FilterError};
pub use spec::{CuckooSpec, FilterSpec, Growth, Window};
pub use window::sliding::Sliding;
