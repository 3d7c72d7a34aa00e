//! CF.ADD, CF.ADDNX, CF.INSERT, CF.INSERTNX

use super::*;

#[test]
fn replies_in_resp2_and_resp3() {
    in_both_protocols(|c, resp3| {
        assert_eq!(
            run(c, &["CF.ADD", "cf", "a"]),
            yes(resp3, true),
            "duplicates are stored"
        );
        assert_eq!(run(c, &["CF.ADDNX", "cf", "a"]), yes(resp3, false));
        assert_eq!(run(c, &["CF.ADDNX", "cf", "c"]), yes(resp3, true));
        // INSERT: 1 / full (-1 in RESP2, false in RESP3); INSERTNX integers in both.
        let full = "CF.RESERVE full 4 BUCKETSIZE 1 EXPANSION 0 SEED 7";
        assert_eq!(run(c, &full.split(' ').collect::<Vec<_>>()), ok());
        let r = run(c, &["CF.INSERT", "full", "ITEMS", "x", "x", "x", "x"]);
        let refused = if resp3 { boolean(false) } else { int(-1) };
        assert_eq!(
            r,
            arr(vec![
                yes(resp3, true),
                yes(resp3, true),
                refused.clone(),
                refused
            ])
        );
        assert_eq!(run(c, &["CF.ADD", "full", "x"]), err(texts::cf::FULL));
        let r = run(c, &["CF.INSERTNX", "full", "ITEMS", "x", "y"]);
        assert_eq!(
            r.clone(),
            ints(&[0, if r == ints(&[0, 1]) { 1 } else { -1 }])
        );
        assert_eq!(
            run(c, &["CF.INSERTNX", "nx", "ITEMS", "p", "q", "p"]),
            ints(&[1, 1, 0])
        );
        assert_eq!(
            run(c, &["CF.INSERT", "nc", "NOCREATE", "ITEMS", "p"]),
            err(texts::NOT_FOUND)
        );
        // An add to a missing key creates RedisBloom's default filter.
        assert_eq!(run(c, &["CF.ADD", "implicit", "p"]), yes(resp3, true));
        assert_eq!(
            cf_debug(c, "implicit"),
            "bktsize:2 buckets:512 items:1 deletes:0 filters:1 max_iterations:20 expansion:1"
        );
    });
}

#[test]
fn errors_and_their_exact_texts() {
    assert_errors(&[
        // Bloom filters' window words, named (RedisBloom: `Unknown argument received`).
        (
            &["CF.INSERT", "k", "WINDOW", "60", "ITEMS", "x"],
            err(&texts::window_word_on_cuckoo("WINDOW")),
        ),
        (
            &["CF.INSERTNX", "cf", "AT", "5", "ITEMS", "x"],
            err(&texts::window_word_on_cuckoo("AT")),
        ),
        (&["CF.ADD", "str", "x"], err(texts::WRONGTYPE)),
        (&["CF.ADD", "cf"], arity("cf.add")),
        (&["BF.ADD", "cf", "x"], err(texts::WRONGTYPE)),
        (&["CF.INSERT", "cf", "ITEMS"], arity("cf.insert")),
        (&["CF.INSERT", "cf", "CAPACITY"], arity("cf.insert")),
        (
            &["CF.INSERT", "cf", "NOCREATE", "x"],
            err(texts::INSERT_UNKNOWN_ARGUMENT),
        ),
        (&["CF.INSERT", "cf", "NOCREATE", "NX"], arity("cf.insert")),
        (
            &["CF.INSERT", "cf", "BOGUS", "ITEMS", "x"],
            err(texts::INSERT_UNKNOWN_ARGUMENT),
        ),
        (
            &["CF.INSERT", "cf", "", "ITEMS", "x"],
            err(texts::INSERT_UNKNOWN_ARGUMENT),
        ),
        (
            &["CF.INSERT", "cf", "CAPACITY", "x", "ITEMS", "x"],
            err(texts::cf::BAD_CAPACITY),
        ),
        (
            &["CF.INSERT", "cf", "CAPACITY", "3", "ITEMS", "x"],
            err(texts::cf::CAPACITY_RANGE),
        ),
        (
            &["CF.INSERTNX", "nokey", "NOCREATE", "ITEMS", "x"],
            err(texts::NOT_FOUND),
        ),
    ]);
}

#[test]
fn the_sub_filter_limit_per_command_and_per_item() {
    let s = Server::with_args(&["CF_MAX_EXPANSIONS", "4"], &[]);
    let mut c = s.conn();
    assert_eq!(
        run(&mut c, &["CONFIG", "GET", "bf.cf-max-expansions"]),
        arr(vec![bulk("bf.cf-max-expansions"), bulk("4")])
    );
    assert_eq!(
        run(
            &mut c,
            &["CF.RESERVE", "k", "4", "BUCKETSIZE", "1", "SEED", "0"]
        ),
        ok()
    );
    // Copies of one item cannot be kicked: each sub-filter takes 2 (its two buckets of one
    // slot). RedisBloom grows past the limit within one command; rsbloom refuses the growth.
    let r = run(
        &mut c,
        &[
            "CF.INSERT",
            "k",
            "ITEMS",
            "x",
            "x",
            "x",
            "x",
            "x",
            "x",
            "x",
            "x",
            "x",
            "x",
        ],
    );
    assert_eq!(r, ints(&[1, 1, 1, 1, 1, 1, 1, 1, -1, -1]));
    assert!(
        cf_debug(&mut c, "k").contains("filters:4"),
        "{}",
        cf_debug(&mut c, "k")
    );
    // At the limit: the whole command is refused, even an ADDNX of a present item.
    assert_eq!(
        run(&mut c, &["CF.ADD", "k", "y"]),
        err(texts::cf::MAX_EXPANSIONS)
    );
    assert_eq!(
        run(&mut c, &["CF.ADDNX", "k", "x"]),
        err(texts::cf::MAX_EXPANSIONS)
    );
    assert_eq!(
        run(&mut c, &["CF.INSERT", "k", "ITEMS", "y"]),
        err(texts::cf::MAX_EXPANSIONS)
    );
    // The config moves the limit.
    assert_eq!(
        run(&mut c, &["CONFIG", "SET", "bf.cf-max-expansions", "5"]),
        ok()
    );
    assert_eq!(run(&mut c, &["CF.ADD", "k", "x"]), int(1));
    assert!(run(&mut c, &["CONFIG", "SET", "bf.cf-max-expansions", "0"]).is_err());
    // With a limit of 1 an implicit creation would be refused at once: nothing is created.
    assert_eq!(
        run(&mut c, &["CONFIG", "SET", "bf.cf-max-expansions", "1"]),
        ok()
    );
    assert_eq!(
        run(&mut c, &["CF.ADD", "new", "x"]),
        err(texts::cf::MAX_EXPANSIONS)
    );
    assert_eq!(run(&mut c, &["EXISTS", "new"]), int(0));
}
