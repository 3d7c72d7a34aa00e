//! BF.EXISTS and BF.MEXISTS, in RESP2 and RESP3.

use super::*;

#[test]
fn exists_on_missing_key() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.EXISTS", "missing", "x"]), int(0));
    assert_eq!(run(&mut c, &["BF.EXISTS", "missing", ""]), int(0));
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c3, &["BF.EXISTS", "missing", "x"]), boolean(false));
    // a read does not create the key
    assert_eq!(key_type(&mut c, "missing"), Reply::Status("none".into()));
    assert_eq!(run(&mut c, &["DBSIZE"]), int(0));
}

#[test]
fn empty_and_binary_items() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["BF.RESERVE", "b", "0.000001", "100"]), ok());
    assert_eq!(run(&mut c, &["BF.ADD", "b", ""]), int(1));
    assert_eq!(run(&mut c, &["BF.ADD", "b", ""]), int(0));
    assert_eq!(run(&mut c, &["BF.EXISTS", "b", ""]), int(1));

    let nul: &[u8] = b"a\0b";
    let args: Vec<&[u8]> = vec![b"BF.ADD", b"b", nul];
    assert_eq!(run(&mut c, &args), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", nul]), int(1));
    // the bytes after the NUL matter
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"a"]), int(0));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"a\0c"]), int(0));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"a\0b\0"]), int(0));
    let high: &[u8] = &[0xff, 0x00, 0x80, 0xfe, 0x00];
    assert_eq!(
        run(&mut c, &[&b"BF.MADD"[..], b"b", high, b"\0"]),
        ints(&[1, 1])
    );
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", high]), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"\0"]), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", b"\0\0"]), int(0));
    // a long item
    let long = vec![b'z'; 100_000];
    assert_eq!(run(&mut c, &[&b"BF.ADD"[..], b"b", &long]), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", &long]), int(1));
    assert_eq!(run(&mut c, &[&b"BF.EXISTS"[..], b"b", &long[1..]]), int(0));
}

#[test]
fn nonscaling_false_positive_rate() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "f", "0.01", "1000", "NONSCALING"]),
        ok()
    );
    let its = items("x", 1000);
    let r = run(&mut c, &madd_cmd("f", &its));
    let Reply::Arr(v) = r else {
        panic!("MADD: {r:?}")
    };
    assert_eq!(v.len(), 1000);
    assert!(v.iter().all(|x| *x == int(0) || *x == int(1)), "{v:?}");
    assert!(exists_all(&mut c, "f", &its).iter().all(|x| *x == int(1)));
    let absent = items("y", 10_000);
    let fp = exists_all(&mut c, "f", &absent)
        .iter()
        .filter(|x| **x == int(1))
        .count();
    assert!(fp < 200, "{fp} false positives in 10000 (requested 1%)");
}

#[test]
fn mexists_resp2_and_resp3() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.MADD", "k", "a", "b"]), ints(&[1, 1]));
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "k", "a", "b", "zz"]),
        ints(&[1, 1, 0])
    );
    assert_eq!(run(&mut c, &["BF.MEXISTS", "k", "zz"]), ints(&[0]));
    assert_eq!(
        run(&mut c3, &["BF.MEXISTS", "k", "a", "zz", "b"]),
        bools(&[true, false, true])
    );
    // missing key: all false
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "missing", "a", "b"]),
        ints(&[0, 0])
    );
    assert_eq!(
        run(&mut c3, &["BF.MEXISTS", "missing", "a"]),
        bools(&[false])
    );
    // it reads without creating
    assert_eq!(run(&mut c, &["EXISTS", "missing"]), int(0));
    // BF.EXISTS agrees item by item
    for (item, want) in [("a", true), ("zz", false)] {
        assert_eq!(run(&mut c3, &["BF.EXISTS", "k", item]), boolean(want));
    }
}

#[test]
fn mexists_wrongtype_and_arity() {
    let s = Server::new();
    let mut c = s.conn();
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    // rsbloom: WRONGTYPE (RedisBloom answers 0s)
    assert_eq!(
        run(&mut c, &["BF.MEXISTS", "str", "a", "b"]),
        err(texts::WRONGTYPE)
    );
    assert_eq!(run(&mut c, &["BF.MEXISTS", "k"]), arity("bf.mexists"));
    assert_eq!(run(&mut c, &["BF.MEXISTS"]), arity("bf.mexists"));
}
