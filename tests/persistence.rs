//! RDB persistence (DEBUG RELOAD and a full restart) and memory accounting.

mod common;

use common::*;

/// BF.MADD in batches of 1000 items, all replies concatenated.
fn madd_all(con: &mut redis::Connection, key: &str, its: &[String]) -> Vec<Reply> {
    let mut out = Vec::with_capacity(its.len());
    for chunk in its.chunks(1000) {
        let mut args = vec!["BF.MADD", key];
        args.extend(chunk.iter().map(|s| s.as_str()));
        match run(con, &args) {
            Reply::Arr(v) => {
                assert_eq!(v.len(), chunk.len(), "MADD reply length");
                out.extend(v)
            }
            other => panic!("BF.MADD {key}: {other:?}"),
        }
    }
    out
}

/// The data set every persistence test writes and then checks after a reload or restart.
struct Fixture {
    items: Vec<String>,
    absent: Vec<String>,
    /// BF.EXISTS answers for `absent` before the reload (the false-positive pattern depends on
    /// the filter's seed and bits, so it must come back unchanged)
    absent_answers: Vec<Reply>,
    mem_p: i64,
    mem_ns: i64,
}

fn write_fixture(c: &mut redis::Connection) -> Fixture {
    // scaling filter with several links: 1000 + 2000 + 4000 + 8000 + 16000
    assert_eq!(run(c, &["BF.RESERVE", "p", "0.01", "1000"]), ok());
    let its = items("persist-", 20_000);
    let added = madd_all(c, "p", &its);
    assert!(
        added.iter().all(|r| *r == int(0) || *r == int(1)),
        "MADD p gave an error"
    );
    let n_added = added.iter().filter(|r| **r == int(1)).count();
    assert!(
        n_added >= 19_800,
        "only {n_added} of 20000 distinct items answered 1"
    );
    assert!(exists_all(c, "p", &its).iter().all(|r| *r == int(1)));

    // a full NONSCALING filter; a fixed seed, so that exactly these 100 items fit
    assert_eq!(
        run(
            c,
            &[
                "BF.RESERVE",
                "ns",
                "0.000001",
                "100",
                "NONSCALING",
                "SEED",
                "1"
            ]
        ),
        ok()
    );
    let ns_items = items("ns-", 100);
    assert_eq!(madd_all(c, "ns", &ns_items), vec![int(1); 100]);
    assert_eq!(run(c, &["BF.ADD", "ns", "one-too-many"]), err(texts::FULL));

    // an implicitly created one, and a string key
    assert_eq!(run(c, &["BF.MADD", "imp", "a", "b", ""]), ints(&[1, 1, 1]));
    assert_eq!(run(c, &["SET", "str", "plain value"]), ok());

    let absent = items("absent-", 20_000);
    let absent_answers = exists_all(c, "p", &absent);
    let fp = absent_answers.iter().filter(|r| **r == int(1)).count();
    assert!(fp < 400, "{fp} false positives in 20000 (requested 1%)");
    Fixture {
        items: its,
        absent,
        absent_answers,
        mem_p: memory_usage(c, "p"),
        mem_ns: memory_usage(c, "ns"),
    }
}

