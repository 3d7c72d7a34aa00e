//! Redis Cluster: 3 primaries + 3 replicas on 127.0.0.1 with the module, one filter key per
//! hash slot, 1,000,000 items written through the `redis` crate's cluster client, read back from
//! every entry node; a primary killed with SIGKILL and its replica promoted; slots resharded with
//! `redis-cli --cluster reshard` (MIGRATE, so DUMP/RESTORE of the data type). Also DUMP/RESTORE
//! on single servers. Run with `make test-cluster` (figures with `--nocapture`).

mod common;

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
            .response_timeout(Duration::from_secs(60))
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
    t.elapsed().as_secs_f64()
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

/// The filters that are not scaling filters, all in one slot of the primary the failover
/// kills: a count window, a time window and a cuckoo filter with some items deleted.
struct Others {
    slot: usize,
    /// (key, BF.RESERVE's window word, its value).
    windows: [(String, &'static str, Option<&'static str>); 2],
    items: Vec<String>,
    cuckoo: String,
}

/// A batch of items written, with their indexes by slot (whose key holds them).
struct Batch {
    items: Vec<String>,
    slots: Vec<Vec<u32>>,
}

impl Batch {
    fn new(items: Vec<String>) -> Self {
        let slots = by_slot(&items);
        Batch { items, slots }
    }
}

/// What the failover leaves: who died, who took over, and what was written after.
struct AfterFailover {
    victim: usize,
    heir: usize,
    heir_id: String,
    after: Batch,
}

/// What the first reshard leaves: the nodes on each side and what was written after.
struct AfterReshard {
    source: usize,
    target: usize,
    target_replica: usize,
    target_id: String,
    more: Batch,
}

/// The story of one cluster: a million items written, read back everywhere, a primary killed,
/// slots resharded away and back under writes; every stage asserts that nothing acknowledged
/// is lost.
#[test]
fn cluster_million_items_failover_and_reshard() {
    let t_all = Instant::now();
    let mut cl = Cluster::start();
    let pairs = cl.pairs(0);
    let keys = key_per_slot();
    let items = write_million_items(&cl, &pairs, &keys, t_all);
    every_node_reads_every_item(&cl, &pairs, &keys, &items);
    let others = add_other_filters(&cl, &pairs, &keys);
    let failed = survive_failover(&mut cl, &pairs, &keys, &items, &others);
    rejoin_as_replica(&mut cl, &failed);
    let resharded = survive_reshard(
        &cl,
        &pairs,
        &keys,
        &[&items, &failed.after],
        &others,
        &failed,
    );
    let during = survive_reshard_back_under_writes(&cl, &keys, &others, &failed, &resharded);
    let mut con = cl.client(failed.victim);
    // Every primary's replica ends with the same data.
    for &(p, r) in &cl.pairs(resharded.source) {
        wait_caught_up(&mut cl.nodes[p].conn(), &mut cl.nodes[r].conn());
        assert_eq!(
            dataset_digest(&mut cl.nodes[p].conn()),
            dataset_digest(&mut cl.nodes[r].conn())
        );
    }
    let t = Instant::now();
    let mut total = 0;
    for batch in [&items, &failed.after, &resharded.more, &during] {
        let (checked, absent) = check_items(&mut con, &keys, &batch.items, &batch.slots, None);
        assert_eq!(absent, 0);
        total += checked;
    }
    assert_eq!(
        total,
        ITEMS + failed.after.items.len() + resharded.more.items.len() + during.items.len()
    );
    println!(
        "cluster: final check via the rejoined node: {total} items, 0 missing ({:.1} s); whole test {:.1} s",
        t.elapsed().as_secs_f64(),
        t_all.elapsed().as_secs_f64()
    );
}

