//! Argument parsing shared by every command: numbers parsed strictly (no leading or trailing
//! junk, no NaN), options matched case-insensitively, and the option parsing that needs no
//! Redis context.

use crate::errors;
use crate::{CuckooSpec, FilterSpec, Growth, Window};

/// Parses a strict signed 64-bit integer the way Redis's `string2ll` (and so RedisBloom, through
/// `RedisModule_StringToLongLong`) does: an optional `-`, then `0` alone or digits without a
/// leading zero. No `+`, no `-0`, no leading zeros, no surrounding junk, no overflow.
pub fn integer(arg: &[u8]) -> Option<i64> {
    let digits = arg.strip_prefix(b"-").unwrap_or(arg);
    let canonical = match digits {
        [b'0'] => digits.len() == arg.len(), // "0", but not "-0"
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return None;
    }
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// Parses a strict unsigned 64-bit integer.
pub fn unsigned(arg: &[u8]) -> Option<u64> {
    if arg.is_empty() || !arg.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// Parses a double as Redis's `string2d` does (`inf` allowed, NaN refused, no surrounding junk,
/// and, as `strtod`'s ERANGE, a finite text that overflows to infinity or underflows to zero is
/// refused). C's hexadecimal floats (`0x1p-3`) are not accepted.
pub fn double(arg: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(arg).ok()?;
    if s.is_empty() || s.trim() != s {
        return None;
    }
    let v: f64 = match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => return Some(f64::INFINITY),
        "-inf" | "-infinity" => return Some(f64::NEG_INFINITY),
        _ => s.parse().ok()?,
    };
    if v.is_nan() || v.is_infinite() {
        return None;
    }
    // Underflow to zero: the text's mantissa has a non-zero digit but the value is 0.
    let mantissa = s.split(['e', 'E']).next().unwrap_or("");
    if v == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
        return None;
    }
    Some(v)
}

/// Whether `arg` equals `option`, ignoring ASCII case.
pub fn is(arg: &[u8], option: &str) -> bool {
    arg.eq_ignore_ascii_case(option.as_bytes())
}

/// Why a command's arguments were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Too few or too many arguments: Redis's wrong-arity error.
    Arity,
    /// The error line to reply.
    Reply(&'static str),
}

/// What `BF.RESERVE` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reserve {
    pub spec: FilterSpec,
    /// rsbloom's `SEED`: the filter's hash seed instead of a random one.
    pub seed: Option<u64>,
}

