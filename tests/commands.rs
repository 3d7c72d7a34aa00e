//! Replies and errors of BF.RESERVE, BF.ADD, BF.MADD and BF.EXISTS, per
//! /work/shared/spec/bf-commands.md (checked against RedisBloom 2.8.2 where the spec follows it).

mod common;

use common::*;

const RANGE_ERR: &str = "ERR (0 < error rate range < 1) ";
const CAP_ERR: &str = "ERR (capacity should be larger than 0)";
const FULL_ERR: &str = "ERR non scaling filter is full";

fn madd_cmd(key: &str, its: &[String]) -> Vec<String> {
    let mut v = vec!["BF.MADD".to_string(), key.to_string()];
    v.extend(its.iter().cloned());
    v
}

fn key_type(con: &mut redis::Connection, key: &str) -> Reply {
    run(con, &["TYPE", key])
}

fn memory_usage(con: &mut redis::Connection, key: &str) -> i64 {
    match run(con, &["MEMORY", "USAGE", key]) {
        Reply::Int(n) => n,
        other => panic!("MEMORY USAGE {key}: {other:?}"),
    }
}

#[test]
fn err_text_reconstructs_server_lines() {
    let s = Server::new();
    let mut c = s.conn();
    // the helper used for `?`-style errors from the redis crate
    let e = redis::cmd("BF.RESERVE")
        .arg("k")
        .arg("abc")
        .arg("10")
        .query::<String>(&mut c)
        .unwrap_err();
    assert_eq!(err_text(&e), "ERR bad error rate");
    let e = redis::cmd("BF.RESERVE")
        .arg("k")
        .arg("0")
        .arg("10")
        .query::<String>(&mut c)
        .unwrap_err();
    assert_eq!(err_text(&e), RANGE_ERR);
    let e = redis::cmd("BF.RESERVE")
        .arg("k")
        .arg("0.01")
        .arg("10")
        .arg("NONSCALING")
        .arg("EXPANSION")
        .arg("2")
        .query::<String>(&mut c)
        .unwrap_err();
    assert_eq!(err_text(&e), "Nonscaling filters cannot expand");
    redis::cmd("SET")
        .arg("s")
        .arg("v")
        .query::<()>(&mut c)
        .unwrap();
    let e = redis::cmd("BF.ADD")
        .arg("s")
        .arg("x")
        .query::<i64>(&mut c)
        .unwrap_err();
    assert_eq!(err_text(&e), WRONGTYPE);
}

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
fn arity_errors() {
    let s = Server::new();
    let cases: &[(&[&str], &str)] = &[
        (&["BF.RESERVE"], "bf.reserve"),
        (&["BF.RESERVE", "k"], "bf.reserve"),
        (&["BF.RESERVE", "k", "0.01"], "bf.reserve"),
        (
            &["BF.RESERVE", "k", "0.01", "10", "a", "b", "c", "d"],
            "bf.reserve",
        ),
        (&["BF.ADD"], "bf.add"),
        (&["BF.ADD", "k"], "bf.add"),
        (&["BF.ADD", "k", "a", "b"], "bf.add"),
        (&["BF.MADD"], "bf.madd"),
        (&["BF.MADD", "k"], "bf.madd"),
        (&["BF.EXISTS"], "bf.exists"),
        (&["BF.EXISTS", "k"], "bf.exists"),
        (&["BF.EXISTS", "k", "a", "b"], "bf.exists"),
        (&["bf.add", "k"], "bf.add"),
        (&["Bf.MaDd", "k"], "bf.madd"),
    ];
    for resp3 in [false, true] {
        let mut c = if resp3 { s.conn_resp3() } else { s.conn() };
        for (args, name) in cases {
            assert_eq!(
                run(&mut c, args),
                err(&format!(
                    "ERR wrong number of arguments for '{name}' command"
                )),
                "{args:?} resp3={resp3}"
            );
        }
        // nothing was created by the failed calls
        assert_eq!(run(&mut c, &["DBSIZE"]), int(0));
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
                err("ERR bad error rate"),
                "rate {rate:?}"
            );
        }
        for rate in ["0", "1", "-1", "inf", "7.7", "-0.5", "1.0"] {
            assert_eq!(
                run(&mut c, &["BF.RESERVE", "k", rate, "100"]),
                err(RANGE_ERR),
                "rate {rate:?}"
            );
        }
        // the error rate is checked before the capacity
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "abc", "0"]),
            err("ERR bad error rate")
        );
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "0", "abc"]),
            err(RANGE_ERR)
        );
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "1", "10", "EXPANSION"]),
            err(RANGE_ERR)
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
                err("ERR bad capacity"),
                "capacity {cap:?}"
            );
        }
        for cap in ["0", "-5", "-1"] {
            assert_eq!(
                run(&mut c, &["BF.RESERVE", "k", "0.01", cap]),
                err(CAP_ERR),
                "capacity {cap:?}"
            );
        }
        // the capacity is checked before the options
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "0.01", "abc", "EXPANSION"]),
            err("ERR bad capacity")
        );
        assert_eq!(
            run(&mut c, &["BF.RESERVE", "k", "0.01", "0", "EXPANSION"]),
            err(CAP_ERR)
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
            err(CAP_ERR)
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
            (&["EXPANSION"], "ERR no expansion"),
            (&["expansion"], "ERR no expansion"),
            (&["EXPANSION", "x"], "ERR bad expansion"),
            (&["EXPANSION", "1.5"], "ERR bad expansion"),
            (&["EXPANSION", ""], "ERR bad expansion"),
            (
                &["EXPANSION", "0"],
                "ERR expansion should be greater or equal to 1",
            ),
            (
                &["Expansion", "0"],
                "ERR expansion should be greater or equal to 1",
            ),
            (
                &["EXPANSION", "-1"],
                "ERR expansion should be greater or equal to 1",
            ),
            (
                &["EXPANSION", "2", "NONSCALING"],
                "Nonscaling filters cannot expand",
            ),
            (
                &["NONSCALING", "EXPANSION", "2"],
                "Nonscaling filters cannot expand",
            ),
            (
                &["nonscaling", "expansion", "1"],
                "Nonscaling filters cannot expand",
            ),
            // 2.x checks NONSCALING before parsing the expansion value
            (
                &["NONSCALING", "EXPANSION", "x"],
                "Nonscaling filters cannot expand",
            ),
            (
                &["NONSCALING", "EXPANSION", "0"],
                "Nonscaling filters cannot expand",
            ),
            // ... but a missing value comes first
            (&["NONSCALING", "EXPANSION"], "ERR no expansion"),
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
        err("ERR item exists")
    );
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "r", "0.1", "5", "NONSCALING"]),
        err("ERR item exists")
    );
    // argument errors come before the key check
    assert_eq!(run(&mut c, &["BF.RESERVE", "r", "0.01", "0"]), err(CAP_ERR));
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "r", "abc", "10"]),
        err("ERR bad error rate")
    );
    // implicitly created filters too
    assert_eq!(run(&mut c, &["BF.ADD", "i", "x"]), int(1));
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "i", "0.01", "100"]),
        err("ERR item exists")
    );
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(&mut c3, &["BF.RESERVE", "i", "0.01", "100"]),
        err("ERR item exists")
    );
    // the failed RESERVE did not touch the filter
    assert_eq!(run(&mut c, &["BF.EXISTS", "i", "x"]), int(1));
    assert_eq!(run(&mut c, &["BF.ADD", "i", "x"]), int(0));
}

