//! Module settings: defaults for implicitly created filters and the per-filter memory limit.
//! Set by module load arguments (`loadmodule librsbloom.so ERROR_RATE 0.01 ...`), then by the
//! module configs `bf.error-rate`, `bf.initial-size`, `bf.expansion`, `bf.max-filter-bytes`
//! and `bf.cf-max-expansions` (redis.conf, the command line, `CONFIG SET`), which override them.
//!
//! Where the server takes unprefixed module configs (`REDISMODULE_CONFIG_UNPREFIXED`, Redis 8),
//! RedisBloom 8's eight names are registered too, with its defaults and ranges, so that a Redis 8
//! user's `redis.conf` and `CONFIG SET bf-error-rate 0.001` work as with RedisBloom:
//! `bf-error-rate`, `bf-initial-size`, `bf-expansion-factor` and `cf-max-expansions` are other
//! names for rsbloom's own settings, and `cf-bucket-size`, `cf-initial-size`,
//! `cf-max-iterations` and `cf-expansion-factor` set the cuckoo filters' defaults (CF.RESERVE's
//! options, and what CF.ADD creates), which are RedisBloom's fixed values elsewhere. The
//! capability is found by trying: a server without it refuses the flag (and logs one line).
//!
//! valkey-bloom's names (module `bf` too, so `bf.bloom-*` on every server) are registered as
//! well, so that a valkey-bloom user's config starts the server: `bf.bloom-capacity`,
//! `bf.bloom-expansion`, `bf.bloom-fp-rate` and `bf.bloom-memory-usage-limit` are other names for
//! rsbloom's `bf.initial-size`, `bf.expansion`, `bf.error-rate` and `bf.max-filter-bytes` (with
//! valkey-bloom's ranges); `bf.bloom-tightening-ratio`, `bf.bloom-use-random-seed` and
//! `bf.bloom-defrag-enabled` are accepted, kept and shown, and change nothing (the reasons are in
//! docs/configuration.md). They are hidden from `CONFIG GET bf.*`.

use std::ffi::{c_char, c_int, c_longlong, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

use redis_module::raw;

use crate::ffi::string_bytes;
use crate::ffi::unwind::no_unwind;
use rsbloom_core::args;
use rsbloom_core::{CuckooSpec, FilterSpec, Growth, Window};

/// Default per-filter limit: 2 GiB, room for a billion URLs at 1% (about 1.4 GB) while one
/// command cannot take the server down.
pub const DEFAULT_MAX_FILTER_BYTES: u64 = 2 << 30;

static ERROR_RATE_BITS: AtomicU64 = AtomicU64::new(0x3f847ae147ae147b); // 0.01
static INITIAL_SIZE: AtomicU64 = AtomicU64::new(100);
static EXPANSION: AtomicU64 = AtomicU64::new(2);
static MAX_FILTER_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILTER_BYTES);
static CF_MAX_EXPANSIONS: AtomicU64 = AtomicU64::new(32);
static AT_TOLERANCE: AtomicU64 = AtomicU64::new(1000);

/// Whether a setting's documented name (`bf.*`) was given while the config file was applied:
/// then it wins over any other name of that setting in the file, wherever they stand.
static ERROR_RATE_GIVEN: AtomicBool = AtomicBool::new(false);
static INITIAL_SIZE_GIVEN: AtomicBool = AtomicBool::new(false);
static EXPANSION_GIVEN: AtomicBool = AtomicBool::new(false);
static MAX_FILTER_BYTES_GIVEN: AtomicBool = AtomicBool::new(false);
static CF_MAX_EXPANSIONS_GIVEN: AtomicBool = AtomicBool::new(false);
static AT_TOLERANCE_GIVEN: AtomicBool = AtomicBool::new(false);
static CF_BUCKET_SIZE: AtomicU64 = AtomicU64::new(CuckooSpec::DEFAULT_BUCKET_SIZE as u64);
static CF_INITIAL_SIZE: AtomicU64 = AtomicU64::new(CuckooSpec::DEFAULT_CAPACITY);
static CF_MAX_ITERATIONS: AtomicU64 = AtomicU64::new(CuckooSpec::DEFAULT_MAX_ITERATIONS as u64);
static CF_EXPANSION: AtomicU64 = AtomicU64::new(CuckooSpec::DEFAULT_EXPANSION as u64);
/// Whether the server took RedisBloom 8's unprefixed config names.
static UNPREFIXED_CONFIGS: AtomicBool = AtomicBool::new(false);
/// How many of them it refused (a name it already had).
static SKIPPED_UNPREFIXED: AtomicU64 = AtomicU64::new(0);
/// Whether the server refused the probe's flag (and logged a warning saying so).
static PROBE_REFUSED: AtomicBool = AtomicBool::new(false);
/// Set while `LoadConfigs` applies redis.conf: two names of one setting each get a value then,
/// the file's or their default, so a name's default (the value the setting had when it was
/// registered) is not applied over the other name's value from the file.
static LOADING: AtomicBool = AtomicBool::new(false);
/// The error rate both its names were registered with.
static ERROR_RATE_REGISTERED: AtomicU64 = AtomicU64::new(0);

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

