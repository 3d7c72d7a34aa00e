//! Module settings: defaults for implicitly created filters and the per-filter memory limit.
//! Set by module load arguments (`loadmodule librsbloom.so ERROR_RATE 0.01 ...`), then by the
//! module configs `bf.error-rate`, `bf.initial-size`, `bf.expansion`, `bf.max-filter-bytes`
//! and `bf.cf-max-expansions` (redis.conf, the command line, `CONFIG SET`), which override them.

use std::ffi::{c_char, c_int, c_longlong, c_void, CStr, CString};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering::Relaxed};

use redis_module::raw;

use crate::redis::string_bytes;
use crate::unwind::no_unwind;
use rsbloom_core::args;
use rsbloom_core::{FilterSpec, Growth, Window};

/// Default per-filter limit: 2 GiB, room for a billion URLs at 1% (about 1.4 GB) while one
/// command cannot take the server down.
pub const DEFAULT_MAX_FILTER_BYTES: u64 = 2 << 30;

static ERROR_RATE_BITS: AtomicU64 = AtomicU64::new(0x3f847ae147ae147b); // 0.01
static INITIAL_SIZE: AtomicU64 = AtomicU64::new(100);
static EXPANSION: AtomicU64 = AtomicU64::new(2);
static MAX_FILTER_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILTER_BYTES);
static CF_MAX_EXPANSIONS: AtomicU64 = AtomicU64::new(32);

/// Default error rate for implicitly created filters.
pub fn error_rate() -> f64 {
    f64::from_bits(ERROR_RATE_BITS.load(Relaxed))
}

/// Default capacity for implicitly created filters.
pub fn initial_size() -> u64 {
    INITIAL_SIZE.load(Relaxed)
}

/// Default expansion; 0 means new filters are NONSCALING.
pub fn expansion() -> u32 {
    EXPANSION.load(Relaxed) as u32
}

/// Most bytes of bit storage one filter may take.
pub fn max_filter_bytes() -> u64 {
    MAX_FILTER_BYTES.load(Relaxed)
}

/// RedisBloom's CF_MAX_EXPANSIONS: a cuckoo filter with this many sub-filters takes no more
/// adds, and (rsbloom) no insert grows it past this many.
pub fn cf_max_expansions() -> usize {
    CF_MAX_EXPANSIONS.load(Relaxed) as usize
}

/// The filter an add to a missing key creates: the module defaults.
pub fn default_spec() -> FilterSpec {
    FilterSpec {
        error: error_rate(),
        capacity: initial_size(),
        growth: Growth::from_expansion(expansion()),
        window: Window::Unbounded,
    }
}

/// Applies the module load arguments (`loadmodule librsbloom.so ERROR_RATE 0.01 ...`), whose
/// names and ranges come from [`NUMERIC`]. Returns the error to log.
pub fn apply_load_args(argv: &[&[u8]]) -> Result<(), String> {
    let integers: Vec<args::IntegerArg> = NUMERIC.iter().map(|n| n.load_arg).collect();
    let parsed = args::load_args(argv, &integers)?;
    if let Some(rate) = parsed.error_rate {
        ERROR_RATE_BITS.store(rate.to_bits(), Relaxed);
    }
    for (at, value) in parsed.integers {
        NUMERIC[at].cell.store(value as u64, Relaxed);
    }
    Ok(())
}

/// The error text of an invalid error rate, for CONFIG SET and redis.conf.
pub const ERROR_RATE_CONFIG_ERROR: &str =
    "bf.error-rate must be a number between 0 and 1, exclusive";

/// The error rate as CONFIG GET shows it: the shortest text that parses back to the same f64.
pub fn error_rate_text() -> String {
    format!("{:?}", error_rate())
}

