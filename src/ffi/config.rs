//! Module configs through the server's C API, behind safe functions: `src/config.rs` describes
//! each config as a name, a default, a range, flags and a pair of plain Rust functions
//! ([`Hooks`]), and registers it with a [`Registrar`]; the callbacks Redis calls are here.
//!
//! A config's privdata is its `&'static` hooks, so one callback per type serves every config:
//! it passes the hooks' `id` on, and turns an `Err` into the error string Redis shows.

use std::ffi::{c_char, c_int, c_longlong, c_void, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering::Relaxed};

use redis_module::raw;

use crate::ffi::string_bytes;
use crate::ffi::unwind::no_unwind;

/// Config flags, as Redis takes them.
pub mod flags {
    use redis_module::raw;

    /// A plain config.
    pub const DEFAULT: u32 = raw::REDISMODULE_CONFIG_DEFAULT;
    /// A byte count, which takes `kb`, `mb`, `gb` suffixes.
    pub const MEMORY: u32 = raw::REDISMODULE_CONFIG_MEMORY;
    /// Left out of `CONFIG GET` patterns.
    pub const HIDDEN: u32 = raw::REDISMODULE_CONFIG_HIDDEN;
    /// Registered without the module's `bf.` prefix (Redis 8).
    pub const UNPREFIXED: u32 = raw::REDISMODULE_CONFIG_UNPREFIXED;
}

/// A config's two functions and the number they get to tell the configs of one table apart.
pub struct Hooks<T> {
    /// The value `CONFIG GET` reads.
    pub get: fn(usize) -> T,
    /// Applies a value (from `CONFIG SET`, the config file or the command line), or refuses it
    /// with the text Redis shows.
    pub set: fn(usize, T) -> Result<(), String>,
    /// Passed to both.
    pub id: usize,
}

/// A string config's functions, and the string its last `get` returned (Redis copies the
/// value a get callback returns but does not free it, so it is kept until the next get).
pub struct StringHooks {
    /// The text `CONFIG GET` reads.
    text: fn(usize) -> String,
    /// Applies the bytes given, or refuses them with the text Redis shows.
    set: fn(usize, &[u8]) -> Result<(), String>,
    id: usize,
    last: AtomicPtr<raw::RedisModuleString>,
}

