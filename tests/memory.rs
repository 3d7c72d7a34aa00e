//! What keys cost: `used_memory` per key over many small filters of each kind, rsbloom's against
//! RedisBloom 2.8.2's, and `MEMORY USAGE` against what a key really adds to `used_memory`, for
//! every kind and layout (plain, grown chain, count and time window with and without burst
//! extras, cuckoo, valkey-bloom). The figures are printed: docs/configuration.md quotes them.

mod common;

use common::*;

/// How one kind of key is made: its commands, given the key's name.
struct Kind {
    name: &'static str,
    make: fn(&str) -> Vec<Vec<Vec<u8>>>,
    /// Keys made to measure it.
    keys: usize,
}

fn words(line: &[&str]) -> Vec<Vec<u8>> {
    line.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// `n` items to add, as one BF.MADD.
fn fed(key: &str, n: usize) -> Vec<Vec<u8>> {
    let mut line = words(&["BF.MADD", key]);
    line.extend((0..n).map(|i| format!("item-{i}").into_bytes()));
    line
}

const SMALL: usize = 100_000;

fn kinds() -> Vec<Kind> {
    vec![
        Kind {
            name: "BF.ADD (created by an add)",
            make: |k| vec![words(&["BF.ADD", k, "x"])],
            keys: SMALL,
        },
        Kind {
            name: "BF.RESERVE 0.01 1000, one add",
            make: |k| {
                vec![
                    words(&["BF.RESERVE", k, "0.01", "1000"]),
                    words(&["BF.ADD", k, "x"]),
                ]
            },
            keys: SMALL,
        },
        Kind {
            name: "CF.ADD (created by an add)",
            make: |k| vec![words(&["CF.ADD", k, "x"])],
            keys: SMALL,
        },
        Kind {
            name: "grown chain (BF.ADD, 3,000 items)",
            make: |k| vec![fed(k, 3000)],
            keys: 2000,
        },
        Kind {
            name: "count window (SLIDING 1000), one add",
            make: |k| {
                vec![
                    words(&["BF.RESERVE", k, "0.01", "1000", "SLIDING"]),
                    words(&["BF.ADD", k, "x"]),
                ]
            },
            keys: 20_000,
        },
        Kind {
            name: "time window (WINDOW 3600, 1000), one add",
            make: |k| {
                vec![
                    words(&["BF.RESERVE", k, "0.01", "1000", "WINDOW", "3600"]),
                    words(&["BF.ADD", k, "x"]),
                ]
            },
            keys: 20_000,
        },
        Kind {
            name: "time window with burst extras (WINDOW 3600, 100, fed 2,000)",
            make: |k| {
                vec![
                    words(&["BF.RESERVE", k, "0.01", "100", "WINDOW", "3600"]),
                    fed(k, 2000),
                ]
            },
            keys: 2000,
        },
        Kind {
            name: "valkey-bloom (BF.LOAD of bf:exp4)",
            make: |k| {
                vec![vec![
                    b"BF.LOAD".to_vec(),
                    k.as_bytes().to_vec(),
                    valkey_bloom_blob("bf:exp4"),
                ]]
            },
            keys: 5000,
        },
    ]
}

/// `used_memory` per key of `kind` on the server behind `c` (the keys made in pipelines of 500
/// commands, then deleted), and the `MEMORY USAGE` of one of them.
fn measure(c: &mut redis::Connection, kind: &Kind) -> (f64, i64) {
    let used = |c: &mut redis::Connection| -> i64 {
        info_field(c, "memory", "used_memory").parse().unwrap()
    };
    assert_eq!(run(c, &["FLUSHALL"]), ok());
    let before = used(c);
    let mut batch = Vec::new();
    for i in 0..kind.keys {
        batch.extend((kind.make)(&format!("k:{i:07}")));
        if batch.len() >= 500 || i + 1 == kind.keys {
            pipeline(c, &batch);
            batch.clear();
        }
    }
    let per_key = (used(c) - before) as f64 / kind.keys as f64;
    let Reply::Int(usage) = run(c, &["MEMORY", "USAGE", "k:0000001"]) else {
        panic!("MEMORY USAGE of {}", kind.name)
    };
    assert_eq!(run(c, &["FLUSHALL"]), ok());
    (per_key, usage)
}

/// Every kind's `MEMORY USAGE` is within 10% (or 32 bytes) of what one key adds to
/// `used_memory`; the small filters (created by BF.ADD, by BF.RESERVE, by CF.ADD) cost no more
/// than RedisBloom's, which takes the same commands side by side.
#[test]
fn keys_cost_no_more_than_redisbloom_and_memory_usage_tells_the_truth() {
    let s = Server::new();
    let mut c = s.conn();
    let rb = Server::try_with_module(&redisbloom_so(), None, &[], &[]).expect("RedisBloom");
    let mut rc = rb.conn();
    println!("| key | rsbloom used_memory per key | its MEMORY USAGE | RedisBloom 2.8.2 used_memory per key |");
    println!("|---|---|---|---|");
    for kind in kinds() {
        let (per_key, usage) = measure(&mut c, &kind);
        let redisbloom = (kind.keys == SMALL).then(|| measure(&mut rc, &kind).0);
        println!(
            "| {} | {per_key:.1} | {usage} | {} |",
            kind.name,
            redisbloom.map_or("".into(), |r| format!("{r:.1}"))
        );
        let off = (usage as f64 - per_key).abs();
        assert!(
            off <= (per_key * 0.1).max(32.0),
            "{}: MEMORY USAGE {usage}, {per_key:.1} per key",
            kind.name
        );
        if let Some(redisbloom) = redisbloom {
            assert!(
                per_key <= redisbloom + 1.0,
                "{}: {per_key:.1} per key, RedisBloom {redisbloom:.1}",
                kind.name
            );
        }
    }
}
