//! What keys cost: `used_memory` per key over many small filters of each kind, rsbloom's against
//! RedisBloom 2.8.2's, and `MEMORY USAGE` against what a key really adds to `used_memory`, for
//! every kind and layout (plain, grown chain, count and time window with and without burst
//! extras, cuckoo, valkey-bloom). The figures are printed: docs/configuration.md quotes them.

mod common;

use common::*;

/// The tests here measure memory and the allocator's work: one at a time, so that none is
/// measured while another fills a server beside it.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

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
    // SYNC: Valkey 8.1 and later flush in the background by default
    // (`lazyfree-lazy-user-flush yes`), and the keys still being freed made the next kind's
    // keys look smaller than they are (a time window 632 bytes a key on Valkey 8.1, its
    // MEMORY USAGE 3,248).
    assert_eq!(run(c, &["FLUSHALL", "SYNC"]), ok());
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
    assert_eq!(run(c, &["FLUSHALL", "SYNC"]), ok());
    (per_key, usage)
}

/// Every kind's `MEMORY USAGE` is within 10% (or 32 bytes) of what one key adds to
/// `used_memory`; the small filters (created by BF.ADD, by BF.RESERVE, by CF.ADD) cost no more
/// than RedisBloom's, which takes the same commands side by side.
#[test]
fn keys_cost_no_more_than_redisbloom_and_memory_usage_tells_the_truth() {
    let _alone = alone();
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

/// Limits the server's address space to what it maps now plus `headroom` bytes (`prlimit
/// --pid`), as a container's memory limit or strict overcommit refuses memory. Relative to
/// what the server maps, so the same test holds on jemalloc, which maps more up front, and on
/// the C library's malloc (`scripts/servers`' Valkey 9.1), where fixed limits of 1 GB and
/// 200 MB left room for a 800 MB window and for a copy the test meant to refuse.
fn limit_address_space(s: &Server, headroom: u64) {
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid)).unwrap();
    let mapped_kb: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmSize in /proc/<pid>/status");
    let limit = mapped_kb * 1024 + headroom;
    let set = std::process::Command::new("prlimit")
        .args(["--pid", &s.pid.to_string(), &format!("--as={limit}")])
        .status()
        .expect("prlimit");
    assert!(set.success(), "prlimit --pid {} --as={limit}", s.pid);
}

/// A server under an address-space limit (`prlimit --as`, as a container's memory limit or
/// strict overcommit refuses memory): every filter whose memory the allocator refuses is an
/// error reply that changes nothing, and the server goes on serving. Before, Redis's
/// allocator aborted the server ("Out of memory allocating …").
#[test]
fn a_refused_allocation_is_an_error_reply_and_the_server_goes_on() {
    let _alone = alone();
    let s = Server::new();
    limit_address_space(&s, 600_000_000);
    let mut c = s.conn();
    let refused = err("ERR Insufficient memory to create filter");
    // Under the default per-filter cap (2 GiB), over the 600 MB left: 1.2 GB of bits, a window
    // of about 800 MB, 1 GB of cuckoo slots.
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "b", "0.01", "1000000000"]),
        refused
    );
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "w", "0.01", "400000000", "WINDOW", "60"]
        ),
        refused
    );
    assert_eq!(
        run(
            &mut c,
            &["BF.INSERT", "i", "CAPACITY", "1000000000", "ITEMS", "a"]
        ),
        refused
    );
    assert_eq!(run(&mut c, &["CF.RESERVE", "c", "1000000000"]), refused);
    // With the cap raised as far as it goes: RedisBloom's own flow test's filter.
    assert_eq!(
        run(
            &mut c,
            &[
                "CONFIG",
                "SET",
                "bf.max-filter-bytes",
                "9223372036854775807"
            ]
        ),
        ok()
    );
    assert!(run(
        &mut c,
        &[
            "CF.RESERVE",
            "cf",
            "100000000000000000",
            "BUCKETSIZE",
            "255",
            "EXPANSION",
            "32768"
        ]
    )
    .is_err());
    // What fits is still created, and only that.
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "g", "0.01", "200000000", "EXPANSION", "4"]
        ),
        ok()
    );
    assert_eq!(run(&mut c, &["DBSIZE"]), int(1), "only the filter that fit");
    assert_eq!(run(&mut c, &["BF.ADD", "small", "x"]), int(1));
    assert_eq!(run(&mut c, &["PING"]), Reply::Status("PONG".into()));
    // RESTORE of a value whose bits the allocator refuses: an error, the server goes on.
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "big", "0.01", "30000000"]),
        ok()
    );
    let Reply::Bulk(dump) = run(&mut c, &["DUMP", "big"]) else {
        panic!("DUMP")
    };
    for copy in 0..40 {
        let key = format!("copy{copy}");
        let mut cmd = redis::cmd("RESTORE");
        cmd.arg(&key).arg(0).arg(&dump);
        if cmd.query::<redis::Value>(&mut c).is_err() {
            assert_eq!(run(&mut c, &["EXISTS", &key]), int(0));
            assert_eq!(run(&mut c, &["PING"]), Reply::Status("PONG".into()));
            return;
        }
    }
    panic!("40 copies of a 36 MB filter fit in a 1 GB address space");
}

