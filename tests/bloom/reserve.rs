//! BF.RESERVE: replies, options and their errors, in RESP2 and RESP3.

use super::*;

#[test]
fn reserve_ok_and_type() {
    let s = Server::new();
    for resp3 in [false, true] {
        let mut c = if resp3 { s.conn_resp3() } else { s.conn() };
        let p = if resp3 { "r3" } else { "r2" };
        let cases: Vec<Vec<String>> = vec![
            vec!["a", "0.01", "100"],
            vec!["b", "0.001", "1000", "EXPANSION", "4"],
            vec!["c", "0.01", "100", "NONSCALING"],
            vec!["d", "0.01", "100", "expansion", "1"],
            vec!["e", "0.05", "10", "nonscaling"],
            vec!["f", "1e-3", "10"],
            vec!["g", "0.5", "3", "EXPANSION", "100000"],
            vec!["h", "0.99", "1"],
        ]
        .into_iter()
        .map(|v| {
            let mut args = vec!["BF.RESERVE".to_string(), format!("{p}{}", v[0])];
            args.extend(v[1..].iter().map(|x| x.to_string()));
            args
        })
        .collect();
        for args in &cases {
            assert_eq!(run(&mut c, args), ok(), "{args:?}");
            assert_eq!(
                key_type(&mut c, &args[1]),
                Reply::Status("MBbloom--".into()),
                "{args:?}"
            );
            // a reserved filter is empty
            assert_eq!(
                run(&mut c, &["BF.EXISTS", &args[1], "nothing-here"]),
                if resp3 { boolean(false) } else { int(0) },
                "{args:?}"
            );
        }
    }
}

#[test]
fn reserve_error_rate_errors() {
    let s = Server::new();
    for resp3 in [false, true] {
        let mut c = if resp3 { s.conn_resp3() } else { s.conn() };
        for rate in ["abc", "nan", "", "0.01x"] {
            assert_eq!(
                run(&mut c, &["BF.RESERVE", "k", rate, "100"]),
                err(texts::BAD_ERROR_RATE),
                "rate {rate:?}"
            );
        }
        for rate in ["0", "1", "-1", "inf", "7.7", "-0.5", "1.0"] {
            assert_eq!(
                run(&mut c, &["BF.RESERVE", "k", rate, "100"]),
                err(texts::ERROR_RATE_RANGE),
                "rate {rate:?}"
            );
        }
        // the error rate is checked before the capacity
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "abc", "0"]),
            err(texts::BAD_ERROR_RATE)
        );
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "0", "abc"]),
            err(texts::ERROR_RATE_RANGE)
        );
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "1", "10", "EXPANSION"]),
            err(texts::ERROR_RATE_RANGE)
        );
        assert_eq!(key_type(&mut c, "k"), Reply::Status("none".into()));
    }
}

#[test]
fn reserve_capacity_errors() {
    let s = Server::new();
    for resp3 in [false, true] {
        let mut c = if resp3 { s.conn_resp3() } else { s.conn() };
        for cap in ["1.5", "abc", "", "1e3", "18446744073709551616", "10x"] {
            assert_eq!(
                run(&mut c, &["BF.RESERVE", "k", "0.01", cap]),
                err(texts::BAD_CAPACITY),
                "capacity {cap:?}"
            );
        }
        for cap in ["0", "-5", "-1"] {
            assert_eq!(
                run(&mut c, &["BF.RESERVE", "k", "0.01", cap]),
                err(texts::CAPACITY_RANGE),
                "capacity {cap:?}"
            );
        }
        // the capacity is checked before the options
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "0.01", "abc", "EXPANSION"]),
            err(texts::BAD_CAPACITY)
        );
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "0.01", "0", "EXPANSION"]),
            err(texts::CAPACITY_RANGE)
        );
        assert_eq!(
            run(
                &mut c,
                &[
                    "BF.RESERVE",
                    "k",
                    "0.01",
                    "0",
                    "NONSCALING",
                    "EXPANSION",
                    "2"
                ]
            ),
            err(texts::CAPACITY_RANGE)
        );
        assert_eq!(key_type(&mut c, "k"), Reply::Status("none".into()));
    }
}

#[test]
fn reserve_expansion_errors() {
    let s = Server::new();
    for resp3 in [false, true] {
        let mut c = if resp3 { s.conn_resp3() } else { s.conn() };
        let cases: &[(&[&str], &str)] = &[
            (&["EXPANSION"], texts::NO_EXPANSION),
            (&["expansion"], texts::NO_EXPANSION),
            (&["EXPANSION", "x"], texts::BAD_EXPANSION),
            (&["EXPANSION", "1.5"], texts::BAD_EXPANSION),
            (&["EXPANSION", ""], texts::BAD_EXPANSION),
            (&["EXPANSION", "0"], texts::EXPANSION_RANGE),
            (&["Expansion", "0"], texts::EXPANSION_RANGE),
            (&["EXPANSION", "-1"], texts::EXPANSION_RANGE),
            (
                &["EXPANSION", "2", "NONSCALING"],
                texts::NONSCALING_EXPANSION,
            ),
            (
                &["NONSCALING", "EXPANSION", "2"],
                texts::NONSCALING_EXPANSION,
            ),
            (
                &["nonscaling", "expansion", "1"],
                texts::NONSCALING_EXPANSION,
            ),
            // 2.x checks NONSCALING before parsing the expansion value
            (
                &["NONSCALING", "EXPANSION", "x"],
                texts::NONSCALING_EXPANSION,
            ),
            (
                &["NONSCALING", "EXPANSION", "0"],
                texts::NONSCALING_EXPANSION,
            ),
            // ... but a missing value comes first
            (&["NONSCALING", "EXPANSION"], texts::NO_EXPANSION),
        ];
        for (opts, want) in cases {
            let mut args = vec!["BF.RESERVE", "k", "0.01", "100"];
            args.extend_from_slice(opts);
            assert_eq!(run(&mut c, &args), err(want), "{args:?} resp3={resp3}");
        }
        assert_eq!(key_type(&mut c, "k"), Reply::Status("none".into()));
    }
}