/// Checks everything `write_fixture` wrote; returns the new item it then added to `p`.
fn check_fixture(c: &mut redis::Connection, f: &Fixture) -> String {
    assert_eq!(run(c, &["DBSIZE"]), int(4));
    for k in ["p", "ns", "imp"] {
        assert_eq!(
            run(c, &["TYPE", k]),
            Reply::Status("MBbloom--".into()),
            "TYPE {k}"
        );
    }
    assert_eq!(run(c, &["TYPE", "str"]), Reply::Status("string".into()));
    assert_eq!(run(c, &["GET", "str"]), bulk("plain value"));

    // every item is still there
    let ex = exists_all(c, "p", &f.items);
    let missing = ex.iter().filter(|r| **r != int(1)).count();
    assert_eq!(
        missing, 0,
        "{missing} of 20000 items read absent after reload"
    );
    // same bits and same seed: the false-positive pattern is identical
    assert!(
        exists_all(c, "p", &f.absent) == f.absent_answers,
        "BF.EXISTS answers for absent items changed across the reload"
    );
    // MEMORY USAGE counts allocated capacity (e.g. spare slots of the links vector), which may
    // shrink a little on load; the bit arrays themselves must be the same size
    let mem_p = memory_usage(c, "p");
    assert!(
        (mem_p - f.mem_p).abs() <= 1024,
        "MEMORY USAGE p was {} before the reload, {mem_p} after",
        f.mem_p
    );
    let mem_ns = memory_usage(c, "ns");
    assert!(
        (mem_ns - f.mem_ns).abs() <= 1024,
        "MEMORY USAGE ns was {} before the reload, {mem_ns} after",
        f.mem_ns
    );
    // re-adding existing items answers 0 and changes nothing
    assert_eq!(madd_all(c, "p", &f.items[..5000]), vec![int(0); 5000]);
    assert_eq!(memory_usage(c, "p"), mem_p);
    assert!(exists_all(c, "p", &f.absent) == f.absent_answers);

    // the NONSCALING filter is still NONSCALING, still full, and still holds its items
    let ns_items = items("ns-", 100);
    assert!(exists_all(c, "ns", &ns_items).iter().all(|r| *r == int(1)));
    assert_eq!(run(c, &["BF.ADD", "ns", "after-reload"]), err(texts::FULL));
    assert_eq!(
        run(c, &["BF.MADD", "ns", "ns-5", "after-reload", "ns-6"]),
        arr(vec![int(0), err(texts::FULL)])
    );
    assert_eq!(run(c, &["BF.ADD", "ns", "ns-7"]), int(0));
    assert_eq!(run(c, &["BF.EXISTS", "ns", "after-reload"]), int(0));
    assert_eq!(
        run(c, &["BF.RESERVE", "ns", "0.01", "100"]),
        err(texts::ITEM_EXISTS)
    );
    assert_eq!(
        run(c, &["BF.RESERVE", "p", "0.01", "100"]),
        err(texts::ITEM_EXISTS)
    );
    assert_eq!(memory_usage(c, "ns"), mem_ns);

    assert_eq!(run(c, &["BF.MADD", "imp", "a", "b", ""]), ints(&[0, 0, 0]));
    // the scaling filter still accepts new items
    let new_item = absent_item(c, "p", "brand-new-after-reload");
    assert_eq!(run(c, &["BF.ADD", "p", &new_item]), int(1));
    assert_eq!(run(c, &["BF.EXISTS", "p", &new_item]), int(1));
    new_item
}

#[test]
fn debug_reload_keeps_everything() {
    let s = Server::new();
    let mut c = s.conn();
    let f = write_fixture(&mut c);
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    let new_item = check_fixture(&mut c, &f);
    // and a second round trip of the reloaded values
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    assert_eq!(run(&mut c, &["BF.EXISTS", "p", &new_item]), int(1));
    assert_eq!(
        run(&mut c, &["BF.ADD", "ns", "after-reload"]),
        err(texts::FULL)
    );
    assert!(exists_all(&mut c, "p", &f.items)
        .iter()
        .all(|r| *r == int(1)));
}

#[test]
fn restart_from_rdb_keeps_everything() {
    let mut s = Server::new();
    let f = {
        let mut c = s.conn();
        let f = write_fixture(&mut c);
        assert_eq!(run(&mut c, &["SAVE"]), ok());
        f
    };
    let old_pid = s.pid;
    s.restart();
    assert_ne!(s.pid, old_pid, "restart() must start a new process");
    let mut c = s.conn();
    check_fixture(&mut c, &f);
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(&mut c3, &["BF.EXISTS", "p", "persist-123"]),
        boolean(true)
    );
    assert_eq!(
        run(&mut c3, &["BF.ADD", "ns", "x-after-restart"]),
        err(texts::FULL)
    );
}

