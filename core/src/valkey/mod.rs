//! valkey-bloom's filters: the values of its `bloomfltr` keys, which rsbloom loads, answers,
//! grows and saves as valkey-bloom does, so that a valkey-bloom user can switch to rsbloom
//! without losing a key, and back.
//!
//! - [`filter`]: the model ([`ValkeyBloom`]): valkey-bloom's hashing (SipHash-1-3), sizing,
//!   tightening and growth.
//! - [`builder`]: every invariant a decoded one must hold.
//! - [`rdb`]: the `bloomfltr` RDB value (encoding version 1), byte for byte valkey-bloom's.
//! - [`load`]: the `BF.LOAD` blob, valkey-bloom's AOF form.
//! - [`scandump`]: rsbloom's SCANDUMP header of one.
//!
//! New keys never get this layout unless valkey-bloom's own commands ask for it: its replicated
//! `BF.INSERT … TIGHTENING t SEED s` (from a primary or the AOF) and `BF.LOAD`.

pub mod args;
pub(crate) mod builder;
mod describe;
pub(crate) mod filter;
pub mod load;
pub mod rdb;
pub(crate) mod scandump;
#[cfg(test)]
mod tests;

pub use filter::{ValkeyBloom, ValkeySpec, FIXED_SEED};
