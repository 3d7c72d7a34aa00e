//! Argument parsing shared by every command: numbers parsed strictly (no leading or trailing
//! junk, no NaN), options matched case-insensitively.

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
}