/// Parses `BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [SEED s] [SLIDING |
/// WINDOW seconds]` (`argv[0]` is the command name), checking in RedisBloom 2.8.2's order so
/// that the first error is the one RedisBloom replies. `default_expansion` applies without
/// `EXPANSION` ([`Growth::from_expansion`]: 0 means NONSCALING). `SEED`, `SLIDING` and `WINDOW`
/// are rsbloom's.
pub fn reserve(argv: &[&[u8]], default_expansion: u32) -> Result<Reserve, Refusal> {
    // RedisBloom's arity, plus room for rsbloom's options.
    let extra: usize = argv
        .iter()
        .skip(4)
        .map(|a| {
            if is(a, "SEED") || is(a, "WINDOW") {
                2
            } else {
                usize::from(is(a, "SLIDING"))
            }
        })
        .sum();
    if argv.len() < 4 || argv.len() > 7 + extra.min(5) {
        return Err(Refusal::Arity);
    }
    let refuse = |text| Err(Refusal::Reply(text));
    let error = match double(argv[2]) {
        None => return refuse(errors::BAD_ERROR_RATE),
        Some(e) if !(e > 0.0 && e < 1.0) => return refuse(errors::ERROR_RATE_RANGE),
        Some(e) => e,
    };
    let capacity = match integer(argv[3]) {
        None => return refuse(errors::BAD_CAPACITY),
        Some(c) if c <= 0 => return refuse(errors::CAPACITY_RANGE),
        Some(c) => c as u64,
    };
    let mut nonscaling = false;
    let mut expansion_at = None;
    let mut seed_at = None;
    let mut window = WindowOptions::default();
    let mut i = 4;
    while i < argv.len() {
        let arg = argv[i];
        if is(arg, "NONSCALING") {
            nonscaling = true;
        } else if is(arg, "EXPANSION") {
            // Like RedisBloom, the first EXPANSION counts: `EXPANSION 10 EXPANSION` is 10.
            expansion_at.get_or_insert(i + 1);
            i += 1;
        } else if is(arg, "SEED") {
            seed_at = Some(i + 1);
            i += 1;
        } else if window.parse(argv, i)? {
            i += usize::from(is(arg, "WINDOW"));
        } else {
            return refuse(errors::UNKNOWN_RESERVE_ARGUMENT);
        }
        i += 1;
    }
    let growth = match expansion_at {
        Some(at) if at >= argv.len() => return refuse(errors::NO_EXPANSION),
        Some(_) if nonscaling => return refuse(errors::NONSCALING_EXPANSION),
        Some(at) => match integer(argv[at]) {
            None => return refuse(errors::BAD_EXPANSION),
            Some(e) if e < 1 => return refuse(errors::EXPANSION_RANGE),
            Some(e) => Growth::Scaling(u32::try_from(e).unwrap_or(u32::MAX)),
        },
        None if nonscaling => Growth::Fixed,
        None => Growth::from_expansion(default_expansion),
    };
    let seed = match seed_at {
        None => None,
        Some(at) => match argv.get(at).copied().and_then(unsigned) {
            Some(s) => Some(s),
            None => return refuse(errors::BAD_SEED),
        },
    };
    let spec = window.spec(error, capacity, growth, expansion_at.is_some())?;
    Ok(Reserve { spec, seed })
}

/// The window options of BF.RESERVE and BF.INSERT: `SLIDING` or `WINDOW seconds`.
#[derive(Debug, Default, Clone, Copy)]
struct WindowOptions {
    sliding: bool,
    seconds: Option<u64>,
}

