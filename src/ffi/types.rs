//! The module's data types through the server's C API: `MBbloom--`, `bloomfltr` and
//! `MBbloomCF` registered with their callbacks (RDB save and load, AOF rewrite, digest, copy,
//! free, free effort, memory usage, active defrag), written once over
//! [`Stored`] and [`Registered`]. Like
//! every command and config callback, each runs its body through [`no_unwind`], so a panic
//! never unwinds into Redis.

use std::ffi::{c_char, c_int, c_void};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::datatype::{BloomValues, CuckooValues, Registered, Stored, ValkeyValues, ValueType};
use crate::ffi::unwind::no_unwind;
use crate::stats;
use rsbloom_core::codec::{FieldReader, FieldWriter};
use rsbloom_core::cuckoo::rdb as cuckoo_rdb;
use rsbloom_core::defrag::{Defrag, Mover};
use rsbloom_core::rdb;
use rsbloom_core::valkey::rdb as valkey_rdb;
use rsbloom_core::DecodeError;

/// The registered type of a [`ValueType`].
pub fn redis_type(t: ValueType) -> &'static RedisType {
    match t {
        ValueType::Bloom => &BLOOM_TYPE,
        ValueType::Valkey => &VALKEY_TYPE,
        ValueType::Cuckoo => &CUCKOO_TYPE,
    }
}

/// The raw handle of a registered type.
pub fn raw_type(t: ValueType) -> *mut raw::RedisModuleType {
    *redis_type(t).raw_type.borrow()
}

/// Registers the three data types.
///
/// # Safety
/// `ctx` must be OnLoad's live context.
pub unsafe fn register(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    for data_type in [&BLOOM_TYPE, &CUCKOO_TYPE, &VALKEY_TYPE] {
        data_type.create_data_type(ctx).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The callbacks of a [`Registered`] type. valkey-bloom's type loads (and ignores) aux data,
/// as valkey-bloom does (it saves none).
const fn methods<R: Registered>() -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load::<R>),
        rdb_save: Some(rdb_save::<R::Value>),
        aof_rewrite: Some(aof_rewrite::<R::Value>),
        mem_usage: Some(mem_usage::<R::Value>),
        digest: Some(digest::<R::Value>),
        free: Some(free::<R::Value>),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: Some(free_effort::<R::Value>),
        unlink: None,
        copy: Some(copy::<R::Value>),
        defrag: Some(defrag::<R::Value>),
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    }
}

/// The Bloom filter type, named as RedisBloom names it so that TYPE answers the same.
pub static BLOOM_TYPE: RedisType =
    RedisType::new("MBbloom--", rdb::ENCODING_VERSION, methods::<BloomValues>());

/// valkey-bloom's type: its keys keep it (TYPE says `bloomfltr`), load from its RDB, DUMP and
/// replication, and save in its format, so valkey-bloom can load them back.
pub static VALKEY_TYPE: RedisType = RedisType::new(
    "bloomfltr",
    valkey_rdb::ENCODING_VERSION,
    methods::<ValkeyValues>(),
);

/// The cuckoo filter type, RedisBloom's `MBbloomCF`. It reads RedisBloom's encodings 0 to 4
/// and writes rsbloom's ([`cuckoo_rdb`]).
pub static CUCKOO_TYPE: RedisType = RedisType::new(
    "MBbloomCF",
    cuckoo_rdb::ENCODING_VERSION,
    methods::<CuckooValues>(),
);

struct RdbWriter(*mut raw::RedisModuleIO);

impl FieldWriter for RdbWriter {
    fn unsigned(&mut self, v: u64) {
        // SAFETY: the IO handle is the live one Redis passed to rdb_save.
        unsafe { raw::RedisModule_SaveUnsigned.unwrap()(self.0, v) }
    }
    fn double(&mut self, v: f64) {
        // SAFETY: as above.
        unsafe { raw::RedisModule_SaveDouble.unwrap()(self.0, v) }
    }
    fn bytes(&mut self, v: &[u8]) {
        // SAFETY: as above; Redis copies `v.len()` bytes from a valid slice.
        unsafe { raw::RedisModule_SaveStringBuffer.unwrap()(self.0, v.as_ptr().cast(), v.len()) }
    }
}

