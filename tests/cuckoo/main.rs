//! Every CF command's replies and errors, one module per command family as in
//! `src/commands/cuckoo/` (as `tests/bloom/` has them for BF), plus what spans them all: every
//! RedisBloom crash of the spec's list answered with an error instead, persistence (RDB, AOF
//! with LOADCHUNK chunks), replication to identical slots, INFO counters, keyspace events.

#[path = "../common/mod.rs"]
mod common;

mod add;
mod debug;
mod delete;
mod exists;
mod info;
mod reserve;
mod scandump;

use common::*;
use redis::Value;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn cf_debug(c: &mut redis::Connection, key: &str) -> String {
    match run(c, &["CF.DEBUG", key]) {
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("CF.DEBUG {key}: {other:?}"),
    }
}

/// SCANDUMP steps: `(next, data)`, `None` for the end's nil.
type Steps = Vec<(i64, Option<Vec<u8>>)>;

/// Every SCANDUMP step of `key` from iterator 0: `(next, data)`, the end `[0, nil]` included.
fn scandump(c: &mut redis::Connection, key: &str) -> Steps {
    let mut out = Vec::new();
    let mut it = 0;
    loop {
        let step = match raw(c, &["CF.SCANDUMP", key, &it.to_string()]) {
            Value::Array(v) => match (&v[0], &v[1]) {
                (Value::Int(n), Value::BulkString(b)) => (*n, Some(b.clone())),
                (Value::Int(n), Value::Nil) => (*n, None),
                other => panic!("{other:?}"),
            },
            other => panic!("CF.SCANDUMP {key} {it}: {other:?}"),
        };
        out.push(step.clone());
        if step.0 == 0 {
            return out;
        }
        it = step.0;
    }
}

/// Replays a SCANDUMP into `to` with LOADCHUNK, asserting every OK.
fn load(c: &mut redis::Connection, to: &str, steps: &[(i64, Option<Vec<u8>>)]) {
    for (next, data) in steps {
        if let Some(data) = data {
            let reply = run(
                c,
                &[
                    b"CF.LOADCHUNK".as_ref(),
                    to.as_bytes(),
                    next.to_string().as_bytes(),
                    data,
                ],
            );
            assert_eq!(reply, ok(), "CF.LOADCHUNK {to} {next}");
        }
    }
}