impl WindowOptions {
    /// Takes `argv[i]` when it is a window option (with its value, for WINDOW), refusing a bad
    /// value; false when it is not one.
    fn parse(&mut self, argv: &[&[u8]], i: usize) -> Result<bool, Refusal> {
        let arg = argv[i];
        if is(arg, "SLIDING") {
            self.sliding = true;
        } else if is(arg, "WINDOW") {
            let seconds = argv
                .get(i + 1)
                .and_then(|v| unsigned(v))
                .filter(|s| (1..=Window::MAX_SECONDS).contains(s))
                .ok_or(Refusal::Reply(errors::BAD_WINDOW))?;
            self.seconds = Some(seconds);
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// The spec these options make of the others, or the error for a combination that makes
    /// no sense.
    fn spec(
        self,
        error: f64,
        capacity: u64,
        growth: Growth,
        expansion_given: bool,
    ) -> Result<FilterSpec, Refusal> {
        let refuse = |text| Err(Refusal::Reply(text));
        let window = match (self.sliding, self.seconds) {
            (true, Some(_)) => return refuse(errors::SLIDING_AND_WINDOW),
            (true, None) if expansion_given => return refuse(errors::SLIDING_EXPANSION),
            (true, None) => Window::Count,
            (false, Some(seconds)) => Window::Time { seconds },
            (false, None) => Window::Unbounded,
        };
        if window != Window::Unbounded && !crate::window::sliding::supports_error(error) {
            return refuse(errors::WINDOW_ERROR_RATE);
        }
        let growth = match window {
            Window::Count => Growth::Fixed,
            _ => growth,
        };
        Ok(FilterSpec {
            error,
            capacity,
            growth,
            window,
        })
    }
}

/// The explicit `BF.RESERVE` arguments after the key that rsbloom replicates for every filter
/// it creates: `error capacity [SLIDING | WINDOW s] [EXPANSION n | NONSCALING] SEED seed`. They carry every
/// parameter, so a replica or an AOF replay builds identical bits whatever its own defaults;
/// [`reserve`] parses them back to the same spec and seed.
pub fn reserve_words(spec: &FilterSpec, seed: u64) -> Vec<String> {
    // `{:?}` prints the shortest text that parses back to the same f64.
    let mut words = vec![format!("{:?}", spec.error), spec.capacity.to_string()];
    match spec.window {
        Window::Unbounded => {}
        Window::Count => words.push("SLIDING".into()),
        Window::Time { seconds } => words.extend(["WINDOW".into(), seconds.to_string()]),
    }
    match spec.growth {
        // A count window never grows: SLIDING says so.
        _ if spec.window == Window::Count => {}
        Growth::Fixed => words.push("NONSCALING".into()),
        Growth::Scaling(n) => words.extend(["EXPANSION".into(), n.to_string()]),
    }
    words.extend(["SEED".into(), seed.to_string()]);
    words
}

/// What `BF.INSERT` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Insert {
    /// The filter to create when the key is missing; `None` with NOCREATE.
    pub create: Option<FilterSpec>,
    /// Index in argv of the first item (after ITEMS).
    pub first_item: usize,
    /// rsbloom's `AT ms`: the Unix time in milliseconds the adds happen at, for a time window
    /// (rsbloom replicates every write to one with it).
    pub at: Option<u64>,
}

/// Parses `BF.INSERT key [CAPACITY n] [ERROR r] [EXPANSION n] [NOCREATE] [NONSCALING] [SLIDING |
/// WINDOW s] [AT ms] ITEMS item ...` as RedisBloom 2.8.2 does (rsbloom's options aside): each token is recognised by its first character (and
/// the second for ERROR/EXPANSION, the third for NOCREATE/NONSCALING); value parse failures are
/// reported during the scan, range failures after it. Options not given take `defaults`.
pub fn insert(argv: &[&[u8]], defaults: FilterSpec) -> Result<Insert, Refusal> {
    if argv.len() < 4 {
        return Err(Refusal::Arity);
    }
    let mut error = None;
    let mut capacity = None;
    let mut expansion = None;
    let mut nocreate = false;
    let mut nonscaling = false;
    let mut first_item = None;
    let mut window = WindowOptions::default();
    let mut clock = None;
    let mut i = 2;
    while i < argv.len() {
        let token = argv[i];
        // rsbloom's options, whole words, none of which RedisBloom takes (its first-letter
        // matching answers each with its unknown-argument error).
        if window.parse(argv, i)? {
            i += 1 + usize::from(is(token, "WINDOW"));
            continue;
        }
        if is(token, "AT") {
            let ms = argv
                .get(i + 1)
                .and_then(|v| unsigned(v))
                .filter(|&ms| ms <= crate::window::sliding::MAX_CLOCK);
            clock = Some(ms.ok_or(Refusal::Reply(errors::BAD_AT))?);
            i += 2;
            continue;
        }
        let at = |n: usize| token.get(n).map(u8::to_ascii_lowercase);
        match at(0) {
            Some(b'i') => {
                first_item = Some(i + 1);
                break;
            }
            Some(b'e' | b'c') => {
                // An option that is the last argument has no value.
                let value = *argv.get(i + 1).ok_or(Refusal::Arity)?;
                if at(0) == Some(b'c') {
                    capacity =
                        Some(integer(value).ok_or(Refusal::Reply(errors::INSERT_BAD_CAPACITY))?);
                } else if at(1) == Some(b'r') {
                    error =
                        Some(double(value).ok_or(Refusal::Reply(errors::INSERT_BAD_ERROR_RATE))?);
                } else {
                    expansion =
                        Some(integer(value).ok_or(Refusal::Reply(errors::INSERT_BAD_EXPANSION))?);
                }
                i += 1;
            }
            Some(b'n') if at(2) == Some(b'c') => nocreate = true,
            Some(b'n') => nonscaling = true,
            _ => return Err(Refusal::Reply(errors::INSERT_UNKNOWN_ARGUMENT)),
        }
        i += 1;
    }
    let first_item = match first_item {
        Some(first) if first < argv.len() => first,
        _ => return Err(Refusal::Arity),
    };
    if error.is_some_and(|e| !(e > 0.0 && e < 1.0))
        || capacity.is_some_and(|c| c < 1)
        || expansion.is_some_and(|e| e < 1)
    {
        return Err(Refusal::Reply(errors::INSERT_BAD_ARGUMENT));
    }
    let growth = match expansion {
        _ if nonscaling => Growth::Fixed,
        // rsbloom: a huge expansion saturates instead of wrapping (RedisBloom truncates it to
        // 32 bits, so 4294967296 becomes a growth of 0).
        Some(e) => Growth::Scaling(u32::try_from(e).unwrap_or(u32::MAX)),
        None => defaults.growth,
    };
    let spec = window.spec(
        error.unwrap_or(defaults.error),
        capacity.map_or(defaults.capacity, |c| c as u64),
        growth,
        expansion.is_some(),
    )?;
    Ok(Insert {
        create: (!nocreate).then_some(spec),
        first_item,
        at: clock,
    })
}

/// What `CF.RESERVE` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooReserve {
    pub spec: CuckooSpec,
    /// rsbloom's `SEED` (0: RedisBloom's hashing); random when absent.
    pub seed: Option<u64>,
}

