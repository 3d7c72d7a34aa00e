//! Argument parsing shared by every command: numbers parsed strictly (no leading or trailing
//! junk, no NaN), options matched case-insensitively.

/// Parses a strict signed 64-bit integer.
pub fn integer(arg: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(arg).ok()?;
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses a strict unsigned 64-bit integer.
pub fn unsigned(arg: &[u8]) -> Option<u64> {
    if arg.is_empty() || !arg.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(arg).ok()?.parse().ok()
}

/// Parses a double as Redis does (`inf` allowed, NaN refused, no surrounding junk).
pub fn double(arg: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(arg).ok()?;
    if s.is_empty() || s.trim() != s {
        return None;
    }
    let v: f64 = match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        _ => s.parse().ok()?,
    };
    (!v.is_nan()).then_some(v)
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
        for bad in [&b"nan"[..], b"abc", b"", b"0.01x", b" 0.01"] {
            assert_eq!(double(bad), None, "{bad:?}");
        }
    }
}
