//! Per-filter random seeds, and replicas / AOF replays that rebuild identical bits.

mod common;

use common::*;
use redis::Value;

fn first_chunk(con: &mut redis::Connection, key: &str) -> Value {
    raw(con, &["BF.SCANDUMP", key, "1"])
}

fn urls(prefix: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("https://{prefix}.example/page/{i}"))
        .collect()
}

#[test]
fn each_filter_gets_its_own_seed_unless_one_is_given() {
    let s = Server::new();
    let mut c = s.conn();
    let items = urls("seed", 200);
    for key in ["a", "b"] {
        assert_eq!(run(&mut c, &["BF.RESERVE", key, "0.01", "1000"]), ok());
        madd(&mut c, key, &items);
    }
    assert_ne!(
        first_chunk(&mut c, "a"),
        first_chunk(&mut c, "b"),
        "same items, same bits: seeds are not random"
    );
    for key in ["c", "d"] {
        assert_eq!(
            run(
                &mut c,
                &["BF.RESERVE", key, "0.01", "1000", "SEED", "12345"]
            ),
            ok()
        );
        madd(&mut c, key, &items);
    }
    assert_eq!(first_chunk(&mut c, "c"), first_chunk(&mut c, "d"));
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "e", "0.01", "10", "SEED", "-1"]).err_text(),
        texts::BAD_SEED
    );
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "e", "0.01", "10", "SEED"]).err_text(),
        texts::BAD_SEED
    );
}

/// Waits until the replica has processed everything the primary sent.
fn sync(primary: &mut redis::Connection) {
    assert_eq!(raw(primary, &["WAIT", "1", "5000"]), Value::Int(1));
}

#[test]
fn replica_holds_identical_filters_and_refuses_writes() {
    let p = Server::new();
    let mut pc = p.conn();
    let items = urls("repl", 3000);
    // Created before the replica exists: it gets them by full sync.
    assert_eq!(run(&mut pc, &["BF.RESERVE", "early", "0.001", "500"]), ok());
    madd(&mut pc, "early", &items);

    let port = p.port.to_string();
    let r = Server::with_args(&[], &["--replicaof", "127.0.0.1", &port]);
    let mut rc = r.conn();
    for _ in 0..100 {
        let info = String::from_utf8(
            redis::cmd("INFO")
                .arg("replication")
                .query::<Vec<u8>>(&mut rc)
                .unwrap(),
        )
        .unwrap();
        if info.contains("master_link_status:up") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Created while the replica is attached: replicated with their seeds.
    assert_eq!(
        run(
            &mut pc,
            &["BF.RESERVE", "reserved", "0.01", "100", "EXPANSION", "3"]
        ),
        ok()
    );
    madd(&mut pc, "reserved", &items);
    madd(&mut pc, "implicit", &items);
    run(&mut pc, &["BF.ADD", "single", "x"]);
    sync(&mut pc);
    for key in ["early", "reserved", "implicit", "single"] {
        assert_eq!(
            digest(&mut pc, key),
            digest(&mut rc, key),
            "digest of {key}"
        );
        // A missing key's digest is forty zeros.
        assert_ne!(
            digest(&mut pc, key),
            arr(vec![Reply::Status("0".repeat(40))]),
            "{key} missing"
        );
    }
    for item in &items {
        assert_eq!(run(&mut rc, &["BF.EXISTS", "implicit", item]), int(1));
    }
    let refused = run(&mut rc, &["BF.ADD", "implicit", "new"]);
    assert!(refused.err_text().starts_with("READONLY"), "{refused:?}");

    // Promote the replica: nothing acknowledged is missing and it takes writes.
    drop(pc);
    drop(p);
    assert_eq!(run(&mut rc, &["REPLICAOF", "NO", "ONE"]), ok());
    for item in &items {
        assert_eq!(run(&mut rc, &["BF.EXISTS", "reserved", item]), int(1));
    }
    assert_eq!(
        run(&mut rc, &["BF.ADD", "implicit", "after promotion"]),
        int(1)
    );
}

#[test]
fn aof_replay_rebuilds_the_same_bits() {
    let mut s = Server::with_args(&[], &["--appendonly", "yes", "--appendfsync", "always"]);
    let items = urls("aof", 2000);
    let before: Vec<Reply> = {
        let mut c = s.conn();
        assert_eq!(run(&mut c, &["BF.RESERVE", "r", "0.01", "100"]), ok());
        madd(&mut c, "r", &items);
        madd(&mut c, "implicit", &items);
        ["r", "implicit"]
            .iter()
            .map(|k| digest(&mut c, k))
            .collect()
    };
    s.restart();
    let mut c = s.conn();
    let after: Vec<Reply> = ["r", "implicit"]
        .iter()
        .map(|k| digest(&mut c, k))
        .collect();
    assert_eq!(before, after);
    for item in &items {
        assert_eq!(run(&mut c, &["BF.EXISTS", "implicit", item]), int(1));
    }
}
