//! Drop-in migration: an RDB written by RedisBloom 2.8.2 loads into rsbloom with the same
//! answers, and an RDB written by rsbloom is refused by RedisBloom (the switch is one-way).

mod common;

use common::*;

fn items(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}:{i}")).collect()
}

/// Runs `cmd key items...` in batches of 1000 and concatenates the array replies.
fn batched(con: &mut redis::Connection, cmd: &str, key: &str, its: &[String]) -> Vec<Reply> {
    let mut out = Vec::with_capacity(its.len());
    for chunk in its.chunks(1000) {
        let mut args = vec![cmd, key];
        args.extend(chunk.iter().map(String::as_str));
        match run(con, &args) {
            Reply::Arr(v) => {
                assert_eq!(v.len(), chunk.len(), "{cmd} {key} reply length");
                out.extend(v)
            }
            other => panic!("{cmd} {key}: {other:?}"),
        }
    }
    out
}

struct Shape {
    key: &'static str,
    /// BF.RESERVE arguments after the key.
    reserve: &'static [&'static str],
    added: usize,
}

const SHAPES: &[Shape] = &[
    Shape {
        key: "s1",
        reserve: &["0.01", "100"],
        added: 1000,
    },
    Shape {
        key: "ns",
        reserve: &["0.001", "1000", "NONSCALING"],
        added: 900,
    },
    Shape {
        key: "e1",
        reserve: &["0.05", "50", "EXPANSION", "1"],
        added: 500,
    },
    Shape {
        key: "e4",
        reserve: &["0.1", "10", "EXPANSION", "4"],
        added: 2000,
    },
    Shape {
        key: "tiny",
        reserve: &["1e-6", "1000"],
        added: 1000,
    },
    Shape {
        key: "big",
        reserve: &["0.01", "100000"],
        added: 100_000,
    },
];

/// Legacy filters RedisBloom 2.8.2 builds from a SCANDUMP header (it validates little there):
/// `(key, options, bits, n2, items added)`. 32-bit hashing without FORCE64, and power-of-two
/// links (n2 > 0); the items make RedisBloom grow further links of the same kind.
const LEGACY: &[(&str, u32, u64, u8, usize)] = &[
    ("l32", 1, 1152, 0, 250),
    ("l32n2", 0, 1024, 10, 300),
    ("l64n2", 4 | 1, 2048, 11, 300),
];

/// A one-link, empty RedisBloom header for capacity 100 at 0.005.
fn legacy_header(options: u32, bits: u64, n2: u8) -> Vec<u8> {
    let error = 0.005f64;
    let bpe = (error.ln() / 0.480453013918201).abs();
    // RedisBloom's truncated ln 2, which its hash counts are computed with.
    #[allow(clippy::approx_constant)]
    let hashes = (0.693147180559945 * bpe).ceil() as u32;
    let mut h = Vec::new();
    h.extend_from_slice(&0u64.to_le_bytes());
    h.extend_from_slice(&1u32.to_le_bytes());
    h.extend_from_slice(&options.to_le_bytes());
    h.extend_from_slice(&2u32.to_le_bytes());
    h.extend_from_slice(&(bits / 8).to_le_bytes());
    h.extend_from_slice(&bits.to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes());
    h.extend_from_slice(&error.to_le_bytes());
    h.extend_from_slice(&bpe.to_le_bytes());
    h.extend_from_slice(&hashes.to_le_bytes());
    h.extend_from_slice(&100u64.to_le_bytes());
    h.push(n2);
    h
}

/// What one filter answers.
#[derive(Debug, PartialEq)]
struct Snapshot {
    /// BF.INFO with the Size value blanked (it is each module's own figure).
    info: Reply,
    card: Reply,
    debug: Reply,
    absent: Vec<Reply>,
}

fn snapshot(con: &mut redis::Connection, key: &str, absent: &[String]) -> Snapshot {
    let info = match run(con, &["BF.INFO", key]) {
        Reply::Arr(mut v) => {
            assert_eq!(v.len(), 10, "BF.INFO {key}");
            assert_eq!(v[2], Reply::Status("Size".into()));
            v[3] = Reply::Nil;
            Reply::Arr(v)
        }
        other => panic!("BF.INFO {key}: {other:?}"),
    };
    Snapshot {
        info,
        card: run(con, &["BF.CARD", key]),
        debug: run(con, &["BF.DEBUG", key]),
        absent: batched(con, "BF.MEXISTS", key, absent),
    }
}

