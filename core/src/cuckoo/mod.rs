//! Cuckoo filters (`CF.*`), which delete: RedisBloom's layout and algorithms.

pub mod args;
pub(crate) mod builder;
mod describe;
pub(crate) mod filter;
pub mod rdb;
pub mod scandump;

#[cfg(test)]
mod tests;

pub use filter::{Cuckoo, CuckooError, CuckooHash, MAX_FILTERS};
