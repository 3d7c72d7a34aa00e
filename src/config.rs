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

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

use crate::ffi::config::{flags, Hooks, Registrar, StringHooks};
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
/// `bf.expandable`: whether an add to a missing key (and a creating BF.INSERT without
/// EXPANSION or NONSCALING) makes a growing filter instead of a RedisBloom chain.
static EXPANDABLE: AtomicBool = AtomicBool::new(false);

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

/// Whether new filters an add creates grow (`bf.expandable`).
pub fn expandable() -> bool {
    EXPANDABLE.load(Relaxed)
}

/// The growth of a filter an add creates: `EXPANDABLE` under `bf.expandable yes`, else the
/// expansion setting's.
pub fn default_growth() -> Growth {
    if expandable() {
        Growth::Expandable
    } else {
        Growth::from_expansion(expansion())
    }
}

/// The filter an add to a missing key creates: the module defaults.
pub fn default_spec() -> FilterSpec {
    FilterSpec {
        error: error_rate(),
        capacity: initial_size(),
        growth: default_growth(),
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

/// The error rate's three names: `bf.error-rate`, RedisBloom 8's `bf-error-rate` and
/// valkey-bloom's `bf.bloom-fp-rate` (the other two under [`Alias`]'s rule).
static ERROR_RATE_HOOKS: [StringHooks; 3] = [
    StringHooks::new(rate_text, set_error_rate, 0),
    StringHooks::new(rate_text, set_error_rate, 1),
    StringHooks::new(rate_text, set_error_rate, 2),
];

/// Another name of the error rate (`bf-error-rate`, `bf.bloom-fp-rate`), under [`Alias`]'s
/// rule.
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

/// `bf-error-rate`, then `bf.bloom-fp-rate` (hooks 1 and 2).
static RATE_NAMES: [RateName; 2] = [RateName::new(), RateName::new()];

/// What CONFIG GET reads for name `id` of the error rate: another name never used reads its
/// default.
fn rate_text(id: usize) -> String {
    match id.checked_sub(1).map(|i| &RATE_NAMES[i]) {
        Some(r) if !r.used.load(Relaxed) => {
            format!("{:?}", f64::from_bits(ERROR_RATE_REGISTERED.load(Relaxed)))
        }
        _ => error_rate_text(),
    }
}

fn set_error_rate(id: usize, val: &[u8]) -> Result<(), String> {
    let registered = ERROR_RATE_REGISTERED.load(Relaxed);
    let loading = LOADING.load(Relaxed);
    let Some(name) = id.checked_sub(1).map(|i| &RATE_NAMES[i]) else {
        let before = ERROR_RATE_BITS.load(Relaxed);
        set_rate(
            val,
            &ERROR_RATE_BITS,
            Some(registered),
            ERROR_RATE_CONFIG_ERROR,
        )?;
        let stored = ERROR_RATE_BITS.load(Relaxed);
        if loading && (stored != before || stored != registered) {
            ERROR_RATE_GIVEN.store(true, Relaxed);
        }
        return Ok(());
    };
    // Another name: checked as the rate is, held until the file is applied when loading.
    let held = AtomicU64::new(ERROR_RATE_BITS.load(Relaxed));
    set_rate(val, &held, Some(registered), ERROR_RATE_CONFIG_ERROR)?;
    if !loading || held.load(Relaxed) != registered {
        name.used.store(true, Relaxed);
        if loading {
            *name.pending.lock().unwrap_or_else(PoisonError::into_inner) = Some(held.load(Relaxed));
        } else {
            ERROR_RATE_BITS.store(held.load(Relaxed), Relaxed);
        }
    }
    Ok(())
}

/// A string config holding a number in (0, 1): stores `val` in `cell`, or refuses with
/// `error`. While redis.conf is applied, the value `registered` (the default the config was
/// registered with, when the setting has several names) is skipped, so that it does not undo
/// another name's value from the file.
fn set_rate(
    val: &[u8],
    cell: &AtomicU64,
    registered: Option<u64>,
    error: &str,
) -> Result<(), String> {
    match args::error_rate(val) {
        Some(r) if LOADING.load(Relaxed) && Some(r.to_bits()) == registered => Ok(()),
        Some(r) => {
            cell.store(r.to_bits(), Relaxed);
            Ok(())
        }
        None => Err(error.into()),
    }
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
    /// Its callbacks' functions; `id` is its place in [`NUMERIC`].
    hooks: Hooks<i64>,
}

impl Numeric {
    const fn new(
        id: usize,
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
                memory: flags & flags::MEMORY != 0,
            },
            flags,
            cell,
            given,
            registered: AtomicI64::new(0),
            hooks: Hooks {
                get: get_numeric,
                set: set_numeric,
                id,
            },
        }
    }
}