#[test]
fn memory_usage_matches_the_bit_arrays() {
    let s = Server::new();
    let mut c = s.conn();
    // scaling filter at 0.01: first link at 0.005, blocked (a million bits or more), ~11.5 bits
    // per item -> ~1.44 MB (the classic link took 11.04 bits, 1.38 MB)
    assert_eq!(run(&mut c, &["BF.RESERVE", "m", "0.01", "1000000"]), ok());
    let m = info_size(&mut c, "m");
    assert!(
        (1_300_000..=1_500_000).contains(&m),
        "BF.INFO Size of a 0.01/1,000,000 filter is {m}, expected ~1.38 MB"
    );
    // MEMORY USAGE adds the allocator's rounding (a 1.38 MB array takes a 1.5 MiB block).
    let usage = memory_usage(&mut c, "m");
    assert!((m..=m + m / 4).contains(&usage), "MEMORY USAGE {usage}");
    // NONSCALING at 0.001, sized at 0.0009, blocked: ~15.8 bits per item -> ~1.98 MB (the
    // classic link took 14.38 bits, 1.80 MB)
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "n", "0.001", "1000000", "NONSCALING"]
        ),
        ok()
    );
    let n = info_size(&mut c, "n");
    assert!(
        (1_900_000..=2_050_000).contains(&n),
        "BF.INFO Size of a 0.001/1,000,000 NONSCALING filter is {n}, expected ~1.98 MB"
    );
    let (m, n) = (usage, memory_usage(&mut c, "n"));
    // memory does not change with adds into the first link, and survives a reload
    assert_eq!(
        run(&mut c, &["BF.MADD", "m", "a", "b", "c"]),
        ints(&[1, 1, 1])
    );
    assert_eq!(memory_usage(&mut c, "m"), m);
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    assert_eq!(memory_usage(&mut c, "m"), m);
    assert_eq!(memory_usage(&mut c, "n"), n);
    assert_eq!(run(&mut c, &["BF.EXISTS", "m", "b"]), int(1));
    assert_eq!(run(&mut c, &["BF.EXISTS", "n", "b"]), int(0));
}

#[test]
fn aof_rewrite_rebuilds_the_filters() {
    let mut s = Server::with_args(
        &[],
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    );
    let mut c = s.conn();
    let its = multi_link(&mut c, "f", 2000);
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "ns", "0.001", "50", "NONSCALING"]),
        ok()
    );
    let ns = items("ns-", 50);
    madd(&mut c, "ns", &ns);
    let digests = [digest(&mut c, "f"), digest(&mut c, "ns")];
    let absent = items("absent-", 3000);
    let absent_answers = exists_all(&mut c, "f", &absent);
    // Wait for the startup rewrite, if any, then rewrite (in progress or scheduled once
    // BGREWRITEAOF has answered).
    s.wait_for_aof_rewrite(&mut c);
    assert!(!run(&mut c, &["BGREWRITEAOF"]).is_err());
    s.wait_for_aof_rewrite(&mut c);
    assert_eq!(
        info_field(&mut c, "persistence", "aof_last_bgrewrite_status"),
        "ok"
    );
    let base = std::fs::read_dir(s.dir.join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".base.aof"))
        .expect("a base AOF");
    let text = std::fs::read(&base).unwrap();
    let count = text.windows(12).filter(|w| w == b"BF.LOADCHUNK").count();
    assert_eq!(
        count,
        (1 + 5) + (1 + 1),
        "LOADCHUNK commands in the base AOF"
    );
    drop(c);
    s.restart();
    assert!(
        s.log().contains("append only file"),
        "loaded from the AOF:\n{}",
        s.log()
    );
    let mut c = s.conn();
    assert_eq!([digest(&mut c, "f"), digest(&mut c, "ns")], digests);
    assert_eq!(exists_all(&mut c, "f", &its), vec![int(1); its.len()]);
    assert_eq!(exists_all(&mut c, "ns", &ns), vec![int(1); ns.len()]);
    assert_eq!(exists_all(&mut c, "f", &absent), absent_answers);
}

