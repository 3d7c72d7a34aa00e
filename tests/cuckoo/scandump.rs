//! CF.SCANDUMP, CF.LOADCHUNK (and DUMP / RESTORE of the spec's vectors)

use super::*;

#[test]
fn replies_in_resp2_and_resp3() {
    in_both_protocols(|c, _| {
        // SCANDUMP's end is [0, nil] in both protocols; an empty filter dumps nothing.
        assert_eq!(run(c, &["CF.RESERVE", "empty", "100"]), ok());
        assert_eq!(
            run(c, &["CF.SCANDUMP", "empty", "0"]),
            arr(vec![int(0), Reply::Nil])
        );
        // A copy through SCANDUMP / LOADCHUNK answers the same, seed included.
        let steps = scandump(c, "cf");
        load(c, "copy", &steps);
        assert_eq!(scandump(c, "copy"), steps);
        assert_eq!(digest(c, "copy"), digest(c, "cf"));
    });
}

#[test]
fn errors_and_their_exact_texts() {
    assert_errors(&[
        (
            &["CF.SCANDUMP", "cf", "-1"],
            err(texts::cf::INVALID_POSITION),
        ),
        (
            &["CF.SCANDUMP", "nokey", "x"],
            err(texts::cf::INVALID_POSITION),
        ),
        (&["CF.SCANDUMP", "nokey", "0"], err(texts::NOT_FOUND)),
        (&["CF.SCANDUMP", "str", "0"], err(texts::WRONGTYPE)),
        (
            &["CF.LOADCHUNK", "str", "0", "x"],
            err(texts::cf::INVALID_POSITION),
        ),
        (
            &["CF.LOADCHUNK", "nokey", "x", "x"],
            err(texts::cf::INVALID_POSITION),
        ),
        (
            &["CF.LOADCHUNK", "nokey", "1", "short"],
            err(texts::cf::INVALID_HEADER),
        ),
        (
            &["CF.LOADCHUNK", "cf", "1", "short"],
            err(texts::ITEM_EXISTS),
        ),
        (&["CF.LOADCHUNK", "str", "1", "x"], err(texts::WRONGTYPE)),
        (&["CF.LOADCHUNK", "nokey", "9", "x"], err(texts::NOT_FOUND)),
        (
            &["CF.LOADCHUNK", "cf", "9", ""],
            err(texts::cf::CANNOT_LOAD_CHUNK),
        ),
        (
            &["CF.LOADCHUNK", "cf", "-3", "x"],
            err(texts::cf::CANNOT_LOAD_CHUNK),
        ),
    ]);
}

#[test]
fn spec_vectors_through_the_server() {
    let s = Server::new();
    let mut c = s.conn();
    write_vectors(&mut c);
    let header = |items: &str, buckets: &str, filters: &str, tail: &str| {
        hex(&format!(
            "{items}00000000000000 {buckets}00000000000000 0000000000000000 {filters}00000000000000 {tail}"
        ))
    };
    assert_eq!(
        cf_debug(&mut c, "v1"),
        "bktsize:2 buckets:4 items:3 deletes:0 filters:1 max_iterations:20 expansion:1"
    );
    assert_eq!(
        scandump(&mut c, "v1"),
        [
            (1, Some(header("03", "04", "01", "0200 1400 0100"))),
            (9, Some(hex("0100d900 07000000"))),
            (0, None)
        ]
    );
    assert_eq!(
        scandump(&mut c, "v2"),
        [
            (1, Some(header("0a", "08", "02", "0100 1400 0100"))),
            (9, Some(hex("0006cb0000c40010"))),
            (17, Some(hex("00bca91c00cd154b"))),
            (0, None)
        ]
    );
    assert_eq!(
        cf_debug(&mut c, "v3"),
        "bktsize:2 buckets:2 items:9 deletes:0 filters:2 max_iterations:20 expansion:2"
    );
    assert_eq!(
        scandump(&mut c, "v3"),
        [
            (1, Some(header("09", "02", "02", "0200 1400 0200"))),
            (5, Some(hex("dd0a1365"))),
            (13, Some(hex("008100006cd4e3ad"))),
            (0, None)
        ]
    );
    // v4's items went in another order than the spec's (x x x first): the bytes differ, the
    // debug line does not.
    assert_eq!(
        cf_debug(&mut c, "v4"),
        "bktsize:4 buckets:4 items:5 deletes:0 filters:1 max_iterations:5 expansion:0"
    );
    // A small sub-filter is sent whole from any position inside it.
    assert_eq!(
        raw(&mut c, &["CF.SCANDUMP", "v1", "3"]),
        Value::Array(vec![
            Value::Int(11),
            Value::BulkString(hex("0100d900 07000000"))
        ])
    );

    // DUMP: RedisBloom's fields byte for byte, then rsbloom's seed, under rsbloom's encoding
    // version (100, in the low 10 bits of the module id), before Redis's RDB version and CRC.
    let dump = match raw(&mut c, &["DUMP", "v1"]) {
        Value::BulkString(b) => b,
        other => panic!("{other:?}"),
    };
    let fields = hex("07 81 3016e5a289821464 0201 0204 0203 0200 0202 0214 0201 0200 0204 0508 0100d90007000000 00");
    assert_eq!(&dump[..fields.len()], &fields[..], "{dump:02x?}");
    assert_eq!(dump.len(), fields.len() + 10);

    // RESTORE of RedisBloom's own DUMP of vector 1 (RDB version 10, Redis 7.0): the same filter.
    let redisbloom_dump = hex(
        "07 81 3016e5a289821404 0201 0204 0203 0200 0202 0214 0201 0204 0508 0100d90007000000 00 0a00 1dd9464c5a1a5099",
    );
    assert_eq!(
        run(
            &mut c,
            &[b"RESTORE".as_ref(), b"r1", b"0", &redisbloom_dump]
        ),
        ok()
    );
    assert_eq!(cf_debug(&mut c, "r1"), cf_debug(&mut c, "v1"));
    assert_eq!(scandump(&mut c, "r1"), scandump(&mut c, "v1"));
    for item in ["item1", "foo", ""] {
        assert_eq!(run(&mut c, &["CF.EXISTS", "r1", item]), int(1));
    }
}