/// The module is loaded everywhere, one filter key per slot is reserved, and a million items
/// are written through the cluster client: every add acknowledged, every key grown.
fn write_million_items(
    cl: &Cluster,
    pairs: &[(usize, usize)],
    keys: &[String],
    t_all: Instant,
) -> Batch {
    assert_eq!(pairs.len(), 3, "3 primaries, each with a replica");
    println!(
        "cluster: 3 primaries + 3 replicas up in {:.1} s (ports {:?})",
        t_all.elapsed().as_secs_f64(),
        cl.nodes.iter().map(|n| n.port).collect::<Vec<_>>()
    );
    for n in &cl.nodes {
        let Reply::Arr(mods) = run(&mut n.conn(), &["MODULE", "LIST"]) else {
            panic!("MODULE LIST")
        };
        assert!(
            mods.iter()
                .any(|m| matches!(m, Reply::Arr(f) if f.get(1) == Some(&bulk("bf")))),
            "module bf loaded on port {}: {mods:?}",
            n.port
        );
    }

    // One filter key per slot; the test's CRC16 agrees with the server's.
    {
        let mut c = cl.nodes[0].conn();
        for slot in (0..SLOTS).step_by(997) {
            assert_eq!(
                run(&mut c, &["CLUSTER", "KEYSLOT", &keys[slot]]),
                int(slot as i64),
                "{}",
                keys[slot]
            );
        }
    }
    let batch = Batch::new((0..ITEMS).map(|i| url("host", i)).collect());
    let (items, slots) = (&batch.items, &batch.slots);
    let per_key: Vec<usize> = slots.iter().map(Vec::len).collect();
    assert!(per_key.iter().all(|&n| n > 0), "every key gets items");

    let mut con = cl.client(0);
    let t = Instant::now();
    let reserves: Vec<redis::Cmd> = keys
        .iter()
        .map(|k| {
            let mut c = redis::cmd("BF.RESERVE");
            c.arg(k).arg("0.01").arg("32");
            c
        })
        .collect();
    for r in cluster_run(&mut con, &reserves) {
        assert_eq!(r, Value::Okay);
    }
    let (mut acked, mut new) = (0, 0);
    let round = (ITEMS / ROUNDS) as u32;
    for r in 0..ROUNDS as u32 {
        let (a, n) = write_range(&mut con, keys, items, slots, r * round, (r + 1) * round);
        acked += a;
        new += n;
    }
    let write_secs = t.elapsed().as_secs_f64();
    assert_eq!(acked, ITEMS);
    // An add answers 0 only for a false positive against the items before it.
    assert!(ITEMS - new < ITEMS / 100, "{} adds answered 0", ITEMS - new);
    println!(
        "cluster: {SLOTS} filters reserved (one per slot) and {ITEMS} items written with BF.MADD ({}..{} per key, {ROUNDS} rounds of cluster pipelines) in {write_secs:.1} s; {new} answered new, {} were false positives at insert",
        per_key.iter().min().unwrap(),
        per_key.iter().max().unwrap(),
        ITEMS - new
    );
    let mut dbsize = 0;
    for &(p, _) in pairs {
        match run(&mut cl.nodes[p].conn(), &["DBSIZE"]) {
            Reply::Int(n) => dbsize += n,
            other => panic!("DBSIZE {other:?}"),
        }
    }
    assert_eq!(dbsize, SLOTS as i64);
    // Scaling filters of capacity 32 with ~61 items each have grown more links.
    let infos: Vec<redis::Cmd> = keys
        .iter()
        .map(|k| {
            let mut c = redis::cmd("BF.INFO");
            c.arg(k).arg("FILTERS");
            c
        })
        .collect();
    let mut links: std::collections::BTreeMap<i64, usize> = Default::default();
    for v in cluster_run(&mut con, &infos) {
        match v {
            Value::Array(a) => match a[..] {
                [Value::Int(n)] => *links.entry(n).or_default() += 1,
                _ => panic!("BF.INFO FILTERS {a:?}"),
            },
            other => panic!("BF.INFO FILTERS {other:?}"),
        }
    }
    assert!(links.range(2..).map(|(_, n)| n).sum::<usize>() > SLOTS * 9 / 10);
    println!("cluster: filters by number of links: {links:?}");
    batch
}

/// Every item reads back from every entry node, primaries and replicas alike; a plain
/// connection is sent to the owner, and a replica answers reads after READONLY.
fn every_node_reads_every_item(
    cl: &Cluster,
    pairs: &[(usize, usize)],
    keys: &[String],
    batch: &Batch,
) {
    let (items, slots) = (&batch.items, &batch.slots);
    for entry in 0..cl.nodes.len() {
        let t = Instant::now();
        let mut c = cl.client(entry);
        let (checked, absent) = check_items(&mut c, keys, items, slots, None);
        assert_eq!((checked, absent), (ITEMS, 0), "via node {entry}");
        println!(
            "cluster: entry node {entry} (port {}): {checked} items checked with BF.MEXISTS, {absent} missing, {:.1} s",
            cl.nodes[entry].port,
            t.elapsed().as_secs_f64()
        );
    }
    // A plain connection gets MOVED to the owner; a replica answers reads after READONLY.
    for &(p, r) in pairs {
        let mine = myself(&mut cl.nodes[p].conn()).slots;
        let foreign = (0..SLOTS).find(|s| !mine.contains(s)).unwrap();
        let moved = run(&mut cl.nodes[p].conn(), &["BF.EXISTS", &keys[foreign], "x"]);
        assert!(
            moved
                .err_text()
                .starts_with(&format!("MOVED {foreign} 127.0.0.1:")),
            "{moved:?}"
        );
        let mut rc = cl.nodes[r].conn();
        let write = run(&mut rc, &["BF.ADD", &keys[*mine.first().unwrap()], "y"]);
        assert!(write.err_text().starts_with("MOVED "), "{write:?}");
        assert_eq!(run(&mut rc, &["READONLY"]), ok());
        let (checked, absent) = check_direct(&mut rc, keys, items, slots, &mine);
        assert_eq!(absent, 0);
        println!(
            "cluster: replica on port {} (READONLY) has all {checked} items of its primary's {} slots",
            cl.nodes[r].port,
            mine.len()
        );
    }
}