/// Parses `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [SEED s]`,
/// reporting errors in RedisBloom 2.8.2's order: arity (fewer than 3 arguments, or an even
/// count), capacity, MAXITERATIONS, BUCKETSIZE, EXPANSION (the first of each counts), then
/// capacity against the bucket size. rsbloom's differences: options are read only after the
/// capacity, in keyword-value pairs, and an unknown keyword is an error (RedisBloom ignores
/// it, and reads past its arguments when a keyword comes last). The expansion is stored
/// rounded up to a power of two.
pub fn cuckoo_reserve(argv: &[&[u8]]) -> Result<CuckooReserve, Refusal> {
    use errors::cf;
    if argv.len() < 3 || argv.len().is_multiple_of(2) {
        return Err(Refusal::Arity);
    }
    let refuse = |text| Err(Refusal::Reply(text));
    let Some(capacity) = integer(argv[2]) else {
        return refuse(cf::BAD_CAPACITY);
    };
    let value_of = |name: &str| {
        argv[3..]
            .chunks_exact(2)
            .find(|pair| is(pair[0], name))
            .map(|pair| pair[1])
    };
    // (name, parse error, range error, range, default)
    let options = [
        (
            "MAXITERATIONS",
            cf::PARSE_MAX_ITERATIONS,
            cf::MAX_ITERATIONS_RANGE,
            1..=65535,
            i64::from(CuckooSpec::DEFAULT_MAX_ITERATIONS),
        ),
        (
            "BUCKETSIZE",
            cf::PARSE_BUCKET_SIZE,
            cf::BUCKET_SIZE_RANGE,
            1..=255,
            i64::from(CuckooSpec::DEFAULT_BUCKET_SIZE),
        ),
        (
            "EXPANSION",
            cf::PARSE_EXPANSION,
            cf::EXPANSION_RANGE,
            0..=i64::from(crate::cuckoo::filter::MAX_EXPANSION),
            i64::from(CuckooSpec::DEFAULT_EXPANSION),
        ),
    ];
    let mut values = [0i64; 3];
    for (value, (name, parse_error, range_error, range, default)) in values.iter_mut().zip(options)
    {
        *value = match value_of(name) {
            None => default,
            Some(text) => match integer(text) {
                None => return refuse(parse_error),
                Some(v) if !range.contains(&v) => return refuse(range_error),
                Some(v) => v,
            },
        };
    }
    let [max_iterations, bucket_size, expansion] = values;
    let known = ["MAXITERATIONS", "BUCKETSIZE", "EXPANSION", "SEED"];
    if argv[3..]
        .chunks_exact(2)
        .any(|pair| !known.iter().any(|k| is(pair[0], k)))
    {
        return refuse(errors::cf::UNKNOWN_RESERVE_ARGUMENT);
    }
    let seed = match value_of("SEED") {
        None => None,
        Some(text) => Some(unsigned(text).ok_or(Refusal::Reply(errors::BAD_SEED))?),
    };
    if bucket_size * 2 > capacity {
        return refuse(cf::CAPACITY_RANGE);
    }
    Ok(CuckooReserve {
        spec: CuckooSpec {
            capacity: capacity as u64,
            bucket_size: bucket_size as u8,
            max_iterations: max_iterations as u16,
            expansion: CuckooSpec::stored_expansion(expansion as u16),
        },
        seed,
    })
}