/// Every key's inserted items, and what the filters answered on RedisBloom.
struct Fixture {
    keys: Vec<(String, Vec<String>)>,
    absent: Vec<String>,
    snapshots: Vec<Snapshot>,
}

fn debug_lines(r: &Reply) -> Vec<String> {
    match r {
        Reply::Arr(v) => v
            .iter()
            .map(|l| match l {
                Reply::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
                Reply::Status(s) => s.clone(),
                other => panic!("BF.DEBUG line {other:?}"),
            })
            .collect(),
        other => panic!("BF.DEBUG {other:?}"),
    }
}

/// Checks that `con` answers exactly as RedisBloom did.
fn check_same(con: &mut redis::Connection, f: &Fixture, when: &str) {
    for ((key, its), want) in f.keys.iter().zip(&f.snapshots) {
        let present = batched(con, "BF.MEXISTS", key, its);
        assert!(
            present.iter().all(|r| *r == int(1)),
            "{when}: an inserted item of {key} is missing"
        );
        let got = snapshot(con, key, &f.absent);
        assert_eq!(got.info, want.info, "{when}: BF.INFO {key}");
        assert_eq!(got.card, want.card, "{when}: BF.CARD {key}");
        assert_eq!(got.debug, want.debug, "{when}: BF.DEBUG {key}");
        let differ = got
            .absent
            .iter()
            .zip(&want.absent)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(differ, 0, "{when}: absent-item answers of {key} differ");
    }
}

fn build_on_redisbloom(con: &mut redis::Connection) -> Fixture {
    let mut keys = Vec::new();
    for s in SHAPES {
        let mut args = vec!["BF.RESERVE", s.key];
        args.extend_from_slice(s.reserve);
        assert_eq!(run(con, &args), ok(), "{args:?}");
        let its = items(s.key, s.added);
        let replies = batched(con, "BF.MADD", s.key, &its);
        assert!(replies.iter().all(|r| !r.is_err()), "BF.MADD {}", s.key);
        keys.push((s.key.to_string(), its));
    }
    for &(key, options, bits, n2, added) in LEGACY {
        let h = legacy_header(options, bits, n2);
        assert_eq!(
            run(con, &[b"BF.LOADCHUNK".as_slice(), key.as_bytes(), b"1", &h]),
            ok(),
            "RedisBloom refused the legacy header of {key}"
        );
        let its = items(key, added);
        let replies = batched(con, "BF.MADD", key, &its);
        assert!(replies.iter().all(|r| !r.is_err()), "BF.MADD {key}");
        keys.push((key.to_string(), its));
    }
    let absent = items("absent", 20_000);
    let snapshots = keys
        .iter()
        .map(|(key, _)| snapshot(con, key, &absent))
        .collect();
    Fixture {
        keys,
        absent,
        snapshots,
    }
}

fn save(con: &mut redis::Connection) {
    assert_eq!(run(con, &["SAVE"]), ok());
}

