//! The module's entry point (`RedisModule_OnLoad`), written by hand rather than with
//! `redis_module!`, whose setup needs Redis 7.2 APIs (rsbloom's floor is Redis 7.0): the API
//! table, the load arguments, the data types, the module options and ACL categories the server
//! has, the commands, the INFO section and the configs, in that order.

use std::ffi::c_int;

use redis_module::{raw, Context};

use crate::ffi::capabilities::{self, Capabilities};
use crate::ffi::config::Registrar;
use crate::ffi::{alloc, info, types, unwind, Args};
use crate::{commands, config, MODULE_VERSION};

/// The module's entry point.
///
/// # Safety
/// Called by Redis once, with a valid context and `argc` module arguments.
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
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
    // A panic while loading fails the load instead of unwinding into Redis.
    let loaded = unwind::no_unwind(Err("internal error while loading".to_string()), || {
        // SAFETY: OnLoad's contract, passed on unchanged.
        unsafe { load(ctx, argv, argc) }
    });
    let context = Context::new(ctx);
    match loaded {
        Ok(caps) => {
            context.log_notice(&loaded_line(&caps));
            raw::Status::Ok as c_int
        }
        Err(e) => {
            context.log_warning(&format!("rsbloom: {e}"));
            ERR
        }
    }
}

/// The body of [`RedisModule_OnLoad`] after the API table: what the server offers, or why the
/// load fails.
///
/// # Safety
/// As for [`RedisModule_OnLoad`].
unsafe fn load(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> Result<Capabilities, String> {
    // First: how blocks aligned past 16 bytes are made depends on the allocator it finds.
    alloc::probe_allocator();
    unwind::log_refused_copies();
    // SAFETY: Redis passes `argc` valid strings, alive for the whole OnLoad call.
    let args = unsafe { Args::from_raw(argv, argc) };
    // Unlike a command's argv, the load arguments have no command name in front.
    config::apply_load_args(&args.to_vec())?;
    // SAFETY: OnLoad's live context, for every registration below.
    unsafe { types::register(ctx)? };
    let caps = capabilities::detect(ctx);
    // SAFETY: as above; the options are the ones this server has (see Capabilities).
    unsafe { raw::RedisModule_SetModuleOptions.unwrap()(ctx, caps.module_options()) };
    if caps.bloom_category {
        // SAFETY: as above.
        unsafe { add_acl_categories(ctx)? };
    }
    commands::table::register(ctx, &caps)?;
    // SAFETY: as above.
    unsafe { info::register(ctx)? };
    // Last: registers the bf.* configs and loads their redis.conf values over the load args.
    // SAFETY: as above; the registrar is used during OnLoad only.
    config::register(&unsafe { Registrar::new(ctx) })?;
    // The window design search's rate tables (10 ms, once): the first window created then
    // costs what every other does.
    rsbloom_core::window::rotating::design::prepare();
    Ok(caps)
}

/// Adds the `bloom` and `cuckoo` ACL categories.
///
/// # Safety
/// `ctx` must be OnLoad's live context, where categories must be added.
unsafe fn add_acl_categories(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    for category in [c"bloom", c"cuckoo"] {
        // SAFETY: the caller's contract; NUL-terminated names.
        let status = unsafe { raw::RedisModule_AddACLCategory.unwrap()(ctx, category.as_ptr()) };
        if status != raw::Status::Ok as c_int {
            return Err(format!("could not add the ACL category {category:?}"));
        }
    }
    Ok(())
}

/// The log line of a successful load: the version, the server and what it offers, and the
/// settings in force.
fn loaded_line(caps: &Capabilities) -> String {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    format!(
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
    )
}
