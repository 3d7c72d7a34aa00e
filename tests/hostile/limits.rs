//! The memory limits: the per-filter limit on every way of creating or growing a filter, and
//! maxmemory.

use super::*;

// ---------------------------------------------------------------------------------------------
// 2. memory

/// The limit error names the limit and how it is set (`MAX_FILTER_BYTES`).
fn names_limit(e: &str) -> bool {
    e.starts_with("ERR filter would need ")
        && e.contains("over the per-filter limit of 65536 bytes")
        && e.contains("MAX_FILTER_BYTES")
}

#[test]
fn per_filter_limit_holds_for_every_way_of_creating_or_growing() {
    let server = Server::with_args(
        &["MAX_FILTER_BYTES", "65536", "INITIAL_SIZE", "10000000"],
        &[],
    );
    let mut con = server.conn();
    let refused = |r: Reply, what: &str| {
        let e = r.err_text().to_string();
        assert!(names_limit(&e), "{what}: {e}");
    };
    refused(
        run(&mut con, &["BF.RESERVE", "r", "0.01", "1000000"]),
        "RESERVE",
    );
    refused(
        run(
            &mut con,
            &["BF.RESERVE", "r", "0.01", "9223372036854775807"],
        ),
        "RESERVE max",
    );
    refused(
        run(&mut con, &["BF.RESERVE", "r", "1e-300", "100000"]),
        "RESERVE tiny rate",
    );
    refused(
        run(
            &mut con,
            &["BF.INSERT", "i", "CAPACITY", "1000000", "ITEMS", "a"],
        ),
        "INSERT CAPACITY",
    );
    // implicit creation with INITIAL_SIZE 10000000
    refused(run(&mut con, &["BF.ADD", "a", "x"]), "BF.ADD");
    let r = run(&mut con, &["BF.MADD", "a", "x", "y"]);
    refused(r, "BF.MADD");
    refused(
        run(&mut con, &["BF.INSERT", "a", "ITEMS", "x"]),
        "BF.INSERT",
    );
    for k in ["r", "i", "a"] {
        assert_eq!(run(&mut con, &["EXISTS", k]), int(0), "{k} was not created");
    }
    // a filter within the limit is fine
    assert_eq!(
        run(&mut con, &["BF.RESERVE", "small", "0.01", "1000"]),
        ok()
    );

    // scaling: add until refused; the error names the limit, earlier items stay present
    assert_eq!(
        run(
            &mut con,
            &["BF.RESERVE", "s", "0.01", "100", "EXPANSION", "2"]
        ),
        ok()
    );
    let mut added = Vec::new();
    let mut refusal = None;
    for batch in 0..400 {
        let items: Vec<String> = (0..200).map(|i| format!("s{batch}-{i}")).collect();
        let mut madd = vec!["BF.MADD".to_string(), "s".into()];
        madd.extend(items.iter().cloned());
        let Reply::Arr(replies) = run(&mut con, &madd) else {
            panic!("MADD")
        };
        for (item, r) in items.into_iter().zip(replies) {
            match r {
                Reply::Int(_) => added.push(item),
                Reply::Err(e) => {
                    refusal.get_or_insert(e);
                }
                other => panic!("MADD element {other:?}"),
            }
        }
        if refusal.is_some() {
            break;
        }
    }
    let e = refusal.expect("the scaling filter hit the limit");
    assert!(names_limit(&e), "{e}");
    assert!(added.len() > 1000, "{} items before the limit", added.len());
    for chunk in added.chunks(500) {
        let mut mexists = vec!["BF.MEXISTS".to_string(), "s".into()];
        mexists.extend(chunk.iter().cloned());
        assert_eq!(run(&mut con, &mexists), ints(&vec![1; chunk.len()]));
    }
    match run(&mut con, &["BF.ADD", "s", "one more"]) {
        Reply::Int(0) => {} // a false positive needs no room
        r => refused(r, "BF.ADD at the limit"),
    }
    assert_consistent_or_full(&mut con, "s");
    let size = info_int(&info(&mut con, "s"), "Size");
    assert!(size <= 65536 + 4096, "Size {size} beyond the limit");

    // LOADCHUNK: a real header of a big filter, and a RedisBloom header claiming a huge link
    let big = Server::new();
    let mut bcon = big.conn();
    assert_eq!(
        run(&mut bcon, &["BF.RESERVE", "big", "0.01", "1000000"]),
        ok()
    );
    let (header, _) = scandump(&mut bcon, "big");
    refused(
        run(&mut con, &[&b"BF.LOADCHUNK"[..], b"lc", b"1", &header]),
        "LOADCHUNK header",
    );
    for bits in [1u64 << 40, 1 << 62, u64::MAX] {
        let h = redisbloom_header(bits);
        match run(&mut con, &[&b"BF.LOADCHUNK"[..], b"lc", b"1", &h]) {
            Reply::Err(e) => assert!(
                e == texts::BAD_DATA || names_limit(&e),
                "huge link header ({bits} bits): {e}"
            ),
            other => panic!("huge link header ({bits} bits) accepted: {other:?}"),
        }
    }
    assert_eq!(run(&mut con, &["EXISTS", "lc"]), int(0));
    assert_eq!(run(&mut con, &["PING"]), Reply::Status("PONG".into()));
}