#[test]
fn redisbloom_rdb_loads_into_rsbloom_and_not_back() {
    let rb_so = redisbloom_so();
    let rb = Server::try_with_module(&rb_so, None, &[], &[])
        .unwrap_or_else(|log| panic!("RedisBloom failed to start:\n{log}"));
    let mut c = rb.conn();
    let f = build_on_redisbloom(&mut c);
    // The legacy filters really are legacy: 32-bit hashing shows in RedisBloom's BF.DEBUG, and
    // it grew further links of the same kind.
    for (key, snap) in f.keys.iter().map(|(k, _)| k).zip(&f.snapshots) {
        let lines = debug_lines(&snap.debug);
        if key.starts_with("l32") {
            assert!(
                lines[1..].iter().all(|l| l.contains("hashwidth:32")),
                "{lines:?}"
            );
        }
        if key.starts_with('l') {
            assert!(
                lines.len() > 2,
                "{key} did not grow on RedisBloom: {lines:?}"
            );
        }
    }
    save(&mut c);
    drop(c);
    let rdb = rb.dir.join("dump.rdb");

    let mut rs = Server::try_with_module(&module_path(), Some(&rdb), &[], &[])
        .unwrap_or_else(|log| panic!("rsbloom failed to load RedisBloom's RDB:\n{log}"));
    drop(rb);
    let mut c = rs.conn();
    check_same(&mut c, &f, "after loading RedisBloom's RDB");
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    check_same(&mut c, &f, "after DEBUG RELOAD in rsbloom's encoding");

    // New items go in; the full scaling chain grows a native link.
    let new = items("new", 1000);
    let added = batched(&mut c, "BF.MADD", "s1", &new);
    assert!(added.iter().all(|r| !r.is_err()), "{added:?}");
    let lines = debug_lines(&run(&mut c, &["BF.DEBUG", "s1"]));
    let before = debug_lines(&f.snapshots[0].debug);
    assert_eq!(before.len(), 5, "s1 on RedisBloom: {before:?}");
    assert_eq!(lines.len(), 6, "s1 did not grow: {lines:?}");
    assert_eq!(lines[1..4], before[1..4], "full old links changed");
    // The last RedisBloom link (297 of 800) filled up before the native one was appended.
    let (head, _) = before[4].split_once(" size:").unwrap();
    assert_eq!(lines[4], format!("{head} size:800 ratio:0.000625"));
    assert!(
        lines[5].contains("hashwidth:64 capacity:1600 ") && lines[5].ends_with("ratio:0.0003125"),
        "{}",
        lines[5]
    );
    for (key, _) in &f.keys[1..] {
        let r = run(&mut c, &["BF.ADD", key, "a brand-new item"]);
        assert!(r == int(1) || r == int(0), "BF.ADD {key}: {r:?}");
    }
    let card_s1 = run(&mut c, &["BF.CARD", "s1"]);
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    let present = batched(&mut c, "BF.MEXISTS", "s1", &new);
    assert!(present.iter().all(|r| *r == int(1)));
    for (key, its) in &f.keys {
        let present = batched(&mut c, "BF.MEXISTS", key, its);
        assert!(present.iter().all(|r| *r == int(1)), "{key} lost items");
    }
    assert_eq!(run(&mut c, &["BF.CARD", "s1"]), card_s1);
    assert_eq!(debug_lines(&run(&mut c, &["BF.DEBUG", "s1"])), lines);

    // Reverse direction: redis-server with RedisBloom cannot load rsbloom's encoding and exits
    // during startup, never serving. RedisBloom 2.8.2 does not check the encoding version: it
    // misreads the fields, Redis reports the module value as corrupt ("module data for the
    // module 'bf' that is not terminated by the proper module value EOF marker", or a failed
    // read), runs its RDB check and exits -- with status 0 on Redis 7.0, so the exit status
    // cannot be relied on; the server being gone can.
    save(&mut c);
    drop(c);
    let ours = rs.dir.join("dump.rdb");
    match Server::try_with_module(&rb_so, Some(&ours), &[], &[]) {
        Ok(_) => panic!("RedisBloom loaded an rsbloom RDB"),
        Err(log) => {
            assert!(log.contains("exited with"), "{log}");
            assert!(
                log.contains("module 'bf'") || log.contains("MBbloom--"),
                "the log does not name the module: {log}"
            );
        }
    }
    // rsbloom itself still loads it.
    rs.restart();
    let mut c = rs.conn();
    assert_eq!(run(&mut c, &["BF.CARD", "s1"]), card_s1);
}

#[test]
fn default_filter_from_redisbloom_keeps_type_and_debug() {
    // A single filter default-created by BF.MADD (options 5, growth 2).
    let rb = Server::try_with_module(&redisbloom_so(), None, &[], &[])
        .unwrap_or_else(|log| panic!("RedisBloom failed to start:\n{log}"));
    let mut c = rb.conn();
    let its = items("d", 150);
    batched(&mut c, "BF.MADD", "d", &its);
    let want = run(&mut c, &["BF.DEBUG", "d"]);
    save(&mut c);
    drop(c);
    let rs = Server::try_with_module(&module_path(), Some(&rb.dir.join("dump.rdb")), &[], &[])
        .unwrap_or_else(|log| panic!("{log}"));
    let mut c = rs.conn();
    assert_eq!(run(&mut c, &["BF.DEBUG", "d"]), want);
    assert_eq!(
        run(&mut c, &["TYPE", "d"]),
        Reply::Status("MBbloom--".into())
    );
    assert!(batched(&mut c, "BF.MEXISTS", "d", &its)
        .iter()
        .all(|r| *r == int(1)));
}

