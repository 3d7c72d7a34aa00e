//! ACLs: key patterns and command permissions apply to the BF commands, and COMMAND INFO shows
//! the flags, key positions and key specs ACL and cluster clients rely on.
//!
//! rsbloom declares each command's key spec (RedisModule_SetCommandInfo) as Redis declares its
//! analogous native commands: the readers of bits `RO ACCESS` (like GETBIT), the readers of
//! counts `RO` (like SCARD), the adds `RW INSERT` (like SADD, PFADD), LOADCHUNK `RW UPDATE`
//! (like SETRANGE). Read-only key permission (`%R~`) therefore allows the readers, and
//! write-only permission (`%W~`) the writers and the count readers, as for native commands.
//!
//! ACL categories differ by server (see `acl_categories_of_the_bf_commands`): Redis 7.0 puts
//! module commands in no category, so a read-only BF user there is `+@read` plus the BF readers
//! by name, which works on every server; Redis 7.4 and Valkey 9.1 put them in `@bloom` and
//! `@read` / `@write`. The NOPERM texts were reworded in Redis 7.2 (`common::noperm_command`).

mod common;

use common::*;

const READERS: [&str; 7] = [
    "bf.exists",
    "bf.bulkexists",
    "bf.mexists",
    "bf.info",
    "bf.card",
    "bf.scandump",
    "bf.debug",
];
const WRITERS: [&str; 7] = [
    "bf.reserve",
    "bf.bulkadd",
    "bf.add",
    "bf.madd",
    "bf.insert",
    "bf.loadchunk",
    "bf.load",
];

fn user_conn(server: &Server, user: &str) -> redis::Connection {
    let mut con = server.conn();
    assert_eq!(run(&mut con, &["AUTH", user, "pw"]), ok(), "AUTH {user}");
    con
}

/// One call of every BF command on `key` (`reader`: only the read-only ones).
fn calls(key: &str, header: &[u8]) -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let k = key.as_bytes().to_vec();
    let v = |s: &str| s.as_bytes().to_vec();
    vec![
        (
            "bf.reserve",
            vec![
                v("BF.RESERVE"),
                [&k[..], b":new"].concat(),
                v("0.01"),
                v("100"),
            ],
        ),
        ("bf.add", vec![v("BF.ADD"), k.clone(), v("a")]),
        ("bf.madd", vec![v("BF.MADD"), k.clone(), v("b"), v("c")]),
        ("bf.bulkadd", vec![v("BF.BULKADD"), k.clone(), v("e\nf\n")]),
        (
            "bf.insert",
            vec![v("BF.INSERT"), k.clone(), v("ITEMS"), v("d")],
        ),
        (
            "bf.loadchunk",
            vec![
                v("BF.LOADCHUNK"),
                [&k[..], b":copy"].concat(),
                v("1"),
                header.to_vec(),
            ],
        ),
        (
            "bf.load",
            vec![
                v("BF.LOAD"),
                [&k[..], b":loaded"].concat(),
                valkey_bloom_blob("bf:empty"),
            ],
        ),
        ("bf.exists", vec![v("BF.EXISTS"), k.clone(), v("x")]),
        (
            "bf.mexists",
            vec![v("BF.MEXISTS"), k.clone(), v("x"), v("y")],
        ),
        (
            "bf.bulkexists",
            vec![v("BF.BULKEXISTS"), k.clone(), v("x\ny")],
        ),
        ("bf.info", vec![v("BF.INFO"), k.clone()]),
        ("bf.card", vec![v("BF.CARD"), k.clone()]),
        ("bf.scandump", vec![v("BF.SCANDUMP"), k.clone(), v("0")]),
        ("bf.debug", vec![v("BF.DEBUG"), k.clone()]),
    ]
}

