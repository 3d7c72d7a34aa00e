//! Growing filters (`EXPANDABLE`, `bf.expandable`): grown from 100 items to 2,000,000 beside a
//! filter reserved for them (the rate at every doubling, no false negatives, memory, no slow
//! command, the digest through DEBUG RELOAD); the options and their refusals; every way a
//! value moves (SCANDUMP/LOADCHUNK, DUMP/RESTORE, COPY, a replica, an AOF rewrite and
//! restart); the per-filter limit.

mod common;

use common::*;

fn urls(prefix: &str, from: usize, n: usize) -> Vec<String> {
    (from..from + n)
        .map(|i| format!("https://{prefix}{}.example.com/page/{i}", i % 977))
        .collect()
}

fn blob(items: &[String]) -> Vec<u8> {
    items.join("\n").into_bytes()
}

/// BF.BULKEXISTS's answers as booleans.
fn bulk_exists(c: &mut redis::Connection, key: &str, items: &[String]) -> Vec<bool> {
    let reply: Vec<u8> = redis::cmd("BF.BULKEXISTS")
        .arg(key)
        .arg(blob(items))
        .query(c)
        .unwrap();
    reply.into_iter().map(|b| b == b'1').collect()
}

fn bulk_add(c: &mut redis::Connection, key: &str, items: &[String]) {
    let reply: Vec<u8> = redis::cmd("BF.BULKADD")
        .arg(key)
        .arg(blob(items))
        .query(c)
        .unwrap();
    assert!(!reply.contains(&b'E'), "an add was refused");
}

#[test]
fn a_filter_grown_from_100_to_2m_holds_the_rate_beside_a_reserved_one() {
    // Every command over 25 ms goes to the slow log.
    let s = Server::with_args(&[], &["--slowlog-log-slower-than", "25000"]);
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "e", "0.01", "100", "EXPANDABLE"]),
        ok()
    );
    assert_eq!(run(&mut c, &["BF.RESERVE", "r", "0.01", "2000000"]), ok());
    let absent = urls("absent", 0, 20_000);
    let (mut added, mut checkpoint) = (0, 100);
    while added < 2_000_000 {
        let next = checkpoint.min(2_000_000);
        // Blobs of 10,000 adds (about 2 ms each), far under the slow log's 25 ms also when
        // both cores are busy.
        for start in (added..next).step_by(10_000) {
            let batch = urls("u", start, (next - start).min(10_000));
            bulk_add(&mut c, "e", &batch);
            bulk_add(&mut c, "r", &batch);
        }
        added = next;
        let sample: Vec<String> = urls("u", 0, added)
            .into_iter()
            .step_by((added / 5_000).max(1))
            .collect();
        assert!(
            bulk_exists(&mut c, "e", &sample).iter().all(|&p| p),
            "a false negative at {added}"
        );
        let fp = count(&bulk_exists(&mut c, "e", &absent)) as f64 / absent.len() as f64;
        assert!(fp <= 0.01, "{fp} false positives at {added} items");
        checkpoint *= 2;
    }
    let (grown, reserved) = (memory_usage(&mut c, "e"), memory_usage(&mut c, "r"));
    assert!(
        grown as f64 <= 1.5 * reserved as f64,
        "{grown} bytes against a reserved filter's {reserved}"
    );
    let Reply::Arr(items) = run(&mut c, &["BF.INFO", "e", "ITEMS"]) else {
        panic!("BF.INFO ITEMS is an array")
    };
    assert_eq!(run(&mut c, &["BF.CARD", "e"]), items[0]);
    let Reply::Arr(info) = run(&mut c, &["BF.INFO", "e"]) else {
        panic!("BF.INFO is an array")
    };
    assert_eq!(
        info[info.len() - 2..],
        [status("Layout"), status("expandable")]
    );
    assert_eq!(info[4..6], [status("Number of filters"), int(1)]);
    // No command so far took 25 ms (the reload below may).
    assert_eq!(
        run(&mut c, &["SLOWLOG", "LEN"]),
        int(0),
        "{:?}",
        run(&mut c, &["SLOWLOG", "GET"])
    );
    let before = digest(&mut c, "e");
    assert_eq!(run(&mut c, &["DEBUG", "RELOAD"]), ok());
    assert_eq!(digest(&mut c, "e"), before);
}

