//! Argument parsing shared by every command: numbers parsed strictly (no leading or trailing
//! junk, no NaN), options matched case-insensitively, and the option parsing that needs no
//! Redis context.

use crate::errors;

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

/// The filter `BF.RESERVE` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reserve {
    pub error: f64,
    pub capacity: u64,
    /// At least 1; ignored when `nonscaling`.
    pub expansion: u32,
    pub nonscaling: bool,
    pub seed: Option<u64>,
}

/// Parses `BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [SEED s]` (`argv[0]`
/// is the command name), checking in RedisBloom 2.8.2's order so that the first error is
/// the one RedisBloom replies. `default_expansion` applies without `EXPANSION`; 0 means
/// NONSCALING. Kept apart from the Redis layer so that it can be fuzzed.
pub fn reserve(argv: &[&[u8]], default_expansion: u32) -> Result<Reserve, Refusal> {
    // RedisBloom's arity, plus two arguments for rsbloom's SEED option.
    let has_seed = argv.iter().skip(4).any(|a| is(a, "SEED"));
    if argv.len() < 4 || argv.len() > if has_seed { 9 } else { 7 } {
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
        } else {
            return refuse(errors::UNKNOWN_RESERVE_ARGUMENT);
        }
        i += 1;
    }
    let mut expansion = default_expansion;
    if let Some(at) = expansion_at {
        if at >= argv.len() {
            return refuse(errors::NO_EXPANSION);
        }
        if nonscaling {
            return refuse(errors::NONSCALING_EXPANSION);
        }
        expansion = match integer(argv[at]) {
            None => return refuse(errors::BAD_EXPANSION),
            Some(e) if e < 1 => return refuse(errors::EXPANSION_RANGE),
            Some(e) => u32::try_from(e).unwrap_or(u32::MAX),
        };
    } else if expansion == 0 {
        nonscaling = true;
    }
    let seed = match seed_at {
        None => None,
        Some(at) => match argv.get(at).copied().and_then(unsigned) {
            Some(s) => Some(s),
            None => return refuse(errors::BAD_SEED),
        },
    };
    Ok(Reserve {
        error,
        capacity,
        expansion: expansion.max(1),
        nonscaling,
        seed,
    })
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
                error: 0.01,
                capacity: 100,
                expansion: 2,
                nonscaling: false,
                seed: None
            }
        );
        let r = reserve_of("BF.RESERVE k 0.5 7 seed 9 Expansion 4", 2).unwrap();
        assert_eq!((r.expansion, r.nonscaling, r.seed), (4, false, Some(9)));
        // default expansion 0: NONSCALING, whose expansion field stays usable
        let r = reserve_of("BF.RESERVE k 0.01 100", 0).unwrap();
        assert_eq!((r.expansion, r.nonscaling), (1, true));
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
}