fn header_of(con: &mut redis::Connection, key: &str) -> Vec<u8> {
    match run(con, &["BF.SCANDUMP", key, "0"]) {
        Reply::Arr(v) => match &v[1] {
            Reply::Bulk(h) => h.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn key_patterns_confine_a_user_to_its_keys() {
    let server = Server::new();
    let mut admin = server.conn();
    for k in ["tenant1:f", "tenant2:f", "other"] {
        assert_eq!(run(&mut admin, &["BF.RESERVE", k, "0.01", "100"]), ok());
        assert_eq!(run(&mut admin, &["BF.ADD", k, "secret"]), int(1));
    }
    let header = header_of(&mut admin, "tenant1:f");
    assert_eq!(
        run(
            &mut admin,
            &["ACL", "SETUSER", "t1", "on", ">pw", "~tenant1:*", "+@all"]
        ),
        ok()
    );
    let mut t1 = user_conn(&server, "t1");
    // other keys: every command is refused, reads included
    for key in ["tenant2:f", "other"] {
        for (name, args) in calls(key, &header) {
            assert_eq!(run(&mut t1, &args), noperm_key(), "{name} on {key}");
        }
    }
    // nothing changed there
    for k in ["tenant2:f", "other"] {
        assert_eq!(run(&mut admin, &["BF.CARD", k]), int(1));
        assert_eq!(
            run(
                &mut admin,
                &["EXISTS", &format!("{k}:new"), &format!("{k}:copy")]
            ),
            int(0)
        );
    }
    // its own keys: everything works
    for (name, args) in calls("tenant1:f", &header) {
        let r = run(&mut t1, &args);
        assert!(!r.is_err(), "{name} on tenant1:f: {r:?}");
    }
    assert_eq!(run(&mut t1, &["BF.EXISTS", "tenant1:f", "a"]), int(1));
    // secret, then a b c d e f from the writers
    assert_eq!(run(&mut t1, &["BF.CARD", "tenant1:f"]), int(7));
    assert_eq!(
        run(&mut admin, &["EXISTS", "tenant1:f:new", "tenant1:f:copy"]),
        int(2)
    );
    // a tenant cannot reach another's filter through the key pattern's prefix
    assert_eq!(
        run(&mut t1, &["BF.EXISTS", "tenant10:f", "a"]),
        noperm_key()
    );
}

/// The ACL categories of the BF commands, each server's own:
/// - Redis 7.0 has no API for a module command's categories: `ACL CAT read` and `write` list no
///   bf.* command, there is no `@bloom`, and `+@read` or `+@write` grants no BF command.
/// - Redis 7.4 and Valkey 9.1: every command is in `@bloom`, the readers in `@read`, the
///   writers in `@write`, so `+@read`, `+@write` and `+@bloom -@write` mean what users expect.
///   Valkey's `ACL CAT read` and `ACL CAT bloom` list them; Redis 7.4's list no module command
///   (its own quirk: the permissions hold all the same).
#[test]
fn acl_categories_of_the_bf_commands() {
    let server = Server::new();
    let mut con = server.conn();
    assert_eq!(run(&mut con, &["BF.RESERVE", "f", "0.01", "100"]), ok());
    let header = header_of(&mut con, "f");
    let listed = |con: &mut redis::Connection, cat: &str| -> Vec<String> {
        let Reply::Arr(cmds) = run(con, &["ACL", "CAT", cat]) else {
            panic!("ACL CAT {cat}")
        };
        let mut bf: Vec<String> = cmds
            .iter()
            .filter_map(|c| match c {
                Reply::Bulk(b) if b.starts_with(b"bf.") => {
                    Some(String::from_utf8(b.clone()).unwrap())
                }
                _ => None,
            })
            .collect();
        bf.sort();
        bf
    };
    let sorted = |names: &[&str]| {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    let mut all: Vec<&str> = READERS.to_vec();
    all.extend(WRITERS);
    match flavor() {
        Flavor::Redis70 => {
            for cat in ["read", "write", "fast", "slow"] {
                assert_eq!(listed(&mut con, cat), sorted(&[]), "ACL CAT {cat}");
            }
            assert_eq!(
                run(&mut con, &["ACL", "CAT", "bloom"]),
                err("ERR Unknown category 'bloom'")
            );
        }
        Flavor::Redis74 => {
            for cat in ["read", "write", "bloom"] {
                assert_eq!(listed(&mut con, cat), sorted(&[]), "ACL CAT {cat}");
            }
        }
        Flavor::Redis80 | Flavor::Valkey81 | Flavor::Valkey91 => {
            assert_eq!(listed(&mut con, "read"), sorted(&READERS));
            assert_eq!(listed(&mut con, "write"), sorted(&WRITERS));
            assert_eq!(listed(&mut con, "bloom"), sorted(&all));
        }
    }
    assert_eq!(
        run(&mut con, &["ACL", "CAT", "module"]),
        err("ERR Unknown category 'module'")
    );

    // What each user may run: the readers, the writers, or none.
    let mut users = vec![("r", vec!["+@read"]), ("w", vec!["+@write"])];
    if flavor().acl_categories() {
        users.insert(1, ("b", vec!["+@bloom", "-@write"]));
    } else {
        let setuser = ["ACL", "SETUSER", "b", "on", ">pw", "+@bloom"];
        assert!(run(&mut con, &setuser)
            .err_text()
            .contains("Unknown command or category name in ACL"));
    }
    for (user, rules) in users {
        let mut setuser = vec!["ACL", "SETUSER", user, "on", ">pw", "~*"];
        setuser.extend(rules.iter().copied());
        assert_eq!(run(&mut con, &setuser), ok());
        let mut c = user_conn(&server, user);
        let allowed: &[&str] = match (flavor().acl_categories(), user) {
            (false, _) => &[],
            (true, "w") => &WRITERS,
            (true, _) => &READERS,
        };
        for (name, args) in calls("f", &header) {
            let r = run(&mut c, &args);
            if allowed.contains(&name) {
                assert!(!r.is_err(), "{name} with {rules:?}: {r:?}");
            } else {
                assert_eq!(r, noperm_command(user, name), "{name} with {rules:?}");
            }
        }
    }
}

#[test]
fn a_read_only_user_reads_filters_but_cannot_write_them() {
    let server = Server::new();
    let mut admin = server.conn();
    assert_eq!(run(&mut admin, &["BF.RESERVE", "f", "0.01", "100"]), ok());
    assert_eq!(run(&mut admin, &["BF.ADD", "f", "x"]), int(1));
    let header = header_of(&mut admin, "f");
    // the read-only BF user of Redis 7.0: +@read and the BF readers by name
    let mut setuser = vec!["ACL", "SETUSER", "ro", "on", ">pw", "~*", "+@read"];
    let grants: Vec<String> = READERS.iter().map(|c| format!("+{c}")).collect();
    setuser.extend(grants.iter().map(String::as_str));
    assert_eq!(run(&mut admin, &setuser), ok());
    let mut ro = user_conn(&server, "ro");
    for (name, args) in calls("f", &header) {
        let r = run(&mut ro, &args);
        if READERS.contains(&name) {
            assert!(!r.is_err(), "{name}: {r:?}");
        } else {
            assert!(WRITERS.contains(&name));
            assert_eq!(r, noperm_command("ro", name), "{name}");
        }
    }
    assert_eq!(run(&mut ro, &["BF.EXISTS", "f", "x"]), int(1));
    assert_eq!(run(&mut ro, &["BF.MEXISTS", "f", "x", "y"]), ints(&[1, 0]));
    assert_eq!(run(&mut ro, &["BF.CARD", "f"]), int(1));
    assert_eq!(run(&mut ro, &["GET", "nothing"]), Reply::Nil);
    assert_eq!(
        run(&mut ro, &["SET", "k", "v"]),
        noperm_command("ro", "set")
    );
    // the filter was not written
    assert_eq!(run(&mut admin, &["BF.CARD", "f"]), int(1));
    assert_eq!(run(&mut admin, &["EXISTS", "f:new", "f:copy"]), int(0));
    // ACL DRYRUN agrees
    assert_eq!(
        run(&mut admin, &["ACL", "DRYRUN", "ro", "BF.INFO", "f"]),
        ok()
    );
    // (reworded in Redis 7.2, so on Valkey)
    let refused = match flavor() {
        Flavor::Redis70 => "This user has no permissions to run the 'bf.add' command",
        _ => "User ro has no permissions to run the 'bf.add' command",
    };
    assert_eq!(
        run(&mut admin, &["ACL", "DRYRUN", "ro", "BF.ADD", "f", "y"]),
        bulk(refused)
    );
}

/// Each command's arity and key-spec flags, as COMMAND INFO shows them.
const KEY_SPECS: [(&str, i64, &[&str]); 14] = [
    ("bf.reserve", -4, &["RW", "insert"]),
    ("bf.bulkadd", -3, &["RW", "insert"]),
    ("bf.bulkexists", -3, &["RO", "access"]),
    ("bf.add", 3, &["RW", "insert"]),
    ("bf.madd", -3, &["RW", "insert"]),
    ("bf.insert", -4, &["RW", "insert"]),
    ("bf.loadchunk", 4, &["RW", "update"]),
    ("bf.load", 3, &["RW", "insert"]),
    ("bf.exists", 3, &["RO", "access"]),
    ("bf.mexists", -3, &["RO", "access"]),
    ("bf.scandump", 3, &["RO", "access"]),
    ("bf.info", -2, &["RO"]),
    ("bf.card", 2, &["RO"]),
    ("bf.debug", 2, &["RO"]),
];

/// The value of key `name` in a flat RESP2 map.
fn field<'a>(map: &'a [Reply], name: &str) -> &'a Reply {
    map.chunks(2)
        .find(|pair| match &pair[0] {
            Reply::Status(s) => s == name,
            Reply::Bulk(b) => b == name.as_bytes(),
            _ => false,
        })
        .map(|pair| &pair[1])
        .unwrap_or_else(|| panic!("no {name} in {map:?}"))
}

/// The array value of key `name` in a flat RESP2 map.
fn field_arr<'a>(map: &'a [Reply], name: &str) -> &'a [Reply] {
    match field(map, name) {
        Reply::Arr(v) => v,
        other => panic!("{name}: {other:?}"),
    }
}

