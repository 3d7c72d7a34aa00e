//! The Redis side of the commands: argument access, key access, the one reply path, and the
//! command table. Each command family lives in its own file.

pub mod add;
pub mod create;
pub mod debug;
pub mod dump;
pub mod exists;
pub mod info;
pub mod reserve;

use std::ffi::{c_int, CStr, CString};

use redis_module::raw;

use crate::core::{Chain, ChainError, ChainParams};
use crate::datatype::BLOOM_TYPE;
use crate::{config, errors};

/// Hash seed of filters created before per-filter random seeds: one fixed value, so that a
/// replica or an AOF replay that re-runs the command builds identical bits.
pub const FIXED_SEED: u64 = 0x7273_626c_6f6f_6d31; // "rsbloom1"

/// The arguments of one command call.
pub struct Args<'a>(&'a [*mut raw::RedisModuleString]);

impl Args<'_> {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Argument `i` as bytes.
    pub fn get(&self, i: usize) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: argv entries are valid strings for the duration of the command call.
        let ptr = unsafe { raw::RedisModule_StringPtrLen.unwrap()(self.0[i], &mut len) };
        // SAFETY: Redis guarantees `ptr` points to `len` readable bytes.
        unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }
    }

    /// Argument `i`, or `None` past the end.
    pub fn get_checked(&self, i: usize) -> Option<&[u8]> {
        (i < self.len()).then(|| self.get(i))
    }

    fn raw(&self, i: usize) -> *mut raw::RedisModuleString {
        self.0[i]
    }
}

/// The calling context: replies, keys, replication and notifications.
pub struct Ctx(*mut raw::RedisModuleCtx);

impl Ctx {
    pub fn reply_ok(&self) {
        // SAFETY (all reply calls): `self.0` is the live context of the running command.
        unsafe { raw::RedisModule_ReplyWithSimpleString.unwrap()(self.0, c"OK".as_ptr()) };
    }

    pub fn reply_error(&self, text: &str) {
        let text = CString::new(text).unwrap_or_else(|_| c"ERR invalid error text".to_owned());
        // SAFETY: see `reply_ok`; `text` is NUL-terminated.
        unsafe { raw::RedisModule_ReplyWithError.unwrap()(self.0, text.as_ptr()) };
    }

    /// A boolean: RESP3 `#t`/`#f`, RESP2 `:1`/`:0`.
    pub fn reply_bool(&self, b: bool) {
        // SAFETY: see `reply_ok`.
        unsafe { raw::RedisModule_ReplyWithBool.unwrap()(self.0, c_int::from(b)) };
    }

    pub fn reply_integer(&self, n: i64) {
        // SAFETY: see `reply_ok`.
        unsafe { raw::RedisModule_ReplyWithLongLong.unwrap()(self.0, n) };
    }

    /// A null: RESP2 `$-1`, RESP3 `_`.
    pub fn reply_null(&self) {
        // SAFETY: see `reply_ok`.
        unsafe { raw::RedisModule_ReplyWithNull.unwrap()(self.0) };
    }

    /// A simple (status) string, `+text`.
    pub fn reply_simple_string(&self, text: &std::ffi::CStr) {
        // SAFETY: see `reply_ok`; `text` is NUL-terminated.
        unsafe { raw::RedisModule_ReplyWithSimpleString.unwrap()(self.0, text.as_ptr()) };
    }

    /// A bulk string, binary-safe.
    pub fn reply_bulk(&self, bytes: &[u8]) {
        // SAFETY: see `reply_ok`; Redis copies `bytes.len()` bytes from a valid slice.
        unsafe {
            raw::RedisModule_ReplyWithStringBuffer.unwrap()(
                self.0,
                bytes.as_ptr().cast(),
                bytes.len(),
            )
        };
    }

    /// Starts a map of `pairs` key/value pairs (RESP3 `%`); in RESP2 Redis sends a flat
    /// array of `2 * pairs` elements instead.
    pub fn reply_map(&self, pairs: usize) {
        // SAFETY: see `reply_ok`.
        unsafe { raw::RedisModule_ReplyWithMap.unwrap()(self.0, pairs as _) };
    }

    /// Whether the client speaks RESP3.
    pub fn is_resp3(&self) -> bool {
        // SAFETY: see `reply_ok`.
        let flags = unsafe { raw::RedisModule_GetContextFlags.unwrap()(self.0) };
        flags & raw::REDISMODULE_CTX_FLAGS_RESP3 as c_int != 0
    }