/// Runs each `(command, reply)` case on a server holding a string `str`, a Bloom filter `bloom`
/// and a cuckoo filter `cf` of 100 items, then checks that no case created a key.
fn assert_errors(cases: &[(&[&str], Reply)]) {
    let s = Server::new();
    let mut c = s.conn();
    run(&mut c, &["SET", "str", "v"]);
    run(&mut c, &["BF.ADD", "bloom", "x"]);
    assert_eq!(run(&mut c, &["CF.RESERVE", "cf", "100"]), ok());
    for (args, expected) in cases {
        assert_eq!(&run(&mut c, args), expected, "{args:?}");
    }
    let mut keys: Vec<String> = match run(&mut c, &["KEYS", "*"]) {
        Reply::Arr(v) => v
            .into_iter()
            .map(|k| match k {
                Reply::Bulk(b) => String::from_utf8(b).unwrap(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    };
    keys.sort();
    assert_eq!(keys, ["bloom", "cf", "str"]);
}

/// Runs `check` on a fresh server's connection in RESP2, then in RESP3 (`true`), each time on
/// a filter `cf` (seed 42) that took `a` twice and `b` once.
fn in_both_protocols(check: impl Fn(&mut redis::Connection, bool)) {
    let s = Server::new();
    for resp3 in [false, true] {
        let mut c = if resp3 { s.conn_resp3() } else { s.conn() };
        run(&mut c, &["FLUSHALL"]);
        for cmd in [
            "CF.RESERVE cf 1000 SEED 42",
            "CF.ADD cf a",
            "CF.ADD cf a",
            "CF.ADDNX cf b",
        ] {
            let args: Vec<&str> = cmd.split(' ').collect();
            assert!(!run(&mut c, &args).is_err(), "{cmd}");
        }
        check(&mut c, resp3);
    }
}

/// A boolean reply: RESP3's boolean, RESP2's integer.
fn yes(resp3: bool, b: bool) -> Reply {
    if resp3 {
        boolean(b)
    } else {
        int(i64::from(b))
    }
}

/// The spec's test vectors, on filters created with `SEED 0` (RedisBloom's hashing).
fn write_vectors(c: &mut redis::Connection) {
    for cmd in [
        "CF.RESERVE v1 8 BUCKETSIZE 2 SEED 0",
        "CF.ADD v1 item1",
        "CF.ADD v1 foo",
        "CF.RESERVE v2 8 BUCKETSIZE 1 SEED 0",
        "CF.INSERT v2 ITEMS a b c d e f g h i j",
        "CF.RESERVE v3 4 EXPANSION 2 SEED 0",
        "CF.INSERT v3 ITEMS 0 1 2 3 4 5 6 7 8 9",
        "CF.DEL v3 3",
        "CF.RESERVE v4 16 BUCKETSIZE 4 MAXITERATIONS 5 EXPANSION 0 SEED 0",
        "CF.INSERT v4 ITEMS x x x",
    ] {
        let args: Vec<&str> = cmd.split(' ').collect();
        assert!(!run(c, &args).is_err(), "{cmd}");
    }
    // Items with spaces or empty.
    assert_eq!(run(c, &["CF.ADD", "v1", ""]), int(1));
    assert_eq!(
        run(c, &["CF.INSERT", "v4", "ITEMS", "hello world!", "12345678"]),
        ints(&[1, 1])
    );
}

#[test]
fn hostile_inputs_get_errors_not_crashes() {
    let s = Server::with_args(&[], &["--bf.max-filter-bytes", "64mb"]);
    let mut c = s.conn();
    let limit = 64 << 20;
    let too_large = |needed: u64| {
        err(&format!(
            "ERR filter would need {needed} bytes, over the per-filter limit of {limit} bytes \
             (config bf.max-filter-bytes, module argument MAX_FILTER_BYTES)"
        ))
    };
    // RedisBloom: an OOM abort for each.
    assert_eq!(
        run(&mut c, &["CF.RESERVE", "k", "1000000000000000"]),
        too_large(1 << 50)
    );
    assert_eq!(
        run(
            &mut c,
            &[
                "CF.RESERVE",
                "k",
                "1000000000000000",
                "BUCKETSIZE",
                "255",
                "EXPANSION",
                "32768"
            ]
        ),
        too_large((1u64 << 42) * 255)
    );
    assert_eq!(
        run(
            &mut c,
            &[
                "CF.INSERT",
                "k",
                "CAPACITY",
                "1000000000000000",
                "ITEMS",
                "1"
            ]
        ),
        too_large(1 << 50)
    );
    assert_eq!(
        run(&mut c, &["CF.RESERVE", "d", "72057594037927936"]),
        too_large(1 << 56)
    );
    // 2^56 buckets or more: RedisBloom's own reply.
    assert_eq!(
        run(&mut c, &["CF.RESERVE", "d", "144115188075855872"]),
        err(texts::cf::INSUFFICIENT_MEMORY_CREATE)
    );
    // Growth past the limit: that item is refused (error for ADD, -1 in INSERT).
    assert_eq!(
        run(
            &mut c,
            &[
                "CF.RESERVE",
                "h",
                "16",
                "BUCKETSIZE",
                "1",
                "EXPANSION",
                "32768",
                "MAXITERATIONS",
                "1"
            ]
        ),
        ok()
    );
    let mut saw_limit = false;
    for i in 0..200 {
        match run(&mut c, &["CF.ADD", "h", "same"]) {
            Reply::Int(1) => {}
            Reply::Err(e) => {
                assert_eq!(
                    Reply::Err(e),
                    too_large(16 + 16 * 32768 + 16 * 32768 * 32768),
                    "add {i}"
                );
                saw_limit = true;
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(saw_limit, "the memory limit never refused a growth");
    // LOADCHUNK headers: expansion 0 with 2 sub-filters (RedisBloom: SIGFPE on the next read),
    // 2^40 buckets of 255 slots and 2^55 buckets (RedisBloom: OOM abort), 65537 sub-filters
    // (RedisBloom: read as 1).
    let header = |buckets: u64, filters: u64, bucket_size: u16, expansion: u16| {
        let mut h = Vec::new();
        for v in [1u64, buckets, 0, filters] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        for v in [bucket_size, 20, expansion] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h
    };
    let loadchunk =
        |c: &mut redis::Connection, h: &[u8]| run(c, &[b"CF.LOADCHUNK".as_ref(), b"lc", b"1", h]);
    assert_eq!(
        loadchunk(&mut c, &header(4, 2, 2, 0)),
        err(texts::cf::CANNOT_CREATE)
    );
    assert_eq!(
        loadchunk(&mut c, &header(4, 65537, 2, 1)),
        err(texts::cf::CANNOT_CREATE)
    );
    assert_eq!(
        loadchunk(&mut c, &header(4, 1, 2, 3)),
        err(texts::cf::CANNOT_CREATE)
    );
    assert_eq!(
        loadchunk(&mut c, &header(1 << 40, 1, 255, 1)),
        too_large((1 << 40) * 255)
    );
    assert_eq!(
        loadchunk(&mut c, &header(1 << 55, 1, 1, 1)),
        too_large(1 << 55)
    );
    // Five sub-filters of expansion 32768 (RedisBloom: a 143 s stall, then an OOM abort): the
    // last would need 2^62 buckets.
    assert_eq!(
        loadchunk(&mut c, &header(4, 5, 2, 32768)),
        err(texts::cf::CANNOT_CREATE)
    );
    assert_eq!(run(&mut c, &["EXISTS", "lc"]), int(0));
    assert_eq!(loadchunk(&mut c, &header(4, 1, 2, 1)), ok());
    // A chunk past the end does not wrap into the last sub-filter.
    assert_eq!(
        run(&mut c, &["CF.LOADCHUNK", "lc", "10", "\x05"]),
        err(texts::cf::CANNOT_LOAD_CHUNK)
    );

    // 140,000 items into a 2-slot filter: RedisBloom stalls 25 s and dies with SIGFPE when its
    // 16-bit sub-filter count wraps. Here the limit holds per item: done at once.
    assert_eq!(
        run(
            &mut c,
            &[
                "CF.RESERVE",
                "tiny",
                "2",
                "BUCKETSIZE",
                "1",
                "MAXITERATIONS",
                "1"
            ]
        ),
        ok()
    );
    let mut args = vec!["CF.INSERT".to_string(), "tiny".into(), "ITEMS".into()];
    args.extend((0..140_000).map(|i| i.to_string()));
    let started = std::time::Instant::now();
    let r = match run(&mut c, &args) {
        Reply::Arr(v) => v,
        other => panic!("{other:?}"),
    };
    let took = started.elapsed();
    let added = r.iter().filter(|&v| v == &int(1)).count();
    let refused = r.iter().filter(|&v| v == &int(-1)).count();
    assert_eq!(added + refused, 140_000);
    assert!(refused > 139_000, "{added} added");
    assert!(
        cf_debug(&mut c, "tiny").contains("filters:32"),
        "{}",
        cf_debug(&mut c, "tiny")
    );
    eprintln!("140,000 items into a 2-slot filter: {added} added, {refused} refused in {took:?}");

    // Crafted RESTORE payloads (RedisBloom: assertion abort, abort, EOF panic, SIGSEGV, SIGFPE).
    // Each is refused as bad data, and the server lives on.
    assert_eq!(
        crc64(b"123456789"),
        0xe9c6_d914_c4b8_d9ca,
        "Redis's CRC-64 check value"
    );
    let good = match raw(&mut c, &["DUMP", "lc"]) {
        Value::BulkString(b) => b,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        run(&mut c, &[b"RESTORE".as_ref(), b"again", b"0", &good]),
        ok()
    );
    for (name, body) in [
        (
            "slot array shorter than its buckets",
            "0201 0204 0201 0200 0202 0214 0201 0200 0204 0507 00000000000000",
        ),
        (
            "bucket size 300",
            "0201 0204 0201 0200 02412c 0214 0201 0200 0204 0508 0000000000000000",
        ),
        ("truncated", "0201 0204 0201 0200 0202 0214 0201 0200"),
        ("0 sub-filters", "0200 0204 0201 0200 0202 0214 0201 0200"),
        (
            "0 buckets",
            "0201 0200 0201 0200 0202 0214 0201 0200 0200 0500",
        ),
    ] {
        let payload = redump(&good, &hex(body));
        let reply = run(&mut c, &[b"RESTORE".as_ref(), b"bad", b"0", &payload]);
        assert_eq!(reply, err(texts::RESTORE_BAD_DATA), "{name}");
    }
    assert_eq!(run(&mut c, &["PING"]), status("PONG"));
}

/// A DUMP payload like `good` (a module value of rsbloom's cuckoo type) whose fields are
/// `body` instead: the same type byte, module id, EOF opcode and RDB version, and a fresh CRC.
fn redump(good: &[u8], body: &[u8]) -> Vec<u8> {
    let mut v = good[..10].to_vec();
    v.extend_from_slice(body);
    v.push(0); // the module value's EOF opcode
    let version = &good[good.len() - 10..good.len() - 8];
    v.extend_from_slice(version);
    let crc = crc64(&v);
    v.extend_from_slice(&crc.to_le_bytes());
    v
}

/// Redis's CRC-64 (Jones polynomial, reflected), which DUMP payloads end with.
fn crc64(data: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &b in data {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

#[test]
fn persistence_replication_and_aof_keep_every_slot() {
    let mut p = Server::with_args(
        &[],
        &[
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--aof-use-rdb-preamble",
            "no",
        ],
    );
    let replica = p.start_replica(&[]);
    let mut pc = p.conn();
    let mut rc = replica.conn();
    write_vectors(&mut pc);
    // A seeded filter with growth, deletes and compaction, and one created implicitly.
    assert_eq!(
        run(&mut pc, &["CF.RESERVE", "grown", "64", "EXPANSION", "2"]),
        ok()
    );
    let its = items("g-", 600);
    let mut args = vec!["CF.INSERT", "grown", "ITEMS"];
    args.extend(its.iter().map(String::as_str));
    run(&mut pc, &args);
    for it in &its[..100] {
        assert_eq!(run(&mut pc, &["CF.DEL", "grown", it]), int(1));
    }
    assert_eq!(run(&mut pc, &["CF.ADD", "implicit", "x"]), int(1));
    // LOADCHUNK chunks are replicated and reach the AOF (RedisBloom's replicas lose them).
    let steps = scandump(&mut pc, "grown");
    load(&mut pc, "loaded", &steps);
    assert_eq!(run(&mut pc, &["CF.COMPACT", "loaded"]), ok());
    wait_caught_up(&mut pc, &mut rc);
    let keys = ["v1", "v2", "v3", "v4", "grown", "implicit", "loaded"];
    let snapshot = |c: &mut redis::Connection| -> Vec<(Reply, String, Steps)> {
        keys.iter()
            .map(|k| (digest(c, k), cf_debug(c, k), scandump(c, k)))
            .collect()
    };
    let before = snapshot(&mut pc);
    assert_eq!(
        snapshot(&mut rc),
        before,
        "the replica holds identical filters"
    );
    // The seed travels: the implicit filter's header carries rsbloom's seed trailer.
    let header = scandump(&mut pc, "implicit")[0].1.clone().unwrap();
    assert_eq!(header.len(), 54);
    assert_eq!(&header[38..46], b"rsbloomS");
    // RDB: DEBUG RELOAD. AOF: a restart replays the commands (the chunks included), and after
    // a rewrite (no RDB preamble) the CF.LOADCHUNK commands the type's aof_rewrite emits.
    assert_eq!(run(&mut pc, &["DEBUG", "RELOAD"]), ok());
    assert_eq!(snapshot(&mut pc), before, "after DEBUG RELOAD");
    drop(pc);
    p.restart();
    let mut pc = p.conn();
    assert_eq!(snapshot(&mut pc), before, "after replaying the commands");
    assert!(!run(&mut pc, &["BGREWRITEAOF"]).is_err());
    p.wait_for("the AOF rewrite", 60, || {
        info_field(&mut pc, "persistence", "aof_rewrite_in_progress") == "0"
            && info_field(&mut pc, "persistence", "aof_rewrite_scheduled") == "0"
    });
    drop(pc);
    p.restart();
    let mut pc = p.conn();
    assert_eq!(
        snapshot(&mut pc),
        before,
        "after replaying the rewritten AOF"
    );
    // COPY is deep, DIGEST sees the difference once the copy changes.
    assert_eq!(run(&mut pc, &["COPY", "grown", "grown2"]), int(1));
    assert_eq!(digest(&mut pc, "grown2"), digest(&mut pc, "grown"));
    assert_eq!(run(&mut pc, &["CF.ADD", "grown2", "new"]), int(1));
    assert_ne!(digest(&mut pc, "grown2"), digest(&mut pc, "grown"));
    // INFO counters: 8 cuckoo filters now; since the restart, one add, no delete.
    assert_eq!(info_field(&mut pc, "bf", "bf_cf_filters"), "8");
    assert_eq!(info_field(&mut pc, "bf", "bf_cf_adds"), "1");
    assert_eq!(info_field(&mut pc, "bf", "bf_cf_deletes"), "0");
    let items: u64 = keys
        .iter()
        .chain(&["grown2"])
        .map(|k| {
            let line = cf_debug(&mut pc, k);
            line.split("items:")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(info_field(&mut pc, "bf", "bf_cf_items"), items.to_string());
}

#[test]
fn keyspace_events_of_the_cf_writes() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "Ed"]),
        ok()
    );
    let mut sub = s.subscriber();
    let mut sub = sub.as_pubsub();
    sub.psubscribe("__keyevent@0__:cf.*").unwrap();
    let steps = {
        let mut w = s.conn();
        assert_eq!(run(&mut w, &["CF.RESERVE", "src", "100"]), ok());
        assert_eq!(run(&mut w, &["CF.ADD", "src", "x"]), int(1));
        scandump(&mut w, "src")
    };
    let writes: Vec<Vec<Vec<u8>>> = vec![
        vec![
            b"CF.INSERT".to_vec(),
            b"k".to_vec(),
            b"ITEMS".to_vec(),
            b"a".to_vec(),
        ],
        vec![b"CF.DEL".to_vec(), b"k".to_vec(), b"a".to_vec()],
        vec![b"CF.COMPACT".to_vec(), b"k".to_vec()],
        vec![
            b"CF.LOADCHUNK".to_vec(),
            b"copy".to_vec(),
            b"1".to_vec(),
            steps[0].1.clone().unwrap(),
        ],
    ];
    let expected = [
        ("cf.reserve", "src"),
        ("cf.add", "src"),
        ("cf.insert", "k"),
        ("cf.del", "k"),
        ("cf.compact", "k"),
        ("cf.loadchunk", "copy"),
    ];
    for args in &writes {
        assert!(!run(&mut c, args).is_err(), "{args:?}");
    }
    for (event, key) in expected {
        let msg = next_message(&mut sub);
        assert_eq!(msg.get_channel_name(), format!("__keyevent@0__:{event}"));
        assert_eq!(msg.get_payload::<String>().unwrap(), key);
    }
}