#[test]
fn copy_and_digest() {
    let s = Server::new();
    let mut c = s.conn();
    let its = multi_link(&mut c, "f", 1000);
    assert_eq!(run(&mut c, &["COPY", "f", "g"]), int(1));
    assert_eq!(digest(&mut c, "f"), digest(&mut c, "g"));
    assert_eq!(exists_all(&mut c, "g", &its), vec![int(1); its.len()]);
    assert_eq!(
        run(&mut c, &["BF.CARD", "g"]),
        run(&mut c, &["BF.CARD", "f"])
    );
    // The copy is independent of the original.
    let before = digest(&mut c, "f");
    let only_in_g = absent_item(&mut c, "g", "only in g");
    assert_eq!(run(&mut c, &["BF.ADD", "g", &only_in_g]), int(1));
    assert_ne!(digest(&mut c, "g"), before);
    assert_eq!(digest(&mut c, "f"), before);
    assert_eq!(run(&mut c, &["BF.EXISTS", "f", &only_in_g]), int(0));
    // An existing item changes nothing; a new one changes the digest.
    assert_eq!(run(&mut c, &["BF.ADD", "f", &its[0]]), int(0));
    assert_eq!(digest(&mut c, "f"), before);
    let new_item = absent_item(&mut c, "f", "a new item");
    assert_eq!(run(&mut c, &["BF.ADD", "f", &new_item]), int(1));
    assert_ne!(digest(&mut c, "f"), before);
    // COPY onto an existing key needs REPLACE.
    assert_eq!(run(&mut c, &["COPY", "f", "g"]), int(0));
    assert_eq!(run(&mut c, &["COPY", "f", "g", "REPLACE"]), int(1));
    assert_eq!(digest(&mut c, "f"), digest(&mut c, "g"));
    // A big filter's free effort is over Redis's lazyfree threshold: UNLINK hands it to the
    // background thread (lazyfreed_objects counts it once freed); a small one is freed at once.
    let lazyfreed = |c: &mut redis::Connection| -> i64 {
        info_field(c, "memory", "lazyfreed_objects")
            .parse()
            .unwrap()
    };
    let before = lazyfreed(&mut c);
    assert_eq!(run(&mut c, &["UNLINK", "g"]), int(1));
    assert_eq!(lazyfreed(&mut c), before, "a small filter was freed lazily");
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "big", "0.001", "5000000"]),
        ok()
    );
    assert_eq!(run(&mut c, &["UNLINK", "big"]), int(1));
    assert_eq!(run(&mut c, &["EXISTS", "big"]), int(0));
    s.wait_for("the big filter to be freed in the background", 10, || {
        lazyfreed(&mut c) == before + 1
    });
}

