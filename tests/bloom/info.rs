//! BF.INFO and BF.CARD, in RESP2 and RESP3.

use super::*;

#[test]
fn info_full_reply_resp2_and_resp3() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.RESERVE", "bf", "0.001", "100"]), ok());
    let size = info_size(&mut c, "bf");
    assert!(size > 200 && size < 400, "Size {size}");
    assert_eq!(
        run(&mut c, &["BF.INFO", "bf"]),
        info2(100, size, 1, 0, Some(2))
    );
    assert_eq!(
        run(&mut c3, &["BF.INFO", "bf"]),
        info3(100, size, 1, 0, Some(2))
    );
    // Size is the filter's own figure: MEMORY USAGE adds the key's overhead on top
    match run(&mut c, &["MEMORY", "USAGE", "bf"]) {
        Reply::Int(m) => assert!(m >= size, "MEMORY USAGE {m} < Size {size}"),
        other => panic!("{other:?}"),
    }

    assert_eq!(
        run(&mut c, &["BF.RESERVE", "ns", "0.01", "10", "NONSCALING"]),
        ok()
    );
    assert_eq!(run(&mut c, &["BF.MADD", "ns", "a", "b"]), ints(&[1, 1]));
    let size = info_size(&mut c, "ns");
    assert_eq!(run(&mut c, &["BF.INFO", "ns"]), info2(10, size, 1, 2, None));
    assert_eq!(
        run(&mut c3, &["BF.INFO", "ns"]),
        info3(10, size, 1, 2, None)
    );

    // a scaled chain: capacities add up, one link more, Size grows
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "sc", "0.01", "10", "EXPANSION", "4"]
        ),
        ok()
    );
    let small = info_size(&mut c, "sc");
    let its = items("i", 30);
    run(&mut c, &cmd_with(&["BF.MADD", "sc"], &its));
    let card = match run(&mut c, &["BF.CARD", "sc"]) {
        Reply::Int(n) => n,
        other => panic!("{other:?}"),
    };
    let size = info_size(&mut c, "sc");
    assert!(size > small);
    assert_eq!(
        run(&mut c, &["BF.INFO", "sc"]),
        info2(50, size, 2, card, Some(4))
    );
}

#[test]
fn info_single_field() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(
        run(
            &mut c,
            &["BF.RESERVE", "bf", "0.001", "100", "EXPANSION", "5"]
        ),
        ok()
    );
    assert_eq!(
        run(&mut c, &["BF.MADD", "bf", "a", "b", "c"]),
        ints(&[1, 1, 1])
    );
    assert_eq!(
        run(&mut c, &["BF.RESERVE", "ns", "0.01", "10", "NONSCALING"]),
        ok()
    );
    let size = info_size(&mut c, "bf");
    let fields = [
        ("CAPACITY", "Capacity", int(100)),
        ("size", "Size", int(size)),
        ("Filters", "Number of filters", int(1)),
        ("ITEMS", "Number of items inserted", int(3)),
        ("expansion", "Expansion rate", int(5)),
    ];
    for (option, name, value) in fields {
        // RESP2: a one-element array holding only the value
        assert_eq!(
            run(&mut c, &["BF.INFO", "bf", option]),
            arr(vec![value.clone()]),
            "{option}"
        );
        // RESP3: a one-entry map
        assert_eq!(
            run(&mut c3, &["BF.INFO", "bf", option]),
            Reply::Map(vec![(status(name), value)]),
            "{option}"
        );
    }
    assert_eq!(
        run(&mut c, &["BF.INFO", "ns", "EXPANSION"]),
        arr(vec![Reply::Nil])
    );
    assert_eq!(
        run(&mut c3, &["BF.INFO", "ns", "EXPANSION"]),
        Reply::Map(vec![(status("Expansion rate"), Reply::Nil)])
    );
}

#[test]
fn info_errors() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.RESERVE", "bf", "0.01", "100"]), ok());
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    for con in [&mut c, &mut c3] {
        assert_eq!(run(con, &["BF.INFO", "missing"]), err(texts::NOT_FOUND));
        assert_eq!(
            run(con, &["BF.INFO", "missing", "FOO"]),
            err(texts::NOT_FOUND)
        );
        assert_eq!(run(con, &["BF.INFO", "str"]), err(texts::WRONGTYPE));
        assert_eq!(run(con, &["BF.INFO", "str", "FOO"]), err(texts::WRONGTYPE));
        for bad in ["FOO", "CAP", "CAPACITYX", "", "Number of filters"] {
            assert_eq!(
                run(con, &["BF.INFO", "bf", bad]),
                err(texts::INVALID_INFO_VALUE),
                "{bad:?}"
            );
        }
        assert_eq!(run(con, &["BF.INFO"]), arity("bf.info"));
        assert_eq!(
            run(con, &["BF.INFO", "bf", "CAPACITY", "SIZE"]),
            arity("bf.info")
        );
    }
}

#[test]
fn card() {
    let s = Server::new();
    let mut c = s.conn();
    let mut c3 = s.conn_resp3();
    assert_eq!(run(&mut c, &["BF.CARD", "missing"]), int(0));
    assert_eq!(run(&mut c3, &["BF.CARD", "missing"]), int(0));
    assert_eq!(run(&mut c, &["EXISTS", "missing"]), int(0));
    assert_eq!(run(&mut c, &["BF.RESERVE", "bf", "0.01", "100"]), ok());
    assert_eq!(run(&mut c, &["BF.CARD", "bf"]), int(0));
    // only new items count
    assert_eq!(
        run(&mut c, &["BF.MADD", "bf", "a", "b", "a"]),
        ints(&[1, 1, 0])
    );
    assert_eq!(run(&mut c, &["BF.CARD", "bf"]), int(2));
    assert_eq!(run(&mut c3, &["BF.CARD", "bf"]), int(2));
    assert_eq!(run(&mut c, &["BF.INFO", "bf", "ITEMS"]), arr(vec![int(2)]));
    assert_eq!(run(&mut c, &["SET", "str", "v"]), ok());
    assert_eq!(run(&mut c, &["BF.CARD", "str"]), err(texts::WRONGTYPE));
    assert_eq!(run(&mut c, &["BF.CARD"]), arity("bf.card"));
    assert_eq!(run(&mut c, &["BF.CARD", "a", "b"]), arity("bf.card"));
}