#[test]
fn wrongtype_for_all_four_commands() {
    let s = Server::new();
    for resp3 in [false, true] {
        let mut c = if resp3 { s.conn_resp3() } else { s.conn() };
        assert_eq!(run(&mut c, &["SET", "str", "value"]), ok());
        let cases: &[&[&str]] = &[
            &["BF.RESERVE", "str", "0.01", "100"],
            &["BF.RESERVE", "str", "0.01", "100", "NONSCALING"],
            &["BF.ADD", "str", "x"],
            &["BF.MADD", "str", "x"],
            &["BF.MADD", "str", "x", "y", "z"],
            // rsbloom: EXISTS replies WRONGTYPE too (RedisBloom answers 0)
            &["BF.EXISTS", "str", "x"],
            &["BF.EXISTS", "str", "value"],
        ];
        for args in cases {
            assert_eq!(run(&mut c, args), err(WRONGTYPE), "{args:?} resp3={resp3}");
        }
        assert_eq!(run(&mut c, &["GET", "str"]), bulk("value"));
        assert_eq!(key_type(&mut c, "str"), Reply::Status("string".into()));
        // other types too
        assert_eq!(run(&mut c, &["RPUSH", "list", "a"]), int(1));
        assert_eq!(run(&mut c, &["BF.ADD", "list", "a"]), err(WRONGTYPE));
        assert_eq!(run(&mut c, &["BF.EXISTS", "list", "a"]), err(WRONGTYPE));
        assert_eq!(run(&mut c, &["DEL", "list"]), int(1));
    }
}

