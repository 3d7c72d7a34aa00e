//! Bit-level work on a chunk's words: reads and writes of bit fields across word boundaries,
//! gaps opened and ranges moved for an insert, and select (the position of the `k`-th one or
//! zero bit), by the CPU's bit-deposit instruction where it has one ([`run_batch`]).

/// Word `i`, or zero past the end.
#[inline(always)]
fn word_at(words: &[u64], i: usize) -> u128 {
    words.get(i).map_or(0, |&w| u128::from(w))
}

/// The 64 bits from bit `at` (zeros past the end): two words shifted as one, no branch on
/// the bit's place in its word.
#[inline(always)]
pub(crate) fn bits_at(words: &[u64], at: usize) -> u64 {
    let word = at / 64;
    let pair = word_at(words, word + 1) << 64 | word_at(words, word);
    (pair >> (at % 64)) as u64
}

/// The 128 bits from bit `at` (zeros past the end).
#[inline(always)]
pub(crate) fn bits128_at(words: &[u64], at: usize) -> u128 {
    let (word, bit) = (at / 64, at % 64);
    let (w0, w1, w2) = (
        word_at(words, word),
        word_at(words, word + 1),
        word_at(words, word + 2),
    );
    let low = ((w1 << 64 | w0) >> bit) as u64;
    let high = ((w2 << 64 | w1) >> bit) as u64;
    u128::from(low) | u128::from(high) << 64
}

/// Position of the `k`-th zero bit (from 0) of `x`; None when it has no more than `k`.
#[inline(always)]
pub(crate) fn select_zero_128<S: Select>(x: u128, k: u32) -> Option<u32> {
    let (low, high) = (!(x as u64), !((x >> 64) as u64));
    let in_low = low.count_ones();
    if k < in_low {
        Some(S::in_word(low, k))
    } else if k - in_low < high.count_ones() {
        Some(64 + S::in_word(high, k - in_low))
    } else {
        None
    }
}

#[inline(always)]
pub(crate) fn get_bits(words: &[u64], at: usize, width: u32) -> u64 {
    bits_at(words, at) & ((1u64 << width) - 1)
}

/// ORs `value` (of `width` bits) in at bit `at`, where the bits are zero.
pub(crate) fn put_bits(words: &mut [u64], at: usize, width: u32, value: u64) {
    let (word, bit) = (at / 64, (at % 64) as u32);
    words[word] |= value << bit;
    if bit + width > 64 {
        words[word + 1] |= value >> (64 - bit);
    }
}

/// Moves every bit at or above `at` in `words` up by `width` (under 64), leaving `width` zero
/// bits at `at`; bits moved past the end are lost (the caller makes room first). Front to back,
/// each word's top bits carried in a register into the next: no bounds check or branch per
/// word (back to front, each word read twice, it took a fifth of an add).
pub(crate) fn open_gap(words: &mut [u64], at: usize, width: u32) {
    let Some((head, tail)) = words.get_mut(at / 64..).and_then(|w| w.split_first_mut()) else {
        return;
    };
    let low = (1u64 << (at % 64)) - 1;
    let moving = *head & !low;
    *head = (*head & low) | moving << width;
    let mut carry = moving >> (64 - width);
    for word in tail {
        let old = *word;
        *word = old << width | carry;
        carry = old >> (64 - width);
    }
}

/// Moves bits `[from, to)` up by one into `[from + 1, to]` (bit `to` is free), leaving bit
/// `from` as it was below; the words outside `[from, to]` do not change. The words between
/// are shifted whole, front to back with the carry in a register, and the two end words' kept
/// bits put back (masks chosen per word inside the loop, a branch each, cost a tenth of an
/// insert).
pub(crate) fn move_up_one(words: &mut [u64], from: usize, to: usize) {
    let words = &mut words[from / 64..=to / 64];
    // The bits of (from, to] in the first and the last word.
    let above_from = u64::MAX << (from % 64) << 1;
    let up_to = u64::MAX >> (63 - to % 64);
    let last = words.len() - 1;
    let (first_kept, last_kept) = (words[0] & !above_from, words[last] & !up_to);
    let mut carry = 0;
    for word in words.iter_mut() {
        let old = *word;
        *word = old << 1 | carry;
        carry = old >> 63;
    }
    words[0] = (words[0] & above_from) | first_kept;
    words[last] = (words[last] & up_to) | last_kept;
}

