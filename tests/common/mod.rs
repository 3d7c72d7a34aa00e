//! Integration-test harness: runs a private server with the freshly built rsbloom module.
//!
//! Every test starts its own [`Server`] (own port on 127.0.0.1, own temp dir), stopped by pid.
//! - The server binary is `$RSBLOOM_TEST_SERVER`, by default Debian's `/usr/bin/redis-server`.
//! - The module is the one built with this test binary's own profile (see [`module_path`]).
//! - Every wait is bounded, and one that gives up says what it waited for and what the server
//!   logged ([`Server::wait_for`]).
#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicUsize;
use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::{ConnectionLike, RedisError, Value};

/// The module under test: `librsbloom.so` of this test binary's own profile
/// (`target/<profile>/`, the parent of the `deps/` the test binary runs from), built by
/// [`build_binaries`]. `$RSBLOOM_TEST_MODULE` overrides it (only for checking the harness and
/// the expected replies against RedisBloom itself).
pub fn module_path() -> String {
    match std::env::var("RSBLOOM_TEST_MODULE") {
        Ok(p) if !p.is_empty() => p,
        _ => build_binaries().join("librsbloom.so").display().to_string(),
    }
}

/// The `rsbloom` command-line tool of this test binary's profile, built by [`build_binaries`].
pub fn cli_path() -> String {
    build_binaries().join("rsbloom").display().to_string()
}

/// Builds the module and the command-line tool for this test binary's profile, once a
/// process, and returns the directory that holds them (`target/<profile>`): a test never runs
/// a stale binary or one of another profile. The packages are the ones `make build` names,
/// so the build is a no-op after it: a different selection unifies the dependencies'
/// features differently (the tool's clap turns on more of `syn`), and cargo would rebuild the
/// module each time the two alternate.
fn build_binaries() -> &'static Path {
    static PROFILE_DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PROFILE_DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("a test binary in target/<profile>/deps");
        let target_dir = profile_dir.parent().expect("target/<profile>");
        let profile = profile_dir.file_name().unwrap().to_string_lossy();
        // The dev profile builds into target/debug.
        let profile = if profile == "debug" { "dev" } else { &profile };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(&cargo);
        // Without the variables cargo set for this test binary: ring's build script reruns
        // when CARGO_MANIFEST_DIR changes, so with this binary's value the build rebuilt ring,
        // rustls, the client and the tool, and the next `make build` rebuilt them back (about
        // 50 s each time in CI).
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy().into_owned();
            let per_package = ["CARGO_MANIFEST_", "CARGO_PKG_", "CARGO_BIN_"]
                .iter()
                .any(|p| name.starts_with(p))
                || [
                    "CARGO_CRATE_NAME",
                    "CARGO_PRIMARY_PACKAGE",
                    "CARGO_TARGET_TMPDIR",
                    "CARGO_RUSTC_CURRENT_DIR",
                ]
                .contains(&name.as_str());
            if per_package {
                build.env_remove(name);
            }
        }
        let out = build
            .args([
                "build",
                "-p",
                "rsbloom",
                "-p",
                "rsbloom-cli",
                "--profile",
                profile,
            ])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .output()
            .unwrap_or_else(|e| panic!("run {cargo} build: {e}"));
        assert!(
            out.status.success(),
            "cargo build -p rsbloom -p rsbloom-cli --profile {profile} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        profile_dir.to_path_buf()
    })
}