/// Window filters (one of each kind) and a cuckoo filter in a slot of the primary about to be
/// killed: the digests cover them, and they must answer the same after the failover.
fn add_other_filters(cl: &Cluster, pairs: &[(usize, usize)], keys: &[String]) -> Others {
    let window_slot = *myself(&mut cl.nodes[pairs[0].0].conn())
        .slots
        .iter()
        .next()
        .expect("a primary has slots");
    let window_keys = [
        (
            keys[window_slot].replace("urls:", "sliding:"),
            "SLIDING",
            None,
        ),
        (
            keys[window_slot].replace("urls:", "window:"),
            "WINDOW",
            Some("3600"),
        ),
    ];
    let window_items: Vec<String> = (0..2000).map(|i| url("window", i)).collect();
    let cuckoo_key = keys[window_slot].replace("urls:", "cuckoo:");
    {
        let mut c = cl.nodes[pairs[0].0].conn();
        for (key, kind, value) in &window_keys {
            let mut args = vec!["BF.RESERVE", key.as_str(), "0.01", "5000", kind];
            args.extend(value.iter());
            assert_eq!(run(&mut c, &args), ok(), "{key}");
            let mut madd = vec!["BF.MADD", key.as_str()];
            madd.extend(window_items.iter().map(String::as_str));
            assert!(matches!(run(&mut c, &madd), Reply::Arr(_)));
        }
        // And a cuckoo filter, some of whose items are deleted.
        assert_eq!(run(&mut c, &["CF.RESERVE", &cuckoo_key, "4000"]), ok());
        let mut insert = vec!["CF.INSERT", cuckoo_key.as_str(), "ITEMS"];
        insert.extend(window_items.iter().map(String::as_str));
        assert_eq!(
            run(&mut c, &insert),
            Reply::Arr(vec![int(1); window_items.len()])
        );
        for item in &window_items[..CUCKOO_DELETED] {
            assert_eq!(run(&mut c, &["CF.DEL", &cuckoo_key, item]), int(1));
        }
    }
    Others {
        slot: window_slot,
        windows: window_keys,
        items: window_items,
        cuckoo: cuckoo_key,
    }
}