/// Position of the `k`-th one bit (from 0) of `x`, which has more than `k`: the bytes' running
/// counts find its byte without a branch, a short loop the bit.
#[inline(always)]
fn select_in_word(x: u64, k: u32) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Each byte's count of ones, then the running sums (each at most 64, in its byte).
    let pairs = x - ((x >> 1) & 0x5555_5555_5555_5555);
    let quads = (pairs & 0x3333_3333_3333_3333) + ((pairs >> 2) & 0x3333_3333_3333_3333);
    let bytes = (quads + (quads >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    let sums = bytes.wrapping_mul(ONES);
    // The bytes whose running sum is at most k come before the one holding the bit.
    let at_most = (((u64::from(k) * ONES) | HIGH) - sums) & HIGH;
    let byte = (at_most.count_ones() * 8).min(56);
    let before = if byte == 0 {
        0
    } else {
        (sums >> (byte - 8)) & 0xff
    };
    let mut rest = (x >> byte) & 0xff;
    // Wrapping: a word with `k` or fewer ones (the one-line layout's select evaluates both
    // halves of a header before it picks one) gives a position it then ignores, not a panic.
    for _ in 0..(u64::from(k).wrapping_sub(before) & 63) {
        rest &= rest.wrapping_sub(1);
    }
    byte + rest.trailing_zeros()
}

/// How a lookup finds the `k`-th one bit of a word: by the CPU's bit-deposit instruction
/// where it has one, else broadword. Chosen once per batch ([`run_batch`]), so the whole
/// batch is compiled for it: a check per select and a call into a function of its own left
/// the lookup's helpers out of line (0.80 of a reserved filter's BF.MEXISTS at 2M items, 0.87
/// inlined).
pub(crate) trait Select {
    /// Position of the `k`-th one bit (from 0) of `x`, which has more than `k`.
    fn in_word(x: u64, k: u32) -> u32;
}

/// [`select_in_word`]: any CPU.
pub(crate) struct Broadword;

impl Select for Broadword {
    #[inline(always)]
    fn in_word(x: u64, k: u32) -> u32 {
        select_in_word(x, k)
    }
}

/// The bit-deposit instruction: only inside [`run_batch`]'s function compiled for it.
#[cfg(target_arch = "x86_64")]
struct Deposit;

#[cfg(target_arch = "x86_64")]
impl Select for Deposit {
    #[inline(always)]
    fn in_word(x: u64, k: u32) -> u32 {
        // SAFETY: `Deposit` is only chosen by `run_batch`, once it has seen the CPU has BMI2.
        // The k-th one of x: deposit a single bit at the k-th one's place.
        unsafe { std::arch::x86_64::_pdep_u64(1 << k, x).trailing_zeros() }
    }
}

/// Work over a filter's chunks, compiled for a [`Select`].
pub(crate) trait Batch {
    type Output;
    fn run<S: Select>(self) -> Self::Output;
}

/// Runs `batch` with the CPU's popcount and bit-deposit instructions where it has them, and
/// its vector extensions: the crate builds for any x86-64, where `count_ones` is a dozen
/// instructions and a select in a word some thirty (a third of a lookup, measured), and a
/// one-line lookup's compare of four slots at once is a vector's work (33.2 ns a lookup at
/// 2M items without, 30.3 with AVX2, 28.0 with AVX-512: a reserved filter's 24.9).
#[inline]
pub(crate) fn run_batch<B: Batch>(batch: B) -> B::Output {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let deposit = has!("bmi2") && has!("popcnt") && has!("lzcnt");
        let avx2 = deposit && has!("avx2") && has!("fma");
        if avx2 && has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") {
            // SAFETY: the CPU has the instructions the function is compiled to use.
            return unsafe { run_with_avx512(batch) };
        }
        if avx2 {
            // SAFETY: as above.
            return unsafe { run_with_avx2(batch) };
        }
        if deposit {
            // SAFETY: as above.
            return unsafe { run_with_deposit(batch) };
        }
    }
    batch.run::<Broadword>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