/// The server binary: `$RSBLOOM_TEST_SERVER`, by default Debian's redis-server.
pub fn server_binary() -> String {
    match std::env::var("RSBLOOM_TEST_SERVER") {
        Ok(p) if !p.is_empty() => p,
        _ => "/usr/bin/redis-server".to_string(),
    }
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A simplified, comparable view of a server reply. RESP2 and RESP3 simple strings (including
/// `+OK`) become `Status`, bulk and verbatim strings become `Bulk`, arrays and sets become `Arr`,
/// and error replies (top-level or nested) become `Err` holding the exact server line.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Nil,
    Int(i64),
    Bool(bool),
    Double(f64),
    Status(String),
    Bulk(Vec<u8>),
    Arr(Vec<Reply>),
    Map(Vec<(Reply, Reply)>),
    Err(String),
    Other(String),
}

impl Reply {
    pub fn from_value(v: Value) -> Reply {
        match v {
            Value::Nil => Reply::Nil,
            Value::Int(i) => Reply::Int(i),
            Value::Boolean(b) => Reply::Bool(b),
            Value::Double(d) => Reply::Double(d),
            Value::Okay => Reply::Status("OK".to_string()),
            Value::SimpleString(s) => Reply::Status(s),
            Value::BulkString(b) => Reply::Bulk(b),
            Value::VerbatimString { text, .. } => Reply::Bulk(text.into_bytes()),
            Value::Array(a) | Value::Set(a) => {
                Reply::Arr(a.into_iter().map(Reply::from_value).collect())
            }
            Value::Map(m) => Reply::Map(
                m.into_iter()
                    .map(|(k, v)| (Reply::from_value(k), Reply::from_value(v)))
                    .collect(),
            ),
            Value::ServerError(e) => Reply::Err(match e.details() {
                Some(d) => format!("{} {}", e.code(), d),
                None => e.code().to_string(),
            }),
            other => Reply::Other(format!("{other:?}")),
        }
    }

    /// The error line, panicking if this is not an error reply.
    pub fn err_text(&self) -> &str {
        match self {
            Reply::Err(s) => s,
            other => panic!("expected an error reply, got {other:?}"),
        }
    }

    pub fn is_err(&self) -> bool {
        matches!(self, Reply::Err(_))
    }
}

pub fn ok() -> Reply {
    Reply::Status("OK".to_string())
}
pub fn int(i: i64) -> Reply {
    Reply::Int(i)
}
pub fn boolean(b: bool) -> Reply {
    Reply::Bool(b)
}
pub fn err(s: &str) -> Reply {
    Reply::Err(s.to_string())
}
pub fn arr(v: Vec<Reply>) -> Reply {
    Reply::Arr(v)
}
pub fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}
pub fn ints(v: &[i64]) -> Reply {
    Reply::Arr(v.iter().map(|&i| Reply::Int(i)).collect())
}
pub fn bools(v: &[bool]) -> Reply {
    Reply::Arr(v.iter().map(|&b| Reply::Bool(b)).collect())
}

/// Reconstructs the exact error line the server sent from a `RedisError` produced by the redis
/// crate (0.27 splits the line at its first space into a code and a detail: `ERR bad error rate`
/// becomes ResponseError + "bad error rate", `Nonscaling filters cannot expand` becomes an
/// extension error with code "Nonscaling"). Non-server errors are returned as `to_string()`.
pub fn err_text(e: &RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => {
            if e.kind() == redis::ErrorKind::ExtensionError
                && detail == "Unknown extension error encountered"
            {
                // the redis crate's placeholder for a one-word error line
                code.to_string()
            } else {
                format!("{code} {detail}")
            }
        }
        (Some(code), None) => code.to_string(),
        _ => e.to_string(),
    }
}

fn build_cmd<A: AsRef<[u8]>>(args: &[A]) -> redis::Cmd {
    assert!(!args.is_empty(), "empty command");
    let mut c = redis::cmd(std::str::from_utf8(args[0].as_ref()).expect("command name utf-8"));
    for a in &args[1..] {
        c.arg(a.as_ref());
    }
    c
}

/// Sends one command and returns its raw reply; error replies (also ones nested in arrays) are
/// kept as values. Panics only on I/O / protocol failures.
pub fn raw<A: AsRef<[u8]>>(con: &mut redis::Connection, args: &[A]) -> Value {
    match con.req_command(&build_cmd(args)) {
        Ok(v) => v,
        Err(e) => panic!(
            "command {:?} failed at the transport level: {e}",
            show_args(args)
        ),
    }
}

/// Sends one command and returns its reply as a [`Reply`].
pub fn run<A: AsRef<[u8]>>(con: &mut redis::Connection, args: &[A]) -> Reply {
    Reply::from_value(raw(con, args))
}

/// The next message of a subscription on a [`Server::subscriber`] connection. A stop and
/// continue of the test process interrupts a read that has a timeout (EINTR, see
/// `Server::connect`); the client's decoder keeps what it had read of the message, so reading
/// again resumes it.
pub fn next_message(sub: &mut redis::PubSub) -> redis::Msg {
    const EINTR: i32 = 4;
    let interrupted = std::io::Error::from_raw_os_error(EINTR).to_string();
    loop {
        match sub.get_message() {
            Err(e) if e.is_io_error() && e.to_string() == interrupted => continue,
            Err(e) => panic!("no pub/sub message within the read timeout: {e}"),
            Ok(msg) => return msg,
        }
    }
}

