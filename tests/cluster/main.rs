//! Redis Cluster: 3 primaries + 3 replicas on 127.0.0.1 with the module, one filter key per
//! hash slot, 1,000,000 items written through the `redis` crate's cluster client, read back from
//! every entry node; a primary killed with SIGKILL and its replica promoted; slots resharded with
//! `redis-cli --cluster reshard` (MIGRATE, so DUMP/RESTORE of the data type). Also DUMP/RESTORE
//! on single servers. Run with `make test-cluster` (figures with `--nocapture`).

#[path = "../common/mod.rs"]
mod common;

mod migration;
mod single;
mod story;

use std::collections::BTreeSet;
use std::fs::File;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::*;
use redis::cluster::{cluster_pipe, ClusterClient, ClusterConnection};
use redis::Value;

const SLOTS: usize = 16384;
const ITEMS: usize = 1_000_000;
/// Items are written in this many rounds, as a stream of batches would arrive.
const ROUNDS: usize = 10;
/// Commands per cluster pipeline.
const PIPE: usize = 2048;
const RESHARD_SLOTS: usize = 1000;
/// Every node's extra arguments. A short node timeout makes failover take seconds; no diskless
/// sync delay, so replicas sync as soon as they attach.
const NODE_ARGS: &[&str] = &[
    "--cluster-node-timeout",
    "2000",
    "--repl-diskless-sync-delay",
    "0",
];

/// Redis's key hash: CRC16-CCITT (XMODEM) of the key, or of its `{hash tag}`, mod 16384.
fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

fn key_slot(key: &str) -> usize {
    let k = key.as_bytes();
    let tagged = k.iter().position(|&c| c == b'{').and_then(|open| {
        let close = k[open + 1..].iter().position(|&c| c == b'}')?;
        (close > 0).then(|| &k[open + 1..open + 1 + close])
    });
    usize::from(crc16(tagged.unwrap_or(k))) % SLOTS
}

/// One key per slot: `urls:{t}` with the first tag `t` that hashes to that slot.
fn key_per_slot() -> Vec<String> {
    let mut keys: Vec<Option<String>> = vec![None; SLOTS];
    let mut missing = SLOTS;
    let mut t = 0u64;
    while missing > 0 {
        let key = format!("urls:{{{t}}}");
        let slot = key_slot(&key);
        if keys[slot].is_none() {
            keys[slot] = Some(key);
            missing -= 1;
        }
        t += 1;
    }
    keys.into_iter().map(Option::unwrap).collect()
}

/// The client-side routing of the README recipe: an item goes to the filter of slot
/// `crc16(item) mod 16384`.
fn route(item: &str) -> usize {
    usize::from(crc16(item.as_bytes())) % SLOTS
}

fn url(prefix: &str, i: usize) -> String {
    format!("https://{prefix}{}.example/path/{i}", i % 1009)
}

/// Item indices grouped by the slot (filter key) they route to.
fn by_slot(items: &[String]) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new(); SLOTS];
    for (i, item) in items.iter().enumerate() {
        out[route(item)].push(i as u32);
    }
    out
}

fn text(con: &mut redis::Connection, args: &[&str]) -> String {
    match run(con, args) {
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        Reply::Status(s) => s,
        other => panic!("{args:?}: {other:?}"),
    }
}

fn cluster_info(con: &mut redis::Connection, field: &str) -> String {
    text(con, &["CLUSTER", "INFO"])
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in CLUSTER INFO"))
        .trim()
        .to_string()
}

/// One line of CLUSTER NODES.
#[derive(Debug, Clone)]
struct NodeLine {
    id: String,
    port: u16,
    flags: Vec<String>,
    master: String,
    slots: BTreeSet<usize>,
}

impl NodeLine {
    fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

fn cluster_nodes(con: &mut redis::Connection) -> Vec<NodeLine> {
    text(con, &["CLUSTER", "NODES"])
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let addr = f[1].split('@').next().unwrap();
            let port = addr.rsplit(':').next().unwrap().parse().unwrap_or(0);
            let mut slots = BTreeSet::new();
            // slots come as `n` or `a-b`; `[n->-id]` entries are migrations in progress
            for s in f.iter().skip(8).filter(|s| !s.starts_with('[')) {
                match s.split_once('-') {
                    Some((a, b)) => slots.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
                    None => {
                        slots.insert(s.parse().unwrap());
                    }
                }
            }
            NodeLine {
                id: f[0].to_string(),
                port,
                flags: f[2].split(',').map(String::from).collect(),
                master: f[3].to_string(),
                slots,
            }
        })
        .collect()
}

