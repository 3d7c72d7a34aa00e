//! Module-wide statistics for `INFO bf` (section `bf_stats`): live gauges of the Bloom filter
//! values Redis holds, and counters of the work done since the module loaded.
//!
//! The gauges are kept exact by counting every place a value enters Redis (a command creating
//! a key, RDB load, COPY) or leaves it (the type's free callback), and every change to a live
//! value (adds and growth, counted once per command). Relaxed atomics: INFO needs no ordering,
//! and a value may be freed in a lazyfree thread.

use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use redis_module::raw;

use crate::core::Filter;

static FILTERS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static ITEMS: AtomicU64 = AtomicU64::new(0);
static ADDS: AtomicU64 = AtomicU64::new(0);
static CHECKS: AtomicU64 = AtomicU64::new(0);
static REFUSALS: AtomicU64 = AtomicU64::new(0);

/// A filter became a value Redis holds.
pub fn filter_created(filter: &Filter) {
    FILTERS.fetch_add(1, Relaxed);
    BYTES.fetch_add(filter.bit_bytes(), Relaxed);
    ITEMS.fetch_add(filter.added(), Relaxed);
}

/// A value Redis held is being freed.
pub fn filter_freed(filter: &Filter) {
    FILTERS.fetch_sub(1, Relaxed);
    BYTES.fetch_sub(filter.bit_bytes(), Relaxed);
    ITEMS.fetch_sub(filter.added(), Relaxed);
}

/// A window filter's memory changed by something other than an add (it dropped slices
/// before the add that followed): `freed` bytes.
pub fn bytes_freed(freed: u64) {
    if freed != 0 {
        BYTES.fetch_sub(freed, Relaxed);
    }
}

/// One add command's effect on a live filter: `added` new items, `grown_bytes` of new links,
/// `refused` items refused (full, memory limit, cannot grow).
pub fn adds(added: u64, grown_bytes: u64, refused: u64) {
    if added != 0 {
        ADDS.fetch_add(added, Relaxed);
        ITEMS.fetch_add(added, Relaxed);
    }
    if grown_bytes != 0 {
        BYTES.fetch_add(grown_bytes, Relaxed);
    }
    if refused != 0 {
        REFUSALS.fetch_add(refused, Relaxed);
    }
}

/// `n` items checked by BF.EXISTS / BF.MEXISTS.
pub fn checks(n: u64) {
    CHECKS.fetch_add(n, Relaxed);
}

/// The fields of the `bf_stats` section, in order.
pub fn fields() -> [(&'static CStr, u64); 6] {
    [
        (c"filters", FILTERS.load(Relaxed)),
        (c"bytes", BYTES.load(Relaxed)),
        (c"items", ITEMS.load(Relaxed)),
        (c"adds", ADDS.load(Relaxed)),
        (c"checks", CHECKS.load(Relaxed)),
        (c"refusals", REFUSALS.load(Relaxed)),
    ]
}

/// The INFO callback: section `stats`, which Redis names `bf_stats` (fields `bf_<name>`).
extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    // Only atomic loads and calls into Redis: nothing here can panic.
    // SAFETY: the live INFO context Redis passed; NUL-terminated static names.
    unsafe {
        if let Some(add_section) = raw::RedisModule_InfoAddSection {
            add_section(ctx, c"stats".as_ptr());
        }
        if let Some(add_field) = raw::RedisModule_InfoAddFieldULongLong {
            for (name, value) in fields() {
                add_field(ctx, name.as_ptr(), value);
            }
        }
    }
}

/// Registers the INFO callback.
// `ctx` is only passed on to Redis, which requires OnLoad's live context.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn register(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    // SAFETY: OnLoad's live context and a callback with the signature Redis expects.
    let status = unsafe { raw::RedisModule_RegisterInfoFunc.unwrap()(ctx, Some(info)) };
    if status != raw::Status::Ok as c_int {
        return Err("could not register the INFO callback".into());
    }
    Ok(())
}
