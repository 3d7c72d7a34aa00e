//! Atomic slot migration (where the server has it) moves filters under writes.

use super::*;

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