/// Active defrag moves the module's blocks (Redis 7.4's build has active defrag; Debian's Redis
/// 7.0 does not): 120,000 filters of four kinds (chains, reserved chains, cuckoo filters, growing
/// filters, whose chunk table and blocks move too), most of them deleted, leave the allocator's
/// pages sparse; with `activedefrag yes` the fragmented bytes fall by at least a third (with no
/// callback they hardly move: 62.9 MB to 62.8 MB in 30 s; with it they settle at 31.0–31.3 MB
/// within 8 s, a floor the allocator keeps, as it moves a block only off a page emptier than
/// its class's average: "by half", 31.4 MB, failed a CI run), the dataset's digest is
/// unchanged, and INFO's `bf_defrag_*` counters show the module's share.
#[test]
fn active_defrag_moves_the_filters_blocks() {
    let _alone = alone();
    let redis74 = servers_path("redis-7.4");
    let s = Server::start_on(&redis74, &module_path(), None, &[], &[]).expect("Redis 7.4");
    let mut c = s.conn();
    let n = 120_000;
    let mut batch = Vec::new();
    for i in 0..n {
        let key = format!("k{i}");
        match i % 4 {
            0 => batch.push(words(&["BF.ADD", &key, "x"])),
            1 => {
                batch.push(words(&["BF.RESERVE", &key, "0.01", "200"]));
                batch.push(words(&["BF.ADD", &key, "x"]));
            }
            2 => batch.push(words(&["CF.ADD", &key, "x"])),
            _ => {
                batch.push(words(&["BF.RESERVE", &key, "0.01", "200", "EXPANDABLE"]));
                batch.push(words(&["BF.ADD", &key, "x"]));
            }
        }
        if batch.len() >= 1000 {
            pipeline(&mut c, &batch);
            batch.clear();
        }
    }
    pipeline(&mut c, &batch);
    // Delete most, keeping 1%, 2%, 20% or 40% of each run of 600 keys (a fixed pseudo-random
    // choice): pages of uneven use, as deletes leave them.
    let kept = |i: usize| {
        let share = [1, 2, 20, 40][(i / 600) % 4];
        rsbloom_core::hash::mix64(i as u64) % 100 < share
    };
    let deleted: Vec<Vec<Vec<u8>>> = (0..n)
        .filter(|&i| !kept(i))
        .map(|i| words(&["DEL", &format!("k{i}")]))
        .collect();
    for chunk in deleted.chunks(1000) {
        pipeline(&mut c, chunk);
    }
    let fragmented = |c: &mut redis::Connection| -> i64 {
        info_field(c, "memory", "allocator_frag_bytes")
            .parse()
            .unwrap()
    };
    let digest = run(&mut c, &["DEBUG", "DIGEST"]);
    let before = fragmented(&mut c);
    for (name, value) in [
        ("active-defrag-ignore-bytes", "100kb"),
        ("active-defrag-threshold-lower", "1"),
        ("active-defrag-cycle-min", "50"),
        ("active-defrag-cycle-max", "90"),
        ("activedefrag", "yes"),
    ] {
        assert_eq!(run(&mut c, &["CONFIG", "SET", name, value]), ok(), "{name}");
    }
    s.wait_for("the fragmented bytes to fall by a third", 180, || {
        fragmented(&mut c) <= before * 2 / 3
    });
    let after = fragmented(&mut c);
    let moved: u64 = info_field(&mut c, "bf_stats", "bf_defrag_moved")
        .parse()
        .unwrap();
    let values: u64 = info_field(&mut c, "bf_stats", "bf_defrag_values")
        .parse()
        .unwrap();
    println!(
        "active defrag: allocator_frag_bytes {before} -> {after}; the module moved {moved} blocks \
         over {values} value walks"
    );
    assert!(moved > 1000, "{moved} blocks moved");
    assert_eq!(run(&mut c, &["DEBUG", "DIGEST"]), digest);
    // Every kept filter still answers.
    for i in (0..n).filter(|&i| kept(i)).take(300) {
        let key = format!("k{i}");
        let cmd = if i % 4 == 2 { "CF.EXISTS" } else { "BF.EXISTS" };
        assert_eq!(run(&mut c, &[cmd, &key, "x"]), int(1), "{key}");
    }
}