/// After the limit the filter is still consistent (ADD may be refused, which is allowed).
fn assert_consistent_or_full(con: &mut redis::Connection, key: &str) {
    assert_consistent(con, key, "at the limit");
}

/// A RedisBloom SCANDUMP header (20 + 53 bytes) for one link of `bits` bits at 1%.
fn redisbloom_header(bits: u64) -> Vec<u8> {
    let bpe = 9.585_058_377_367_439_f64;
    let entries = (bits as f64 / bpe) as u64;
    let mut h = Vec::new();
    h.extend_from_slice(&0u64.to_le_bytes()); // size
    h.extend_from_slice(&1u32.to_le_bytes()); // nfilters
    h.extend_from_slice(&(1u32 | 4).to_le_bytes()); // NOROUND | FORCE64
    h.extend_from_slice(&2u32.to_le_bytes()); // growth
    h.extend_from_slice(&(bits / 8).to_le_bytes()); // bytes
    h.extend_from_slice(&bits.to_le_bytes()); // bits
    h.extend_from_slice(&0u64.to_le_bytes()); // size
    h.extend_from_slice(&0.01f64.to_le_bytes()); // error
    h.extend_from_slice(&bpe.to_le_bytes()); // bpe
    h.extend_from_slice(&7u32.to_le_bytes()); // hashes
    h.extend_from_slice(&entries.to_le_bytes()); // entries
    h.push(0); // n2
    h
}

#[test]
fn maxmemory_refuses_writes_but_serves_reads() {
    let server = Server::with_args(
        &[],
        &["--maxmemory", "20mb", "--maxmemory-policy", "noeviction"],
    );
    let mut con = server.conn();
    assert_eq!(run(&mut con, &["BF.RESERVE", "small", "0.01", "100"]), ok());
    assert_eq!(run(&mut con, &["BF.ADD", "small", "present"]), int(1));
    // one filter of ~26 MB takes the server past maxmemory (the check runs before a command)
    assert_eq!(
        run(&mut con, &["BF.RESERVE", "big", "0.0001", "10000000"]),
        ok()
    );
    const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
    for args in [
        vec!["BF.ADD", "new", "x"],
        vec!["BF.ADD", "small", "y"],
        vec!["BF.MADD", "new", "x"],
        vec!["BF.INSERT", "new", "ITEMS", "x"],
        vec!["BF.RESERVE", "new2", "0.01", "100"],
        vec!["BF.LOADCHUNK", "new3", "1", "x"],
        vec!["SET", "str", "v"],
    ] {
        assert_eq!(run(&mut con, &args), err(OOM), "{args:?}");
    }
    assert_eq!(run(&mut con, &["BF.EXISTS", "small", "present"]), int(1));
    assert_eq!(
        run(&mut con, &["BF.MEXISTS", "small", "present", "absent"]),
        ints(&[1, 0])
    );
    assert_eq!(run(&mut con, &["BF.EXISTS", "big", "x"]), int(0));
    assert_eq!(info_int(&info(&mut con, "big"), "Capacity"), 10_000_000);
    assert_eq!(run(&mut con, &["BF.CARD", "small"]), int(1));
    assert!(matches!(run(&mut con, &["BF.DEBUG", "big"]), Reply::Arr(_)));
    assert!(matches!(
        run(&mut con, &["BF.SCANDUMP", "small", "0"]),
        Reply::Arr(_)
    ));
    for k in ["new", "new2", "new3", "str"] {
        assert_eq!(run(&mut con, &["EXISTS", k]), int(0));
    }
    // deleting is allowed, and then writes work again
    assert_eq!(run(&mut con, &["DEL", "big"]), int(1));
    assert_eq!(run(&mut con, &["BF.ADD", "new", "x"]), int(1));
}
