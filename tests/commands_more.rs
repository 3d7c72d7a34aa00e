//! Replies and errors of BF.MEXISTS, BF.INSERT, BF.INFO, BF.CARD and BF.DEBUG in RESP2 and
//! RESP3, per /work/shared/spec/bf-commands.md (checked against RedisBloom 2.8.2).

mod common;

use std::time::Duration;

use common::*;

const FULL_ERR: &str = "ERR non scaling filter is full";
const NOT_FOUND: &str = "ERR not found";

fn arity(cmd: &str) -> Reply {
    err(&format!(
        "ERR wrong number of arguments for '{cmd}' command"
    ))
}

fn status(s: &str) -> Reply {
    Reply::Status(s.to_string())
}

/// `[cmd, key, items...]` as owned strings.
fn cmd_with(cmd: &[&str], items: &[String]) -> Vec<String> {
    let mut v: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
    v.extend(items.iter().cloned());
    v
}

/// BF.INFO's five pairs in RESP2 form (a flat array, simple-string names).
fn info2(capacity: i64, size: i64, filters: i64, inserted: i64, expansion: Option<i64>) -> Reply {
    arr(vec![
        status("Capacity"),
        int(capacity),
        status("Size"),
        int(size),
        status("Number of filters"),
        int(filters),
        status("Number of items inserted"),
        int(inserted),
        status("Expansion rate"),
        expansion.map_or(Reply::Nil, int),
    ])
}

/// The same in RESP3 form (a map).
fn info3(capacity: i64, size: i64, filters: i64, inserted: i64, expansion: Option<i64>) -> Reply {
    let Reply::Arr(flat) = info2(capacity, size, filters, inserted, expansion) else {
        unreachable!()
    };
    Reply::Map(
        flat.chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect(),
    )
}

fn info_size(con: &mut redis::Connection, key: &str) -> i64 {
    match run(con, &["BF.INFO", key, "SIZE"]) {
        Reply::Arr(v) if v.len() == 1 => match v[0] {
            Reply::Int(n) => n,
            ref other => panic!("BF.INFO {key} SIZE: {other:?}"),
        },
        other => panic!("BF.INFO {key} SIZE: {other:?}"),
    }
}

/// BF.DEBUG's lines as strings.
fn debug_lines(con: &mut redis::Connection, key: &str) -> Vec<String> {
    match run(con, &["BF.DEBUG", key]) {
        Reply::Arr(v) => v
            .into_iter()
            .map(|r| match r {
                Reply::Bulk(b) => String::from_utf8(b).unwrap(),
                other => panic!("BF.DEBUG {key} element {other:?}"),
            })
            .collect(),
        other => panic!("BF.DEBUG {key}: {other:?}"),
    }
}

/// One parsed BF.DEBUG link line.
#[derive(Debug)]
struct LinkLine {
    bytes: u64,
    bits: u64,
    hashes: u64,
    capacity: u64,
    size: u64,
    ratio: String,
}

fn parse_link(line: &str) -> LinkLine {
    let fields: Vec<(&str, &str)> = line
        .split(' ')
        .map(|f| {
            f.split_once(':')
                .unwrap_or_else(|| panic!("field {f:?} in {line:?}"))
        })
        .collect();
    let names: Vec<&str> = fields.iter().map(|f| f.0).collect();
    assert_eq!(
        names,
        [
            "bytes",
            "bits",
            "hashes",
            "hashwidth",
            "capacity",
            "size",
            "ratio"
        ],
        "{line}"
    );
    assert_eq!(fields[3].1, "64", "{line}");
    let n = |i: usize| -> u64 { fields[i].1.parse().unwrap_or_else(|_| panic!("{line}")) };
    LinkLine {
        bytes: n(0),
        bits: n(1),
        hashes: n(2),
        capacity: n(4),
        size: n(5),
        ratio: fields[6].1.to_string(),
    }
}

// ---------------------------------------------------------------- BF.MEXISTS