/// COPY of a key whose copy the allocator refuses (the server's address space limited to
/// what it maps plus 8 MB, less than any of these filters): COPY answers an error, the key is
/// unchanged and the copy absent, the log says why in one line, and the server goes on.
/// Before, copying a filter's blocks aborted the server ("memory allocation of ... failed"),
/// for every kind.
#[test]
fn a_copy_the_allocator_refuses_is_an_error_and_the_server_goes_on() {
    let _alone = alone();
    let blob = |from: usize| -> Vec<u8> {
        (from..from + 100_000)
            .map(|i| format!("item-{i}\n"))
            .collect::<String>()
            .into_bytes()
    };
    // Each reserved kind with a single block of 38 to 67 MB; a growing filter (many small
    // blocks) of 20M items, 42 MB.
    let kinds: [(&[&str], usize); 5] = [
        (&["BF.RESERVE", "f", "0.01", "30000000"], 0),
        (&["BF.RESERVE", "f", "0.01", "20000000", "WINDOW", "60"], 0),
        (&["BF.RESERVE", "f", "0.01", "20000000", "SLIDING"], 0),
        (&["CF.RESERVE", "f", "40000000"], 0),
        (
            &["BF.RESERVE", "f", "0.01", "100", "EXPANDABLE"],
            20_000_000,
        ),
    ];
    for (reserve, fill) in kinds {
        let s = Server::new();
        let mut c = s.conn();
        assert_eq!(run(&mut c, reserve), ok(), "{reserve:?}");
        for from in (0..fill).step_by(100_000) {
            let mut cmd = redis::cmd("BF.BULKADD");
            cmd.arg("f").arg(blob(from));
            cmd.query::<Vec<u8>>(&mut c).expect("the fill fits");
        }
        let usage = memory_usage(&mut c, "f");
        assert!(usage > 30_000_000, "{reserve:?}: {usage} bytes");
        limit_address_space(&s, 8_000_000);
        let cuckoo = reserve[0] == "CF.RESERVE";
        let (add, exists) = match cuckoo {
            true => ("CF.ADD", "CF.EXISTS"),
            false => ("BF.ADD", "BF.EXISTS"),
        };
        assert_eq!(run(&mut c, &[add, "f", "kept"]), int(1), "{reserve:?}");
        assert!(
            run(&mut c, &["COPY", "f", "g"]).is_err(),
            "{reserve:?}: a copy of {usage} bytes fit in 8 MB more"
        );
        assert_eq!(run(&mut c, &["PING"]), Reply::Status("PONG".into()));
        assert_eq!(run(&mut c, &["EXISTS", "g"]), int(0), "{reserve:?}");
        assert_eq!(run(&mut c, &[exists, "f", "kept"]), int(1), "{reserve:?}");
        assert!(
            s.log()
                .contains("rsbloom: COPY failed: the allocator refused"),
            "{reserve:?}: no refusal logged"
        );
    }
}