#[test]
fn nonscaling_filter_full() {
    let s = Server::new();
    let mut c = s.conn();
    // a tiny error rate so that no item here is a false positive
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "ns", "0.000001", "3", "NONSCALING"]),
        ok()
    );
    assert_eq!(
        run(&mut c, &["BF.MADD", "ns", "1", "2", "3"]),
        ints(&[1, 1, 1])
    );
    // "1" exists (0), "5" is refused, and the array stops there ("6" gets no element)
    assert_eq!(
        run(&mut c, &["BF.MADD", "ns", "1", "5", "6"]),
        arr(vec![int(0), err(FULL_ERR)])
    );
    assert_eq!(
        run(&mut c, &["BF.MADD", "ns", "4", "2", "3"]),
        arr(vec![err(FULL_ERR)])
    );
    assert_eq!(run(&mut c, &["BF.ADD", "ns", "7"]), err(FULL_ERR));
    assert_eq!(run(&mut c, &["BF.ADD", "ns", ""]), err(FULL_ERR));
    // existing items are still answered
    assert_eq!(run(&mut c, &["BF.ADD", "ns", "1"]), int(0));
    assert_eq!(
        run(&mut c, &["BF.MADD", "ns", "3", "2", "1"]),
        ints(&[0, 0, 0])
    );
    for i in ["1", "2", "3"] {
        assert_eq!(run(&mut c, &["BF.EXISTS", "ns", i]), int(1), "item {i}");
    }
    for i in ["4", "5", "6", "7", ""] {
        assert_eq!(run(&mut c, &["BF.EXISTS", "ns", i]), int(0), "item {i:?}");
    }
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "ns", "0.01", "3"]),
        err("ERR item exists")
    );

    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(&mut c3, &["BF.MADD", "ns", "1", "5", "6"]),
        arr(vec![boolean(false), err(FULL_ERR)])
    );
    assert_eq!(run(&mut c3, &["BF.ADD", "ns", "8"]), err(FULL_ERR));
    assert_eq!(run(&mut c3, &["BF.ADD", "ns", "2"]), boolean(false));
    assert_eq!(run(&mut c3, &["BF.EXISTS", "ns", "3"]), boolean(true));
    assert_eq!(run(&mut c3, &["BF.EXISTS", "ns", "8"]), boolean(false));

    // lower-case option, filled within one MADD
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "lc", "0.000001", "2", "nonscaling"]),
        ok()
    );
    assert_eq!(
        run(&mut c, &["BF.MADD", "lc", "a", "b", "c", "d"]),
        arr(vec![int(1), int(1), err(FULL_ERR)])
    );
    assert_eq!(run(&mut c, &["BF.MADD", "lc", "a", "b"]), ints(&[0, 0]));
    assert_eq!(run(&mut c, &["BF.EXISTS", "lc", "c"]), int(0));
    assert_eq!(run(&mut c, &["BF.EXISTS", "lc", "d"]), int(0));
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
    assert_eq!(run(&mut c, &["BF.ADD", "one", "second"]), err(FULL_ERR));
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

