//! The story of one cluster: a million items written, read back everywhere, a primary
//! killed, slots resharded away and back under writes; a function per stage.

use super::*;

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
    the_loader_fills_a_filter_through_the_cluster(&cl, failed.victim);
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

/// `rsbloom load --cluster`, given one node, reaches the node of the filter's key.
fn the_loader_fills_a_filter_through_the_cluster(cl: &Cluster, entry: usize) {
    let items: Vec<String> = (0..20_000).map(|i| url("loader", i)).collect();
    let url = format!("redis://127.0.0.1:{}", cl.nodes[entry].port);
    let mut child = std::process::Command::new(cli_path())
        .args(["load", "--cluster", "-u", &url, "-k", "loader:filter"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all((items.join("\n") + "\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("20000 lines into loader:filter"), "{err}");
    let mut con = cl.client(entry);
    let mut cmd = redis::cmd("BF.MEXISTS");
    cmd.arg("loader:filter").arg(&items);
    let present: Vec<bool> = cmd.query(&mut con).unwrap();
    assert!(present.iter().all(|&p| p), "every line through the cluster");
    println!(
        "cluster: rsbloom load --cluster put 20,000 lines into loader:filter via port {}",
        cl.nodes[entry].port
    );
}