#[test]
fn expandable_is_an_option_of_its_own_and_a_default_for_adds() {
    let s = Server::new();
    let mut c = s.conn();
    for args in [
        &["BF.RESERVE", "x", "0.01", "100", "EXPANDABLE", "NONSCALING"][..],
        &[
            "BF.RESERVE",
            "x",
            "0.01",
            "100",
            "EXPANSION",
            "4",
            "EXPANDABLE",
        ],
        &["BF.RESERVE", "x", "0.01", "100", "EXPANDABLE", "SLIDING"],
        &[
            "BF.RESERVE",
            "x",
            "0.01",
            "100",
            "WINDOW",
            "60",
            "EXPANDABLE",
        ],
        &["BF.INSERT", "x", "EXPANDABLE", "NONSCALING", "ITEMS", "a"],
        &[
            "BF.INSERT",
            "x",
            "EXPANSION",
            "2",
            "EXPANDABLE",
            "ITEMS",
            "a",
        ],
    ] {
        assert_eq!(
            run(&mut c, args),
            err(texts::EXPANDABLE_CONFLICT),
            "{args:?}"
        );
    }
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "x", "1e-9", "100", "EXPANDABLE"]),
        err(texts::EXPANDABLE_ERROR_RATE)
    );
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "x", "0.01", "100", "EXPANDABLE", "EXPANDABLE"]
        )
        .err_text(),
        "ERR EXPANDABLE is given twice"
    );
    assert_eq!(run(&mut c, &["EXISTS", "x"]), int(0));
    // BF.INSERT creates one; items and answers as a chain's.
    assert_eq!(
        run(
            &mut c,
            &[
                "BF.INSERT",
                "i",
                "CAPACITY",
                "10",
                "EXPANDABLE",
                "ITEMS",
                "a",
                "b",
                "a"
            ]
        ),
        ints(&[1, 1, 0])
    );
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "i", "a", "b", "c"]),
        ints(&[1, 1, 0])
    );
    assert!(debug_lines(&mut c, "i")[1].starts_with("layout:expandable ratio:0.01 capacity:10 "));
    // bf.expandable: adds create growing filters; a time window still grows as a chain does.
    assert_eq!(
        run(&mut c, &["CONFIG", "SET", "bf.expandable", "yes"]),
        ok()
    );
    assert_eq!(run(&mut c, &["BF.ADD", "d", "a"]), int(1));
    assert!(debug_lines(&mut c, "d")[1].starts_with("layout:expandable"));
    assert_eq!(
        run(&mut c, &["BF.INSERT", "w", "WINDOW", "60", "ITEMS", "a"]),
        ints(&[1])
    );
    assert_eq!(
        run(&mut c, &["BF.INFO", "w", "EXPANSION"]),
        arr(vec![int(2)])
    );
    assert_eq!(run(&mut c, &["BF.RESERVE", "plain", "0.01", "100"]), ok());
    assert!(!debug_lines(&mut c, "plain")[1].starts_with("layout:"));
    assert_eq!(run(&mut c, &["CONFIG", "SET", "bf.expandable", "no"]), ok());
    assert_eq!(run(&mut c, &["BF.ADD", "chain", "a"]), int(1));
    assert!(!debug_lines(&mut c, "chain")[1].starts_with("layout:"));
}

#[test]
fn a_growing_filter_moves_whole_every_way_a_value_moves() {
    let s = Server::with_args(&[], &["--appendonly", "yes"]);
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "e", "0.001", "100", "EXPANDABLE"]),
        ok()
    );
    let replica = s.start_replica(&[]);
    let mut r = replica.conn();
    let items = urls("m", 0, 60_000);
    for part in items.chunks(10_000) {
        bulk_add(&mut c, "e", part);
    }
    let _ = madd(&mut c, "e", &urls("madd", 0, 500));
    let want = digest(&mut c, "e");
    // SCANDUMP / LOADCHUNK.
    let mut iterator = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
            .arg("e")
            .arg(iterator)
            .query(&mut c)
            .unwrap();
        if next == 0 {
            break;
        }
        let loaded: String = redis::cmd("BF.LOADCHUNK")
            .arg("copy")
            .arg(next)
            .arg(data)
            .query(&mut c)
            .unwrap();
        assert_eq!(loaded, "OK");
        iterator = next;
    }
    assert_eq!(digest(&mut c, "copy"), want);
    // DUMP / RESTORE and COPY.
    let payload = dump(&mut c, "e");
    restore(&mut c, "restored", &payload).unwrap();
    assert_eq!(digest(&mut c, "restored"), want);
    assert_eq!(run(&mut c, &["COPY", "e", "copied"]), int(1));
    assert_eq!(digest(&mut c, "copied"), want);
    // The replica, then an AOF rewrite and a restart.
    wait_caught_up(&mut c, &mut r);
    assert_eq!(digest(&mut r, "e"), want);
    assert!(!run(&mut c, &["BGREWRITEAOF"]).is_err());
    s.wait_for_aof_rewrite(&mut c);
    let mut s = s;
    s.restart();
    let mut c = s.conn();
    assert_eq!(digest(&mut c, "e"), want);
    assert_eq!(digest(&mut c, "copy"), want);
    assert!(bulk_exists(&mut c, "e", &items).iter().all(|&p| p));
}