#[test]
fn implicit_creation_by_add_and_madd() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.ADD", "new", "x"]), int(1));
    assert_eq!(key_type(&mut c, "new"), Reply::Status("MBbloom--".into()));
    assert_eq!(run(&mut c, &["BF.ADD", "new", "x"]), int(0));
    assert_eq!(run(&mut c, &["BF.EXISTS", "new", "x"]), int(1));

    assert_eq!(
        run(&mut c, &["BF.MADD", "m", "a", "b", "a"]),
        ints(&[1, 1, 0])
    );
    assert_eq!(key_type(&mut c, "m"), Reply::Status("MBbloom--".into()));
    assert_eq!(run(&mut c, &["BF.MADD", "m", "b", "a"]), ints(&[0, 0]));

    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c3, &["BF.ADD", "new3", "x"]), boolean(true));
    assert_eq!(run(&mut c3, &["BF.ADD", "new3", "x"]), boolean(false));
    assert_eq!(
        run(&mut c3, &["BF.MADD", "m3", "a", "b", "a"]),
        bools(&[true, true, false])
    );
    assert_eq!(run(&mut c3, &["BF.EXISTS", "m3", "b"]), boolean(true));
    assert_eq!(
        run(&mut c3, &["BF.RESERVE", "m3", "0.01", "10"]),
        err("ERR item exists")
    );
}

#[test]
fn implicit_filters_use_the_defaults_and_scale() {
    let s = Server::new();
    let mut c = s.conn();
    // defaults are 0.01 / 100 / expansion 2: an implicit filter has the size of a reserved one
    assert_eq!(run(&mut c, &["BF.ADD", "k1", "x"]), int(1));
    assert_eq!(run(&mut c, &["BF.RESERVE", "k2", "0.01", "100"]), ok());
    assert_eq!(run(&mut c, &["BF.RESERVE", "k3", "0.001", "100"]), ok());
    assert_eq!(run(&mut c, &["BF.RESERVE", "k4", "0.01", "1000"]), ok());
    let m1 = memory_usage(&mut c, "k1");
    assert_eq!(m1, memory_usage(&mut c, "k2"));
    assert!(m1 < memory_usage(&mut c, "k3"));
    assert!(m1 < memory_usage(&mut c, "k4"));
    // it is a scaling filter: 1000 items go in without errors and are all found
    let its = items("item-", 1000);
    let r = run(&mut c, &madd_cmd("k1", &its));
    let Reply::Arr(v) = r else {
        panic!("MADD: {r:?}")
    };
    assert_eq!(v.len(), 1000);
    assert!(v.iter().all(|x| *x == int(0) || *x == int(1)), "{v:?}");
    let added = v.iter().filter(|x| **x == int(1)).count();
    assert!(
        added >= 970,
        "only {added} of 1000 distinct items answered 1"
    );
    assert!(exists_all(&mut c, "k1", &its).iter().all(|x| *x == int(1)));
    // k1 and k2 grew the same links
    let r2 = run(&mut c, &madd_cmd("k2", &its));
    assert!(matches!(r2, Reply::Arr(ref v) if v.len() == 1000), "{r2:?}");
    assert!(matches!(
        run(&mut c, &["BF.ADD", "k2", "x"]),
        Reply::Int(0 | 1)
    ));
    assert_eq!(memory_usage(&mut c, "k1"), memory_usage(&mut c, "k2"));
    assert!(memory_usage(&mut c, "k1") > m1);
}

#[test]
fn module_load_arguments_change_the_defaults() {
    let s = Server::with_args(&["INITIAL_SIZE", "1000", "ERROR_RATE", "0.001"], &[]);
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.ADD", "k1", "x"]), int(1));
    assert_eq!(run(&mut c, &["BF.RESERVE", "k2", "0.001", "1000"]), ok());
    assert_eq!(run(&mut c, &["BF.RESERVE", "k3", "0.01", "100"]), ok());
    assert_eq!(memory_usage(&mut c, "k1"), memory_usage(&mut c, "k2"));
    assert!(memory_usage(&mut c, "k1") > memory_usage(&mut c, "k3"));
    // 1000 items fit in the first link
    let its = items("i", 999);
    run(&mut c, &madd_cmd("k1", &its));
    assert_eq!(memory_usage(&mut c, "k1"), memory_usage(&mut c, "k2"));
}

