//! CF.INFO

use super::*;

#[test]
fn replies_in_resp2_and_resp3() {
    in_both_protocols(|c, resp3| {
        assert_eq!(run(c, &["CF.DEL", "cf", "a"]), yes(resp3, true));
        assert_eq!(run(c, &["CF.COMPACT", "cf"]), ok());
        // CF.INFO: 8 pairs, simple-string names; a map in RESP3.
        let info = run(c, &["CF.INFO", "cf"]);
        let pairs = [
            ("Size", 1080),
            ("Number of buckets", 512),
            ("Number of filters", 1),
            ("Number of items inserted", 2),
            ("Number of items deleted", 0),
            ("Bucket size", 2),
            ("Expansion rate", 1),
            ("Max iterations", 20),
        ];
        let expected = if resp3 {
            Reply::Map(pairs.iter().map(|(k, v)| (status(k), int(*v))).collect())
        } else {
            arr(pairs
                .iter()
                .flat_map(|(k, v)| [status(k), int(*v)])
                .collect())
        };
        assert_eq!(info, expected);
        // What the key's blocks take (48 for the filter, 16 for its one sub-filter's record,
        // 1,024 slots) and the server's record of the value (32): RedisBloom reports its
        // structs' sizes instead (its test expects 1112 for this 2-character key), about a
        // tenth of a small key less than it costs; tests/memory.rs checks the figure against
        // used_memory. The server's own share for the key: 32 bytes in Redis, 24 in Valkey
        // 9.1, none in Valkey 8.1 (which reports the value's bytes alone).
        let overhead = match flavor() {
            Flavor::Valkey81 => 0,
            Flavor::Valkey91 => 24,
            _ => 32,
        };
        assert_eq!(memory_usage(c, "cf"), 1120 + overhead);
    });
}

#[test]
fn errors_and_their_exact_texts() {
    assert_errors(&[
        (&["CF.INFO", "nokey"], err(texts::NOT_FOUND)),
        (&["CF.INFO", "str"], err(texts::WRONGTYPE)),
        (&["CF.INFO", "cf", "Size"], arity("cf.info")),
    ]);
}