struct RdbReader(*mut raw::RedisModuleIO);

/// A string field Redis loaded, freed on drop.
struct LoadedString {
    buf: *mut c_char,
    len: usize,
}

impl LoadedString {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `buf` holds `len` readable bytes, Redis's until the drop below frees them.
        unsafe { std::slice::from_raw_parts(self.buf.cast::<u8>(), self.len) }
    }
}

impl Drop for LoadedString {
    fn drop(&mut self) {
        // SAFETY: `buf` came from LoadStringBuffer and is freed exactly once, here.
        unsafe { raw::RedisModule_Free.unwrap()(self.buf.cast()) };
    }
}

impl RdbReader {
    /// The next string field.
    fn string(&mut self) -> Result<LoadedString, DecodeError> {
        let mut len = 0usize;
        // SAFETY: the IO handle is the live one Redis passed to rdb_load; the returned buffer
        // is ours to free with RedisModule_Free (LoadedString's drop).
        let buf: *mut c_char =
            unsafe { raw::RedisModule_LoadStringBuffer.unwrap()(self.0, &mut len) };
        if buf.is_null() {
            self.check()?;
            return Err(DecodeError::Read("missing bit array"));
        }
        let s = LoadedString { buf, len };
        self.check()?;
        Ok(s)
    }

    fn check(&self) -> Result<(), DecodeError> {
        // SAFETY: the IO handle is the live one Redis passed to rdb_load.
        if unsafe { raw::RedisModule_IsIOError.unwrap()(self.0) } != 0 {
            Err(DecodeError::Read("I/O error or truncated RDB"))
        } else {
            Ok(())
        }
    }
}

impl FieldReader for RdbReader {
    fn unsigned(&mut self) -> Result<u64, DecodeError> {
        // SAFETY: live IO handle; with HANDLE_IO_ERRORS a failed read returns 0 and sets the
        // error flag, which `check` reads.
        let v = unsafe { raw::RedisModule_LoadUnsigned.unwrap()(self.0) };
        self.check().map(|_| v)
    }
    fn double(&mut self) -> Result<f64, DecodeError> {
        // SAFETY: as above.
        let v = unsafe { raw::RedisModule_LoadDouble.unwrap()(self.0) };
        self.check().map(|_| v)
    }
    fn bytes(&mut self, max: u64) -> Result<Vec<u8>, DecodeError> {
        let s = self.string()?;
        if s.bytes().len() as u64 > max {
            return Err(DecodeError::LongPiece);
        }
        Ok(rsbloom_core::memory::try_copied(s.bytes(), 0)?)
    }
    fn bytes_into(&mut self, dst: &mut [u8]) -> Result<usize, DecodeError> {
        let s = self.string()?;
        let src = s.bytes();
        let dst = dst.get_mut(..src.len()).ok_or(DecodeError::LongPiece)?;
        dst.copy_from_slice(src);
        Ok(src.len())
    }
}

/// The value Redis passes to a callback.
///
/// # Safety
/// `value` must be a value this module created with `Box<T>` for the type whose callback
/// runs, alive for `'a`.
unsafe fn value_of<'a, T>(value: *const c_void) -> &'a T {
    // SAFETY: the caller's contract.
    unsafe { &*value.cast::<T>() }
}

extern "C" fn rdb_save<T: Stored>(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: Redis passes a value of this callback's type.
    let value = unsafe { value_of::<T>(value) };
    // A panic here would leave a half-written value: none is expected (the encoder only
    // writes fields), and unwinding into Redis would be worse.
    no_unwind((), || value.encode(&mut RdbWriter(rdb)));
}

