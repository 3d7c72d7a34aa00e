//! Window filters across replication, the AOF, SCANDUMP, DUMP/RESTORE and COPY, corrupt data,
//! the memory limit, RedisBloom's refusal, the first layout's fixtures, and the memory taken at
//! creation.

use super::*;

/// A window filter with items added at real server time across many generation shifts (a
/// 2-second window shifts about every 30 ms), single and pipelined, a count window, and a
/// NONSCALING window that refuses: the replica and an AOF replay hold the same bits.
#[test]
fn replicas_and_aof_replays_hold_identical_window_filters() {
    let mut p = Server::with_args(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let r = p.start_replica(&[]);
    let (mut pc, mut rc) = (p.conn(), r.conn());
    assert_eq!(
        run(&mut pc, &["BF.RESERVE", "t", "0.01", "500", "WINDOW", "2"]),
        ok()
    );
    assert_eq!(
        run(&mut pc, &["BF.RESERVE", "s", "0.01", "500", "SLIDING"]),
        ok()
    );
    assert_eq!(
        run(
            &mut pc,
            &[
                "BF.RESERVE",
                "full",
                "0.01",
                "20",
                "WINDOW",
                "600",
                "NONSCALING"
            ]
        ),
        ok()
    );
    assert_eq!(
        run(
            &mut pc,
            &[
                "BF.RESERVE",
                "nr",
                "0.01",
                "500",
                "WINDOW",
                "2",
                "NOREFRESH"
            ]
        ),
        ok()
    );
    let start = std::time::Instant::now();
    let mut batch = 0;
    while start.elapsed() < std::time::Duration::from_millis(2500) {
        let its = items(&format!("b{batch}"), 20);
        madd(&mut pc, "t", &its);
        madd(&mut pc, "s", &its);
        // NOREFRESH, the mode's and one call's: half of each batch held already.
        let again = items(&format!("b{}", batch / 2), 20);
        madd(&mut pc, "nr", &again);
        let mut line = vec!["BF.INSERT", "t", "NOCREATE", "NOREFRESH", "ITEMS"];
        line.extend(again.iter().map(String::as_str));
        assert!(matches!(run(&mut pc, &line), Reply::Arr(_)));
        run(&mut pc, &["BF.ADD", "t", &format!("single{batch}")]);
        // Pipelined adds share milliseconds: those at the filter's clock replicate as received.
        let burst: Vec<Vec<String>> = items(&format!("p{batch}"), 100)
            .into_iter()
            .map(|item| vec!["BF.ADD".into(), "t".into(), item])
            .collect();
        pipeline(&mut pc, &burst);
        batch += 1;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The NONSCALING window refuses past its budget; what it took is replicated, the rest not.
    let mut refused = 0;
    for b in 0..30 {
        if let Reply::Arr(v) = madd(&mut pc, "full", &items(&format!("f{b}"), 20)) {
            refused += v.iter().filter(|r| r.is_err()).count();
        }
    }
    assert!(refused > 0, "the NONSCALING window refused nothing");
    wait_caught_up(&mut pc, &mut rc);
    let lines = debug_lines(&mut pc, "t");
    let slices = lines.len() - 1;
    assert!(slices > 20, "few slices: {lines:?}");
    for key in ["t", "s", "full", "nr"] {
        assert_eq!(digest(&mut pc, key), digest(&mut rc, key), "{key}");
    }
    // Both forms reached the replica and the AOF: writes that moved the clock carry it, the
    // others came as received and were applied at the filter's clock.
    let aof = p.aof_bytes();
    assert!(contains_bytes(
        &aof,
        "$9\r\nBF.INSERT\r\n$1\r\nt\r\n$8\r\nNOCREATE\r\n$2\r\nAT\r\n"
    ));
    assert!(contains_bytes(&aof, "$6\r\nBF.ADD\r\n$1\r\nt\r\n"));
    assert!(contains_bytes(&aof, "$9\r\nNOREFRESH\r\n"));
    let digests = |c: &mut redis::Connection| -> Vec<Reply> {
        ["t", "s", "full", "nr"]
            .iter()
            .map(|k| digest(c, k))
            .collect()
    };
    let before = digests(&mut pc);
    drop(pc);
    p.restart();
    let mut pc = p.conn();
    assert_eq!(digests(&mut pc), before, "AOF replay");
    // And after a rewrite of the AOF (which carries the mode in whichever form it writes).
    assert_eq!(
        run(&mut pc, &["BGREWRITEAOF"]),
        Reply::Status("Background append only file rewriting started".into())
    );
    p.wait_for_aof_rewrite(&mut pc);
    drop(pc);
    p.restart();
    let mut pc = p.conn();
    assert_eq!(digests(&mut pc), before, "AOF rewrite");
    assert_eq!(
        window_field(&mut pc, "nr", "Adds"),
        Reply::Status("norefresh".into())
    );
}

#[test]
fn scandump_dump_restore_and_copy_carry_window_filters() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "t", "0.01", "2000", "WINDOW", "600"]
        ),
        ok()
    );
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "s", "0.01", "2000", "SLIDING"]),
        ok()
    );
    let its = items("dump", 5000);
    for batch in its.chunks(1000) {
        madd(&mut c, "t", batch);
        madd(&mut c, "s", batch);
    }
    for key in ["t", "s"] {
        // SCANDUMP into a new key, the way a client copies a filter.
        let copy = format!("{key}-scan");
        let mut iterator = 0i64;
        loop {
            let Value::Array(v) = raw(&mut c, &["BF.SCANDUMP", key, &iterator.to_string()]) else {
                panic!()
            };
            let (Value::Int(next), Value::BulkString(data)) = (&v[0], &v[1]) else {
                panic!("{v:?}")
            };
            if *next == 0 {
                break;
            }
            let mut cmd = redis::cmd("BF.LOADCHUNK");
            cmd.arg(&copy).arg(*next).arg(data.as_slice());
            let r: redis::RedisResult<Value> = cmd.query(&mut c);
            assert_eq!(r, Ok(Value::Okay));
            iterator = *next;
        }
        assert_eq!(digest(&mut c, &copy), digest(&mut c, key));
        assert_eq!(count(&present(&mut c, &copy, &its[3000..])), 2000);
        // DUMP / RESTORE and COPY.
        let payload = dump(&mut c, key);
        let restored = format!("{key}-restored");
        assert_eq!(restore(&mut c, &restored, &payload), Ok(Value::Okay));
        assert_eq!(digest(&mut c, &restored), digest(&mut c, key));
        let copied = format!("{key}-copied");
        assert_eq!(run(&mut c, &["COPY", key, &copied]), int(1));
        assert_eq!(digest(&mut c, &copied), digest(&mut c, key));
        madd(&mut c, &copied, &items("after-copy", 10));
        assert_ne!(digest(&mut c, &copied), digest(&mut c, key));
    }
}