/// The `CF.RESERVE` arguments after the key that rsbloom replicates for every cuckoo filter it
/// creates: `capacity BUCKETSIZE b MAXITERATIONS m EXPANSION e SEED s`, which
/// [`cuckoo_reserve`] parses back to the same spec and seed.
pub fn cuckoo_reserve_words(spec: &CuckooSpec, seed: u64) -> Vec<String> {
    vec![
        spec.capacity.to_string(),
        "BUCKETSIZE".into(),
        spec.bucket_size.to_string(),
        "MAXITERATIONS".into(),
        spec.max_iterations.to_string(),
        "EXPANSION".into(),
        spec.expansion.to_string(),
        "SEED".into(),
        seed.to_string(),
    ]
}

/// What `CF.INSERT` / `CF.INSERTNX` ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooInsert {
    /// The filter to create when the key is missing; `None` with NOCREATE.
    pub create: Option<CuckooSpec>,
    /// Index in argv of the first item (after ITEMS).
    pub first_item: usize,
}

/// Parses `CF.INSERT[NX] key [CAPACITY c] [NOCREATE] ITEMS item ...` as RedisBloom 2.8.2 does:
/// each token is recognised by its first letter (`c`: CAPACITY and its value, `i`: the items
/// follow, `n`: NOCREATE), errors are reported left to right, and CAPACITY is checked even when
/// the key exists.
pub fn cuckoo_insert(argv: &[&[u8]]) -> Result<CuckooInsert, Refusal> {
    if argv.len() < 4 {
        return Err(Refusal::Arity);
    }
    let mut capacity = CuckooSpec::DEFAULT_CAPACITY;
    let mut nocreate = false;
    let mut i = 2;
    while i < argv.len() {
        match argv[i].first().map(u8::to_ascii_lowercase) {
            Some(b'i') => {
                if i + 1 == argv.len() {
                    return Err(Refusal::Arity);
                }
                let spec = CuckooSpec::implicit(capacity);
                return Ok(CuckooInsert {
                    create: (!nocreate).then_some(spec),
                    first_item: i + 1,
                });
            }
            Some(b'c') => {
                let value = *argv.get(i + 1).ok_or(Refusal::Arity)?;
                let c = integer(value).ok_or(Refusal::Reply(errors::cf::BAD_CAPACITY))?;
                if c < 2 * i64::from(CuckooSpec::DEFAULT_BUCKET_SIZE) {
                    return Err(Refusal::Reply(errors::cf::CAPACITY_RANGE));
                }
                capacity = c as u64;
                i += 1;
            }
            Some(b'n') => nocreate = true,
            _ => return Err(Refusal::Reply(errors::INSERT_UNKNOWN_ARGUMENT)),
        }
        i += 1;
    }
    // No ITEMS token.
    Err(Refusal::Arity)
}

/// An integer module load argument: its name and the range of its value (the range of the
/// config it sets, from the config table).
#[derive(Debug, Clone, Copy)]
pub struct IntegerArg {
    pub name: &'static str,
    pub min: i64,
    pub max: i64,
}

/// The module load arguments given, parsed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadArgs {
    pub error_rate: Option<f64>,
    /// `(index into the integer arguments, value)`, in the order given.
    pub integers: Vec<(usize, i64)>,
}