#[test]
fn mexists_resp2_and_resp3() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.MADD", "k", "a", "b"]), ints(&[1, 1]));
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "k", "a", "b", "zz"]),
        ints(&[1, 1, 0])
    );
    assert_eq!(run(&mut c, &["BF.MEXISTS", "k", "zz"]), ints(&[0]));
    assert_eq!(
        run(&mut c3, &["BF.MEXISTS", "k", "a", "zz", "b"]),
        bools(&[true, false, true])
    );
    // missing key: all false
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "missing", "a", "b"]),
        ints(&[0, 0])
    );
    assert_eq!(
        run(&mut c3, &["BF.MEXISTS", "missing", "a"]),
        bools(&[false])
    );
    // it reads without creating
    assert_eq!(run(&mut c, &["EXISTS", "missing"]), int(0));
    // BF.EXISTS agrees item by item
    for (item, want) in [("a", true), ("zz", false)] {
        assert_eq!(run(&mut c3, &["BF.EXISTS", "k", item]), boolean(want));
    }
}

#[test]
fn mexists_wrongtype_and_arity() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    // rsbloom: WRONGTYPE (RedisBloom answers 0s)
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "str", "a", "b"]),
        err(WRONGTYPE)
    );
    assert_eq!(run(&mut c, &["BF.MEXISTS", "k"]), arity("bf.mexists"));
    assert_eq!(run(&mut c, &["BF.MEXISTS"]), arity("bf.mexists"));
}

// ---------------------------------------------------------------- BF.INSERT

#[test]
fn insert_creates_with_defaults_and_replies_like_madd() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(&mut c, &["BF.INSERT", "k", "ITEMS", "a", "b", "a"]),
        ints(&[1, 1, 0])
    );
    assert_eq!(
        run(&mut c3, &["BF.INSERT", "k", "ITEMS", "a", "c"]),
        bools(&[false, true])
    );
    assert_eq!(run(&mut c, &["TYPE", "k"]), status("MBbloom--"));
    let size = info_size(&mut c, "k");
    assert_eq!(
        run(&mut c, &["BF.INFO", "k"]),
        info2(100, size, 1, 3, Some(2))
    );
    assert_eq!(parse_link(&debug_lines(&mut c, "k")[1]).ratio, "0.005");
    // ITEMS takes every argument after it, option names included
    assert_eq!(
        run(&mut c, &["BF.INSERT", "j", "ITEMS", "x", "ERROR", "0.5"]),
        ints(&[1, 1, 1])
    );
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "j", "x", "ERROR", "0.5"]),
        ints(&[1, 1, 1])
    );
    assert_eq!(run(&mut c, &["BF.CARD", "j"]), int(3));
    // empty and binary items
    assert_eq!(
        run(&mut c, &["BF.INSERT", "b", "ITEMS", "", "\u{0}\u{ff}"]),
        ints(&[1, 1])
    );
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "b", "", "\u{0}\u{ff}"]),
        ints(&[1, 1])
    );
}

#[test]
fn insert_options_apply_when_creating() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "k",
                "CAPACITY",
                "10",
                "ERROR",
                "0.5",
                "EXPANSION",
                "3",
                "ITEMS",
                "a",
                "b"
            ]
        ),
        ints(&[1, 1])
    );
    let size = info_size(&mut c, "k");
    assert_eq!(
        run(&mut c, &["BF.INFO", "k"]),
        info2(10, size, 1, 2, Some(3))
    );
    assert_eq!(
        run(&mut c3, &["BF.INFO", "k"]),
        info3(10, size, 1, 2, Some(3))
    );
    let lines = debug_lines(&mut c, "k");
    assert_eq!(lines[0], "size:2");
    let l = parse_link(&lines[1]);
    assert_eq!((l.capacity, l.size, l.ratio.as_str()), (10, 2, "0.25"));

    // options are lower-case too, and ignored for an existing key
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "k",
                "capacity",
                "999",
                "error",
                "0.001",
                "ITEMS",
                "c"
            ]
        ),
        ints(&[1])
    );
    assert_eq!(
        run(&mut c, &["BF.INFO", "k"]),
        info2(10, size, 1, 3, Some(3))
    );

    // the scaling parameters take effect: capacity 10, expansion 3 -> links of 10 and 30
    let its = items("grow", 25);
    let r = run(&mut c, &cmd_with(&["BF.INSERT", "k", "ITEMS"], &its));
    assert!(
        matches!(r, Reply::Arr(ref v) if v.len() == 25 && !v.iter().any(Reply::is_err)),
        "{r:?}"
    );
    let lines = debug_lines(&mut c, "k");
    let caps: Vec<u64> = lines[1..].iter().map(|l| parse_link(l).capacity).collect();
    assert_eq!(caps, [10, 30]);
    assert_eq!(parse_link(&lines[2]).ratio, "0.125");
}

