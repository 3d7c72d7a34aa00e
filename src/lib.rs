//! rsbloom: a Redis and Valkey module with native Bloom, window and cuckoo filters,
//! wire-compatible with RedisBloom's BF.* and CF.* commands. The filters themselves are the
//! `rsbloom-core` crate, which knows nothing of Redis; this crate is the thin layer on top:
//! `redis` wraps the module API, `commands` (one folder per filter kind), `datatype`, `config`,
//! `stats` and `capabilities` use it. This file is the entry point: identity, data types,
//! commands, INFO section, configs. `ARCHITECTURE.md` maps where each piece goes.

mod commands;
mod config;
mod datatype;
mod ffi;
mod forget;
mod stats;

use std::ffi::c_int;

use redis_module::{raw, Context};

use datatype::{BLOOM_TYPE, CUCKOO_TYPE, VALKEY_TYPE};

/// RedisBloom's command level that rsbloom implements: clients look for module `bf` and gate
/// features on this version.
pub const MODULE_VERSION: i32 = 20802;

/// Every allocation goes through Redis's allocator, so INFO memory and maxmemory see it.
#[global_allocator]
static ALLOCATOR: ffi::alloc::ModuleAlloc = ffi::alloc::ModuleAlloc;

/// The module's entry point. Written by hand rather than with `redis_module!`, whose setup
/// needs Redis 7.2 APIs; rsbloom's floor is Redis 7.0.
///
/// # Safety
/// Called by Redis once, with a valid context and `argc` module arguments.
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // A panic while loading fails the load instead of unwinding into Redis.
    // SAFETY: OnLoad's contract, passed on unchanged.
    ffi::unwind::no_unwind(raw::Status::Err as c_int, || unsafe {
        load(ctx, argv, argc)
    })
}

/// The body of [`RedisModule_OnLoad`].
///
/// # Safety
/// As for [`RedisModule_OnLoad`].
unsafe fn load(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    const ERR: c_int = raw::Status::Err as c_int;
    // SAFETY: the context is live; this fills the API function pointers, before any allocation.
    if unsafe {
        raw::Export_RedisModule_Init(
            ctx,
            c"bf".as_ptr(),
            MODULE_VERSION,
            raw::REDISMODULE_APIVER_1 as c_int,
        )
    } == ERR
    {
        return ERR;
    }
    let context = Context::new(ctx);
    // SAFETY: Redis passes `argc` valid strings, alive for the whole OnLoad call.
    let args = unsafe { ffi::Args::from_raw(argv, argc) };
    // Unlike a command's argv, the load arguments have no command name in front.
    if let Err(e) = config::apply_load_args(&args.to_vec()) {
        context.log_warning(&format!("rsbloom: {e}"));
        return ERR;
    }
    for data_type in [&BLOOM_TYPE, &CUCKOO_TYPE, &VALKEY_TYPE] {
        if let Err(e) = data_type.create_data_type(ctx) {
            context.log_warning(&format!("rsbloom: {e}"));
            return ERR;
        }
    }
    let caps = ffi::capabilities::detect(ctx);
    // SAFETY: live context; the options are the ones this server has (see Capabilities).
    unsafe { raw::RedisModule_SetModuleOptions.unwrap()(ctx, caps.module_options()) };
    if caps.bloom_category {
        for category in [c"bloom", c"cuckoo"] {
            // SAFETY: live context in OnLoad, where categories must be added; NUL-terminated.
            let status =
                unsafe { raw::RedisModule_AddACLCategory.unwrap()(ctx, category.as_ptr()) };
            if status != raw::Status::Ok as c_int {
                context.log_warning(&format!(
                    "rsbloom: could not add the ACL category {category:?}"
                ));
                return ERR;
            }
        }
    }
    if let Err(e) = commands::table::register(ctx, &caps) {
        context.log_warning(&format!("rsbloom: {e}"));
        return ERR;
    }
    if let Err(e) = stats::register(ctx) {
        context.log_warning(&format!("rsbloom: {e}"));
        return ERR;
    }
    // Last: registers the bf.* configs and loads their redis.conf values over the load args.
    if let Err(e) = config::register(ctx) {
        context.log_warning(&format!("rsbloom: {e}"));
        return ERR;
    }
    // The window design search's rate tables (10 ms, once): the first window created then
    // costs what every other does.
    rsbloom_core::window::rotating::design::prepare();
    ffi::alloc::probe_size_classes();
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    context.log_notice(&format!(
        "rsbloom {} loaded as module 'bf' {MODULE_VERSION} on {} {}: ACL categories {} (@bloom {}), atomic slot migration {}, unprefixed configs {}; bf.error-rate {} bf.initial-size {} bf.expansion {} bf.max-filter-bytes {} bf.cf-max-expansions {}",
        env!("CARGO_PKG_VERSION"),
        caps.server,
        caps.version,
        yes_no(caps.acl_categories),
        yes_no(caps.bloom_category),
        yes_no(caps.atomic_slot_migration),
        config::unprefixed_configs(),
        config::error_rate(),
        config::initial_size(),
        config::expansion(),
        config::max_filter_bytes(),
        config::cf_max_expansions()
    ));
    raw::Status::Ok as c_int
}