/// Sends many commands in one pipeline (one write, then all replies) and returns their replies.
pub fn pipeline<A: AsRef<[u8]>>(con: &mut redis::Connection, cmds: &[Vec<A>]) -> Vec<Reply> {
    let mut p = redis::pipe();
    for args in cmds {
        p.add_command(build_cmd(args));
    }
    let packed = p.get_packed_pipeline();
    let vals = con
        .req_packed_commands(&packed, 0, cmds.len())
        .unwrap_or_else(|e| panic!("pipeline failed at the transport level: {e}"));
    assert_eq!(vals.len(), cmds.len(), "pipeline reply count");
    vals.into_iter().map(Reply::from_value).collect()
}

fn show_args<A: AsRef<[u8]>>(args: &[A]) -> Vec<String> {
    args.iter()
        .map(|a| String::from_utf8_lossy(a.as_ref()).into_owned())
        .collect()
}

mod server;
pub mod texts;

pub use server::*;

/// RedisBloom 2.8.2's module, fetched once and cached by `scripts/redisbloom-so`, for the
/// tests that compare against it.
pub fn redisbloom_so() -> String {
    let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/redisbloom-so");
    let out = Command::new(tool).output().expect("run redisbloom-so");
    assert!(
        out.status.success(),
        "redisbloom-so failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The path of one of the servers rsbloom is tested on (`redis-7.0`, `redis-7.4`,
/// `valkey-9.1`), fetched and cached by `scripts/servers`.
pub fn servers_path(name: &str) -> String {
    let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/servers");
    let out = Command::new(tool)
        .arg(name)
        .output()
        .expect("run scripts/servers");
    assert!(
        out.status.success(),
        "scripts/servers {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Whether `needle` occurs in `haystack`.
pub fn contains_bytes(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// `n` distinct items `<prefix>0`, `<prefix>1`, ...
pub fn items(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// BF.EXISTS of every item, pipelined.
pub fn exists_all(con: &mut redis::Connection, key: &str, its: &[String]) -> Vec<Reply> {
    let cmds: Vec<Vec<&str>> = its
        .iter()
        .map(|i| vec!["BF.EXISTS", key, i.as_str()])
        .collect();
    pipeline(con, &cmds)
}

// ---------------------------------------------------------------------------------------------
// Small command helpers shared by the test files.

/// Whether each item reads present (BF.MEXISTS).
pub fn present(c: &mut redis::Connection, key: &str, its: &[String]) -> Vec<bool> {
    let mut args = vec!["BF.MEXISTS", key];
    args.extend(its.iter().map(String::as_str));
    match run(c, &args) {
        Reply::Arr(v) => v.into_iter().map(|r| r == int(1)).collect(),
        other => panic!("{other:?}"),
    }
}

/// How many are true.
pub fn count(v: &[bool]) -> usize {
    v.iter().filter(|&&b| b).count()
}

/// The indices of the items of `absent` (never added) that `key` reads present: its exact
/// false positives, to compare with a fixture's recorded ones.
pub fn false_positives(c: &mut redis::Connection, key: &str, absent: &[String]) -> Vec<usize> {
    present(c, key, absent)
        .into_iter()
        .enumerate()
        .filter_map(|(i, p)| p.then_some(i))
        .collect()
}

/// A fixture's recorded false positives: the indices in `path`, separated by whitespace.
pub fn recorded_false_positives(path: &str) -> Vec<usize> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .split_whitespace()
        .map(|i| i.parse().unwrap())
        .collect()
}

/// DUMP's payload of `key`.
pub fn dump(c: &mut redis::Connection, key: &str) -> Vec<u8> {
    let Value::BulkString(payload) = raw(c, &["DUMP", key]) else {
        panic!("DUMP {key}")
    };
    payload
}

/// RESTORE of `payload` into `key`, without a TTL.
pub fn restore(c: &mut redis::Connection, key: &str, payload: &[u8]) -> redis::RedisResult<Value> {
    redis::cmd("RESTORE").arg(key).arg(0).arg(payload).query(c)
}

/// The SCANDUMP steps of `key` from iterator 0 as a saved stream: records of the next
/// iterator (u64, little-endian), the chunk's length (u32, little-endian) and the chunk, as
/// the fixtures under `tests/fixtures/` hold them.
pub fn scandump_stream(c: &mut redis::Connection, key: &str) -> Vec<u8> {
    let mut stream = Vec::new();
    let mut iterator = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
            .arg(key)
            .arg(iterator)
            .query(c)
            .unwrap_or_else(|e| panic!("BF.SCANDUMP {key} {iterator}: {e}"));
        if next == 0 {
            return stream;
        }
        stream.extend_from_slice(&(next as u64).to_le_bytes());
        stream.extend_from_slice(&(data.len() as u32).to_le_bytes());
        stream.extend_from_slice(&data);
        iterator = next;
    }
}

/// Replays a saved SCANDUMP stream (see [`scandump_stream`]) from the file `path` into `key`
/// with BF.LOADCHUNK, asserting every OK.
pub fn load_stream(c: &mut redis::Connection, key: &str, path: &str) {
    let stream = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut rest = stream.as_slice();
    while !rest.is_empty() {
        let iterator = u64::from_le_bytes(rest[..8].try_into().unwrap());
        let len = u32::from_le_bytes(rest[8..12].try_into().unwrap()) as usize;
        let mut cmd = redis::cmd("BF.LOADCHUNK");
        cmd.arg(key).arg(iterator).arg(&rest[12..12 + len]);
        let r: redis::RedisResult<Value> = cmd.query(c);
        assert_eq!(r, Ok(Value::Okay), "{key} chunk {iterator}");
        rest = &rest[12 + len..];
    }
}

/// Redis's wrong-arity error for `cmd` (named in lower case, as Redis names module commands).
pub fn arity(cmd: &str) -> Reply {
    err(&format!(
        "ERR wrong number of arguments for '{}' command",
        cmd.to_ascii_lowercase()
    ))
}

/// A simple-string reply.
pub fn status(s: &str) -> Reply {
    Reply::Status(s.to_string())
}

/// BF.MADD of `its`, its reply.
pub fn madd(con: &mut redis::Connection, key: &str, its: &[String]) -> Reply {
    let mut args = vec!["BF.MADD", key];
    args.extend(its.iter().map(String::as_str));
    run(con, &args)
}

/// DEBUG DIGEST-VALUE of one key.
pub fn digest(con: &mut redis::Connection, key: &str) -> Reply {
    run(con, &["DEBUG", "DIGEST-VALUE", key])
}

/// A scaling filter of several links with `n` items.
pub fn multi_link(con: &mut redis::Connection, key: &str, n: usize) -> Vec<String> {
    assert_eq!(run(con, &["BF.RESERVE", key, "0.01", "100"]), ok());
    let its = items(&format!("{key}-item-"), n);
    for chunk in its.chunks(500) {
        madd(con, key, chunk);
    }
    its
}

/// An item `key` answers 0 for: `<prefix> 0`, `<prefix> 1`, ... (filters have random seeds, so
/// a fixed name can be a false positive, in about 1% of runs for a filter at 1%).
pub fn absent_item(con: &mut redis::Connection, key: &str, prefix: &str) -> String {
    (0..)
        .map(|i| format!("{prefix} {i}"))
        .find(|item| run(con, &["BF.EXISTS", key, item]) == int(0))
        .expect("some item is absent")
}

/// A field of an INFO section, if the server has it.
pub fn info_value(con: &mut redis::Connection, section: &str, field: &str) -> Option<String> {
    let text = match run(con, &["INFO", section]) {
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("INFO {section}: {other:?}"),
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(|v| v.trim().to_string())
}

/// Waits (60 s at most) until the replica behind `replica` has applied everything its primary
/// had in its replication stream when called: the primary's `master_repl_offset`, then the
/// replica's own offset polled until it gets there. Not `WAIT`: it counts only the calling
/// connection's writes, so on a connection that wrote nothing it returns at once (a digest
/// compared right after it then differed on a loaded machine, and agreed 2 s later); and its
/// timeout turned a slow replica into a failure.
pub fn wait_caught_up(primary: &mut redis::Connection, replica: &mut redis::Connection) {
    let offset = |c: &mut redis::Connection| -> i64 {
        info_field(c, "replication", "master_repl_offset")
            .parse()
            .unwrap()
    };
    let target = offset(primary);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let reached = offset(replica);
        if reached >= target {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the replica reached offset {reached} of {target} in 60 s"
        );
        sleep(Duration::from_millis(10));
    }
}

/// A field of an INFO section, which the server must have.
pub fn info_field(con: &mut redis::Connection, section: &str, field: &str) -> String {
    info_value(con, section, field).unwrap_or_else(|| panic!("no {field} in INFO {section}"))
}

/// BF.INFO's Size of a key: the module's own figure of its bytes.
pub fn info_size(con: &mut redis::Connection, key: &str) -> i64 {
    match run(con, &["BF.INFO", key, "SIZE"]) {
        Reply::Arr(v) if v.len() == 1 => match v[0] {
            Reply::Int(n) => n,
            ref other => panic!("BF.INFO {key} SIZE: {other:?}"),
        },
        other => panic!("BF.INFO {key} SIZE: {other:?}"),
    }
}

/// MEMORY USAGE of a key.
pub fn memory_usage(con: &mut redis::Connection, key: &str) -> i64 {
    match run(con, &["MEMORY", "USAGE", key]) {
        Reply::Int(n) => n,
        other => panic!("MEMORY USAGE {key}: {other:?}"),
    }
}

/// BF.DEBUG's lines as strings.
pub fn debug_lines(con: &mut redis::Connection, key: &str) -> Vec<String> {
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

// ---------------------------------------------------------------------------------------------
// Which server the tests run on, for the tests that assert one server's behaviour.

/// The servers rsbloom is tested on (`scripts/servers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Debian's Redis 7.0.15.
    Redis70,
    /// Redis 7.4.1.
    Redis74,
    /// Debian 13's Redis 8.0.2.
    Redis80,
    /// Debian 13's Valkey 8.1.1.
    Valkey81,
    /// Valkey 9.1.2.
    Valkey91,
}

impl Flavor {
    /// Module commands can have ACL categories (`RedisModule_SetCommandACLCategories`, from
    /// Redis 7.2) and rsbloom's `@bloom` one (`RedisModule_AddACLCategory`, Redis 7.4, Valkey).
    pub fn acl_categories(self) -> bool {
        self != Flavor::Redis70
    }

    pub fn is_valkey(self) -> bool {
        matches!(self, Flavor::Valkey81 | Flavor::Valkey91)
    }
}

/// The flavor of [`server_binary`], read once from its `--version`.
pub fn flavor() -> Flavor {
    static FLAVOR: std::sync::OnceLock<Flavor> = std::sync::OnceLock::new();
    *FLAVOR.get_or_init(|| {
        let out = Command::new(server_binary())
            .arg("--version")
            .output()
            .unwrap_or_else(|e| panic!("{} --version: {e}", server_binary()));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if text.starts_with("Valkey server v=9.1.") {
            Flavor::Valkey91
        } else if text.starts_with("Valkey server v=8.1.") {
            Flavor::Valkey81
        } else if text.starts_with("Redis server v=8.0.") {
            Flavor::Redis80
        } else if text.starts_with("Redis server v=7.4.") {
            Flavor::Redis74
        } else if text.starts_with("Redis server v=7.0.") {
            Flavor::Redis70
        } else {
            panic!(
                "{} is not a server rsbloom is tested on: {text}",
                server_binary()
            )
        }
    })
}

/// The NOPERM error for a command `user` may not run (reworded in Redis 7.2, so on Valkey).
pub fn noperm_command(user: &str, command: &str) -> Reply {
    err(&match flavor() {
        Flavor::Redis70 => {
            format!("NOPERM this user has no permissions to run the '{command}' command")
        }
        _ => format!("NOPERM User {user} has no permissions to run the '{command}' command"),
    })
}

/// The NOPERM error for a key the user may not touch (reworded in Redis 7.2, so on Valkey).
pub fn noperm_key() -> Reply {
    err(match flavor() {
        Flavor::Redis70 => {
            "NOPERM this user has no permissions to access one of the keys used as arguments"
        }
        _ => "NOPERM No permissions to access a key",
    })
}

/// The `BF.LOAD` blob of `key` in valkey-bloom's AOF rewrite (`tests/fixtures/valkey-bloom/`):
/// a valkey-bloom filter as valkey-bloom wrote it.
pub fn valkey_bloom_blob(key: &str) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/valkey-bloom/aof-rewrite-9.1.2/appendonly.aof.1.base.aof"
    );
    let aof = fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let name = format!("${}\r\n{key}\r\n", key.len());
    let at = aof
        .windows(name.len())
        .position(|w| w == name.as_bytes())
        .unwrap_or_else(|| panic!("no {key} in {path}"))
        + name.len();
    let rest = &aof[at..];
    let end = rest.iter().position(|&b| b == b'\r').unwrap();
    let len: usize = std::str::from_utf8(&rest[1..end]).unwrap().parse().unwrap();
    rest[end + 2..end + 2 + len].to_vec()
}
