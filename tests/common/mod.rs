//! Integration-test harness: runs a private server with the freshly built rsbloom module.
//!
//! Every test starts its own [`Server`] (own port on 127.0.0.1, own temp dir), stopped by pid.
//! - The server binary is `$RSBLOOM_TEST_SERVER`, by default Debian's `/usr/bin/redis-server`.
//! - The module is the one built with this test binary's own profile (see [`module_path`]).
//! - Every wait is bounded, and one that gives up says what it waited for and what the server
//!   logged ([`Server::wait_for`]).
#![allow(dead_code)]

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::{ConnectionLike, RedisError, Value};

/// The module under test: `librsbloom.so` of this test binary's own profile
/// (`target/<profile>/`, the parent of the `deps/` the test binary runs from). `cargo test`
/// builds only the library's rlib, not its cdylib, so the first call runs `cargo build --lib`
/// for that profile (a no-op when `make test` built it already): a test never loads a stale
/// module or one of another profile. `$RSBLOOM_TEST_MODULE` overrides it (only for checking
/// the harness and the expected replies against RedisBloom itself).
pub fn module_path() -> String {
    static MODULE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MODULE
        .get_or_init(|| match std::env::var("RSBLOOM_TEST_MODULE") {
            Ok(p) if !p.is_empty() => p,
            _ => build_module(),
        })
        .clone()
}

