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

#![warn(missing_docs, unreachable_pub)]
// `make check` builds the docs with --document-private-items, where links from a public item's
// docs to the private items that explain it resolve.
#![allow(rustdoc::private_intra_doc_links)]

#[cfg(target_endian = "big")]
compile_error!("rsbloom stores bit arrays as little-endian words and needs a little-endian target");

pub mod args;
pub mod bloom;
pub mod codec;
pub mod cuckoo;
pub mod defrag;
pub mod describe;
pub mod errors;
pub(crate) mod filter;
pub mod hash;
pub(crate) mod hints;
pub(crate) mod lines;
pub(crate) mod lookahead;
pub mod memory;
pub(crate) mod outcome;
pub mod rdb;
pub mod scandump;
pub mod sizing;
pub(crate) mod spec;
pub mod valkey;
pub mod window;

pub use bloom::{Chain, Layout, Link};
pub use codec::DecodeError;
pub use cuckoo::{Cuckoo, CuckooError, CuckooHash};
pub use filter::Filter;
pub use hash::FIXED_SEED;
pub use outcome::{AddOutcome, FilterError};
pub use spec::{CuckooSpec, FilterSpec, Growth, Window};
pub use valkey::{ValkeyBloom, ValkeySpec};
pub use window::partitioned::Sliding;
pub use window::rotating::Rotating;