/// Every numeric setting, as a config and as a load argument.
static NUMERIC: [Numeric; 5] = [
    Numeric::new(
        0,
        c"initial-size",
        "INITIAL_SIZE",
        (1, i64::MAX),
        flags::DEFAULT,
        (&INITIAL_SIZE, &INITIAL_SIZE_GIVEN),
    ),
    // 0 means NONSCALING (Growth::from_expansion).
    Numeric::new(
        1,
        c"expansion",
        "EXPANSION",
        (0, u32::MAX as i64),
        flags::DEFAULT,
        (&EXPANSION, &EXPANSION_GIVEN),
    ),
    Numeric::new(
        2,
        c"max-filter-bytes",
        "MAX_FILTER_BYTES",
        (64, i64::MAX),
        flags::MEMORY,
        (&MAX_FILTER_BYTES, &MAX_FILTER_BYTES_GIVEN),
    ),
    // RedisBloom's load argument; a cuckoo filter holds at most 65535 sub-filters.
    Numeric::new(
        3,
        c"cf-max-expansions",
        "CF_MAX_EXPANSIONS",
        (1, rsbloom_core::cuckoo::MAX_FILTERS as i64),
        flags::DEFAULT,
        (&CF_MAX_EXPANSIONS, &CF_MAX_EXPANSIONS_GIVEN),
    ),
    // Milliseconds; up to the latest clock a window takes.
    Numeric::new(
        4,
        c"at-tolerance",
        "AT_TOLERANCE",
        (0, rsbloom_core::window::common::MAX_CLOCK as i64),
        flags::DEFAULT,
        (&AT_TOLERANCE, &AT_TOLERANCE_GIVEN),
    ),
];

fn get_numeric(id: usize) -> i64 {
    NUMERIC[id].cell.load(Relaxed).min(i64::MAX as u64) as i64
}

fn set_numeric(id: usize, val: i64) -> Result<(), String> {
    let n = &NUMERIC[id];
    if LOADING.load(Relaxed) && val == n.registered.load(Relaxed) {
        return Ok(());
    }
    // Redis checks the range before calling; checked again so the atomic never holds junk.
    let args::IntegerArg { min, max, .. } = n.load_arg;
    if !(min..=max).contains(&val) {
        let name = n.name.to_string_lossy();
        return Err(format!("bf.{name} must be between {min} and {max}"));
    }
    n.cell.store(val as u64, Relaxed);
    if LOADING.load(Relaxed) {
        n.given.store(true, Relaxed);
    }
    Ok(())
}

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
    /// Its callbacks' functions; `id` is its place in [`UNPREFIXED`] then [`VALKEY_NAMES`].
    hooks: Hooks<i64>,
}

impl Alias {
    const fn new(
        id: usize,
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
            hooks: Hooks {
                get: get_alias,
                set: set_alias,
                id,
            },
        }
    }

    /// What CONFIG GET (and so CONFIG REWRITE) reads: the setting, within this name's range
    /// (a value a load argument put past that module's range must not stop the next start),
    /// once the name was used; its default before.
    fn value(&self) -> i64 {
        if self.twin.is_some() && !self.used.load(Relaxed) {
            return self.registered.load(Relaxed);
        }
        self.setting()
    }

    /// The value of the setting now (what `value` reads once used), for registration.
    fn setting(&self) -> i64 {
        (self.cell.load(Relaxed).min(i64::MAX as u64) as i64).clamp(self.min, self.max)
    }
}

/// RedisBloom 8's numeric configs (its `bf-error-rate` is a string, as rsbloom's is).
static UNPREFIXED: [Alias; 7] = [
    Alias::new(
        0,
        c"bf-initial-size",
        (1, 1_048_576),
        &INITIAL_SIZE,
        Some(&INITIAL_SIZE_GIVEN),
    ),
    Alias::new(
        1,
        c"bf-expansion-factor",
        (0, 32_768),
        &EXPANSION,
        Some(&EXPANSION_GIVEN),
    ),
    Alias::new(2, c"cf-bucket-size", (1, 255), &CF_BUCKET_SIZE, None),
    Alias::new(
        3,
        c"cf-initial-size",
        (1, 1_048_576),
        &CF_INITIAL_SIZE,
        None,
    ),
    Alias::new(
        4,
        c"cf-max-iterations",
        (1, 65_535),
        &CF_MAX_ITERATIONS,
        None,
    ),
    Alias::new(5, c"cf-expansion-factor", (0, 32_768), &CF_EXPANSION, None),
    Alias::new(
        6,
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
        7,
        c"bloom-capacity",
        (1, i64::MAX),
        &INITIAL_SIZE,
        Some(&INITIAL_SIZE_GIVEN),
    ),
    Alias::new(
        8,
        c"bloom-expansion",
        (1, u32::MAX as i64),
        &EXPANSION,
        Some(&EXPANSION_GIVEN),
    ),
    Alias::new(
        9,
        c"bloom-memory-usage-limit",
        (64, i64::MAX),
        &MAX_FILTER_BYTES,
        Some(&MAX_FILTER_BYTES_GIVEN),
    ),
];

