//! Commands through the server's C API: [`command_table!`] turns the table in
//! `src/commands/table.rs` into the commands' registration (each command's callback, its
//! arity, key spec, docs, tips and ACL categories), and every callback runs its handler through
//! [`dispatch`], which turns a panic into an error reply.

use std::ffi::{c_int, CStr, CString};

use redis_module::raw;

use crate::ffi::unwind::no_unwind;
use crate::ffi::{Args, Ctx};

/// A command's handler.
pub type Handler = fn(&Ctx, &Args);

/// Runs a handler, turning a panic into an error reply instead of a crashed server.
pub fn dispatch(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    f: Handler,
) -> c_int {
    // SAFETY: Redis passes the live context and `argc` valid arguments, which outlive the call.
    let (ctx, args) = unsafe { (Ctx::from_raw(ctx), Args::from_raw(argv, argc)) };
    if !no_unwind(false, || {
        f(&ctx, &args);
        true
    }) {
        ctx.reply_error("ERR internal error in rsbloom (the command was not applied)");
    }
    raw::Status::Ok as c_int
}

/// Key-spec flags, chosen as Redis's own analogous commands declare theirs (COMMAND INFO):
/// ACL read-key permission (`%R~`) is needed for ACCESS, write permission (`%W~`) for INSERT
/// and UPDATE.
pub mod key_spec {
    use redis_module::raw;

    /// Reads items' bits (like GETBIT, DUMP).
    pub const READ: u32 = raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS;
    /// Reads counts and sizes only (like SCARD, STRLEN).
    pub const METADATA: u32 = raw::REDISMODULE_CMD_KEY_RO;
    /// Adds items, creating the key if it is missing (like SADD, PFADD).
    pub const INSERT: u32 = raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_INSERT;
    /// Overwrites bits in place (like SETRANGE).
    pub const UPDATE: u32 = raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE;
}

/// `REDISMODULE_COMMAND_INFO_VERSION`: a static of redismodule.h, so not in the bindings.
static COMMAND_INFO_VERSION: raw::RedisModuleCommandInfoVersion =
    raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
    };

/// What COMMAND INFO / COMMAND DOCS show for a command beyond its flags.
pub struct Info {
    /// Redis's arity: the argument count, or at least its negation.
    pub arity: c_int,
    /// Flags of the one key spec: the key at position 1.
    pub key_flags: u32,
    /// The RedisBloom version that added it.
    pub since: &'static CStr,
    /// COMMAND DOCS' summary.
    pub summary: &'static CStr,
    /// COMMAND DOCS' complexity.
    pub complexity: &'static CStr,
    /// Whether a client-side cache must not keep its replies (the `dont_cache` tip).
    pub dont_cache: bool,
}

/// Gives a created command its ACL categories, where the server has the API.
pub fn set_acl_categories(
    ctx: *mut raw::RedisModuleCtx,
    name: &CStr,
    categories: &str,
) -> Result<(), String> {
    // SAFETY: OnLoad's live context, and the name of a command this module just created.
    let command = unsafe { raw::RedisModule_GetCommand.unwrap()(ctx, name.as_ptr()) };
    let categories_c = CString::new(categories).map_err(|e| e.to_string())?;
    // SAFETY: the API table, filled by RedisModule_Init before OnLoad went on.
    let set = unsafe { raw::RedisModule_SetCommandACLCategories }
        .ok_or("no RedisModule_SetCommandACLCategories")?;
    let status = if command.is_null() {
        raw::Status::Err as c_int
    } else {
        // SAFETY: `command` is this module's, in OnLoad; the string is NUL-terminated and
        // copied.
        unsafe { set(command, categories_c.as_ptr()) }
    };
    if status != raw::Status::Ok as c_int {
        return Err(format!(
            "could not set the ACL categories {categories:?} of {name:?}"
        ));
    }
    Ok(())
}