/// One per-link limit for creation and load: with `bf.max-filter-bytes` raised past the largest
/// link (2^40 bits, 128 GiB), a filter that would need a bigger link is refused at creation
/// (it used to be created and then refused by RDB load, LOADCHUNK and AOF replay); and the
/// largest filter a per-filter limit allows survives a reload.
#[test]
fn the_largest_filter_the_limits_allow_survives_a_reload() {
    let mut s = Server::new();
    let mut c = s.conn();
    let set_limit = |c: &mut redis::Connection, bytes: u64| {
        let bytes = bytes.to_string();
        assert_eq!(
            run(c, &["CONFIG", "SET", "bf.max-filter-bytes", &bytes]),
            ok()
        );
    };
    set_limit(&mut c, 1 << 40);
    let refused = run(
        &mut c,
        &["BF.RESERVE", "huge", "0.01", "200000000000", "NONSCALING"],
    );
    assert!(
        refused
            .err_text()
            .starts_with("ERR filter would need a link of "),
        "{refused:?}"
    );
    assert_eq!(run(&mut c, &["EXISTS", "huge"]), int(0));

    // The largest NONSCALING capacity at 1% under a 16 MiB limit, found by bisection.
    let limit = 16u64 << 20;
    set_limit(&mut c, limit);
    let fits = |c: &mut redis::Connection, capacity: u64| {
        let capacity = capacity.to_string();
        let reply = run(c, &["BF.RESERVE", "probe", "0.01", &capacity, "NONSCALING"]);
        run(c, &["DEL", "probe"]);
        reply == ok()
    };
    let (mut lo, mut hi) = (1u64, 1u64 << 30);
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(&mut c, mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let capacity = lo.to_string();
    let reserve = ["BF.RESERVE", "largest", "0.01", &capacity, "NONSCALING"];
    assert_eq!(run(&mut c, &reserve), ok());
    let bytes: u64 = debug_lines(&mut c, "largest")[1]
        .split(' ')
        .find_map(|f| f.strip_prefix("bytes:"))
        .and_then(|b| b.parse().ok())
        .expect("bytes:");
    assert!(bytes <= limit && bytes > limit - 64, "{bytes} of {limit}");
    let its = items("largest-", 10_000);
    for chunk in its.chunks(1000) {
        madd(&mut c, "largest", chunk);
    }
    let before = (
        digest(&mut c, "largest"),
        run(&mut c, &["BF.INFO", "largest"]),
    );
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    assert_eq!(
        (
            digest(&mut c, "largest"),
            run(&mut c, &["BF.INFO", "largest"])
        ),
        before
    );
    drop(c);
    s.restart();
    let mut c = s.conn();
    assert_eq!(digest(&mut c, "largest"), before.0);
    assert_eq!(exists_all(&mut c, "largest", &its), vec![int(1); its.len()]);
}

/// Chains saved by rsbloom before the mixed layout (every link of layout tag 1; DUMP payloads
/// and SCANDUMP streams written by commit aa8a21a, see tests/fixtures/chain-native): they load
/// through RESTORE and LOADCHUNK, answer exactly as they did (the same false positives among
/// 20,000 never-added items), save again in their own layout (the same SCANDUMP stream), and a
/// link they grow takes the mixed layout.
#[test]
fn chains_from_before_the_mixed_layout_load_answer_and_save_as_they_did() {
    let s = Server::new();
    let mut c = s.conn();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/chain-native");
    let absent = items("absent-", 20_000);
    for (key, added, links) in [("scaling", 1000, 4), ("fixed", 900, 1), ("tiny", 16, 1)] {
        let payload = std::fs::read(format!("{dir}/{key}.dump")).unwrap();
        assert_eq!(
            restore(&mut c, key, &payload),
            Ok(redis::Value::Okay),
            "{key}"
        );
        let copy = format!("{key}-chunks");
        load_stream(&mut c, &copy, &format!("{dir}/{key}.scandump"));
        assert_eq!(digest(&mut c, &copy), digest(&mut c, key), "{key}");
        let saved = std::fs::read(format!("{dir}/{key}.scandump")).unwrap();
        assert_eq!(
            scandump_stream(&mut c, key),
            saved,
            "{key}: saved again as it was"
        );

        let debug = match run(&mut c, &["BF.DEBUG", key]) {
            Reply::Arr(lines) => lines,
            other => panic!("{other:?}"),
        };
        assert_eq!(debug.len(), links + 1, "{key}: {debug:?}");
        assert_eq!(count(&present(&mut c, key, &items("item-", added))), added);
        assert_eq!(
            false_positives(&mut c, key, &absent),
            recorded_false_positives(&format!("{dir}/{key}.present")),
            "{key}: the false positives of the first layout"
        );
    }
    // A link the old chain grows is of the mixed layout; the old links keep theirs.
    let layouts = |c: &mut redis::Connection| {
        let Reply::Arr(before) = run(c, &["BF.DEBUG", "scaling"]) else {
            panic!("BF.DEBUG")
        };
        before.len()
    };
    let before = layouts(&mut c);
    for batch in items("more-", 2000).chunks(500) {
        madd(&mut c, "scaling", batch);
    }
    assert_eq!(layouts(&mut c), before + 1, "one grown link");
    let stream = scandump_stream(&mut c, "scaling");
    // The header's trailer: the seed, then one layout tag per link (the chunk of iterator 1's
    // record is the header).
    let header_len = u32::from_le_bytes(stream[8..12].try_into().unwrap()) as usize;
    let header = &stream[12..12 + header_len];
    assert_eq!(&header[header_len - 5..], &[1, 1, 1, 1, 4], "layout tags");
    assert_eq!(
        count(&present(&mut c, "scaling", &items("item-", 1000))),
        1000
    );
    assert_eq!(
        count(&present(&mut c, "scaling", &items("more-", 2000))),
        2000
    );
}

/// Filters saved by the build before the third house step (commit 85d24bb; see
/// tests/fixtures/before-house3): a chain of mixed links, a large mixed link (new ones are
/// blocked now), count and time windows of the rotating layout (the time window NOREFRESH), a
/// cuckoo filter with deletes. Each loads through RESTORE, has the digest it had, answers
/// exactly as it did (its items, the same false positives among 20,000 never-added items), and
/// saves the same value again (DUMP, but for the RDB version and checksum of this server).
#[test]
fn filters_from_before_the_third_house_step_load_answer_and_save_as_they_did() {
    let s = Server::new();
    let mut c = s.conn();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/before-house3");
    let absent = items("absent-", 20_000);
    let keys = [
        ("mixed", "021937ce0d0084907dd8cd03fc5857d1c6f18307", 0..3000),
        ("big", "97c0b4d4d677b399db3ee0bf30ce1a931aad866b", 0..20_000),
        (
            "count",
            "6ee8ce921d56956784d2e159a6fb0e5cd89b4d7e",
            2000..3000,
        ),
        ("time", "90449e4d134703804102175766763e18267495e7", 0..3000),
        ("cf", "6a3ffc1390a7e4241bb8ba4bc0df2c7e0f8e90a7", 200..1500),
    ];
    for (key, recorded_digest, held) in keys {
        let payload = std::fs::read(format!("{dir}/{key}.dump")).unwrap();
        assert_eq!(
            restore(&mut c, key, &payload),
            Ok(redis::Value::Okay),
            "{key}"
        );
        assert_eq!(
            digest(&mut c, key),
            arr(vec![Reply::Status(recorded_digest.into())]),
            "{key}: the digest it had"
        );
        // The value's bytes, without the payload's 2-byte RDB version and 8-byte checksum.
        let again = dump(&mut c, key);
        let value = |p: &[u8]| p[..p.len() - 10].to_vec();
        assert_eq!(value(&again), value(&payload), "{key}: saved the same");
        let (exists, all) = if key == "cf" {
            ("CF.MEXISTS", items("item-", 1500))
        } else {
            ("BF.MEXISTS", items("item-", 3000.max(held.end)))
        };
        let wanted = &all[held.clone()];
        let mut args = vec![exists, key];
        args.extend(wanted.iter().map(String::as_str));
        assert_eq!(
            run(&mut c, &args),
            Reply::Arr(vec![int(1); wanted.len()]),
            "{key}"
        );
        let mut positives = Vec::new();
        for (start, chunk) in absent.chunks(1000).enumerate() {
            let mut args = vec![exists, key];
            args.extend(chunk.iter().map(String::as_str));
            let Reply::Arr(answers) = run(&mut c, &args) else {
                panic!("{exists} {key}")
            };
            for (i, answer) in answers.iter().enumerate() {
                if *answer == int(1) {
                    positives.push(start * 1000 + i);
                }
            }
        }
        assert_eq!(
            positives,
            recorded_false_positives(&format!("{dir}/{key}.present")),
            "{key}: the same false positives"
        );
    }
    // The time window kept its mode.
    let Reply::Arr(window) = run(&mut c, &["BF.INFO", "time", "WINDOW"]) else {
        panic!("BF.INFO time WINDOW")
    };
    assert_eq!(window.last(), Some(&Reply::Status("norefresh".into())));
}
