//! The bulk commands (`BF.BULKADD`, `BF.BULKEXISTS`, `CF.BULKADD`, `CF.BULKEXISTS`): the same
//! answers and the same bits as their one-argument-per-item twins on copies of one filter,
//! framed binary items, hostile blobs that change nothing, replicas and the AOF.

mod common;

use common::*;

fn urls(prefix: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("https://{prefix}.example/path/{i}?q={}", i * 7919 % 1000))
        .collect()
}

/// Items as a newline-separated blob.
fn lines(items: &[String]) -> Vec<u8> {
    let mut blob = items.join("\n").into_bytes();
    blob.push(b'\n');
    blob
}

/// Items as a FRAMED blob.
fn framed(items: &[&[u8]]) -> Vec<u8> {
    let mut blob = Vec::new();
    for item in items {
        blob.extend_from_slice(&(item.len() as u32).to_le_bytes());
        blob.extend_from_slice(item);
    }
    blob
}

/// A bulk reply's bytes.
fn answers(reply: Reply) -> Vec<u8> {
    match reply {
        Reply::Bulk(b) => b,
        other => panic!("not a bulk string: {other:?}"),
    }
}

/// An array of 0/1 integers (or RESP3 booleans) as bulk bytes.
fn as_bytes(reply: Reply) -> Vec<u8> {
    let Reply::Arr(items) = reply else {
        panic!("not an array: {reply:?}")
    };
    items
        .into_iter()
        .map(|r| match r {
            Reply::Int(1) | Reply::Bool(true) => b'1',
            Reply::Int(0) | Reply::Bool(false) => b'0',
            Reply::Int(-1) => b'E',
            Reply::Err(_) => b'E',
            other => panic!("unexpected element {other:?}"),
        })
        .collect()
}

/// `cmd key <args> <items…>` as one command.
fn with_items(cmd: &[&str], items: &[String]) -> Vec<String> {
    cmd.iter()
        .map(|s| s.to_string())
        .chain(items.iter().cloned())
        .collect()
}

#[test]
fn bulk_answers_and_bits_equal_madd_and_mexists_on_every_bloom_kind() {
    let s = Server::new();
    let mut c = s.conn();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let at = now.to_string();
    let added = urls("added", 3000);
    let mixed: Vec<String> = urls("added", 1500)
        .into_iter()
        .chain(urls("other", 1500))
        .collect();
    let kinds: [(&str, &[&str]); 4] = [
        ("plain", &["BF.RESERVE", "plain", "0.01", "1000"]),
        (
            "nonscaling",
            &["BF.RESERVE", "nonscaling", "0.01", "2000", "NONSCALING"],
        ),
        ("count", &["BF.RESERVE", "count", "0.01", "2000", "SLIDING"]),
        (
            "time",
            &["BF.RESERVE", "time", "0.01", "2000", "WINDOW", "3600"],
        ),
    ];
    for (key, reserve) in kinds {
        assert_eq!(run(&mut c, reserve), ok());
        let twin = format!("{key}:bulk");
        assert_eq!(run(&mut c, &["COPY", key, &twin]), int(1));
        // One argument per item on the original, one blob on its copy (same seed); a time
        // window adds at one fixed time on both.
        let one_each = if key == "time" {
            as_bytes(run(
                &mut c,
                &with_items(&["BF.INSERT", key, "AT", &at, "ITEMS"], &added),
            ))
        } else {
            as_bytes(run(&mut c, &with_items(&["BF.MADD", key], &added)))
        };
        let blob = lines(&added);
        let mut bulk_cmd: Vec<&[u8]> = vec![b"BF.BULKADD", twin.as_bytes()];
        if key == "time" {
            bulk_cmd.extend([&b"AT"[..], at.as_bytes()]);
        }
        bulk_cmd.push(&blob);
        let bulk = answers(run(&mut c, &bulk_cmd));
        assert_eq!(bulk.len(), added.len(), "{key}");
        // BF.MADD's array ends at a full NONSCALING filter's error; BF.BULKADD goes on, each
        // later item `0` (held) or `E` (refused).
        let n = one_each.len();
        let first_diff = (0..n).find(|&i| bulk[i] != one_each[i]);
        assert_eq!(
            first_diff, None,
            "{key}: BF.BULKADD answers as BF.MADD does"
        );
        assert!(bulk[n..].iter().all(|b| b"0E".contains(b)), "{key}");
        if key == "nonscaling" {
            assert!(
                n < added.len() && bulk.contains(&b'E'),
                "{key}: a full filter"
            );
        }
        assert_eq!(
            digest(&mut c, key),
            digest(&mut c, &twin),
            "{key}: same bits"
        );
        let exists = as_bytes(run(&mut c, &with_items(&["BF.MEXISTS", key], &mixed)));
        let blob = lines(&mixed);
        let bulk = answers(run(
            &mut c,
            &[&b"BF.BULKEXISTS"[..], twin.as_bytes(), &blob],
        ));
        assert_eq!(
            bulk, exists,
            "{key}: BF.BULKEXISTS answers as BF.MEXISTS does"
        );
        if key == "plain" {
            let held = bulk[..1500].iter().all(|&b| b == b'1');
            assert!(held, "{key}: no false negative");
        }
    }
}

