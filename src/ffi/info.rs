//! The `bf_stats` INFO section through the server's C API: one callback that writes the
//! fields [`crate::stats::fields`] reads.

use std::ffi::c_int;

use redis_module::raw;

use crate::stats;

/// The INFO callback: section `stats`, which Redis names `bf_stats` (fields `bf_<name>`).
extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    // Only atomic loads and calls into Redis: nothing here can panic.
    // SAFETY: the live INFO context Redis passed; NUL-terminated static names.
    unsafe {
        if let Some(add_section) = raw::RedisModule_InfoAddSection {
            add_section(ctx, c"stats".as_ptr());
        }
        if let Some(add_field) = raw::RedisModule_InfoAddFieldULongLong {
            for (name, value) in stats::fields() {
                add_field(ctx, name.as_ptr(), value);
            }
        }
    }
}

/// Registers the INFO callback.
///
/// # Safety
/// `ctx` must be OnLoad's live context.
pub unsafe fn register(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    // SAFETY: OnLoad's live context (the caller's contract) and a callback with the signature
    // Redis expects.
    let status = unsafe { raw::RedisModule_RegisterInfoFunc.unwrap()(ctx, Some(info)) };
    if status != raw::Status::Ok as c_int {
        return Err("could not register the INFO callback".into());
    }
    Ok(())
}