#[test]
fn exists_on_missing_key() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.EXISTS", "missing", "x"]), int(0));
    assert_eq!(run(&mut c, &["BF.EXISTS", "missing", ""]), int(0));
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c3, &["BF.EXISTS", "missing", "x"]), boolean(false));
    // a read does not create the key
    assert_eq!(key_type(&mut c, "missing"), Reply::Status("none".into()));
    assert_eq!(run(&mut c, &["DBSIZE"]), int(0));
}

#[test]
fn empty_and_binary_items() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.RESERVE", "b", "0.000001", "100"]), ok());
    assert_eq!(run(&mut c, &["BF.ADD", "b", ""]), int(1));
    assert_eq!(run(&mut c, &["BF.ADD", "b", ""]), int(0));
    assert_eq!(run(&mut c, &["BF.EXISTS", "b", ""]), int(1));

    let nul: &[u8] = b"a\0b";
    let args: Vec<&[u8]> = vec![b"BF.ADD", b"b", nul];
    assert_eq!(run(&mut c, &args), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", nul]), int(1));
    // the bytes after the NUL matter
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"a"]), int(0));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"a\0c"]), int(0));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"a\0b\0"]), int(0));
    let high: &[u8] = &[0xff, 0x00, 0x80, 0xfe, 0x00];
    assert_eq!(
        run(&mut c, &[&b"BF.MADD"[..], b"b", high, b"\0"]),
        ints(&[1, 1])
    );
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", high]), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"\0"]), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"\0\0"]), int(0));
    // a long item
    let long = vec![b'z'; 100_000];
    assert_eq!(run(&mut c, &[&b"BF.ADD"[..], b"b", &long]), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", &long]), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", &long[1..]]), int(0));
}

#[test]
fn scaling_keeps_every_item() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.RESERVE", "sc", "0.01", "100"]), ok());
    let before = memory_usage(&mut c, "sc");
    let its = items("sc-item-", 497);
    let r = run(&mut c, &madd_cmd("sc", &its));
    let Reply::Arr(v) = r else {
        panic!("MADD: {r:?}")
    };
    assert_eq!(v.len(), 497);
    assert!(v.iter().all(|x| *x == int(0) || *x == int(1)), "{v:?}");
    let added = v.iter().filter(|x| **x == int(1)).count();
    assert!(
        added >= 480,
        "only {added} of 497 distinct items answered 1"
    );
    let ex = exists_all(&mut c, "sc", &its);
    assert!(
        ex.iter().all(|x| *x == int(1)),
        "an added item reads absent"
    );
    // the chain grew (3 links: 100 + 200 + 400)
    assert!(memory_usage(&mut c, "sc") > 3 * before / 2);
    // the compound false-positive rate stays near the requested 1%
    let absent = items("absent-", 10_000);
    let fp = exists_all(&mut c, "sc", &absent)
        .iter()
        .filter(|x| **x == int(1))
        .count();
    assert!(fp < 200, "{fp} false positives in 10000 (requested 1%)");
    // adding them again changes nothing
    let again = run(&mut c, &madd_cmd("sc", &its));
    assert_eq!(again, Reply::Arr(vec![int(0); 497]));
}

#[test]
fn nonscaling_false_positive_rate() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "f", "0.01", "1000", "NONSCALING"]),
        ok()
    );
    let its = items("x", 1000);
    let r = run(&mut c, &madd_cmd("f", &its));
    let Reply::Arr(v) = r else {
        panic!("MADD: {r:?}")
    };
    assert_eq!(v.len(), 1000);
    assert!(v.iter().all(|x| *x == int(0) || *x == int(1)), "{v:?}");
    assert!(exists_all(&mut c, "f", &its).iter().all(|x| *x == int(1)));
    let absent = items("y", 10_000);
    let fp = exists_all(&mut c, "f", &absent)
        .iter()
        .filter(|x| **x == int(1))
        .count();
    assert!(fp < 200, "{fp} false positives in 10000 (requested 1%)");
}