/// How far ahead of the server's clock (ms) a client's `AT` may be.
pub fn at_tolerance() -> u64 {
    AT_TOLERANCE.load(Relaxed)
}

/// RedisBloom's CF_MAX_EXPANSIONS: a cuckoo filter with this many sub-filters takes no more
/// adds, and (rsbloom) no insert grows it past this many.
pub fn cf_max_expansions() -> usize {
    CF_MAX_EXPANSIONS.load(Relaxed) as usize
}

/// The cuckoo filters' defaults: CF.RESERVE's options when not given, and (with `capacity`)
/// what an add to a missing key creates; `expansion` as asked, before rounding to a power of
/// two. RedisBloom's values unless the server took the `cf-*` configs.
pub fn cuckoo_defaults() -> CuckooSpec {
    CuckooSpec {
        capacity: CF_INITIAL_SIZE.load(Relaxed),
        bucket_size: CF_BUCKET_SIZE.load(Relaxed) as u8,
        max_iterations: CF_MAX_ITERATIONS.load(Relaxed) as u16,
        expansion: CF_EXPANSION.load(Relaxed) as u16,
    }
}

/// Which of RedisBloom 8's unprefixed config names the server took, for the load log line:
/// `no`, `yes`, or `yes, N of 8` where some collided with rsbloom's own names.
pub fn unprefixed_configs() -> String {
    match (
        UNPREFIXED_CONFIGS.load(Relaxed),
        SKIPPED_UNPREFIXED.load(Relaxed),
    ) {
        // Redis 7 and Valkey 8 log the refusal of the probe's flag before this line.
        (false, _) if PROBE_REFUSED.load(Relaxed) => "no (this server takes none: the \"Invalid \
             flag(s) for configuration\" line above is rsbloom's probe for them, and harmless)"
            .into(),
        (false, _) => "no".into(),
        (true, 0) => "yes".into(),
        (true, skipped) => format!("yes, {} of 8", 8 - skipped),
    }
}