#[test]
fn framed_items_hold_any_byte_and_a_bad_frame_changes_nothing() {
    let s = Server::new();
    let mut c = s.conn();
    let items: [&[u8]; 4] = [b"line\nbreak", b"", b"\0\xff\r\n", b"plain"];
    let blob = framed(&items);
    assert_eq!(
        answers(run(&mut c, &[&b"BF.BULKADD"[..], b"f", b"FRAMED", &blob])),
        b"1111"
    );
    for item in items {
        assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"f", item]), int(1));
    }
    // Without FRAMED the same bytes are other items (split at the newlines).
    assert_eq!(
        answers(run(
            &mut c,
            &[&b"BF.BULKEXISTS"[..], b"f", b"FRAMED", &blob]
        )),
        b"1111"
    );
    let before = digest(&mut c, "f");
    // A frame that runs past the end: an error naming it, and nothing added.
    let mut truncated = framed(&[b"new-1", b"new-2"]);
    truncated.pop();
    let e = run(&mut c, &[&b"BF.BULKADD"[..], b"f", b"FRAMED", &truncated])
        .err_text()
        .to_string();
    assert!(
        e.starts_with("ERR bad FRAMED blob: the frame at byte 9 declares 5 bytes"),
        "{e}"
    );
    assert_eq!(run(&mut c, &["BF.EXISTS", "f", "new-1"]), int(0));
    // A length of 2^32 - 1, and a blob ending inside a length.
    let mut huge = framed(&[b"new-3"]);
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    let e = run(&mut c, &[&b"BF.BULKADD"[..], b"f", b"FRAMED", &huge])
        .err_text()
        .to_string();
    assert!(e.contains("declares 4294967295 bytes"), "{e}");
    let e = run(&mut c, &[&b"BF.BULKADD"[..], b"f", b"FRAMED", &[7, 0][..]])
        .err_text()
        .to_string();
    assert!(e.contains("ends inside the 4-byte length"), "{e}");
    assert_eq!(digest(&mut c, "f"), before, "refused blobs changed nothing");
    // A missing key is not created by a refused blob.
    let e = run(
        &mut c,
        &[&b"BF.BULKADD"[..], b"nothing", b"FRAMED", &[7, 0][..]],
    )
    .err_text()
    .to_string();
    assert!(e.starts_with("ERR bad FRAMED blob"), "{e}");
    assert_eq!(run(&mut c, &["EXISTS", "nothing"]), int(0));
}

