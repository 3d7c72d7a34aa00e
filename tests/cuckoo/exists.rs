//! CF.EXISTS, CF.MEXISTS, CF.COUNT

use super::*;

#[test]
fn replies_in_resp2_and_resp3() {
    in_both_protocols(|c, resp3| {
        assert_eq!(run(c, &["CF.COUNT", "cf", "a"]), int(2));
        assert_eq!(run(c, &["CF.EXISTS", "cf", "b"]), yes(resp3, true));
        assert_eq!(run(c, &["CF.EXISTS", "missing", "b"]), yes(resp3, false));
        assert_eq!(run(c, &["CF.COUNT", "missing", "b"]), int(0));
        let m = run(
            c,
            &["CF.MEXISTS", "cf", "a", "b", "zz-absent-1", "zz-absent-2"],
        );
        let (t, f) = (yes(resp3, true), yes(resp3, false));
        assert_eq!(m, arr(vec![t.clone(), t, f.clone(), f.clone()]));
        assert_eq!(run(c, &["CF.MEXISTS", "missing", "a"]), arr(vec![f]));
    });
}

#[test]
fn errors_and_their_exact_texts() {
    assert_errors(&[
        // rsbloom: readers answer WRONGTYPE for another type (RedisBloom reads it as empty).
        (&["CF.EXISTS", "str", "x"], err(texts::WRONGTYPE)),
        (&["CF.MEXISTS", "bloom", "x"], err(texts::WRONGTYPE)),
        (&["CF.COUNT", "str", "x"], err(texts::WRONGTYPE)),
    ]);
}