    pub fn reply_array(&self, len: usize) {
        // SAFETY: see `reply_ok`.
        unsafe { raw::RedisModule_ReplyWithArray.unwrap()(self.0, len as _) };
    }

    /// Starts an array whose length is set later with [`Ctx::set_array_len`].
    pub fn reply_postponed_array(&self) {
        // SAFETY: see `reply_ok`.
        unsafe {
            raw::RedisModule_ReplyWithArray.unwrap()(self.0, raw::REDISMODULE_POSTPONED_LEN as _)
        };
    }

    pub fn set_array_len(&self, len: usize) {
        // SAFETY: see `reply_ok`; follows a postponed array.
        unsafe { raw::RedisModule_ReplySetArrayLength.unwrap()(self.0, len as _) };
    }

    pub fn reply_wrong_arity(&self) {
        // SAFETY: see `reply_ok`.
        unsafe { raw::RedisModule_WrongArity.unwrap()(self.0) };
    }

    /// Replicates the command as it was received.
    pub fn replicate_verbatim(&self) {
        // SAFETY: see `reply_ok`.
        unsafe { raw::RedisModule_ReplicateVerbatim.unwrap()(self.0) };
    }

    /// Emits a keyspace event of class `d` (module) named `event` for `key`.
    pub fn notify(&self, event: &std::ffi::CStr, args: &Args, key: usize) {
        // SAFETY: see `reply_ok`; the key string lives for the whole call.
        unsafe {
            raw::RedisModule_NotifyKeyspaceEvent.unwrap()(
                self.0,
                raw::REDISMODULE_NOTIFY_MODULE as c_int,
                event.as_ptr(),
                args.raw(key),
            )
        };
    }

    /// Opens key `args[i]` for reading or writing.
    pub fn open_key(&self, args: &Args, i: usize, write: bool) -> Key {
        let mode = if write {
            raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
        } else {
            raw::REDISMODULE_READ
        };
        // SAFETY: live context and key name; the handle is closed in Key's Drop.
        let ptr = unsafe { raw::RedisModule_OpenKey.unwrap()(self.0, args.raw(i), mode as c_int) };
        Key(ptr.cast())
    }
}

/// What a key holds.
pub enum Slot<'a> {
    Empty,
    Bloom(&'a mut Chain),
    Other,
}

/// An open key, closed on drop.
pub struct Key(*mut raw::RedisModuleKey);

impl Key {
    pub fn slot(&self) -> Slot<'_> {
        // SAFETY: KeyType and ModuleTypeGetType accept the (possibly NULL) handle OpenKey gave.
        let kind = unsafe { raw::RedisModule_KeyType.unwrap()(self.0) };
        if kind as isize == raw::REDISMODULE_KEYTYPE_EMPTY {
            return Slot::Empty;
        }
        if kind as isize != raw::REDISMODULE_KEYTYPE_MODULE
            // SAFETY: as above.
            || unsafe { raw::RedisModule_ModuleTypeGetType.unwrap()(self.0) } != *BLOOM_TYPE.raw_type.borrow()
        {
            return Slot::Other;
        }
        // SAFETY: the key holds our type, whose value is a `Box<Chain>` we created; the key
        // stays open (and the value alive) for as long as the borrow of `self`.
        Slot::Bloom(unsafe {
            &mut *raw::RedisModule_ModuleTypeGetValue.unwrap()(self.0).cast::<Chain>()
        })
    }

    /// The filter in this key, or the error to reply when it is missing (`ERR not found`) or
    /// of another type, for the commands that need an existing filter.
    pub fn filter(&self) -> Result<&mut Chain, &'static str> {
        match self.slot() {
            Slot::Bloom(chain) => Ok(chain),
            Slot::Empty => Err(errors::NOT_FOUND),
            Slot::Other => Err(errors::WRONG_TYPE),
        }
    }

    /// Stores a new chain in an empty key opened for writing and returns it.
    // The handle is the only access to the value while the key is open, so handing out one
    // mutable borrow tied to it is sound although `self` is shared.
    #[allow(clippy::mut_from_ref)]
    pub fn create(&self, chain: Chain) -> &mut Chain {
        let value = Box::into_raw(Box::new(chain));
        // SAFETY: the key is open for writing and empty; ownership of `value` passes to Redis,
        // which frees it through the type's free callback.
        unsafe {
            raw::RedisModule_ModuleTypeSetValue.unwrap()(
                self.0,
                *BLOOM_TYPE.raw_type.borrow(),
                value.cast(),
            )
        };
        // SAFETY: `value` is alive while the key is: Redis owns it now.
        let chain = unsafe { &mut *value };
        crate::stats::filter_created(chain);
        chain
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: the handle came from OpenKey (NULL is accepted) and is closed once.
        unsafe { raw::RedisModule_CloseKey.unwrap()(self.0) };
    }
}