#[test]
fn corrupt_window_state_is_refused_cleanly() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "t", "0.01", "100", "WINDOW", "60"]),
        ok()
    );
    madd(&mut c, "t", &items("x", 500));
    let Value::Array(v) = raw(&mut c, &["BF.SCANDUMP", "t", "0"]) else {
        panic!()
    };
    let Value::BulkString(header) = &v[1] else {
        panic!()
    };
    let load = |c: &mut redis::Connection, key: &str, data: &[u8]| {
        let mut cmd = redis::cmd("BF.LOADCHUNK");
        cmd.arg(key).arg(1).arg(data);
        let r: redis::RedisResult<Value> = cmd.query(c);
        r.map_err(|e| err_text(&e))
    };
    assert_eq!(load(&mut c, "ok", header), Ok(Value::Okay));
    // Every single-byte change either loads a valid filter or is refused with an error reply;
    // the server answers throughout.
    let mut refused = 0;
    for at in 0..header.len() {
        for delta in [1u8, 0x80, 0xff] {
            let mut bad = header.clone();
            bad[at] = bad[at].wrapping_add(delta);
            let key = format!("bad-{at}-{delta}");
            match load(&mut c, &key, &bad) {
                Ok(_) => {
                    // A filter that loaded is usable.
                    run(&mut c, &["BF.ADD", &key, "probe"]);
                    run(&mut c, &["BF.EXISTS", &key, "probe"]);
                    run(&mut c, &["BF.INFO", &key]);
                    run(&mut c, &["BF.DEBUG", &key]);
                }
                Err(e) => {
                    refused += 1;
                    assert!(
                        e == texts::BAD_DATA || e.contains("per-filter limit"),
                        "{e}"
                    );
                }
            }
        }
    }
    // Counts, kind, window, hashes, base slice and slice fields are checked; a seed, a clock
    // or an item count may take any value.
    assert!(
        refused > header.len() / 2,
        "{refused} of {}",
        3 * header.len()
    );
    // Truncated and padded headers.
    assert_eq!(
        load(&mut c, "short", &header[..header.len() - 1]),
        Err(texts::BAD_DATA.to_string())
    );
    let mut long = header.clone();
    long.push(0);
    assert_eq!(
        load(&mut c, "long", &long),
        Err(texts::BAD_DATA.to_string())
    );
    // A RESTORE payload with a flipped byte in the window fields: refused, not loaded.
    let mut bad = dump(&mut c, "t");
    bad[20] ^= 0x40;
    let r = restore(&mut c, "restored", &bad);
    assert!(r.is_err(), "{r:?}");
    assert_eq!(run(&mut c, &["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn the_memory_limit_refuses_window_filters_too() {
    let s = Server::with_args(&["MAX_FILTER_BYTES", "100000"], &[]);
    let mut c = s.conn();
    let r = run(&mut c, &["BF.RESERVE", "big", "0.01", "1000000", "SLIDING"]);
    assert!(
        r.err_text().contains("per-filter limit of 100000 bytes"),
        "{r:?}"
    );
    // A time window that grows past the limit refuses the adds that would need more, and
    // keeps every item it took.
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "t", "0.01", "1000", "WINDOW", "600"]
        ),
        ok()
    );
    let mut taken = Vec::new();
    let mut refused = 0;
    for b in 0..100 {
        let its = items(&format!("burst{b}"), 1000);
        if let Reply::Arr(v) = madd(&mut c, "t", &its) {
            for (item, r) in its.iter().zip(&v) {
                if r.is_err() {
                    assert!(r.err_text().contains("per-filter limit"), "{r:?}");
                    refused += 1;
                } else {
                    taken.push(item.clone());
                }
            }
        }
        if refused > 0 {
            break;
        }
    }
    assert!(refused > 0);
    assert_eq!(count(&present(&mut c, "t", &taken)), taken.len());
    assert!(memory_usage(&mut c, "t") <= 100_000 + 20_000);
}

