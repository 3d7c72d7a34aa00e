//! valkey-bloom users switch without losing a filter: every RDB, DUMP payload and AOF that
//! valkey-bloom wrote (`tests/fixtures/valkey-bloom/`, with the answers it gave) loads into
//! rsbloom, answers as valkey-bloom did, saves back byte for byte while untouched, grows as
//! valkey-bloom would, and replicates. Most tests run on Valkey 9.1 and 8.1 (the servers
//! valkey-bloom runs on) whatever `$RSBLOOM_TEST_SERVER` names; one loads what each other server
//! can read on the tests' own server.

mod common;

use std::path::PathBuf;

use common::*;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/valkey-bloom")
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// One key valkey-bloom made, with what it answered.
#[derive(Clone)]
struct Recorded {
    name: String,
    items: Vec<Vec<u8>>,
    /// The never-added items `never:{key}:{i}` that answered 1.
    positives: Vec<usize>,
    card: i64,
    capacity: i64,
    filters: i64,
    /// None for NONSCALING.
    expansion: Option<i64>,
    /// DUMP's payloads on Valkey 8.1.1 (RDB 11) and 9.1.2 (RDB 80), recorded for every key
    /// but bf:big.
    dump_81: Option<Vec<u8>>,
    dump_91: Option<Vec<u8>>,
}

fn recorded() -> Vec<Recorded> {
    let text = String::from_utf8(fixture("expected.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut keys: Vec<Recorded> = json["keys"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, k)| {
            let hex = k["items_encoding"] == "hex";
            let info = &k["bf_info_fields"];
            Recorded {
                name: name.clone(),
                items: k["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| {
                        let s = i.as_str().unwrap();
                        if hex {
                            unhex(s)
                        } else {
                            s.as_bytes().to_vec()
                        }
                    })
                    .collect(),
                positives: k["never_added"]["positive_indexes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_u64().unwrap() as usize)
                    .collect(),
                card: k["bf_card"].as_i64().unwrap(),
                capacity: info["CAPACITY"].as_i64().unwrap(),
                filters: info["FILTERS"].as_i64().unwrap(),
                expansion: info["EXPANSION"].as_i64(),
                dump_81: k["dump_valkey_8.1.1_hex"].as_str().map(unhex),
                dump_91: k["dump_valkey_9.1.2_hex"].as_str().map(unhex),
            }
        })
        .collect();
    keys.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(keys.len(), 13, "the fixture's keys");
    keys
}

/// `BF.MEXISTS key items...` in batches, as booleans.
fn mexists(con: &mut redis::Connection, key: &str, items: &[Vec<u8>]) -> Vec<bool> {
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(2000) {
        let mut args: Vec<&[u8]> = vec![b"BF.MEXISTS", key.as_bytes()];
        args.extend(chunk.iter().map(Vec::as_slice));
        match run(con, &args) {
            Reply::Arr(v) => out.extend(v.iter().map(|r| *r == int(1))),
            other => panic!("BF.MEXISTS {key}: {other:?}"),
        }
    }
    out
}

/// Asserts that every key answers every recorded query as valkey-bloom did: TYPE, every added
/// item, the 10,000 never-added items (false positives included), BF.CARD and BF.INFO's
/// fields but Size (each module's own memory).
fn answers_as_recorded(con: &mut redis::Connection, keys: &[Recorded], when: &str) {
    for k in keys {
        let key = k.name.as_str();
        assert_eq!(
            run(con, &["TYPE", key]),
            status("bloomfltr"),
            "{when}: {key}"
        );
        let present = mexists(con, key, &k.items);
        assert!(
            present.iter().all(|&p| p),
            "{when}: {key}: an added item is absent"
        );
        let never: Vec<Vec<u8>> = (0..10_000)
            .map(|i| format!("never:{key}:{i}").into_bytes())
            .collect();
        let hits: Vec<usize> = mexists(con, key, &never)
            .iter()
            .enumerate()
            .filter_map(|(i, &p)| p.then_some(i))
            .collect();
        assert_eq!(
            hits, k.positives,
            "{when}: {key}: never-added items answering 1"
        );
        assert_eq!(run(con, &["BF.CARD", key]), int(k.card), "{when}: {key}");
        for (field, want) in [
            ("CAPACITY", int(k.capacity)),
            ("FILTERS", int(k.filters)),
            ("ITEMS", int(k.card)),
            ("EXPANSION", k.expansion.map_or(Reply::Nil, int)),
        ] {
            let got = match run(con, &["BF.INFO", key, field]) {
                Reply::Arr(v) if v.len() == 1 => v[0].clone(),
                other => other,
            };
            assert_eq!(got, want, "{when}: {key}: BF.INFO {field}");
        }
    }
}

