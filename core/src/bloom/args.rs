//! The BF.* argument lists: `BF.RESERVE`, `BF.INSERT`, and the replicated form of a creation.

use crate::args::{double, integer, is, unsigned, Refusal};
use crate::errors;
use crate::spec::{FilterSpec, Growth, Window};
use crate::valkey::args::{ValkeyOptions, ValkeyWords};
use crate::window::args::{parse_at, WindowOptions, WindowWords};

/// What `BF.RESERVE` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reserve {
    /// The filter to create.
    pub spec: FilterSpec,
    /// rsbloom's `SEED`: the filter's hash seed instead of a random one.
    pub seed: Option<u64>,
}

/// Where `BF.RESERVE`'s own options stand (the window's go to `window`).
struct ReserveOptions {
    nonscaling: bool,
    expandable: bool,
    expansion_at: Option<usize>,
    seed_at: Option<usize>,
}

/// Reads `BF.RESERVE`'s options after the capacity: each at most once, the window's into
/// `window`; an unknown word is refused by name.
fn reserve_options(argv: &[&[u8]], window: &mut WindowOptions) -> Result<ReserveOptions, Refusal> {
    let mut nonscaling = false;
    let mut expandable = false;
    let mut expansion_at = None;
    let mut seed_at = None;
    let mut i = 4;
    while i < argv.len() {
        let arg = argv[i];
        let twice = |option| Err(Refusal::Named(errors::given_twice(option)));
        if is(arg, "NONSCALING") {
            if nonscaling {
                return twice("NONSCALING");
            }
            nonscaling = true;
        } else if is(arg, "EXPANDABLE") {
            if expandable {
                return twice("EXPANDABLE");
            }
            expandable = true;
        } else if is(arg, "EXPANSION") {
            // RedisBloom takes the first of two (`EXPANSION 10 EXPANSION` is 10): rsbloom
            // refuses a second, which one of the two a user meant being unknowable.
            if expansion_at.is_some() {
                return twice("EXPANSION");
            }
            expansion_at = Some(i + 1);
            i += 1;
        } else if is(arg, "SEED") {
            if seed_at.is_some() {
                return twice("SEED");
            }
            seed_at = Some(i + 1);
            i += 1;
        } else if window.parse(argv, i)? {
            i += usize::from(is(arg, "WINDOW"));
        } else {
            return Err(Refusal::Named(errors::unknown_argument("BF.RESERVE", arg)));
        }
        i += 1;
    }
    Ok(ReserveOptions {
        nonscaling,
        expandable,
        expansion_at,
        seed_at,
    })
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
                usize::from(is(a, "SLIDING") || is(a, "NOREFRESH") || is(a, "EXPANDABLE"))
            }
        })
        .sum();
    if argv.len() < 4 || argv.len() > 7 + extra.min(7) {
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
    let mut window = WindowOptions::default();
    let ReserveOptions {
        nonscaling,
        expandable,
        expansion_at,
        seed_at,
    } = reserve_options(argv, &mut window)?;
    if expandable {
        if nonscaling || expansion_at.is_some() || window.is_set() {
            return refuse(errors::EXPANDABLE_CONFLICT);
        }
        if crate::growing::design::shape_for(error).is_none() {
            return refuse(errors::EXPANDABLE_ERROR_RATE);
        }
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
        None if expandable => Growth::Expandable,
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
    if window.words(None).norefresh && spec.window == Window::Unbounded {
        return refuse(errors::NOREFRESH_WITHOUT_WINDOW);
    }
    Ok(Reserve { spec, seed })
}

/// The explicit `BF.RESERVE` arguments after the key that rsbloom replicates for every filter
/// it creates: `error capacity [SLIDING | WINDOW s] [NOREFRESH] [EXPANSION n | NONSCALING] SEED
/// seed`. They carry every
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
    if !spec.refresh {
        words.push("NOREFRESH".into());
    }
    match spec.growth {
        // A count window never grows: SLIDING says so.
        _ if spec.window == Window::Count => {}
        Growth::Fixed => words.push("NONSCALING".into()),
        Growth::Scaling(n) => words.extend(["EXPANSION".into(), n.to_string()]),
        Growth::Expandable => words.push("EXPANDABLE".into()),
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
    /// rsbloom's window words: `SLIDING` or `WINDOW s`, `AT ms` (rsbloom replicates every
    /// write to a time window with it), `NOREFRESH`.
    pub words: WindowWords,
    /// valkey-bloom's options, from a replayed command only: a missing key is created as a
    /// valkey-bloom filter ([`crate::valkey`]) with them and the spec's capacity, rate and
    /// expansion (NONSCALING: 0).
    pub valkey: Option<ValkeyOptions>,
}

/// Parses `BF.INSERT key [CAPACITY n] [ERROR r] [EXPANSION n] [NOCREATE] [NONSCALING] [SLIDING |
/// WINDOW s] [NOREFRESH] [AT ms] ITEMS item ...`. Value parse failures are reported during the
/// scan, range failures after it, as RedisBloom 2.8.2 does. Options not given take `defaults`.
///
/// From a client, options are whole words, each at most once: RedisBloom reads a word by its
/// first letters (`NOXYZ` as `NONSCALING`, `c` as `CAPACITY`), so a typo would silently change
/// what the filter is; rsbloom names such a word in its refusal (a word RedisBloom refuses too
/// gets RedisBloom's reply). A `replayed` command (from the primary or the AOF, which may
/// hold what RedisBloom took from its clients) is read as RedisBloom reads it, and may also
/// carry valkey-bloom's `TIGHTENING t` and `SEED <32 bytes>`, and then needs no `ITEMS`
/// (valkey-bloom replicates a creation that way); from a client they are unknown arguments,
/// as in valkey-bloom.
pub fn insert(argv: &[&[u8]], defaults: FilterSpec, replayed: bool) -> Result<Insert, Refusal> {
    if argv.len() < 4 {
        return Err(Refusal::Arity);
    }
    let mut o = InsertOptions::default();
    let mut first_item = None;
    let mut window = WindowOptions::default();
    let mut clock = None;
    let mut expandable = false;
    let mut i = 2;
    while i < argv.len() {
        let token = argv[i];
        if replayed && (is(token, "TIGHTENING") || is(token, "SEED")) {
            o.valkey
                .take(token, argv.get(i + 1).ok_or(Refusal::Arity)?)?;
            i += 2;
            continue;
        }
        // rsbloom's options, whole words, none of which RedisBloom takes (its first-letter
        // matching answers each with its unknown-argument error).
        if window.parse(argv, i)? {
            i += 1 + usize::from(is(token, "WINDOW"));
            continue;
        }
        if is(token, "EXPANDABLE") {
            if expandable {
                return Err(Refusal::Named(errors::given_twice("EXPANDABLE")));
            }
            expandable = true;
            i += 1;
            continue;
        }
        if is(token, "AT") {
            if clock.is_some() {
                return Err(Refusal::Named(errors::given_twice("AT")));
            }
            clock = Some(parse_at(argv, i + 1)?);
            i += 2;
            continue;
        }
        let Some(option) = InsertOption::of(token, replayed)? else {
            first_item = Some(i + 1);
            break;
        };
        if option.takes_value() {
            // An option that is the last argument has no value.
            o.set_value(option, argv.get(i + 1).ok_or(Refusal::Arity)?, replayed)?;
            i += 1;
        } else {
            o.set_flag(option, replayed)?;
        }
        i += 1;
    }
    let valkey = o.valkey.options();
    let first_item = match first_item {
        Some(first) if first < argv.len() => first,
        None if valkey.is_some() => argv.len(),
        _ => return Err(Refusal::Arity),
    };
    if o.error.is_some_and(|e| !(e > 0.0 && e < 1.0))
        || o.capacity.is_some_and(|c| c < 1)
        || o.expansion.is_some_and(|e| e < 1)
    {
        return Err(Refusal::Reply(errors::INSERT_BAD_ARGUMENT));
    }
    let error = o.error.unwrap_or(defaults.error);
    let growth = insert_growth(&o, expandable, &window, defaults.growth, error)?;
    let spec = window.spec(
        error,
        o.capacity.map_or(defaults.capacity, |c| c as u64),
        growth,
        o.expansion.is_some(),
    )?;
    Ok(Insert {
        create: (!o.nocreate).then_some(spec),
        first_item,
        words: window.words(clock),
        valkey,
    })
}

/// The growth `BF.INSERT` asks for: `EXPANDABLE` (alone: no window, NONSCALING or EXPANSION,
/// and a rate a growing filter honours), NONSCALING, EXPANSION, else the default's.
fn insert_growth(
    o: &InsertOptions,
    expandable: bool,
    window: &WindowOptions,
    default: Growth,
    error: f64,
) -> Result<Growth, Refusal> {
    if expandable && (o.nonscaling || o.expansion.is_some() || window.is_set()) {
        return Err(Refusal::Reply(errors::EXPANDABLE_CONFLICT));
    }
    let growth = match o.expansion {
        _ if expandable => Growth::Expandable,
        _ if o.nonscaling => Growth::Fixed,
        // rsbloom: a huge expansion saturates instead of wrapping (RedisBloom truncates it to
        // 32 bits, so 4294967296 becomes a growth of 0).
        Some(e) => Growth::Scaling(u32::try_from(e).unwrap_or(u32::MAX)),
        None => default,
    };
    let honoured = crate::growing::design::shape_for(error).is_some();
    if growth == Growth::Expandable && !window.is_set() && !honoured {
        return Err(Refusal::Reply(errors::EXPANDABLE_ERROR_RATE));
    }
    Ok(growth)
}

/// One of RedisBloom's `BF.INSERT` options (`None` from [`InsertOption::of`]: `ITEMS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InsertOption {
    Capacity,
    Error,
    Expansion,
    NoCreate,
    NonScaling,
}