/// The filter an add to a missing key creates: the module defaults.
pub fn default_spec() -> FilterSpec {
    FilterSpec {
        error: error_rate(),
        capacity: initial_size(),
        growth: Growth::from_expansion(expansion()),
        window: Window::Unbounded,
        refresh: true,
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

/// Another name of the error rate (RedisBloom 8's `bf-error-rate`, valkey-bloom's
/// `bf.bloom-fp-rate`), under [`Alias`]'s rule: its callbacks' privdata.
struct RateName {
    used: AtomicBool,
    pending: Mutex<Option<u64>>,
}

impl RateName {
    const fn new() -> Self {
        RateName {
            used: AtomicBool::new(false),
            pending: Mutex::new(None),
        }
    }
}

/// `bf-error-rate`, then `bf.bloom-fp-rate`.
static RATE_NAMES: [RateName; 2] = [RateName::new(), RateName::new()];

/// The other name of the error rate a callback's privdata points at; None for
/// `bf.error-rate` itself.
fn rate_name(privdata: *mut c_void) -> Option<&'static RateName> {
    RATE_NAMES
        .iter()
        .find(|r| std::ptr::eq(*r, privdata.cast_const().cast()))
}

extern "C" fn get_error_rate(
    _name: *const c_char,
    privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    no_unwind(std::ptr::null_mut(), || {
        let text = match rate_name(privdata) {
            Some(r) if !r.used.load(Relaxed) => {
                format!("{:?}", f64::from_bits(ERROR_RATE_REGISTERED.load(Relaxed)))
            }
            _ => error_rate_text(),
        };
        config_string(&ERROR_RATE_STRING, &text)
    })
}

/// A string config's value for a get callback: a new string in `slot`, whose previous one (an
/// earlier get's, which Redis has copied already) is freed.
fn config_string(
    slot: &AtomicPtr<raw::RedisModuleString>,
    text: &str,
) -> *mut raw::RedisModuleString {
    // SAFETY: a NULL context creates an unmanaged string from a valid buffer.
    let new = unsafe {
        raw::RedisModule_CreateString.unwrap()(
            std::ptr::null_mut(),
            text.as_ptr().cast::<c_char>(),
            text.len(),
        )
    };
    let old = slot.swap(new, Relaxed);
    if !old.is_null() {
        // SAFETY: `old` was created here by an earlier get, which Redis has finished with (it
        // copies the value before returning), and it is freed exactly once.
        unsafe { raw::RedisModule_FreeString.unwrap()(std::ptr::null_mut(), old) };
    }
    new
}

extern "C" fn set_error_rate(
    _name: *const c_char,
    val: *mut raw::RedisModuleString,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    const ERR: c_int = raw::Status::Err as c_int;
    let registered = ERROR_RATE_REGISTERED.load(Relaxed);
    let loading = LOADING.load(Relaxed);
    let Some(name) = rate_name(privdata) else {
        let before = ERROR_RATE_BITS.load(Relaxed);
        let status = set_rate(
            val,
            err,
            &ERROR_RATE_BITS,
            Some(registered),
            ERROR_RATE_CONFIG_ERROR,
        );
        let stored = ERROR_RATE_BITS.load(Relaxed);
        if loading && status != ERR && (stored != before || stored != registered) {
            ERROR_RATE_GIVEN.store(true, Relaxed);
        }
        return status;
    };
    // Another name: checked as the rate is, held until the file is applied when loading.
    let held = AtomicU64::new(ERROR_RATE_BITS.load(Relaxed));
    let status = set_rate(val, err, &held, Some(registered), ERROR_RATE_CONFIG_ERROR);
    if status != ERR && (!loading || held.load(Relaxed) != registered) {
        name.used.store(true, Relaxed);
        if loading {
            *name.pending.lock().unwrap_or_else(PoisonError::into_inner) = Some(held.load(Relaxed));
        } else {
            ERROR_RATE_BITS.store(held.load(Relaxed), Relaxed);
        }
    }
    status
}

/// A string config holding a number in (0, 1): stores `val` in `cell`, or replies `error`.
/// While redis.conf is applied, the value `registered` (the default the config was registered
/// with, when the setting has several names) is skipped, so that it does not undo another
/// name's value from the file.
fn set_rate(
    val: *mut raw::RedisModuleString,
    err: *mut *mut raw::RedisModuleString,
    cell: &AtomicU64,
    registered: Option<u64>,
    error: &str,
) -> c_int {
    const ERR: c_int = raw::Status::Err as c_int;
    no_unwind(ERR, || {
        // SAFETY: Redis passes a valid string that lives for the whole call.
        match args::error_rate(unsafe { string_bytes(val) }) {
            Some(r) if LOADING.load(Relaxed) && Some(r.to_bits()) == registered => {
                raw::Status::Ok as c_int
            }
            Some(r) => {
                cell.store(r.to_bits(), Relaxed);
                raw::Status::Ok as c_int
            }
            None => {
                set_config_error(err, error);
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
    /// Set when the name is given in the config file.
    given: &'static AtomicBool,
    /// The default it was registered with.
    registered: AtomicI64,
}

impl Numeric {
    const fn new(
        name: &'static CStr,
        load_arg: &'static str,
        (min, max): (i64, i64),
        flags: u32,
        (cell, given): (&'static AtomicU64, &'static AtomicBool),
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
            given,
            registered: AtomicI64::new(0),
        }
    }
}

/// Every numeric setting, as a config and as a load argument.
static NUMERIC: [Numeric; 5] = [
    Numeric::new(
        c"initial-size",
        "INITIAL_SIZE",
        (1, i64::MAX),
        raw::REDISMODULE_CONFIG_DEFAULT,
        (&INITIAL_SIZE, &INITIAL_SIZE_GIVEN),
    ),
    // 0 means NONSCALING (Growth::from_expansion).
    Numeric::new(
        c"expansion",
        "EXPANSION",
        (0, u32::MAX as i64),
        raw::REDISMODULE_CONFIG_DEFAULT,
        (&EXPANSION, &EXPANSION_GIVEN),
    ),
    Numeric::new(
        c"max-filter-bytes",
        "MAX_FILTER_BYTES",
        (64, i64::MAX),
        raw::REDISMODULE_CONFIG_MEMORY,
        (&MAX_FILTER_BYTES, &MAX_FILTER_BYTES_GIVEN),
    ),
    // RedisBloom's load argument; a cuckoo filter holds at most 65535 sub-filters.
    Numeric::new(
        c"cf-max-expansions",
        "CF_MAX_EXPANSIONS",
        (1, rsbloom_core::cuckoo::filter::MAX_FILTERS as i64),
        raw::REDISMODULE_CONFIG_DEFAULT,
        (&CF_MAX_EXPANSIONS, &CF_MAX_EXPANSIONS_GIVEN),
    ),
    // Milliseconds; up to the latest clock a window takes.
    Numeric::new(
        c"at-tolerance",
        "AT_TOLERANCE",
        (0, rsbloom_core::window::common::MAX_CLOCK as i64),
        raw::REDISMODULE_CONFIG_DEFAULT,
        (&AT_TOLERANCE, &AT_TOLERANCE_GIVEN),
    ),
];

/// Another name of a numeric setting (RedisBloom 8's unprefixed names, valkey-bloom's): its
/// name, that module's range, and the setting it names.
///
/// One rule for two names of a setting: its documented name (`bf.*`) wins. In the config
/// file (or on the command line) another name applies only when the documented one is not
/// given, wherever the lines stand (RedisBloom 8's over valkey-bloom's when both are); by
/// `CONFIG SET`, the latest set wins. A name reads the setting (within its own range: a value
/// past it reads as the range's end) once it has been used, in the file, on the command line
/// or by `CONFIG SET`; a name never used reads its default, so `CONFIG REWRITE` (which writes
/// every name whose value is not its default) writes the documented names and the names a
/// user used, and an edit of a documented name in the file takes effect at the next start.
/// RedisBloom 8's cuckoo names, which are their settings' only names, always read the setting.
struct Alias {
    name: &'static CStr,
    min: i64,
    max: i64,
    cell: &'static AtomicU64,
    /// The documented name's "given" flag; None when this is the setting's only name.
    twin: Option<&'static AtomicBool>,
    /// Whether this name was used since the start.
    used: AtomicBool,
    /// A value from the config file, held until the file is applied (see [`resolve_aliases`]).
    pending: Mutex<Option<u64>>,
    /// The default it was registered with.
    registered: AtomicI64,
}

impl Alias {
    const fn new(
        name: &'static CStr,
        (min, max): (i64, i64),
        cell: &'static AtomicU64,
        twin: Option<&'static AtomicBool>,
    ) -> Self {
        Alias {
            name,
            min,
            max,
            cell,
            twin,
            used: AtomicBool::new(false),
            pending: Mutex::new(None),
            registered: AtomicI64::new(0),
        }
    }

    /// What CONFIG GET (and so CONFIG REWRITE) reads: the setting, within this name's range
    /// (a value a load argument put past that module's range must not stop the next start),
    /// once the name was used; its default before.
    fn value(&self) -> i64 {
        if self.twin.is_some() && !self.used.load(Relaxed) {
            return self.registered.load(Relaxed);
        }
        (self.cell.load(Relaxed).min(i64::MAX as u64) as i64).clamp(self.min, self.max)
    }

    /// The value of the setting now (what `value` reads once used), for registration.
    fn setting(&self) -> i64 {
        (self.cell.load(Relaxed).min(i64::MAX as u64) as i64).clamp(self.min, self.max)
    }
}

/// RedisBloom 8's numeric configs (its `bf-error-rate` is a string, as rsbloom's is).
static UNPREFIXED: [Alias; 7] = [
    Alias::new(
        c"bf-initial-size",
        (1, 1_048_576),
        &INITIAL_SIZE,
        Some(&INITIAL_SIZE_GIVEN),
    ),
    Alias::new(
        c"bf-expansion-factor",
        (0, 32_768),
        &EXPANSION,
        Some(&EXPANSION_GIVEN),
    ),
    Alias::new(c"cf-bucket-size", (1, 255), &CF_BUCKET_SIZE, None),
    Alias::new(c"cf-initial-size", (1, 1_048_576), &CF_INITIAL_SIZE, None),
    Alias::new(c"cf-max-iterations", (1, 65_535), &CF_MAX_ITERATIONS, None),
    Alias::new(c"cf-expansion-factor", (0, 32_768), &CF_EXPANSION, None),
    Alias::new(
        c"cf-max-expansions",
        (1, 65_535),
        &CF_MAX_EXPANSIONS,
        Some(&CF_MAX_EXPANSIONS_GIVEN),
    ),
];

/// valkey-bloom's numeric configs (`bf.` + name), with its ranges; its memory limit takes
/// rsbloom's floor of 64 bytes (0 would refuse every filter).
static VALKEY_NAMES: [Alias; 3] = [
    Alias::new(
        c"bloom-capacity",
        (1, i64::MAX),
        &INITIAL_SIZE,
        Some(&INITIAL_SIZE_GIVEN),
    ),
    Alias::new(
        c"bloom-expansion",
        (1, u32::MAX as i64),
        &EXPANSION,
        Some(&EXPANSION_GIVEN),
    ),
    Alias::new(
        c"bloom-memory-usage-limit",
        (64, i64::MAX),
        &MAX_FILTER_BYTES,
        Some(&MAX_FILTER_BYTES_GIVEN),
    ),
];

/// The alias a callback's privdata points at.
fn alias_of(privdata: *mut c_void) -> Option<&'static Alias> {
    UNPREFIXED
        .iter()
        .chain(&VALKEY_NAMES)
        .find(|u| std::ptr::eq(*u, privdata.cast_const().cast()))
}

extern "C" fn get_alias(_name: *const c_char, privdata: *mut c_void) -> c_longlong {
    no_unwind(0, || {
        alias_of(privdata).map_or(0, |u| u.value() as c_longlong)
    })
}

extern "C" fn set_alias(
    _name: *const c_char,
    val: c_longlong,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    const ERR: c_int = raw::Status::Err as c_int;
    no_unwind(ERR, || {
        let Some(u) = alias_of(privdata) else {
            set_config_error(err, "unknown rsbloom config");
            return ERR;
        };
        if LOADING.load(Relaxed) && val == u.registered.load(Relaxed) {
            return raw::Status::Ok as c_int;
        }
        // Redis checks the range before calling; checked again so the atomic never holds junk.
        if !(u.min..=u.max).contains(&val) {
            let name = u.name.to_string_lossy();
            set_config_error(
                err,
                &format!("{name} must be between {} and {}", u.min, u.max),
            );
            return ERR;
        }
        u.used.store(true, Relaxed);
        if LOADING.load(Relaxed) && u.twin.is_some() {
            *u.pending.lock().unwrap_or_else(PoisonError::into_inner) = Some(val as u64);
        } else {
            u.cell.store(val as u64, Relaxed);
        }
        raw::Status::Ok as c_int
    })
}

/// The name of the probe for unprefixed configs.
const UNPREFIXED_PROBE: &CStr = c"rsbloom-unprefixed-probe";

extern "C" fn get_probe(_name: *const c_char, _privdata: *mut c_void) -> c_int {
    0
}

extern "C" fn set_probe(
    _name: *const c_char,
    _val: c_int,
    _privdata: *mut c_void,
    _err: *mut *mut raw::RedisModuleString,
) -> c_int {
    raw::Status::Ok as c_int
}

/// Whether `CONFIG GET name` answers a value.
fn server_knows_config(ctx: *mut raw::RedisModuleCtx, name: &CStr) -> bool {
    // SAFETY: OnLoad's live context; "cc" takes two C strings, valid for the call.
    let reply = unsafe {
        raw::RedisModule_Call.unwrap()(
            ctx,
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

/// Registers the error rate as the string config `name` with `flags`; `shown` names it in the
/// error.
fn register_error_rate(
    ctx: *mut raw::RedisModuleCtx,
    name: &CStr,
    flags: u32,
    (shown, other): (&str, Option<&'static RateName>),
) -> Result<(), String> {
    let default = CString::new(error_rate_text()).map_err(|e| e.to_string())?;
    // SAFETY: OnLoad's live context; NUL-terminated strings (Redis copies them); callbacks
    // with the signatures Redis expects; no privdata.
    let status = unsafe {
        raw::RedisModule_RegisterStringConfig.unwrap()(
            ctx,
            name.as_ptr(),
            default.as_ptr(),
            flags,
            Some(get_error_rate),
            Some(set_error_rate),
            None,
            other.map_or(std::ptr::null_mut(), |r| {
                std::ptr::from_ref(r).cast_mut().cast()
            }),
        )
    };
    if status != raw::Status::Ok as c_int {
        return Err(format!("could not register config {shown}"));
    }
    Ok(())
}

/// Registers RedisBloom 8's unprefixed names where the server takes them; false (and nothing
/// registered) where it does not. The first registration is the probe.
fn register_unprefixed(ctx: *mut raw::RedisModuleCtx) -> Result<bool, String> {
    let ok = raw::Status::Ok as c_int;
    let flags = raw::REDISMODULE_CONFIG_UNPREFIXED;
    // The probe: a hidden, inert config. A server may take the flag and prefix the name all
    // the same (Valkey 9.1 registers `bf.<name>`), so the unprefixed name must answer
    // CONFIG GET; hidden, it stays out of CONFIG GET's patterns and CONFIG REWRITE either way.
    // SAFETY: as in `register`; inert callbacks, no privdata.
    let probe = unsafe {
        raw::RedisModule_RegisterBoolConfig.unwrap()(
            ctx,
            UNPREFIXED_PROBE.as_ptr(),
            0,
            flags | raw::REDISMODULE_CONFIG_HIDDEN,
            Some(get_probe),
            Some(set_probe),
            None,
            std::ptr::null_mut(),
        )
    };
    PROBE_REFUSED.store(probe != ok, Relaxed);
    if probe != ok || !server_knows_config(ctx, UNPREFIXED_PROBE) {
        return Ok(false);
    }
    register_error_rate(
        ctx,
        c"bf-error-rate",
        flags,
        ("bf-error-rate", Some(&RATE_NAMES[0])),
    )?;
    // Valkey 9 keeps one namespace for a module's names with and without its prefix:
    // `cf-max-expansions` is rsbloom's `bf.cf-max-expansions` there, which stays.
    let refused = register_aliases(ctx, &UNPREFIXED, flags);
    SKIPPED_UNPREFIXED.store(refused.len() as u64, Relaxed);
    Ok(true)
}

/// Registers `aliases` with `flags`; returns the names the server refused.
fn register_aliases(
    ctx: *mut raw::RedisModuleCtx,
    aliases: &'static [Alias],
    flags: u32,
) -> Vec<&'static CStr> {
    let mut refused = Vec::new();
    for u in aliases {
        let current = u.setting();
        u.registered.store(current, Relaxed);
        // SAFETY: as in `register`; privdata points at the static entry, which lives for the
        // whole process and is only compared against.
        let status = unsafe {
            raw::RedisModule_RegisterNumericConfig.unwrap()(
                ctx,
                u.name.as_ptr(),
                current,
                flags,
                u.min,
                u.max,
                Some(get_alias),
                Some(set_alias),
                None,
                std::ptr::from_ref(u).cast_mut().cast(),
            )
        };
        if status != raw::Status::Ok as c_int {
            refused.push(u.name);
        }
    }
    refused
}

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
        if LOADING.load(Relaxed) && val == n.registered.load(Relaxed) {
            return raw::Status::Ok as c_int;
        }
        // Redis checks the range before calling; checked again so the atomic never holds junk.
        let args::IntegerArg { min, max, .. } = n.load_arg;
        if !(min..=max).contains(&val) {
            let name = n.name.to_string_lossy();
            set_config_error(err, &format!("bf.{name} must be between {min} and {max}"));
            return ERR;
        }
        n.cell.store(val as u64, Relaxed);
        if LOADING.load(Relaxed) {
            n.given.store(true, Relaxed);
        }
        raw::Status::Ok as c_int
    })
}

/// valkey-bloom's `bf.bloom-tightening-ratio`: accepted (a number in (0, 1), as valkey-bloom
/// checks it) and shown, and changing nothing: new filters are rsbloom's, whose links tighten
/// as its accuracy rule says, and a valkey-bloom filter keeps the ratio it was made with.
static VALKEY_TIGHTENING_BITS: AtomicU64 = AtomicU64::new(0x3fe0_0000_0000_0000); // 0.5
static VALKEY_TIGHTENING_STRING: AtomicPtr<raw::RedisModuleString> =
    AtomicPtr::new(std::ptr::null_mut());
/// valkey-bloom's `bf.bloom-use-random-seed`: accepted and shown, changing nothing (rsbloom
/// draws a random seed for every filter; one seed for all would let anyone who knows it pick
/// items that collide).
static VALKEY_USE_RANDOM_SEED: AtomicBool = AtomicBool::new(true);
/// valkey-bloom's `bf.bloom-defrag-enabled`: accepted and shown, changing nothing (rsbloom has
/// no defrag callback: a filter's bits are a few large allocations).
static VALKEY_DEFRAG: AtomicBool = AtomicBool::new(true);
/// The kept boolean configs.
static VALKEY_BOOLS: [(&CStr, &AtomicBool); 2] = [
    (c"bloom-use-random-seed", &VALKEY_USE_RANDOM_SEED),
    (c"bloom-defrag-enabled", &VALKEY_DEFRAG),
];

extern "C" fn get_tightening(
    _name: *const c_char,
    _privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    no_unwind(std::ptr::null_mut(), || {
        let ratio = f64::from_bits(VALKEY_TIGHTENING_BITS.load(Relaxed));
        config_string(&VALKEY_TIGHTENING_STRING, &format!("{ratio:?}"))
    })
}

extern "C" fn set_tightening(
    _name: *const c_char,
    val: *mut raw::RedisModuleString,
    _privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    let error = "bf.bloom-tightening-ratio must be a number between 0 and 1, exclusive";
    set_rate(val, err, &VALKEY_TIGHTENING_BITS, None, error)
}

/// The kept boolean a callback's privdata points at.
fn kept_bool(privdata: *mut c_void) -> Option<&'static AtomicBool> {
    VALKEY_BOOLS
        .iter()
        .map(|(_, cell)| *cell)
        .find(|cell| std::ptr::eq(*cell, privdata.cast_const().cast()))
}

extern "C" fn get_kept_bool(_name: *const c_char, privdata: *mut c_void) -> c_int {
    no_unwind(0, || {
        kept_bool(privdata).map_or(0, |c| c_int::from(c.load(Relaxed)))
    })
}

extern "C" fn set_kept_bool(
    _name: *const c_char,
    val: c_int,
    privdata: *mut c_void,
    _err: *mut *mut raw::RedisModuleString,
) -> c_int {
    no_unwind(raw::Status::Err as c_int, || {
        if let Some(cell) = kept_bool(privdata) {
            cell.store(val != 0, Relaxed);
        }
        raw::Status::Ok as c_int
    })
}

/// Registers valkey-bloom's config names (see the module docs above), hidden: a config file,
/// the command line, CONFIG SET and CONFIG GET take them by name, while `CONFIG GET bf.*`
/// lists rsbloom's own names only (CONFIG REWRITE still writes every changed name).
fn register_valkey_names(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    let flags = raw::REDISMODULE_CONFIG_HIDDEN;
    register_error_rate(
        ctx,
        c"bloom-fp-rate",
        flags,
        ("bf.bloom-fp-rate", Some(&RATE_NAMES[1])),
    )?;
    if let Some(name) = register_aliases(ctx, &VALKEY_NAMES, flags).first() {
        return Err(format!(
            "could not register config bf.{}",
            name.to_string_lossy()
        ));
    }
    let ok = raw::Status::Ok as c_int;
    // SAFETY: as in `register`; NUL-terminated strings (Redis copies them), callbacks with the
    // signatures Redis expects, no privdata.
    let status = unsafe {
        raw::RedisModule_RegisterStringConfig.unwrap()(
            ctx,
            c"bloom-tightening-ratio".as_ptr(),
            c"0.5".as_ptr(),
            flags,
            Some(get_tightening),
            Some(set_tightening),
            None,
            std::ptr::null_mut(),
        )
    };
    if status != ok {
        return Err("could not register config bf.bloom-tightening-ratio".into());
    }
    for (name, cell) in &VALKEY_BOOLS {
        // SAFETY: as above; privdata points at the static atomic, which lives for the whole
        // process and is only compared against.
        let status = unsafe {
            raw::RedisModule_RegisterBoolConfig.unwrap()(
                ctx,
                name.as_ptr(),
                c_int::from(cell.load(Relaxed)),
                flags,
                Some(get_kept_bool),
                Some(set_kept_bool),
                None,
                std::ptr::from_ref(*cell).cast_mut().cast(),
            )
        };
        if status != ok {
            return Err(format!(
                "could not register config bf.{}",
                name.to_string_lossy()
            ));
        }
    }
    Ok(())
}

/// Registers the module configs, then loads their values from redis.conf / the command line.
/// Call from OnLoad after [`apply_load_args`]: each config's default is the value the load
/// arguments left, so a config not set in redis.conf keeps it.
// `ctx` is only passed on to Redis, which requires OnLoad's live context.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn register(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    LOADING.store(true, Relaxed);
    let result = register_and_load(ctx);
    LOADING.store(false, Relaxed);
    result
}

fn register_and_load(ctx: *mut raw::RedisModuleCtx) -> Result<(), String> {
    let ok = raw::Status::Ok as c_int;
    ERROR_RATE_REGISTERED.store(ERROR_RATE_BITS.load(Relaxed), Relaxed);
    register_error_rate(
        ctx,
        c"error-rate",
        raw::REDISMODULE_CONFIG_DEFAULT,
        ("bf.error-rate", None),
    )?;
    for n in &NUMERIC {
        let args::IntegerArg { min, max, .. } = n.load_arg;
        let current = n.cell.load(Relaxed).min(max as u64) as i64;
        n.registered.store(current, Relaxed);
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
    register_valkey_names(ctx)?;
    UNPREFIXED_CONFIGS.store(register_unprefixed(ctx)?, Relaxed);
    // SAFETY: OnLoad's live context, after every config is registered.
    if unsafe { raw::RedisModule_LoadConfigs.unwrap()(ctx) } != ok {
        return Err("invalid bf.* config value (see the log above)".into());
    }
    resolve_aliases();
    Ok(())
}

/// Applies the other names' values the config file gave, where the documented name was not
/// given ([`Alias`]'s rule): valkey-bloom's, then RedisBloom 8's, which so win over them.
fn resolve_aliases() {
    for u in VALKEY_NAMES.iter().chain(&UNPREFIXED) {
        let pending = u
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let (Some(value), Some(twin)) = (pending, u.twin) {
            if !twin.load(Relaxed) {
                u.cell.store(value, Relaxed);
            }
        }
    }
    for rate in RATE_NAMES.iter().rev() {
        let pending = rate
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(bits) = pending {
            if !ERROR_RATE_GIVEN.load(Relaxed) {
                ERROR_RATE_BITS.store(bits, Relaxed);
            }
        }
    }
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
