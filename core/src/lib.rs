//! rsbloom's filters without Redis: the core crate knows nothing of the server, so it is
//! unit-tested, fuzzed and benchmarked on its own, and the module crate is a thin layer on top.
//!
//! One folder per filter kind, each with its model, its builder (the invariants a loaded value
//! must hold), its serialised forms' bodies, what it says of itself (`describe.rs`: BF.INFO's
//! fields, BF.DEBUG's lines) and its command arguments:
//!
//! - [`bloom`]: RedisBloom's scalable Bloom filter, a chain of links ([`Chain`]), and
//!   RedisBloom's RDB encodings (migration).
//! - [`window`]: window filters, which forget (`SLIDING`, `WINDOW seconds`), in two sibling
//!   layouts: [`Rotating`] (every new one) and [`Sliding`] (the first, age-partitioned).
//! - [`cuckoo`]: cuckoo filters (`CF.*`), which delete: RedisBloom's layout and algorithms
//!   ([`Cuckoo`]).
//! - [`valkey`]: valkey-bloom's filters (its `bloomfltr` keys), loaded, answered, grown and
//!   saved as valkey-bloom does ([`ValkeyBloom`]).
//!
//! The shared part: `spec` (what a new filter is asked to be: [`FilterSpec`], [`Window`],
//! [`Growth`], [`CuckooSpec`]), `outcome` (what an add answers: [`AddOutcome`],
//! [`FilterError`]), `filter` (the value of a Bloom key, [`Filter`], dispatching to the
//! kinds), [`describe`] (the shapes a kind describes itself in), [`hash`], [`sizing`],
//! [`memory`] (what allocations really take), [`defrag`] (moving a value's blocks), `hints`,
//! `lookahead` (the one batch look-ahead), [`codec`] (the typed-field skeleton every decoder
//! reads through), [`rdb`] (the one owner of a Bloom key's RDB envelope: encoding versions,
//! items, flags) and [`scandump`] (the SCANDUMP engine, its option bits and the dispatch),
//! [`args`] (strict number parsing, module arguments) and [`errors`] (every reply text, and
//! the mapping of each domain error to one). Modules the module crate does not call are
//! private (`pub(crate)`), so the compiler reports what nothing uses. `ARCHITECTURE.md` at the
//! repository's root says where a new piece goes.

#![warn(missing_docs, unreachable_pub)]
// `make check` builds the docs with --document-private-items, where links from a public item's
// docs to the private items that explain it resolve.
#![allow(rustdoc::private_intra_doc_links)]

#[cfg(target_endian = "big")]
compile_error!("rsbloom stores bit arrays as little-endian words and needs a little-endian target");

pub mod args;
pub(crate) mod blocked;
pub mod bloom;
pub mod bulk;
pub mod codec;
pub mod cuckoo;
pub mod defrag;
pub mod describe;
pub mod errors;
pub(crate) mod filter;
pub mod growing;
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
pub use growing::Growing;
pub use hash::FIXED_SEED;
pub use outcome::{AddOutcome, FilterError};
pub use spec::{CuckooSpec, FilterSpec, Growth, Window};
pub use valkey::{ValkeyBloom, ValkeySpec};
pub use window::partitioned::Sliding;
pub use window::rotating::Rotating;
