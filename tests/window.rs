//! Window filters (`SLIDING`, `WINDOW seconds`) through the server: options and their errors,
//! forgetting by count and by the clock (driven by `AT`, so no test sleeps for a window),
//! replication and AOF replay to identical bits, persistence, SCANDUMP's window dialect,
//! DUMP/RESTORE, COPY, hostile state, and the memory per window item.

mod common;

use common::*;
use redis::Value;

/// Milliseconds since the Unix epoch, as the server's clock reads.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn config_set(c: &mut redis::Connection, name: &str, value: &str) -> Reply {
    run(c, &["CONFIG", "SET", name, value])
}

fn insert_at(c: &mut redis::Connection, key: &str, at: u64, its: &[String]) -> Reply {
    let at = at.to_string();
    let mut args = vec!["BF.INSERT", key, "NOCREATE", "AT", &at, "ITEMS"];
    args.extend(its.iter().map(String::as_str));
    run(c, &args)
}

/// The `BF.INFO key WINDOW` map as (name, reply) pairs, from either protocol.
fn window_info(c: &mut redis::Connection, key: &str) -> Vec<(String, Reply)> {
    let name = |r: Reply| match r {
        Reply::Status(s) => s,
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    match run(c, &["BF.INFO", key, "WINDOW"]) {
        Reply::Arr(v) => v
            .chunks(2)
            .map(|p| (name(p[0].clone()), p[1].clone()))
            .collect(),
        Reply::Map(m) => m.into_iter().map(|(k, v)| (name(k), v)).collect(),
        other => panic!("{other:?}"),
    }
}

fn window_field(c: &mut redis::Connection, key: &str, field: &str) -> Reply {
    window_info(c, key)
        .into_iter()
        .find(|(k, _)| k == field)
        .unwrap_or_else(|| panic!("no {field}"))
        .1
}

#[test]
fn window_options_and_their_errors() {
    let s = Server::new();
    let mut c = s.conn();
    let reserve = |c: &mut redis::Connection, args: &[&str]| {
        let mut all = vec!["BF.RESERVE"];
        all.extend_from_slice(args);
        run(c, &all)
    };
    assert_eq!(reserve(&mut c, &["s", "0.01", "1000", "SLIDING"]), ok());
    assert_eq!(
        reserve(&mut c, &["t", "0.01", "1000", "window", "60"]),
        ok()
    );
    assert_eq!(
        reserve(
            &mut c,
            &["tn", "0.01", "10", "WINDOW", "5", "NONSCALING", "SEED", "7"]
        ),
        ok()
    );
    assert_eq!(
        reserve(
            &mut c,
            &["te", "0.01", "10", "EXPANSION", "4", "WINDOW", "5"]
        ),
        ok()
    );
    assert_eq!(
        run(&mut c, &["TYPE", "s"]),
        Reply::Status("MBbloom--".into())
    );
    for (args, want) in [
        (
            &["x", "0.01", "10", "SLIDING", "WINDOW", "5"][..],
            "ERR SLIDING and WINDOW exclude each other: SLIDING keeps the newest items by count, WINDOW by time",
        ),
        (
            &["x", "0.01", "10", "SLIDING", "EXPANSION", "2"],
            "ERR SLIDING filters do not grow (their memory is fixed): EXPANSION does not apply",
        ),
        (
            &["x", "0.01", "10", "WINDOW", "0"],
            "ERR WINDOW takes whole seconds, from 1 to 4294967295",
        ),
        (
            &["x", "0.01", "10", "WINDOW", "4294967296"],
            "ERR WINDOW takes whole seconds, from 1 to 4294967295",
        ),
        (
            &["x", "0.01", "10", "WINDOW", "-5"],
            "ERR WINDOW takes whole seconds, from 1 to 4294967295",
        ),
        (
            &["x", "0.01", "10", "WINDOW"],
            "ERR WINDOW takes whole seconds, from 1 to 4294967295",
        ),
        (
            &["x", "1e-16", "10", "SLIDING"],
            "ERR window filters take error rates from 5.6e-16",
        ),
        // RedisBloom's own checks come first, with its texts.
        (&["x", "2", "10", "SLIDING"], texts::ERROR_RATE_RANGE),
        (&["x", "0.01", "0", "SLIDING"], texts::CAPACITY_RANGE),
        (
            &["x", "0.01", "10", "SLIDINGX"],
            "ERR unknown argument 'SLIDINGX' for BF.RESERVE",
        ),
    ] {
        assert_eq!(reserve(&mut c, args).err_text(), want, "{args:?}");
    }
    assert_eq!(run(&mut c, &["EXISTS", "x"]), int(0));

    // BF.INSERT: the same options, and AT.
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "i",
                "CAPACITY",
                "50",
                "SLIDING",
                "ITEMS",
                "a",
                "b"
            ]
        ),
        ints(&[1, 1])
    );
    for (args, want) in [
        (
            &["BF.INSERT", "y", "SLIDING", "WINDOW", "3", "ITEMS", "a"][..],
            "ERR SLIDING and WINDOW exclude each other: SLIDING keeps the newest items by count, WINDOW by time",
        ),
        (
            &["BF.INSERT", "y", "WINDOW", "x", "ITEMS", "a"],
            "ERR WINDOW takes whole seconds, from 1 to 4294967295",
        ),
        (
            &["BF.INSERT", "y", "AT", "-1", "ITEMS", "a"],
            "ERR AT takes a Unix time in milliseconds, up to 2^62",
        ),
        (
            &["BF.INSERT", "y", "EXPANSION", "2", "SLIDING", "ITEMS", "a"],
            "ERR SLIDING filters do not grow (their memory is fixed): EXPANSION does not apply",
        ),
        // RedisBloom's first-letter matching is untouched: WINDOWS is not WINDOW.
        (
            &["BF.INSERT", "y", "WINDOWS", "3", "ITEMS", "a"],
            texts::INSERT_UNKNOWN_ARGUMENT,
        ),
    ] {
        assert_eq!(run(&mut c, args).err_text(), want, "{args:?}");
    }
    assert_eq!(run(&mut c, &["EXISTS", "y"]), int(0));

    // Window words that cannot apply are refused by name, and nothing changes: a window the
    // filter does not have, a window with NOCREATE on a missing key, AT on a filter that is
    // not a time window (existing, or about to be created without WINDOW).
    run(&mut c, &["BF.RESERVE", "plain", "0.01", "100"]);
    run(
        &mut c,
        &["BF.RESERVE", "minute", "0.01", "100", "WINDOW", "60"],
    );
    for (args, want) in [
        (
            &["BF.INSERT", "plain", "WINDOW", "60", "ITEMS", "a"][..],
            "ERR WINDOW 60 does not apply: the filter exists and has no window (it was created \
             without SLIDING or WINDOW)",
        ),
        (
            &["BF.INSERT", "i", "WINDOW", "60", "ITEMS", "a"],
            "ERR WINDOW 60 does not apply: the filter exists and is a count window (SLIDING)",
        ),
        (
            &["BF.INSERT", "minute", "WINDOW", "30", "ITEMS", "a"],
            "ERR WINDOW 30 does not apply: the filter exists and is a time window (WINDOW 60)",
        ),
        (
            &["BF.INSERT", "minute", "SLIDING", "ITEMS", "a"],
            "ERR SLIDING does not apply: the filter exists and is a time window (WINDOW 60)",
        ),
        (
            &["BF.INSERT", "y", "NOCREATE", "SLIDING", "ITEMS", "a"],
            "ERR SLIDING applies only when BF.INSERT creates the filter, and NOCREATE forbids \
             creating this missing key",
        ),
        (
            &["BF.INSERT", "plain", "AT", "5", "ITEMS", "a"],
            "ERR AT applies only to time windows (WINDOW seconds): the filter has no window (it \
             was created without SLIDING or WINDOW)",
        ),
        (
            &["BF.INSERT", "i", "AT", "5", "ITEMS", "a"],
            "ERR AT applies only to time windows (WINDOW seconds): the filter is a count window \
             (SLIDING)",
        ),
        (
            &["BF.INSERT", "y", "SLIDING", "AT", "5", "ITEMS", "a"],
            "ERR AT applies only to time windows (WINDOW seconds): the filter is a count window \
             (SLIDING)",
        ),
        (
            &["BF.INSERT", "y", "AT", "5", "ITEMS", "a"],
            "ERR AT applies only to time windows (WINDOW seconds): the filter has no window (it \
             was created without SLIDING or WINDOW)",
        ),
    ] {
        assert_eq!(run(&mut c, args).err_text(), want, "{args:?}");
    }
    assert_eq!(run(&mut c, &["EXISTS", "y"]), int(0));
    assert_eq!(run(&mut c, &["BF.EXISTS", "plain", "a"]), int(0));
    assert_eq!(
        run(&mut c, &["BF.EXISTS", "i", "a"]),
        int(1),
        "added before"
    );
    // The same window is no error (as RedisBloom's creation options on an existing filter):
    // it is what the filter has.
    assert_eq!(
        run(
            &mut c,
            &["BF.INSERT", "minute", "WINDOW", "60", "ITEMS", "a"]
        ),
        ints(&[1])
    );
    assert_eq!(
        run(
            &mut c,
            &["BF.INSERT", "i", "NOCREATE", "SLIDING", "ITEMS", "c"]
        ),
        ints(&[1])
    );

    // BF.INFO keeps its five fields; the window shows through WINDOW.
    match run(&mut c, &["BF.INFO", "s"]) {
        Reply::Arr(v) => {
            assert_eq!(v.len(), 10);
            assert_eq!(v[0], Reply::Status("Capacity".into()));
            assert_eq!(v[1], int(1000));
            assert_eq!(v[9], Reply::Nil, "a count window does not grow");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(run(&mut c, &["BF.INFO", "te", "EXPANSION"]), ints(&[4]));
    assert_eq!(
        run(&mut c, &["BF.INFO", "tn", "EXPANSION"]),
        arr(vec![Reply::Nil])
    );
    assert_eq!(window_field(&mut c, "s", "Window"), int(1000));
    assert_eq!(
        window_field(&mut c, "s", "Unit"),
        Reply::Status("items".into())
    );
    assert_eq!(window_field(&mut c, "t", "Window"), int(60));
    assert_eq!(
        window_field(&mut c, "t", "Unit"),
        Reply::Status("seconds".into())
    );
    // The slack is at most a quarter window.
    let Reply::Int(slack) = window_field(&mut c, "s", "Slack") else {
        panic!()
    };
    assert!((1..=250).contains(&slack), "{slack}");
    let Reply::Int(slack) = window_field(&mut c, "t", "Slack") else {
        panic!()
    };
    assert!((1..=15).contains(&slack), "{slack}");
    // BF.INSERT's SLIDING made a count window of its CAPACITY.
    assert_eq!(window_field(&mut c, "i", "Window"), int(50));
    assert_eq!(
        window_field(&mut c, "i", "Unit"),
        Reply::Status("items".into())
    );
    madd(&mut c, "plain", &items("p", 3));
    assert_eq!(
        run(&mut c, &["BF.INFO", "plain", "WINDOW"]).err_text(),
        "ERR not a window filter (created without SLIDING or WINDOW)"
    );
    // RESP3: the same map.
    let mut c3 = s.conn_resp3();
    assert_eq!(window_field(&mut c3, "s", "Window"), int(1000));
    match run(&mut c3, &["BF.INFO", "i", "WINDOW"]) {
        Reply::Map(m) => assert_eq!(m.len(), 8),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        window_field(&mut c, "i", "Adds"),
        Reply::Status("refresh".into())
    );
}

#[test]
fn a_count_window_keeps_the_newest_items_and_forgets_the_rest() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "w", "0.01", "10000", "SLIDING"]),
        ok()
    );
    let all = items("event", 60_000);
    for batch in all.chunks(1000) {
        madd(&mut c, "w", batch);
    }
    let Reply::Int(slack) = window_field(&mut c, "w", "Slack") else {
        panic!()
    };
    // The newest 10,000: all present.
    assert_eq!(count(&present(&mut c, "w", &all[50_000..])), 10_000);
    // Older than window + slack: only as often as never-added items.
    let old_end = 50_000 - slack as usize;
    let forgotten = count(&present(&mut c, "w", &all[old_end - 20_000..old_end]));
    let never = count(&present(&mut c, "w", &items("never", 20_000)));
    // About 0.85% of 20,000 is 170 (standard deviation 13): 260 is 6 deviations out.
    assert!(never <= 260, "false positives {never}/20000");
    assert!(
        forgotten <= 260,
        "forgotten items read present {forgotten}/20000"
    );
    // BF.CARD: the items inside the window, exactly.
    assert_eq!(run(&mut c, &["BF.CARD", "w"]), int(10_000));
    // Memory is fixed: the same after another window of items, and again half a window on.
    let before = memory_usage(&mut c, "w");
    madd(&mut c, "w", &items("more", 10_000));
    assert_eq!(memory_usage(&mut c, "w"), before);
    madd(&mut c, "w", &items("half", 5_000));
    assert_eq!(memory_usage(&mut c, "w"), before);
    // BF.DEBUG: the head line, then one line per slot (r + 1 of them) with its generation.
    let lines = debug_lines(&mut c, "w");
    assert!(lines[0].starts_with("size:10000 ") && lines[0].contains("layout:rotating"));
    assert_eq!(lines.len(), 10);
    assert!(lines[1..]
        .iter()
        .all(|l| l.starts_with("slot:") && l.contains(" live:") && l.contains(" load:")));
    assert_eq!(
        window_field(&mut c, "w", "Layout"),
        Reply::Status("rotating".into())
    );
}

