//! rsbloom: a Redis and Valkey module with native Bloom, window and cuckoo filters,
//! wire-compatible with RedisBloom's BF.* and CF.* commands. The filters themselves are the
//! `rsbloom-core` crate, which knows nothing of Redis; this crate is the thin layer on top:
//! `ffi` is the one folder that speaks the server's C API (the entry point, the wrapper of a
//! command's context, keys and replies, and the registration and callbacks of the data types,
//! commands, configs and INFO section); `commands` (one folder per filter kind), `datatype`,
//! `config`, `forget` and `stats` are plain Rust on top of it. `ARCHITECTURE.md` maps where
//! each piece goes.

mod commands;
mod config;
mod datatype;
mod ffi;
mod forget;
mod stats;

/// RedisBloom's command level that rsbloom implements: clients look for module `bf` and gate
/// features on this version.
pub const MODULE_VERSION: i32 = 20802;

/// Every allocation goes through Redis's allocator, so INFO memory and maxmemory see it.
#[global_allocator]
static ALLOCATOR: ffi::alloc::ModuleAlloc = ffi::alloc::ModuleAlloc;