/// The alias of hooks `id`.
fn alias(id: usize) -> &'static Alias {
    UNPREFIXED
        .get(id)
        .unwrap_or_else(|| &VALKEY_NAMES[id - UNPREFIXED.len()])
}

fn get_alias(id: usize) -> i64 {
    alias(id).value()
}

fn set_alias(id: usize, val: i64) -> Result<(), String> {
    let u = alias(id);
    if LOADING.load(Relaxed) && val == u.registered.load(Relaxed) {
        return Ok(());
    }
    // Redis checks the range before calling; checked again so the atomic never holds junk.
    if !(u.min..=u.max).contains(&val) {
        let name = u.name.to_string_lossy();
        return Err(format!("{name} must be between {} and {}", u.min, u.max));
    }
    u.used.store(true, Relaxed);
    if LOADING.load(Relaxed) && u.twin.is_some() {
        *u.pending.lock().unwrap_or_else(PoisonError::into_inner) = Some(val as u64);
    } else {
        u.cell.store(val as u64, Relaxed);
    }
    Ok(())
}

/// The name of the probe for unprefixed configs.
const UNPREFIXED_PROBE: &CStr = c"rsbloom-unprefixed-probe";

/// The probe's hooks: it reads false and takes anything.
static PROBE_HOOKS: Hooks<bool> = Hooks {
    get: |_| false,
    set: |_, _| Ok(()),
    id: 0,
};

/// Registers the error rate as the string config `name` (hooks `id`) with `flags`; `shown`
/// names it in the error.
fn register_error_rate(
    registrar: &Registrar,
    name: &CStr,
    flags: u32,
    (shown, id): (&str, usize),
) -> Result<(), String> {
    if !registrar.string(name, &error_rate_text(), flags, &ERROR_RATE_HOOKS[id]) {
        return Err(format!("could not register config {shown}"));
    }
    Ok(())
}

/// Registers RedisBloom 8's unprefixed names where the server takes them; false (and nothing
/// registered) where it does not. The first registration is the probe.
fn register_unprefixed(registrar: &Registrar) -> Result<bool, String> {
    let flags = flags::UNPREFIXED;
    // The probe: a hidden, inert config. A server may take the flag and prefix the name all
    // the same (Valkey 9.1 registers `bf.<name>`), so the unprefixed name must answer
    // CONFIG GET; hidden, it stays out of CONFIG GET's patterns and CONFIG REWRITE either way.
    let probe = registrar.boolean(UNPREFIXED_PROBE, false, flags | flags::HIDDEN, &PROBE_HOOKS);
    PROBE_REFUSED.store(!probe, Relaxed);
    if !probe || !registrar.server_knows(UNPREFIXED_PROBE) {
        return Ok(false);
    }
    register_error_rate(registrar, c"bf-error-rate", flags, ("bf-error-rate", 1))?;
    // Valkey 9 keeps one namespace for a module's names with and without its prefix:
    // `cf-max-expansions` is rsbloom's `bf.cf-max-expansions` there, which stays.
    let refused = register_aliases(registrar, &UNPREFIXED, flags);
    SKIPPED_UNPREFIXED.store(refused.len() as u64, Relaxed);
    Ok(true)
}

/// Registers `aliases` with `flags`; returns the names the server refused.
fn register_aliases(
    registrar: &Registrar,
    aliases: &'static [Alias],
    flags: u32,
) -> Vec<&'static CStr> {
    let mut refused = Vec::new();
    for u in aliases {
        let current = u.setting();
        u.registered.store(current, Relaxed);
        if !registrar.numeric(u.name, current, flags, (u.min, u.max), &u.hooks) {
            refused.push(u.name);
        }
    }
    refused
}