#[test]
fn line_blobs_empty_items_and_other_edges() {
    let s = Server::new();
    let mut c = s.conn();
    // An empty blob: no items, an empty answer; the key is created as BF.ADD creates one.
    assert_eq!(answers(run(&mut c, &["BF.BULKADD", "e", ""])), b"");
    assert_eq!(
        run(&mut c, &["TYPE", "e"]),
        Reply::Status("MBbloom--".into())
    );
    // No separator at all: one item. An empty line is the empty item.
    assert_eq!(answers(run(&mut c, &["BF.BULKADD", "e", "one item"])), b"1");
    assert_eq!(
        answers(run(&mut c, &["BF.BULKADD", "e", "a\n\nb\n"])),
        b"111"
    );
    assert_eq!(run(&mut c, &["BF.EXISTS", "e", ""]), int(1));
    assert_eq!(
        answers(run(&mut c, &["BF.BULKEXISTS", "e", "a\nb\nzz"])),
        b"110"
    );
    // A missing key reads absent; another type is WRONGTYPE.
    assert_eq!(
        answers(run(&mut c, &["BF.BULKEXISTS", "none", "a\nb"])),
        b"00"
    );
    assert_eq!(
        answers(run(&mut c, &["CF.BULKEXISTS", "none", "a\nb"])),
        b"00"
    );
    assert_eq!(run(&mut c, &["SET", "str", "x"]), ok());
    for cmd in ["BF.BULKADD", "BF.BULKEXISTS", "CF.BULKADD", "CF.BULKEXISTS"] {
        assert_eq!(
            run(&mut c, &[cmd, "str", "a"]).err_text(),
            texts::WRONGTYPE,
            "{cmd}"
        );
        assert_eq!(
            run(&mut c, &[cmd, "k"]).err_text(),
            arity(cmd).err_text(),
            "{cmd}"
        );
    }
    // Words: each once, AT and NOREFRESH only where a window can take them.
    let e = run(&mut c, &["BF.BULKADD", "e", "FRAMED", "FRAMED", "x"])
        .err_text()
        .to_string();
    assert_eq!(e, "ERR FRAMED is given twice");
    let e = run(&mut c, &["BF.BULKEXISTS", "e", "NOREFRESH", "x"])
        .err_text()
        .to_string();
    assert_eq!(e, "ERR unknown argument 'NOREFRESH' for BF.BULKEXISTS");
    let e = run(&mut c, &["BF.BULKADD", "e", "NOREFRESH", "x"])
        .err_text()
        .to_string();
    assert!(e.contains("NOREFRESH"), "{e}");
    // A blob past proto-max-bulk-len is refused by the server, as any argument is: a protocol
    // error, the connection closed, nothing created.
    assert_eq!(
        run(&mut c, &["CONFIG", "SET", "proto-max-bulk-len", "1mb"]),
        ok()
    );
    let big = vec![b'x'; 2 << 20];
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    use std::io::{Read, Write};
    let head = format!("*3\r\n$10\r\nBF.BULKADD\r\n$3\r\nbig\r\n${}\r\n", big.len());
    // The server may close the connection before it has read the whole blob.
    let _ = sock
        .write_all(head.as_bytes())
        .and_then(|_| sock.write_all(&big));
    let mut reply = Vec::new();
    let _ = sock.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.is_empty() || reply.starts_with("-ERR Protocol error"),
        "{reply}"
    );
    assert_eq!(run(&mut c, &["EXISTS", "big"]), int(0));
}

#[test]
fn a_blob_costs_its_answers_not_a_list_of_its_items() {
    // 64 MiB of newlines: 64 Mi empty items. A list of them would take 16 bytes each, a GiB
    // (which a server short of memory could not have: it aborted); they are read from the
    // blob as the filter takes them, so the server's peak is the blob, the answers (a byte
    // each) and the reply, a few times 64 MiB.
    let s = Server::new();
    let mut c = s.conn();
    // Empty filters: every answer is 0, with no false positive to wait on.
    assert_eq!(run(&mut c, &["BF.RESERVE", "k", "0.01", "1000"]), ok());
    assert_eq!(run(&mut c, &["CF.RESERVE", "cf", "1000"]), ok());
    let blob = vec![b'\n'; 64 << 20];
    for command in ["BF.BULKEXISTS", "CF.BULKEXISTS"] {
        let key: &[u8] = if command.starts_with("BF") {
            b"k"
        } else {
            b"cf"
        };
        let reply = answers(run(&mut c, &[command.as_bytes(), key, &blob]));
        assert_eq!(reply.len(), blob.len(), "{command}: an answer per item");
        assert!(reply.iter().all(|&b| b == b'0'), "{command}");
    }
    // The process's peak resident memory, as the kernel counts it (the server's own peak is
    // sampled between commands, and a list made and freed inside one never shows there).
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.pid)).unwrap();
    let peak: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|kb| kb.trim().trim_end_matches(" kB").parse::<u64>().ok())
        .expect("VmHWM in kB")
        * 1024;
    assert!(
        peak < 8 * blob.len() as u64,
        "peak {peak} bytes for a blob of {}",
        blob.len()
    );
}

