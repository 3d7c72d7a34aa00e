//! The Bloom filter core: sizing, hashing, bit storage, links, the scalable chain and the
//! serialisation format. Nothing in here knows about Redis, so it is unit-tested on its own.

pub mod chain;
pub mod codec;
pub mod dump;
pub mod hash;
pub mod hints;
pub mod link;
pub mod redisbloom;
pub mod sizing;

pub use chain::{AddOutcome, Chain, ChainError, ChainParams};
pub use link::{Layout, Link};