fn strings(r: &Reply) -> Vec<String> {
    let Reply::Arr(v) = r else {
        panic!("not an array: {r:?}")
    };
    v.iter()
        .map(|s| match s {
            Reply::Status(s) => s.clone(),
            Reply::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
            other => panic!("not a string: {other:?}"),
        })
        .collect()
}

/// COMMAND INFO: name, arity, flags, first key 1, last key 1, step 1, the `dont_cache` tip of
/// the introspection commands, and one key spec with
/// the flags of KEY_SPECS, beginning at index 1, a range of one key; COMMAND DOCS: summary,
/// since and complexity.
#[test]
fn command_info_flags_key_positions_and_key_specs() {
    let server = Server::new();
    let mut con = server.conn();
    assert_eq!(KEY_SPECS.len(), READERS.len() + WRITERS.len());
    for (name, arity, spec_flags) in KEY_SPECS {
        let Reply::Arr(outer) = run(&mut con, &["COMMAND", "INFO", name]) else {
            panic!("COMMAND INFO {name}")
        };
        let Reply::Arr(info) = &outer[0] else {
            panic!("COMMAND INFO {name}: {outer:?}")
        };
        assert_eq!(info[0], bulk(name));
        assert_eq!(info[1], int(arity), "{name} arity");
        let mut want = if WRITERS.contains(&name) {
            vec!["write", "denyoom", "module"]
        } else {
            assert!(READERS.contains(&name));
            // A blob of any size is not a fast command (a 100,000-item blob takes milliseconds).
            match name {
                "bf.bulkexists" => vec!["readonly", "module"],
                _ => vec!["readonly", "module", "fast"],
            }
        };
        let mut got = strings(&info[2]);
        want.sort();
        got.sort();
        assert_eq!(got, want, "{name} flags");
        assert_eq!(&info[3..6], &[int(1), int(1), int(1)], "{name} keys");
        // ACL categories (the 7th element): none in Redis 7.0; elsewhere @read or @write, @fast
        // for the cheap ones, and @bloom.
        let mut categories = strings(&info[6]);
        categories.sort();
        let mut want: Vec<String> = if flavor().acl_categories() {
            let fast = ["bf.reserve", "bf.add", "bf.exists", "bf.info", "bf.card"];
            let mut c = vec![if WRITERS.contains(&name) {
                "@write"
            } else {
                "@read"
            }];
            if fast.contains(&name) {
                c.push("@fast");
            }
            c.push("@bloom");
            c.into_iter().map(String::from).collect()
        } else {
            vec![]
        };
        want.sort();
        assert_eq!(categories, want, "{name} ACL categories");
        // Command tips (the 8th element): the introspection commands are not for a client's
        // cache, as in RedisBloom 8.
        let introspection = [
            "bf.info",
            "bf.debug",
            "bf.scandump",
            "cf.info",
            "cf.debug",
            "cf.scandump",
        ];
        let tips: Vec<String> = if introspection.contains(&name) {
            vec!["dont_cache".into()]
        } else {
            vec![]
        };
        assert_eq!(strings(&info[7]), tips, "{name} tips");
        let Reply::Arr(specs) = &info[8] else {
            panic!("{name} key specs {:?}", info[8])
        };
        assert_eq!(specs.len(), 1, "{name}: {specs:?}");
        let Reply::Arr(spec) = &specs[0] else {
            panic!("{name} key spec {:?}", specs[0])
        };
        assert_eq!(
            strings(field(spec, "flags")),
            spec_flags,
            "{name} key spec flags"
        );
        let Reply::Arr(begin) = field(spec, "begin_search") else {
            panic!("{name}: {spec:?}")
        };
        assert_eq!(field(begin, "type"), &bulk("index"), "{name}");
        assert_eq!(field(field_arr(begin, "spec"), "index"), &int(1), "{name}");
        let Reply::Arr(find) = field(spec, "find_keys") else {
            panic!("{name}: {spec:?}")
        };
        assert_eq!(field(find, "type"), &bulk("range"), "{name}");
        let range = field_arr(find, "spec");
        assert_eq!(
            [
                field(range, "lastkey"),
                field(range, "keystep"),
                field(range, "limit")
            ],
            [&int(0), &int(1), &int(0)],
            "{name}"
        );

        let Reply::Arr(docs) = run(&mut con, &["COMMAND", "DOCS", name]) else {
            panic!("COMMAND DOCS {name}")
        };
        let Reply::Arr(doc) = &docs[1] else {
            panic!("COMMAND DOCS {name}: {docs:?}")
        };
        assert!(
            matches!(field(doc, "summary"), Reply::Bulk(b) if b.len() > 10),
            "{name}"
        );
        let since = match name {
            "bf.card" => "2.4.4",
            // rsbloom's own, since the module version (20802) that added them.
            "bf.bulkadd" | "bf.bulkexists" => "2.8.2",
            _ => "1.0.0",
        };
        assert_eq!(field(doc, "since"), &bulk(since), "{name}");
        assert!(matches!(field(doc, "complexity"), Reply::Bulk(b) if b.starts_with(b"O(")));
        assert_eq!(field(doc, "module"), &bulk("bf"), "{name}");
    }
    // The cuckoo introspection commands have the tip too, its other readers none.
    for (name, tips) in [
        ("cf.info", &["dont_cache"][..]),
        ("cf.debug", &["dont_cache"]),
        ("cf.scandump", &["dont_cache"]),
        ("cf.exists", &[]),
        ("cf.count", &[]),
    ] {
        let Reply::Arr(outer) = run(&mut con, &["COMMAND", "INFO", name]) else {
            panic!("COMMAND INFO {name}")
        };
        let Reply::Arr(info) = &outer[0] else {
            panic!("COMMAND INFO {name}: {outer:?}")
        };
        assert_eq!(strings(&info[7]), tips, "{name} tips");
    }
    // Redis checks the arity itself now, with the same error the module gave
    assert_eq!(
        run(&mut con, &["BF.ADD", "k"]),
        err("ERR wrong number of arguments for 'bf.add' command")
    );
    // COMMAND GETKEYS finds the key
    assert_eq!(
        run(
            &mut con,
            &[
                "COMMAND",
                "GETKEYS",
                "BF.INSERT",
                "k",
                "CAPACITY",
                "5",
                "ITEMS",
                "a"
            ]
        ),
        arr(vec![bulk("k")])
    );
}

