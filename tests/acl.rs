//! ACLs: key patterns and command permissions apply to the BF commands, and COMMAND INFO shows
//! the flags and key positions ACL and cluster clients rely on.
//!
//! Redis 7.0 puts module commands in no ACL category: `ACL CAT read` / `ACL CAT write` list no
//! bf.* command whatever the command's flags say, so `+@read` does not grant BF.EXISTS, and
//! there is no `@module` or `@bloom` category. (`RedisModule_SetCommandACLCategories` only exists
//! from Redis 7.2.) A read-only BF user is made with `+@read` plus the BF readers by name; the
//! tests assert exactly that.

mod common;

use common::*;

const READERS: [&str; 6] = [
    "bf.exists",
    "bf.mexists",
    "bf.info",
    "bf.card",
    "bf.scandump",
    "bf.debug",
];
const WRITERS: [&str; 5] = [
    "bf.reserve",
    "bf.add",
    "bf.madd",
    "bf.insert",
    "bf.loadchunk",
];

fn user_conn(server: &Server, user: &str) -> redis::Connection {
    let mut con = server.conn();
    assert_eq!(run(&mut con, &["AUTH", user, "pw"]), ok(), "AUTH {user}");
    con
}

fn noperm_command(name: &str) -> Reply {
    err(&format!(
        "NOPERM this user has no permissions to run the '{name}' command"
    ))
}

const NOPERM_KEY: &str =
    "NOPERM this user has no permissions to access one of the keys used as arguments";

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
        ("bf.exists", vec![v("BF.EXISTS"), k.clone(), v("x")]),
        (
            "bf.mexists",
            vec![v("BF.MEXISTS"), k.clone(), v("x"), v("y")],
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
            assert_eq!(run(&mut t1, &args), err(NOPERM_KEY), "{name} on {key}");
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
    assert_eq!(run(&mut t1, &["BF.CARD", "tenant1:f"]), int(5));
    assert_eq!(
        run(&mut admin, &["EXISTS", "tenant1:f:new", "tenant1:f:copy"]),
        int(2)
    );
    // a tenant cannot reach another's filter through the key pattern's prefix
    assert_eq!(
        run(&mut t1, &["BF.EXISTS", "tenant10:f", "a"]),
        err(NOPERM_KEY)
    );
}

#[test]
fn redis_7_0_puts_module_commands_in_no_acl_category() {
    let server = Server::new();
    let mut con = server.conn();
    for cat in ["read", "write", "fast", "slow"] {
        let Reply::Arr(cmds) = run(&mut con, &["ACL", "CAT", cat]) else {
            panic!("ACL CAT {cat}")
        };
        assert!(
            !cmds
                .iter()
                .any(|c| matches!(c, Reply::Bulk(b) if b.starts_with(b"bf."))),
            "ACL CAT {cat} lists a bf command: Redis now categorises module commands; \
             update this test and the README"
        );
        assert!(cmds.contains(&bulk(if cat == "read" {
            "get"
        } else if cat == "write" {
            "set"
        } else if cat == "fast" {
            "get"
        } else {
            "keys"
        })));
    }
    assert_eq!(
        run(&mut con, &["ACL", "CAT", "module"]),
        err("ERR Unknown category 'module'")
    );
    assert_eq!(
        run(&mut con, &["ACL", "CAT", "bloom"]),
        err("ERR Unknown category 'bloom'")
    );

    // so +@read alone grants no BF command, not even the readers
    assert_eq!(run(&mut con, &["BF.RESERVE", "f", "0.01", "100"]), ok());
    let header = header_of(&mut con, "f");
    assert_eq!(
        run(
            &mut con,
            &["ACL", "SETUSER", "r", "on", ">pw", "~*", "+@read"]
        ),
        ok()
    );
    let mut r = user_conn(&server, "r");
    for (name, args) in calls("f", &header) {
        assert_eq!(
            run(&mut r, &args),
            noperm_command(name),
            "{name} with +@read"
        );
    }
    // +@write does not grant the writers either
    assert_eq!(
        run(
            &mut con,
            &["ACL", "SETUSER", "w", "on", ">pw", "~*", "+@write"]
        ),
        ok()
    );
    let mut w = user_conn(&server, "w");
    for (name, args) in calls("f", &header) {
        assert_eq!(
            run(&mut w, &args),
            noperm_command(name),
            "{name} with +@write"
        );
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
            assert_eq!(r, noperm_command(name), "{name}");
        }
    }
    assert_eq!(run(&mut ro, &["BF.EXISTS", "f", "x"]), int(1));
    assert_eq!(run(&mut ro, &["BF.MEXISTS", "f", "x", "y"]), ints(&[1, 0]));
    assert_eq!(run(&mut ro, &["BF.CARD", "f"]), int(1));
    assert_eq!(run(&mut ro, &["GET", "nothing"]), Reply::Nil);
    assert_eq!(run(&mut ro, &["SET", "k", "v"]), noperm_command("set"));
    // the filter was not written
    assert_eq!(run(&mut admin, &["BF.CARD", "f"]), int(1));
    assert_eq!(run(&mut admin, &["EXISTS", "f:new", "f:copy"]), int(0));
    // ACL DRYRUN agrees
    assert_eq!(
        run(&mut admin, &["ACL", "DRYRUN", "ro", "BF.INFO", "f"]),
        ok()
    );
    assert_eq!(
        run(&mut admin, &["ACL", "DRYRUN", "ro", "BF.ADD", "f", "y"]),
        bulk("This user has no permissions to run the 'bf.add' command")
    );
}