/// Bits per window item, measured as MEMORY USAGE over the capacity after the filter has
/// turned over several windows: the budget is 20 at 1% and 30 at 0.1%.
#[test]
fn memory_per_window_item_is_within_budget() {
    let s = Server::new();
    let mut c = s.conn();
    for (key, error, budget) in [("one", "0.01", 20.0), ("tenth", "0.001", 30.0)] {
        assert_eq!(
            run(&mut c, &["BF.RESERVE", key, error, "1000000", "SLIDING"]),
            ok()
        );
        let all = items(key, 2_500_000);
        for batch in all.chunks(5000) {
            madd(&mut c, key, batch);
        }
        let bits = info_size(&mut c, key) as f64 * 8.0 / 1_000_000.0;
        // 500,000 never-added items: the rate is over the request only if even the lower end
        // of its one-sided 95% confidence interval is (at 0.1% the standard error is 0.0045%,
        // so a filter at 0.12% fails and one at its designed 0.085% never does).
        const TRIALS: usize = 500_000;
        let never: usize = items("never", TRIALS)
            .chunks(10_000)
            .map(|batch| count(&present(&mut c, key, batch)))
            .sum();
        let rate = never as f64 / TRIALS as f64;
        let lower = rate - 1.645 * (rate * (1.0 - rate) / TRIALS as f64).sqrt();
        eprintln!("{key}: {bits:.2} bits per window item, false-positive rate {rate}");
        assert!(bits <= budget, "{key}: {bits} bits per item");
        assert!(lower <= error.parse::<f64>().unwrap(), "{key}: {rate}");
    }
}