#[test]
fn insert_options_by_first_letters() {
    let s = Server::new();
    let mut c = s.conn();
    // NONSCALING and its abbreviations (anything starting with n whose third letter is not c)
    for (key, token) in [
        ("n1", "NONSCALING"),
        ("n2", "N"),
        ("n3", "nx"),
        ("n4", "NO"),
    ] {
        assert_eq!(
            run(&mut c, &["BF.INSERT", key, token, "ITEMS", "a"]),
            ints(&[1]),
            "{token}"
        );
        let size = info_size(&mut c, key);
        assert_eq!(
            run(&mut c, &["BF.INFO", key]),
            info2(100, size, 1, 1, None),
            "{token}"
        );
    }
    // E… is EXPANSION unless the second letter is r (ERROR); C… is CAPACITY
    assert_eq!(
        run(
            &mut c,
            &["BF.INSERT", "e", "E", "5", "C", "7", "ITEMS", "a"]
        ),
        ints(&[1])
    );
    let size = info_size(&mut c, "e");
    assert_eq!(
        run(&mut c, &["BF.INFO", "e"]),
        info2(7, size, 1, 1, Some(5))
    );
    assert_eq!(
        run(&mut c, &["BF.INSERT", "e2", "ETA", "4", "ITEMS", "a"]),
        ints(&[1])
    );
    assert_eq!(
        run(&mut c, &["BF.INFO", "e2", "EXPANSION"]),
        arr(vec![int(4)])
    );
    assert_eq!(
        run(&mut c, &["BF.INSERT", "r", "Er", "0.2", "ITEMS", "a"]),
        ints(&[1])
    );
    assert_eq!(parse_link(&debug_lines(&mut c, "r")[1]).ratio, "0.1");
    assert_eq!(
        run(&mut c, &["BF.INSERT", "r2", "ETA", "0.2", "ITEMS", "a"]).err_text(),
        "Bad expansion"
    );
    // NOCREATE is n… with a third letter c
    assert_eq!(
        run(&mut c, &["BF.INSERT", "nc", "NOC", "ITEMS", "a"]),
        err(NOT_FOUND)
    );
    assert_eq!(
        run(&mut c, &["BF.INSERT", "nc", "nocreate", "ITEMS", "a"]),
        err(NOT_FOUND)
    );
    // a later value wins
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "twice",
                "CAPACITY",
                "5",
                "CAPACITY",
                "6",
                "ITEMS",
                "a"
            ]
        ),
        ints(&[1])
    );
    assert_eq!(
        run(&mut c, &["BF.INFO", "twice", "CAPACITY"]),
        arr(vec![int(6)])
    );
    // NONSCALING together with EXPANSION is accepted; the filter does not scale
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "ne",
                "NONSCALING",
                "EXPANSION",
                "3",
                "CAPACITY",
                "2",
                "ITEMS",
                "a",
                "b",
                "c",
                "d"
            ]
        ),
        arr(vec![int(1), int(1), err(FULL_ERR)])
    );
    assert_eq!(
        run(&mut c, &["BF.INFO", "ne", "EXPANSION"]),
        arr(vec![Reply::Nil])
    );
    assert_eq!(
        run(&mut c, &["BF.INFO", "ne", "FILTERS"]),
        arr(vec![int(1)])
    );
}

#[test]
fn insert_nocreate() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.INSERT", "k", "NOCREATE", "ITEMS", "a"]),
        err(NOT_FOUND)
    );
    // the options are not checked against each other (RedisBloom never enforced it)
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "k",
                "CAP",
                "10",
                "ERR",
                "0.1",
                "EXP",
                "3",
                "NOC",
                "ITEMS",
                "a"
            ]
        ),
        err(NOT_FOUND)
    );
    assert_eq!(run(&mut c, &["EXISTS", "k"]), int(0));
    assert_eq!(run(&mut c, &["BF.ADD", "k", "a"]), int(1));
    assert_eq!(
        run(&mut c, &["BF.INSERT", "k", "NOCREATE", "ITEMS", "a", "b"]),
        ints(&[0, 1])
    );
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    assert_eq!(
        run(&mut c, &["BF.INSERT", "str", "NOCREATE", "ITEMS", "a"]),
        err(WRONGTYPE)
    );
    assert_eq!(
        run(&mut c, &["BF.INSERT", "str", "ITEMS", "a"]),
        err(WRONGTYPE)
    );
}