extern "C" fn rdb_load<R: Registered>(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    let decoded = no_unwind(Err(DecodeError::Read("internal error in rsbloom")), || {
        R::decode(&mut RdbReader(rdb), encver)
    });
    match decoded {
        Ok(value) => {
            <R::Value as Stored>::counters().value_created(value.gauges());
            Box::into_raw(Box::new(value)).cast()
        }
        Err(why) => {
            log_io_warning(
                rdb,
                &format!("refusing {} of encoding version {encver}: {why}", R::WHAT),
            );
            std::ptr::null_mut()
        }
    }
}

fn log_io_warning(rdb: *mut raw::RedisModuleIO, msg: &str) {
    let level = c"warning";
    let text = std::ffi::CString::new(msg.replace('\0', " ")).expect("no NUL left");
    // SAFETY: live IO handle and NUL-terminated strings; "%s" keeps the text from being a format.
    unsafe {
        raw::RedisModule_LogIOError.unwrap()(rdb, level.as_ptr(), c"%s".as_ptr(), text.as_ptr())
    };
}

extern "C" fn free<T: Stored>(value: *mut c_void) {
    no_unwind((), || {
        // SAFETY: Redis hands back a value created with `Box<T>`, once.
        let value = unsafe { Box::from_raw(value.cast::<T>()) };
        T::counters().value_freed(value.gauges());
    });
}

extern "C" fn mem_usage<T: Stored>(value: *const c_void) -> usize {
    // SAFETY: Redis passes a value of this callback's type.
    let value = unsafe { value_of::<T>(value) };
    no_unwind(0, || value.memory_usage() as usize)
}

/// Rewrites a value as the commands that rebuild it: `BF.LOADCHUNK key 1 <header>` (or
/// `CF.LOADCHUNK`), then one per chunk, exactly as a client replays SCANDUMP (a cuckoo filter
/// with no items too, which SCANDUMP itself refuses to dump); a valkey-bloom filter as
/// valkey-bloom's own `BF.LOAD key <blob>`, which both modules replay.
extern "C" fn aof_rewrite<T: Stored>(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: Redis passes a value of this callback's type.
    let value = unsafe { value_of::<T>(value) };
    if let Some(blob) = no_unwind(None, || value.load_blob()) {
        // SAFETY: live AOF handle and key; "sb" takes a RedisModuleString and a buffer with
        // its length, valid for the call, which copies them.
        unsafe {
            raw::RedisModule_EmitAOF.unwrap()(
                aof,
                c"BF.LOAD".as_ptr(),
                c"sb".as_ptr(),
                key,
                blob.as_ptr().cast::<c_char>(),
                blob.len(),
            )
        };
        return;
    }
    let mut emit = |iterator: i64, data: &[u8]| {
        // SAFETY: live AOF handle and key; "slb" takes a RedisModuleString, a long long and a
        // buffer with its length, all valid for the call, which copies them.
        unsafe {
            raw::RedisModule_EmitAOF.unwrap()(
                aof,
                T::LOADCHUNK.as_ptr(),
                c"slb".as_ptr(),
                key,
                iterator as std::ffi::c_longlong,
                data.as_ptr().cast::<c_char>(),
                data.len(),
            )
        };
    };
    no_unwind((), || value.dump(&mut emit));
}

/// DEBUG DIGEST-VALUE: the header (parameters, seed, layouts; a window filter's clock and
/// slices; a cuckoo filter's deletes), every bit or slot, and the item count.
extern "C" fn digest<T: Stored>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    // SAFETY: Redis passes a value of this callback's type.
    let value = unsafe { value_of::<T>(value) };
    let mut add = |bytes: &[u8]| {
        // SAFETY: live digest handle; Redis reads `bytes.len()` bytes from a valid slice.
        unsafe {
            raw::RedisModule_DigestAddStringBuffer.unwrap()(md, bytes.as_ptr().cast(), bytes.len())
        };
    };
    no_unwind((), || value.digest_parts(&mut add));
    // SAFETY: live digest handle.
    unsafe {
        raw::RedisModule_DigestAddLongLong.unwrap()(
            md,
            value.gauges().items as std::ffi::c_longlong,
        );
        raw::RedisModule_DigestEndSequence.unwrap()(md);
    }
}

