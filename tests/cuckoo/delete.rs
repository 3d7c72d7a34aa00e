//! CF.DEL, CF.COMPACT

use super::*;

#[test]
fn replies_in_resp2_and_resp3() {
    in_both_protocols(|c, resp3| {
        assert_eq!(run(c, &["CF.DEL", "cf", "a"]), yes(resp3, true));
        assert_eq!(run(c, &["CF.DEL", "cf", "zz-absent-1"]), yes(resp3, false));
        assert_eq!(run(c, &["CF.COUNT", "cf", "a"]), int(1));
        assert_eq!(run(c, &["CF.COMPACT", "cf"]), ok());
        assert_eq!(run(c, &["CF.COUNT", "cf", "a"]), int(1));
        assert_eq!(run(c, &["CF.EXISTS", "cf", "b"]), yes(resp3, true));
    });
}

#[test]
fn errors_and_their_exact_texts() {
    assert_errors(&[
        (&["CF.DEL", "str", "x"], err(texts::WRONGTYPE)),
        (&["CF.COMPACT", "str"], err(texts::WRONGTYPE)),
        (&["CF.DEL", "nokey", "x"], err(texts::cf::DEL_NOT_FOUND)),
        (&["CF.COMPACT", "nokey"], err(texts::cf::COMPACT_NOT_FOUND)),
    ]);
}

/// `Number of items deleted` counts deletes since the last compaction, as RedisBloom's does:
/// CF.COMPACT resets it, and so does the compaction a delete starts once deletes pass a tenth
/// of the items of a filter with more than one sub-filter.
#[test]
fn the_deleted_count_resets_at_every_compaction() {
    let s = Server::new();
    let mut c = s.conn();
    let deleted = |c: &mut redis::Connection, key: &str| match run(c, &["CF.INFO", key]) {
        Reply::Arr(v) => v[9].clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        run(&mut c, &["CF.RESERVE", "one", "1000", "SEED", "1"]),
        ok()
    );
    let its = items("item-", 10);
    for item in &its {
        run(&mut c, &["CF.ADD", "one", item]);
    }
    for item in &its[..3] {
        assert_eq!(run(&mut c, &["CF.DEL", "one", item]), int(1));
    }
    assert_eq!(
        deleted(&mut c, "one"),
        int(3),
        "one sub-filter: no compaction"
    );
    assert_eq!(run(&mut c, &["CF.COMPACT", "one"]), ok());
    assert_eq!(deleted(&mut c, "one"), int(0));

    // Four one-slot buckets: twenty items make several sub-filters.
    let grown = "CF.RESERVE grown 4 BUCKETSIZE 1 SEED 1";
    assert_eq!(run(&mut c, &grown.split(' ').collect::<Vec<_>>()), ok());
    let its = items("item-", 20);
    for item in &its {
        run(&mut c, &["CF.ADD", "grown", item]);
    }
    assert!(cf_debug(&mut c, "grown").contains("items:20"));
    assert!(!cf_debug(&mut c, "grown").contains("filters:1 "));
    assert_eq!(run(&mut c, &["CF.DEL", "grown", &its[0]]), int(1));
    assert_eq!(
        deleted(&mut c, "grown"),
        int(1),
        "1 of 19 is not past a tenth"
    );
    assert_eq!(run(&mut c, &["CF.DEL", "grown", &its[1]]), int(1));
    assert_eq!(deleted(&mut c, "grown"), int(0), "2 of 18 is: compacted");
}
