//! The `MBbloom--` data type: its callbacks (RDB save/load, AOF rewrite, digest, copy, free,
//! free effort, memory usage). Like every command and config callback, each runs its body
//! through [`no_unwind`], so a panic never unwinds into Redis.

use std::ffi::{c_int, c_void};
use std::os::raw::c_char;

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::core::decode::{FieldReader, FieldWriter};
use crate::core::{rdb, redisbloom_rdb, scandump};
use crate::core::{DecodeError, Filter, FIXED_SEED};
use crate::unwind::no_unwind;

/// The data type, named as RedisBloom names it so that TYPE answers the same.
pub static BLOOM_TYPE: RedisType = RedisType::new(
    "MBbloom--",
    rdb::ENCODING_VERSION,
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: Some(free_effort),
        unlink: None,
        copy: Some(copy),
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    },
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

impl RdbReader {
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
    fn bytes_into(&mut self, dst: &mut [u8]) -> Result<usize, DecodeError> {
        let mut len = 0usize;
        // SAFETY: as above; the returned buffer is ours to free with RedisModule_Free.
        let buf: *mut c_char =
            unsafe { raw::RedisModule_LoadStringBuffer.unwrap()(self.0, &mut len) };
        self.check()?;
        if buf.is_null() {
            return Err(DecodeError::Read("missing bit array"));
        }
        let fits = len <= dst.len();
        if fits {
            // SAFETY: `buf` holds `len` bytes, at most `dst.len()`; the regions are distinct.
            unsafe { std::ptr::copy_nonoverlapping(buf.cast::<u8>(), dst.as_mut_ptr(), len) };
        }
        // SAFETY: `buf` came from LoadStringBuffer and is freed exactly once.
        unsafe { raw::RedisModule_Free.unwrap()(buf.cast()) };
        if fits {
            Ok(len)
        } else {
            Err(DecodeError::LongPiece)
        }
    }
}

/// The value Redis passes to a callback.
///
/// # Safety
/// `value` must be a value this module created with `Box<Filter>`, alive for `'a`.
unsafe fn filter<'a>(value: *const c_void) -> &'a Filter {
    // SAFETY: the caller's contract.
    unsafe { &*value.cast::<Filter>() }
}

extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: Redis passes a value of this type.
    let filter = unsafe { filter(value) };
    // A panic here would leave a half-written value: none is expected (the encoder only
    // writes fields), and unwinding into Redis would be worse.
    no_unwind((), || rdb::encode(filter, &mut RdbWriter(rdb)));
}

extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    let decoded = no_unwind(Err(DecodeError::Read("internal error in rsbloom")), || {
        match encver {
            rdb::ENCODING_VERSION => rdb::decode(&mut RdbReader(rdb)),
            // RedisBloom's own encodings (drop-in migration). The native links such a chain
            // grows later use the fixed seed, so replicas and AOF replays grow identical ones.
            0..=redisbloom_rdb::MAX_ENCODING_VERSION => {
                redisbloom_rdb::decode(&mut RdbReader(rdb), encver, FIXED_SEED).map(Filter::Chain)
            }
            _ => Err(DecodeError::UnknownEncoding),
        }
    });
    match decoded {
        Ok(filter) => {
            crate::stats::filter_created(&filter);
            Box::into_raw(Box::new(filter)).cast()
        }
        Err(why) => {
            log_io_warning(
                rdb,
                &format!("refusing bloom filter of encoding version {encver}: {why}"),
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

extern "C" fn free(value: *mut c_void) {
    no_unwind((), || {
        // SAFETY: Redis hands back a value created with `Box<Filter>`, once.
        let filter = unsafe { Box::from_raw(value.cast::<Filter>()) };
        crate::stats::filter_freed(&filter);
    });
}

extern "C" fn mem_usage(value: *const c_void) -> usize {
    // SAFETY: Redis passes a value of this type.
    let filter = unsafe { filter(value) };
    no_unwind(0, || filter.memory_usage() as usize)
}

/// Rewrites a filter as the commands that rebuild it: `BF.LOADCHUNK key 1 <header>`, then
/// `BF.LOADCHUNK key <next> <chunk>` per chunk, exactly as a client replays SCANDUMP.
extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: Redis passes a value of this type.
    let filter = unsafe { filter(value) };
    let emit = |iterator: i64, data: &[u8]| {
        // SAFETY: live AOF handle and key; "slb" takes a RedisModuleString, a long long and a
        // buffer with its length, all valid for the call, which copies them.
        unsafe {
            raw::RedisModule_EmitAOF.unwrap()(
                aof,
                c"BF.LOADCHUNK".as_ptr(),
                c"slb".as_ptr(),
                key,
                iterator as std::ffi::c_longlong,
                data.as_ptr().cast::<c_char>(),
                data.len(),
            )
        };
    };
    no_unwind((), || {
        emit(1, &scandump::header(filter));
        for (next, data) in scandump::chunks(filter) {
            emit(next, data);
        }
    });
}

/// DEBUG DIGEST-VALUE: the header (parameters, seed, layouts; a window filter's clock and
/// slices), every bit, and the item count.
extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    // SAFETY: Redis passes a value of this type.
    let filter = unsafe { filter(value) };
    let add = |bytes: &[u8]| {
        // SAFETY: live digest handle; Redis reads `bytes.len()` bytes from a valid slice.
        unsafe {
            raw::RedisModule_DigestAddStringBuffer.unwrap()(md, bytes.as_ptr().cast(), bytes.len())
        };
    };
    no_unwind((), || {
        add(&scandump::header(filter));
        for bits in filter.bit_arrays() {
            add(bits);
        }
    });
    // SAFETY: live digest handle.
    unsafe {
        raw::RedisModule_DigestAddLongLong.unwrap()(md, filter.added() as std::ffi::c_longlong);
        raw::RedisModule_DigestEndSequence.unwrap()(md);
    }
}

/// COPY: a deep copy, seed included.
extern "C" fn copy(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: Redis passes a value of this type.
    let filter = unsafe { filter(value) };
    // NULL makes COPY fail cleanly (out of memory is an abort, not a panic, in Redis).
    no_unwind(std::ptr::null_mut(), || {
        crate::stats::filter_created(filter);
        Box::into_raw(Box::new(filter.clone())).cast()
    })
}

/// Work to free a value, in Redis's units: above its lazyfree threshold (64) the value is freed
/// in a background thread, so DEL/UNLINK of a big filter does not stall the server.
extern "C" fn free_effort(_key: *mut raw::RedisModuleString, value: *const c_void) -> usize {
    // SAFETY: Redis passes a value of this type.
    let filter = unsafe { filter(value) };
    (filter.bit_bytes() / 8 / 1024 + 1) as usize
}