/// Copies every filter of `f` from `from` to `to` as a client does it between live servers:
/// BF.SCANDUMP from iterator 0 until it answers 0, each step replayed with BF.LOADCHUNK.
fn copy_by_scandump(from: &mut redis::Connection, to: &mut redis::Connection, f: &Fixture) {
    for (key, _) in &f.keys {
        let mut iterator = 0i64;
        loop {
            let Reply::Arr(step) = run(from, &["BF.SCANDUMP", key, &iterator.to_string()]) else {
                panic!("BF.SCANDUMP {key} {iterator}")
            };
            let (Reply::Int(next), Reply::Bulk(data)) = (&step[0], &step[1]) else {
                panic!("BF.SCANDUMP {key}: {step:?}")
            };
            if *next == 0 {
                break;
            }
            let loaded = run(
                to,
                &[
                    b"BF.LOADCHUNK".as_slice(),
                    key.as_bytes(),
                    next.to_string().as_bytes(),
                    data,
                ],
            );
            assert_eq!(loaded, ok(), "BF.LOADCHUNK {key} {next}");
            iterator = *next;
        }
    }
}

/// The move no other Bloom module supports: a RedisBloom 2.8.2 user on Redis 7.4 moves to
/// rsbloom on Valkey 9.1, and every filter answers as before, by each path: the RDB (version 12,
/// which Valkey reads with `rdb-version-check relaxed`), DUMP/RESTORE, and SCANDUMP/LOADCHUNK
/// between live servers. Redis 7.0 itself refuses Redis 7.4's RDB (a newer RDB version) whatever
/// the modules; SCANDUMP/LOADCHUNK, whose stream does not depend on the server, moves the filters
/// there. Runs on the three servers whatever `$RSBLOOM_TEST_SERVER` names.
#[test]
fn redisbloom_on_redis_7_4_moves_to_rsbloom_on_valkey_9_1() {
    let (redis70, redis74, valkey) = (
        servers_path("redis-7.0"),
        servers_path("redis-7.4"),
        servers_path("valkey-9.1"),
    );
    let relaxed = ["--rdb-version-check", "relaxed"];
    let rb = Server::start_on(&redis74, &redisbloom_so(), None, &[], &[])
        .unwrap_or_else(|log| panic!("RedisBloom on Redis 7.4 failed to start:\n{log}"));
    let mut crb = rb.conn();
    let f = build_on_redisbloom(&mut crb);
    save(&mut crb);
    let rdb = rb.dir.join("dump.rdb");
    let version = std::fs::read(&rdb).unwrap()[..9].to_vec();
    assert_eq!(version, b"REDIS0012", "Redis 7.4 writes RDB version 12");

    // The RDB.
    let v = Server::start_on(&valkey, &module_path(), Some(&rdb), &[], &relaxed)
        .unwrap_or_else(|log| panic!("Valkey 9.1 with rsbloom refused Redis 7.4's RDB:\n{log}"));
    check_same(
        &mut v.conn(),
        &f,
        "Valkey 9.1 after loading Redis 7.4's RDB",
    );

    // DUMP/RESTORE: the payloads carry RDB version 12 too.
    let v = Server::start_on(&valkey, &module_path(), None, &[], &relaxed).unwrap();
    let mut cv = v.conn();
    for (key, _) in &f.keys {
        let Reply::Bulk(payload) = run(&mut crb, &["DUMP", key]) else {
            panic!("DUMP {key}")
        };
        let restore = [b"RESTORE".as_slice(), key.as_bytes(), b"0", &payload];
        assert_eq!(run(&mut cv, &restore), ok(), "RESTORE {key} on Valkey");
    }
    check_same(&mut cv, &f, "Valkey 9.1 after RESTORE of Redis 7.4's DUMPs");

    // SCANDUMP/LOADCHUNK between live servers.
    let v = Server::start_on(&valkey, &module_path(), None, &[], &[]).unwrap();
    let mut cv = v.conn();
    copy_by_scandump(&mut crb, &mut cv, &f);
    check_same(
        &mut cv,
        &f,
        "Valkey 9.1 after SCANDUMP/LOADCHUNK from Redis 7.4",
    );

    // Redis 7.0 refuses the RDB of Redis 7.4 before any module sees it...
    match Server::start_on(&redis70, &module_path(), Some(&rdb), &[], &[]) {
        Ok(_) => panic!("Redis 7.0 loaded an RDB of version 12"),
        Err(log) => assert!(log.contains("Can't handle RDB format version 12"), "{log}"),
    }
    // ...and SCANDUMP/LOADCHUNK moves the filters there.
    let r = Server::start_on(&redis70, &module_path(), None, &[], &[]).unwrap();
    let mut cr = r.conn();
    copy_by_scandump(&mut crb, &mut cr, &f);
    check_same(
        &mut cr,
        &f,
        "Redis 7.0 after SCANDUMP/LOADCHUNK from Redis 7.4",
    );
}

