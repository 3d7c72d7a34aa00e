//! Every BF command's replies and errors, one module per command family as in `src/commands/bloom/`
//! (checked against RedisBloom 2.8.2 where the spec follows it), plus what spans them all:
//! arity, texts::WRONGTYPE, command flags, MODULE LIST.

#[path = "../common/mod.rs"]
mod common;

mod add;
mod debug;
mod exists;
mod info;
mod reserve;
mod scandump;

use common::*;

fn key_type(con: &mut redis::Connection, key: &str) -> Reply {
    run(con, &["TYPE", key])
}

fn madd_cmd(key: &str, its: &[String]) -> Vec<String> {
    let mut v = vec!["BF.MADD".to_string(), key.to_string()];
    v.extend(its.iter().cloned());
    v
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
    assert_eq!(err_text(&e), texts::BAD_ERROR_RATE);
    let e = redis::cmd("BF.RESERVE")
        .arg("k")
        .arg("0")
        .arg("10")
        .query::<String>(&mut c)
        .unwrap_err();
    assert_eq!(err_text(&e), texts::ERROR_RATE_RANGE);
    let e = redis::cmd("BF.RESERVE")
        .arg("k")
        .arg("0.01")
        .arg("10")
        .arg("NONSCALING")
        .arg("EXPANSION")
        .arg("2")
        .query::<String>(&mut c)
        .unwrap_err();
    assert_eq!(err_text(&e), texts::NONSCALING_EXPANSION);
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
    assert_eq!(err_text(&e), texts::WRONGTYPE);
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
            assert_eq!(
                run(&mut c, args),
                err(texts::WRONGTYPE),
                "{args:?} resp3={resp3}"
            );
        }
        assert_eq!(run(&mut c, &["GET", "str"]), bulk("value"));
        assert_eq!(key_type(&mut c, "str"), Reply::Status("string".into()));
        // other types too
        assert_eq!(run(&mut c, &["RPUSH", "list", "a"]), int(1));
        assert_eq!(run(&mut c, &["BF.ADD", "list", "a"]), err(texts::WRONGTYPE));
        assert_eq!(
            run(&mut c, &["BF.EXISTS", "list", "a"]),
            err(texts::WRONGTYPE)
        );
        assert_eq!(run(&mut c, &["DEL", "list"]), int(1));
    }
}

#[test]
fn module_list_shows_bf_20802() {
    let s = Server::new();
    let mut c = s.conn();
    let r = run(&mut c, &["MODULE", "LIST"]);
    let Reply::Arr(mods) = r else {
        panic!("MODULE LIST: {r:?}")
    };
    let mut names: Vec<String> = mods
        .iter()
        .map(|m| match m {
            Reply::Arr(fields) => match &fields[1] {
                Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect();
    names.sort();
    // Valkey 9 lists its built-in Lua scripting engine as a module, Redis 8 its built-in vector
    // sets (in no fixed order).
    let builtin: &[&str] = match flavor() {
        Flavor::Valkey91 => &["bf", "lua"],
        Flavor::Redis80 => &["bf", "vectorset"],
        _ => &["bf"],
    };
    assert_eq!(names, builtin, "{mods:?}");
    let Some(Reply::Arr(fields)) = mods
        .iter()
        .find(|m| matches!(m, Reply::Arr(f) if f[1] == bulk("bf")))
    else {
        panic!("{mods:?}")
    };
    assert_eq!(fields[0], bulk("name"));
    assert_eq!(fields[1], bulk("bf"));
    assert_eq!(fields[2], bulk("ver"));
    assert_eq!(fields[3], int(20802));
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