impl InsertOption {
    const WORDS: [(&'static str, InsertOption); 5] = [
        ("CAPACITY", InsertOption::Capacity),
        ("ERROR", InsertOption::Error),
        ("EXPANSION", InsertOption::Expansion),
        ("NOCREATE", InsertOption::NoCreate),
        ("NONSCALING", InsertOption::NonScaling),
    ];

    /// The option `token` names (None: `ITEMS`). A client's must be a whole word; a replayed
    /// one is read by its first letters, as RedisBloom reads it.
    fn of(token: &[u8], replayed: bool) -> Result<Option<InsertOption>, Refusal> {
        if is(token, "ITEMS") {
            return Ok(None);
        }
        if let Some(&(_, option)) = Self::WORDS.iter().find(|(word, _)| is(token, word)) {
            return Ok(Some(option));
        }
        let letter = |n: usize| token.get(n).map(u8::to_ascii_lowercase);
        let misread = match letter(0) {
            Some(b'i') => None,
            Some(b'c') => Some(InsertOption::Capacity),
            Some(b'e') if letter(1) == Some(b'r') => Some(InsertOption::Error),
            Some(b'e') => Some(InsertOption::Expansion),
            Some(b'n') if letter(2) == Some(b'c') => Some(InsertOption::NoCreate),
            Some(b'n') => Some(InsertOption::NonScaling),
            _ => return Err(Refusal::Reply(errors::INSERT_UNKNOWN_ARGUMENT)),
        };
        if replayed {
            Ok(misread)
        } else {
            Err(Refusal::Named(errors::unknown_argument("BF.INSERT", token)))
        }
    }

    fn takes_value(self) -> bool {
        matches!(
            self,
            InsertOption::Capacity | InsertOption::Error | InsertOption::Expansion
        )
    }

    fn word(self) -> &'static str {
        Self::WORDS
            .iter()
            .find(|(_, o)| *o == self)
            .map_or("", |(word, _)| word)
    }
}

