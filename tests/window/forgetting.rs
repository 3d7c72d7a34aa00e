//! What a window remembers and forgets: count and time windows, restarts, clocks (AT and
//! its bounds), NOREFRESH, and what a window item costs.

use super::*;

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