/// Declares a created command's arity, key spec and docs. Without this, Redis 7.0 derives a
/// `RW ACCESS UPDATE` key spec for every module command, so `%R~` users could run no reader.
pub fn set_info(ctx: *mut raw::RedisModuleCtx, name: &CStr, info: &Info) -> Result<(), String> {
    // SAFETY: OnLoad's live context, and the name of a command this module just created.
    let command = unsafe { raw::RedisModule_GetCommand.unwrap()(ctx, name.as_ptr()) };
    if command.is_null() {
        return Err(format!("no command {name:?} to describe"));
    }
    let key_at_1 = raw::RedisModuleCommandKeySpec {
        notes: std::ptr::null(),
        flags: u64::from(info.key_flags),
        begin_search_type: raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX,
        bs: raw::RedisModuleCommandKeySpec__bindgen_ty_1 {
            index: raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: 1 },
        },
        find_keys_type: raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE,
        fk: raw::RedisModuleCommandKeySpec__bindgen_ty_2 {
            range: raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 {
                lastkey: 0,
                keystep: 1,
                limit: 0,
            },
        },
    };
    // SAFETY: all zeros (begin_search_type INVALID) is the terminator Redis looks for; every
    // field is an integer or a pointer, for which zero is valid.
    let end: raw::RedisModuleCommandKeySpec = unsafe { std::mem::zeroed() };
    let mut key_specs = [key_at_1, end];
    let command_info = raw::RedisModuleCommandInfo {
        version: &COMMAND_INFO_VERSION,
        summary: info.summary.as_ptr(),
        complexity: info.complexity.as_ptr(),
        since: info.since.as_ptr(),
        history: std::ptr::null_mut(),
        tips: if info.dont_cache {
            c"dont_cache".as_ptr()
        } else {
            std::ptr::null()
        },
        arity: info.arity,
        key_specs: key_specs.as_mut_ptr(),
        args: std::ptr::null_mut(),
    };
    // SAFETY: `command` is this module's and has no info yet; the struct and the arrays and
    // strings it points to are valid for the call, and Redis copies all of them.
    let status = unsafe { raw::RedisModule_SetCommandInfo.unwrap()(command, &command_info) };
    if status != raw::Status::Ok as c_int {
        return Err(format!("could not set the command info of {name:?}"));
    }
    Ok(())
}

/// Defines `register`, which creates every command of the table it is given: key at position
/// 1 (first 1, last 1, step 1), with its key spec, arity and docs, and its ACL categories
/// where the server takes them. Each command gets a callback of its own, which runs its
/// handler through [`dispatch`].
macro_rules! command_table {
    (dont_cache: [$($uncached:literal),* $(,)?];
    $(
        $name:literal => $handler:path, $flags:literal, $acl:literal, $arity:literal, $key:ident,
            $since:literal, $summary:literal, $complexity:literal;
    )*) => {
        /// Registers every command: key at position 1 (first 1, last 1, step 1), with its key
        /// spec, arity and docs, and its ACL categories where the server takes them.
        // `ctx` is only passed on to Redis, which requires OnLoad's live context.
        #[allow(clippy::not_unsafe_ptr_arg_deref)]
        pub fn register(
            ctx: *mut ::redis_module::raw::RedisModuleCtx,
            caps: &$crate::ffi::capabilities::Capabilities,
        ) -> Result<(), String> {
            use ::redis_module::raw;
            use ::std::ffi::{c_int, CString};
            use $crate::ffi::commands::{dispatch, key_spec, set_acl_categories, set_info, Info};
            const UNCACHED: &[&str] = &[$($uncached),*];
            $(
                {
                    extern "C" fn entry(
                        ctx: *mut raw::RedisModuleCtx,
                        argv: *mut *mut raw::RedisModuleString,
                        argc: c_int,
                    ) -> c_int {
                        dispatch(ctx, argv, argc, $handler)
                    }
                    let name = CString::new($name).expect("static name");
                    let flags = CString::new($flags).expect("static flags");
                    // SAFETY: called from OnLoad with its live context.
                    let status = unsafe {
                        raw::RedisModule_CreateCommand.unwrap()(
                            ctx, name.as_ptr(), Some(entry), flags.as_ptr(), 1, 1, 1,
                        )
                    };
                    if status != raw::Status::Ok as c_int {
                        return Err(format!("could not register {}", $name));
                    }
                    let info = Info {
                        arity: $arity,
                        key_flags: key_spec::$key,
                        since: $since,
                        summary: $summary,
                        complexity: $complexity,
                        dont_cache: UNCACHED.contains(&$name),
                    };
                    set_info(ctx, &name, &info)?;
                    if let Some(categories) = caps.command_categories($name, $acl) {
                        set_acl_categories(ctx, &name, &categories)?;
                    }
                }
            )*
            Ok(())
        }
    };
}

pub(crate) use command_table;