/// The options `BF.INSERT` has taken so far.
#[derive(Debug, Default)]
struct InsertOptions {
    error: Option<f64>,
    capacity: Option<i64>,
    expansion: Option<i64>,
    nocreate: bool,
    nonscaling: bool,
    valkey: ValkeyWords,
}

impl InsertOptions {
    /// Refuses a client's option given before (a replayed one: the last wins, as in
    /// RedisBloom).
    fn once(given: bool, option: InsertOption, replayed: bool) -> Result<(), Refusal> {
        if given && !replayed {
            return Err(Refusal::Named(errors::given_twice(option.word())));
        }
        Ok(())
    }

    fn set_value(
        &mut self,
        option: InsertOption,
        value: &[u8],
        replayed: bool,
    ) -> Result<(), Refusal> {
        let bad = |text| Refusal::Reply(text);
        match option {
            InsertOption::Capacity => {
                Self::once(self.capacity.is_some(), option, replayed)?;
                self.capacity = Some(integer(value).ok_or(bad(errors::INSERT_BAD_CAPACITY))?);
            }
            InsertOption::Error => {
                Self::once(self.error.is_some(), option, replayed)?;
                self.error = Some(double(value).ok_or(bad(errors::INSERT_BAD_ERROR_RATE))?);
            }
            _ => {
                Self::once(self.expansion.is_some(), option, replayed)?;
                self.expansion = Some(integer(value).ok_or(bad(errors::INSERT_BAD_EXPANSION))?);
            }
        }
        Ok(())
    }

