//! Client-side caching: a tracked time window's count changes only with an invalidation, and
//! tracking clients are told when it forgets.

use super::*;

/// A time window's BF.CARD changes only when a caching client is told: it counts the items
/// of the live generations, which change with a write or when a generation leaves, the
/// moment the forget signal goes out. Items added in three generations of a 2 s window
/// leave in steps; a poller sees the count change no more often than a tracking client is
/// sent an invalidation (the count used to fall with every millisecond, unsignalled).
#[test]
fn a_tracked_time_window_count_changes_only_with_an_invalidation() {
    use std::io::Write;
    let s = Server::new();
    let mut c = s.conn();
    let t0 = now_ms();
    for (i, back) in [1500u64, 1000, 500].into_iter().enumerate() {
        let at = (t0 - back).to_string();
        let batch = items(&format!("g{i}"), 50);
        let mut line = vec!["BF.INSERT", "tw", "WINDOW", "2", "AT", &at, "ITEMS"];
        line.extend(batch.iter().map(String::as_str));
        assert!(matches!(run(&mut c, &line), Reply::Arr(_)));
    }
    let card = |c: &mut redis::Connection| match run(c, &["BF.CARD", "tw"]) {
        Reply::Int(n) => n,
        other => panic!("{other:?}"),
    };
    let first = card(&mut c);
    assert!(first > 100, "{first}");
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    sock.write_all(b"HELLO 3\r\nCLIENT TRACKING ON\r\nBF.CARD tw\r\n")
        .unwrap();
    let (mut invalidations, mut changes, mut last) = (0, 0, first);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while last > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the count never reached 0"
        );
        for (_, text) in pushes(&mut sock, std::time::Duration::from_millis(5)) {
            let told = text.matches("invalidate").count();
            invalidations += told;
            if told > 0 {
                // Read it again, to be told of the next change.
                sock.write_all(b"BF.CARD tw\r\n").unwrap();
            }
        }
        let now = card(&mut c);
        if now != last {
            changes += 1;
            last = now;
        }
    }
    eprintln!("{changes} changes of BF.CARD from {first}, {invalidations} invalidations");
    assert!((1..=3).contains(&changes), "{changes}");
    // The last change's invalidation may still be on its way.
    let tail = pushes(&mut sock, std::time::Duration::from_millis(500));
    invalidations += tail
        .iter()
        .map(|(_, t)| t.matches("invalidate").count())
        .sum::<usize>();
    assert!(
        changes <= invalidations,
        "{changes} changes, {invalidations} invalidations"
    );
}

/// Reads a RESP3 connection for `wait`, returning the invalidation pushes that arrived with
/// the milliseconds (Unix) they arrived at.
fn pushes(sock: &mut std::net::TcpStream, wait: std::time::Duration) -> Vec<(u64, String)> {
    use std::io::Read;
    let end = std::time::Instant::now() + wait;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Some(left) = end.checked_duration_since(std::time::Instant::now()) {
        sock.set_read_timeout(Some(left.max(std::time::Duration::from_millis(1))))
            .unwrap();
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.push((now_ms(), String::from_utf8_lossy(&buf[..n]).into_owned())),
            // a stop and continue of the process (see `Server::connect`), not the end of `wait`
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    got
}

/// A client that caches reads (RESP3 CLIENT TRACKING) is told when a time window forgets:
/// the invalidation arrives after the window and within one generation (250 ms of a 2 s
/// window) of the items' expiry, without any write; a count window, which forgets only by
/// writes, sends none by itself (its key is tracked too, and never named).
#[test]
fn tracking_clients_are_told_when_a_time_window_forgets() {
    use std::io::Write;
    let s = Server::new();
    let mut c = s.conn();
    let added_at = now_ms();
    assert_eq!(
        run(
            &mut c,
            &["BF.INSERT", "tw", "WINDOW", "2", "ITEMS", "a", "b"]
        ),
        ints(&[1, 1])
    );
    run(&mut c, &["BF.RESERVE", "cw2", "0.01", "100", "SLIDING"]);
    madd(&mut c, "cw2", &items("c", 10));
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    sock.write_all(b"HELLO 3\r\nCLIENT TRACKING ON\r\nBF.EXISTS tw a\r\nBF.EXISTS cw2 c0\r\n")
        .unwrap();
    let before = pushes(&mut sock, std::time::Duration::from_millis(1500));
    assert!(
        before.iter().all(|(_, text)| !text.contains("invalidate")),
        "{before:?}"
    );
    let after = pushes(&mut sock, std::time::Duration::from_millis(1500));
    let (arrived, text) = after
        .iter()
        .find(|(_, text)| text.contains("invalidate"))
        .unwrap_or_else(|| panic!("no invalidation: {after:?}"));
    assert!(
        text.contains("$2\r\ntw\r\n") && !text.contains("cw2"),
        "{text:?}"
    );
    let late = arrived - added_at;
    eprintln!("invalidation {late} ms after the add (window 2000 ms, generation 250 ms)");
    // The items expire 2,000 to 2,250 ms after the add (their generation's span); the signal
    // may come up to one generation after that.
    assert!((2000..=2250 + 250).contains(&late), "{late} ms");
    assert_eq!(run(&mut c, &["BF.EXISTS", "tw", "a"]), int(0));
}
