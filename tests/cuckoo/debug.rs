//! CF.DEBUG

use super::*;

#[test]
fn replies_in_resp2_and_resp3() {
    in_both_protocols(|c, _| {
        assert_eq!(
            cf_debug(c, "cf"),
            "bktsize:2 buckets:512 items:3 deletes:0 filters:1 max_iterations:20 expansion:1"
        );
        assert_eq!(
            run(c, &["CF.DEL", "cf", "a"]),
            run(c, &["CF.EXISTS", "cf", "a"])
        );
        assert_eq!(run(c, &["CF.COMPACT", "cf"]), ok());
        assert_eq!(
            cf_debug(c, "cf"),
            "bktsize:2 buckets:512 items:2 deletes:0 filters:1 max_iterations:20 expansion:1"
        );
    });
}

#[test]
fn errors_and_their_exact_texts() {
    assert_errors(&[(&["CF.DEBUG", "nokey"], err(texts::NOT_FOUND))]);
}
