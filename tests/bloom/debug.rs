//! BF.DEBUG: the item count and each link's geometry.

use super::*;

#[test]
fn debug_after_scaling() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    // A fixed seed: how many of the 497 items are false positives (and so not counted)
    // depends on it, and with a random one fell below the bound checked here in about 1 run in
    // 300.
    let reserve = ["BF.RESERVE", "sc", "0.01", "100", "SEED", "1"];
    assert_eq!(run(&mut c, &reserve), ok());
    let its = items("item", 497);
    run(&mut c, &cmd_with(&["BF.MADD", "sc"], &its));
    let lines = debug_lines(&mut c, "sc");
    assert_eq!(lines.len(), 4, "{lines:?}");
    let total: u64 = lines[0]
        .strip_prefix("size:")
        .expect("size:N first")
        .parse()
        .unwrap();
    assert_eq!(run(&mut c, &["BF.CARD", "sc"]), int(total as i64));
    assert!((490..=497).contains(&total), "{total}");
    let links: Vec<LinkLine> = lines[1..].iter().map(|l| parse_link(l)).collect();
    let caps: Vec<u64> = links.iter().map(|l| l.capacity).collect();
    let ratios: Vec<&str> = links.iter().map(|l| l.ratio.as_str()).collect();
    assert_eq!(caps, [100, 200, 400]);
    assert_eq!(ratios, ["0.005", "0.0025", "0.00125"]);
    assert_eq!((links[0].size, links[1].size), (100, 200));
    assert_eq!(links.iter().map(|l| l.size).sum::<u64>(), total);
    for l in &links {
        assert_eq!(l.bytes * 8, l.bits, "{l:?}");
        assert!(l.hashes >= 1 && l.bits >= 64, "{l:?}");
    }
    // the same bulk strings in RESP3
    let r3 = run(&mut c3, &["BF.DEBUG", "sc"]);
    assert_eq!(r3, arr(lines.iter().map(|l| bulk(l)).collect()));
}

#[test]
fn debug_ratio_formats_like_printf_g() {
    let s = Server::new();
    let mut c = s.conn();
    // 1e-4 halved per link: 5e-05, 2.5e-05, 1.25e-05 (scientific below 1e-4)
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "k", "0.0001", "1", "EXPANSION", "1"]
        ),
        ok()
    );
    let mut added = 0;
    let mut i = 0;
    while added < 3 {
        if run(&mut c, &["BF.ADD", "k", &format!("x{i}")]) == int(1) {
            added += 1;
        }
        i += 1;
    }
    let ratios: Vec<String> = debug_lines(&mut c, "k")[1..]
        .iter()
        .map(|l| parse_link(l).ratio)
        .collect();
    assert_eq!(ratios, ["5e-05", "2.5e-05", "1.25e-05"]);
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "big", "0.5", "1", "NONSCALING"]),
        ok()
    );
    assert_eq!(parse_link(&debug_lines(&mut c, "big")[1]).ratio, "0.5");
    assert_eq!(run(&mut c, &["BF.RESERVE", "tiny", "1e-300", "1"]), ok());
    assert_eq!(parse_link(&debug_lines(&mut c, "tiny")[1]).ratio, "5e-301");
    assert_eq!(debug_lines(&mut c, "tiny")[0], "size:0");
}

#[test]
fn debug_errors() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    for con in [&mut c, &mut c3] {
        assert_eq!(run(con, &["BF.DEBUG", "missing"]), err(texts::NOT_FOUND));
        assert_eq!(run(con, &["BF.DEBUG", "str"]), err(texts::WRONGTYPE));
        assert_eq!(run(con, &["BF.DEBUG"]), arity("bf.debug"));
        assert_eq!(run(con, &["BF.DEBUG", "a", "b"]), arity("bf.debug"));
    }
}