impl StringHooks {
    /// Hooks of a string config: `text` reads it, `set` applies a value; both get `id`.
    pub const fn new(
        text: fn(usize) -> String,
        set: fn(usize, &[u8]) -> Result<(), String>,
        id: usize,
    ) -> Self {
        StringHooks {
            text,
            set,
            id,
            last: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

/// Sets a config callback's error string; Redis takes ownership and frees it.
fn set_error(err: *mut *mut raw::RedisModuleString, text: &str) {
    if err.is_null() {
        return;
    }
    // SAFETY: a NULL context creates an unmanaged string; `text` is a valid buffer of its
    // length; `err` is the non-NULL out-pointer Redis passed to the set callback.
    unsafe {
        *err = raw::RedisModule_CreateString.unwrap()(
            std::ptr::null_mut(),
            text.as_ptr().cast::<c_char>(),
            text.len(),
        );
    }
}

/// The status a set callback returns for `result`, with its error string set.
fn status(result: Result<(), String>, err: *mut *mut raw::RedisModuleString) -> c_int {
    match result {
        Ok(()) => raw::Status::Ok as c_int,
        Err(text) => {
            set_error(err, &text);
            raw::Status::Err as c_int
        }
    }
}

/// The hooks a callback's privdata points at.
///
/// # Safety
/// `privdata` must be what [`Registrar`] registered with a config of this type: a pointer
/// to `'static` hooks of type `T`.
unsafe fn hooks<'a, T>(privdata: *mut c_void) -> &'a T {
    // SAFETY: the caller's contract.
    unsafe { &*privdata.cast_const().cast::<T>() }
}

extern "C" fn get_string(
    _name: *const c_char,
    privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    no_unwind(std::ptr::null_mut(), || {
        // SAFETY: registered by `Registrar::string` with `&'static StringHooks`.
        let h = unsafe { hooks::<StringHooks>(privdata) };
        let text = (h.text)(h.id);
        // SAFETY: a NULL context creates an unmanaged string from a valid buffer.
        let new = unsafe {
            raw::RedisModule_CreateString.unwrap()(
                std::ptr::null_mut(),
                text.as_ptr().cast::<c_char>(),
                text.len(),
            )
        };
        let old = h.last.swap(new, Relaxed);
        if !old.is_null() {
            // SAFETY: `old` was created here by an earlier get, which Redis has finished with
            // (it copies the value before returning), and it is freed exactly once.
            unsafe { raw::RedisModule_FreeString.unwrap()(std::ptr::null_mut(), old) };
        }
        new
    })
}

extern "C" fn set_string(
    _name: *const c_char,
    val: *mut raw::RedisModuleString,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    no_unwind(raw::Status::Err as c_int, || {
        // SAFETY: registered by `Registrar::string` with `&'static StringHooks`.
        let h = unsafe { hooks::<StringHooks>(privdata) };
        // SAFETY: Redis passes a valid string that lives for the whole call.
        let bytes = unsafe { string_bytes(val) };
        status((h.set)(h.id, bytes), err)
    })
}

extern "C" fn get_numeric(_name: *const c_char, privdata: *mut c_void) -> c_longlong {
    no_unwind(0, || {
        // SAFETY: registered by `Registrar::numeric` with `&'static Hooks<i64>`.
        let h = unsafe { hooks::<Hooks<i64>>(privdata) };
        (h.get)(h.id)
    })
}

extern "C" fn set_numeric(
    _name: *const c_char,
    val: c_longlong,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    no_unwind(raw::Status::Err as c_int, || {
        // SAFETY: registered by `Registrar::numeric` with `&'static Hooks<i64>`.
        let h = unsafe { hooks::<Hooks<i64>>(privdata) };
        status((h.set)(h.id, val), err)
    })
}

extern "C" fn get_bool(_name: *const c_char, privdata: *mut c_void) -> c_int {
    no_unwind(0, || {
        // SAFETY: registered by `Registrar::boolean` with `&'static Hooks<bool>`.
        let h = unsafe { hooks::<Hooks<bool>>(privdata) };
        c_int::from((h.get)(h.id))
    })
}

extern "C" fn set_bool(
    _name: *const c_char,
    val: c_int,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    no_unwind(raw::Status::Err as c_int, || {
        // SAFETY: registered by `Registrar::boolean` with `&'static Hooks<bool>`.
        let h = unsafe { hooks::<Hooks<bool>>(privdata) };
        status((h.set)(h.id, val != 0), err)
    })
}

/// Registers configs during the module's load (OnLoad's context).
pub struct Registrar(*mut raw::RedisModuleCtx);

impl Registrar {
    /// A registrar for OnLoad's context.
    ///
    /// # Safety
    /// `ctx` must be OnLoad's live context, and the registrar used only during OnLoad.
    pub unsafe fn new(ctx: *mut raw::RedisModuleCtx) -> Self {
        Registrar(ctx)
    }

    /// Registers a string config; whether the server took it.
    pub fn string(
        &self,
        name: &CStr,
        default: &str,
        flags: u32,
        hooks: &'static StringHooks,
    ) -> bool {
        let Ok(default) = CString::new(default) else {
            return false;
        };
        // SAFETY: OnLoad's live context; NUL-terminated strings (Redis copies them); callbacks
        // with the signatures Redis expects; privdata the hooks, which live for the process.
        let status = unsafe {
            raw::RedisModule_RegisterStringConfig.unwrap()(
                self.0,
                name.as_ptr(),
                default.as_ptr(),
                flags,
                Some(get_string),
                Some(set_string),
                None,
                std::ptr::from_ref(hooks).cast_mut().cast(),
            )
        };
        status == raw::Status::Ok as c_int
    }

    /// Registers a numeric config within `min..=max`; whether the server took it.
    pub fn numeric(
        &self,
        name: &CStr,
        default: i64,
        flags: u32,
        (min, max): (i64, i64),
        hooks: &'static Hooks<i64>,
    ) -> bool {
        // SAFETY: as in `string`.
        let status = unsafe {
            raw::RedisModule_RegisterNumericConfig.unwrap()(
                self.0,
                name.as_ptr(),
                default,
                flags,
                min,
                max,
                Some(get_numeric),
                Some(set_numeric),
                None,
                std::ptr::from_ref(hooks).cast_mut().cast(),
            )
        };
        status == raw::Status::Ok as c_int
    }

    /// Registers a boolean config; whether the server took it.
    pub fn boolean(
        &self,
        name: &CStr,
        default: bool,
        flags: u32,
        hooks: &'static Hooks<bool>,
    ) -> bool {
        // SAFETY: as in `string`.
        let status = unsafe {
            raw::RedisModule_RegisterBoolConfig.unwrap()(
                self.0,
                name.as_ptr(),
                c_int::from(default),
                flags,
                Some(get_bool),
                Some(set_bool),
                None,
                std::ptr::from_ref(hooks).cast_mut().cast(),
            )
        };
        status == raw::Status::Ok as c_int
    }

    /// Whether `CONFIG GET name` answers a value.
    pub fn server_knows(&self, name: &CStr) -> bool {
        // SAFETY: OnLoad's live context; "cc" takes two C strings, valid for the call.
        let reply = unsafe {
            raw::RedisModule_Call.unwrap()(
                self.0,
                c"CONFIG".as_ptr(),
                c"cc".as_ptr(),
                c"GET".as_ptr(),
                name.as_ptr(),
            )
        };
        if reply.is_null() {
            return false;
        }
        // SAFETY: a reply RedisModule_Call returned, read and then freed once.
        unsafe {
            let pairs = raw::RedisModule_CallReplyLength.unwrap()(reply);
            raw::RedisModule_FreeCallReply.unwrap()(reply);
            pairs == 2
        }
    }

    /// Applies the registered configs' values from redis.conf and the command line; whether
    /// every value was valid.
    pub fn load(&self) -> bool {
        // SAFETY: OnLoad's live context, after every config is registered.
        unsafe { raw::RedisModule_LoadConfigs.unwrap()(self.0) == raw::Status::Ok as c_int }
    }
}