#[test]
fn a_time_window_follows_the_clock_and_never_runs_backwards() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "t", "0.01", "10000", "WINDOW", "2"]),
        ok()
    );
    // 200 items in one generation of a window sized for 10,000: no add meets a false positive,
    // so every one counts.
    let t0 = now_ms();
    let early = items("early", 200);
    let late = items("late", 200);
    insert_at(&mut c, "t", t0, &early);
    // Inside the window (the read uses the server's clock, about t0): all present.
    assert_eq!(count(&present(&mut c, "t", &early)), 200);
    assert_eq!(run(&mut c, &["BF.CARD", "t"]), int(200));
    // Half a window later: still all present.
    insert_at(&mut c, "t", t0 + 1000, &late);
    assert_eq!(count(&present(&mut c, "t", &early)), 200);
    // Past the window and its slack, by an AT ahead of the server's clock (a test's clock:
    // bf.at-tolerance widened to 10 s; the filter's clock then leads the server's, and reads
    // follow it): the early items are gone, the late ones too, a new one is there.
    let Reply::Int(slack) = window_field(&mut c, "t", "Slack") else {
        panic!()
    };
    assert_eq!(config_set(&mut c, "bf.at-tolerance", "10000"), ok());
    let later = t0 + 1000 + 2000 + slack as u64 * 1000 + 100;
    assert_eq!(insert_at(&mut c, "t", later, &items("new", 1)), ints(&[1]));
    assert!(count(&present(&mut c, "t", &early)) <= 10);
    assert!(count(&present(&mut c, "t", &late)) <= 10);
    assert_eq!(present(&mut c, "t", &items("new", 1)), vec![true]);
    assert_eq!(run(&mut c, &["BF.CARD", "t"]), int(1));
    // An AT a window behind the filter's clock is refused; one behind it by less is stamped
    // at the filter's clock (it lasts a full window from there), and nothing comes back.
    assert!(insert_at(&mut c, "t", t0, &items("stepped", 1))
        .err_text()
        .contains("before the filter's clock"));
    insert_at(&mut c, "t", later - 1500, &items("stepped", 1));
    assert!(count(&present(&mut c, "t", &early)) <= 10);
    let lines = debug_lines(&mut c, "t");
    assert!(lines[0].contains(&format!("clock:{later}")), "{}", lines[0]);
    assert_eq!(present(&mut c, "t", &items("stepped", 1)), vec![true]);
    // BF.ADD on a time window uses the server's clock, behind the filter's: kept.
    // (0 only for a false positive.)
    assert!(matches!(
        run(&mut c, &["BF.ADD", "t", "plain-add"]),
        Reply::Int(0 | 1)
    ));
    assert_eq!(run(&mut c, &["BF.EXISTS", "t", "plain-add"]), int(1));
}

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
fn restarts_keep_the_window_and_forget_on_time() {
    let mut s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "t", "0.01", "1000", "WINDOW", "3600"]
        ),
        ok()
    );
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "s", "0.001", "1000", "SLIDING"]),
        ok()
    );
    let t0 = now_ms();
    let old = items("old", 300);
    let young = items("young", 300);
    // Items of 50 minutes ago and of now.
    insert_at(&mut c, "t", t0 - 50 * 60_000, &old);
    insert_at(&mut c, "t", t0, &young);
    for batch in items("count", 3000).chunks(500) {
        madd(&mut c, "s", batch);
    }
    let digests: Vec<Reply> = ["t", "s"].iter().map(|k| digest(&mut c, k)).collect();
    assert_eq!(run(&mut c, &["SAVE"]), ok());
    drop(c);
    s.restart();
    let mut c = s.conn();
    let reloaded: Vec<Reply> = ["t", "s"].iter().map(|k| digest(&mut c, k)).collect();
    assert_eq!(digests, reloaded);
    // Both still inside the hour.
    assert_eq!(count(&present(&mut c, "t", &old)), 300);
    assert_eq!(count(&present(&mut c, "t", &young)), 300);
    // "Loaded later": 25 minutes on, the old ones are past the hour plus the slack (about 10
    // minutes), the young ones are not.
    let Reply::Int(slack) = window_field(&mut c, "t", "Slack") else {
        panic!()
    };
    assert!(slack < 15 * 60, "{slack}");
    assert_eq!(config_set(&mut c, "bf.at-tolerance", "3600000"), ok());
    assert_eq!(
        insert_at(&mut c, "t", t0 + 25 * 60_000, &items("tick", 1)),
        ints(&[1])
    );
    // At most false positives: 1% of 300 is 3; 14 is 6 deviations out.
    assert!(count(&present(&mut c, "t", &old)) <= 14);
    assert_eq!(count(&present(&mut c, "t", &young)), 300);
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
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/window-sliced");
    first_layout_fixtures(dir, false, false);
}

