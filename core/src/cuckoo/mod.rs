//! Cuckoo filters (`CF.*`), which delete: RedisBloom's layout and algorithms.

pub mod args;
pub mod builder;
pub mod filter;
pub mod rdb;
pub mod scandump;

#[cfg(test)]
mod tests;