unsafe fn run_with_deposit<B: Batch>(batch: B) -> B::Output {
    batch.run::<Deposit>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt,avx2,fma")]
unsafe fn run_with_avx2<B: Batch>(batch: B) -> B::Output {
    batch.run::<Deposit>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt,avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")]
unsafe fn run_with_avx512<B: Batch>(batch: B) -> B::Output {
    batch.run::<Deposit>()
}

/// Position of the `k`-th zero bit (from 0) at or after bit `from` of `words`, looking at most
/// `span` bits; None when there is none.
#[inline(always)]
pub(crate) fn select_zero<S: Select>(
    words: &[u64],
    from: usize,
    span: usize,
    mut k: usize,
) -> Option<usize> {
    let mut at = from;
    while at < from + span {
        let valid = (from + span - at).min(64);
        let mut zeros = !bits_at(words, at);
        if valid < 64 {
            zeros &= (1u64 << valid) - 1;
        }
        let count = zeros.count_ones() as usize;
        if k < count {
            return Some(at + S::in_word(zeros, k as u32) as usize);
        }
        k -= count;
        at += 64;
    }
    None
}

/// The length of the run of one bits starting at bit `at`, at most `most`.
#[inline(always)]
pub(crate) fn ones_from(words: &[u64], mut at: usize, most: usize) -> usize {
    let mut run = 0;
    while run < most {
        let ones = bits_at(words, at).trailing_ones() as usize;
        run += ones;
        if ones < 64 {
            break;
        }
        at += 64;
    }
    run.min(most)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every select of `S` against a bit-by-bit count.
    fn check_selects<S: Select>() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ones: Vec<u32> = (0..64).filter(|b| x >> b & 1 == 1).collect();
            for (k, &at) in ones.iter().enumerate() {
                assert_eq!(S::in_word(x, k as u32), at);
            }
            let words = [x, !x, x.rotate_left(5)];
            for from in [0, 5, 63, 64, 100] {
                let span = 192 - from - 7;
                let zeros: Vec<usize> = (from..from + span)
                    .filter(|&b| words[b / 64] >> (b % 64) & 1 == 0)
                    .collect();
                for (k, &at) in zeros.iter().enumerate() {
                    assert_eq!(select_zero::<S>(&words, from, span, k), Some(at));
                }
                assert_eq!(select_zero::<S>(&words, from, span, zeros.len()), None);
            }
            for at in 0..192 {
                let run = (at..192)
                    .take_while(|&b| words[b / 64] >> (b % 64) & 1 == 1)
                    .count();
                assert_eq!(ones_from(&words, at, 1000), run);
                assert_eq!(ones_from(&words, at, 3), run.min(3));
            }
        }
    }

    /// [`check_selects`] for the select [`run_batch`] picks on this CPU.
    struct CheckSelects;

    impl Batch for CheckSelects {
        type Output = &'static str;

        fn run<S: Select>(self) -> &'static str {
            check_selects::<S>();
            std::any::type_name::<S>()
        }
    }

    #[test]
    fn selects_agree_with_a_bit_by_bit_count() {
        check_selects::<Broadword>();
        let picked = run_batch(CheckSelects);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("bmi2") {
            assert!(picked.ends_with("Deposit"), "{picked}");
        }
    }

    #[test]
    fn a_range_moves_up_by_one_bit_and_nothing_else_moves() {
        let mut x = 0x1234_5678_9abc_def1u64;
        for _ in 0..500 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let original = [x, x.rotate_left(29), !x];
            let from = (x >> 40) as usize % 150;
            let to = from + (x >> 20) as usize % (191 - from);
            let mut words = original;
            move_up_one(&mut words, from, to);
            let bit = |w: &[u64; 3], b: usize| w[b / 64] >> (b % 64) & 1;
            for b in 0..192 {
                let expected = match b {
                    b if b > from && b <= to => bit(&original, b - 1),
                    b => bit(&original, b),
                };
                assert_eq!(bit(&words, b), expected, "{from}..{to} bit {b}");
            }
        }
    }

    #[test]
    fn gaps_open_as_a_bit_by_bit_move_does() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state ^ state >> 29
        };
        for len in 1..=9 {
            for _ in 0..200 {
                let original: Vec<u64> = (0..len).map(|_| next()).collect();
                let at = (next() % (64 * len as u64)) as usize;
                let width = (next() % 63 + 1) as u32;
                let mut words = original.clone();
                open_gap(&mut words, at, width);
                let bit = |w: &[u64], b: usize| w[b / 64] >> (b % 64) & 1 == 1;
                for b in 0..64 * len {
                    let expected = match b {
                        b if b < at => bit(&original, b),
                        b if b < at + width as usize => false,
                        b => bit(&original, b - width as usize),
                    };
                    assert_eq!(
                        bit(&words, b),
                        expected,
                        "len {len} at {at} width {width} bit {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn gaps_open_across_word_boundaries() {
        let mut words = [u64::MAX, 0, 0];
        open_gap(&mut words, 60, 11);
        assert_eq!(get_bits(&words, 0, 60), (1 << 60) - 1);
        assert_eq!(get_bits(&words, 60, 11), 0);
        assert_eq!(get_bits(&words, 71, 4), 0b1111);
        assert_eq!(get_bits(&words, 75, 10), 0);
    }
}
