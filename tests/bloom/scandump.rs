//! BF.SCANDUMP and BF.LOADCHUNK: iterators, errors, a copy onto a second server, replication,
//! and RedisBloom's own SCANDUMP output loaded here.

use super::*;

/// Every SCANDUMP step of `key`: `(iterator returned, data)`, header first, end excluded.
fn scandump(con: &mut redis::Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut it = 0i64;
    loop {
        match run(con, &["BF.SCANDUMP", key, &it.to_string()]) {
            Reply::Arr(v) => match &v[..] {
                [Reply::Int(0), Reply::Bulk(d)] => {
                    assert!(d.is_empty(), "the last step has empty data");
                    return out;
                }
                [Reply::Int(next), Reply::Bulk(d)] => {
                    out.push((*next, d.clone()));
                    it = *next;
                }
                other => panic!("SCANDUMP {key} {it}: {other:?}"),
            },
            other => panic!("SCANDUMP {key} {it}: {other:?}"),
        }
    }
}

fn loadchunks(con: &mut redis::Connection, key: &str, steps: &[(i64, Vec<u8>)]) {
    for (it, data) in steps {
        let it = it.to_string();
        let args: [&[u8]; 4] = [b"BF.LOADCHUNK", key.as_bytes(), it.as_bytes(), data];
        assert_eq!(run(con, &args), ok(), "LOADCHUNK {key} {it}");
    }
}

fn loadchunk(con: &mut redis::Connection, key: &str, it: &str, data: &[u8]) -> Reply {
    let args: [&[u8]; 4] = [b"BF.LOADCHUNK", key.as_bytes(), it.as_bytes(), data];
    run(con, &args)
}

#[test]
fn round_trip_onto_a_second_server() {
    let a = Server::new();
    let b = Server::new();
    let (mut ca, mut cb) = (a.conn(), b.conn());
    let its = multi_link(&mut ca, "f", 2000);
    let steps = scandump(&mut ca, "f");
    // header, then one chunk per link (100, 200, 400, 800, 1600 capacities)
    assert_eq!(
        steps.len(),
        1 + 5,
        "steps: {:?}",
        steps.iter().map(|s| (s.0, s.1.len())).collect::<Vec<_>>()
    );
    assert_eq!(steps[0].0, 1);
    assert_eq!(steps[0].1.len(), 20 + 53 * 5 + 8 + 5);
    loadchunks(&mut cb, "f", &steps);
    assert_eq!(
        run(&mut cb, &["TYPE", "f"]),
        Reply::Status("MBbloom--".into())
    );
    assert_eq!(exists_all(&mut cb, "f", &its), vec![int(1); its.len()]);
    let absent = items("absent-", 5000);
    assert_eq!(
        exists_all(&mut ca, "f", &absent),
        exists_all(&mut cb, "f", &absent)
    );
    assert_eq!(digest(&mut ca, "f"), digest(&mut cb, "f"));
    assert_eq!(
        run(&mut ca, &["BF.CARD", "f"]),
        run(&mut cb, &["BF.CARD", "f"])
    );
    assert_eq!(madd(&mut cb, "f", &its), arr(vec![int(0); its.len()]));
    // A second dump of the copy is byte for byte the first.
    assert_eq!(scandump(&mut cb, "f"), steps);
    // And it keeps growing like the original.
    let more = items("more-", 3000);
    assert_eq!(madd(&mut ca, "f", &more), madd(&mut cb, "f", &more));
    assert_eq!(digest(&mut ca, "f"), digest(&mut cb, "f"));
}