/// Cuckoo filter shapes built on RedisBloom: `(key, CF.RESERVE arguments after the key, adds,
/// deletes)`. Growth, kicks, duplicates, deletes and compaction all happen; `implicit` is
/// created by CF.ADD.
const CF_SHAPES: &[(&str, &[&str], usize, usize)] = &[
    ("c1", &["1000"], 3000, 500),
    ("c2", &["64", "BUCKETSIZE", "1"], 600, 100),
    (
        "c3",
        &["256", "BUCKETSIZE", "4", "MAXITERATIONS", "500"],
        1000,
        0,
    ),
    (
        "c4",
        &["64", "EXPANSION", "4", "MAXITERATIONS", "500"],
        1000,
        300,
    ),
    (
        "c5",
        &[
            "16",
            "BUCKETSIZE",
            "4",
            "MAXITERATIONS",
            "5",
            "EXPANSION",
            "0",
        ],
        40,
        3,
    ),
    ("empty", &["100"], 0, 0),
    ("implicit", &[], 500, 50),
];

/// What a cuckoo filter answers: CF.INFO, CF.DEBUG, its SCANDUMP stream, and EXISTS / COUNT of
/// its items and of 2,000 others.
fn cf_snapshot(con: &mut redis::Connection, key: &str, its: &[String]) -> Vec<Reply> {
    let mut out = vec![run(con, &["CF.INFO", key]), run(con, &["CF.DEBUG", key])];
    let mut it = 0i64;
    loop {
        let r = run(con, &["CF.SCANDUMP", key, &it.to_string()]);
        let next = match &r {
            Reply::Arr(v) => match v[0] {
                Reply::Int(n) => n,
                _ => panic!("{r:?}"),
            },
            _ => panic!("{r:?}"),
        };
        out.push(r);
        if next == 0 {
            break;
        }
        it = next;
    }
    let others = items("other", 2000);
    out.extend(batched(con, "CF.MEXISTS", key, its));
    out.extend(batched(con, "CF.MEXISTS", key, &others));
    for item in its.iter().chain(&others).step_by(7) {
        out.push(run(con, &["CF.COUNT", key, item]));
    }
    out
}

