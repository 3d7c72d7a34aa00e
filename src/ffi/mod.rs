//! The thin wrapper over Redis's module API that every command uses: a call's arguments
//! ([`Args`]), its context ([`Ctx`]: replies, replication, keyspace events, keys), an open key
//! ([`Key`]) and what it holds ([`KeyContent`]).
//!
//! Why not the `redis-module` crate's `Context` API (`redis_command!`, `Context::reply`,
//! `RedisKeyWritable`): it costs work on every call that rsbloom's hot paths do not pay.
//! - `redis_command!` turns argv into a `Vec<RedisString>` (`decode_args`): a heap allocation,
//!   and a `RedisModule_RetainString` plus a `RedisModule_FreeString` per argument, so a
//!   BF.MADD of 100 items costs 200 API calls before any filter work. [`Args`] borrows argv.
//! - `Context::reply` takes a `RedisValue` tree: an array of 100 booleans is a `Vec` built
//!   before the first byte is written, and every static simple string becomes a `CString`.
//!   [`Ctx`] writes each element as it is computed.
//! - `RedisKeyWritable::get_value` hands out `&mut T` from `&self`, so two live mutable
//!   references to one value are possible in safe code; [`Key`] takes `&mut self`.
//! - `redis_module!`'s initialisation calls Redis 7.2 APIs; rsbloom's floor is Redis 7.0 (see
//!   `RedisModule_OnLoad` in lib.rs).
//!
//! The crate still provides the raw bindings (`raw`) and the data-type registration.

pub mod alloc;
pub mod capabilities;
pub mod commands;
pub mod config;
pub mod info;
pub mod onload;
pub mod types;
pub mod unwind;

use std::ffi::{c_int, c_void, CStr, CString};

use redis_module::raw;

use crate::datatype::Stored;
use rsbloom_core::errors;

/// The bytes of a Redis string.
///
/// # Safety
/// `s` must be a valid string that outlives `'a`.
pub unsafe fn string_bytes<'a>(s: *const raw::RedisModuleString) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: `s` is valid (the caller's contract); StringPtrLen only reads it.
    let ptr = unsafe { raw::RedisModule_StringPtrLen.unwrap()(s, &mut len) };
    // SAFETY: Redis guarantees `len` readable bytes at `ptr`, alive as long as the string.
    unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }
}

/// Whether a key of the data type `t` holds a value of `T`'s kind.
fn holds<T: Stored>(t: *mut raw::RedisModuleType) -> bool {
    T::VALUE_TYPES.iter().any(|&v| types::raw_type(v) == t)
}

/// A module timer started by [`Ctx::start_timer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timer(raw::RedisModuleTimerID);

/// Every module timer's callback: runs the function [`Ctx::start_timer`] was given.
extern "C" fn timer_fired(ctx: *mut raw::RedisModuleCtx, data: *mut c_void) {
    // SAFETY: `data` is the `fn(&Ctx)` start_timer passed as the timer's data, cast back to
    // the same type.
    let fire = unsafe { std::mem::transmute::<*mut c_void, fn(&Ctx)>(data) };
    unwind::no_unwind((), || {
        // SAFETY: Redis passes the timer's live context for the length of the callback.
        let ctx = unsafe { Ctx::from_raw(ctx) };
        fire(&ctx);
    });
}

/// The arguments of one command call (`argv[0]` is the command name).
pub struct Args<'a>(&'a [*mut raw::RedisModuleString]);

impl<'a> Args<'a> {
    /// Wraps the argv Redis passed to a command.
    ///
    /// # Safety
    /// `argv` must hold `argc` valid strings that live for `'a` (the command call).
    pub unsafe fn from_raw(argv: *mut *mut raw::RedisModuleString, argc: c_int) -> Self {
        // A module loaded without arguments may get a NULL argv, which no slice may have.
        if argc <= 0 || argv.is_null() {
            return Args(&[]);
        }
        // SAFETY: the caller's contract; argv is non-NULL.
        Args(unsafe { std::slice::from_raw_parts(argv, argc as usize) })
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Argument `i` as bytes.
    pub fn get(&self, i: usize) -> &'a [u8] {
        // SAFETY: argv entries are valid strings for the duration of the command call.
        unsafe { string_bytes(self.0[i]) }
    }

