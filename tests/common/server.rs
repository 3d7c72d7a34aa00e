//! The server a test runs: [`Server`], on a free 127.0.0.1 port in its own temporary
//! directory, started with the module and stopped by pid; its starts, waits, restarts and
//! logs.
#![allow(dead_code)]

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::ConnectionLike;

use super::*;

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
        // No read or write timeout: Linux fails a blocked socket read that has one with EINTR
        // when the process is stopped and continued (SIGSTOP/SIGCONT, a cgroup freeze), where a
        // read without one is restarted (checked on a socket pair: a read with a 60 s timeout
        // returned EINTR at SIGCONT, one without stayed blocked). The client crate gives the
        // EINTR to the test and skips that reply; CI failed on it twice, in a CF.INSERT of 1.2 MB.
        // A hung test shows in libtest's "has been running for over 60 seconds".
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

    /// A connection for pub/sub, read through [`next_message`]: its reads time out after 5 s,
    /// so that a notification that never comes fails the test instead of hanging it.
    pub fn subscriber(&self) -> redis::Connection {
        let con = self.connect(false);
        con.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        con
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