#[test]
fn scandump_iterators() {
    let s = Server::new();
    let mut c = s.conn();
    multi_link(&mut c, "f", 300);
    let steps = scandump(&mut c, "f");
    let sizes: Vec<usize> = steps[1..].iter().map(|s| s.1.len()).collect();
    let mut it = 1;
    for (i, size) in sizes.iter().enumerate() {
        it += *size as i64;
        assert_eq!(steps[i + 1].0, it);
    }
    // a cursor in the middle of a link returns the rest of that link
    match run(&mut c, &["BF.SCANDUMP", "f", "5"]) {
        Reply::Arr(v) => {
            assert_eq!(v[0], int(1 + sizes[0] as i64));
            assert_eq!(v[1], Reply::Bulk(steps[1].1[4..].to_vec()));
        }
        other => panic!("{other:?}"),
    }
    for past in ["-1", "999999999", &it.to_string()] {
        assert_eq!(
            run(&mut c, &["BF.SCANDUMP", "f", past]),
            arr(vec![int(0), bulk("")]),
            "SCANDUMP f {past}"
        );
    }
}

#[test]
fn scandump_and_loadchunk_errors() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["SET", "str", "x"]), ok());
    multi_link(&mut c, "f", 300);
    // SCANDUMP: the key is looked up before the iterator is parsed
    assert_eq!(
        run(&mut c, &["BF.SCANDUMP", "nokey", "0"]),
        err(texts::NOT_FOUND)
    );
    assert_eq!(
        run(&mut c, &["BF.SCANDUMP", "nokey", "x"]),
        err(texts::NOT_FOUND)
    );
    assert_eq!(
        run(&mut c, &["BF.SCANDUMP", "str", "x"]),
        err(texts::WRONGTYPE)
    );
    assert_eq!(
        run(&mut c, &["BF.SCANDUMP", "f", "x"]),
        err(texts::SCANDUMP_BAD_ITERATOR)
    );
    assert_eq!(
        run(&mut c, &["BF.SCANDUMP", "f"]),
        err("ERR wrong number of arguments for 'bf.scandump' command")
    );
    // LOADCHUNK: the iterator is parsed first
    assert_eq!(
        run(&mut c, &["BF.LOADCHUNK", "str", "x", "data"]),
        err(texts::LOADCHUNK_BAD_ITERATOR)
    );
    assert_eq!(
        run(&mut c, &["BF.LOADCHUNK", "str", "1", "data"]),
        err(texts::WRONGTYPE)
    );
    assert_eq!(
        run(&mut c, &["BF.LOADCHUNK", "f", "1"]),
        err("ERR wrong number of arguments for 'bf.loadchunk' command")
    );
    let steps = scandump(&mut c, "f");
    let header = &steps[0].1;
    // a chunk for a missing key
    assert_eq!(
        loadchunk(&mut c, "nokey", &steps[1].0.to_string(), &steps[1].1),
        err(texts::NOT_FOUND)
    );
    // bad header lengths and contents
    let bad = texts::BAD_DATA;
    for h in [
        &header[..0],
        &header[..19],
        &header[..header.len() - 1],
        &header[..73],
    ] {
        assert_eq!(
            loadchunk(&mut c, "new", "1", h),
            err(bad),
            "{} bytes",
            h.len()
        );
    }
    let mut long = header.clone();
    long.push(2);
    assert_eq!(loadchunk(&mut c, "new", "1", &long), err(bad));
    let mut flipped = header.clone();
    flipped[0] ^= 1; // chain size != sum of link sizes
    assert_eq!(loadchunk(&mut c, "new", "1", &flipped), err(bad));
    assert_eq!(run(&mut c, &["EXISTS", "new"]), int(0));
    // re-sending a header to an existing key
    assert_eq!(loadchunk(&mut c, "f", "1", header), err(bad));
    // chunks at the wrong place or of the wrong length
    let (next, chunk) = (&steps[1].0, &steps[1].1);
    let len = chunk.len() as i64;
    assert_eq!(loadchunk(&mut c, "f", "0", chunk), err(bad));
    assert_eq!(loadchunk(&mut c, "f", "-3", b""), err(bad));
    assert_eq!(
        loadchunk(&mut c, "f", &(len - 1).to_string(), chunk),
        err(bad)
    );
    assert_eq!(
        loadchunk(&mut c, "f", &len.to_string(), chunk),
        err(texts::NO_LINK)
    );
    assert_eq!(
        loadchunk(&mut c, "f", "99999999", b"abc"),
        err(texts::NO_LINK)
    );
    let mut longer = chunk.clone();
    longer.push(0);
    assert_eq!(
        loadchunk(&mut c, "f", &(next + 1).to_string(), &longer),
        err(texts::CHUNK_TOO_BIG)
    );
    // the iterator that was requested instead of the one returned
    assert_eq!(loadchunk(&mut c, "f", "1", chunk), err(bad));
    // a header over the per-filter limit names the limit
    let small = Server::with_args(&["MAX_FILTER_BYTES", "100"], &[]);
    let r = loadchunk(&mut small.conn(), "f", "1", header);
    assert!(r.err_text().contains("MAX_FILTER_BYTES"), "{r:?}");
    // the right chunk at the right place is fine, and a zero-length chunk is a no-op
    assert_eq!(loadchunk(&mut c, "f", &next.to_string(), chunk), ok());
    assert_eq!(loadchunk(&mut c, "f", "1", b""), ok());
}

