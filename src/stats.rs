//! Module-wide statistics for `INFO bf` (section `bf_stats`): live gauges of the Bloom and cuckoo
//! filter values Redis holds, and counters of the work done since the module loaded.
//!
//! The gauges are kept exact by counting every place a value enters Redis (a command creating
//! a key, RDB load, COPY) or leaves it (the type's free callback), and every change to a live
//! value (adds and growth, counted once per command). Relaxed atomics: INFO needs no ordering,
//! and a value may be freed in a lazyfree thread.

use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use redis_module::raw;

use rsbloom_core::{Cuckoo, Filter};

static FILTERS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static ITEMS: AtomicU64 = AtomicU64::new(0);
static ADDS: AtomicU64 = AtomicU64::new(0);
static CHECKS: AtomicU64 = AtomicU64::new(0);
static REFUSALS: AtomicU64 = AtomicU64::new(0);
static CF_FILTERS: AtomicU64 = AtomicU64::new(0);
static CF_BYTES: AtomicU64 = AtomicU64::new(0);
static CF_ITEMS: AtomicU64 = AtomicU64::new(0);
static CF_ADDS: AtomicU64 = AtomicU64::new(0);
static CF_CHECKS: AtomicU64 = AtomicU64::new(0);
static CF_DELETES: AtomicU64 = AtomicU64::new(0);
static CF_REFUSALS: AtomicU64 = AtomicU64::new(0);

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

/// A cuckoo filter became a value Redis holds.
pub fn cuckoo_created(cf: &Cuckoo) {
    CF_FILTERS.fetch_add(1, Relaxed);
    CF_BYTES.fetch_add(cf.slot_bytes(), Relaxed);
    CF_ITEMS.fetch_add(cf.items(), Relaxed);
}

/// A cuckoo filter Redis held is being freed.
pub fn cuckoo_freed(cf: &Cuckoo) {
    CF_FILTERS.fetch_sub(1, Relaxed);
    CF_BYTES.fetch_sub(cf.slot_bytes(), Relaxed);
    CF_ITEMS.fetch_sub(cf.items(), Relaxed);
}

/// One cuckoo write command's effect on a live filter: its slot bytes and items before and
/// after (a LOADCHUNK or a compaction changes them without an add), `added` inserts, `deleted`
/// deletes and `refused` items refused (full, memory, sub-filter limit).
pub fn cuckoo_changed(
    before: (u64, u64),
    after: (u64, u64),
    added: u64,
    deleted: u64,
    refused: u64,
) {
    // Each atomic add is a locked instruction: only the counters that moved are touched.
    let add = |cell: &AtomicU64, delta: u64| {
        if delta != 0 {
            cell.fetch_add(delta, Relaxed);
        }
    };
    // Wrapping: a cuckoo item count may wrap below zero (RedisBloom's), and the gauge with it,
    // consistently with the free that subtracts the value's own count.
    add(&CF_BYTES, after.0.wrapping_sub(before.0));
    add(&CF_ITEMS, after.1.wrapping_sub(before.1));
    add(&CF_ADDS, added);
    add(&CF_DELETES, deleted);
    add(&CF_REFUSALS, refused);
}

/// `n` items checked by CF.EXISTS / CF.MEXISTS / CF.COUNT.
pub fn cuckoo_checks(n: u64) {
    CF_CHECKS.fetch_add(n, Relaxed);
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

/// The fields of the `bf_stats` section, in order: the Bloom filters', then the cuckoo
/// filters' (`cf_`, with `cf_deletes`).
pub fn fields() -> [(&'static CStr, u64); 13] {
    [
        (c"filters", FILTERS.load(Relaxed)),
        (c"bytes", BYTES.load(Relaxed)),
        (c"items", ITEMS.load(Relaxed)),
        (c"adds", ADDS.load(Relaxed)),
        (c"checks", CHECKS.load(Relaxed)),
        (c"refusals", REFUSALS.load(Relaxed)),
        (c"cf_filters", CF_FILTERS.load(Relaxed)),
        (c"cf_bytes", CF_BYTES.load(Relaxed)),
        (c"cf_items", CF_ITEMS.load(Relaxed)),
        (c"cf_adds", CF_ADDS.load(Relaxed)),
        (c"cf_checks", CF_CHECKS.load(Relaxed)),
        (c"cf_deletes", CF_DELETES.load(Relaxed)),
        (c"cf_refusals", CF_REFUSALS.load(Relaxed)),
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
