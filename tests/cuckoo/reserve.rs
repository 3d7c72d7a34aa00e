//! CF.RESERVE

use super::*;

#[test]
fn replies_in_resp2_and_resp3() {
    in_both_protocols(|c, _| {
        assert_eq!(run(c, &["CF.RESERVE", "new", "1000", "SEED", "42"]), ok());
        // The options, stored as RedisBloom stores them (the expansion rounded up to a power
        // of two).
        let options = ["BUCKETSIZE", "4", "MAXITERATIONS", "7", "EXPANSION", "3"];
        let mut args = vec!["CF.RESERVE", "opts", "1000"];
        args.extend(options);
        assert_eq!(run(c, &args), ok());
        assert_eq!(
            cf_debug(c, "opts"),
            "bktsize:4 buckets:256 items:0 deletes:0 filters:1 max_iterations:7 expansion:4"
        );
        assert_eq!(run(c, &["TYPE", "new"]), status("MBbloomCF"));
    });
}

#[test]
fn errors_and_their_exact_texts() {
    assert_errors(&[
        // Bloom filters' window words, named (RedisBloom answers them with its arity error).
        (
            &["CF.RESERVE", "k", "100", "SLIDING"],
            err(&texts::window_word_on_cuckoo("SLIDING")),
        ),
        (
            &["CF.RESERVE", "k", "100", "window", "60"],
            err(&texts::window_word_on_cuckoo("WINDOW")),
        ),
        (&["CF.RESERVE", "k"], arity("cf.reserve")),
        (
            &["CF.RESERVE", "k", "100", "BUCKETSIZE"],
            arity("cf.reserve"),
        ),
        (&["CF.RESERVE", "k", "100", "X"], arity("cf.reserve")),
        // RedisBloom: SIGSEGV on an option keyword last with an odd count.
        (
            &["CF.RESERVE", "k", "100", "EXPANSION", "BUCKETSIZE"],
            err(texts::cf::PARSE_EXPANSION),
        ),
        (
            &["CF.RESERVE", "k", "100", "X", "MAXITERATIONS"],
            err(&texts::unknown_argument("CF.RESERVE", "X")),
        ),
        (
            &["CF.RESERVE", "k", "100", "a", "b"],
            err(&texts::unknown_argument("CF.RESERVE", "a")),
        ),
        (&["CF.RESERVE", "k", "abc"], err(texts::cf::BAD_CAPACITY)),
        (&["CF.RESERVE", "k", "+10"], err(texts::cf::BAD_CAPACITY)),
        (&["CF.RESERVE", "k", "010"], err(texts::cf::BAD_CAPACITY)),
        (
            &["CF.RESERVE", "k", "9223372036854775808"],
            err(texts::cf::BAD_CAPACITY),
        ),
        (&["CF.RESERVE", "k", "3"], err(texts::cf::CAPACITY_RANGE)),
        (&["CF.RESERVE", "k", "-1"], err(texts::cf::CAPACITY_RANGE)),
        (
            &["CF.RESERVE", "k", "100", "MAXITERATIONS", "x"],
            err(texts::cf::PARSE_MAX_ITERATIONS),
        ),
        (
            &["CF.RESERVE", "k", "100", "BUCKETSIZE", "1.5"],
            err(texts::cf::PARSE_BUCKET_SIZE),
        ),
        (
            &["CF.RESERVE", "k", "100", "MAXITERATIONS", "65536"],
            err(texts::cf::MAX_ITERATIONS_RANGE),
        ),
        (
            &["CF.RESERVE", "k", "100", "BUCKETSIZE", "256"],
            err(texts::cf::BUCKET_SIZE_RANGE),
        ),
        (
            &["CF.RESERVE", "k", "100", "EXPANSION", "32769"],
            err(texts::cf::EXPANSION_RANGE),
        ),
        // MAXITERATIONS is checked before BUCKETSIZE, whatever the order given.
        (
            &[
                "CF.RESERVE",
                "k",
                "100",
                "BUCKETSIZE",
                "0",
                "MAXITERATIONS",
                "0",
            ],
            err(texts::cf::MAX_ITERATIONS_RANGE),
        ),
        (
            &["CF.RESERVE", "k", "100", "SEED", "-1"],
            err(texts::BAD_SEED),
        ),
        (&["CF.RESERVE", "cf", "100"], err(texts::ITEM_EXISTS)),
        (&["CF.RESERVE", "str", "100"], err(texts::WRONGTYPE)),
        (&["CF.RESERVE", "bloom", "100"], err(texts::WRONGTYPE)),
        (
            &["CF.RESERVE", "k", "9223372036854775807"],
            err(texts::cf::INSUFFICIENT_MEMORY_CREATE),
        ),
    ]);
}