/// Window filters of the first layout as its last version saved them (slices within cache
/// lines; commit 2c638e2, see tests/fixtures/window-blocked), with their recorded false
/// positives; their SCANDUMP stream saves byte for byte (a DUMP payload also carries the
/// server's RDB version).
#[test]
fn window_filters_of_the_first_layout_load_answer_and_save_as_they_did() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/window-blocked");
    first_layout_fixtures(dir, true, true);
}

/// An `AT` a window ahead of the server's clock (microseconds given for milliseconds), or a
/// window before the filter's clock, is refused by name before anything changes; so the
/// window keeps forgetting. A replayed write (the primary's AT) is taken as it is.
/// A client's AT more than bf.at-tolerance (1 s) ahead of the server's clock, or more than a
/// window before it (or before the filter's clock), is refused and changes nothing, on a
/// creating BF.INSERT as on an existing filter: microseconds or seconds for milliseconds, AT 0,
/// and a clock three days fast on a week's window (which would make items of five days ago
/// read 0). A wider bf.at-tolerance takes more.
#[test]
fn at_out_of_range_is_refused_and_the_window_keeps_forgetting() {
    let s = Server::new();
    let mut c = s.conn();
    let now = now_ms();
    let day = 86_400_000u64;
    for at in [now * 1000, now / 1000, 0, now + 3 * day, now - 8 * day] {
        let at = at.to_string();
        let r = run(
            &mut c,
            &[
                "BF.INSERT",
                "tw",
                "WINDOW",
                "604800",
                "AT",
                &at,
                "ITEMS",
                "x",
            ],
        );
        assert!(
            r.err_text().starts_with(&format!("ERR AT {at} is "))
                && r.err_text()
                    .ends_with("AT takes a Unix time in milliseconds"),
            "{r:?}"
        );
        assert_eq!(run(&mut c, &["EXISTS", "tw"]), int(0), "nothing created");
    }
    // An item added five days ago reads present; a skewed writer three days ahead is refused,
    // and the item still reads present.
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "tw",
                "WINDOW",
                "604800",
                "AT",
                &(now - 5 * day).to_string(),
                "ITEMS",
                "old"
            ]
        ),
        ints(&[1])
    );
    let before = digest(&mut c, "tw");
    let r = insert_at(&mut c, "tw", now + 3 * day, &items("skew", 1));
    assert!(
        r.err_text().contains("ahead of the server's clock")
            && r.err_text().contains("more than bf.at-tolerance (1000 ms)"),
        "{r:?}"
    );
    for at in [now * 1000, now / 1000, 0] {
        assert!(insert_at(&mut c, "tw", at, &items("y", 1)).is_err(), "{at}");
    }
    assert_eq!(digest(&mut c, "tw"), before, "nothing changed");
    assert_eq!(run(&mut c, &["BF.EXISTS", "tw", "old"]), int(1));
    // Within the bounds: taken.
    assert_eq!(
        insert_at(&mut c, "tw", now + 500, &items("y", 1)),
        ints(&[1])
    );
    assert_eq!(
        insert_at(&mut c, "tw", now - 6 * day, &items("z", 1)),
        ints(&[1])
    );
    // A wider tolerance takes a clock days ahead (a test that simulates time).
    assert_eq!(
        config_set(&mut c, "bf.at-tolerance", &(4 * day).to_string()),
        ok()
    );
    assert_eq!(
        insert_at(&mut c, "tw", now + 3 * day, &items("skew", 1)),
        ints(&[1])
    );
    // The window still forgets on the server's clock: a 2 s window's item is gone once the
    // window and its slack have passed.
    assert_eq!(
        run(&mut c, &["BF.INSERT", "short", "WINDOW", "2", "ITEMS", "x"]),
        ints(&[1])
    );
    s.wait_for("x to leave the 2 s window", 20, || {
        run(&mut c, &["BF.EXISTS", "short", "x"]) == int(0)
    });
}

