//! The BF.* argument lists: `BF.RESERVE`, `BF.INSERT`, and the replicated form of a creation.

use crate::args::{double, integer, is, unsigned, Refusal};
use crate::errors;
use crate::spec::{FilterSpec, Growth, Window};
use crate::valkey::filter::SEED_BYTES;
use crate::window::args::{parse_at, WindowOptions};

/// What `BF.RESERVE` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reserve {
    /// The filter to create.
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
            return Err(Refusal::Named(errors::unknown_argument("BF.RESERVE", arg)));
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

/// valkey-bloom's `TIGHTENING t` and `SEED s` of `BF.INSERT`, which it writes to its replicas
/// and its AOF for every filter it creates, and takes only from them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValkeyOptions {
    /// The tightening ratio (valkey-bloom's default 0.5 when only SEED is given).
    pub tightening: f64,
    /// The 32-byte seed; None when only TIGHTENING is given (valkey-bloom draws one).
    pub seed: Option<[u8; SEED_BYTES]>,
}

/// valkey-bloom's default tightening ratio.
pub const VALKEY_TIGHTENING: f64 = 0.5;

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
    /// rsbloom's `SLIDING` or `WINDOW s` as given (None without either): the window to create,
    /// and the one an existing filter must have.
    pub window: Option<Window>,
    /// valkey-bloom's options, from a replayed command only: a missing key is created as a
    /// valkey-bloom filter ([`crate::valkey`]) with them and the spec's capacity, rate and
    /// expansion (NONSCALING: 0).
    pub valkey: Option<ValkeyOptions>,
}

/// Parses `BF.INSERT key [CAPACITY n] [ERROR r] [EXPANSION n] [NOCREATE] [NONSCALING] [SLIDING |
/// WINDOW s] [AT ms] ITEMS item ...` as RedisBloom 2.8.2 does (rsbloom's options aside): each token is recognised by its first character (and
/// the second for ERROR/EXPANSION, the third for NOCREATE/NONSCALING); value parse failures are
/// reported during the scan, range failures after it. Options not given take `defaults`.
///
/// A `replayed` command (from the primary or the AOF) may also carry valkey-bloom's
/// `TIGHTENING t` and `SEED <32 bytes>`, and then needs no `ITEMS` (valkey-bloom replicates a
/// creation that way); from a client they are unknown arguments, as in valkey-bloom.
pub fn insert(argv: &[&[u8]], defaults: FilterSpec, replayed: bool) -> Result<Insert, Refusal> {
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
    let mut tightening = None;
    let mut seed = None;
    let mut i = 2;
    while i < argv.len() {
        let token = argv[i];
        if replayed && (is(token, "TIGHTENING") || is(token, "SEED")) {
            let value = *argv.get(i + 1).ok_or(Refusal::Arity)?;
            if is(token, "SEED") {
                seed = Some(
                    <[u8; SEED_BYTES]>::try_from(value)
                        .map_err(|_| Refusal::Reply(errors::VALKEY_BAD_SEED))?,
                );
            } else {
                tightening = match double(value) {
                    None => return Err(Refusal::Reply(errors::VALKEY_BAD_TIGHTENING)),
                    Some(t) if !(t > 0.0 && t < 1.0) => {
                        return Err(Refusal::Reply(errors::VALKEY_TIGHTENING_RANGE))
                    }
                    t => t,
                };
            }
            i += 2;
            continue;
        }
        // rsbloom's options, whole words, none of which RedisBloom takes (its first-letter
        // matching answers each with its unknown-argument error).
        if window.parse(argv, i)? {
            i += 1 + usize::from(is(token, "WINDOW"));
            continue;
        }
        if is(token, "AT") {
            clock = Some(parse_at(argv, i + 1)?);
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
    let valkey = (tightening.is_some() || seed.is_some()).then(|| ValkeyOptions {
        tightening: tightening.unwrap_or(VALKEY_TIGHTENING),
        seed,
    });
    let first_item = match first_item {
        Some(first) if first < argv.len() => first,
        None if valkey.is_some() => argv.len(),
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
        window: window.requested(),
        valkey,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: FilterSpec = FilterSpec {
        error: 0.01,
        capacity: 100,
        growth: Growth::Scaling(2),
        window: Window::Unbounded,
    };

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
            Refusal::Named(errors::unknown_argument("BF.RESERVE", b"NONSCALNG")),
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

    fn insert_of(line: &str) -> Result<Insert, Refusal> {
        let argv: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        insert(&argv, DEFAULTS, false)
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
}