#[test]
fn module_list_shows_bf_20802() {
    let s = Server::new();
    let mut c = s.conn();
    let r = run(&mut c, &["MODULE", "LIST"]);
    let Reply::Arr(mods) = r else {
        panic!("MODULE LIST: {r:?}")
    };
    assert_eq!(mods.len(), 1, "{mods:?}");
    let Reply::Arr(ref fields) = mods[0] else {
        panic!("{mods:?}")
    };
    assert_eq!(fields[0], bulk("name"));
    assert_eq!(fields[1], bulk("bf"));
    assert_eq!(fields[2], bulk("ver"));
    assert_eq!(fields[3], int(20802));
}

#[test]
fn chain_refuses_a_link_it_cannot_honour() {
    // rsbloom: RedisBloom halves the error rate down to zero here and then answers 1 for every
    // absent item; rsbloom refuses the add that would need such a link and stays correct.
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(
            &mut c,
            // A fixed seed makes the run deterministic: with a random one, an add may be a
            // false positive (about 0.1% each on these degenerate links) and answer 0.
            &[
                "BF.RESERVE",
                "z",
                "1e-300",
                "1",
                "EXPANSION",
                "1",
                "SEED",
                "1"
            ]
        ),
        ok()
    );
    let its = items("", 130);
    let replies = pipeline(
        &mut c,
        &its.iter()
            .map(|i| vec!["BF.ADD", "z", i.as_str()])
            .collect::<Vec<_>>(),
    );
    let first_err = replies
        .iter()
        .position(|r| r.is_err())
        .expect("some add must be refused before the error rate underflows");
    assert!(
        first_err >= 10,
        "refused too early, at add {first_err}: {:?}",
        replies[first_err]
    );
    for (i, r) in replies.iter().enumerate() {
        if i < first_err {
            assert_eq!(*r, int(1), "add {i}");
        } else {
            assert!(
                r.is_err() && r.err_text().starts_with("ERR "),
                "add {i} after the first refusal: {r:?}"
            );
        }
    }
    let ex = exists_all(&mut c, "z", &its[..first_err]);
    assert!(
        ex.iter().all(|r| *r == int(1)),
        "an added item reads absent"
    );
    // RedisBloom answers 1 for ~50% of absent items here (and for all, once a zero-error link
    // exists). The nominal 1e-300 is not reachable with double hashing on 1472-bit links
    // (probe sequences cycle when gcd(step, bits) > 1); rsbloom measured ~0.13%.
    let absent = items("absent-", 20_000);
    let fp = exists_all(&mut c, "z", &absent)
        .iter()
        .filter(|r| **r == int(1))
        .count();
    assert!(
        fp < 200,
        "{fp} false positives in 20000 at an error rate of 1e-300"
    );
    // refused items were not added
    let refused = exists_all(&mut c, "z", &its[first_err..]);
    assert!(
        refused.iter().all(|r| *r == int(0)),
        "a refused item reads present"
    );
    assert_eq!(run(&mut c, &["BF.ADD", "z", "0"]), int(0));
    assert_eq!(run(&mut c, &["PING"]), Reply::Status("PONG".into()));
}

#[test]
fn per_filter_memory_limit_module_argument() {
    let s = Server::with_args(&["MAX_FILTER_BYTES", "100000"], &[]);
    let mut c = s.conn();
    // ~1.38 MB > 100000 bytes
    let r = run(&mut c, &["BF.RESERVE", "big", "0.01", "1000000"]);
    assert!(r.is_err(), "{r:?}");
    let text = r.err_text();
    assert!(
        text.starts_with("ERR ") && text.contains("limit") && text.contains("100000"),
        "{text:?}"
    );
    assert_eq!(run(&mut c, &["TYPE", "big"]), Reply::Status("none".into()));
    // ~13.8 KB is fine, and the chain grows until a link would pass the limit
    assert_eq!(run(&mut c, &["BF.RESERVE", "g", "0.01", "10000"]), ok());
    let its = items("g-", 60_000);
    let replies = pipeline(
        &mut c,
        &its.iter()
            .map(|i| vec!["BF.ADD", "g", i.as_str()])
            .collect::<Vec<_>>(),
    );
    let first_err = replies
        .iter()
        .position(|r| r.is_err())
        .expect("the chain must stop growing at the limit");
    assert!(first_err >= 9_500, "refused too early, at add {first_err}");
    let text = replies[first_err].err_text();
    assert!(
        text.starts_with("ERR ") && text.contains("limit"),
        "{text:?}"
    );
    assert!(replies[..first_err]
        .iter()
        .all(|r| *r == int(0) || *r == int(1)));
    let ex = exists_all(&mut c, "g", &its[..first_err]);
    assert!(
        ex.iter().all(|r| *r == int(1)),
        "an added item reads absent"
    );
    let m = memory_usage(&mut c, "g");
    assert!(m < 150_000, "MEMORY USAGE {m} with a 100000-byte limit");
}

