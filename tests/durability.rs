//! Durability under load: every write a client saw acknowledged survives a `kill -9` with
//! `appendfsync always`; a BGSAVE taken while clients write holds everything acknowledged
//! before it started; an AOF rewrite under writes, then a restart, gives back identical filters.
//!
//! Writers are several connections pipelining BF.ADD, BF.MADD and BF.INSERT into filters of
//! different shapes (a growing scaling chain, an implicitly created one, a NONSCALING one and
//! one created by INSERT). A write counts as acknowledged only once its reply arrived; the
//! replies lost with a connection the kill broke are not counted.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use common::*;
use redis::ConnectionLike;

/// The filters written to.
const KEYS: [&str; 4] = ["d:grow", "d:implicit", "d:fixed", "d:insert"];
const WRITERS: usize = 4;
/// Commands per pipelined round trip, and items per BF.MADD / BF.INSERT.
const PIPELINE: usize = 8;
const BATCH: usize = 25;

fn create_filters(con: &mut redis::Connection) {
    assert_eq!(
        run(
            con,
            &["BF.RESERVE", "d:grow", "0.01", "1000", "EXPANSION", "2"]
        ),
        ok()
    );
    assert_eq!(
        run(
            con,
            &["BF.RESERVE", "d:fixed", "0.001", "2000000", "NONSCALING"]
        ),
        ok()
    );
    // d:implicit and d:insert are created by the writers' first BF.ADD / BF.INSERT.
}

/// One acknowledged item: the filter (index in KEYS) and the item.
type Ack = (usize, String);

/// Writer threads, each on its own connection, until stopped or disconnected.
struct Writers {
    stop: Arc<AtomicBool>,
    acked: Vec<Arc<Mutex<Vec<Ack>>>>,
    handles: Vec<JoinHandle<usize>>,
}

impl Writers {
    fn start(server: &Server) -> Writers {
        let stop = Arc::new(AtomicBool::new(false));
        let mut acked = Vec::new();
        let mut handles = Vec::new();
        for w in 0..WRITERS {
            let mut con = server.conn();
            let log = Arc::new(Mutex::new(Vec::new()));
            let (stop, log2) = (stop.clone(), log.clone());
            handles.push(thread::spawn(move || {
                write_until(&mut con, w, &stop, &log2)
            }));
            acked.push(log);
        }
        Writers {
            stop,
            acked,
            handles,
        }
    }

    /// Items acknowledged so far, per writer (a consistent cut: each list only grows).
    fn lengths(&self) -> Vec<usize> {
        self.acked.iter().map(|a| a.lock().unwrap().len()).collect()
    }

    fn count(&self) -> usize {
        self.lengths().iter().sum()
    }

    /// Waits until the writers have `n` acknowledged items between them.
    fn wait_for(&self, server: &Server, n: usize) {
        server.wait_for(&format!("{n} acknowledged items"), 120, || {
            assert!(
                !self.handles.iter().any(JoinHandle::is_finished),
                "a writer ended early"
            );
            self.count() >= n
        });
    }

    /// Stops (or, after a kill, collects) the writers: each one's acknowledged items in
    /// order, and how many commands were in flight, unacknowledged, when the writers ended.
    fn join(self) -> (Vec<Vec<Ack>>, usize) {
        self.stop.store(true, Ordering::SeqCst);
        let lost = self.handles.into_iter().map(|h| h.join().unwrap()).sum();
        let acked = self
            .acked
            .iter()
            .map(|a| a.lock().unwrap().clone())
            .collect();
        (acked, lost)
    }
}

/// Pipelines rounds of writes until `stop` or a broken connection; returns the number of
/// commands of the round the connection broke in (sent, never acknowledged).
fn write_until(
    con: &mut redis::Connection,
    writer: usize,
    stop: &AtomicBool,
    acked: &Mutex<Vec<Ack>>,
) -> usize {
    let mut seq = 0usize;
    let mut round = 0usize;
    while !stop.load(Ordering::SeqCst) {
        let mut pipe = redis::pipe();
        let mut sent: Vec<(usize, Vec<String>)> = Vec::new();
        for c in 0..PIPELINE {
            let key = (round + c) % KEYS.len();
            let n = if c % 3 == 0 { 1 } else { BATCH };
            let its: Vec<String> = (0..n).map(|i| format!("w{writer}-{}", seq + i)).collect();
            seq += n;
            let cmd = pipe.cmd(match (key, n) {
                (3, _) => "BF.INSERT",
                (_, 1) => "BF.ADD",
                _ => "BF.MADD",
            });
            cmd.arg(KEYS[key]);
            if key == 3 {
                cmd.arg(&[
                    "CAPACITY",
                    "5000",
                    "ERROR",
                    "0.01",
                    "EXPANSION",
                    "3",
                    "ITEMS",
                ]);
            }
            cmd.arg(&its);
            sent.push((key, its));
        }
        round += 1;
        let replies = match con.req_packed_commands(&pipe.get_packed_pipeline(), 0, sent.len()) {
            Ok(replies) => replies,
            Err(_) => return sent.len(), // the server is gone: none of these count
        };
        let mut log = acked.lock().unwrap();
        for (reply, (key, its)) in replies.into_iter().zip(sent) {
            let answers = match Reply::from_value(reply) {
                Reply::Arr(v) => v,
                one => vec![one],
            };
            assert_eq!(answers.len(), its.len(), "{} reply", KEYS[key]);
            for (answer, item) in answers.into_iter().zip(its) {
                assert!(
                    answer == int(1) || answer == int(0),
                    "{} {item}: {answer:?}",
                    KEYS[key]
                );
                log.push((key, item));
            }
        }
    }
    0
}

