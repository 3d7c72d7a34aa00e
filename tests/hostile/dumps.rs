//! Corrupted DUMP payloads (RESTORE) and corrupted RDB files.

use super::*;

// ---------------------------------------------------------------------------------------------
// DUMP / RESTORE with corrupted payloads

/// Redis's CRC-64 (Jones polynomial, reflected, init 0), which ends every DUMP payload.
fn crc64(data: &[u8]) -> u64 {
    const POLY: u64 = 0xad93_d235_94c9_35a9_u64.reverse_bits();
    let mut crc = 0u64;
    for &byte in data {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// `body` (type byte + value) + the 2-byte RDB version of `original` + a correct CRC.
fn with_crc(body: &[u8], original: &[u8]) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&original[original.len() - 10..original.len() - 8]);
    let crc = crc64(&p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

#[test]
fn restore_of_corrupted_dump_payloads_errors_and_never_crashes() {
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    let server = Server::new();
    let mut con = server.conn();
    setup_sentinels(&mut con);
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "d", "0.01", "20", "EXPANSION", "2"]
        ),
        ok()
    );
    let items: Vec<String> = (0..70).map(|i| format!("x{i}")).collect();
    let mut madd = vec!["BF.MADD".to_string(), "d".into()];
    madd.extend(items.iter().cloned());
    run(&mut con, &madd);
    let Reply::Bulk(payload) = run(&mut con, &["DUMP", "d"]) else {
        panic!("DUMP")
    };
    // the payload's CRC is the one computed here
    assert_eq!(with_crc(&payload[..payload.len() - 10], &payload), payload);
    assert_eq!(
        run(&mut con, &[&b"RESTORE"[..], b"r", b"0", &payload]),
        ok()
    );
    assert_consistent(&mut con, "r", "clean restore");

    restore_corrupted(&mut con, &payload, "MBbloom--");
    // A valkey-bloom filter (its BF.LOAD blob, from valkey-bloom's AOF rewrite), dumped here
    // so that the payload has this server's RDB version.
    let blob = valkey_bloom_blob("bf:scaling");
    assert_eq!(run(&mut con, &[&b"BF.LOAD"[..], b"v", &blob]), ok());
    let Reply::Bulk(payload) = run(&mut con, &["DUMP", "v"]) else {
        panic!("DUMP")
    };
    restore_corrupted(&mut con, &payload, "bloomfltr");
    // A growing filter, over several splits.
    assert_eq!(
        run(&mut con, &["BF.RESERVE", "g", "0.01", "20", "EXPANDABLE"]),
        ok()
    );
    let items: Vec<String> = (0..700).map(|i| format!("g{i}")).collect();
    let mut madd = vec!["BF.MADD".to_string(), "g".into()];
    madd.extend(items);
    run(&mut con, &madd);
    let Reply::Bulk(payload) = run(&mut con, &["DUMP", "g"]) else {
        panic!("DUMP")
    };
    restore_corrupted(&mut con, &payload, "MBbloom--");
}

/// RESTORE of `payload` (a key of type `kind`) corrupted every way: bit flips and random bytes
/// with a recomputed CRC (so the module's loader sees them), truncations, and flips the CRC
/// catches. Each is refused, or is a consistent filter of that type; no server crash.
fn restore_corrupted(con: &mut redis::Connection, payload: &[u8], kind: &str) {
    let body = &payload[..payload.len() - 10];
    let mut rng = Rng(0xd0d0);
    let mut corrupt: Vec<(Vec<u8>, &str)> = Vec::new();
    for i in 0..body.len() {
        // every byte, one random bit flipped, with a valid CRC: the module's loader sees it
        let mut m = body.to_vec();
        m[i] ^= 1 << rng.below(8);
        corrupt.push((with_crc(&m, payload), "bit flip, CRC recomputed"));
        let mut m = body.to_vec();
        m[i] = rng.next() as u8;
        corrupt.push((with_crc(&m, payload), "random byte, CRC recomputed"));
        // truncated there, with a valid CRC
        corrupt.push((with_crc(&body[..i], payload), "truncated, CRC recomputed"));
    }
    for _ in 0..300 {
        let mut m = body.to_vec();
        for _ in 0..=rng.below(6) {
            let i = rng.below(m.len());
            m[i] = rng.next() as u8;
        }
        corrupt.push((with_crc(&m, payload), "random bytes, CRC recomputed"));
    }
    for len in 0..payload.len() {
        corrupt.push((payload[..len].to_vec(), "truncated"));
    }
    for _ in 0..100 {
        let mut m = payload.to_vec();
        let i = rng.below(m.len());
        m[i] ^= 1 << rng.below(8);
        corrupt.push((m, "bit flip"));
    }
    let mut accepted = 0;
    for (n, (p, how)) in corrupt.iter().enumerate() {
        let key = format!("r{}", n % 7);
        let replace = n % 2 == 0;
        let mut args = cmd(&[b"RESTORE", key.as_bytes(), b"0", p]);
        if replace {
            args.push(b("REPLACE"));
        } else {
            run(con, &["DEL", &key]);
        }
        match run(con, &args) {
            Reply::Err(_) => {}
            Reply::Status(s) if s == "OK" => {
                accepted += 1;
                // only a payload that is still a valid filter may be accepted (a flipped bit
                // in a bit array, say)
                assert_eq!(run(con, &["TYPE", &key]), Reply::Status(kind.into()));
                assert_consistent(con, &key, &format!("payload #{n} ({how})"));
            }
            other => panic!("RESTORE #{n} ({how}): {other:?}"),
        }
        if n % 25 == 0 {
            assert_sentinels(
                &pipeline(con, &sentinel_checks()),
                &format!("payload #{n} ({how})"),
            );
        }
    }
    assert_sentinels(&pipeline(con, &sentinel_checks()), "RESTORE fuzzing");
    println!(
        "RESTORE of {kind}: {} corrupted payloads tried, {accepted} accepted as valid filters",
        corrupt.len()
    );
}

