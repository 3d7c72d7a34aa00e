//! Bloom filters as RedisBloom has them: a scaling chain of links.

pub mod args;
pub mod builder;
pub mod chain;
pub mod link;
pub mod rates;
pub mod rdb;
pub mod redisbloom_rdb;
pub mod scandump;
