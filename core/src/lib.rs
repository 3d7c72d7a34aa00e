//! rsbloom's filters without Redis: the core crate knows nothing of the server, so it is
//! unit-tested, fuzzed and benchmarked on its own, and the module crate is a thin layer on top.
//!
//! One folder per filter kind, each with its model, its builder (the invariants a loaded value
//! must hold), its serialised forms and its command arguments:
//!
//! - [`bloom`]: RedisBloom's scalable Bloom filter, a chain of links ([`Chain`]), and
//!   RedisBloom's RDB encodings (migration).
//! - [`window`]: window filters, which forget (`SLIDING`, `WINDOW seconds`: [`Sliding`]).
//! - [`cuckoo`]: cuckoo filters (`CF.*`), which delete: RedisBloom's layout and algorithms
//!   ([`Cuckoo`]).
//! - [`valkey`]: valkey-bloom's filters (its `bloomfltr` keys), loaded, answered, grown and
//!   saved as valkey-bloom does ([`ValkeyBloom`]).
//!
//! The shared part: [`spec`] (what a new filter is asked to be), [`outcome`] (what an add
//! answers), [`filter`] (the value of a Bloom key: a chain, a window filter or a valkey-bloom filter), [`hash`],
//! [`sizing`], [`memory`] (what allocations really take), [`defrag`] (moving a value's blocks), [`hints`], [`lookahead`] (the one batch look-ahead), [`codec`] (the typed-field
//! skeleton every decoder reads through), [`rdb`] and [`scandump`] (the Bloom key's RDB value
//! and SCANDUMP stream, dispatching to the kinds), [`args`] (strict number parsing, module
//! arguments) and [`errors`] (every reply text, and the mapping of each domain error to one).
//! `ARCHITECTURE.md` at the repository's root says where a new piece goes.

#![warn(missing_docs)]

#[cfg(target_endian = "big")]
compile_error!("rsbloom stores bit arrays as little-endian words and needs a little-endian target");

pub mod args;
pub mod bloom;
pub mod codec;
pub mod cuckoo;
pub mod defrag;
pub mod errors;
pub mod filter;
pub mod hash;
pub mod hints;
pub mod lines;
pub mod lookahead;
pub mod memory;
pub mod outcome;
pub mod rdb;
pub mod scandump;
pub mod sizing;
pub mod spec;
pub mod valkey;
pub mod window;

pub use bloom::chain::Chain;
pub use bloom::link::{Layout, Link};
pub use codec::DecodeError;
pub use cuckoo::filter::{Cuckoo, CuckooError, CuckooHash};
pub use filter::Filter;
pub use hash::FIXED_SEED;
pub use outcome::{AddOutcome, FilterError};
pub use spec::{CuckooSpec, FilterSpec, Growth, Window};
pub use valkey::{ValkeyBloom, ValkeySpec};
pub use window::partitioned::Sliding;