#[test]
fn cuckoo_bulk_answers_equal_insert_and_mexists() {
    let s = Server::new();
    let mut c = s.conn();
    let added = urls("cf", 2000);
    let mixed: Vec<String> = urls("cf", 1000)
        .into_iter()
        .chain(urls("no", 1000))
        .collect();
    // A filter too small for every item: both refuse the same ones.
    assert_eq!(
        run(&mut c, &["CF.RESERVE", "cf", "512", "EXPANSION", "0"]),
        ok()
    );
    assert_eq!(run(&mut c, &["COPY", "cf", "cf:bulk"]), int(1));
    let one_each = as_bytes(run(
        &mut c,
        &with_items(&["CF.INSERT", "cf", "ITEMS"], &added),
    ));
    let bulk = answers(run(
        &mut c,
        &[&b"CF.BULKADD"[..], b"cf:bulk", &lines(&added)],
    ));
    assert_eq!(bulk, one_each);
    assert!(
        bulk.contains(&b'E') && bulk.contains(&b'1'),
        "some refused, some taken"
    );
    assert_eq!(digest(&mut c, "cf"), digest(&mut c, "cf:bulk"));
    let exists = as_bytes(run(&mut c, &with_items(&["CF.MEXISTS", "cf"], &mixed)));
    let bulk = answers(run(
        &mut c,
        &[&b"CF.BULKEXISTS"[..], b"cf:bulk", &lines(&mixed)],
    ));
    assert_eq!(bulk, exists);
    // A missing key is created as CF.ADD creates one.
    assert_eq!(
        answers(run(&mut c, &["CF.BULKADD", "new", "a\nb\na"])),
        b"111"
    );
    assert_eq!(run(&mut c, &["CF.COUNT", "new", "a"]), int(2));
}

#[test]
fn replicas_and_the_aof_hold_what_bulk_adds_applied() {
    let panic_mode = ["--propagation-error-behavior", "panic"];
    let p = Server::with_args(
        &[],
        &[
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            panic_mode[0],
            panic_mode[1],
        ],
    );
    let r = p.start_replica(&panic_mode);
    let mut pc = p.conn();
    let mut rc = r.conn();
    let items = urls("repl", 5000);
    // Implicit creation, a full NONSCALING filter (refused items), a count window, a time window
    // (its clock moves), a NOREFRESH call, a cuckoo filter with refusals.
    answers(run(
        &mut pc,
        &[&b"BF.BULKADD"[..], b"implicit", &lines(&items)],
    ));
    assert_eq!(
        run(
            &mut pc,
            &["BF.RESERVE", "full", "0.01", "1000", "NONSCALING"]
        ),
        ok()
    );
    let full = answers(run(&mut pc, &[&b"BF.BULKADD"[..], b"full", &lines(&items)]));
    assert!(full.contains(&b'E'));
    assert_eq!(
        run(&mut pc, &["BF.RESERVE", "count", "0.01", "1000", "SLIDING"]),
        ok()
    );
    answers(run(
        &mut pc,
        &[&b"BF.BULKADD"[..], b"count", &lines(&items)],
    ));
    assert_eq!(
        run(
            &mut pc,
            &["BF.RESERVE", "time", "0.01", "1000", "WINDOW", "60"]
        ),
        ok()
    );
    for chunk in items.chunks(1000) {
        answers(run(&mut pc, &[&b"BF.BULKADD"[..], b"time", &lines(chunk)]));
        answers(run(
            &mut pc,
            &[&b"BF.BULKADD"[..], b"time", b"NOREFRESH", &lines(chunk)],
        ));
    }
    assert_eq!(
        run(&mut pc, &["CF.RESERVE", "cf", "1024", "EXPANSION", "0"]),
        ok()
    );
    let cf = answers(run(&mut pc, &[&b"CF.BULKADD"[..], b"cf", &lines(&items)]));
    assert!(cf.contains(&b'E'));
    wait_caught_up(&mut pc, &mut rc);
    let keys = ["implicit", "full", "count", "time", "cf"];
    for key in keys {
        assert_eq!(
            digest(&mut pc, key),
            digest(&mut rc, key),
            "replica's {key}"
        );
    }
    let before: Vec<Reply> = keys.iter().map(|k| digest(&mut pc, k)).collect();
    drop(rc);
    drop(r);
    // The AOF replays (in panic mode) to the same bits, and so does its rewrite.
    let mut p = p;
    p.restart();
    let mut pc = p.conn();
    let after: Vec<Reply> = keys.iter().map(|k| digest(&mut pc, k)).collect();
    assert_eq!(before, after, "AOF replay");
    run(&mut pc, &["BGREWRITEAOF"]);
    p.wait_for_aof_rewrite(&mut pc);
    p.restart();
    let mut pc = p.conn();
    let rewritten: Vec<Reply> = keys.iter().map(|k| digest(&mut pc, k)).collect();
    assert_eq!(before, rewritten, "AOF rewrite");
}