/// Builds the cdylib of the test binary's profile and returns its path.
fn build_module() -> String {
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
    let out = Command::new(&cargo)
        .args(["build", "--lib", "--profile", profile, "--target-dir"])
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("run {cargo} build: {e}"));
    assert!(
        out.status.success(),
        "cargo build --lib --profile {profile} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    profile_dir.join("librsbloom.so").display().to_string()
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

/// Sends one command and returns its raw reply, or the I/O / protocol failure.
pub fn try_raw<A: AsRef<[u8]>>(
    con: &mut redis::Connection,
    args: &[A],
) -> redis::RedisResult<Value> {
    con.req_command(&build_cmd(args))
}

/// Sends one command and returns its raw reply; error replies (also ones nested in arrays) are
/// kept as values. Panics only on I/O / protocol failures.
pub fn raw<A: AsRef<[u8]>>(con: &mut redis::Connection, args: &[A]) -> Value {
    match try_raw(con, args) {
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

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().unwrap().port()
}

fn fresh_dir() -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!(
        "rsbloom-test-{}-{}-{}",
        std::process::id(),
        n,
        nanos
    ));
    fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// How long a server may take to answer PING after it starts (loading a big RDB included).
const START_SECONDS: u64 = 60;

/// How a start ended.
enum Started {
    Ready,
    /// Exited or never answered; the text says which, with the log.
    Exited(String),
    /// Said in its log that it refused its data, then neither exited nor answered: killed.
    Refused(String),
}

/// What starting a server on a given RDB gave ([`Server::start_on_rdb`]).
pub enum RdbStart {
    /// The server exited (not by a signal) and logged why.
    Refused,
    /// The server logged that the RDB is corrupt and then spun in redis-check-rdb (Redis 7.0's
    /// `rdbLoadCheckModuleValue` loops forever at the end of a truncated module value; no module
    /// code runs there), so it was killed.
    RefusedThenHung,
    Loaded(Server),
}

pub struct Server {
    /// The server binary ([`server_binary`], unless started with [`Server::start_on`]).
    binary: String,
    /// A config file (with the module's `loadmodule` line in it) passed first, for the tests
    /// of CONFIG REWRITE ([`Server::with_config_file`]); else the module is on the command line.
    config_file: Option<PathBuf>,
    pub port: u16,
    pub pid: u32,
    pub dir: PathBuf,
    child: Option<Child>,
    /// The module loaded with `--loadmodule`.
    module: String,
    module_args: Vec<String>,
    config_args: Vec<String>,
    /// Cluster bus port (`--cluster-port`), 0 for a server that is not a cluster node.
    pub bus_port: u16,
    starts: usize,
    /// false until the first start succeeded (a failed start panics with the log already)
    started: bool,
}

impl Server {
    /// Server with the module loaded without arguments.
    pub fn new() -> Server {
        Server::with_args(&[], &[])
    }

    /// `module_args` follow the module path on `--loadmodule`; `config_args` are extra
    /// `redis-server` command-line arguments (e.g. `["--maxmemory", "100mb"]`).
    pub fn with_args(module_args: &[&str], config_args: &[&str]) -> Server {
        Server::try_with_args(module_args, config_args)
            .unwrap_or_else(|log| panic!("redis-server failed to start:\n{log}"))
    }

    /// Like [`Server::with_args`], but a server that exits during startup (e.g. because the
    /// module refused its arguments) is an `Err` holding the log instead of a panic.
    pub fn try_with_args(module_args: &[&str], config_args: &[&str]) -> Result<Server, String> {
        Server::try_with_module(&module_path(), None, module_args, config_args)
    }

    /// Like [`Server::try_with_args`], with an explicit module path (e.g. RedisBloom's, for
    /// migration tests), and optionally an RDB copied in as the new server's `dump.rdb` so that
    /// it loads at startup.
    pub fn try_with_module(
        module: &str,
        rdb: Option<&Path>,
        module_args: &[&str],
        config_args: &[&str],
    ) -> Result<Server, String> {
        Server::start(module, rdb, module_args, config_args, false)
    }

    /// A server started from a config file `dir/redis.conf` holding `lines` and then the
    /// module's `loadmodule` line, so that CONFIG REWRITE has a file to rewrite and a restart
    /// reads it back.
    pub fn with_config_file(lines: &str) -> Server {
        let mut s = Server::unstarted(&module_path(), &[], &[]);
        let file = s.dir.join("redis.conf");
        fs::write(&file, format!("{lines}\nloadmodule {}\n", s.module)).expect("write redis.conf");
        s.config_file = Some(file);
        s.spawn_on_a_free_port().unwrap_or_else(|log| {
            panic!("the server failed to start from its config file:\n{log}")
        });
        s.started = true;
        s
    }

    /// Like [`Server::try_with_module`], on another server `binary` than the tests' own (for
    /// the tests that move data between servers; see [`servers_path`]).
    pub fn start_on(
        binary: &str,
        module: &str,
        rdb: Option<&Path>,
        module_args: &[&str],
        config_args: &[&str],
    ) -> Result<Server, String> {
        let mut s = Server::unstarted(module, module_args, config_args);
        s.binary = binary.to_string();
        if let Some(rdb) = rdb {
            fs::copy(rdb, s.dir.join("dump.rdb")).expect("copy the RDB into the server's dir");
        }
        s.spawn_on_a_free_port().map(|()| {
            s.started = true;
            s
        })
    }

    /// Like [`Server::start_on`], with `files` (paths relative to the server's dir, and their
    /// bytes) written into its dir first: an RDB, or an `appendonlydir/` to replay.
    pub fn start_with_files(
        binary: &str,
        files: &[(&str, Vec<u8>)],
        config_args: &[&str],
    ) -> Result<Server, String> {
        let mut s = Server::unstarted(&module_path(), &[], config_args);
        s.binary = binary.to_string();
        for (name, bytes) in files {
            let path = s.dir.join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        s.spawn_on_a_free_port().map(|()| {
            s.started = true;
            s
        })
    }

    /// A cluster-enabled node (`--cluster-enabled yes`, its own `nodes.conf`, a free bus port
    /// given with `--cluster-port`, since `port + 10000` may be past 65535), not yet part of
    /// any cluster. `config_args` come after, e.g. `--cluster-node-timeout`.
    pub fn cluster_node(module_args: &[&str], config_args: &[&str]) -> Server {
        Server::start(&module_path(), None, module_args, config_args, true)
            .unwrap_or_else(|log| panic!("cluster node failed to start:\n{log}"))
    }

    /// A server not started yet, with its own dir.
    fn unstarted(module: &str, module_args: &[&str], config_args: &[&str]) -> Server {
        if !Path::new(module).exists() {
            panic!("{module} not found: build it first (cargo test builds it; make test does)");
        }
        Server {
            binary: server_binary(),
            config_file: None,
            port: 0,
            pid: 0,
            dir: fresh_dir(),
            child: None,
            module: module.to_string(),
            module_args: module_args.iter().map(|s| s.to_string()).collect(),
            config_args: config_args.iter().map(|s| s.to_string()).collect(),
            bus_port: 0,
            starts: 0,
            started: false,
        }
    }

    fn start(
        module: &str,
        rdb: Option<&Path>,
        module_args: &[&str],
        config_args: &[&str],
        cluster: bool,
    ) -> Result<Server, String> {
        let mut s = Server::unstarted(module, module_args, config_args);
        if let Some(rdb) = rdb {
            fs::copy(rdb, s.dir.join("dump.rdb")).expect("copy the RDB into the server's dir");
        }
        // The port is free when picked but another process could take it before redis binds
        // it; retry on a new port in that case.
        let mut attempt = 0;
        loop {
            s.port = free_port();
            if cluster {
                s.bus_port = free_port();
                while s.bus_port == s.port {
                    s.bus_port = free_port();
                }
            }
            match s.spawn_and_wait() {
                Ok(()) => {
                    s.started = true;
                    return Ok(s);
                }
                Err(log) if attempt < 3 && log.contains("Address already in use") => attempt += 1,
                Err(log) => return Err(format!("port {}: {log}", s.port)),
            }
        }
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join(format!("redis-{}.log", self.starts))
    }

    /// Contents of the current server log (stdout + stderr), lossily decoded: a log may hold
    /// binary key names that Redis printed while checking a corrupt RDB.
    pub fn log(&self) -> String {
        fs::read(self.log_path())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Starts the process (without waiting for it) with the harness's settings, then the module
    /// and its arguments, then the test's own config arguments.
    fn spawn(&mut self) {
        self.starts += 1;
        let log_path = self.log_path();
        // The server's own log (--logfile, which it opens for appending) and anything it prints
        // to stdout or stderr share one file: a server that refuses its RDB exits through
        // redis-check-rdb, whose report only reaches a log file.
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .expect("create log file");
        let mut cmd = Command::new(&self.binary);
        if let Some(file) = &self.config_file {
            cmd.arg(file);
        }
        cmd.arg("--logfile")
            .arg(&log_path)
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--bind")
            .arg("127.0.0.1")
            .arg("--dir")
            .arg(&self.dir)
            .arg("--dbfilename")
            .arg("dump.rdb")
            .arg("--save")
            .arg("")
            .arg("--appendonly")
            .arg("no")
            .arg("--enable-debug-command")
            .arg("yes")
            .arg("--daemonize")
            .arg("no");
        if self.config_file.is_none() {
            cmd.arg("--loadmodule").arg(&self.module);
            for a in &self.module_args {
                cmd.arg(a);
            }
        }
        if self.bus_port != 0 {
            cmd.args([
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
            ])
            .arg("--cluster-port")
            .arg(self.bus_port.to_string());
        }
        for a in &self.config_args {
            cmd.arg(a);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log));
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", self.binary));
        self.pid = child.id();
        self.child = Some(child);
    }

    /// Starts the server on a port picked free, and on a new one (three times at most) when
    /// another process took it before the server bound it.
    fn spawn_on_a_free_port(&mut self) -> Result<(), String> {
        let mut attempt = 0;
        loop {
            self.port = free_port();
            match self.spawn_and_wait() {
                Err(log) if attempt < 3 && log.contains("Address already in use") => attempt += 1,
                done => return done,
            }
        }
    }

    fn spawn_and_wait(&mut self) -> Result<(), String> {
        self.spawn();
        match self.wait_started(None) {
            Started::Ready => Ok(()),
            Started::Exited(log) | Started::Refused(log) => Err(log),
        }
    }

    /// Waits until the server answers PING (at most [`START_SECONDS`]) or exits. When
    /// `refused` recognises in the log that the server refused its data, the server gets one
    /// more second to exit and is then killed (Redis 7.0 can spin forever in its own RDB check
    /// after a module refused a value).
    fn wait_started(&mut self, refused: Option<fn(&str) -> bool>) -> Started {
        use std::os::unix::process::ExitStatusExt;
        let mut deadline = Instant::now() + Duration::from_secs(START_SECONDS);
        let mut refusal_seen = false;
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                assert!(
                    status.signal().is_none(),
                    "{} killed by signal {:?} while starting\n{}",
                    self.binary,
                    status.signal(),
                    self.log()
                );
                return Started::Exited(format!("exited with {status}\n{}", self.log()));
            }
            if self.ping() {
                return Started::Ready;
            }
            if let Some(refused) = refused {
                if !refusal_seen && refused(&self.log()) {
                    refusal_seen = true;
                    deadline = Instant::now() + Duration::from_secs(1);
                }
            }
            if Instant::now() > deadline {
                self.kill();
                let log = self.log();
                if refusal_seen {
                    return Started::Refused(log);
                }
                return Started::Exited(format!(
                    "no PING answer within {START_SECONDS} s (killed)\n{log}"
                ));
            }
            sleep(Duration::from_millis(20));
        }
    }

    /// Starts a server whose `dump.rdb` is `rdb` (with `config_args`): ready, or refused.
    /// `refused` tells from the log that the server refused the data; a server that exits
    /// without logging that, or is killed by a signal, fails the test.
    pub fn start_on_rdb(rdb: &[u8], config_args: &[&str], refused: fn(&str) -> bool) -> RdbStart {
        let mut s = Server::unstarted(&module_path(), &[], config_args);
        fs::write(s.dir.join("dump.rdb"), rdb).expect("write the RDB");
        s.port = free_port();
        s.spawn();
        match s.wait_started(Some(refused)) {
            Started::Ready => {
                s.started = true;
                RdbStart::Loaded(s)
            }
            Started::Exited(log) => {
                assert!(refused(&log), "exited without saying why:\n{log}");
                RdbStart::Refused
            }
            Started::Refused(_) => RdbStart::RefusedThenHung,
        }
    }

    /// A new server (with `config_args`) replicating `self`, returned once its link is up.
    pub fn start_replica(&self, config_args: &[&str]) -> Server {
        let port = self.port.to_string();
        let mut args = vec!["--replicaof", "127.0.0.1", &port];
        args.extend(config_args);
        let replica = Server::with_args(&[], &args);
        let mut c = replica.conn();
        replica.wait_for(
            &format!("the replication link to 127.0.0.1:{port} to be up"),
            60,
            || info_value(&mut c, "replication", "master_link_status").as_deref() == Some("up"),
        );
        replica
    }

    /// Waits (60 s at most) until no AOF rewrite is running or scheduled on this server.
    pub fn wait_for_aof_rewrite(&self, c: &mut redis::Connection) {
        self.wait_for("the AOF rewrite to finish", 60, || {
            info_field(c, "persistence", "aof_rewrite_in_progress") == "0"
                && info_field(c, "persistence", "aof_rewrite_scheduled") == "0"
        });
    }

    /// Polls `done` every 10 ms for at most `secs` seconds; when it gives up, fails the test
    /// saying what it waited for, with the server's log.
    pub fn wait_for(&self, what: &str, secs: u64, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while !done() {
            assert!(
                Instant::now() < deadline,
                "gave up after {secs} s waiting for {what}\n--- server log ({}) ---\n{}",
                self.log_path().display(),
                self.log()
            );
            sleep(Duration::from_millis(10));
        }
    }

    /// Whether the server answers PING within a second, over a raw socket: the client crate
    /// sends its own setup commands on connect and waits for their replies without a timeout,
    /// which never come from a server stuck in its RDB check.
    /// Whether this server answers PING, and is the process this harness started: a port
    /// picked free may be taken by another test's server before ours binds it (ours then
    /// exits with "Address already in use"), and a PONG from that one must not count.
    fn ping(&self) -> bool {
        use std::io::{Read, Write};
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        let Ok(mut stream) =
            std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500))
        else {
            return false;
        };
        let timeout = Some(Duration::from_secs(1));
        if stream.set_read_timeout(timeout).is_err()
            || stream.set_write_timeout(timeout).is_err()
            || stream.write_all(b"PING\r\nINFO server\r\n").is_err()
        {
            return false;
        }
        let mut reply = [0u8; 7];
        if stream.read_exact(&mut reply).is_err() || &reply != b"+PONG\r\n" {
            return false;
        }
        // INFO server's bulk reply, read until its process_id line has come.
        let ours = format!("process_id:{}\r\n", self.pid);
        let mut info = Vec::new();
        let mut buf = [0u8; 4096];
        while info.len() < 64 << 10 {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return false,
                Ok(n) => info.extend_from_slice(&buf[..n]),
            }
            let text = String::from_utf8_lossy(&info);
            if let Some(at) = text.find("process_id:") {
                if text[at..].contains("\r\n") {
                    return text[at..].starts_with(&ours);
                }
            }
        }
        false
    }

    fn url(&self, resp3: bool) -> String {
        if resp3 {
            format!("redis://127.0.0.1:{}/?protocol=resp3", self.port)
        } else {
            format!("redis://127.0.0.1:{}/", self.port)
        }
    }

    fn connect(&self, resp3: bool) -> redis::Connection {
        let client = redis::Client::open(self.url(resp3)).expect("client");
        let con = client
            .get_connection_with_timeout(Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect to port {}: {e}\n{}", self.port, self.log()));
        con.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        con.set_write_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        con
    }

    /// Every file of the server's AOF (Redis 7's multi-part AOF), concatenated.
    pub fn aof_bytes(&self) -> Vec<u8> {
        let dir = self.dir.join("appendonlydir");
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files.iter().flat_map(|f| fs::read(f).unwrap()).collect()
    }

    /// A RESP2 connection.
    pub fn conn(&self) -> redis::Connection {
        self.connect(false)
    }

    /// A RESP3 connection (the redis crate sends `HELLO 3` on connect).
    pub fn conn_resp3(&self) -> redis::Connection {
        self.connect(true)
    }

    /// Stops the server with `SHUTDOWN SAVE` (so the dataset is in dir/dump.rdb) and starts it
    /// again with the same port, dir and arguments, so that the RDB is loaded.
    pub fn restart(&mut self) {
        {
            let mut con = self.conn();
            // The connection drops when the server exits; the reply (if any) does not matter.
            let _ = con.req_command(&redis::cmd("SHUTDOWN").arg("SAVE").to_owned());
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match self.child.as_mut().unwrap().try_wait().unwrap() {
                Some(status) => {
                    assert!(
                        status.success(),
                        "SHUTDOWN SAVE exited with {status}\n{}",
                        self.log()
                    );
                    break;
                }
                None if Instant::now() > deadline => {
                    panic!("server did not exit after SHUTDOWN SAVE\n{}", self.log())
                }
                None => sleep(Duration::from_millis(20)),
            }
        }
        self.child = None;
        assert!(
            self.dir.join("dump.rdb").exists(),
            "no dump.rdb after SHUTDOWN SAVE\n{}",
            self.log()
        );
        if let Err(log) = self.spawn_and_wait() {
            panic!("redis-server failed to restart:\n{log}");
        }
    }

    /// SIGKILL by pid (a crash: nothing is saved) and reap it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a killed server again with the same port, dir (so a cluster node keeps its
    /// `nodes.conf`) and arguments.
    pub fn revive(&mut self) {
        assert!(!self.alive(), "revive: the server is still running");
        if let Err(log) = self.spawn_and_wait() {
            panic!("redis-server failed to start again:\n{log}");
        }
    }

    /// Is the server process still running?
    pub fn alive(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => c.try_wait().unwrap().is_none(),
            None => false,
        }
    }

    /// SIGTERM by pid, wait up to 10 s, then SIGKILL by pid.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                return;
            }
            sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        if std::thread::panicking() && self.started {
            // keep the log visible for a failed test
            eprintln!(
                "--- redis log ({}) ---\n{}",
                self.log_path().display(),
                self.log()
            );
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// RedisBloom 2.8.2's module, fetched once and cached by `scripts/redisbloom-so`, for the
/// tests that compare against it.
pub fn redisbloom_so() -> String {
    let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/redisbloom-so");
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
    let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/servers");
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
// RedisBloom 2.8.2's reply texts (the spec's), once for every test. The module keeps its own
// table in src/errors.rs; these are the tests' independent copy, so a wrong text there fails.

pub mod texts {
    pub const BAD_ERROR_RATE: &str = "ERR bad error rate";
    /// Ends in a space, as RedisBloom's does.
    pub const ERROR_RATE_RANGE: &str = "ERR (0 < error rate range < 1) ";
    pub const BAD_CAPACITY: &str = "ERR bad capacity";
    pub const CAPACITY_RANGE: &str = "ERR (capacity should be larger than 0)";
    pub const NO_EXPANSION: &str = "ERR no expansion";
    pub const BAD_EXPANSION: &str = "ERR bad expansion";
    pub const EXPANSION_RANGE: &str = "ERR expansion should be greater or equal to 1";
    pub const NONSCALING_EXPANSION: &str = "Nonscaling filters cannot expand";
    pub const ITEM_EXISTS: &str = "ERR item exists";
    pub const FULL: &str = "ERR non scaling filter is full";
    pub const NOT_FOUND: &str = "ERR not found";
    pub const INSERT_BAD_ERROR_RATE: &str = "Bad error rate";
    pub const INSERT_BAD_CAPACITY: &str = "Bad capacity";
    pub const INSERT_BAD_EXPANSION: &str = "Bad expansion";
    pub const INSERT_BAD_ARGUMENT: &str = "Bad argument received";
    pub const INSERT_UNKNOWN_ARGUMENT: &str = "Unknown argument received";
    pub const INVALID_INFO_VALUE: &str = "Invalid information value";
    pub const SCANDUMP_BAD_ITERATOR: &str = "Second argument must be numeric";
    pub const LOADCHUNK_BAD_ITERATOR: &str = "ERR Second argument must be numeric";
    pub const BAD_DATA: &str = "ERR received bad data";
    pub const NO_LINK: &str = "ERR invalid offset - no link found";
    pub const CHUNK_TOO_BIG: &str = "ERR invalid chunk - Too big for current filter";
    /// rsbloom's own.
    pub const BAD_SEED: &str = "ERR SEED needs an unsigned 64-bit integer";
    pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
    /// rsbloom's own: `*.RESERVE` refuses, by name, an argument RedisBloom silently ignores.
    pub fn unknown_argument(command: &str, arg: &str) -> String {
        format!("ERR unknown argument '{arg}' for {command}")
    }

    /// rsbloom's own: a Bloom filter's window word given to a cuckoo command.
    pub fn window_word_on_cuckoo(word: &str) -> String {
        format!(
            "ERR {word} is an option of Bloom filters (BF.RESERVE, BF.INSERT): cuckoo filters \
             have no window"
        )
    }

    /// Redis's own RESTORE text for a payload its module type refused.
    pub const RESTORE_BAD_DATA: &str = "ERR Bad data format";

    /// The CF.* texts, RedisBloom 2.8.2's (most without `ERR`, some with a full stop).
    pub mod cf {
        pub const BAD_CAPACITY: &str = "Bad capacity";
        pub const CAPACITY_RANGE: &str = "Capacity must be at least (BucketSize * 2)";
        pub const PARSE_MAX_ITERATIONS: &str = "Couldn't parse MAXITERATIONS";
        pub const PARSE_BUCKET_SIZE: &str = "Couldn't parse BUCKETSIZE";
        pub const PARSE_EXPANSION: &str = "Couldn't parse EXPANSION";
        pub const MAX_ITERATIONS_RANGE: &str =
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.";
        pub const BUCKET_SIZE_RANGE: &str =
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.";
        pub const EXPANSION_RANGE: &str =
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.";
        pub const INSUFFICIENT_MEMORY_CREATE: &str = "ERR Insufficient memory to create filter";
        pub const FULL: &str = "Filter is full";
        pub const MAX_EXPANSIONS: &str = "Maximum expansions reached";
        pub const DEL_NOT_FOUND: &str = "Not found";
        pub const COMPACT_NOT_FOUND: &str = "Cuckoo filter was not found";
        pub const INVALID_POSITION: &str = "Invalid position";
        pub const INVALID_HEADER: &str = "Invalid header";
        pub const CANNOT_CREATE: &str = "Couldn't create filter!";
        pub const CANNOT_LOAD_CHUNK: &str = "Couldn't load chunk!";
    }
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
        "/tests/fixtures/valkey-bloom/aof-rewrite-9.1.2/appendonly.aof.1.base.aof"
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
