//! DUMP/RESTORE on single servers, and the test's CRC16 against Redis's.

use super::*;

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