fn myself(con: &mut redis::Connection) -> NodeLine {
    cluster_nodes(con)
        .into_iter()
        .find(|n| n.has("myself"))
        .expect("a myself line")
}

/// A child process (redis-cli) that is killed by pid if the test panics while it runs.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Runs redis-cli with `args`, output to a log in `dir`; returns (success, output).
fn redis_cli(dir: &std::path::Path, args: &[String], timeout_secs: u64) -> (bool, String) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let log_path = dir.join(format!("redis-cli-{n}.log"));
    let log = File::create(&log_path).unwrap();
    let child = Command::new("redis-cli")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .spawn()
        .expect("spawn redis-cli");
    let mut guard = ChildGuard(child);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = guard.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(timeout_secs),
            "redis-cli {args:?} still running after {timeout_secs} s:\n{}",
            std::fs::read_to_string(&log_path).unwrap_or_default()
        );
        sleep(Duration::from_millis(50));
    };
    let out = std::fs::read_to_string(&log_path).unwrap_or_default();
    (status.success(), out)
}

/// Six nodes joined by `redis-cli --cluster create ... --cluster-replicas 1`.
struct Cluster {
    nodes: Vec<Server>,
}

impl Cluster {
    /// Polls `done` every 100 ms until it holds and returns how long that took, or fails the
    /// test after `secs` saying what it waited for, with the end of every node's log.
    fn wait_for(&self, secs: u64, what: &str, mut done: impl FnMut() -> bool) -> Duration {
        let start = Instant::now();
        while !done() {
            if start.elapsed() > Duration::from_secs(secs) {
                let logs: Vec<String> = self
                    .nodes
                    .iter()
                    .map(|n| {
                        let log = n.log();
                        let tail: Vec<&str> = log.lines().rev().take(30).collect();
                        let tail: Vec<&str> = tail.into_iter().rev().collect();
                        format!(
                            "--- node {} (pid {}) ---\n{}",
                            n.port,
                            n.pid,
                            tail.join("\n")
                        )
                    })
                    .collect();
                panic!(
                    "gave up after {secs} s waiting for {what}\n{}",
                    logs.join("\n")
                );
            }
            sleep(Duration::from_millis(100));
        }
        start.elapsed()
    }