#[test]
fn insert_value_errors() {
    let s = Server::new();
    let mut c = s.conn();
    let cases: &[(&[&str], &str)] = &[
        (&["ERROR", "abc"], "Bad error rate"),
        (&["ERROR", "nan"], "Bad error rate"),
        (&["CAPACITY", "abc"], "Bad capacity"),
        (&["CAPACITY", "1.5"], "Bad capacity"),
        (&["EXPANSION", "abc"], "Bad expansion"),
        (&["EXPANSION", "1.5"], "Bad expansion"),
        // in range only after the scan
        (&["ERROR", "0"], "Bad argument received"),
        (&["ERROR", "1"], "Bad argument received"),
        (&["ERROR", "-0.1"], "Bad argument received"),
        (&["ERROR", "inf"], "Bad argument received"),
        (&["CAPACITY", "0"], "Bad argument received"),
        (&["CAPACITY", "-5"], "Bad argument received"),
        (&["EXPANSION", "0"], "Bad argument received"),
        (&["EXPANSION", "-1"], "Bad argument received"),
        (&["FOO"], "Unknown argument received"),
        (&[""], "Unknown argument received"),
        (&["X", "1"], "Unknown argument received"),
        // scan order: the first bad token decides
        (&["CAPACITY", "0", "FOO"], "Unknown argument received"),
        (&["CAPACITY", "abc", "FOO"], "Bad capacity"),
    ];
    for (opts, want) in cases {
        let mut args = vec!["BF.INSERT", "k"];
        args.extend_from_slice(opts);
        args.extend_from_slice(&["ITEMS", "a"]);
        assert_eq!(run(&mut c, &args), err(want), "{opts:?}");
    }
    // range errors come before the key is looked at
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    assert_eq!(
        run(&mut c, &["BF.INSERT", "str", "CAPACITY", "0", "ITEMS", "a"]),
        err("Bad argument received")
    );
    // a parse error is reported even when ITEMS has nothing after it
    assert_eq!(
        run(&mut c, &["BF.INSERT", "k", "CAPACITY", "abc", "ITEMS"]),
        err("Bad capacity")
    );
    assert_eq!(run(&mut c, &["EXISTS", "k"]), int(0));
    // errors in a RESP3 connection are the same lines
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(&mut c3, &["BF.INSERT", "k", "FOO", "ITEMS", "a"]),
        err("Unknown argument received")
    );
}

#[test]
fn insert_arity() {
    let s = Server::new();
    let mut c = s.conn();
    let a = arity("bf.insert");
    for args in [
        &["BF.INSERT"][..],
        &["BF.INSERT", "k"],
        &["BF.INSERT", "k", "ITEMS"],
        &["BF.INSERT", "k", "FOO"],
        &["BF.INSERT", "k", "CAPACITY", "10"],
        &["BF.INSERT", "k", "CAPACITY", "10", "NONSCALING"],
        &["BF.INSERT", "k", "CAPACITY", "0", "ITEMS"],
        &["BF.INSERT", "k", "NONSCALING", "CAPACITY"],
        &["BF.INSERT", "k", "NONSCALING", "ERROR"],
        &["BF.INSERT", "k", "NONSCALING", "EXPANSION"],
        &["BF.INSERT", "k", "NONSCALING", "E"],
    ] {
        assert_eq!(run(&mut c, args), a, "{args:?}");
    }
    assert_eq!(run(&mut c, &["EXISTS", "k"]), int(0));
}

#[test]
fn insert_into_full_nonscaling_filter_stops_the_array() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "ns",
                "CAPACITY",
                "3",
                "NONSCALING",
                "ITEMS",
                "1",
                "2",
                "3",
                "1",
                "4",
                "5"
            ]
        ),
        arr(vec![int(1), int(1), int(1), int(0), err(FULL_ERR)])
    );
    assert_eq!(
        run(&mut c3, &["BF.INSERT", "ns", "ITEMS", "2", "6", "7"]),
        arr(vec![boolean(false), err(FULL_ERR)])
    );
    assert_eq!(run(&mut c, &["BF.CARD", "ns"]), int(3));
}

