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

#[test]
fn replica_holds_identical_filters_and_refuses_writes() {
    let p = Server::new();
    let mut pc = p.conn();
    let items = urls("repl", 3000);
    // Created before the replica exists: it gets them by full sync.
    assert_eq!(run(&mut pc, &["BF.RESERVE", "early", "0.001", "500"]), ok());
    madd(&mut pc, "early", &items);

    let r = p.start_replica(&[]);
    let mut rc = r.conn();
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
    wait_caught_up(&mut pc, &mut rc);
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
    let new_item = absent_item(&mut rc, "implicit", "after promotion");
    assert_eq!(run(&mut rc, &["BF.ADD", "implicit", &new_item]), int(1));
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

/// Adds that stop at a full NONSCALING filter or at the memory limit replicate exactly the items
/// that were taken: a replica and an AOF load running with `propagation-error-behavior panic`
/// (which exit on the first command that errors) rebuild the same bits, and no refused item
/// reaches the AOF.
#[test]
fn refused_items_are_not_replicated() {
    let panic_mode = ["--propagation-error-behavior", "panic"];
    let mut p = Server::with_args(
        &[],
        &[
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--propagation-error-behavior",
            "panic",
        ],
    );
    let mut r = p.start_replica(&panic_mode);
    let mut pc = p.conn();
    // Fixed seeds: the same items fit every run.
    let reserve = ["BF.RESERVE", "ns", "0.01", "3", "NONSCALING", "SEED", "1"];
    assert_eq!(run(&mut pc, &reserve), ok());
    let fill: Vec<String> = (0..6).map(|i| format!("fits-or-refused-{i}")).collect();
    let Reply::Arr(replies) = madd(&mut pc, "ns", &fill) else {
        panic!("BF.MADD")
    };
    assert_eq!(replies.last(), Some(&err(texts::FULL)), "{replies:?}");
    let taken = replies.iter().filter(|r| **r == int(1)).count();
    assert_eq!(taken, 3, "{replies:?}");
    let refused_item = &fill[replies.len() - 1];
    let not_reached = &fill[replies.len()..];
    assert_eq!(
        run(&mut pc, &["BF.INSERT", "ns", "ITEMS", "refused-by-insert"]),
        arr(vec![err(texts::FULL)])
    );
    assert_eq!(
        run(&mut pc, &["BF.ADD", "ns", "refused-by-add"]),
        err(texts::FULL)
    );
    // The memory limit: a scaling filter that may not grow. Refused items do not stop the
    // command, so taken and refused items interleave.
    let reserve = ["BF.RESERVE", "g", "0.01", "100", "SEED", "2"];
    assert_eq!(run(&mut pc, &reserve), ok());
    // The limit counts bit arrays: exactly the first link's.
    let one_link = debug_lines(&mut pc, "g")[1]
        .split(' ')
        .find_map(|f| f.strip_prefix("bytes:"))
        .expect("a bytes: field")
        .to_string();
    let set = ["CONFIG", "SET", "bf.max-filter-bytes", &one_link];
    assert_eq!(run(&mut pc, &set), ok());
    let grow: Vec<String> = (0..160).map(|i| format!("limit-{i}")).collect();
    let Reply::Arr(replies) = madd(&mut pc, "g", &grow) else {
        panic!("BF.MADD")
    };
    let refused: Vec<&String> = grow
        .iter()
        .zip(&replies)
        .filter(|(_, r)| r.is_err())
        .map(|(item, _)| item)
        .collect();
    assert!(refused.len() > 40, "{replies:?}");
    assert_eq!(
        replies.len(),
        grow.len(),
        "the memory limit stops no command"
    );

    let mut rc = r.conn();
    wait_caught_up(&mut pc, &mut rc);
    for key in ["ns", "g"] {
        assert_eq!(digest(&mut pc, key), digest(&mut rc, key), "{key}");
    }
    assert!(r.alive(), "the replica exited:\n{}", r.log());
    assert!(!r.log().contains("CRITICAL"), "{}", r.log());
    let aof = p.aof_bytes();
    assert!(
        contains_bytes(&aof, "fits-or-refused-0"),
        "the AOF holds the taken items"
    );
    for item in [refused_item.as_str(), "refused-by-insert", "refused-by-add"]
        .into_iter()
        .chain(not_reached.iter().map(String::as_str))
        .chain(refused.iter().map(|s| s.as_str()))
    {
        assert!(!contains_bytes(&aof, item), "{item} reached the AOF");
    }
    // An AOF load in panic mode replays every command without an error.
    let digests = [digest(&mut pc, "ns"), digest(&mut pc, "g")];
    drop((pc, rc));
    r.kill();
    p.restart();
    let mut pc = p.conn();
    assert_eq!([digest(&mut pc, "ns"), digest(&mut pc, "g")], digests);
    assert!(!p.log().contains("CRITICAL"), "{}", p.log());
}