/// Which recorded DUMP payloads a server's must equal: Valkey 9.1.2's (RDB 80), 8.1.1's (RDB
/// 11), or, on another server (another RDB version in its trailer), none.
#[derive(Clone, Copy, PartialEq)]
enum Payloads {
    Valkey91,
    Valkey81,
    Other,
}

impl Payloads {
    fn of(version: &str) -> Self {
        if version == "9.1" {
            Payloads::Valkey91
        } else {
            Payloads::Valkey81
        }
    }
}

/// Asserts that DUMP of every key is the payload valkey-bloom's server gave (see
/// [`Payloads`]), and that the value in it (the payload but its type byte, RDB version and
/// checksum) is byte for byte the one in valkey-bloom's RDB file (the only record of bf:big's
/// bytes; both servers' files hold the same values).
fn dumps_as_recorded(
    con: &mut redis::Connection,
    keys: &[Recorded],
    payloads: Payloads,
    when: &str,
) {
    let rdb = fixture(if payloads == Payloads::Valkey81 {
        "valkey-8.1.1-dump.rdb"
    } else {
        "valkey-9.1.2-dump.rdb"
    });
    for k in keys {
        let payload = dump(con, &k.name);
        let recorded = match payloads {
            Payloads::Valkey91 => &k.dump_91,
            Payloads::Valkey81 => &k.dump_81,
            Payloads::Other => &None,
        };
        if let Some(want) = recorded {
            assert_eq!(&payload, want, "{when}: DUMP {}", k.name);
        }
        let value = &payload[1..payload.len() - 10];
        assert!(
            rdb.windows(value.len()).any(|w| w == value),
            "{when}: {}'s value is not the one in valkey-bloom's RDB",
            k.name
        );
    }
}

fn valkey(version: &str) -> String {
    servers_path(&format!("valkey-{version}"))
}

#[test]
fn every_rdb_loads_answers_and_saves_as_valkey_bloom_wrote_it() {
    let keys = recorded();
    let cases = [
        ("9.1", "valkey-9.1.2-dump.rdb"),
        ("9.1", "valkey-8.1.1-dump.rdb"),
        ("9.1", "valkey-8.1.1-dump-rdbcompression-no.rdb"),
        ("8.1", "valkey-8.1.1-dump.rdb"),
        ("8.1", "valkey-8.1.1-dump-rdbcompression-no.rdb"),
    ];
    for (version, file) in cases {
        let when = format!("Valkey {version} loading {file}");
        let mut s = Server::start_with_files(&valkey(version), &[("dump.rdb", fixture(file))], &[])
            .unwrap_or_else(|log| panic!("{when}: refused:\n{log}"));
        let mut c = s.conn();
        assert_eq!(run(&mut c, &["DBSIZE"]), int(13), "{when}");
        answers_as_recorded(&mut c, &keys, &when);
        dumps_as_recorded(&mut c, &keys, Payloads::of(version), &when);
        // Saved by rsbloom and loaded again: still valkey-bloom's bytes.
        s.restart();
        let mut c = s.conn();
        dumps_as_recorded(
            &mut c,
            &keys,
            Payloads::of(version),
            &format!("{when}, after a restart"),
        );
    }
    // Valkey 8.1 cannot read RDB 80, whatever the modules: the server says so before any
    // module sees a value.
    match Server::start_with_files(
        &valkey("8.1"),
        &[("dump.rdb", fixture("valkey-9.1.2-dump.rdb"))],
        &[],
    ) {
        Ok(_) => panic!("Valkey 8.1 loaded RDB 80"),
        Err(log) => assert!(log.contains("Can't handle RDB format version 80"), "{log}"),
    }
}