/// Creates a chain with the module's limit, or the error text to reply.
pub fn new_chain(
    error: f64,
    capacity: u64,
    expansion: u32,
    nonscaling: bool,
) -> Result<Chain, String> {
    let params = ChainParams {
        error,
        capacity,
        expansion,
        nonscaling,
        seed: FIXED_SEED,
        max_bytes: config::max_filter_bytes(),
    };
    Chain::new(&params).map_err(|e| chain_error_text(&e))
}

/// The reply text of a chain error.
pub fn chain_error_text(e: &ChainError) -> String {
    match e {
        ChainError::Full => errors::FULL.to_string(),
        ChainError::TooLarge { needed, limit } => errors::too_large(*needed, *limit),
        ChainError::CannotGrow => errors::CANNOT_GROW.to_string(),
    }
}

type Handler = fn(&Ctx, &Args);

/// Runs a handler, turning a panic into an error reply instead of a crashed server.
fn dispatch(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    f: Handler,
) -> c_int {
    // SAFETY: Redis passes `argc` valid argument pointers.
    let argv = unsafe { std::slice::from_raw_parts(argv, argc as usize) };
    let ctx = Ctx(ctx);
    let args = Args(argv);
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&ctx, &args))).is_err() {
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

/// What COMMAND INFO / COMMAND DOCS show for a command beyond its flags.
struct Info {
    arity: c_int,
    /// Flags of the one key spec: the key at position 1.
    key_flags: u32,
    since: &'static CStr,
    summary: &'static CStr,
    complexity: &'static CStr,
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
        tips: std::ptr::null(),
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
        $name:literal => $handler:path, $flags:literal, $arity:literal, $key:ident,
            $since:literal, $summary:literal, $complexity:literal;
    )*) => {
        /// Registers every command: key at position 1 (first 1, last 1, step 1), with its key
        /// spec, arity and docs.
        // `ctx` is only passed on to Redis, which requires OnLoad's live context.
        #[allow(clippy::not_unsafe_ptr_arg_deref)]
        pub fn register(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
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
                }
            )*
            Ok(())
        }
    };
}

// name => handler, flags, arity, key spec, since (RedisBloom's version), summary, complexity
// (k: hash functions per link, n: items given, l: links in the filter)
command_table! {
    "bf.reserve" => reserve::reserve, "write deny-oom", -4, INSERT, c"1.0.0",
        c"Creates an empty Bloom filter", c"O(1)";
    "bf.add" => add::add, "write deny-oom", 3, INSERT, c"1.0.0",
        c"Adds an item, creating the filter if the key is missing", c"O(k l)";
    "bf.madd" => add::madd, "write deny-oom", -3, INSERT, c"1.0.0",
        c"Adds items, creating the filter if the key is missing", c"O(k l n)";
    "bf.exists" => exists::exists, "readonly fast", 3, READ, c"1.0.0",
        c"Whether an item may have been added", c"O(k l)";
    "bf.scandump" => dump::scandump, "readonly fast", 3, READ, c"1.0.0",
        c"Returns the next chunk of an incremental dump of a filter",
        c"O(n), n the bytes of the chunk (at most 16 MiB)";
    "bf.loadchunk" => dump::loadchunk, "write deny-oom", 4, UPDATE, c"1.0.0",
        c"Restores a filter from a chunk of BF.SCANDUMP", c"O(n), n the bytes of the chunk";
    "bf.mexists" => exists::mexists, "readonly fast", -3, READ, c"1.0.0",
        c"Whether each item may have been added", c"O(k l n)";
    "bf.insert" => add::insert_command, "write deny-oom", -4, INSERT, c"1.0.0",
        c"Adds items, creating the filter with the given options if the key is missing",
        c"O(k l n)";
    "bf.info" => info::info, "readonly fast", -2, METADATA, c"1.0.0",
        c"Returns a filter's capacity, size, links, items and expansion", c"O(l)";
    "bf.card" => info::card, "readonly fast", 2, METADATA, c"2.4.4",
        c"Returns the number of items added to a filter", c"O(1)";
    "bf.debug" => debug::debug, "readonly fast", 2, METADATA, c"1.0.0",
        c"Returns the item count and each link's geometry", c"O(l)";
}
