//! The argument parsers: the strict number parsers and BF.RESERVE's options. The input is the
//! arguments separated by newlines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom::args::{self, Refusal, Reserve};
use rsbloom::commands::create::Shape;
use rsbloom::core::ChainParams;

fuzz_target!(|data: &[u8]| {
    let argv: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    for arg in &argv {
        check_integer(arg);
        check_unsigned(arg);
        check_double(arg);
    }
    // As the command's arguments, after a command name and a key.
    let mut reserve = vec![&b"BF.RESERVE"[..], b"key"];
    reserve.extend(&argv);
    for default_expansion in [0, 2, u32::MAX] {
        check_reserve(&reserve, default_expansion);
    }
});

/// Accepted integers are exactly the canonical decimal texts of i64 values.
fn check_integer(arg: &[u8]) {
    if let Some(v) = args::integer(arg) {
        assert_eq!(
            v.to_string().as_bytes(),
            arg,
            "non-canonical integer accepted"
        );
    } else if let Some(v) = std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
    {
        // Refused although it parses: it must be a non-canonical spelling.
        assert_ne!(
            v.to_string().as_bytes(),
            arg,
            "canonical integer {v} refused"
        );
    }
}

/// Accepted unsigned integers are digit strings whose value fits in 64 bits.
fn check_unsigned(arg: &[u8]) {
    let digits = !arg.is_empty() && arg.iter().all(u8::is_ascii_digit);
    let value = digits
        .then(|| {
            arg.iter().try_fold(0u64, |acc, &d| {
                acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
            })
        })
        .flatten();
    assert_eq!(args::unsigned(arg), value, "unsigned {arg:?}");
}

/// Accepted doubles are never NaN; finite ones print (`{:?}`, as rsbloom replicates them)
/// to a text that parses back to the same value.
fn check_double(arg: &[u8]) {
    let Some(v) = args::double(arg) else { return };
    assert!(!v.is_nan());
    if v.is_finite() {
        let text = format!("{v:?}");
        assert_eq!(
            args::double(text.as_bytes()),
            Some(v),
            "{text} does not read back"
        );
    }
}

/// An accepted BF.RESERVE describes a valid filter, and the explicit form rsbloom replicates
/// (`BF.RESERVE key error capacity (EXPANSION n | NONSCALING) SEED s`) builds the same filter
/// under any default expansion.
fn check_reserve(argv: &[&[u8]], default_expansion: u32) {
    let r = match args::reserve(argv, default_expansion) {
        Ok(r) => r,
        Err(Refusal::Arity) => {
            assert!(
                argv.len() < 4 || argv.len() > 7,
                "arity refused {} arguments",
                argv.len()
            );
            return;
        }
        Err(Refusal::Reply(text)) => {
            assert!(!text.is_empty());
            return;
        }
    };
    assert!(r.error > 0.0 && r.error < 1.0, "error {}", r.error);
    assert!(r.capacity >= 1 && r.capacity <= i64::MAX as u64);
    assert!(r.expansion >= 1);
    let seed = r.seed.unwrap_or(7);
    let mut words = vec![
        "BF.RESERVE".to_string(),
        "key".to_string(),
        format!("{:?}", r.error),
        r.capacity.to_string(),
    ];
    if r.nonscaling {
        words.push("NONSCALING".into());
    } else {
        words.extend(["EXPANSION".into(), r.expansion.to_string()]);
    }
    words.extend(["SEED".into(), seed.to_string()]);
    let replicated: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
    let built = params(&r, seed);
    for default in [0, 2, 5] {
        let again = args::reserve(&replicated, default)
            .unwrap_or_else(|e| panic!("replicated form {words:?} refused: {e:?}"));
        assert_eq!(again.seed, Some(seed));
        assert_eq!(params(&again, seed), built, "replicated form {words:?}");
    }
}

/// The chain parameters BF.RESERVE creates (as `commands::reserve` builds its shape).
fn params(r: &Reserve, seed: u64) -> ChainParams {
    let shape = Shape {
        error: r.error,
        capacity: r.capacity,
        expansion: r.expansion,
        nonscaling: r.nonscaling,
    };
    shape.params(seed, u64::MAX)
}