#[test]
fn every_dump_payload_restores_on_both_servers() {
    let keys = recorded();
    for version in ["9.1", "8.1"] {
        let s = Server::start_with_files(&valkey(version), &[], &[]).unwrap();
        let mut c = s.conn();
        // bf:big's payload was not recorded: it comes from the RDB alone.
        let keys: Vec<Recorded> = keys
            .iter()
            .filter(|k| k.dump_81.is_some())
            .cloned()
            .collect();
        for k in &keys {
            let payload = k.dump_81.as_ref().unwrap();
            assert_eq!(
                restore(&mut c, &k.name, payload),
                Ok(redis::Value::Okay),
                "{}",
                k.name
            );
        }
        let when = format!("Valkey {version} after RESTORE of Valkey 8.1.1's DUMP payloads");
        answers_as_recorded(&mut c, &keys, &when);
        dumps_as_recorded(&mut c, &keys, Payloads::of(version), &when);
    }
    // The raw payloads saved beside (three keys, from each server).
    let s = Server::start_with_files(&valkey("9.1"), &[], &[]).unwrap();
    let mut c = s.conn();
    for name in ["bf_binary", "bf_fixedseed", "bf_scaling"] {
        for server in ["8.1.1", "9.1.2"] {
            let payload = fixture(&format!("dumps/{name}.valkey-{server}.dump"));
            let key = format!("{name}-{server}");
            assert_eq!(
                restore(&mut c, &key, &payload),
                Ok(redis::Value::Okay),
                "{key}"
            );
            let k = keys
                .iter()
                .find(|k| k.name == name.replace('_', ":"))
                .unwrap();
            assert_eq!(run(&mut c, &["BF.CARD", &key]), int(k.card), "{key}");
            assert_eq!(
                Some(dump(&mut c, &key)),
                k.dump_91,
                "{key}: DUMP on Valkey 9.1"
            );
        }
    }
}

/// The files of a fixture AOF folder, as `appendonlydir/<name>`.
fn aof_files(folder: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fixtures().join(folder);
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (
                format!("appendonlydir/{name}"),
                std::fs::read(&path).unwrap(),
            )
        })
        .collect()
}

fn start_on_aof(binary: &str, folder: &str) -> Server {
    let files = aof_files(folder);
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    Server::start_with_files(
        binary,
        &files,
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
    )
    .unwrap_or_else(|log| panic!("{folder} refused:\n{log}"))
}

/// Both AOF forms replay on Valkey 9.1 and 8.1 to valkey-bloom's keys, byte for byte: its
/// rewrite (`BF.LOAD key blob`) and its command stream, whose `BF.INSERT … TIGHTENING t SEED s`
/// (each key's creation) valkey-bloom itself refuses on replay.
#[test]
fn both_aof_forms_replay_to_valkey_bloom_s_keys() {
    let keys = recorded();
    for version in ["9.1", "8.1"] {
        for folder in [
            "aof-rewrite-8.1.1",
            "aof-rewrite-9.1.2",
            "aof-incremental-8.1.1",
        ] {
            let s = start_on_aof(&valkey(version), folder);
            let mut c = s.conn();
            let when = format!("Valkey {version} replaying {folder}");
            answers_as_recorded(&mut c, &keys, &when);
            dumps_as_recorded(&mut c, &keys, Payloads::of(version), &when);
        }
    }
}