/// What each kind of key permission (Redis 7.0 `%R~`, `%W~`, `~`) lets a user do with each BF
/// command, next to the native commands whose key specs the BF ones follow.
#[test]
fn key_permissions_follow_the_key_specs() {
    let server = Server::new();
    let mut admin = server.conn();
    assert_eq!(run(&mut admin, &["SADD", "set", "m"]), int(1));
    assert_eq!(run(&mut admin, &["SET", "bits", "a"]), ok());
    for (user, keys) in [("r", "%R~*"), ("w", "%W~*"), ("rw", "~*"), ("rw2", "%RW~*")] {
        let filter = format!("f{user}");
        assert_eq!(
            run(&mut admin, &["BF.RESERVE", &filter, "0.01", "100"]),
            ok()
        );
        assert_eq!(run(&mut admin, &["BF.ADD", &filter, "x"]), int(1));
        let header = header_of(&mut admin, &filter);
        assert_eq!(
            run(
                &mut admin,
                &["ACL", "SETUSER", user, "on", ">pw", keys, "+@all"]
            ),
            ok()
        );
        let mut con = user_conn(&server, user);
        let (read, write) = (keys != "%W~*", keys != "%R~*");
        for (name, args) in calls(&filter, &header) {
            let needs_read = KEY_SPECS
                .iter()
                .any(|(n, _, flags)| *n == name && flags.contains(&"access"));
            let needs_write = WRITERS.contains(&name);
            let allowed = (read || !needs_read) && (write || !needs_write);
            let r = run(&mut con, &args);
            if allowed {
                assert!(!r.is_err(), "{name} with {keys}: {r:?}");
            } else {
                assert_eq!(r, noperm_key(), "{name} with {keys}");
            }
        }
        // the replies themselves, and what the writers left behind
        let exists = run(&mut con, &["BF.EXISTS", &filter, "x"]);
        assert_eq!(exists, if read { int(1) } else { noperm_key() }, "{keys}");
        let card = if write { 7 } else { 1 }; // x, then a b c d e f from the writers
        assert_eq!(run(&mut con, &["BF.CARD", &filter]), int(card), "{keys}");
        assert_eq!(run(&mut admin, &["BF.CARD", &filter]), int(card), "{keys}");
        let copies = [format!("{filter}:new"), format!("{filter}:copy")];
        let created = run(&mut admin, &["EXISTS", &copies[0], &copies[1]]);
        assert_eq!(created, int(if write { 2 } else { 0 }), "{keys}");
        // native commands with the same key specs answer alike
        let native = [
            (vec!["GETBIT", "bits", "1"], true, false),
            (vec!["SCARD", "set"], false, false),
            (vec!["SADD", "set", user], false, true),
            (vec!["SETRANGE", "bits", "0", "b"], false, true),
        ];
        for (args, needs_read, needs_write) in native {
            let r = run(&mut con, &args);
            if (read || !needs_read) && (write || !needs_write) {
                assert!(!r.is_err(), "{} with {keys}: {r:?}", args[0]);
            } else {
                assert_eq!(r, noperm_key(), "{} with {keys}", args[0]);
            }
        }
        // ACL DRYRUN agrees
        let dry = run(
            &mut admin,
            &["ACL", "DRYRUN", user, "BF.MEXISTS", &filter, "x"],
        );
        if read {
            assert_eq!(dry, ok(), "{keys}");
        } else {
            // (reworded in Redis 7.2, so on Valkey)
            let refused = match flavor() {
                Flavor::Redis70 => "This user has no permissions to access".to_string(),
                _ => {
                    format!("User {user} has no permissions to access the '{filter}' key")
                }
            };
            assert!(
                matches!(&dry, Reply::Bulk(b) if b.starts_with(refused.as_bytes())),
                "{keys}: {dry:?}"
            );
        }
    }
}