    fn start() -> Cluster {
        let nodes: Vec<Server> = (0..6)
            .map(|_| Server::cluster_node(&[], NODE_ARGS))
            .collect();
        let mut args = vec!["--cluster".to_string(), "create".to_string()];
        args.extend(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)));
        args.extend(["--cluster-replicas", "1", "--cluster-yes"].map(String::from));
        let (ok, out) = redis_cli(&nodes[0].dir, &args, 120);
        assert!(ok, "redis-cli --cluster create failed:\n{out}");
        assert!(out.contains("All 16384 slots covered"), "{out}");
        let cluster = Cluster { nodes };
        cluster.wait_healthy(6, 3, 60);
        cluster
    }

    fn index_of_port(&self, port: u16) -> usize {
        self.nodes
            .iter()
            .position(|n| n.port == port)
            .unwrap_or_else(|| panic!("no node on port {port}"))
    }

    /// Every live node says cluster_state:ok, knows `known` nodes and sees `replicas` live
    /// replicas and every slot on a live primary; every replica's link to its primary is up with
    /// no sync in progress.
    fn wait_healthy(&self, known: usize, replicas: usize, secs: u64) -> Duration {
        self.wait_for(secs, "a healthy cluster", || {
            self.nodes.iter().all(|n| {
                let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{}/", n.port))
                else {
                    return false;
                };
                let Ok(mut c) = client.get_connection_with_timeout(Duration::from_millis(500))
                else {
                    return true; // a killed node is not asked
                };
                if cluster_info(&mut c, "cluster_state") != "ok"
                    || cluster_info(&mut c, "cluster_known_nodes") != known.to_string()
                    || cluster_info(&mut c, "cluster_slots_assigned") != SLOTS.to_string()
                {
                    return false;
                }
                let lines = cluster_nodes(&mut c);
                let live_replicas = lines
                    .iter()
                    .filter(|l| l.has("slave") && !l.has("fail"))
                    .count();
                let served: usize = lines
                    .iter()
                    .filter(|l| l.has("master") && !l.has("fail"))
                    .map(|l| l.slots.len())
                    .sum();
                if live_replicas != replicas || served != SLOTS {
                    return false;
                }
                match info_value(&mut c, "replication", "role").as_deref() {
                    Some("slave") => {
                        info_value(&mut c, "replication", "master_link_status").as_deref()
                            == Some("up")
                            && info_value(&mut c, "replication", "master_sync_in_progress")
                                .as_deref()
                                == Some("0")
                    }
                    _ => true,
                }
            })
        })
    }

    /// Waits until every live node maps the slots to the same primaries. A reshard tells the
    /// nodes it moves slots between at once and the others by gossip: a client that took its
    /// slot map from one of those meanwhile sends commands to the old owner, whose MOVED the
    /// sync cluster pipeline does not follow (a CI run failed so, right after a reshard).
    fn wait_slots_agree(&self, secs: u64) -> Duration {
        self.wait_for(secs, "every node to agree on the slots' owners", || {
            let views: Vec<Vec<(String, BTreeSet<usize>)>> = self
                .nodes
                .iter()
                .filter_map(|n| {
                    let client =
                        redis::Client::open(format!("redis://127.0.0.1:{}/", n.port)).ok()?;
                    // A killed node is not asked.
                    let mut c = client
                        .get_connection_with_timeout(Duration::from_millis(500))
                        .ok()?;
                    let mut owners: Vec<(String, BTreeSet<usize>)> = cluster_nodes(&mut c)
                        .into_iter()
                        .filter(|l| l.has("master") && !l.slots.is_empty())
                        .map(|l| (l.id, l.slots))
                        .collect();
                    owners.sort();
                    Some(owners)
                })
                .collect();
            views.windows(2).all(|pair| pair[0] == pair[1])
        })
    }

    /// (primary index, replica index) pairs, by the primaries' first slot.
    fn pairs(&self, via: usize) -> Vec<(usize, usize)> {
        let lines = cluster_nodes(&mut self.nodes[via].conn());
        let mut primaries: Vec<&NodeLine> = lines
            .iter()
            .filter(|n| n.has("master") && !n.has("fail") && !n.slots.is_empty())
            .collect();
        primaries.sort_by_key(|n| *n.slots.first().unwrap());
        primaries
            .iter()
            .map(|p| {
                let r = lines
                    .iter()
                    .find(|n| n.has("slave") && n.master == p.id && !n.has("fail"))
                    .unwrap_or_else(|| panic!("no replica of {}", p.id));
                (self.index_of_port(p.port), self.index_of_port(r.port))
            })
            .collect()
    }

    fn client(&self, entry: usize) -> ClusterConnection {
        let url = format!("redis://127.0.0.1:{}/", self.nodes[entry].port);
        let client = ClusterClient::builder(vec![url])
            .connection_timeout(Duration::from_secs(5))
            // no response timeout: a read that has one fails with EINTR when the process is
            // stopped and continued (see `Server::connect`)
            .build()
            .expect("cluster client");
        client
            .get_connection()
            .unwrap_or_else(|e| panic!("cluster connection via node {entry}: {e}"))
    }
}

/// Sends `cmds` through a cluster pipeline in batches and returns every reply in order.
fn cluster_run(con: &mut ClusterConnection, cmds: &[redis::Cmd]) -> Vec<Value> {
    let mut out = Vec::with_capacity(cmds.len());
    for batch in cmds.chunks(PIPE) {
        let mut p = cluster_pipe();
        for c in batch {
            p.add_command(c.clone());
        }
        let replies: Vec<Value> = p
            .query(con)
            .unwrap_or_else(|e| panic!("cluster pipeline: {e}"));
        assert_eq!(replies.len(), batch.len());
        out.extend(replies);
    }
    out
}

fn bf_cmd(name: &str, key: &str, items: &[String], idx: &[u32]) -> redis::Cmd {
    let mut c = redis::cmd(name);
    c.arg(key);
    for &i in idx {
        c.arg(&items[i as usize]);
    }
    c
}

/// 0/1 integers of a BF.MADD / BF.MEXISTS reply of `n` items.
fn flags(v: &Value, n: usize, what: &str) -> Vec<bool> {
    match v {
        Value::Array(a) if a.len() == n => a
            .iter()
            .map(|x| match x {
                Value::Int(0) => false,
                Value::Int(1) => true,
                other => panic!("{what}: element {other:?}"),
            })
            .collect(),
        other => panic!("{what}: {other:?}"),
    }
}