/// The re-fetch recipe of docs/window-filters.md: a crawler adds every URL it meets to a
/// week's window and fetches those the add answers 1 for. A URL met every day is fetched on
/// day 0, then again 7 to 8 days after each fetch (the window and at most its slack), with
/// the NOREFRESH mode and with NOREFRESH on each call to a refreshing window; a refreshing
/// add alone never fetches it again. Days pass by AT (bf.at-tolerance widened), one add at
/// noon each day; BF.INFO WINDOW shows the mode, and a replica holds the same bits.
#[test]
fn a_url_met_daily_is_due_again_after_a_week_with_norefresh() {
    let s = Server::new();
    let replica = s.start_replica(&[]);
    let mut c = s.conn();
    let day = 86_400_000u64;
    assert_eq!(
        config_set(&mut c, "bf.at-tolerance", &(60 * day).to_string()),
        ok()
    );
    for (key, mode) in [("mode", Some("NOREFRESH")), ("call", None), ("plain", None)] {
        let mut line = vec!["BF.RESERVE", key, "0.01", "10000", "WINDOW", "604800"];
        line.extend(mode);
        assert_eq!(run(&mut c, &line), ok());
    }
    let adds = |key: &str| {
        if key == "call" {
            vec!["NOREFRESH"]
        } else {
            vec![]
        }
    };
    let start = now_ms() - now_ms() % day + 12 * 3_600_000;
    let mut fetched: Vec<(&str, Vec<u64>)> =
        vec![("mode", vec![]), ("call", vec![]), ("plain", vec![])];
    for d in 0..40u64 {
        let at = (start + d * day).to_string();
        for (key, days) in fetched.iter_mut() {
            let mut line = vec!["BF.INSERT", key, "NOCREATE"];
            line.extend(adds(key));
            line.extend(["AT", &at, "ITEMS", "https://example.com/daily"]);
            if run(&mut c, &line) == ints(&[1]) {
                days.push(d);
            }
        }
    }
    eprintln!("fetch days: {fetched:?}");
    let (mode, call, plain) = (&fetched[0].1, &fetched[1].1, &fetched[2].1);
    assert_eq!(mode[0], 0);
    assert!(mode.len() >= 5, "{mode:?}");
    assert!(
        mode.windows(2).all(|p| (7..=8).contains(&(p[1] - p[0]))),
        "{mode:?}"
    );
    assert_eq!(call, mode);
    assert_eq!(plain, &vec![0]);
    assert_eq!(
        window_field(&mut c, "mode", "Adds"),
        Reply::Status("norefresh".into())
    );
    assert_eq!(
        window_field(&mut c, "call", "Adds"),
        Reply::Status("refresh".into())
    );
    // NOREFRESH where no window is: refused, nothing created.
    for line in [
        &["BF.RESERVE", "p", "0.01", "100", "NOREFRESH"][..],
        &["BF.INSERT", "p", "NOREFRESH", "ITEMS", "a"],
    ] {
        assert!(run(&mut c, line)
            .err_text()
            .contains("NOREFRESH applies only to window filters"));
    }
    assert_eq!(run(&mut c, &["BF.ADD", "p", "a"]), int(1));
    assert!(run(&mut c, &["BF.INSERT", "p", "NOREFRESH", "ITEMS", "a"])
        .err_text()
        .contains("the filter has no window"));
    // The mode survives a DEBUG RELOAD, and the replica holds the same bits.
    let digests: Vec<Reply> = ["mode", "call", "plain"]
        .iter()
        .map(|k| digest(&mut c, k))
        .collect();
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    assert_eq!(
        window_field(&mut c, "mode", "Adds"),
        Reply::Status("norefresh".into())
    );
    let reloaded: Vec<Reply> = ["mode", "call", "plain"]
        .iter()
        .map(|k| digest(&mut c, k))
        .collect();
    assert_eq!(digests, reloaded);
    let mut r = replica.conn();
    wait_caught_up(&mut c, &mut r);
    let copies: Vec<Reply> = ["mode", "call", "plain"]
        .iter()
        .map(|k| digest(&mut r, k))
        .collect();
    assert_eq!(digests, copies);
}