/// SIGKILL of the primary of slot 0 once its replica has every write: the replica is promoted
/// with exactly the killed primary's data, every filter answers as before, and writes go on.
fn survive_failover(
    cl: &mut Cluster,
    pairs: &[(usize, usize)],
    keys: &[String],
    batch: &Batch,
    others: &Others,
) -> AfterFailover {
    let (items, slots) = (&batch.items, &batch.slots);
    let (window_keys, window_items, cuckoo_key) = (&others.windows, &others.items, &others.cuckoo);
    for &(p, r) in pairs {
        wait_caught_up(&mut cl.nodes[p].conn(), &mut cl.nodes[r].conn());
        assert_eq!(
            dataset_digest(&mut cl.nodes[p].conn()),
            dataset_digest(&mut cl.nodes[r].conn()),
            "replica of port {} holds the same data",
            cl.nodes[p].port
        );
    }
    let (victim, heir) = pairs[0];
    let victim_digest = dataset_digest(&mut cl.nodes[victim].conn());
    let victim_id = myself(&mut cl.nodes[victim].conn()).id;
    let victim_slots = myself(&mut cl.nodes[victim].conn()).slots;
    let t = Instant::now();
    cl.nodes[victim].kill();
    let heir_node = &cl.nodes[heir];
    let promoted = cl.wait_for(60, "the replica's promotion", || {
        myself(&mut heir_node.conn()).has("master")
    });
    let others: Vec<usize> = (0..cl.nodes.len()).filter(|&i| i != victim).collect();
    cl.wait_for(
        60,
        "cluster_state:ok and the old primary marked fail",
        || {
            others.iter().all(|&i| {
                let mut c = cl.nodes[i].conn();
                cluster_info(&mut c, "cluster_state") == "ok"
                    && cluster_nodes(&mut c)
                        .iter()
                        .any(|n| n.id == victim_id && n.has("fail"))
            })
        },
    );
    let failover_secs = t.elapsed().as_secs_f64();
    assert_eq!(myself(&mut cl.nodes[heir].conn()).slots, victim_slots);
    assert_eq!(
        dataset_digest(&mut cl.nodes[heir].conn()),
        victim_digest,
        "the promoted replica holds exactly what the killed primary held"
    );
    println!(
        "cluster: killed primary port {} (kill -9, {} slots); replica port {} promoted after {:.1} s, cluster_state:ok after {failover_secs:.1} s; same DEBUG DIGEST",
        cl.nodes[victim].port,
        victim_slots.len(),
        cl.nodes[heir].port,
        promoted.as_secs_f64()
    );
    assert_eq!(
        cuckoo_kept(&mut cl.nodes[heir].conn(), cuckoo_key, window_items),
        Reply::Arr(vec![int(1); window_items.len() - CUCKOO_DELETED]),
        "{cuckoo_key} after the failover"
    );
    for (key, _, _) in window_keys {
        let mut mexists = vec!["BF.MEXISTS", key.as_str()];
        mexists.extend(window_items.iter().map(String::as_str));
        assert_eq!(
            run(&mut cl.nodes[heir].conn(), &mexists),
            Reply::Arr(vec![int(1); window_items.len()]),
            "{key} after the failover"
        );
        // It takes writes (the reply is 0 only for a false positive).
        assert!(matches!(
            run(
                &mut cl.nodes[heir].conn(),
                &["BF.ADD", key, "after-failover"]
            ),
            Reply::Int(0 | 1)
        ));
        assert_eq!(
            run(
                &mut cl.nodes[heir].conn(),
                &["BF.EXISTS", key, "after-failover"]
            ),
            int(1)
        );
    }
    // The sync client keeps no retry path for a dead primary's pipeline, so reconnect, as an
    // application does after an error.
    let mut con = cl.client(others[0]);
    let t = Instant::now();
    let (checked, absent) = check_items(&mut con, keys, items, slots, None);
    assert_eq!((checked, absent), (ITEMS, 0));
    println!(
        "cluster: after failover {checked} acknowledged items checked, {absent} missing ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
    // Writes continue, also into the promoted node's slots.
    let after_batch = Batch::new((0..50_000).map(|i| url("after-failover", i)).collect());
    let (after, after_slots) = (&after_batch.items, &after_batch.slots);
    let (a, n) = write_range(&mut con, keys, after, after_slots, 0, after.len() as u32);
    assert_eq!(a, after.len());
    assert_eq!(
        check_items(&mut con, keys, after, after_slots, None),
        (after.len(), 0)
    );
    let on_heir: usize = victim_slots.iter().map(|&s| after_slots[s].len()).sum();
    assert!(on_heir > 10_000, "{on_heir}");
    assert_eq!(
        check_direct(
            &mut cl.nodes[heir].conn(),
            keys,
            after,
            after_slots,
            &victim_slots
        ),
        (on_heir, 0)
    );
    println!(
        "cluster: {a} items written after failover ({n} new, {on_heir} on the promoted node), all present"
    );
    let heir_id = myself(&mut cl.nodes[heir].conn()).id;
    AfterFailover {
        victim,
        heir,
        heir_id,
        after: after_batch,
    }
}

/// The killed node comes back empty (no persistence) and rejoins as a replica of its heir,
/// fully synced.
fn rejoin_as_replica(cl: &mut Cluster, failed: &AfterFailover) {
    let (victim, heir, heir_id) = (failed.victim, failed.heir, &failed.heir_id);
    let t = Instant::now();
    cl.nodes[victim].revive();
    let back = &cl.nodes[victim];
    cl.wait_for(60, "the old primary to rejoin as a replica", || {
        let me = myself(&mut back.conn());
        me.has("slave") && me.master == *heir_id
    });
    cl.wait_healthy(6, 3, 60);
    wait_caught_up(&mut cl.nodes[heir].conn(), &mut cl.nodes[victim].conn());
    assert_eq!(
        dataset_digest(&mut cl.nodes[victim].conn()),
        dataset_digest(&mut cl.nodes[heir].conn())
    );
    println!(
        "cluster: old primary restarted, rejoined as replica of port {} and fully synced in {:.1} s",
        cl.nodes[heir].port,
        t.elapsed().as_secs_f64()
    );
}

/// Slots move from the promoted node to the next primary with `redis-cli --cluster reshard`
/// (MIGRATE, so DUMP/RESTORE of the data types): the filters arrive with the same digests,
/// every item with them, and the cluster client follows the new owner.
fn survive_reshard(
    cl: &Cluster,
    pairs: &[(usize, usize)],
    keys: &[String],
    written: &[&Batch; 2],
    others: &Others,
    failed: &AfterFailover,
) -> AfterReshard {
    let [first, second] = written;
    let (items, slots, after, after_slots) =
        (&first.items, &first.slots, &second.items, &second.slots);
    let (window_slot, window_keys, window_items, cuckoo_key) =
        (others.slot, &others.windows, &others.items, &others.cuckoo);
    let (heir, heir_id, victim) = (failed.heir, &failed.heir_id, failed.victim);
    let (source, target) = (heir, pairs[1].0);
    let target_replica = pairs[1].1;
    let source_slots = myself(&mut cl.nodes[source].conn()).slots;
    let target_id = myself(&mut cl.nodes[target].conn()).id;
    let source_keys: Vec<&str> = source_slots.iter().map(|&s| keys[s].as_str()).collect();
    let before = digests(&mut cl.nodes[source].conn(), &source_keys);
    // DEBUG DIGEST-VALUE answers 40 zeros for a missing key
    let missing = arr(vec![Reply::Status("0".repeat(40))]);
    assert!(before
        .iter()
        .all(|d| matches!(d, Reply::Arr(_)) && *d != missing));
    let reshard_secs = reshard(cl, source, heir_id, &target_id, RESHARD_SLOTS);
    let moved: BTreeSet<usize> = myself(&mut cl.nodes[target].conn())
        .slots
        .intersection(&source_slots)
        .copied()
        .collect();
    assert_eq!(moved.len(), RESHARD_SLOTS, "slots now on the target");
    // Every node agrees on the new owner.
    cl.wait_for(30, "every node to see the new slot owner", || {
        cl.nodes.iter().all(|n| {
            cluster_nodes(&mut n.conn())
                .iter()
                .any(|l| l.id == target_id && moved.is_subset(&l.slots))
        })
    });
    cl.wait_healthy(6, 3, 60);
    let mut tc = cl.nodes[target].conn();
    let mut sc = cl.nodes[source].conn();
    for &slot in &moved {
        let s = slot.to_string();
        // The window filters' slot holds them and a cuckoo filter beside its scaling filter.
        let held = if slot == window_slot { 4 } else { 1 };
        assert_eq!(run(&mut tc, &["CLUSTER", "COUNTKEYSINSLOT", &s]), int(held));
        assert_eq!(run(&mut sc, &["CLUSTER", "COUNTKEYSINSLOT", &s]), int(0));
    }
    if moved.contains(&window_slot) {
        // The window filters moved with their slot, every item with them.
        for (key, _, _) in window_keys {
            let mut mexists = vec!["BF.MEXISTS", key.as_str()];
            mexists.extend(window_items.iter().map(String::as_str));
            assert_eq!(
                run(&mut tc, &mexists),
                Reply::Arr(vec![int(1); window_items.len()]),
                "{key} after resharding"
            );
        }
        assert_eq!(
            cuckoo_kept(&mut tc, cuckoo_key, window_items),
            Reply::Arr(vec![int(1); window_items.len() - CUCKOO_DELETED]),
            "{cuckoo_key} after resharding"
        );
        println!(
            "cluster: the window filters and the cuckoo filter moved with their slot, every item with them"
        );
    }
    let moved_keys: Vec<&str> = moved.iter().map(|&s| keys[s].as_str()).collect();
    let expected: Vec<Reply> = source_slots
        .iter()
        .zip(&before)
        .filter(|(s, _)| moved.contains(s))
        .map(|(_, d)| d.clone())
        .collect();
    assert_eq!(
        digests(&mut tc, &moved_keys),
        expected,
        "same DEBUG DIGEST-VALUE after MIGRATE"
    );
    for k in &moved_keys[..10] {
        assert_eq!(
            run(&mut tc, &["TYPE", k]),
            Reply::Status("MBbloom--".into())
        );
        let r = run(&mut sc, &["BF.EXISTS", k, "x"]);
        assert!(r.err_text().starts_with("MOVED "), "{r:?}");
    }
    let stayed: Vec<&str> = source_slots
        .iter()
        .filter(|s| !moved.contains(s))
        .map(|&s| keys[s].as_str())
        .collect();
    let stayed_before: Vec<Reply> = source_slots
        .iter()
        .zip(&before)
        .filter(|(s, _)| !moved.contains(s))
        .map(|(_, d)| d.clone())
        .collect();
    assert_eq!(digests(&mut sc, &stayed), stayed_before);
    let (c1, a1) = check_direct(&mut tc, keys, items, slots, &moved);
    let (c2, a2) = check_direct(&mut tc, keys, after, after_slots, &moved);
    assert_eq!((a1, a2), (0, 0), "no false negatives after MIGRATE");
    wait_caught_up(&mut tc, &mut cl.nodes[target_replica].conn());
    assert_eq!(
        dataset_digest(&mut tc),
        dataset_digest(&mut cl.nodes[target_replica].conn()),
        "the target's replica got the migrated filters"
    );
    println!(
        "cluster: resharded {} slots ({} filter keys) from port {} to port {} in {reshard_secs:.1} s; same digests, {} items checked on the target, 0 missing",
        moved.len(),
        moved_keys.len(),
        cl.nodes[source].port,
        cl.nodes[target].port,
        c1 + c2
    );
    // The cluster client follows the new owner for reads and writes.
    let mut con = cl.client(victim);
    let more_batch = Batch::new((0..20_000).map(|i| url("after-reshard", i)).collect());
    let (more, more_slots) = (&more_batch.items, &more_batch.slots);
    let (a, _) = write_range(&mut con, keys, more, more_slots, 0, more.len() as u32);
    assert_eq!(a, more.len());
    let on_target: usize = moved.iter().map(|&s| more_slots[s].len()).sum();
    assert_eq!(
        check_direct(&mut tc, keys, more, more_slots, &moved),
        (on_target, 0)
    );
    AfterReshard {
        source,
        target,
        target_replica,
        target_id,
        more: more_batch,
    }
}

/// A second reshard, back from the target, while a client keeps writing into the keys of the
/// slots that move (redis-cli takes a node's lowest slots first): its writes follow the MOVED /
/// ASK redirections and none is lost. One command per request: the redis crate's (0.27) sync
/// cluster pipeline hands redirections back as errors instead of following them. These items
/// go to chosen keys, not by `route`.
fn survive_reshard_back_under_writes(
    cl: &Cluster,
    keys: &[String],
    others: &Others,
    failed: &AfterFailover,
    resharded: &AfterReshard,
) -> Batch {
    let window_slot = others.slot;
    let (victim, heir_id) = (failed.victim, &failed.heir_id);
    let (source, target, target_replica, target_id) = (
        resharded.source,
        resharded.target,
        resharded.target_replica,
        &resharded.target_id,
    );
    let mut tc = cl.nodes[target].conn();
    let mut sc = cl.nodes[source].conn();
    let target_slots = myself(&mut tc).slots;
    let moving: Vec<usize> = target_slots
        .iter()
        .take(RESHARD_SLOTS / 2)
        .copied()
        .collect();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, keys) = (stop.clone(), keys.to_vec());
        let mut wc = cl.client(target_replica);
        std::thread::spawn(move || {
            let mut written: Vec<String> = Vec::new();
            let mut at: Vec<Vec<u32>> = vec![Vec::new(); SLOTS];
            let mut rounds = 0;
            while rounds < 2 || !stop.load(std::sync::atomic::Ordering::SeqCst) {
                for &slot in &moving {
                    let idx: Vec<u32> = (0..4)
                        .map(|j| {
                            written.push(format!(
                                "https://during-reshard.example/{slot}/{rounds}/{j}"
                            ));
                            (written.len() - 1) as u32
                        })
                        .collect();
                    let reply: Value = bf_cmd("BF.MADD", &keys[slot], &written, &idx)
                        .query(&mut wc)
                        .unwrap_or_else(|e| panic!("BF.MADD {} during reshard: {e}", keys[slot]));
                    flags(&reply, idx.len(), "BF.MADD during reshard");
                    at[slot].extend(idx);
                }
                rounds += 1;
            }
            (written, at, rounds)
        })
    };
    let back_secs = reshard(cl, target, target_id, heir_id, RESHARD_SLOTS / 2);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let (during, during_slots, rounds) = writer.join().expect("the writer thread");
    let moved_back: BTreeSet<usize> = target_slots
        .intersection(&myself(&mut sc).slots)
        .copied()
        .collect();
    assert_eq!(moved_back.len(), RESHARD_SLOTS / 2);
    let overlap = (0..SLOTS)
        .filter(|s| !during_slots[*s].is_empty() && moved_back.contains(s))
        .count();
    for &slot in &moved_back {
        let s = slot.to_string();
        let held = if slot == window_slot { 4 } else { 1 };
        assert_eq!(run(&mut sc, &["CLUSTER", "COUNTKEYSINSLOT", &s]), int(held));
        assert_eq!(run(&mut tc, &["CLUSTER", "COUNTKEYSINSLOT", &s]), int(0));
    }
    let mut con = cl.client(victim);
    assert_eq!(
        check_items(&mut con, keys, &during, &during_slots, None),
        (during.len(), 0)
    );
    // ASKING is what a client sends after an ASK redirection, for a key already migrated
    // out of a slot still in migration.
    let asking: usize = cl
        .nodes
        .iter()
        .map(|n| {
            text(&mut n.conn(), &["INFO", "commandstats"])
                .lines()
                .find_map(|l| l.strip_prefix("cmdstat_asking:calls="))
                .map_or(0, |v| v.split(',').next().unwrap().parse().unwrap())
        })
        .sum();
    println!(
        "cluster: resharded {} slots back to port {} in {back_secs:.1} s while a client wrote {} items into the keys of {overlap} of them ({rounds} rounds of single BF.MADDs, {asking} ASK redirections followed); all present",
        moved_back.len(),
        cl.nodes[source].port,
        during.len()
    );
    Batch {
        items: during,
        slots: during_slots,
    }
}