#[test]
fn redisbloom_refuses_the_window_dialect() {
    let ours = Server::new();
    let mut c = ours.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "t", "0.01", "100", "SLIDING"]),
        ok()
    );
    madd(&mut c, "t", &items("x", 50));
    let Value::Array(v) = raw(&mut c, &["BF.SCANDUMP", "t", "0"]) else {
        panic!()
    };
    let Value::BulkString(header) = &v[1] else {
        panic!()
    };
    let rb = Server::try_with_module(&redisbloom_so(), None, &[], &[]).expect("RedisBloom");
    let mut rc = rb.conn();
    let mut cmd = redis::cmd("BF.LOADCHUNK");
    cmd.arg("t").arg(1).arg(header.as_slice());
    let r: redis::RedisResult<Value> = cmd.query(&mut rc);
    assert!(r.is_err(), "RedisBloom took the window dialect: {r:?}");
    assert_eq!(run(&mut rc, &["PING"]), Reply::Status("PONG".into()));
    assert_eq!(run(&mut rc, &["EXISTS", "t"]), int(0));
}

/// Window filters of the first layout saved by an older rsbloom, from the fixtures in `dir`:
/// each loads through RESTORE and LOADCHUNK (the same bits), keeps its layout, holds the items it
/// held, answers never-added items as recorded (the exact false positives in `<key>.present`,
/// where the fixtures have them, else at the rate), takes new items (a count window holds its
/// newest 1,000 and forgets the old ones), and saves again: its SCANDUMP stream as it was
/// (`byte_identical`), and through DUMP / RESTORE every bit.
fn first_layout_fixtures(dir: &str, recorded: bool, byte_identical: bool) {
    let s = Server::new();
    let mut c = s.conn();
    let absent = items("absent-", 20_000);
    // (key, items added as item-0.., the newest of them the window holds, slices)
    for (key, added, held, slices) in [
        ("count", 3000, 1000, 73),
        ("time", 500, 500, 23),
        ("burst", 1000, 1000, 35),
    ] {
        let payload = std::fs::read(format!("{dir}/{key}.dump")).unwrap();
        assert_eq!(restore(&mut c, key, &payload), Ok(Value::Okay), "{key}");
        let copy = format!("{key}-chunks");
        load_stream(&mut c, &copy, &format!("{dir}/{key}.scandump"));
        assert_eq!(digest(&mut c, &copy), digest(&mut c, key), "{key}");
        if byte_identical {
            let saved = std::fs::read(format!("{dir}/{key}.scandump")).unwrap();
            assert_eq!(
                scandump_stream(&mut c, key),
                saved,
                "{key}: saved as it was"
            );
        }
        let layout = || Reply::Status("age-partitioned".into());
        assert_eq!(window_field(&mut c, key, "Layout"), layout(), "{key}");
        assert_eq!(window_field(&mut c, key, "Slices"), int(slices), "{key}");
        assert_eq!(
            window_field(&mut c, key, "Items in window"),
            int(held as i64),
            "{key}"
        );
        let its = items("item-", added);
        assert_eq!(
            count(&present(&mut c, key, &its[added - held..])),
            held,
            "{key}"
        );
        if recorded {
            assert_eq!(
                false_positives(&mut c, key, &absent),
                recorded_false_positives(&format!("{dir}/{key}.present")),
                "{key}: the false positives of the first layout"
            );
        } else {
            let fp = count(&present(&mut c, key, &absent));
            assert!(fp <= 300, "{key}: {fp} of 20,000 absent items read present");
        }

        let new = items("new-", 1500);
        for batch in new.chunks(500) {
            madd(&mut c, key, batch);
        }
        let newest = if key == "count" { 1000 } else { 1500 };
        assert_eq!(
            count(&present(&mut c, key, &new[1500 - newest..])),
            newest,
            "{key}"
        );
        if key == "count" {
            let old = count(&present(&mut c, key, &its[added - held..]));
            assert!(old <= 30, "{old} of 1,000 forgotten items read present");
        }
        assert_eq!(window_field(&mut c, key, "Layout"), layout(), "{key}");
        let (again, restored) = (dump(&mut c, key), format!("{key}-again"));
        assert_eq!(restore(&mut c, &restored, &again), Ok(Value::Okay));
        assert_eq!(digest(&mut c, &restored), digest(&mut c, key), "{key}");
    }
}