#[test]
fn the_per_filter_limit_refuses_an_add_that_would_pass_it() {
    let s = Server::with_args(&[], &["--bf.max-filter-bytes", "65536"]);
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "e", "0.01", "100", "EXPANDABLE"]),
        ok()
    );
    let items = urls("l", 0, 100_000);
    let reply: Vec<u8> = redis::cmd("BF.BULKADD")
        .arg("e")
        .arg(blob(&items))
        .query(&mut c)
        .unwrap();
    let taken = reply
        .iter()
        .position(|&b| b == b'E')
        .expect("the limit refused an add");
    assert!(taken > 10_000, "refused after {taken}");
    let card = run(&mut c, &["BF.CARD", "e"]);
    let refused = run(&mut c, &["BF.ADD", "e", "one more"]);
    assert!(
        refused.err_text().contains("max-filter-bytes"),
        "{refused:?}"
    );
    assert_eq!(run(&mut c, &["BF.CARD", "e"]), card);
    assert!(bulk_exists(&mut c, "e", &items[..taken]).iter().all(|&p| p));
}

/// A growing filter saved by an earlier build (`tests/fixtures/growing/<name>.dump`, 30,000
/// items `item-0` on, `README.md` there): it loads with the digest it had, saves the same
/// bytes, holds `card` items and every one it was given, reads the same false positives among
/// `absent-0` .. `absent-19999`, and grows on by 10,000 `more-` items to the digest it always
/// reached.
fn a_saved_growing_filter_loads_answers_and_saves_as_it_did(
    name: &str,
    digest_then: &str,
    card: i64,
    digest_grown: &str,
) {
    let s = Server::new();
    let mut c = s.conn();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/growing");
    let payload = std::fs::read(format!("{dir}/{name}.dump")).unwrap();
    assert_eq!(restore(&mut c, name, &payload), Ok(redis::Value::Okay));
    assert_eq!(
        digest(&mut c, name),
        arr(vec![Reply::Status(digest_then.into())]),
        "the digest it had"
    );
    // The value's bytes, without the payload's 2-byte RDB version and 8-byte checksum.
    let value = |p: &[u8]| p[..p.len() - 10].to_vec();
    assert_eq!(
        value(&dump(&mut c, name)),
        value(&payload),
        "saved the same"
    );
    assert_eq!(run(&mut c, &["BF.CARD", name]), int(card));
    let added = items("item-", 30_000);
    assert!(bulk_exists(&mut c, name, &added).iter().all(|&p| p));
    let answers = bulk_exists(&mut c, name, &items("absent-", 20_000));
    let positives: Vec<usize> = (0..answers.len()).filter(|&i| answers[i]).collect();
    assert_eq!(
        positives,
        recorded_false_positives(&format!("{dir}/{name}.present")),
        "the same false positives"
    );
    bulk_add(&mut c, name, &items("more-", 10_000));
    assert!(bulk_exists(&mut c, name, &added).iter().all(|&p| p));
    assert_eq!(
        digest(&mut c, name),
        arr(vec![Reply::Status(digest_grown.into())]),
        "the digest its growth always gave"
    );
}

/// The chunk layout's first filter: it grows on as a new one of that layout would, its splits
/// (some 50) as they always did: the digest recorded by the build before the splits' walks lost
/// their branches.
#[test]
fn the_first_growing_filters_saved_load_answer_and_save_as_they_did() {
    a_saved_growing_filter_loads_answers_and_saves_as_it_did(
        "growing",
        "20bb963a149b072783a8dc691ec58a89b3b587fd",
        29_944,
        "528ee46841d4f181a75b38bc4da7ff422a71d46a",
    );
}

/// The one-line layout's first filter: it grows on by lines and growth steps as they always
/// went.
#[test]
fn the_first_one_line_filters_saved_load_answer_and_save_as_they_did() {
    a_saved_growing_filter_loads_answers_and_saves_as_it_did(
        "lines",
        "52a9f869fa7661c6606cc1375fa08b63fd203641",
        29_914,
        "a0af24d534d2d85189db0cd8a52c84708688a541",
    );
}