/// A time window's BF.CARD changes only when a caching client is told: it counts the items
/// of the live generations, which change with a write or when a generation leaves, the
/// moment the forget signal goes out. Items added in three generations of a 2 s window
/// leave in steps; a poller sees the count change no more often than a tracking client is
/// sent an invalidation (the count used to fall with every millisecond, unsignalled).
#[test]
fn a_tracked_time_window_count_changes_only_with_an_invalidation() {
    use std::io::Write;
    let s = Server::new();
    let mut c = s.conn();
    let t0 = now_ms();
    for (i, back) in [1500u64, 1000, 500].into_iter().enumerate() {
        let at = (t0 - back).to_string();
        let batch = items(&format!("g{i}"), 50);
        let mut line = vec!["BF.INSERT", "tw", "WINDOW", "2", "AT", &at, "ITEMS"];
        line.extend(batch.iter().map(String::as_str));
        assert!(matches!(run(&mut c, &line), Reply::Arr(_)));
    }
    let card = |c: &mut redis::Connection| match run(c, &["BF.CARD", "tw"]) {
        Reply::Int(n) => n,
        other => panic!("{other:?}"),
    };
    let first = card(&mut c);
    assert!(first > 100, "{first}");
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    sock.write_all(b"HELLO 3\r\nCLIENT TRACKING ON\r\nBF.CARD tw\r\n")
        .unwrap();
    let (mut invalidations, mut changes, mut last) = (0, 0, first);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while last > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the count never reached 0"
        );
        for (_, text) in pushes(&mut sock, std::time::Duration::from_millis(5)) {
            let told = text.matches("invalidate").count();
            invalidations += told;
            if told > 0 {
                // Read it again, to be told of the next change.
                sock.write_all(b"BF.CARD tw\r\n").unwrap();
            }
        }
        let now = card(&mut c);
        if now != last {
            changes += 1;
            last = now;
        }
    }
    eprintln!("{changes} changes of BF.CARD from {first}, {invalidations} invalidations");
    assert!((1..=3).contains(&changes), "{changes}");
    // The last change's invalidation may still be on its way.
    let tail = pushes(&mut sock, std::time::Duration::from_millis(500));
    invalidations += tail
        .iter()
        .map(|(_, t)| t.matches("invalidate").count())
        .sum::<usize>();
    assert!(
        changes <= invalidations,
        "{changes} changes, {invalidations} invalidations"
    );
}