/// On the tests' own server (Redis 7.0 in the main run; Redis 7.4, 8.0, Valkey 8.1 and 9.1 in
/// the matrix): the `BF.LOAD` form replays everywhere, and Valkey 8.1's RDB (version 11) and
/// DUMP payloads load wherever the server reads that RDB version (every one but Redis 7.0,
/// which refuses them before any module sees them). Each gives the recorded answers and
/// values byte for byte valkey-bloom's.
#[test]
fn valkey_bloom_data_on_the_tests_own_server() {
    let keys = recorded();
    let binary = server_binary();
    let s = start_on_aof(&binary, "aof-rewrite-9.1.2");
    let mut c = s.conn();
    answers_as_recorded(&mut c, &keys, "the tests' server replaying BF.LOAD");
    dumps_as_recorded(
        &mut c,
        &keys,
        Payloads::Other,
        "the tests' server replaying BF.LOAD",
    );

    let rdb = [("dump.rdb", fixture("valkey-8.1.1-dump.rdb"))];
    let from_rdb = Server::start_with_files(&binary, &rdb, &[]);
    let s = Server::start_with_files(&binary, &[], &[]).unwrap();
    let mut c = s.conn();
    let restored: Vec<Reply> = keys
        .iter()
        .filter_map(|k| {
            Some(run(
                &mut c,
                &[
                    b"RESTORE".as_slice(),
                    k.name.as_bytes(),
                    b"0",
                    k.dump_81.as_ref()?,
                ],
            ))
        })
        .collect();
    if flavor() == Flavor::Redis70 {
        match from_rdb {
            Ok(_) => panic!("Redis 7.0 loaded RDB 11"),
            Err(log) => assert!(log.contains("Can't handle RDB format version 11"), "{log}"),
        }
        for r in restored {
            assert_eq!(r, err("ERR DUMP payload version or checksum are wrong"));
        }
        return;
    }
    let from_rdb = from_rdb.unwrap_or_else(|log| panic!("Valkey 8.1's RDB refused:\n{log}"));
    answers_as_recorded(
        &mut from_rdb.conn(),
        &keys,
        "the tests' server on Valkey 8.1's RDB",
    );
    dumps_as_recorded(
        &mut from_rdb.conn(),
        &keys,
        Payloads::Other,
        "the tests' server on Valkey 8.1's RDB",
    );
    assert!(restored.iter().all(|r| *r == ok()), "{restored:?}");
    let keys: Vec<Recorded> = keys.into_iter().filter(|k| k.dump_81.is_some()).collect();
    answers_as_recorded(&mut c, &keys, "the tests' server after RESTORE");
    dumps_as_recorded(
        &mut c,
        &keys,
        Payloads::Other,
        "the tests' server after RESTORE",
    );
}

#[test]
fn adds_grow_a_loaded_key_as_valkey_bloom_would_and_keep_its_rate() {
    let s = Server::start_with_files(
        &valkey("9.1"),
        &[("dump.rdb", fixture("valkey-9.1.2-dump.rdb"))],
        &[],
    )
    .unwrap();
    let mut c = s.conn();
    // bf:reserve holds 499 of its 1,000 at 1%; double it past its capacity (3,000 items), so
    // that a second sub-filter of 2,000 at 0.5% takes the rest.
    let grow = items("grow", 2_501);
    let added: usize = grow
        .chunks(500)
        .map(|chunk| match madd(&mut c, "bf:reserve", chunk) {
            Reply::Arr(v) => v.iter().filter(|r| **r == int(1)).count(),
            other => panic!("{other:?}"),
        })
        .sum();
    let info = run(&mut c, &["BF.INFO", "bf:reserve"]);
    let Reply::Arr(fields) = info else { panic!() };
    assert_eq!(
        fields[1],
        int(3_000),
        "capacity after growing: 1,000 + 2,000"
    );
    assert_eq!(fields[5], int(2), "two sub-filters");
    assert_eq!(fields[7], int(499 + added as i64));
    let debug = run(&mut c, &["BF.DEBUG", "bf:reserve"]);
    let Reply::Arr(lines) = debug else { panic!() };
    assert_eq!(
        lines[2],
        bulk(&format!(
            "bytes:2757 bits:22056 hashes:8 hashwidth:64 capacity:2000 size:{} ratio:0.005",
            499 + added as i64 - 1_000
        )),
        "the new sub-filter: valkey-bloom's sizing at 1% × 0.5"
    );
    let present = mexists(
        &mut c,
        "bf:reserve",
        &grow
            .iter()
            .map(|s| s.clone().into_bytes())
            .collect::<Vec<_>>(),
    );
    assert!(
        present.iter().all(|&p| p),
        "no false negative after growing"
    );
    let absent: Vec<Vec<u8>> = (0..50_000)
        .map(|i| format!("absent:{i}").into_bytes())
        .collect();
    let fp = mexists(&mut c, "bf:reserve", &absent)
        .iter()
        .filter(|&&p| p)
        .count();
    // valkey-bloom's promise for a scaling filter: at most the sum of its sub-filters' rates
    // (1% + 0.5% here; error / (1 - tightening) = 2% for any number of them). Allowed: that
    // sum over 50,000 reads, plus four standard deviations.
    let bound = 50_000.0 * (0.01 + 0.005);
    println!(
        "bf:reserve doubled: {fp} false positives of 50,000 ({:.3}%)",
        fp as f64 / 500.0
    );
    assert!(
        (fp as f64) < bound + 4.0 * f64::sqrt(bound),
        "{fp} false positives of 50,000"
    );
    // A NONSCALING key refuses a new item with RedisBloom's (and valkey-bloom's) error, and
    // still answers 0 for an item it holds.
    assert_eq!(
        run(&mut c, &["BF.ADD", "bf:nonscaling", "one more"]),
        err("ERR non scaling filter is full")
    );
    assert_eq!(
        run(&mut c, &["BF.ADD", "bf:nonscaling", "bf:nonscaling:item:0"]),
        int(0)
    );
}