/// A payload of DUMP restores to an identical filter (same digest, items, seed) on the same
/// server and on another one, with RESTORE's TTL, BUSYKEY and REPLACE.
#[test]
fn dump_restore_single_server() {
    let a = Server::new();
    let b = Server::new();
    let (mut ca, mut cb) = (a.conn(), b.conn());
    assert_eq!(run(&mut ca, &["BF.RESERVE", "f", "0.01", "100"]), ok());
    assert_eq!(
        run(&mut ca, &["BF.RESERVE", "ns", "0.001", "500", "NONSCALING"]),
        ok()
    );
    let its = items("https://dump.example/", 3000);
    for chunk in its.chunks(500) {
        let mut args = vec!["BF.MADD", "f"];
        args.extend(chunk.iter().map(String::as_str));
        assert!(matches!(run(&mut ca, &args), Reply::Arr(_)));
    }
    // Filled until it refuses: how many items fit depends on the filter's random seed (an item
    // that is a false positive takes no room), so the test reads where the array stops.
    let mut args = vec!["BF.MADD", "ns"];
    args.extend(its[..600].iter().map(String::as_str));
    let Reply::Arr(filled) = run(&mut ca, &args) else {
        panic!("BF.MADD ns")
    };
    assert_eq!(filled.last(), Some(&err(texts::FULL)), "{filled:?}");
    let ns_items = &its[..filled.len() - 1];
    let absent = items("https://absent.example/", 5000);
    for key in ["f", "ns"] {
        let Reply::Bulk(payload) = run(&mut ca, &["DUMP", key]) else {
            panic!("DUMP {key}")
        };
        let digest = run(&mut ca, &["DEBUG", "DIGEST-VALUE", key]);
        let info = run(&mut ca, &["BF.INFO", key]);
        let copy = format!("{key}-copy");
        let restore = |con: &mut redis::Connection, k: &str, extra: &[&[u8]]| {
            let mut args: Vec<&[u8]> = vec![b"RESTORE", k.as_bytes(), b"0", &payload];
            args.extend_from_slice(extra);
            run(con, &args)
        };
        assert_eq!(restore(&mut ca, &copy, &[]), ok());
        assert_eq!(restore(&mut cb, key, &[]), ok());
        let its_here: &[String] = if key == "f" { &its } else { ns_items };
        for (con, k) in [(&mut ca, copy.as_str()), (&mut cb, key)] {
            assert_eq!(run(con, &["DEBUG", "DIGEST-VALUE", k]), digest, "{k}");
            assert_eq!(run(con, &["BF.INFO", k]), info, "{k}");
            assert_eq!(exists_all(con, k, its_here), vec![int(1); its_here.len()]);
        }
        // Same seed and bits: the same false positives.
        assert_eq!(
            exists_all(&mut ca, key, &absent),
            exists_all(&mut cb, key, &absent)
        );
        assert_eq!(
            restore(&mut cb, key, &[]).err_text(),
            "BUSYKEY Target key name already exists."
        );
        assert_eq!(restore(&mut cb, key, &[b"REPLACE"]), ok());
        let ttl_key = format!("{key}-ttl");
        let args: Vec<&[u8]> = vec![b"RESTORE", ttl_key.as_bytes(), b"60000", &payload];
        assert_eq!(run(&mut cb, &args), ok());
        assert!(
            matches!(run(&mut cb, &["PTTL", &ttl_key]), Reply::Int(ms) if ms > 0 && ms <= 60000)
        );
    }
    // The restored scaling filter grows exactly as the original does.
    let more = items("https://more.example/", 4000);
    let mut args = vec!["BF.MADD", "f"];
    args.extend(more.iter().map(String::as_str));
    assert_eq!(run(&mut ca, &args), run(&mut cb, &args));
    assert_eq!(
        run(&mut ca, &["DEBUG", "DIGEST-VALUE", "f"]),
        run(&mut cb, &["DEBUG", "DIGEST-VALUE", "f"])
    );
    // The restored NONSCALING filter is as full as the original: a new item is refused, or
    // reads present (a false positive), the same on both.
    let one_more = run(&mut cb, &["BF.ADD", "ns", "one more"]);
    assert!(
        one_more == err(texts::FULL) || one_more == int(0),
        "{one_more:?}"
    );
    assert_eq!(run(&mut ca, &["BF.ADD", "ns", "one more"]), one_more);
}

