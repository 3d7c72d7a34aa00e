//! Bloom filters as RedisBloom has them: a scaling chain of links.

pub mod builder;
pub mod chain;
pub mod link;
pub mod redisbloom_rdb;