    /// Every argument as bytes, for the pure parsers.
    pub fn to_vec(&self) -> Vec<&'a [u8]> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }

    fn raw(&self, i: usize) -> *mut raw::RedisModuleString {
        self.0[i]
    }
}

/// One word of a command to replicate.
pub enum Word<'a> {
    /// Argument `i` of the running call, passed on without a copy.
    Arg(usize),
    /// Text made by the module.
    Text(&'a str),
    /// Bytes made by the module (a valkey-bloom `BF.LOAD` blob).
    Bytes(&'a [u8]),
}

/// The calling context: replies, keys, replication and notifications.
pub struct Ctx(*mut raw::RedisModuleCtx);

impl Ctx {
    /// Wraps the context Redis passed to a command.
    ///
    /// # Safety
    /// `ctx` must be the live context of the running command, and the `Ctx` must not outlive
    /// the call.
    pub unsafe fn from_raw(ctx: *mut raw::RedisModuleCtx) -> Self {
        Ctx(ctx)
    }

    pub fn reply_ok(&self) {
        self.reply_simple_string(c"OK");
    }

    pub fn reply_error(&self, text: &str) {
        let text = CString::new(text).unwrap_or_else(|_| c"ERR invalid error text".to_owned());
        // SAFETY: `self.0` is the live context of the running command (so for every reply).
        unsafe { raw::RedisModule_ReplyWithError.unwrap()(self.0, text.as_ptr()) };
    }

    /// A boolean: RESP3 `#t`/`#f`, RESP2 `:1`/`:0`.
    pub fn reply_bool(&self, b: bool) {
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_ReplyWithBool.unwrap()(self.0, c_int::from(b)) };
    }

    pub fn reply_integer(&self, n: i64) {
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_ReplyWithLongLong.unwrap()(self.0, n) };
    }

    /// A null: RESP2 `$-1`, RESP3 `_`.
    pub fn reply_null(&self) {
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_ReplyWithNull.unwrap()(self.0) };
    }

    /// A simple (status) string, `+text`.
    pub fn reply_simple_string(&self, text: &CStr) {
        // SAFETY: see `reply_error`; `text` is NUL-terminated.
        unsafe { raw::RedisModule_ReplyWithSimpleString.unwrap()(self.0, text.as_ptr()) };
    }

    /// A bulk string, binary-safe.
    pub fn reply_bulk(&self, bytes: &[u8]) {
        // SAFETY: see `reply_error`; Redis copies `bytes.len()` bytes from a valid slice.
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
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_ReplyWithMap.unwrap()(self.0, pairs as _) };
    }

    /// Whether any of the context flags `any` (`REDISMODULE_CTX_FLAGS_*`) is set.
    fn has_flag(&self, any: u32) -> bool {
        // SAFETY: see `reply_error`.
        let flags = unsafe { raw::RedisModule_GetContextFlags.unwrap()(self.0) };
        flags & any as c_int != 0
    }

    /// Whether the client speaks RESP3.
    pub fn is_resp3(&self) -> bool {
        self.has_flag(raw::REDISMODULE_CTX_FLAGS_RESP3)
    }

    /// Whether the command is replayed: sent by the primary over the replication link, or read
    /// from the AOF while loading (a write the primary already decided).
    pub fn is_replayed(&self) -> bool {
        self.has_flag(raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING)
    }

    pub fn reply_array(&self, len: usize) {
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_ReplyWithArray.unwrap()(self.0, len as _) };
    }

    /// Starts an array whose length is set later with [`Ctx::set_array_len`].
    pub fn reply_postponed_array(&self) {
        // SAFETY: see `reply_error`.
        unsafe {
            raw::RedisModule_ReplyWithArray.unwrap()(self.0, raw::REDISMODULE_POSTPONED_LEN as _)
        };
    }

    pub fn set_array_len(&self, len: usize) {
        // SAFETY: see `reply_error`; follows a postponed array.
        unsafe { raw::RedisModule_ReplySetArrayLength.unwrap()(self.0, len as _) };
    }

    pub fn reply_wrong_arity(&self) {
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_WrongArity.unwrap()(self.0) };
    }

    /// Replicates the command as it was received.
    pub fn replicate_verbatim(&self) {
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_ReplicateVerbatim.unwrap()(self.0) };
    }

    /// Replicates `command words...` to replicas and the AOF instead of the call as received.
    pub fn replicate(&self, command: &CStr, args: &Args, words: &[Word<'_>]) {
        let mut created = Vec::new();
        let argv: Vec<*mut raw::RedisModuleString> = words
            .iter()
            .map(|w| {
                let text: &[u8] = match w {
                    Word::Arg(i) => return args.raw(*i),
                    Word::Text(t) => t.as_bytes(),
                    Word::Bytes(b) => b,
                };
                // SAFETY: live context; the string is freed below, after Replicate took its
                // own references.
                let s = unsafe {
                    raw::RedisModule_CreateString.unwrap()(self.0, text.as_ptr().cast(), text.len())
                };
                created.push(s);
                s
            })
            .collect();
        // SAFETY: "v" takes an array of RedisModuleString pointers and its length, all valid
        // for the call.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                self.0,
                command.as_ptr(),
                c"v".as_ptr(),
                argv.as_ptr(),
                argv.len(),
            )
        };
        for s in created {
            // SAFETY: each was created above by CreateString and is freed exactly once.
            unsafe { raw::RedisModule_FreeString.unwrap()(self.0, s) };
        }
    }

    /// The server's wall clock, Unix milliseconds: the time a window filter reads and writes
    /// at (a write replicates the time it used, so replicas never read their own for it).
    pub fn now_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    /// Emits a keyspace event of class `d` (module) named `event` for the key `args[key]`.
    pub fn notify(&self, event: &CStr, args: &Args, key: usize) {
        // SAFETY: see `reply_error`; the key string lives for the whole call.
        unsafe {
            raw::RedisModule_NotifyKeyspaceEvent.unwrap()(
                self.0,
                raw::REDISMODULE_NOTIFY_MODULE as c_int,
                event.as_ptr(),
                args.raw(key),
            )
        };
    }

    /// Starts a module timer that calls `fire` with the timer's context after `delay_ms`.
    pub fn start_timer(&self, delay_ms: u64, fire: fn(&Ctx)) -> Timer {
        // SAFETY: the main thread's context; `timer_fired` has the timer callback's signature,
        // and its data is a plain function pointer, which `timer_fired` turns back into one.
        let id = unsafe {
            raw::RedisModule_CreateTimer.unwrap()(
                self.0,
                delay_ms.min(i64::MAX as u64) as raw::mstime_t,
                Some(timer_fired),
                fire as *mut c_void,
            )
        };
        Timer(id)
    }

    /// Stops a timer; one that fired already is left as it is.
    pub fn stop_timer(&self, timer: Timer) {
        // SAFETY: the main thread's context; the id came from CreateTimer, and a timer that
        // already fired makes StopTimer return an error, which is harmless.
        unsafe { raw::RedisModule_StopTimer.unwrap()(self.0, timer.0, std::ptr::null_mut()) };
    }

    /// The database the context has selected.
    pub fn selected_db(&self) -> i32 {
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_GetSelectedDb.unwrap()(self.0) }
    }

    /// Selects database `db` (a timer's context, before it opens a key it noted by name);
    /// false when there is no such database.
    pub fn select_db(&self, db: i32) -> bool {
        // SAFETY: see `reply_error`.
        unsafe { raw::RedisModule_SelectDb.unwrap()(self.0, db) == raw::REDISMODULE_OK as c_int }
    }

    /// Opens the key named `name` for reading.
    pub fn open_key_named(&self, name: &OwnedString) -> Key {
        // SAFETY: live context and key name; the handle is closed in Key's Drop.
        let ptr = unsafe {
            raw::RedisModule_OpenKey.unwrap()(self.0, name.0, raw::REDISMODULE_READ as c_int)
        };
        Key(ptr.cast())
    }

    /// Tells Redis that the key named `name` changed without a write: WATCH sees it, and
    /// every client tracking it (client-side caching) is sent an invalidation.
    pub fn signal_modified(&self, name: &OwnedString) {
        // SAFETY: live context and key name.
        unsafe { raw::RedisModule_SignalModifiedKey.unwrap()(self.0, name.0) };
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

/// A Redis string the module created (with a null context, so it belongs to no command's
/// automatic memory), freed on drop.
pub struct OwnedString(*mut raw::RedisModuleString);

impl OwnedString {
    /// A Redis string holding a copy of `bytes`.
    pub fn new(bytes: &[u8]) -> Self {
        // SAFETY: a null context is allowed; Redis copies `bytes.len()` readable bytes.
        let ptr = unsafe {
            raw::RedisModule_CreateString.unwrap()(
                std::ptr::null_mut(),
                bytes.as_ptr().cast(),
                bytes.len(),
            )
        };
        OwnedString(ptr)
    }
}

impl Drop for OwnedString {
    fn drop(&mut self) {
        // SAFETY: the string came from CreateString with a null context and is freed once,
        // with a null context as such a string must be.
        unsafe { raw::RedisModule_FreeString.unwrap()(std::ptr::null_mut(), self.0) };
    }
}

/// What a key holds, for a command of the family of value type `T`.
pub enum KeyContent<'a, T> {
    Empty,
    /// A value of this family's type.
    Value(&'a mut T),
    /// A value of another type (a string, a set, the other filter family, another module's).
    Other,
}

/// An open key, closed on drop. Every access to its value goes through `&mut self`, so at most
/// one reference to the value is live at a time.
pub struct Key(*mut raw::RedisModuleKey);

impl Key {
    /// Whether the key holds nothing.
    pub fn is_empty(&self) -> bool {
        // SAFETY: KeyType accepts the (possibly NULL) handle OpenKey gave.
        let kind = unsafe { raw::RedisModule_KeyType.unwrap()(self.0) };
        kind as isize == raw::REDISMODULE_KEYTYPE_EMPTY
    }

    /// What the key holds, for a command of the family of value type `T`.
    pub fn content<T: Stored>(&mut self) -> KeyContent<'_, T> {
        // SAFETY: KeyType and ModuleTypeGetType accept the (possibly NULL) handle OpenKey gave.
        let kind = unsafe { raw::RedisModule_KeyType.unwrap()(self.0) };
        if kind as isize == raw::REDISMODULE_KEYTYPE_EMPTY {
            return KeyContent::Empty;
        }
        if kind as isize != raw::REDISMODULE_KEYTYPE_MODULE
            // SAFETY: as above.
            || !holds::<T>(unsafe { raw::RedisModule_ModuleTypeGetType.unwrap()(self.0) })
        {
            return KeyContent::Other;
        }
        // SAFETY: the key holds one of T's data types, whose values are `Box<T>`s we created; the key
        // stays open (and the value alive) for as long as the exclusive borrow of `self`.
        KeyContent::Value(unsafe {
            &mut *raw::RedisModule_ModuleTypeGetValue.unwrap()(self.0).cast::<T>()
        })
    }

    /// The value in this key, or the error to reply when it is missing (`ERR not found`) or
    /// of another type, for the commands that need an existing one.
    pub fn value<T: Stored>(&mut self) -> Result<&mut T, &'static str> {
        match self.content::<T>() {
            KeyContent::Value(value) => Ok(value),
            KeyContent::Empty => Err(errors::NOT_FOUND),
            KeyContent::Other => Err(errors::WRONG_TYPE),
        }
    }

    /// Stores a new value, as the data type it says, in an empty key opened for writing and
    /// returns it.
    pub fn create<T: Stored>(&mut self, value: T) -> &mut T {
        let data_type = types::raw_type(value.value_type());
        let value = Box::into_raw(Box::new(value));
        // SAFETY: the key is open for writing and empty; ownership of `value` passes to Redis,
        // which frees it through the type's free callback.
        unsafe { raw::RedisModule_ModuleTypeSetValue.unwrap()(self.0, data_type, value.cast()) };
        // SAFETY: `value` is alive while the key is (Redis owns it now), and the exclusive
        // borrow of `self` keeps any other reference from being made meanwhile.
        let value = unsafe { &mut *value };
        T::counters().value_created(value.gauges());
        value
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: the handle came from OpenKey (NULL is accepted) and is closed once.
        unsafe { raw::RedisModule_CloseKey.unwrap()(self.0) };
    }
}