// ---------------------------------------------------------------------------------------------
// corrupted RDB files

/// Whether a server's log says it refused its RDB.
fn corrupt_logged(log: &str) -> bool {
    log.contains("Internal error in RDB")
        || log.contains("Short read")
        || log.contains("RDB CRC error")
        || log.contains("Wrong RDB checksum")
        || log.contains("corrupt")
        || log.contains("Bad data format")
}

#[test]
fn corrupted_rdb_files_are_refused_or_load_consistent_filters() {
    let rdb = {
        let server = Server::new();
        let mut con = server.conn();
        setup_sentinels(&mut con);
        assert_eq!(
            run(
                &mut con,
                &["BF.RESERVE", "f1", "0.01", "30", "EXPANSION", "3"]
            ),
            ok()
        );
        assert_eq!(
            run(&mut con, &["BF.RESERVE", "f2", "0.001", "50", "NONSCALING"]),
            ok()
        );
        let items: Vec<String> = (0..100).map(|i| format!("i{i}")).collect();
        let mut madd = vec!["BF.MADD".to_string(), "f1".into()];
        madd.extend(items.iter().cloned());
        run(&mut con, &madd);
        run(&mut con, &["BF.MADD", "f2", "a", "b"]);
        assert_eq!(run(&mut con, &["SAVE"]), ok());
        std::fs::read(server.dir.join("dump.rdb")).unwrap()
    };
    // flip bytes past the key names, where the module values are
    let first_key = rdb
        .windows(SENTINEL.len())
        .position(|w| w == SENTINEL.as_bytes())
        .or_else(|| rdb.windows(2).position(|w| w == b"f1"))
        .expect("a key name in the RDB");
    let end = rdb.len() - 9; // EOF opcode + CRC
    let mut rng = Rng(0x4db);
    let mut files: Vec<(Vec<u8>, &str, bool)> = Vec::new();
    for _ in 0..30 {
        let mut m = rdb.clone();
        let i = first_key + rng.below(end - first_key);
        m[i] ^= 1 << rng.below(8);
        files.push((m, "bit flip", false));
    }
    for _ in 0..15 {
        let mut m = rdb.clone();
        for _ in 0..4 {
            let i = first_key + rng.below(end - first_key);
            m[i] = rng.next() as u8;
        }
        files.push((m, "random bytes", false));
    }
    for k in 1..=8 {
        let len = first_key + (end - first_key) * k / 9;
        files.push((rdb[..len].to_vec(), "truncated", false));
    }
    // with checksums on (the default), a flipped byte is refused before any module code runs
    let mut m = rdb.clone();
    m[first_key + (end - first_key) / 2] ^= 0x10;
    files.push((m, "bit flip, rdbchecksum yes", true));

    let (mut refused, mut refused_then_hung, mut loaded) = (0, 0, 0);
    for (n, (file, how, checksum)) in files.iter().enumerate() {
        let context = format!("RDB #{n} ({how})");
        let checksum = ["--rdbchecksum", if *checksum { "yes" } else { "no" }];
        match Server::start_on_rdb(file, &checksum, corrupt_logged) {
            RdbStart::Refused => refused += 1,
            RdbStart::RefusedThenHung => refused_then_hung += 1,
            RdbStart::Loaded(server) => {
                loaded += 1;
                let mut con = server.conn();
                assert_eq!(
                    run(&mut con, &["PING"]),
                    Reply::Status("PONG".into()),
                    "{context}"
                );
                let Reply::Arr(keys) = run(&mut con, &["KEYS", "*"]) else {
                    panic!("KEYS")
                };
                for k in keys {
                    let Reply::Bulk(k) = k else {
                        panic!("key {k:?}")
                    };
                    let k = String::from_utf8_lossy(&k).into_owned();
                    if run(&mut con, &["TYPE", &k]) == Reply::Status("MBbloom--".into()) {
                        assert_consistent(&mut con, &k, &format!("{context}, key {k}"));
                    }
                }
            }
        }
    }
    println!(
        "RDB: {} corrupted files tried: {refused} refused (exited), {refused_then_hung} refused \
         and then stuck in Redis's own redis-check-rdb (killed), {loaded} loaded",
        files.len()
    );
    assert_eq!(refused + refused_then_hung + loaded, files.len());
}