/// How many of `acked` each filter answers 0 for (BF.MEXISTS, pipelined).
fn missing(con: &mut redis::Connection, acked: &[Ack]) -> usize {
    let mut by_key: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (key, item) in acked {
        by_key.entry(*key).or_default().push(item);
    }
    let mut missing = 0;
    for (key, its) in by_key {
        let cmds: Vec<Vec<&str>> = its
            .chunks(1000)
            .map(|chunk| {
                let mut cmd = vec!["BF.MEXISTS", KEYS[key]];
                cmd.extend(chunk);
                cmd
            })
            .collect();
        for batch in cmds.chunks(20) {
            for reply in pipeline(con, batch) {
                let Reply::Arr(answers) = reply else {
                    panic!("BF.MEXISTS {}: {reply:?}", KEYS[key])
                };
                missing += answers.iter().filter(|a| **a == int(0)).count();
            }
        }
    }
    missing
}

/// Waits until INFO persistence shows `field:0` (a BGSAVE or AOF rewrite finished).
fn wait_until_zero(server: &Server, con: &mut redis::Connection, field: &str) {
    server.wait_for(&format!("{field}:0"), 60, || {
        info_field(con, "persistence", field) == "0"
    });
}

fn card(con: &mut redis::Connection, key: &str) -> i64 {
    match run(con, &["BF.CARD", key]) {
        Reply::Int(n) => n,
        other => panic!("BF.CARD {key}: {other:?}"),
    }
}

#[test]
fn appendfsync_always_keeps_every_acknowledged_write_across_kill_9() {
    let mut server = Server::with_args(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    create_filters(&mut server.conn());
    let writers = Writers::start(&server);
    writers.wait_for(&server, 200_000);
    let at_kill = writers.count();
    server.kill(); // SIGKILL by pid while the writers are still sending
    let (acked, lost) = writers.join();
    let acked = acked.concat();
    assert!(
        lost > 0,
        "the writers were not writing when the server died"
    );
    server.revive();
    let mut con = server.conn();
    let missing = missing(&mut con, &acked);
    println!(
        "AOF appendfsync always, kill -9: {} items acknowledged ({at_kill} when the kill was \
         sent), {lost} commands in flight unacknowledged; {} items checked after the restart, \
         {missing} missing",
        acked.len(),
        acked.len()
    );
    assert_eq!(
        missing, 0,
        "acknowledged items lost with appendfsync always"
    );
    for (i, key) in KEYS.iter().enumerate() {
        let n = acked.iter().filter(|(k, _)| *k == i).count() as i64;
        // every acknowledged add is there; at most the unacknowledged last ones besides
        let c = card(&mut con, key);
        assert!(
            c >= n * 98 / 100,
            "{key}: BF.CARD {c} for {n} acknowledged items"
        );
    }
}

#[test]
fn bgsave_under_writes_holds_every_write_acknowledged_before_it() {
    let mut server = Server::new(); // appendonly no: the RDB is all that survives
    let mut admin = server.conn();
    create_filters(&mut admin);
    let writers = Writers::start(&server);
    writers.wait_for(&server, 100_000);
    let before = writers.lengths();
    let Reply::Int(lastsave) = run(&mut admin, &["LASTSAVE"]) else {
        panic!("LASTSAVE")
    };
    assert_eq!(
        run(&mut admin, &["BGSAVE"]),
        Reply::Status("Background saving started".into())
    );
    wait_until_zero(&server, &mut admin, "rdb_bgsave_in_progress");
    assert_eq!(
        info_field(&mut admin, "persistence", "rdb_last_bgsave_status"),
        "ok"
    );
    assert!(matches!(run(&mut admin, &["LASTSAVE"]), Reply::Int(t) if t >= lastsave));
    // more writes the RDB does not have, then the crash
    let after_save = writers.count();
    writers.wait_for(&server, after_save + 20_000);
    server.kill();
    let (acked, _) = writers.join();
    server.revive();
    let mut con = server.conn();
    // each writer's acknowledgements before BGSAVE was sent, and the rest
    let (mut saved, mut unsaved) = (Vec::new(), Vec::new());
    for (log, &cut) in acked.iter().zip(&before) {
        saved.extend_from_slice(&log[..cut]);
        unsaved.extend_from_slice(&log[cut..]);
    }
    let missing_saved = missing(&mut con, &saved);
    let missing_unsaved = missing(&mut con, &unsaved);
    println!(
        "BGSAVE under writes, kill -9: {} items acknowledged before BGSAVE, {} checked after \
         the restart from its RDB, {missing_saved} missing; of {} acknowledged after it \
         started, {missing_unsaved} are not in the RDB",
        saved.len(),
        saved.len(),
        unsaved.len()
    );
    assert_eq!(missing_saved, 0, "items acknowledged before BGSAVE lost");
    // the restart really came from that snapshot: writes acknowledged after it are gone
    assert!(missing_unsaved > 10_000, "{missing_unsaved}");
}

/// Every key's DEBUG DIGEST-VALUE, and the dataset's DEBUG DIGEST.
fn digests(con: &mut redis::Connection) -> (BTreeMap<String, Reply>, Reply) {
    let Reply::Arr(keys) = run(con, &["KEYS", "*"]) else {
        panic!("KEYS")
    };
    let mut out = BTreeMap::new();
    for key in keys {
        let Reply::Bulk(key) = key else {
            panic!("key {key:?}")
        };
        let key = String::from_utf8(key).unwrap();
        let digest = run(con, &["DEBUG", "DIGEST-VALUE", &key]);
        out.insert(key, digest);
    }
    (out, run(con, &["DEBUG", "DIGEST"]))
}

/// The rewritten AOF's base file: an RDB (`preamble`) or the commands of each value's
/// aof_rewrite callback (BF.LOADCHUNK for filters).
fn aof_base(server: &Server) -> Vec<u8> {
    let dir = server.dir.join("appendonlydir");
    let base = std::fs::read_dir(&dir)
        .expect("appendonlydir")
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(".base."))
        .expect("a base file");
    std::fs::read(base).unwrap()
}