#[test]
fn module_arguments_apply_to_implicit_creation() {
    // EXPANSION 0 makes implicitly created filters NONSCALING
    let s = Server::with_args(
        &[
            "INITIAL_SIZE",
            "3",
            "ERROR_RATE",
            "0.000001",
            "EXPANSION",
            "0",
        ],
        &[],
    );
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.MADD", "k", "a", "b", "c", "d", "e"]),
        arr(vec![int(1), int(1), int(1), err(FULL_ERR)])
    );
    assert_eq!(run(&mut c, &["BF.ADD", "k2", "a"]), int(1));
    assert_eq!(run(&mut c, &["BF.MADD", "k2", "b", "c"]), ints(&[1, 1]));
    assert_eq!(run(&mut c, &["BF.ADD", "k2", "d"]), err(FULL_ERR));
    // BF.RESERVE without EXPANSION takes the default expansion too (as RedisBloom 8.x does
    // with bf-expansion-factor 0) ...
    assert_eq!(run(&mut c, &["BF.RESERVE", "r", "0.000001", "3"]), ok());
    assert_eq!(
        run(&mut c, &["BF.MADD", "r", "a", "b", "c", "d", "e"]),
        arr(vec![int(1), int(1), int(1), err(FULL_ERR)])
    );
    // ... but an explicit EXPANSION still scales (unlike 8.x, which refuses it)
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "r2", "0.000001", "3", "EXPANSION", "2"]
        ),
        ok()
    );
    assert_eq!(
        run(&mut c, &["BF.MADD", "r2", "a", "b", "c", "d", "e"]),
        ints(&[1, 1, 1, 1, 1])
    );
    drop(c);
    drop(s);

    // a default that does not fit under the limit refuses implicit creation
    let s = Server::with_args(
        &["INITIAL_SIZE", "1000000", "MAX_FILTER_BYTES", "100000"],
        &[],
    );
    let mut c = s.conn();
    let r = run(&mut c, &["BF.ADD", "k", "a"]);
    assert!(
        r.is_err() && r.err_text().starts_with("ERR ") && r.err_text().contains("limit"),
        "{r:?}"
    );
    let r = run(&mut c, &["BF.MADD", "k", "a", "b"]);
    assert!(r.is_err() && r.err_text().contains("limit"), "{r:?}");
    assert_eq!(run(&mut c, &["DBSIZE"]), int(0));
}

#[test]
fn bad_module_arguments_fail_the_load() {
    for args in [
        &["ERROR_RATE", "0"][..],
        &["ERROR_RATE", "1"][..],
        &["ERROR_RATE", "abc"][..],
        &["INITIAL_SIZE", "0"][..],
        &["INITIAL_SIZE", "1.5"][..],
        &["NO_SUCH_OPTION", "1"][..],
        &["ERROR_RATE"][..],
    ] {
        match Server::try_with_args(args, &[]) {
            Ok(_) => panic!("module loaded with bad arguments {args:?}"),
            Err(log) => assert!(log.contains("exited"), "{args:?}: {log}"),
        }
    }
    // lower-case names are accepted (case-insensitive)
    let s = Server::with_args(&["initial_size", "1000"], &[]);
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.ADD", "k1", "x"]), int(1));
    assert_eq!(run(&mut c, &["BF.RESERVE", "k2", "0.01", "1000"]), ok());
    assert_eq!(memory_usage(&mut c, "k1"), memory_usage(&mut c, "k2"));
}