#[test]
fn insert_notifies_and_replicates() {
    let p = Server::new();
    let mut pc = p.conn();
    let port = p.port.to_string();
    let r = Server::with_args(&[], &["--replicaof", "127.0.0.1", &port]);
    let mut rc = r.conn();
    let mut up = false;
    for _ in 0..100 {
        let info = String::from_utf8(
            redis::cmd("INFO")
                .arg("replication")
                .query::<Vec<u8>>(&mut rc)
                .unwrap(),
        )
        .unwrap();
        if info.contains("master_link_status:up") {
            up = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(up, "replica did not connect");

    assert_eq!(
        run(&mut pc, &["CONFIG", "SET", "notify-keyspace-events", "Ed"]),
        ok()
    );
    let mut sub = p.conn();
    sub.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut sub = sub.as_pubsub();
    sub.subscribe("__keyevent@0__:bf.insert").unwrap();

    let its = items("rep", 300);
    let mut args = cmd_with(
        &[
            "BF.INSERT",
            "k",
            "CAPACITY",
            "50",
            "ERROR",
            "0.02",
            "EXPANSION",
            "4",
            "ITEMS",
        ],
        &its,
    );
    let r1 = run(&mut pc, &args);
    assert!(matches!(r1, Reply::Arr(ref v) if v.len() == 300), "{r1:?}");
    let msg = sub.get_message().expect("a bf.insert notification");
    assert_eq!(msg.get_channel_name(), "__keyevent@0__:bf.insert");
    assert_eq!(msg.get_payload::<String>().unwrap(), "k");
    // an insert that adds nothing is replicated too (and notifies)
    args.truncate(9);
    args.push(its[0].clone());
    assert_eq!(run(&mut pc, &args), ints(&[0]));
    assert_eq!(
        sub.get_message().unwrap().get_payload::<String>().unwrap(),
        "k"
    );

    assert_eq!(raw(&mut pc, &["WAIT", "1", "5000"]), redis::Value::Int(1));
    assert_eq!(
        run(&mut rc, &["BF.INFO", "k"]),
        run(&mut pc, &["BF.INFO", "k"])
    );
    assert_eq!(debug_lines(&mut rc, "k"), debug_lines(&mut pc, "k"));
    let on_replica = run(&mut rc, &cmd_with(&["BF.MEXISTS", "k"], &its));
    assert_eq!(on_replica, ints(&vec![1; its.len()]));
}

// ---------------------------------------------------------------- BF.INFO

#[test]
fn info_full_reply_resp2_and_resp3() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.RESERVE", "bf", "0.001", "100"]), ok());
    let size = info_size(&mut c, "bf");
    assert!(size > 200 && size < 400, "Size {size}");
    assert_eq!(
        run(&mut c, &["BF.INFO", "bf"]),
        info2(100, size, 1, 0, Some(2))
    );
    assert_eq!(
        run(&mut c3, &["BF.INFO", "bf"]),
        info3(100, size, 1, 0, Some(2))
    );
    // Size is the filter's own figure: MEMORY USAGE adds the key's overhead on top
    match run(&mut c, &["MEMORY", "USAGE", "bf"]) {
        Reply::Int(m) => assert!(m >= size, "MEMORY USAGE {m} < Size {size}"),
        other => panic!("{other:?}"),
    }

    assert_eq!(
        run(&mut c, &["BF.RESERVE", "ns", "0.01", "10", "NONSCALING"]),
        ok()
    );
    assert_eq!(run(&mut c, &["BF.MADD", "ns", "a", "b"]), ints(&[1, 1]));
    let size = info_size(&mut c, "ns");
    assert_eq!(run(&mut c, &["BF.INFO", "ns"]), info2(10, size, 1, 2, None));
    assert_eq!(
        run(&mut c3, &["BF.INFO", "ns"]),
        info3(10, size, 1, 2, None)
    );

    // a scaled chain: capacities add up, one link more, Size grows
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "sc", "0.01", "10", "EXPANSION", "4"]
        ),
        ok()
    );
    let small = info_size(&mut c, "sc");
    let its = items("i", 30);
    run(&mut c, &cmd_with(&["BF.MADD", "sc"], &its));
    let card = match run(&mut c, &["BF.CARD", "sc"]) {
        Reply::Int(n) => n,
        other => panic!("{other:?}"),
    };
    let size = info_size(&mut c, "sc");
    assert!(size > small);
    assert_eq!(
        run(&mut c, &["BF.INFO", "sc"]),
        info2(50, size, 2, card, Some(4))
    );
}

