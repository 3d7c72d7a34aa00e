//! Argument parsing shared by every command: numbers parsed strictly (no leading or trailing
//! junk, no NaN), options matched case-insensitively, and the option parsing that needs no
//! Redis context.

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Too few or too many arguments: Redis's wrong-arity error.
    Arity,
    /// The error line to reply (RedisBloom's, or one of rsbloom's fixed texts).
    Reply(&'static str),
    /// rsbloom's own error line naming the argument at fault and why.
    Named(String),
}

/// Parses a byte count as Redis parses its memory configs (`memtoull`): digits, then an
/// optional unit, ignoring case: `b`, `k` (1000), `kb` (1024), `m`, `mb`, `g`, `gb`. So the
/// module argument `MAX_FILTER_BYTES 1gb` means what `bf.max-filter-bytes 1gb` does.
pub fn bytes(arg: &[u8]) -> Option<i64> {
    let digits = arg.iter().take_while(|b| b.is_ascii_digit()).count();
    let (number, unit) = arg.split_at(digits);
    let scale: i64 = match unit.to_ascii_lowercase().as_slice() {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1 << 10,
        b"m" => 1_000_000,
        b"mb" => 1 << 20,
        b"g" => 1_000_000_000,
        b"gb" => 1 << 30,
        _ => return None,
    };
    integer(number)?.checked_mul(scale)
}

/// Bytes of an argument an error line quotes at the most; a longer one ends in `...`.
const QUOTED_BYTES: usize = 64;

/// `arg` as an error line may quote it: printable ASCII as it is, every other byte as `\xNN`
/// (a reply line may hold no CR, LF or NUL, and Redis refuses such an error: "ERR invalid
/// error text"), at most `QUOTED_BYTES` (64) bytes of it.
pub fn text(arg: &[u8]) -> String {
    let mut out = String::new();
    for &b in arg.iter().take(QUOTED_BYTES) {
        if b.is_ascii_graphic() || b == b' ' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    if arg.len() > QUOTED_BYTES {
        out.push_str("...");
    }
    out
}

/// An integer module load argument: its name and the range of its value (the range of the
/// config it sets, from the config table).
#[derive(Debug, Clone, Copy)]
pub struct IntegerArg {
    /// The argument's name, matched ignoring ASCII case.
    pub name: &'static str,
    /// The smallest value taken.
    pub min: i64,
    /// The largest value taken.
    pub max: i64,
    /// A byte count, which takes units as the config does (`1gb`: see [`bytes`]).
    pub memory: bool,
}

/// The module load arguments given, parsed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadArgs {
    /// `ERROR_RATE`, when given.
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
            let IntegerArg {
                min, max, memory, ..
            } = integers[at];
            let parsed = if memory { bytes(value) } else { integer(value) };
            match parsed {
                Some(n) if (min..=max).contains(&n) => out.integers.push((at, n)),
                _ if memory => {
                    return Err(got(format!(
                        "a byte count from {min} to {max}, with an optional unit (b, k, kb, m, \
                         mb, g, gb)"
                    )))
                }
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

    #[test]
    fn quoted_arguments_are_printable_and_short() {
        assert_eq!(text(b"NONSCALNG"), "NONSCALNG");
        assert_eq!(text(b"a b"), "a b");
        assert_eq!(text(b"\0\r\n\xff"), "\\x00\\x0d\\x0a\\xff");
        assert_eq!(text("é".as_bytes()), "\\xc3\\xa9");
        let long = text(&[b'x'; 100]);
        assert_eq!(long, format!("{}...", "x".repeat(64)));
    }

    #[test]
    fn byte_counts_take_the_configs_units() {
        assert_eq!(bytes(b"1gb"), Some(1 << 30));
        assert_eq!(bytes(b"1GB"), Some(1 << 30));
        assert_eq!(bytes(b"64mb"), Some(64 << 20));
        assert_eq!(bytes(b"3k"), Some(3000));
        assert_eq!(bytes(b"3kb"), Some(3072));
        assert_eq!(bytes(b"2g"), Some(2_000_000_000));
        assert_eq!(bytes(b"100"), Some(100));
        assert_eq!(bytes(b"100b"), Some(100));
        for bad in [
            &b"gb"[..],
            b"1tb",
            b"1 gb",
            b"-1gb",
            b"1.5gb",
            b"",
            b"9223372036854775807kb",
        ] {
            assert_eq!(bytes(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn load_args_take_their_ranges_from_the_table() {
        let table = [
            IntegerArg {
                name: "INITIAL_SIZE",
                min: 1,
                max: 10,
                memory: false,
            },
            IntegerArg {
                name: "EXPANSION",
                min: 0,
                max: 5,
                memory: false,
            },
            IntegerArg {
                name: "MAX_FILTER_BYTES",
                min: 64,
                max: i64::MAX,
                memory: true,
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