#[test]
fn a_loaded_key_replicates_digest_identical() {
    let binary = valkey("9.1");
    let primary = Server::start_with_files(
        &binary,
        &[("dump.rdb", fixture("valkey-9.1.2-dump.rdb"))],
        &[],
    )
    .unwrap();
    let port = primary.port.to_string();
    let replica =
        Server::start_with_files(&binary, &[], &["--replicaof", "127.0.0.1", &port]).unwrap();
    let mut cp = primary.conn();
    let mut cr = replica.conn();
    replica.wait_for("the replica to hold the 13 keys", 60, || {
        info_value(&mut cr, "replication", "master_link_status").as_deref() == Some("up")
            && run(&mut cr, &["DBSIZE"]) == int(13)
    });
    let keys = recorded();
    // Writes that grow, refuse and create: a new sub-filter, a full NONSCALING key, a COPY,
    // a BF.LOAD.
    madd(&mut cp, "bf:scaling", &items("more", 2_000));
    madd(&mut cp, "bf:nonscaling", &items("refused", 3));
    assert_eq!(run(&mut cp, &["COPY", "bf:exp4", "bf:copy"]), int(1));
    let blob = valkey_bloom_blob("bf:default");
    assert_eq!(
        run(&mut cp, &[b"BF.LOAD".as_slice(), b"bf:loaded", &blob]),
        ok()
    );
    let offset = || info_value(&mut primary.conn(), "replication", "master_repl_offset");
    let want = offset();
    replica.wait_for("the replica to catch up", 60, || {
        info_value(&mut cr, "replication", "slave_repl_offset") == want
    });
    for name in keys
        .iter()
        .map(|k| k.name.as_str())
        .chain(["bf:copy", "bf:loaded"])
    {
        assert_eq!(
            run(&mut cr, &["TYPE", name]),
            status("bloomfltr"),
            "{name} on the replica"
        );
        let d = digest(&mut cp, name);
        assert!(matches!(&d, Reply::Arr(v) if v.len() == 1), "{d:?}");
        assert_eq!(digest(&mut cr, name), d, "DEBUG DIGEST-VALUE {name}");
        assert_eq!(dump(&mut cr, name), dump(&mut cp, name), "DUMP {name}");
    }
}

