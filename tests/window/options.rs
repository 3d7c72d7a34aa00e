//! BF.RESERVE's and BF.INSERT's window options and every error they give.

use super::*;

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