#[test]
fn aof_rewrite_under_writes_then_restart_gives_identical_filters() {
    for preamble in ["no", "yes"] {
        let mut server = Server::with_args(
            &[],
            &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        );
        let mut admin = server.conn();
        create_filters(&mut admin);
        let writers = Writers::start(&server);
        writers.wait_for(&server, 60_000);
        assert_eq!(
            run(&mut admin, &["BGREWRITEAOF"]),
            Reply::Status("Background append only file rewriting started".into())
        );
        wait_until_zero(&server, &mut admin, "aof_rewrite_in_progress");
        wait_until_zero(&server, &mut admin, "aof_rewrite_scheduled");
        assert_eq!(
            info_field(&mut admin, "persistence", "aof_last_bgrewrite_status"),
            "ok"
        );
        // more writes, into the AOF after the rewritten base
        let after_rewrite = writers.count();
        writers.wait_for(&server, after_rewrite + 30_000);
        let (acked, _) = writers.join();
        let acked = acked.concat();
        let base = aof_base(&server);
        let loadchunks = base.windows(12).filter(|w| w == b"BF.LOADCHUNK").count();
        if preamble == "no" {
            assert!(
                loadchunks >= KEYS.len(),
                "{loadchunks} BF.LOADCHUNK in the base"
            );
        } else {
            // Valkey 9 writes its own RDB magic.
            let magic: &[u8] = if flavor().is_valkey() {
                b"VALKEY"
            } else {
                b"REDIS"
            };
            assert!(base.starts_with(magic), "the base is not an RDB");
        }
        // NONSCALING filters created under another default expansion: the replayed
        // `BF.RESERVE ... NONSCALING SEED s` must rebuild them identically under the default
        assert_eq!(
            run(&mut admin, &["CONFIG", "SET", "bf.expansion", "4"]),
            ok()
        );
        assert_eq!(
            run(
                &mut admin,
                &["BF.RESERVE", "d:ns", "0.01", "1000", "NONSCALING"]
            ),
            ok()
        );
        let insert = ["BF.INSERT", "d:ns2", "NONSCALING", "ITEMS", "a", "b"];
        assert_eq!(run(&mut admin, &insert), ints(&[1, 1]));
        assert_eq!(run(&mut admin, &["BF.ADD", "d:ns", "x"]), int(1));
        let (before, total) = digests(&mut admin);
        assert_eq!(before.len(), KEYS.len() + 2);
        // one 40-hex-digit digest per key (all zeros would be a missing key)
        assert!(
            before.values().all(|d| matches!(d, Reply::Arr(v)
                if matches!(&v[..], [Reply::Status(h)] if h.len() == 40 && h != &"0".repeat(40)))),
            "{before:?}"
        );
        server.restart(); // SHUTDOWN SAVE and start again: the AOF is loaded
        let mut con = server.conn();
        assert!(
            server.log().contains("append only file"),
            "not loaded from the AOF:\n{}",
            server.log()
        );
        let (after, total_after) = digests(&mut con);
        let missing = missing(&mut con, &acked);
        println!(
            "AOF rewrite under writes (aof-use-rdb-preamble {preamble}, {loadchunks} \
             BF.LOADCHUNK in the base): {} items acknowledged, {} checked after the restart, \
             {missing} missing; {} digests compared",
            acked.len(),
            acked.len(),
            before.len()
        );
        assert_eq!(
            after, before,
            "DEBUG DIGEST-VALUE after the restart (preamble {preamble})"
        );
        assert_eq!(total_after, total);
        assert_eq!(missing, 0);
    }
}