/// COPY: a deep copy, seed included.
extern "C" fn copy<T: Stored>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: Redis passes a value of this callback's type.
    let value = unsafe { value_of::<T>(value) };
    // NULL makes COPY fail cleanly (out of memory is an abort, not a panic, in Redis).
    no_unwind(std::ptr::null_mut(), || {
        T::counters().value_created(value.gauges());
        Box::into_raw(Box::new(value.clone())).cast()
    })
}

/// The server's defrag allocator, as the core's walk asks for it.
struct ServerMover {
    ctx: *mut raw::RedisModuleDefragCtx,
    /// Whether the server keeps a cursor for the key (it then gives a time slice to keep to).
    resumable: bool,
}

impl Mover for ServerMover {
    fn moved(&mut self, block: *mut u8) -> Option<*mut u8> {
        // SAFETY: the API pointers are set once, at load, before any callback; the live defrag
        // context Redis passed; `block` is a live block of this module's, made by the server's
        // allocator (the module's global allocator is it). A non-null answer is the block's new
        // address, the old block freed.
        let new = unsafe { raw::RedisModule_DefragAlloc?(self.ctx, block.cast()) };
        (!new.is_null()).then(|| new.cast())
    }

    fn should_stop(&mut self) -> bool {
        // SAFETY: as in `moved`: a pointer set at load, the live defrag context.
        self.resumable
            && unsafe { raw::RedisModule_DefragShouldStop.is_some_and(|stop| stop(self.ctx) != 0) }
    }
}

/// Active defrag of a value (`activedefrag yes`): its own block on a walk's first call, then
/// its blocks through the core's walk, which stops when the server's time slice is over and
/// resumes from the cursor the server keeps for the key. Returns 1 while there is more to do.
extern "C" fn defrag<T: Stored>(
    ctx: *mut raw::RedisModuleDefragCtx,
    _key: *mut raw::RedisModuleString,
    value: *mut *mut c_void,
) -> c_int {
    no_unwind(0, || {
        let ok = raw::Status::Ok as c_int;
        let mut cursor: std::ffi::c_ulong = 0;
        // SAFETY: API pointers set at load; the live defrag context; `cursor` is a valid
        // out-pointer.
        let (set_cursor, resumed) = unsafe {
            let resumed =
                raw::RedisModule_DefragCursorGet.is_some_and(|get| get(ctx, &mut cursor) == ok);
            (raw::RedisModule_DefragCursorSet, resumed)
        };
        let mut mover = ServerMover {
            ctx,
            resumable: set_cursor.is_some(),
        };
        if !resumed {
            // SAFETY: `value` points at the key's value pointer, which Redis lets the callback
            // replace.
            unsafe {
                if let Some(new) = mover.moved((*value).cast()) {
                    *value = new.cast();
                    stats::DEFRAG.moved(1);
                }
            }
        }
        // SAFETY: Redis passes a value of this callback's type, which nothing else touches
        // during the callback.
        let v = unsafe { &mut *(*value).cast::<T>() };
        let mut walk = Defrag::new(&mut mover, if resumed { cursor as usize } else { 0 });
        v.defrag(&mut walk);
        stats::DEFRAG.moved(walk.moved());
        match (walk.stopped(), set_cursor) {
            (Some(next), Some(set)) => {
                // SAFETY: the live defrag context.
                unsafe { set(ctx, next as std::ffi::c_ulong) };
                1
            }
            _ => {
                stats::DEFRAG.value_done();
                0
            }
        }
    })
}

/// Work to free a value, in Redis's units: above its lazyfree threshold (64) the value is freed
/// in a background thread, so DEL/UNLINK of a big filter does not stall the server.
extern "C" fn free_effort<T: Stored>(
    _key: *mut raw::RedisModuleString,
    value: *const c_void,
) -> usize {
    // SAFETY: Redis passes a value of this callback's type.
    let value = unsafe { value_of::<T>(value) };
    (value.gauges().bytes / 8 / 1024 + 1) as usize
}