/// BF.MADD of `items[lo..hi]` into their keys; returns (items acknowledged, answered new).
fn write_range(
    con: &mut ClusterConnection,
    keys: &[String],
    items: &[String],
    slots: &[Vec<u32>],
    lo: u32,
    hi: u32,
) -> (usize, usize) {
    let mut cmds = Vec::new();
    let mut sizes = Vec::new();
    for (slot, idx) in slots.iter().enumerate() {
        let part: Vec<u32> = idx.iter().copied().filter(|&i| i >= lo && i < hi).collect();
        if !part.is_empty() {
            cmds.push(bf_cmd("BF.MADD", &keys[slot], items, &part));
            sizes.push(part.len());
        }
    }
    let replies = cluster_run(con, &cmds);
    let (mut acked, mut new) = (0, 0);
    for (r, &n) in replies.iter().zip(&sizes) {
        let f = flags(r, n, "BF.MADD");
        acked += n;
        new += f.iter().filter(|&&b| b).count();
    }
    (acked, new)
}

/// BF.MEXISTS of every item in `slots` (restricted to `only` slots when given) through the
/// cluster client; returns (checked, absent).
fn check_items(
    con: &mut ClusterConnection,
    keys: &[String],
    items: &[String],
    slots: &[Vec<u32>],
    only: Option<&BTreeSet<usize>>,
) -> (usize, usize) {
    let mut cmds = Vec::new();
    let mut sizes = Vec::new();
    for (slot, idx) in slots.iter().enumerate() {
        if idx.is_empty() || only.is_some_and(|o| !o.contains(&slot)) {
            continue;
        }
        cmds.push(bf_cmd("BF.MEXISTS", &keys[slot], items, idx));
        sizes.push(idx.len());
    }
    let replies = cluster_run(con, &cmds);
    let (mut checked, mut absent) = (0, 0);
    for (r, &n) in replies.iter().zip(&sizes) {
        checked += n;
        absent += flags(r, n, "BF.MEXISTS").iter().filter(|&&b| !b).count();
    }
    (checked, absent)
}

/// The same check on a plain connection to one node (which must serve every slot asked).
fn check_direct(
    con: &mut redis::Connection,
    keys: &[String],
    items: &[String],
    slots: &[Vec<u32>],
    only: &BTreeSet<usize>,
) -> (usize, usize) {
    let mut cmds: Vec<Vec<&str>> = Vec::new();
    for &slot in only.iter().filter(|&&s| !slots[s].is_empty()) {
        let mut c = vec!["BF.MEXISTS", keys[slot].as_str()];
        c.extend(slots[slot].iter().map(|&i| items[i as usize].as_str()));
        cmds.push(c);
    }
    let (mut checked, mut absent) = (0, 0);
    for batch in cmds.chunks(PIPE) {
        for (reply, c) in pipeline(con, batch).iter().zip(batch) {
            let n = c.len() - 2;
            let Reply::Arr(a) = reply else {
                panic!("BF.MEXISTS {}: {reply:?}", c[1])
            };
            assert_eq!(a.len(), n);
            checked += n;
            absent += a.iter().filter(|r| **r != int(1)).count();
        }
    }
    (checked, absent)
}

/// `redis-cli --cluster reshard` of `slots` slots from node id `from` to node id `to`, through
/// node `via`; returns its wall time.
fn reshard(cl: &Cluster, via: usize, from: &str, to: &str, slots: usize) -> f64 {
    let t = Instant::now();
    let args: Vec<String> = vec![
        "--cluster".into(),
        "reshard".into(),
        format!("127.0.0.1:{}", cl.nodes[via].port),
        "--cluster-from".into(),
        from.into(),
        "--cluster-to".into(),
        to.into(),
        "--cluster-slots".into(),
        slots.to_string(),
        "--cluster-yes".into(),
    ];
    let (ok, out) = redis_cli(&cl.nodes[via].dir, &args, 300);
    assert!(ok, "reshard failed:\n{out}");
    assert!(out.contains("Moving slot"), "{out}");
    let secs = t.elapsed().as_secs_f64();
    cl.wait_slots_agree(60);
    secs
}

fn digests(con: &mut redis::Connection, keys: &[&str]) -> Vec<Reply> {
    let cmds: Vec<Vec<&str>> = keys
        .iter()
        .map(|k| vec!["DEBUG", "DIGEST-VALUE", k])
        .collect();
    pipeline(con, &cmds)
}

fn dataset_digest(con: &mut redis::Connection) -> String {
    text(con, &["DEBUG", "DIGEST"])
}

/// Items deleted from the cluster test's cuckoo filter (the first ones added).
const CUCKOO_DELETED: usize = 200;

/// CF.MEXISTS of the cuckoo filter's items that were not deleted.
fn cuckoo_kept(c: &mut redis::Connection, key: &str, items: &[String]) -> Reply {
    let mut mexists = vec!["CF.MEXISTS", key];
    mexists.extend(items[CUCKOO_DELETED..].iter().map(String::as_str));
    run(c, &mexists)
}