/// valkey-bloom's `bf.bloom-tightening-ratio`: accepted (a number in (0, 1), as valkey-bloom
/// checks it) and shown, and changing nothing: new filters are rsbloom's, whose links tighten
/// as its accuracy rule says, and a valkey-bloom filter keeps the ratio it was made with.
static VALKEY_TIGHTENING_BITS: AtomicU64 = AtomicU64::new(0x3fe0_0000_0000_0000); // 0.5
static TIGHTENING_HOOKS: StringHooks = StringHooks::new(
    |_| format!("{:?}", f64::from_bits(VALKEY_TIGHTENING_BITS.load(Relaxed))),
    |_, val| {
        let error = "bf.bloom-tightening-ratio must be a number between 0 and 1, exclusive";
        set_rate(val, &VALKEY_TIGHTENING_BITS, None, error)
    },
    0,
);
/// valkey-bloom's `bf.bloom-use-random-seed`: accepted and shown, changing nothing (rsbloom
/// draws a random seed for every filter; one seed for all would let anyone who knows it pick
/// items that collide).
static VALKEY_USE_RANDOM_SEED: AtomicBool = AtomicBool::new(true);
/// valkey-bloom's `bf.bloom-defrag-enabled`: accepted and shown, changing nothing (rsbloom
/// moves a filter's blocks whenever the server's active defrag asks).
static VALKEY_DEFRAG: AtomicBool = AtomicBool::new(true);
/// The kept boolean configs; hooks `id` is the place in this table.
static VALKEY_BOOLS: [(&CStr, &AtomicBool, Hooks<bool>); 2] = [
    (
        c"bloom-use-random-seed",
        &VALKEY_USE_RANDOM_SEED,
        Hooks {
            get: get_kept_bool,
            set: set_kept_bool,
            id: 0,
        },
    ),
    (
        c"bloom-defrag-enabled",
        &VALKEY_DEFRAG,
        Hooks {
            get: get_kept_bool,
            set: set_kept_bool,
            id: 1,
        },
    ),
];

fn get_kept_bool(id: usize) -> bool {
    VALKEY_BOOLS[id].1.load(Relaxed)
}

fn set_kept_bool(id: usize, val: bool) -> Result<(), String> {
    VALKEY_BOOLS[id].1.store(val, Relaxed);
    Ok(())
}

/// Registers valkey-bloom's config names (see the module docs above), hidden: a config file,
/// the command line, CONFIG SET and CONFIG GET take them by name, while `CONFIG GET bf.*`
/// lists rsbloom's own names only (CONFIG REWRITE still writes every changed name).
fn register_valkey_names(registrar: &Registrar) -> Result<(), String> {
    let flags = flags::HIDDEN;
    register_error_rate(registrar, c"bloom-fp-rate", flags, ("bf.bloom-fp-rate", 2))?;
    if let Some(name) = register_aliases(registrar, &VALKEY_NAMES, flags).first() {
        return Err(format!(
            "could not register config bf.{}",
            name.to_string_lossy()
        ));
    }
    if !registrar.string(c"bloom-tightening-ratio", "0.5", flags, &TIGHTENING_HOOKS) {
        return Err("could not register config bf.bloom-tightening-ratio".into());
    }
    for (name, cell, hooks) in &VALKEY_BOOLS {
        if !registrar.boolean(name, cell.load(Relaxed), flags, hooks) {
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
pub fn register(registrar: &Registrar) -> Result<(), String> {
    LOADING.store(true, Relaxed);
    let result = register_and_load(registrar);
    LOADING.store(false, Relaxed);
    result
}

/// `bf.expandable`'s hooks.
static EXPANDABLE_HOOKS: Hooks<bool> = Hooks {
    get: |_| EXPANDABLE.load(Relaxed),
    set: |_, val| {
        EXPANDABLE.store(val, Relaxed);
        Ok(())
    },
    id: 0,
};

fn register_and_load(registrar: &Registrar) -> Result<(), String> {
    ERROR_RATE_REGISTERED.store(ERROR_RATE_BITS.load(Relaxed), Relaxed);
    let expandable = EXPANDABLE.load(Relaxed);
    if !registrar.boolean(c"expandable", expandable, flags::DEFAULT, &EXPANDABLE_HOOKS) {
        return Err("could not register config bf.expandable".into());
    }
    register_error_rate(
        registrar,
        c"error-rate",
        flags::DEFAULT,
        ("bf.error-rate", 0),
    )?;
    for n in &NUMERIC {
        let args::IntegerArg { min, max, .. } = n.load_arg;
        let current = n.cell.load(Relaxed).min(max as u64) as i64;
        n.registered.store(current, Relaxed);
        if !registrar.numeric(n.name, current, n.flags, (min, max), &n.hooks) {
            return Err(format!(
                "could not register config bf.{}",
                n.name.to_string_lossy()
            ));
        }
    }
    register_valkey_names(registrar)?;
    UNPREFIXED_CONFIGS.store(register_unprefixed(registrar)?, Relaxed);
    if !registrar.load() {
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