#[test]
fn copy_scandump_and_the_aof_rewrite_keep_valkey_bloom_s_keys() {
    let keys = recorded();
    let s = Server::start_with_files(
        &valkey("9.1"),
        &[("dump.rdb", fixture("valkey-9.1.2-dump.rdb"))],
        &["--aof-use-rdb-preamble", "no"],
    )
    .unwrap();
    let mut c = s.conn();
    // Turning the AOF on writes the loaded keys into it: the first AOF rewrite.
    assert_eq!(run(&mut c, &["CONFIG", "SET", "appendonly", "yes"]), ok());
    s.wait_for_aof_rewrite(&mut c);
    for k in &keys {
        let copy = format!("{}:copy", k.name);
        assert_eq!(run(&mut c, &["COPY", &k.name, &copy]), int(1));
        assert_eq!(run(&mut c, &["TYPE", &copy]), status("bloomfltr"));
        assert_eq!(
            dump(&mut c, &copy),
            dump(&mut c, &k.name),
            "COPY of {}",
            k.name
        );
        // SCANDUMP, then LOADCHUNK into a new key: a bloomfltr key with the same bytes.
        let moved = format!("{}:moved", k.name);
        let mut iterator = 0i64;
        loop {
            let (next, data): (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
                .arg(&k.name)
                .arg(iterator)
                .query(&mut c)
                .unwrap();
            if next == 0 {
                break;
            }
            let r: redis::Value = redis::cmd("BF.LOADCHUNK")
                .arg(&moved)
                .arg(next)
                .arg(data)
                .query(&mut c)
                .unwrap();
            assert_eq!(r, redis::Value::Okay);
            iterator = next;
        }
        assert_eq!(run(&mut c, &["TYPE", &moved]), status("bloomfltr"));
        assert_eq!(
            dump(&mut c, &moved),
            dump(&mut c, &k.name),
            "SCANDUMP/LOADCHUNK of {}",
            k.name
        );
    }
    assert_eq!(
        run(&mut c, &["BGREWRITEAOF"]),
        status("Background append only file rewriting started")
    );
    s.wait_for_aof_rewrite(&mut c);
    let aof = s.aof_bytes();
    assert!(
        contains_bytes(&aof, "BF.LOAD"),
        "the rewrite writes valkey-bloom's form"
    );
    assert!(
        !contains_bytes(&aof, "BF.LOADCHUNK"),
        "and not the SCANDUMP stream"
    );
    // A new server with only that AOF.
    let files: Vec<(String, Vec<u8>)> = std::fs::read_dir(s.dir.join("appendonlydir"))
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (
                format!("appendonlydir/{name}"),
                std::fs::read(&path).unwrap(),
            )
        })
        .collect();
    let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let s = Server::start_with_files(&valkey("9.1"), &files, &["--appendonly", "yes"]).unwrap();
    let mut c = s.conn();
    answers_as_recorded(&mut c, &keys, "after replaying rsbloom's AOF rewrite");
    dumps_as_recorded(
        &mut c,
        &keys,
        Payloads::Valkey91,
        "after replaying rsbloom's AOF rewrite",
    );
}

#[test]
fn valkey_bloom_s_own_arguments_and_bf_load_refusals() {
    let s = Server::new();
    let mut c = s.conn();
    let seed = [7u8; 32];
    // A client's TIGHTENING and SEED are unknown arguments (valkey-bloom takes them only from
    // its primary; rsbloom from the primary and the AOF).
    for option in [&b"TIGHTENING"[..], b"SEED"] {
        let value: &[u8] = if option == b"SEED" { &seed } else { b"0.5" };
        let args: Vec<&[u8]> = vec![b"BF.INSERT", b"k", option, value, b"ITEMS", b"a"];
        assert_eq!(run(&mut c, &args), err("Unknown argument received"));
    }
    assert_eq!(run(&mut c, &["EXISTS", "k"]), int(0));
    // BF.LOAD: an existing key, another blob version, a blob that is not a filter.
    let blob = valkey_bloom_blob("bf:default");
    let load = |c: &mut redis::Connection, key: &str, blob: &[u8]| {
        run(c, &[b"BF.LOAD".as_slice(), key.as_bytes(), blob])
    };
    assert_eq!(load(&mut c, "v", &blob), ok());
    assert_eq!(run(&mut c, &["TYPE", "v"]), status("bloomfltr"));
    assert_eq!(run(&mut c, &["BF.CARD", "v"]), int(149));
    assert_eq!(
        load(&mut c, "v", &blob),
        err("BUSYKEY Target key name already exists.")
    );
    assert_eq!(run(&mut c, &["SET", "str", "x"]), ok());
    assert_eq!(
        load(&mut c, "str", &blob).err_text(),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
    let mut other = blob.clone();
    other[0] = 2;
    assert_eq!(
        load(&mut c, "w", &other),
        err("ERR bloom object decoding failed. Unsupported version")
    );
    assert_eq!(
        load(&mut c, "w", &blob[..100]),
        err("ERR bloom object decoding failed")
    );
    assert_eq!(run(&mut c, &["EXISTS", "w"]), int(0));
    assert_eq!(run(&mut c, &["BF.LOAD", "w"]), arity("BF.LOAD"));
    // New keys get rsbloom's own layout: BF.ADD next to a bloomfltr key makes an MBbloom-- key.
    assert_eq!(run(&mut c, &["BF.ADD", "n", "a"]), int(1));
    assert_eq!(run(&mut c, &["TYPE", "n"]), status("MBbloom--"));
    // A CF command on a bloomfltr key is a wrong type, as on any Bloom key.
    assert_eq!(
        run(&mut c, &["CF.EXISTS", "v", "a"]).err_text(),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
}