#[test]
fn crc16_matches_redis() {
    assert_eq!(crc16(b"123456789"), 0x31c3);
    assert_eq!(key_slot("foo"), 12182);
    assert_eq!(key_slot("{user1000}.following"), key_slot("user1000"));
    // `{}` is no tag: the whole key is hashed; only the first `{...}` counts.
    assert_eq!(
        key_slot("foo{}{bar}"),
        usize::from(crc16(b"foo{}{bar}")) % SLOTS
    );
    assert_eq!(
        key_slot("foo{{bar}}zap"),
        usize::from(crc16(b"{bar")) % SLOTS
    );
}

/// Where a key lives now, by the slot owner each node reports (`MOVED slot host:port`).
fn moved_to(reply: &Reply) -> Option<u16> {
    let text = match reply {
        Reply::Err(e) if e.starts_with("MOVED ") => e,
        _ => return None,
    };
    let port = text.rsplit(':').next()?;
    port.parse().ok()
}

/// Valkey 9's atomic slot migration (`CLUSTER MIGRATESLOTS`), which Valkey refuses while any
/// loaded module has not declared that it handles it: a quarter of the slots, holding filters,
/// moves while a client writes to them; every acknowledged item is present afterwards, and after
/// the slots move back with the writer stopped, every moved filter has the digest it had on the
/// other node. Every other filter is a valkey-bloom one (`bloomfltr`, from valkey-bloom's data),
/// which keeps its type. Redis 7.0, 7.4 and 8.0 and Valkey 8.1 have no such command: on them
/// the test asserts that.
#[test]
fn atomic_slot_migration_moves_filters_under_writes() {
    let a = Server::cluster_node(&[], NODE_ARGS);
    let mut ca = a.conn();
    if flavor() != Flavor::Valkey91 {
        let r = run(
            &mut ca,
            &[
                "CLUSTER",
                "MIGRATESLOTS",
                "SLOTSRANGE",
                "0",
                "1",
                "NODE",
                "x",
            ],
        );
        assert!(r.err_text().starts_with("ERR unknown subcommand"), "{r:?}");
        return;
    }
    let b = Server::cluster_node(&[], NODE_ARGS);
    let mut cb = b.conn();
    // b keeps slots of its own throughout: a primary that gives its last slot away becomes a
    // replica of the node that took it.
    let first_owner = |slot: usize| usize::from(slot >= 12288);
    assert_eq!(
        run(&mut ca, &["CLUSTER", "ADDSLOTSRANGE", "0", "12287"]),
        ok()
    );
    assert_eq!(
        run(&mut cb, &["CLUSTER", "ADDSLOTSRANGE", "12288", "16383"]),
        ok()
    );
    let meet = [
        "CLUSTER",
        "MEET",
        "127.0.0.1",
        &b.port.to_string(),
        &b.bus_port.to_string(),
    ];
    assert_eq!(run(&mut ca, &meet), ok());
    let id = |c: &mut redis::Connection| match run(c, &["CLUSTER", "MYID"]) {
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("CLUSTER MYID: {other:?}"),
    };
    let (id_a, id_b) = (id(&mut ca), id(&mut cb));
    a.wait_for("a two-node cluster in state ok", 30, || {
        [&mut ca, &mut cb].into_iter().all(|c| {
            cluster_info(c, "cluster_state") == "ok"
                && cluster_info(c, "cluster_known_nodes") == "2"
        })
    });
    // 256 filters, one per slot from 0 in steps of 64: the first 64 in the slots that move;
    // every other one valkey-bloom's.
    let moving = 0..4096usize;
    let keys: Vec<String> = key_per_slot().into_iter().step_by(64).collect();
    let blob = valkey_bloom_blob("bf:scaling");
    for (i, k) in keys.iter().enumerate() {
        let c = if first_owner(key_slot(k)) == 0 {
            &mut ca
        } else {
            &mut cb
        };
        if i % 2 == 0 {
            assert_eq!(run(c, &["BF.RESERVE", k, "0.001", "2000"]), ok());
        } else {
            assert_eq!(run(c, &[b"BF.LOAD".as_slice(), k.as_bytes(), &blob]), ok());
        }
    }

    // A writer adding to every filter in turn, following MOVED to the new owner.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, keys) = (stop.clone(), keys.clone());
        let (port_a, port_b) = (a.port, b.port);
        let mut cons = [a.conn(), b.conn()];
        std::thread::spawn(move || {
            let mut owner: Vec<usize> = keys.iter().map(|k| first_owner(key_slot(k))).collect();
            let mut acked: Vec<(usize, String)> = Vec::new();
            let mut i = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let k = i % keys.len();
                let item = format!("item-{i}");
                let r = run(&mut cons[owner[k]], &["BF.ADD", &keys[k], &item]);
                match moved_to(&r) {
                    Some(port) => {
                        owner[k] = if port == port_a { 0 } else { 1 };
                        assert!(port == port_a || port == port_b, "{r:?}");
                        continue; // the same item again, at its new owner
                    }
                    None => assert!(r == int(1) || r == int(0), "BF.ADD {}: {r:?}", keys[k]),
                }
                acked.push((k, item));
                i += 1;
            }
            acked
        })
    };
    sleep(Duration::from_millis(500));
    let migrate = |from: &mut redis::Connection, to: &str| {
        let r = run(
            from,
            &[
                "CLUSTER",
                "MIGRATESLOTS",
                "SLOTSRANGE",
                "0",
                "4095",
                "NODE",
                to,
            ],
        );
        assert_eq!(r, ok(), "CLUSTER MIGRATESLOTS");
    };
    // Each job's `state` in CLUSTER GETSLOTMIGRATIONS (a flat map per job in RESP2).
    let states = |c: &mut redis::Connection| -> Vec<String> {
        let Reply::Arr(jobs) = run(c, &["CLUSTER", "GETSLOTMIGRATIONS"]) else {
            panic!("CLUSTER GETSLOTMIGRATIONS")
        };
        let text = |r: &Reply| match r {
            Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            Reply::Status(s) => s.clone(),
            other => format!("{other:?}"),
        };
        jobs.iter()
            .filter_map(|job| match job {
                Reply::Arr(fields) => fields
                    .chunks(2)
                    .find(|kv| text(&kv[0]) == "state")
                    .map(|kv| text(&kv[1])),
                _ => None,
            })
            .collect()
    };
    // Waits until `count` jobs known to `c` have all succeeded.
    let done = |from: &Server, c: &mut redis::Connection, count: usize| {
        from.wait_for("the slot migration to succeed", 60, || {
            let states = states(c);
            assert!(
                states.iter().all(|s| s != "failed" && s != "cancelled"),
                "{states:?}"
            );
            states.len() >= count && states.iter().all(|s| s == "success")
        });
    };
    let t = Instant::now();
    migrate(&mut ca, &id_b);
    done(&a, &mut ca, 1);
    let took = t.elapsed().as_secs_f64();
    sleep(Duration::from_millis(500));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let acked = writer.join().expect("the writer");

    // Every acknowledged item, at the node that owns its slot now.
    let mut missing = 0;
    let mut moved_items = 0;
    for (k, item) in &acked {
        let slot = key_slot(&keys[*k]);
        moved_items += usize::from(moving.contains(&slot));
        let on_b = moving.contains(&slot) || first_owner(slot) == 1;
        let c = if on_b { &mut cb } else { &mut ca };
        if run(c, &["BF.EXISTS", &keys[*k], item]) != int(1) {
            missing += 1;
        }
    }
    assert_eq!(missing, 0, "of {} acknowledged items", acked.len());
    assert!(moved_items > 100, "{moved_items} items in the moved slots");
    println!(
        "cluster: CLUSTER MIGRATESLOTS moved slots 0-4095 (64 filters) in {took:.1} s while a client \
         wrote {} items ({moved_items} into the moving filters); 0 missing",
        acked.len()
    );

    // Back again, with no writes: each moved filter keeps its digest.
    let moved: Vec<&String> = keys
        .iter()
        .filter(|k| moving.contains(&key_slot(k)))
        .collect();
    let on_b: Vec<Reply> = moved.iter().map(|k| digest(&mut cb, k)).collect();
    migrate(&mut cb, &id_a);
    done(&b, &mut cb, 2);
    a.wait_for("node a to own the slots again", 30, || {
        moved_to(&run(&mut ca, &["BF.CARD", moved[0]])).is_none()
    });
    let on_a: Vec<Reply> = moved.iter().map(|k| digest(&mut ca, k)).collect();
    assert_eq!(on_a, on_b, "digests after moving back");
    let types: Vec<Reply> = moved.iter().map(|k| run(&mut ca, &["TYPE", k])).collect();
    let valkey = types.iter().filter(|t| **t == status("bloomfltr")).count();
    assert_eq!(valkey, moved.len() / 2, "{types:?}");
    // The source drops the keys of the slots it gave away once the migration is done, in the
    // background.
    let own = keys.iter().filter(|k| key_slot(k) >= 12288).count() as i64;
    b.wait_for("node b to drop the keys it no longer owns", 30, || {
        run(&mut cb, &["DBSIZE"]) == int(own)
    });
}

/// Items deleted from the cluster test's cuckoo filter (the first ones added).
const CUCKOO_DELETED: usize = 200;

/// CF.MEXISTS of the cuckoo filter's items that were not deleted.
fn cuckoo_kept(c: &mut redis::Connection, key: &str, items: &[String]) -> Reply {
    let mut mexists = vec!["CF.MEXISTS", key];
    mexists.extend(items[CUCKOO_DELETED..].iter().map(String::as_str));
    run(c, &mexists)
}