#[test]
fn info_single_field() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "bf", "0.001", "100", "EXPANSION", "5"]
        ),
        ok()
    );
    assert_eq!(
        run(&mut c, &["BF.MADD", "bf", "a", "b", "c"]),
        ints(&[1, 1, 1])
    );
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "ns", "0.01", "10", "NONSCALING"]),
        ok()
    );
    let size = info_size(&mut c, "bf");
    let fields = [
        ("CAPACITY", "Capacity", int(100)),
        ("size", "Size", int(size)),
        ("Filters", "Number of filters", int(1)),
        ("ITEMS", "Number of items inserted", int(3)),
        ("expansion", "Expansion rate", int(5)),
    ];
    for (option, name, value) in fields {
        // RESP2: a one-element array holding only the value
        assert_eq!(
            run(&mut c, &["BF.INFO", "bf", option]),
            arr(vec![value.clone()]),
            "{option}"
        );
        // RESP3: a one-entry map
        assert_eq!(
            run(&mut c3, &["BF.INFO", "bf", option]),
            Reply::Map(vec![(status(name), value)]),
            "{option}"
        );
    }
    assert_eq!(
        run(&mut c, &["BF.INFO", "ns", "EXPANSION"]),
        arr(vec![Reply::Nil])
    );
    assert_eq!(
        run(&mut c3, &["BF.INFO", "ns", "EXPANSION"]),
        Reply::Map(vec![(status("Expansion rate"), Reply::Nil)])
    );
}

#[test]
fn info_errors() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.RESERVE", "bf", "0.01", "100"]), ok());
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    for con in [&mut c, &mut c3] {
        assert_eq!(run(con, &["BF.INFO", "missing"]), err(NOT_FOUND));
        assert_eq!(run(con, &["BF.INFO", "missing", "FOO"]), err(NOT_FOUND));
        assert_eq!(run(con, &["BF.INFO", "str"]), err(WRONGTYPE));
        assert_eq!(run(con, &["BF.INFO", "str", "FOO"]), err(WRONGTYPE));
        for bad in ["FOO", "CAP", "CAPACITYX", "", "Number of filters"] {
            assert_eq!(
                run(con, &["BF.INFO", "bf", bad]),
                err("Invalid information value"),
                "{bad:?}"
            );
        }
        assert_eq!(run(con, &["BF.INFO"]), arity("bf.info"));
        assert_eq!(
            run(con, &["BF.INFO", "bf", "CAPACITY", "SIZE"]),
            arity("bf.info")
        );
    }
}

// ---------------------------------------------------------------- BF.CARD

#[test]
fn card() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.CARD", "missing"]), int(0));
    assert_eq!(run(&mut c3, &["BF.CARD", "missing"]), int(0));
    assert_eq!(run(&mut c, &["EXISTS", "missing"]), int(0));
    assert_eq!(run(&mut c, &["BF.RESERVE", "bf", "0.01", "100"]), ok());
    assert_eq!(run(&mut c, &["BF.CARD", "bf"]), int(0));
    // only new items count
    assert_eq!(
        run(&mut c, &["BF.MADD", "bf", "a", "b", "a"]),
        ints(&[1, 1, 0])
    );
    assert_eq!(run(&mut c, &["BF.CARD", "bf"]), int(2));
    assert_eq!(run(&mut c3, &["BF.CARD", "bf"]), int(2));
    assert_eq!(run(&mut c, &["BF.INFO", "bf", "ITEMS"]), arr(vec![int(2)]));
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    assert_eq!(run(&mut c, &["BF.CARD", "str"]), err(WRONGTYPE));
    assert_eq!(run(&mut c, &["BF.CARD"]), arity("bf.card"));
    assert_eq!(run(&mut c, &["BF.CARD", "a", "b"]), arity("bf.card"));
}

// ---------------------------------------------------------------- BF.DEBUG