/// Sets a config callback's error string; Redis takes ownership and frees it.
fn set_config_error(err: *mut *mut raw::RedisModuleString, text: &str) {
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

/// The string last returned for `bf.error-rate`: Redis copies the value a get callback returns
/// but does not free it, so the module keeps it until the next get.
static ERROR_RATE_STRING: AtomicPtr<raw::RedisModuleString> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn get_error_rate(
    _name: *const c_char,
    _privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    no_unwind(std::ptr::null_mut(), || {
        let text = error_rate_text();
        // SAFETY: a NULL context creates an unmanaged string from a valid buffer.
        let new = unsafe {
            raw::RedisModule_CreateString.unwrap()(
                std::ptr::null_mut(),
                text.as_ptr().cast::<c_char>(),
                text.len(),
            )
        };
        let old = ERROR_RATE_STRING.swap(new, Relaxed);
        if !old.is_null() {
            // SAFETY: `old` was created above by an earlier get, which Redis has finished with
            // (it copies the value before returning), and it is freed exactly once.
            unsafe { raw::RedisModule_FreeString.unwrap()(std::ptr::null_mut(), old) };
        }
        new
    })
}

extern "C" fn set_error_rate(
    _name: *const c_char,
    val: *mut raw::RedisModuleString,
    _privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    const ERR: c_int = raw::Status::Err as c_int;
    no_unwind(ERR, || {
        // SAFETY: Redis passes a valid string that lives for the whole call.
        let text = unsafe { string_bytes(val) };
        match args::error_rate(text) {
            Some(r) => {
                ERROR_RATE_BITS.store(r.to_bits(), Relaxed);
                raw::Status::Ok as c_int
            }
            None => {
                set_config_error(err, ERROR_RATE_CONFIG_ERROR);
                ERR
            }
        }
    })
}

/// A numeric config: its name (without the `bf.` prefix Redis adds), its module load argument
/// with the range both share, its flags and its atomic.
struct Numeric {
    name: &'static CStr,
    load_arg: args::IntegerArg,
    flags: u32,
    cell: &'static AtomicU64,
}

impl Numeric {
    const fn new(
        name: &'static CStr,
        load_arg: &'static str,
        (min, max): (i64, i64),
        flags: u32,
        cell: &'static AtomicU64,
    ) -> Self {
        Numeric {
            name,
            load_arg: args::IntegerArg {
                name: load_arg,
                min,
                max,
                memory: flags & raw::REDISMODULE_CONFIG_MEMORY != 0,
            },
            flags,
            cell,
        }
    }
}

/// Every numeric setting, as a config and as a load argument.
static NUMERIC: [Numeric; 4] = [
    Numeric::new(
        c"initial-size",
        "INITIAL_SIZE",
        (1, i64::MAX),
        raw::REDISMODULE_CONFIG_DEFAULT,
        &INITIAL_SIZE,
    ),
    // 0 means NONSCALING (Growth::from_expansion).
    Numeric::new(
        c"expansion",
        "EXPANSION",
        (0, u32::MAX as i64),
        raw::REDISMODULE_CONFIG_DEFAULT,
        &EXPANSION,
    ),
    Numeric::new(
        c"max-filter-bytes",
        "MAX_FILTER_BYTES",
        (64, i64::MAX),
        raw::REDISMODULE_CONFIG_MEMORY,
        &MAX_FILTER_BYTES,
    ),
    // RedisBloom's load argument; a cuckoo filter holds at most 65535 sub-filters.
    Numeric::new(
        c"cf-max-expansions",
        "CF_MAX_EXPANSIONS",
        (1, rsbloom_core::cuckoo::filter::MAX_FILTERS as i64),
        raw::REDISMODULE_CONFIG_DEFAULT,
        &CF_MAX_EXPANSIONS,
    ),
];

/// The entry of [`NUMERIC`] a callback's privdata points at.
fn numeric_of(privdata: *mut c_void) -> Option<&'static Numeric> {
    NUMERIC
        .iter()
        .find(|n| std::ptr::eq(n.cell, privdata.cast_const().cast()))
}

extern "C" fn get_numeric(_name: *const c_char, privdata: *mut c_void) -> c_longlong {
    no_unwind(0, || {
        numeric_of(privdata).map_or(0, |n| {
            n.cell.load(Relaxed).min(i64::MAX as u64) as c_longlong
        })
    })
}

extern "C" fn set_numeric(
    _name: *const c_char,
    val: c_longlong,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    const ERR: c_int = raw::Status::Err as c_int;
    no_unwind(ERR, || {
        let Some(n) = numeric_of(privdata) else {
            set_config_error(err, "unknown rsbloom config");
            return ERR;
        };
        // Redis checks the range before calling; checked again so the atomic never holds junk.
        let args::IntegerArg { min, max, .. } = n.load_arg;
        if !(min..=max).contains(&val) {
            let name = n.name.to_string_lossy();
            set_config_error(err, &format!("bf.{name} must be between {min} and {max}"));
            return ERR;
        }
        n.cell.store(val as u64, Relaxed);
        raw::Status::Ok as c_int
    })
}

/// Registers the module configs, then loads their values from redis.conf / the command line.
/// Call from OnLoad after [`apply_load_args`]: each config's default is the value the load
/// arguments left, so a config not set in redis.conf keeps it.
// `ctx` is only passed on to Redis, which requires OnLoad's live context.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn register(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    let ok = raw::Status::Ok as c_int;
    let default = CString::new(error_rate_text()).map_err(|e| e.to_string())?;
    // SAFETY: OnLoad's live context; NUL-terminated strings (Redis copies them); callbacks
    // with the signatures Redis expects; no privdata.
    let status = unsafe {
        raw::RedisModule_RegisterStringConfig.unwrap()(
            ctx,
            c"error-rate".as_ptr(),
            default.as_ptr(),
            raw::REDISMODULE_CONFIG_DEFAULT,
            Some(get_error_rate),
            Some(set_error_rate),
            None,
            std::ptr::null_mut(),
        )
    };
    if status != ok {
        return Err("could not register config bf.error-rate".into());
    }
    for n in &NUMERIC {
        let args::IntegerArg { min, max, .. } = n.load_arg;
        let current = n.cell.load(Relaxed).min(max as u64) as i64;
        // SAFETY: as above; privdata points at the config's static atomic, which lives for the
        // whole process and is only read through `numeric_of`.
        let status = unsafe {
            raw::RedisModule_RegisterNumericConfig.unwrap()(
                ctx,
                n.name.as_ptr(),
                current,
                n.flags,
                min,
                max,
                Some(get_numeric),
                Some(set_numeric),
                None,
                std::ptr::from_ref(n.cell).cast_mut().cast(),
            )
        };
        if status != ok {
            return Err(format!(
                "could not register config bf.{}",
                n.name.to_string_lossy()
            ));
        }
    }
    // SAFETY: OnLoad's live context, after every config is registered.
    if unsafe { raw::RedisModule_LoadConfigs.unwrap()(ctx) } != ok {
        return Err("invalid bf.* config value (see the log above)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_rate_text_round_trips() {
        for r in [0.01, 0.001, 0.1 + 0.2, 1e-10, 0.5] {
            let text = format!("{r:?}");
            assert_eq!(args::error_rate(text.as_bytes()), Some(r), "{text}");
        }
        assert_eq!(format!("{:?}", 0.01), "0.01");
    }
}
