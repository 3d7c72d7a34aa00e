//! The command table: every command's name, handler, flags, arity, key spec and docs, and their
//! registration. A new command is one line in `command_table!`'s invocation below plus its
//! handler in the file of its family.

use std::ffi::{c_int, CStr, CString};

use redis_module::raw;

use super::bloom::{add, debug, exists, info, reserve, scandump};
use super::cuckoo;
use crate::ffi::capabilities::Capabilities;
use crate::ffi::unwind::no_unwind;
use crate::ffi::{Args, Ctx};

type Handler = fn(&Ctx, &Args);

/// Runs a handler, turning a panic into an error reply instead of a crashed server.
fn dispatch(
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
mod key_spec {
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

/// The commands whose replies a client-side cache must not keep: the introspection ones
/// (RedisBloom 8 gives its `*.INFO`, `*.DEBUG` and `*.SCANDUMP` the same tip). Every server
/// since Redis 7.0 takes command tips; clients read them from COMMAND INFO / COMMAND DOCS.
const DONT_CACHE: [&str; 6] = [
    "bf.info",
    "bf.debug",
    "bf.scandump",
    "cf.info",
    "cf.debug",
    "cf.scandump",
];

/// What COMMAND INFO / COMMAND DOCS show for a command beyond its flags.
struct Info {
    arity: c_int,
    /// Flags of the one key spec: the key at position 1.
    key_flags: u32,
    since: &'static CStr,
    summary: &'static CStr,
    complexity: &'static CStr,
}

/// Gives a created command its ACL categories, where the server has the API.
fn set_acl_categories(
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
fn set_info(ctx: *mut raw::RedisModuleCtx, name: &CStr, info: &Info) -> Result<(), String> {
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
        tips: if DONT_CACHE.iter().any(|c| name.to_bytes() == c.as_bytes()) {
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

macro_rules! command_table {
    ($(
        $name:literal => $handler:path, $flags:literal, $acl:literal, $arity:literal, $key:ident,
            $since:literal, $summary:literal, $complexity:literal;
    )*) => {
        /// Registers every command: key at position 1 (first 1, last 1, step 1), with its key
        /// spec, arity and docs, and its ACL categories where the server takes them.
        // `ctx` is only passed on to Redis, which requires OnLoad's live context.
        #[allow(clippy::not_unsafe_ptr_arg_deref)]
        pub fn register(ctx: *mut raw::RedisModuleCtx, caps: &Capabilities) -> Result<(), String> {
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

// name => handler, flags, ACL categories (plus `bloom` where the server allows it; `fast`
// for the commands whose cost does not grow with their arguments), arity, key spec, since
// (RedisBloom's version), summary, complexity (k: hash functions per link, n: items given,
// l: links in the filter)
command_table! {
    "bf.reserve" => reserve::reserve, "write deny-oom", "write fast", -4, INSERT, c"1.0.0",
        c"Creates an empty Bloom filter", c"O(1)";
    "bf.add" => add::add, "write deny-oom", "write fast", 3, INSERT, c"1.0.0",
        c"Adds an item, creating the filter if the key is missing", c"O(k l)";
    "bf.madd" => add::madd, "write deny-oom", "write", -3, INSERT, c"1.0.0",
        c"Adds items, creating the filter if the key is missing", c"O(k l n)";
    "bf.exists" => exists::exists, "readonly fast", "read fast", 3, READ, c"1.0.0",
        c"Whether an item may have been added", c"O(k l)";
    "bf.scandump" => scandump::scandump, "readonly fast", "read", 3, READ, c"1.0.0",
        c"Returns the next chunk of an incremental dump of a filter",
        c"O(n), n the bytes of the chunk (at most 16 MiB)";
    "bf.loadchunk" => scandump::loadchunk, "write deny-oom", "write", 4, UPDATE, c"1.0.0",
        c"Restores a filter from a chunk of BF.SCANDUMP", c"O(n), n the bytes of the chunk";
    "bf.load" => scandump::load, "write deny-oom", "write", 3, INSERT, c"1.0.0",
        c"Creates a valkey-bloom filter from valkey-bloom's BF.LOAD blob (its AOF form)",
        c"O(n), n the bytes of the blob";
    "bf.mexists" => exists::mexists, "readonly fast", "read", -3, READ, c"1.0.0",
        c"Whether each item may have been added", c"O(k l n)";
    "bf.insert" => add::insert, "write deny-oom", "write", -4, INSERT, c"1.0.0",
        c"Adds items, creating the filter with the given options if the key is missing",
        c"O(k l n)";
    "bf.info" => info::info, "readonly fast", "read fast", -2, METADATA, c"1.0.0",
        c"Returns a filter's capacity, size, links, items and expansion", c"O(l)";
    "bf.card" => info::card, "readonly fast", "read fast", 2, METADATA, c"2.4.4",
        c"Returns the number of items added to a filter", c"O(1)";
    "bf.debug" => debug::debug, "readonly fast", "read", 2, METADATA, c"1.0.0",
        c"Returns the item count and each link's geometry", c"O(l)";
    // Cuckoo filters (k: sub-filters, b: bucket size, n: items given, m: max iterations).
    "cf.reserve" => cuckoo::reserve::reserve, "write deny-oom", "write fast", -3, INSERT, c"1.0.0",
        c"Creates an empty cuckoo filter", c"O(1)";
    "cf.add" => cuckoo::add::add, "write deny-oom", "write fast", 3, INSERT, c"1.0.0",
        c"Adds an item (duplicates too), creating the filter if the key is missing",
        c"O(k b + m)";
    "cf.addnx" => cuckoo::add::addnx, "write deny-oom", "write fast", 3, INSERT, c"1.0.0",
        c"Adds an item unless it may be present, creating the filter if the key is missing",
        c"O(k b + m)";
    "cf.insert" => cuckoo::add::insert, "write deny-oom", "write", -4, INSERT, c"1.0.0",
        c"Adds items, creating the filter with the given capacity if the key is missing",
        c"O(n (k b + m))";
    "cf.insertnx" => cuckoo::add::insertnx, "write deny-oom", "write", -4, INSERT, c"1.0.0",
        c"Adds each item unless it may be present, creating the filter if the key is missing",
        c"O(n (k b + m))";
    "cf.exists" => cuckoo::exists::exists, "readonly fast", "read fast", 3, READ, c"1.0.0",
        c"Whether an item may be in the filter", c"O(k b)";
    "cf.mexists" => cuckoo::exists::mexists, "readonly fast", "read", -3, READ, c"1.0.0",
        c"Whether each item may be in the filter", c"O(n k b)";
    "cf.count" => cuckoo::exists::count, "readonly fast", "read fast", 3, READ, c"1.0.0",
        c"Counts the copies of an item's fingerprint (may over-count)", c"O(k b)";
    "cf.del" => cuckoo::delete::del, "write fast", "write fast", 3, UPDATE, c"1.0.0",
        c"Deletes one copy of an item", c"O(k b), compaction O(size) when it runs";
    "cf.compact" => cuckoo::delete::compact, "write fast", "write", 2, UPDATE, c"1.0.0",
        c"Moves fingerprints into older sub-filters and drops an emptied newest one",
        c"O(size of the filter)";
    "cf.info" => cuckoo::info::info, "readonly fast", "read fast", 2, METADATA, c"1.0.0",
        c"Returns a cuckoo filter's size, buckets, sub-filters, items, deletes and parameters",
        c"O(1)";
    "cf.debug" => cuckoo::debug::debug, "readonly fast", "read", 2, METADATA, c"1.0.0",
        c"Returns a cuckoo filter's parameters and counts in one line", c"O(1)";
    "cf.scandump" => cuckoo::scandump::scandump, "readonly fast", "read", 3, READ, c"1.0.0",
        c"Returns the next chunk of an incremental dump of a cuckoo filter",
        c"O(n), n the bytes of the chunk (at most 16 MiB)";
    "cf.loadchunk" => cuckoo::scandump::loadchunk, "write deny-oom", "write", 4, UPDATE, c"1.0.0",
        c"Restores a cuckoo filter from a chunk of CF.SCANDUMP", c"O(n), n the bytes of the chunk";
}