#[test]
fn loadchunk_replicates_and_notifies() {
    let s = Server::new();
    let mut c = s.conn();
    multi_link(&mut c, "f", 300);
    let steps = scandump(&mut c, "f");
    assert_eq!(
        run(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "KEA"]),
        ok()
    );
    let mut sub = s.conn();
    assert!(!run(&mut sub, &["SUBSCRIBE", "__keyevent@0__:bf.loadchunk"]).is_err());
    loadchunks(&mut c, "g", &steps);
    let mut msg = sub.recv_response().expect("keyspace event");
    if let redis::Value::Array(v) = &mut msg {
        assert_eq!(v.last(), Some(&redis::Value::BulkString(b"g".to_vec())));
    } else {
        panic!("{msg:?}");
    }
}

#[test]
fn loads_redisbloom_scandump_output() {
    let rb = Server::try_with_module(&redisbloom_so(), None, &[], &[])
        .unwrap_or_else(|log| panic!("RedisBloom did not start:\n{log}"));
    let mut crb = rb.conn();
    assert_eq!(run(&mut crb, &["BF.RESERVE", "rb", "0.01", "1000"]), ok());
    let its = items("redisbloom-", 500);
    madd(&mut crb, "rb", &its);
    // a scaling one with several links too
    assert_eq!(run(&mut crb, &["BF.RESERVE", "rb3", "0.01", "100"]), ok());
    let its3 = items("three-", 600);
    madd(&mut crb, "rb3", &its3);
    assert_eq!(
        run(&mut crb, &["BF.RESERVE", "ns", "0.01", "100", "NONSCALING"]),
        ok()
    );
    madd(&mut crb, "ns", &its[..100]);

    let s = Server::new();
    let mut c = s.conn();
    for (key, its) in [("rb", &its[..]), ("rb3", &its3[..]), ("ns", &its[..100])] {
        let steps = scandump(&mut crb, key);
        loadchunks(&mut c, key, &steps);
        assert_eq!(
            exists_all(&mut c, key, its),
            vec![int(1); its.len()],
            "{key}"
        );
        let absent = items("not-there-", 2000);
        assert_eq!(
            exists_all(&mut c, key, &absent),
            exists_all(&mut crb, key, &absent),
            "{key}: same false positives as RedisBloom"
        );
        assert_eq!(
            run(&mut c, &["BF.CARD", key]),
            run(&mut crb, &["BF.CARD", key])
        );
    }
    assert_eq!(run(&mut c, &["BF.ADD", "ns", "one more"]), err(texts::FULL));
    // the migrated filter keeps working: it grows native links and its dump reloads here
    let more = items("after-", 3000);
    madd(&mut c, "rb", &more);
    assert_eq!(exists_all(&mut c, "rb", &its), vec![int(1); its.len()]);
    assert_eq!(exists_all(&mut c, "rb", &more), vec![int(1); more.len()]);
    let steps = scandump(&mut c, "rb");
    loadchunks(&mut c, "rb-again", &steps);
    assert_eq!(digest(&mut c, "rb"), digest(&mut c, "rb-again"));
    assert_eq!(
        exists_all(&mut c, "rb-again", &its),
        vec![int(1); its.len()]
    );
}