#[test]
fn reserve_on_existing_key() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.RESERVE", "r", "0.01", "100"]), ok());
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "r", "0.01", "100"]),
        err(texts::ITEM_EXISTS)
    );
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "r", "0.1", "5", "NONSCALING"]),
        err(texts::ITEM_EXISTS)
    );
    // argument errors come before the key check
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "r", "0.01", "0"]),
        err(texts::CAPACITY_RANGE)
    );
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "r", "abc", "10"]),
        err(texts::BAD_ERROR_RATE)
    );
    // implicitly created filters too
    assert_eq!(run(&mut c, &["BF.ADD", "i", "x"]), int(1));
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "i", "0.01", "100"]),
        err(texts::ITEM_EXISTS)
    );
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(&mut c3, &["BF.RESERVE", "i", "0.01", "100"]),
        err(texts::ITEM_EXISTS)
    );
    // the failed RESERVE did not touch the filter
    assert_eq!(run(&mut c, &["BF.EXISTS", "i", "x"]), int(1));
    assert_eq!(run(&mut c, &["BF.ADD", "i", "x"]), int(0));
}

#[test]
fn nonscaling_capacity_one() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "one", "0.000001", "1", "NONSCALING"]
        ),
        ok()
    );
    assert_eq!(run(&mut c, &["BF.ADD", "one", "first"]), int(1));
    assert_eq!(run(&mut c, &["BF.ADD", "one", "second"]), err(texts::FULL));
    assert_eq!(run(&mut c, &["BF.ADD", "one", "first"]), int(0));
}

#[test]
fn reserve_unknown_trailing_argument_is_an_error() {
    // rsbloom: RedisBloom ignores unknown trailing arguments; rsbloom refuses them.
    let s = Server::new();
    for resp3 in [false, true] {
        let mut c = if resp3 { s.conn_resp3() } else { s.conn() };
        let cases: &[&[&str]] = &[
            &["BF.RESERVE", "k", "0.01", "100", "FOO"],
            &["BF.RESERVE", "k", "0.01", "100", "EXPANSION", "2", "FOO"],
            &["BF.RESERVE", "k", "0.01", "100", "NONSCALING", "FOO"],
            &["BF.RESERVE", "k", "0.01", "100", "FOO", "NONSCALING"],
            &["BF.RESERVE", "k", "0.01", "100", "NONSCALING", "NOSCALING"],
        ];
        for args in cases {
            let r = run(&mut c, args);
            assert!(
                r.is_err() && r.err_text().starts_with("ERR "),
                "{args:?}: expected an ERR reply, got {r:?}"
            );
            assert_eq!(
                key_type(&mut c, "k"),
                Reply::Status("none".into()),
                "{args:?}"
            );
        }
    }
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.RESERVE", "k", "0.01", "100"]), ok());
}

#[test]
fn reserve_over_memory_limit_is_refused() {
    let s = Server::new();
    let mut c = s.conn();
    // RedisBloom aborts the whole server on this one; rsbloom refuses it and names the limit
    for cap in [
        "1000000000000000000",
        "9999999999999",
        "9223372036854775807",
    ] {
        let r = run(&mut c, &["BF.RESERVE", "huge", "0.01", cap]);
        assert!(r.is_err(), "capacity {cap}: expected an error, got {r:?}");
        let text = r.err_text().to_string();
        assert!(text.starts_with("ERR "), "capacity {cap}: {text:?}");
        assert!(
            text.to_lowercase().contains("limit"),
            "capacity {cap}: error should mention the limit: {text:?}"
        );
        assert_eq!(run(&mut c, &["PING"]), Reply::Status("PONG".into()));
        assert_eq!(key_type(&mut c, "huge"), Reply::Status("none".into()));
    }
    let r = run(
        &mut c,
        &[
            "BF.RESERVE",
            "huge",
            "0.000000001",
            "1000000000000",
            "NONSCALING",
        ],
    );
    assert!(r.is_err() && r.err_text().starts_with("ERR "), "{r:?}");
    assert_eq!(run(&mut c, &["PING"]), Reply::Status("PONG".into()));
    assert_eq!(run(&mut c, &["DBSIZE"]), int(0));
}