/// Parses the module load arguments, pairs of `NAME value`: `ERROR_RATE r` or one of
/// `integers` (names matched ignoring ASCII case). Returns the error to log.
pub fn load_args(argv: &[&[u8]], integers: &[IntegerArg]) -> Result<LoadArgs, String> {
    if !argv.len().is_multiple_of(2) {
        return Err("module arguments come in pairs: NAME value".into());
    }
    let mut out = LoadArgs::default();
    for pair in argv.chunks(2) {
        let (name, value) = (pair[0], pair[1]);
        let got = |what: String| {
            format!(
                "{} must be {what}, got '{}'",
                String::from_utf8_lossy(name),
                String::from_utf8_lossy(value)
            )
        };
        if is(name, "ERROR_RATE") {
            let rate = error_rate(value)
                .ok_or_else(|| got("a number between 0 and 1, exclusive".into()))?;
            out.error_rate = Some(rate);
        } else if let Some(at) = integers.iter().position(|arg| is(name, arg.name)) {
            let IntegerArg { min, max, .. } = integers[at];
            match integer(value) {
                Some(n) if (min..=max).contains(&n) => out.integers.push((at, n)),
                _ => return Err(got(format!("an integer from {min} to {max}"))),
            }
        } else {
            return Err(format!(
                "unknown module argument '{}'",
                String::from_utf8_lossy(name)
            ));
        }
    }
    Ok(out)
}