/// Reads a RESP3 connection for `wait`, returning the invalidation pushes that arrived with
/// the milliseconds (Unix) they arrived at.
fn pushes(sock: &mut std::net::TcpStream, wait: std::time::Duration) -> Vec<(u64, String)> {
    use std::io::Read;
    let end = std::time::Instant::now() + wait;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Some(left) = end.checked_duration_since(std::time::Instant::now()) {
        sock.set_read_timeout(Some(left.max(std::time::Duration::from_millis(1))))
            .unwrap();
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.push((now_ms(), String::from_utf8_lossy(&buf[..n]).into_owned())),
            Err(_) => break,
        }
    }
    got
}

/// A client that caches reads (RESP3 CLIENT TRACKING) is told when a time window forgets:
/// the invalidation arrives after the window and within one generation (250 ms of a 2 s
/// window) of the items' expiry, without any write; a count window, which forgets only by
/// writes, sends none by itself (its key is tracked too, and never named).
#[test]
fn tracking_clients_are_told_when_a_time_window_forgets() {
    use std::io::Write;
    let s = Server::new();
    let mut c = s.conn();
    let added_at = now_ms();
    assert_eq!(
        run(
            &mut c,
            &["BF.INSERT", "tw", "WINDOW", "2", "ITEMS", "a", "b"]
        ),
        ints(&[1, 1])
    );
    run(&mut c, &["BF.RESERVE", "cw2", "0.01", "100", "SLIDING"]);
    madd(&mut c, "cw2", &items("c", 10));
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    sock.write_all(b"HELLO 3\r\nCLIENT TRACKING ON\r\nBF.EXISTS tw a\r\nBF.EXISTS cw2 c0\r\n")
        .unwrap();
    let before = pushes(&mut sock, std::time::Duration::from_millis(1500));
    assert!(
        before.iter().all(|(_, text)| !text.contains("invalidate")),
        "{before:?}"
    );
    let after = pushes(&mut sock, std::time::Duration::from_millis(1500));
    let (arrived, text) = after
        .iter()
        .find(|(_, text)| text.contains("invalidate"))
        .unwrap_or_else(|| panic!("no invalidation: {after:?}"));
    assert!(
        text.contains("$2\r\ntw\r\n") && !text.contains("cw2"),
        "{text:?}"
    );
    let late = arrived - added_at;
    eprintln!("invalidation {late} ms after the add (window 2000 ms, generation 250 ms)");
    // The items expire 2,000 to 2,250 ms after the add (their generation's span); the signal
    // may come up to one generation after that.
    assert!((2000..=2250 + 250).contains(&late), "{late} ms");
    assert_eq!(run(&mut c, &["BF.EXISTS", "tw", "a"]), int(0));
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
