//! The CF.* argument lists: `CF.RESERVE`, `CF.INSERT` / `CF.INSERTNX`, and the replicated
//! form of a creation.

use crate::args::{integer, is, unsigned, Refusal};
use crate::errors;
use crate::spec::CuckooSpec;

/// A window word among a cuckoo command's options (rsbloom's own Bloom options: RedisBloom
/// answers them with its arity or unknown-argument error), named and explained.
fn refuse_window_words(options: &[&[u8]]) -> Result<(), Refusal> {
    match options
        .iter()
        .find(|a| ["SLIDING", "WINDOW", "AT"].iter().any(|w| is(a, w)))
    {
        Some(word) => Err(Refusal::Named(errors::window_word_on_cuckoo(word))),
        None => Ok(()),
    }
}

/// What `CF.RESERVE` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserve {
    /// The filter to create.
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
pub fn reserve(argv: &[&[u8]], defaults: CuckooSpec) -> Result<Reserve, Refusal> {
    use errors::cf;
    refuse_window_words(&argv[argv.len().min(3)..])?;
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
            i64::from(defaults.max_iterations),
        ),
        (
            "BUCKETSIZE",
            cf::PARSE_BUCKET_SIZE,
            cf::BUCKET_SIZE_RANGE,
            1..=255,
            i64::from(defaults.bucket_size),
        ),
        (
            "EXPANSION",
            cf::PARSE_EXPANSION,
            cf::EXPANSION_RANGE,
            0..=i64::from(crate::cuckoo::filter::MAX_EXPANSION),
            i64::from(defaults.expansion),
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
    if let Some(pair) = argv[3..]
        .chunks_exact(2)
        .find(|pair| !known.iter().any(|k| is(pair[0], k)))
    {
        return Err(Refusal::Named(errors::unknown_argument(
            "CF.RESERVE",
            pair[0],
        )));
    }
    let seed = match value_of("SEED") {
        None => None,
        Some(text) => Some(unsigned(text).ok_or(Refusal::Reply(errors::BAD_SEED))?),
    };
    if bucket_size * 2 > capacity {
        return refuse(cf::CAPACITY_RANGE);
    }
    Ok(Reserve {
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
/// [`reserve`] parses back to the same spec and seed.
pub fn reserve_words(spec: &CuckooSpec, seed: u64) -> Vec<String> {
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
pub struct Insert {
    /// The filter to create when the key is missing; `None` with NOCREATE.
    pub create: Option<CuckooSpec>,
    /// Index in argv of the first item (after ITEMS).
    pub first_item: usize,
}

/// Parses `CF.INSERT[NX] key [CAPACITY c] [NOCREATE] ITEMS item ...` as RedisBloom 2.8.2 does:
/// each token is recognised by its first letter (`c`: CAPACITY and its value, `i`: the items
/// follow, `n`: NOCREATE), errors are reported left to right, and CAPACITY is checked even when
/// the key exists.
pub fn insert(argv: &[&[u8]], defaults: CuckooSpec) -> Result<Insert, Refusal> {
    if argv.len() < 4 {
        return Err(Refusal::Arity);
    }
    let options_end = argv[2..]
        .iter()
        .position(|a| a.first().is_some_and(|c| c.eq_ignore_ascii_case(&b'i')))
        .map_or(argv.len(), |at| at + 2);
    refuse_window_words(&argv[2..options_end])?;
    let mut capacity = defaults.capacity;
    let mut nocreate = false;
    let mut i = 2;
    while i < argv.len() {
        match argv[i].first().map(u8::to_ascii_lowercase) {
            Some(b'i') => {
                if i + 1 == argv.len() {
                    return Err(Refusal::Arity);
                }
                let spec = CuckooSpec {
                    capacity,
                    expansion: CuckooSpec::stored_expansion(defaults.expansion),
                    ..defaults
                };
                return Ok(Insert {
                    create: (!nocreate).then_some(spec),
                    first_item: i + 1,
                });
            }
            Some(b'c') => {
                let value = *argv.get(i + 1).ok_or(Refusal::Arity)?;
                let c = integer(value).ok_or(Refusal::Reply(errors::cf::BAD_CAPACITY))?;
                if c < 2 * i64::from(defaults.bucket_size) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::cf;

    fn words(line: &str) -> Vec<&[u8]> {
        line.split_whitespace().map(str::as_bytes).collect()
    }

    const DEFAULTS: CuckooSpec = CuckooSpec::implicit(CuckooSpec::DEFAULT_CAPACITY);

    fn reserve_of(line: &str) -> Result<Reserve, Refusal> {
        reserve(&words(line), DEFAULTS)
    }

    fn insert_of(line: &str) -> Result<Insert, Refusal> {
        insert(&words(line), DEFAULTS)
    }

    #[test]
    fn reserve_options_and_their_errors() {
        let r = reserve_of("CF.RESERVE k 1000").unwrap();
        assert_eq!((r.spec, r.seed), (CuckooSpec::implicit(1000), None));
        let r = reserve_of("CF.RESERVE k 1000 bucketsize 4 MAXITERATIONS 7 EXPANSION 3 SEED 9")
            .unwrap();
        let spec = CuckooSpec {
            capacity: 1000,
            bucket_size: 4,
            max_iterations: 7,
            // Stored as the next power of two, as RedisBloom stores it.
            expansion: 4,
        };
        assert_eq!((r.spec, r.seed), (spec, Some(9)));
        // The first of a repeated option counts.
        let r = reserve_of("CF.RESERVE k 1000 BUCKETSIZE 1 BUCKETSIZE 4").unwrap();
        assert_eq!(r.spec.bucket_size, 1);
        let refused = |line| reserve_of(line).err();
        let reply = |text| Some(Refusal::Reply(text));
        assert_eq!(refused("CF.RESERVE k"), Some(Refusal::Arity));
        assert_eq!(
            refused("CF.RESERVE k 1000 BUCKETSIZE"),
            Some(Refusal::Arity)
        );
        assert_eq!(refused("CF.RESERVE k x"), reply(cf::BAD_CAPACITY));
        assert_eq!(
            refused("CF.RESERVE k 1000 MAXITERATIONS x"),
            reply(cf::PARSE_MAX_ITERATIONS)
        );
        assert_eq!(
            refused("CF.RESERVE k 1000 MAXITERATIONS 0"),
            reply(cf::MAX_ITERATIONS_RANGE)
        );
        assert_eq!(
            refused("CF.RESERVE k 1000 BUCKETSIZE x"),
            reply(cf::PARSE_BUCKET_SIZE)
        );
        assert_eq!(
            refused("CF.RESERVE k 1000 BUCKETSIZE 256"),
            reply(cf::BUCKET_SIZE_RANGE)
        );
        assert_eq!(
            refused("CF.RESERVE k 1000 EXPANSION x"),
            reply(cf::PARSE_EXPANSION)
        );
        assert_eq!(
            refused("CF.RESERVE k 1000 EXPANSION 32769"),
            reply(cf::EXPANSION_RANGE)
        );
        // RedisBloom's order: MAXITERATIONS before BUCKETSIZE, whatever the order given.
        assert_eq!(
            refused("CF.RESERVE k 1000 BUCKETSIZE 0 MAXITERATIONS 0"),
            reply(cf::MAX_ITERATIONS_RANGE)
        );
        assert_eq!(
            refused("CF.RESERVE k 1000 COLOUR 4"),
            Some(Refusal::Named(errors::unknown_argument(
                "CF.RESERVE",
                b"COLOUR"
            )))
        );
        // Bloom filters' window words, named; before the arity check, which they would fail.
        for line in ["CF.RESERVE k 1000 SLIDING", "CF.RESERVE k 1000 window 60"] {
            let word = line.split(' ').nth(3).unwrap().as_bytes();
            assert_eq!(
                refused(line),
                Some(Refusal::Named(errors::window_word_on_cuckoo(word))),
                "{line}"
            );
        }
        assert_eq!(
            refused("CF.RESERVE k 1000 SEED -1"),
            reply(errors::BAD_SEED)
        );
        // The capacity must hold two buckets.
        assert_eq!(
            refused("CF.RESERVE k 7 BUCKETSIZE 4"),
            reply(cf::CAPACITY_RANGE)
        );
        assert!(reserve_of("CF.RESERVE k 8 BUCKETSIZE 4").is_ok());
    }

    #[test]
    fn the_replicated_reserve_parses_back_to_the_same_spec() {
        for line in [
            "CF.RESERVE k 4",
            "CF.RESERVE k 1000000 BUCKETSIZE 255 MAXITERATIONS 65535 EXPANSION 32768",
            "CF.RESERVE k 50 EXPANSION 0",
        ] {
            let spec = reserve_of(line).unwrap().spec;
            let mut argv = words("CF.RESERVE k");
            let replicated = reserve_words(&spec, 77);
            argv.extend(replicated.iter().map(|w| w.as_bytes()));
            let back = reserve(&argv, DEFAULTS).unwrap();
            assert_eq!((back.spec, back.seed), (spec, Some(77)), "{line}");
        }
    }

    #[test]
    fn insert_options_and_their_errors() {
        let i = insert_of("CF.INSERT k ITEMS a b").unwrap();
        assert_eq!(i.first_item, 3);
        assert_eq!(
            i.create,
            Some(CuckooSpec::implicit(CuckooSpec::DEFAULT_CAPACITY))
        );
        // Tokens are known by their first letter, as RedisBloom reads them.
        let i = insert_of("CF.INSERT k cap 5000 nocreate i a").unwrap();
        assert_eq!((i.create, i.first_item), (None, 6));
        let i = insert_of("CF.INSERT k CAPACITY 5000 ITEMS a").unwrap();
        assert_eq!(i.create.map(|s| s.capacity), Some(5000));
        let refused = |line| insert_of(line).err();
        let reply = |text| Some(Refusal::Reply(text));
        assert_eq!(refused("CF.INSERT k ITEMS"), Some(Refusal::Arity));
        assert_eq!(
            refused("CF.INSERT k NOCREATE a"),
            reply(errors::INSERT_UNKNOWN_ARGUMENT)
        );
        assert_eq!(
            refused("CF.INSERT k NOCREATE NOCREATE"),
            Some(Refusal::Arity)
        );
        assert_eq!(
            refused("CF.INSERT k CAPACITY x ITEMS a"),
            reply(cf::BAD_CAPACITY)
        );
        assert_eq!(
            refused("CF.INSERT k CAPACITY 3 ITEMS a"),
            reply(cf::CAPACITY_RANGE)
        );
        assert_eq!(refused("CF.INSERT k ITEMS"), Some(Refusal::Arity));
        for line in ["CF.INSERT k SLIDING ITEMS a", "CF.INSERT k AT 5 ITEMS a"] {
            let word = line.split(' ').nth(2).unwrap().as_bytes();
            assert_eq!(
                refused(line),
                Some(Refusal::Named(errors::window_word_on_cuckoo(word))),
                "{line}"
            );
        }
        // An item named like a window word is an item.
        assert_eq!(
            insert_of("CF.INSERT k ITEMS WINDOW AT").map(|i| i.first_item),
            Ok(3)
        );
    }
}