    fn set_flag(&mut self, option: InsertOption, replayed: bool) -> Result<(), Refusal> {
        let flag = if option == InsertOption::NoCreate {
            &mut self.nocreate
        } else {
            &mut self.nonscaling
        };
        Self::once(*flag, option, replayed)?;
        *flag = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: FilterSpec = FilterSpec {
        error: 0.01,
        capacity: 100,
        growth: Growth::Scaling(2),
        window: Window::Unbounded,
        refresh: true,
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
                    refresh: true,
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
        for (line, word) in [
            ("BF.RESERVE k 0.01 1000 WINDOW 60 WINDOW 120", "WINDOW"),
            ("BF.RESERVE k 0.01 1000 EXPANSION 2 EXPANSION", "EXPANSION"),
            ("BF.RESERVE k 0.01 1000 NONSCALING NONSCALING", "NONSCALING"),
            ("BF.RESERVE k 0.01 1000 SEED 1 SEED 1", "SEED"),
            ("BF.RESERVE k 0.01 1000 SLIDING SLIDING", "SLIDING"),
        ] {
            refused(line, Refusal::Named(errors::given_twice(word)));
        }
        refused(
            "BF.RESERVE k 0.01 1000 NOREFRESH",
            Refusal::Reply(errors::NOREFRESH_WITHOUT_WINDOW),
        );
        let r = reserve_of(
            "BF.RESERVE k 0.01 1000 WINDOW 60 NOREFRESH EXPANSION 2 SEED 3",
            2,
        );
        assert!(!r.unwrap().spec.refresh);
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
            refresh: true,
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
        // RedisBloom tells tokens apart by their first letters: a replayed command is read so
        // (it may hold what RedisBloom took from its clients), a client's is refused by name.
        let replayed = |line: &str| {
            let argv: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
            insert(&argv, DEFAULTS, true)
        };
        let abbreviated = replayed("BF.INSERT k c 7 NOXYZ i a").unwrap();
        assert_eq!(abbreviated.create.unwrap().capacity, 7);
        assert_eq!(abbreviated.create.unwrap().growth, Growth::Fixed);
        assert_eq!(abbreviated.first_item, 6);
        for (line, word) in [
            ("BF.INSERT k c 7 i a", "c"),
            ("BF.INSERT k NOXYZ ITEMS a", "NOXYZ"),
            ("BF.INSERT k CAPACITY 7 I a", "I"),
            ("BF.INSERT k ERRORS 0.1 ITEMS a", "ERRORS"),
            ("BF.INSERT k exp 4 ITEMS a", "exp"),
            ("BF.INSERT k NOC ITEMS a", "NOC"),
            ("BF.INSERT k Ifoo a", "Ifoo"),
        ] {
            assert_eq!(
                insert_of(line),
                Err(Refusal::Named(errors::unknown_argument(
                    "BF.INSERT",
                    word.as_bytes()
                ))),
                "{line}"
            );
        }
        // A replayed command's second option wins, as in RedisBloom; a client's is refused.
        assert_eq!(
            replayed("BF.INSERT k CAPACITY 7 CAPACITY 9 ITEMS a")
                .unwrap()
                .create
                .unwrap()
                .capacity,
            9
        );
        for (line, word) in [
            ("BF.INSERT k CAPACITY 7 CAPACITY 9 ITEMS a", "CAPACITY"),
            ("BF.INSERT k ERROR 0.1 error 0.1 ITEMS a", "ERROR"),
            ("BF.INSERT k EXPANSION 2 EXPANSION 4 ITEMS a", "EXPANSION"),
            ("BF.INSERT k NOCREATE NOCREATE ITEMS a", "NOCREATE"),
            ("BF.INSERT k NONSCALING nonscaling ITEMS a", "NONSCALING"),
            ("BF.INSERT k AT 5 AT 6 ITEMS a", "AT"),
            ("BF.INSERT k WINDOW 60 WINDOW 120 ITEMS a", "WINDOW"),
            ("BF.INSERT k NOREFRESH NOREFRESH ITEMS a", "NOREFRESH"),
        ] {
            assert_eq!(
                insert_of(line),
                Err(Refusal::Named(errors::given_twice(word))),
                "{line}"
            );
        }
        // NOREFRESH: the call's word, and the mode of a window it creates.
        let i = insert_of("BF.INSERT k NOREFRESH ITEMS a").unwrap();
        assert!(i.words.norefresh);
        assert!(i.create.unwrap().refresh, "no window to make it a mode of");
        let i = insert_of("BF.INSERT k WINDOW 60 NOREFRESH AT 5 ITEMS a").unwrap();
        assert_eq!(
            i.words,
            WindowWords {
                window: Some(Window::Time { seconds: 60 }),
                at: Some(5),
                norefresh: true
            }
        );
        assert!(!i.create.unwrap().refresh);
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
                refresh: true,
            },
            FilterSpec {
                error: 1e-300,
                capacity: 1,
                growth: Growth::Scaling(u32::MAX),
                window: Window::Unbounded,
                refresh: true,
            },
            FilterSpec {
                error: 0.01,
                capacity: 1000,
                growth: Growth::Scaling(4),
                window: Window::Time { seconds: 604_800 },
                refresh: false,
            },
            FilterSpec {
                error: 0.001,
                capacity: 10,
                growth: Growth::Fixed,
                window: Window::Count,
                refresh: false,
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