/// Window filters saved by rsbloom before the blocked layout (a bit array per slice; commit
/// 4f0a6ca, see tests/fixtures/window-sliced).
#[test]
fn window_filters_from_before_the_blocked_layout_still_load() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/window-sliced");
    first_layout_fixtures(dir, false, false);
}

/// Window filters of the first layout as its last version saved them (slices within cache
/// lines; commit 2c638e2, see tests/fixtures/window-blocked), with their recorded false
/// positives; their SCANDUMP stream saves byte for byte (a DUMP payload also carries the
/// server's RDB version).
#[test]
fn window_filters_of_the_first_layout_load_answer_and_save_as_they_did() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/window-blocked");
    first_layout_fixtures(dir, true, true);
}

/// What a window costs at creation, the figures docs/window-filters.md quotes: `MEMORY USAGE`
/// and `used_memory` (what `maxmemory` counts) take its whole base array at once, while the
/// process's RSS grows only as pages are first written; the generations' lines interleave,
/// so the first few thousand adds write every page.
#[test]
fn a_window_takes_its_whole_array_at_creation_and_rss_follows_the_first_adds() {
    let s = Server::new();
    let mut c = s.conn();
    // The process's RSS now, from /proc (INFO's used_memory_rss is sampled by a timer).
    let pid = s.pid;
    let memory = |c: &mut redis::Connection| {
        let used = info_value(c, "memory", "used_memory").unwrap();
        let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).unwrap();
        let pages: i64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        (used.parse::<i64>().unwrap(), pages * 4096)
    };
    let (used0, rss0) = memory(&mut c);
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "w", "0.01", "10000000", "WINDOW", "604800"]
        ),
        ok()
    );
    let Reply::Int(usage) = run(&mut c, &["MEMORY", "USAGE", "w"]) else {
        panic!()
    };
    let (used1, rss1) = memory(&mut c);
    for batch in items("u", 20_000).chunks(1000) {
        madd(&mut c, "w", batch);
    }
    let (_, rss2) = memory(&mut c);
    eprintln!(
        "10,000,000 at 1%, WINDOW 604800: MEMORY USAGE {usage}; at creation used_memory +{}, \
         RSS +{}; after 20,000 adds RSS +{}",
        used1 - used0,
        rss1 - rss0,
        rss2 - rss0
    );
    assert!(
        used1 - used0 >= usage * 9 / 10,
        "used_memory counts the array at once"
    );
    assert!(rss1 - rss0 < usage / 4, "RSS at creation");
    assert!(rss2 - rss0 > usage * 8 / 10, "RSS after 20,000 adds");
}
