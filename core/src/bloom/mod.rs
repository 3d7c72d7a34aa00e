//! Bloom filters as RedisBloom has them: a scaling chain of links.

pub mod args;
pub(crate) mod builder;
pub(crate) mod chain;
mod describe;
pub(crate) mod link;
pub mod rates;
pub(crate) mod rdb;
pub mod redisbloom_rdb;
pub(crate) mod scandump;

pub use chain::Chain;
pub use link::{Layout, Link};
