//! The argument parsers: the strict number parsers, BF.RESERVE's and BF.INSERT's options, the
//! replicated BF.RESERVE form, and the module load arguments. The input is the arguments
//! separated by newlines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rsbloom_core::args::{self, IntegerArg, Refusal};
use rsbloom_core::bloom::args as bloom_args;
use rsbloom_core::{FilterSpec, Growth, Window};

/// The module's integer load arguments, with ranges like the config table's.
const INTEGER_ARGS: [IntegerArg; 3] = [
    IntegerArg {
        name: "INITIAL_SIZE",
        min: 1,
        max: i64::MAX,
        memory: false,
    },
    IntegerArg {
        name: "EXPANSION",
        min: 0,
        max: u32::MAX as i64,
        memory: false,
    },
    IntegerArg {
        name: "MAX_FILTER_BYTES",
        min: 64,
        max: i64::MAX,
        memory: true,
    },
];

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
    let mut insert = vec![&b"BF.INSERT"[..], b"key"];
    insert.extend(&argv);
    check_insert(&insert);
    check_load_args(&argv);
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

/// A spec the parsers accepted is a valid filter.
fn check_spec(spec: &FilterSpec) {
    assert!(spec.error > 0.0 && spec.error < 1.0, "error {}", spec.error);
    assert!(spec.capacity >= 1 && spec.capacity <= i64::MAX as u64);
    assert_ne!(spec.growth, Growth::Scaling(0));
}

/// The replicated form of a spec ([`bloom_args::reserve_words`]) parses back to the same spec and
/// seed under any default expansion.
fn check_replicated(spec: &FilterSpec, seed: u64) {
    let mut words = vec!["BF.RESERVE".to_string(), "key".to_string()];
    words.extend(bloom_args::reserve_words(spec, seed));
    let replicated: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
    for default in [0, 2, 5] {
        let again = bloom_args::reserve(&replicated, default)
            .unwrap_or_else(|e| panic!("replicated form {words:?} refused: {e:?}"));
        assert_eq!((again.spec, again.seed), (*spec, Some(seed)), "{words:?}");
    }
}

/// An accepted BF.RESERVE describes a valid filter whose replicated form builds the same one.
fn check_reserve(argv: &[&[u8]], default_expansion: u32) {
    match bloom_args::reserve(argv, default_expansion) {
        Ok(r) => {
            check_spec(&r.spec);
            check_replicated(&r.spec, r.seed.unwrap_or(7));
        }
        Err(Refusal::Arity) => assert!(
            argv.len() < 4 || argv.len() > 7,
            "arity refused {} arguments",
            argv.len()
        ),
        Err(Refusal::Reply(text)) => assert!(!text.is_empty()),
        Err(Refusal::Named(text)) => assert!(text.starts_with("ERR ")),
    }
}

/// An accepted BF.INSERT from a client names at least one item after ITEMS, and the filter it
/// would create is valid and replicates exactly; valkey-bloom's TIGHTENING and SEED are taken
/// only from a replayed command.
fn check_insert(argv: &[&[u8]]) {
    let defaults = FilterSpec {
        error: 0.01,
        capacity: 100,
        growth: Growth::Scaling(2),
        window: Window::Unbounded,
        refresh: true,
    };
    if let Ok(i) = bloom_args::insert(argv, defaults, true) {
        assert!(i.first_item <= argv.len());
    }
    match bloom_args::insert(argv, defaults, false) {
        Ok(i) => {
            assert!(i.valkey.is_none(), "a client's TIGHTENING or SEED accepted");
            assert!(i.first_item >= 3 && i.first_item < argv.len());
            assert_eq!(argv[i.first_item - 1][0].to_ascii_lowercase(), b'i');
            if let Some(spec) = i.create {
                check_spec(&spec);
                check_replicated(&spec, 7);
            }
        }
        Err(Refusal::Arity | Refusal::Reply(_) | Refusal::Named(_)) => {}
    }
}

/// Accepted load arguments are in their ranges.
fn check_load_args(argv: &[&[u8]]) {
    if let Ok(parsed) = args::load_args(argv, &INTEGER_ARGS) {
        assert!(parsed.error_rate.is_none_or(|r| r > 0.0 && r < 1.0));
        for (at, value) in parsed.integers {
            let arg = INTEGER_ARGS[at];
            assert!((arg.min..=arg.max).contains(&value), "{} {value}", arg.name);
        }
    }
}
