//! Integration-test harness: runs a private `redis-server` with the freshly built rsbloom module.
//!
//! Every test starts its own [`Server`] (own port, own temp dir). The module must be built first
//! (`cargo build --release`, which `make test` does).
#![allow(dead_code)]

use std::fs::{self, File};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::{ConnectionLike, RedisError, Value};

pub const MODULE_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/librsbloom.so");

/// The module under test: [`MODULE_PATH`], or `$RSBLOOM_TEST_MODULE` if set (only for checking
/// the harness and the expected replies against RedisBloom itself).
pub fn module_path() -> String {
    match std::env::var("RSBLOOM_TEST_MODULE") {
        Ok(p) if !p.is_empty() => p,
        _ => MODULE_PATH.to_string(),
    }
}
pub const REDIS_SERVER: &str = "/usr/bin/redis-server";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

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
    let c = build_cmd(args);
    match con.req_command(&c) {
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

pub struct Server {
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

    /// A cluster-enabled node (`--cluster-enabled yes`, its own `nodes.conf`, a free bus port
    /// given with `--cluster-port`, since `port + 10000` may be past 65535), not yet part of
    /// any cluster. `config_args` come after, e.g. `--cluster-node-timeout`.
    pub fn cluster_node(module_args: &[&str], config_args: &[&str]) -> Server {
        Server::start(&module_path(), None, module_args, config_args, true)
            .unwrap_or_else(|log| panic!("cluster node failed to start:\n{log}"))
    }

    fn start(
        module: &str,
        rdb: Option<&Path>,
        module_args: &[&str],
        config_args: &[&str],
        cluster: bool,
    ) -> Result<Server, String> {
        if !Path::new(module).exists() {
            panic!("{module} not found: run cargo build --release first (make test does)");
        }
        let mut s = Server {
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
        };
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

    /// Contents of the current server log (stdout + stderr).
    pub fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn spawn_and_wait(&mut self) -> Result<(), String> {
        self.starts += 1;
        let log_path = self.log_path();
        let log = File::create(&log_path).expect("create log file");
        let mut cmd = Command::new(REDIS_SERVER);
        cmd.arg("--port")
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
            .arg("no")
            .arg("--loadmodule")
            .arg(&self.module);
        for a in &self.module_args {
            cmd.arg(a);
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
        let child = cmd.spawn().expect("spawn /usr/bin/redis-server");
        self.pid = child.id();
        self.child = Some(child);

        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                return Err(format!("exited with {status}\n{}", self.log()));
            }
            if self.ping() {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(format!("no PING answer within 10 s\n{}", self.log()));
            }
            sleep(Duration::from_millis(20));
        }
    }

    fn ping(&self) -> bool {
        let Ok(client) = redis::Client::open(self.url(false)) else {
            return false;
        };
        let Ok(mut con) = client.get_connection_with_timeout(Duration::from_millis(500)) else {
            return false;
        };
        let _ = con.set_read_timeout(Some(Duration::from_secs(2)));
        matches!(redis::cmd("PING").query::<String>(&mut con), Ok(ref s) if s == "PONG")
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