#[test]
fn redisbloom_cuckoo_filters_load_by_rdb_dump_and_scandump() {
    let rb = Server::try_with_module(&redisbloom_so(), None, &[], &[])
        .unwrap_or_else(|log| panic!("RedisBloom failed to start:\n{log}"));
    let mut c = rb.conn();
    let mut keys = Vec::new();
    for &(key, reserve, adds, deletes) in CF_SHAPES {
        if !reserve.is_empty() {
            let mut args = vec!["CF.RESERVE", key];
            args.extend_from_slice(reserve);
            assert_eq!(run(&mut c, &args), ok(), "{args:?}");
        }
        // Duplicates: item i % (adds / 2).
        let its: Vec<String> = (0..adds)
            .map(|i| format!("{key}:{}", i % (adds / 2).max(1)))
            .collect();
        for it in &its {
            let r = run(&mut c, &["CF.ADD", key, it]);
            assert!(r == int(1) || r == err("Filter is full"), "{key}: {r:?}");
        }
        for it in &its[..deletes] {
            run(&mut c, &["CF.DEL", key, it]);
        }
        keys.push((key, its));
    }
    // A Bloom filter beside them: one RDB with both of RedisBloom's types.
    assert_eq!(run(&mut c, &["BF.RESERVE", "bloom", "0.01", "1000"]), ok());
    let bloom_items = items("bloom", 800);
    batched(&mut c, "BF.MADD", "bloom", &bloom_items);
    let bloom_info = run(&mut c, &["BF.INFO", "bloom", "ITEMS"]);
    let bloom_absent = batched(&mut c, "BF.MEXISTS", "bloom", &items("absent", 2000));
    let want: Vec<Vec<Reply>> = keys
        .iter()
        .map(|(k, its)| cf_snapshot(&mut c, k, its))
        .collect();
    let memory: Vec<i64> = keys.iter().map(|(k, _)| memory_usage(&mut c, k)).collect();
    let dumps: Vec<Reply> = keys
        .iter()
        .map(|(k, _)| run(&mut c, &["DUMP", k]))
        .collect();
    save(&mut c);
    drop(c);

    // RDB: the same answers, bytes, sizes and MEMORY USAGE.
    let rs = Server::try_with_module(&module_path(), Some(&rb.dir.join("dump.rdb")), &[], &[])
        .unwrap_or_else(|log| panic!("rsbloom failed to load RedisBloom's RDB:\n{log}"));
    let mut c = rs.conn();
    for (((key, its), want), mem) in keys.iter().zip(&want).zip(&memory) {
        assert_eq!(&cf_snapshot(&mut c, key, its), want, "{key} from the RDB");
        // MEMORY USAGE: RedisBloom's reports its structs' sizes, rsbloom's what the blocks
        // take from the allocator (tests/memory.rs), never less; CF.INFO's Size is RedisBloom's
        // (in the snapshot).
        assert!(memory_usage(&mut c, key) >= *mem, "MEMORY USAGE {key}");
        assert_eq!(
            run(&mut c, &["TYPE", key]),
            Reply::Status("MBbloomCF".into())
        );
    }
    assert_eq!(run(&mut c, &["BF.INFO", "bloom", "ITEMS"]), bloom_info);
    assert!(batched(&mut c, "BF.MEXISTS", "bloom", &bloom_items)
        .iter()
        .all(|r| *r == int(1)));
    assert_eq!(
        batched(&mut c, "BF.MEXISTS", "bloom", &items("absent", 2000)),
        bloom_absent
    );
    // In rsbloom's encoding after a reload, and through RedisBloom's DUMP payloads.
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    for (((key, its), want), dump) in keys.iter().zip(&want).zip(&dumps) {
        assert_eq!(
            &cf_snapshot(&mut c, key, its),
            want,
            "{key} after DEBUG RELOAD"
        );
        let Reply::Bulk(payload) = dump else {
            panic!("{dump:?}")
        };
        let copy = format!("{key}-restored");
        assert_eq!(
            run(
                &mut c,
                &[b"RESTORE".as_ref(), copy.as_bytes(), b"0", payload]
            ),
            ok()
        );
        assert_eq!(
            &cf_snapshot(&mut c, &copy, its),
            want,
            "{key} from RedisBloom's DUMP"
        );
    }
    // A live copy through RedisBloom's SCANDUMP stream (a filter with items: RedisBloom dumps
    // none of an empty one).
    let mut from = rb_conn_again(&rb.dir.join("dump.rdb"));
    for (key, its) in keys.iter().filter(|(k, _)| *k != "empty") {
        let copy = format!("{key}-scanned");
        let mut it = 0i64;
        loop {
            let Reply::Arr(v) = run(&mut from.1, &["CF.SCANDUMP", key, &it.to_string()]) else {
                panic!()
            };
            let Reply::Int(next) = v[0] else {
                panic!("{v:?}")
            };
            if next == 0 {
                break;
            }
            let Reply::Bulk(data) = &v[1] else {
                panic!("{v:?}")
            };
            let r = run(
                &mut c,
                &[
                    b"CF.LOADCHUNK".as_ref(),
                    copy.as_bytes(),
                    next.to_string().as_bytes(),
                    data,
                ],
            );
            assert_eq!(r, ok(), "LOADCHUNK {copy} {next}");
            it = next;
        }
        let want = cf_snapshot(&mut from.1, key, its);
        assert_eq!(
            cf_snapshot(&mut c, &copy, its),
            want,
            "{key} through SCANDUMP"
        );
    }
    // Filters from RedisBloom keep its hashing: new adds and deletes answer as there.
    for (key, _) in &keys {
        let a = run(&mut c, &["CF.ADD", key, "after the move"]);
        let b = run(&mut from.1, &["CF.ADD", key, "after the move"]);
        assert_eq!(a, b, "CF.ADD {key}");
        assert_eq!(
            run(&mut c, &["CF.DEL", key, "after the move"]),
            run(&mut from.1, &["CF.DEL", key, "after the move"])
        );
        assert_eq!(
            run(&mut c, &["CF.SCANDUMP", key, "1"]),
            run(&mut from.1, &["CF.SCANDUMP", key, "1"]),
            "{key}"
        );
    }
}

/// RedisBloom started again on its own RDB, for the SCANDUMP leg.
fn rb_conn_again(rdb: &std::path::Path) -> (Server, redis::Connection) {
    let rb = Server::try_with_module(&redisbloom_so(), Some(rdb), &[], &[])
        .unwrap_or_else(|log| panic!("RedisBloom failed to restart:\n{log}"));
    let c = rb.conn();
    (rb, c)
}
