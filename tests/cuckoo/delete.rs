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