#[test]
fn debug_after_scaling() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.RESERVE", "sc", "0.01", "100"]), ok());
    let its = items("item", 497);
    run(&mut c, &cmd_with(&["BF.MADD", "sc"], &its));
    let lines = debug_lines(&mut c, "sc");
    assert_eq!(lines.len(), 4, "{lines:?}");
    let total: u64 = lines[0]
        .strip_prefix("size:")
        .expect("size:N first")
        .parse()
        .unwrap();
    assert_eq!(run(&mut c, &["BF.CARD", "sc"]), int(total as i64));
    assert!((490..=497).contains(&total), "{total}");
    let links: Vec<LinkLine> = lines[1..].iter().map(|l| parse_link(l)).collect();
    let caps: Vec<u64> = links.iter().map(|l| l.capacity).collect();
    let ratios: Vec<&str> = links.iter().map(|l| l.ratio.as_str()).collect();
    assert_eq!(caps, [100, 200, 400]);
    assert_eq!(ratios, ["0.005", "0.0025", "0.00125"]);
    assert_eq!((links[0].size, links[1].size), (100, 200));
    assert_eq!(links.iter().map(|l| l.size).sum::<u64>(), total);
    for l in &links {
        assert_eq!(l.bytes * 8, l.bits, "{l:?}");
        assert!(l.hashes >= 1 && l.bits >= 64, "{l:?}");
    }
    // the same bulk strings in RESP3
    let r3 = run(&mut c3, &["BF.DEBUG", "sc"]);
    assert_eq!(r3, arr(lines.iter().map(|l| bulk(l)).collect()));
}

#[test]
fn debug_ratio_formats_like_printf_g() {
    let s = Server::new();
    let mut c = s.conn();
    // 1e-4 halved per link: 5e-05, 2.5e-05, 1.25e-05 (scientific below 1e-4)
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "k", "0.0001", "1", "EXPANSION", "1"]
        ),
        ok()
    );
    let mut added = 0;
    let mut i = 0;
    while added < 3 {
        if run(&mut c, &["BF.ADD", "k", &format!("x{i}")]) == int(1) {
            added += 1;
        }
        i += 1;
    }
    let ratios: Vec<String> = debug_lines(&mut c, "k")[1..]
        .iter()
        .map(|l| parse_link(l).ratio)
        .collect();
    assert_eq!(ratios, ["5e-05", "2.5e-05", "1.25e-05"]);
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "big", "0.5", "1", "NONSCALING"]),
        ok()
    );
    assert_eq!(parse_link(&debug_lines(&mut c, "big")[1]).ratio, "0.5");
    assert_eq!(run(&mut c, &["BF.RESERVE", "tiny", "1e-300", "1"]), ok());
    assert_eq!(parse_link(&debug_lines(&mut c, "tiny")[1]).ratio, "5e-301");
    assert_eq!(debug_lines(&mut c, "tiny")[0], "size:0");
}

#[test]
fn debug_errors() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    for con in [&mut c, &mut c3] {
        assert_eq!(run(con, &["BF.DEBUG", "missing"]), err(NOT_FOUND));
        assert_eq!(run(con, &["BF.DEBUG", "str"]), err(WRONGTYPE));
        assert_eq!(run(con, &["BF.DEBUG"]), arity("bf.debug"));
        assert_eq!(run(con, &["BF.DEBUG", "a", "b"]), arity("bf.debug"));
    }
}

#[test]
fn command_flags() {
    let s = Server::new();
    let mut c = s.conn();
    for (name, flags) in [
        ("bf.mexists", &["readonly", "fast"][..]),
        ("bf.info", &["readonly", "fast"]),
        ("bf.card", &["readonly", "fast"]),
        ("bf.debug", &["readonly", "fast"]),
        ("bf.insert", &["write", "denyoom"]),
    ] {
        let info = run(&mut c, &["COMMAND", "INFO", name]);
        let Reply::Arr(outer) = info else {
            panic!("{info:?}")
        };
        let Reply::Arr(ref entry) = outer[0] else {
            panic!("{name}: {outer:?}")
        };
        assert_eq!(entry[0], bulk(name));
        let Reply::Arr(ref got) = entry[2] else {
            panic!("{entry:?}")
        };
        for f in flags {
            assert!(got.contains(&status(f)), "{name} lacks {f}: {got:?}");
        }
        assert_eq!(&entry[3..6], &[int(1), int(1), int(1)], "{name} key spec");
    }
}