/// Parses and validates an error rate (0 < r < 1), strictly.
pub fn error_rate(text: &[u8]) -> Option<f64> {
    double(text).filter(|&r| r > 0.0 && r < 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_strict() {
        assert_eq!(integer(b"100"), Some(100));
        assert_eq!(integer(b"-5"), Some(-5));
        assert_eq!(integer(b"0"), Some(0));
        assert_eq!(integer(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(integer(b"9223372036854775807"), Some(i64::MAX));
        for bad in [
            &b"+5"[..],
            b"0100",
            b"-0",
            b"00",
            b"-05",
            b"9223372036854775808",
            b"-9223372036854775809",
        ] {
            assert_eq!(integer(bad), None, "{bad:?}");
        }
        for bad in [
            &b""[..],
            b"1.5",
            b"abc",
            b"10x",
            b" 1",
            b"18446744073709551616",
            b"-",
        ] {
            assert_eq!(integer(bad), None, "{bad:?}");
        }
    }

    fn reserve_of(line: &str, default_expansion: u32) -> Result<Reserve, Refusal> {
        let argv: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        reserve(&argv, default_expansion)
    }

    #[test]
    fn reserve_options_and_their_errors() {
        let r = reserve_of("BF.RESERVE k 0.01 100", 2).unwrap();
        assert_eq!(
            r,
            Reserve {
                spec: FilterSpec {
                    error: 0.01,
                    capacity: 100,
                    growth: Growth::Scaling(2),
                    window: Window::Unbounded,
                },
                seed: None
            }
        );
        let r = reserve_of("BF.RESERVE k 0.5 7 seed 9 Expansion 4", 2).unwrap();
        assert_eq!((r.spec.growth, r.seed), (Growth::Scaling(4), Some(9)));
        // default expansion 0: NONSCALING
        let r = reserve_of("BF.RESERVE k 0.01 100", 0).unwrap();
        assert_eq!(r.spec.growth, Growth::Fixed);
        let r = reserve_of("BF.RESERVE k 0.01 100 NONSCALING", 2).unwrap();
        assert_eq!(r.spec.growth, Growth::Fixed);
        let r = reserve_of("BF.RESERVE k 0.01 100 EXPANSION 4294967296", 0).unwrap();
        assert_eq!(r.spec.growth, Growth::Scaling(u32::MAX));
        let refused = |line, want| assert_eq!(reserve_of(line, 2), Err(want), "{line}");
        refused("BF.RESERVE k 0.01", Refusal::Arity);
        refused("BF.RESERVE k 0.01 1 a b c d", Refusal::Arity);
        refused("BF.RESERVE k x 0", Refusal::Reply(errors::BAD_ERROR_RATE));
        refused("BF.RESERVE k 1 x", Refusal::Reply(errors::ERROR_RATE_RANGE));
        refused("BF.RESERVE k 0.1 0", Refusal::Reply(errors::CAPACITY_RANGE));
        refused(
            "BF.RESERVE k 0.1 1 NONSCALNG",
            Refusal::Reply(errors::UNKNOWN_RESERVE_ARGUMENT),
        );
        refused(
            "BF.RESERVE k 0.1 1 NONSCALING EXPANSION",
            Refusal::Reply(errors::NO_EXPANSION),
        );
        refused(
            "BF.RESERVE k 0.1 1 EXPANSION 2 NONSCALING",
            Refusal::Reply(errors::NONSCALING_EXPANSION),
        );
        refused(
            "BF.RESERVE k 0.1 1 EXPANSION 0",
            Refusal::Reply(errors::EXPANSION_RANGE),
        );
        refused(
            "BF.RESERVE k 0.1 1 SEED -1",
            Refusal::Reply(errors::BAD_SEED),
        );
        refused("BF.RESERVE k 0.1 1 SEED", Refusal::Reply(errors::BAD_SEED));
    }

    #[test]
    fn doubles_refuse_nan_and_junk() {
        assert_eq!(double(b"0.01"), Some(0.01));
        assert_eq!(double(b"1e-3"), Some(0.001));
        assert_eq!(double(b"inf"), Some(f64::INFINITY));
        assert_eq!(double(b"-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(double(b"0"), Some(0.0));
        assert_eq!(double(b"0e5"), Some(0.0));
        assert_eq!(double(b"+.5"), Some(0.5));
        assert_eq!(double(b"1e-310"), Some(1e-310)); // subnormal, not zero: accepted
        for bad in [
            &b"nan"[..],
            b"abc",
            b"",
            b"0.01x",
            b" 0.01",
            b"0.01 ",
            b"1e400",
            b"-1e400",
            b"1e-400",
            b"0.0001e-400",
        ] {
            assert_eq!(double(bad), None, "{bad:?}");
        }
    }

    const DEFAULTS: FilterSpec = FilterSpec {
        error: 0.01,
        capacity: 100,
        growth: Growth::Scaling(2),
        window: Window::Unbounded,
    };

    fn insert_of(line: &str) -> Result<Insert, Refusal> {
        let argv: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        insert(&argv, DEFAULTS)
    }

    #[test]
    fn insert_options_and_their_errors() {
        let spec = |error, capacity, growth| FilterSpec {
            error,
            capacity,
            growth,
            window: Window::Unbounded,
        };
        let i = insert_of("BF.INSERT k ITEMS a b").unwrap();
        assert_eq!(i.first_item, 3);
        assert_eq!(i.create, Some(DEFAULTS));
        let i = insert_of("BF.INSERT k capacity 7 ERROR 0.5 expansion 4 ITEMS a").unwrap();
        assert_eq!(i.create, Some(spec(0.5, 7, Growth::Scaling(4))));
        assert_eq!(i.first_item, 9);
        // NONSCALING wins over EXPANSION, in either order, as in RedisBloom.
        for line in [
            "BF.INSERT k EXPANSION 4 NONSCALING ITEMS a",
            "BF.INSERT k NONSCALING EXPANSION 4 ITEMS a",
        ] {
            assert_eq!(
                insert_of(line).unwrap().create.unwrap().growth,
                Growth::Fixed
            );
        }
        assert_eq!(
            insert_of("BF.INSERT k NOCREATE ITEMS a").unwrap().create,
            None
        );
        // Tokens are told apart by their first letters only (RedisBloom's scan).
        assert_eq!(
            insert_of("BF.INSERT k c 7 i a")
                .unwrap()
                .create
                .unwrap()
                .capacity,
            7
        );
        assert_eq!(
            insert_of("BF.INSERT k EXPANSION 4294967296 ITEMS a")
                .unwrap()
                .create
                .unwrap()
                .growth,
            Growth::Scaling(u32::MAX)
        );
        let refused = |line, want| assert_eq!(insert_of(line), Err(want), "{line}");
        refused("BF.INSERT k ITEMS", Refusal::Arity);
        refused("BF.INSERT k CAPACITY 5 ITEMS", Refusal::Arity);
        refused("BF.INSERT k NOCREATE CAPACITY", Refusal::Arity);
        refused("BF.INSERT k NOCREATE NONSCALING", Refusal::Arity);
        refused(
            "BF.INSERT k CAPACITY x ITEMS a",
            Refusal::Reply(errors::INSERT_BAD_CAPACITY),
        );
        refused(
            "BF.INSERT k ERROR x ITEMS a",
            Refusal::Reply(errors::INSERT_BAD_ERROR_RATE),
        );
        refused(
            "BF.INSERT k EXPANSION x ITEMS a",
            Refusal::Reply(errors::INSERT_BAD_EXPANSION),
        );
        refused(
            "BF.INSERT k BOGUS ITEMS a",
            Refusal::Reply(errors::INSERT_UNKNOWN_ARGUMENT),
        );
        for line in [
            "BF.INSERT k CAPACITY 0 ITEMS a",
            "BF.INSERT k ERROR 1 ITEMS a",
            "BF.INSERT k EXPANSION 0 ITEMS a",
        ] {
            refused(line, Refusal::Reply(errors::INSERT_BAD_ARGUMENT));
        }
        // A bad value is reported during the scan, before a range error found later.
        refused(
            "BF.INSERT k CAPACITY 0 ERROR x ITEMS a",
            Refusal::Reply(errors::INSERT_BAD_ERROR_RATE),
        );
    }

    #[test]
    fn the_replicated_reserve_parses_back_to_the_same_spec() {
        for spec in [
            DEFAULTS,
            FilterSpec {
                error: 0.1 + 0.2,
                capacity: u64::MAX >> 1,
                growth: Growth::Fixed,
                window: Window::Unbounded,
            },
            FilterSpec {
                error: 1e-300,
                capacity: 1,
                growth: Growth::Scaling(u32::MAX),
                window: Window::Unbounded,
            },
        ] {
            let mut line = vec!["BF.RESERVE".to_string(), "k".to_string()];
            line.extend(reserve_words(&spec, 9));
            let argv: Vec<&[u8]> = line.iter().map(|w| w.as_bytes()).collect();
            for default_expansion in [0, 2] {
                let r = reserve(&argv, default_expansion).unwrap();
                assert_eq!((r.spec, r.seed), (spec, Some(9)), "{line:?}");
            }
        }
    }

    #[test]
    fn load_args_take_their_ranges_from_the_table() {
        let table = [
            IntegerArg {
                name: "INITIAL_SIZE",
                min: 1,
                max: 10,
            },
            IntegerArg {
                name: "EXPANSION",
                min: 0,
                max: 5,
            },
        ];
        let parse = |line: &str| {
            let argv: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
            load_args(&argv, &table)
        };
        assert_eq!(
            parse("error_rate 0.5 EXPANSION 0 initial_size 10"),
            Ok(LoadArgs {
                error_rate: Some(0.5),
                integers: vec![(1, 0), (0, 10)],
            })
        );
        assert_eq!(parse(""), Ok(LoadArgs::default()));
        assert_eq!(
            parse("INITIAL_SIZE 11"),
            Err("INITIAL_SIZE must be an integer from 1 to 10, got '11'".into())
        );
        assert_eq!(
            parse("EXPANSION -1"),
            Err("EXPANSION must be an integer from 0 to 5, got '-1'".into())
        );
        assert_eq!(
            parse("ERROR_RATE 1"),
            Err("ERROR_RATE must be a number between 0 and 1, exclusive, got '1'".into())
        );
        assert_eq!(
            parse("ERROR_RATE"),
            Err("module arguments come in pairs: NAME value".into())
        );
        assert_eq!(
            parse("CAPACITY 5"),
            Err("unknown module argument 'CAPACITY'".into())
        );
    }

    #[test]
    fn error_rates_are_strict_and_in_range() {
        assert_eq!(error_rate(b"0.01"), Some(0.01));
        assert_eq!(error_rate(b"1e-3"), Some(0.001));
        for bad in [
            &b"0"[..],
            b"1",
            b"-0.1",
            b"inf",
            b"nan",
            b"0.01x",
            b" 0.01",
            b"",
        ] {
            assert_eq!(error_rate(bad), None, "{bad:?}");
        }
    }
}