#[test]
fn acl_categories_of_the_cf_commands() {
    let server = Server::new();
    let mut con = server.conn();
    // +@cuckoo -@write: a user that reads cuckoo filters and writes nothing.
    let setuser = [
        "ACL", "SETUSER", "c", "on", ">pw", "~*", "+@cuckoo", "-@write",
    ];
    if !flavor().acl_categories() {
        // Redis 7.0: no module categories at all.
        assert!(run(&mut con, &setuser).is_err());
        return;
    }
    assert_eq!(run(&mut con, &setuser), ok());
    assert_eq!(run(&mut con, &["CF.ADD", "cf", "x"]), int(1));
    let mut c = server.conn();
    assert_eq!(run(&mut c, &["AUTH", "c", "pw"]), ok());
    assert_eq!(run(&mut c, &["CF.EXISTS", "cf", "x"]), int(1));
    assert!(!run(&mut c, &["CF.INFO", "cf"]).is_err());
    for write in [
        &["CF.ADD", "cf", "y"][..],
        &["CF.DEL", "cf", "x"],
        &["CF.COMPACT", "cf"],
    ] {
        let reply = run(&mut c, write);
        assert!(
            reply.err_text().starts_with("NOPERM"),
            "{write:?}: {reply:?}"
        );
    }
    // The BF commands are not in @cuckoo.
    assert!(run(&mut c, &["BF.EXISTS", "bf", "x"])
        .err_text()
        .starts_with("NOPERM"));
    if matches!(
        flavor(),
        Flavor::Redis80 | Flavor::Valkey81 | Flavor::Valkey91
    ) {
        let Reply::Arr(cmds) = run(&mut con, &["ACL", "CAT", "cuckoo"]) else {
            panic!("ACL CAT cuckoo")
        };
        // The 14 CF commands RedisBloom has, and CF.BULKADD and CF.BULKEXISTS.
        assert_eq!(cmds.len(), 16, "{cmds:?}");
    }
}