/// COMMAND INFO: name, arity -1, flags, first key 1, last key 1, step 1.
#[test]
fn command_info_flags_and_key_positions() {
    let server = Server::new();
    let mut con = server.conn();
    for name in READERS.iter().chain(WRITERS.iter()) {
        let Reply::Arr(outer) = run(&mut con, &["COMMAND", "INFO", name]) else {
            panic!("COMMAND INFO {name}")
        };
        let Reply::Arr(info) = &outer[0] else {
            panic!("COMMAND INFO {name}: {outer:?}")
        };
        assert_eq!(info[0], bulk(name));
        assert_eq!(info[1], int(-1), "{name} arity (the module checks it)");
        let Reply::Arr(flags) = &info[2] else {
            panic!("{name} flags {:?}", info[2])
        };
        let flags: Vec<String> = flags
            .iter()
            .map(|f| match f {
                Reply::Status(s) => s.clone(),
                other => panic!("{name} flag {other:?}"),
            })
            .collect();
        let mut want = if WRITERS.contains(name) {
            vec!["write", "denyoom", "module"]
        } else {
            vec!["readonly", "module", "fast"]
        };
        let mut got = flags.clone();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{name} flags");
        assert_eq!(&info[3..6], &[int(1), int(1), int(1)], "{name} keys");
        // ACL categories (the 7th element): none, in Redis 7.0
        assert_eq!(info[6], arr(vec![]), "{name} ACL categories");
        // the key spec Redis 7.0 derives from (1, 1, 1) for every module command, readers
        // included: RW + access + update (no RedisModule_SetCommandInfo key specs are set)
        let spec = format!("{:?}", info[8]);
        assert!(
            spec.contains("\"RW\"") && spec.contains("\"access\"") && spec.contains("\"update\""),
            "{name}: {spec}"
        );
    }
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

/// Redis 7.0's read-only key permission `%R~pattern` checks the command's key spec, and every
/// BF command's spec says RW (see above): a `%R~*` user can run no BF command, readers
/// included, while it can GET. This asserts the current behaviour; key specs with RO flags set
/// through RedisModule_SetCommandInfo would let `%R~` users read filters.
#[test]
fn read_only_key_permission_refuses_every_bf_command() {
    let server = Server::new();
    let mut admin = server.conn();
    assert_eq!(run(&mut admin, &["BF.RESERVE", "f", "0.01", "100"]), ok());
    assert_eq!(run(&mut admin, &["SET", "s", "v"]), ok());
    let header = header_of(&mut admin, "f");
    assert_eq!(
        run(
            &mut admin,
            &["ACL", "SETUSER", "rk", "on", ">pw", "%R~*", "+@all"]
        ),
        ok()
    );
    let mut rk = user_conn(&server, "rk");
    assert_eq!(run(&mut rk, &["GET", "s"]), bulk("v"));
    assert_eq!(run(&mut rk, &["SET", "s", "w"]), err(NOPERM_KEY));
    for (name, args) in calls("f", &header) {
        assert_eq!(run(&mut rk, &args), err(NOPERM_KEY), "{name} with %R~*");
    }
}
