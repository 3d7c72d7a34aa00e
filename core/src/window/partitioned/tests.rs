//! The window filter's oracle tests: rates measured over a million adds, forgetting on time,
//! batch and single paths against each other, bursts, clocks and limits.

use crate::codec::FieldSlice;
use crate::outcome::{AddOutcome, FilterError};
use crate::spec::{FilterSpec, Growth, Window};
use crate::window::common::{HEADROOM, MAX_CLOCK};
use crate::window::partitioned::design::{window_fpr, Design};
use crate::window::partitioned::limits::exp_neg;
use crate::window::partitioned::limits::MIN_SLACK_DIVISOR;
use crate::window::partitioned::ring::Ring;
use crate::window::partitioned::Sliding;
use crate::{rdb, Filter};

const HOUR: u64 = 3_600_000;

fn count_filter(error: f64, capacity: u64) -> Sliding {
    let spec = FilterSpec {
        error,
        capacity,
        growth: Growth::Fixed,
        window: Window::Count,
        refresh: true,
    };
    Sliding::new(&spec, 0x5eed, u64::MAX).unwrap()
}

fn time_filter(error: f64, capacity: u64, seconds: u64, growth: Growth) -> Sliding {
    let spec = FilterSpec {
        error,
        capacity,
        growth,
        window: Window::Time { seconds },
        refresh: true,
    };
    Sliding::new(&spec, 0x5eed, u64::MAX).unwrap()
}

fn item(tag: &str, i: u64) -> Vec<u8> {
    format!("{tag}:{i}").into_bytes()
}

/// A one-sided 95% upper bound on a rate measured as `hits` in `trials`.
fn upper_bound(hits: u64, trials: u64) -> f64 {
    let p = hits as f64 / trials as f64;
    p + 1.645 * (p * (1.0 - p) / trials as f64).sqrt()
}

#[test]
fn exp_neg_matches_the_platform() {
    for x in [0.0, 1e-9, 0.01, 0.5, 0.7, 1.0, 3.7, 20.0, 100.0] {
        let (ours, std) = (exp_neg(x), (-x).exp());
        assert!((ours - std).abs() <= 1e-12 * std, "{x}");
    }
    assert_eq!(exp_neg(1e9), 0.0);
}

#[test]
fn window_fpr_agrees_with_enumeration() {
    // Every pattern of 6 slices, k = 3.
    let fills = [0.5, 0.3, 0.9, 0.2, 0.7, 0.6];
    let mut want = 0.0;
    for mask in 0u32..64 {
        let p: f64 = (0..6)
            .map(|i| {
                if mask >> i & 1 == 1 {
                    fills[i]
                } else {
                    1.0 - fills[i]
                }
            })
            .product();
        if (0..4).any(|s| (s..s + 3).all(|i| mask >> i & 1 == 1)) {
            want += p;
        }
    }
    assert!((window_fpr(3, fills) - want).abs() < 1e-12);
}

#[test]
fn designs_meet_the_memory_targets() {
    // The budgets: 20 bits per window item at 1%, 30 at 0.1%, slack at most a
    // quarter window (l >= 4).
    let one = Design::for_error(0.01).unwrap();
    assert_eq!((one.hashes, one.generations), (11, 66));
    assert!(one.bits_per_item() < 20.0, "{one:?}");
    let tenth = Design::for_error(0.001).unwrap();
    assert_eq!((tenth.hashes, tenth.generations), (14, 70));
    assert!(tenth.bits_per_item() < 30.0, "{tenth:?}");
    for error in [0.5, 0.1, 0.01, 0.001, 1e-4, 1e-6, 1e-9, 1e-13] {
        let d = Design::for_error(error).unwrap();
        assert!(
            d.generations >= MIN_SLACK_DIVISOR * d.hashes,
            "{error} {d:?}"
        );
        // Every design takes the blocked layout.
        assert!(Ring::shape(d.hashes.into(), d.generations.into()).is_some());
        assert!(d.worst_fpr(1 << 20) <= error * HEADROOM, "{error} {d:?}");
    }
    assert_eq!(Design::for_error(1e-16), None);
    assert_eq!(Design::for_error(0.0), None);
}

/// Adds `adds` items one by one to a count window, checking that each of the newest
/// `capacity` is present after every generation, and measures the false-positive rate on
/// never-added items and the rate at which items past the window + slack still read
/// present.
fn churn_count_window(error: f64, capacity: u64, adds: u64, probes: u64) {
    let mut f = count_filter(error, capacity);
    let slack = f.slack();
    let most_slices = (f.hashes + f.generations) as usize;
    let (mut false_positives, mut trials) = (0, 0);
    let (mut remembered, mut forgotten_trials) = (0, 0);
    for i in 0..adds {
        // An add answers Present for a false positive; it is set all the same.
        assert!(f.add(&item("in", i), 0, u64::MAX, true).is_ok());
        assert!(f.slices.len() <= most_slices);
        if (i + 1) % (capacity / 2) == 0 {
            // Zero false negatives inside the window.
            for j in (i + 1).saturating_sub(capacity)..=i {
                assert!(f.contains(&item("in", j), 0), "item {j} at {i}");
            }
            for p in 0..probes {
                false_positives += u64::from(f.contains(&item("never", i * probes + p), 0));
                trials += 1;
            }
            // Past window + slack: forgotten (read present only at the rate).
            let old = (i + 1).saturating_sub(capacity + slack + 1);
            for j in old.saturating_sub(probes)..old {
                remembered += u64::from(f.contains(&item("in", j), 0));
                forgotten_trials += 1;
            }
        }
    }
    let rate = false_positives as f64 / trials as f64;
    eprintln!(
        "count window {error} x {capacity}: {adds} adds, fpr {rate:.5} ({false_positives}/{trials}), \
         forgotten read present {remembered}/{forgotten_trials}, {:.2} bits per item",
        f.bit_bytes() as f64 * 8.0 / capacity as f64
    );
    assert!(upper_bound(false_positives, trials) <= error * 1.05 || rate <= error);
    assert!(rate <= error, "{rate}");
    assert!(
        remembered as f64 <= (forgotten_trials as f64 * error * 1.5).max(3.0),
        "{remembered}/{forgotten_trials}"
    );
    // The computed worst case bounds the measured average, and is no loose bound: the
    // measured rate is within a factor of two of it.
    let design = Design::for_error(error).unwrap();
    let computed = design.worst_fpr(capacity.div_ceil(u64::from(design.generations)));
    eprintln!("computed worst case {computed:.5}, measured {rate:.5}");
    assert!(
        rate <= computed && rate >= computed / 2.0,
        "{rate} {computed}"
    );
}

#[test]
fn count_window_one_percent_over_a_million_adds() {
    churn_count_window(0.01, 100_000, 1_000_000, 4000);
}

#[test]
fn count_window_a_tenth_of_a_percent_over_a_million_adds() {
    churn_count_window(0.001, 100_000, 1_000_000, 20_000);
}

#[test]
fn count_window_forgets_exactly_after_window_plus_at_most_the_slack() {
    let mut f = count_filter(0.001, 1000);
    let slack = f.slack();
    let generation = 1000u64.div_ceil(u64::from(f.generations));
    assert_eq!(slack, generation * u64::from(f.hashes));
    assert!(slack <= 250);
    f.add(b"first", 0, u64::MAX, true).unwrap();
    let mut after = 0;
    while f.contains(b"first", 0) {
        f.add(&item("x", after), 0, u64::MAX, true).unwrap();
        after += 1;
    }
    // Present for at least the window, gone within window + slack.
    assert!(after >= 1000 && after <= 1000 + slack, "{after}");
}

#[test]
fn batch_lookups_answer_exactly_as_single_ones() {
    let mut f = time_filter(0.05, 2000, 60, Growth::Scaling(2));
    let t0 = 2_000_000;
    for i in 0..20_000u64 {
        f.add(&item("x", i), t0 + i * 5, u64::MAX, true).unwrap();
    }
    let probes: Vec<Vec<u8>> = (0..30_000u64)
        .map(|i| item(if i % 3 == 0 { "never" } else { "x" }, i * 7 % 20_000))
        .collect();
    for now in [t0, t0 + 60_000, t0 + 100_000, t0 + 200_000] {
        let mut batch = Vec::new();
        f.contains_many(probes.iter().map(Vec::as_slice), now, |b| batch.push(b));
        let single: Vec<bool> = probes.iter().map(|p| f.contains(p, now)).collect();
        assert_eq!(batch, single, "{now}");
        assert!(batch.iter().any(|&b| b) || now > t0 + 150_000);
    }
    let empty = count_filter(0.01, 10);
    let mut answers = Vec::new();
    empty.contains_many([&b"a"[..], b"b"].into_iter(), 0, |b| answers.push(b));
    assert_eq!(answers, [false, false]);
}

#[test]
fn batch_adds_do_exactly_what_single_adds_do() {
    // Small generations (many shifts inside a batch), duplicates inside and across
    // batches, re-adds of older items, both kinds, a time window that grows.
    let kinds = [
        (Window::Count, Growth::Fixed, 300u64),
        (Window::Time { seconds: 2 }, Growth::Scaling(2), 300),
        (Window::Time { seconds: 60 }, Growth::Fixed, 5000),
        (Window::Count, Growth::Fixed, 3),
    ];
    for (window, growth, capacity) in kinds {
        let spec = FilterSpec {
            error: 0.02,
            capacity,
            growth,
            window,
            refresh: true,
        };
        let mut one = Sliding::new(&spec, 9, u64::MAX).unwrap();
        let mut batch = one.clone();
        let mut state = 1u64;
        for round in 0..300u64 {
            let now = 5_000_000 + round * 37;
            let size = 1 + (round * 7919 % 97) as usize;
            let items: Vec<Vec<u8>> = (0..size)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    item("b", (state >> 33) % 2000)
                })
                .collect();
            let singles: Vec<_> = items
                .iter()
                .map(|it| one.add(it, now, 4 << 20, true))
                .collect();
            let mut batched = Vec::new();
            batch.add_many(items.iter().map(Vec::as_slice), now, 4 << 20, true, |r| {
                batched.push(r);
                true
            });
            assert_eq!(batched, singles, "{window:?} round {round}");
            assert_eq!(batch, one, "{window:?} round {round}");
        }
    }
}

#[test]
fn re_adding_refreshes_an_item() {
    let mut f = count_filter(0.01, 1000);
    f.add(b"keep", 0, u64::MAX, true).unwrap();
    for i in 0..5000 {
        if i % 500 == 0 {
            assert_eq!(f.add(b"keep", 0, u64::MAX, true), Ok(AddOutcome::Present));
        }
        f.add(&item("x", i), 0, u64::MAX, true).unwrap();
    }
    assert!(f.contains(b"keep", 0));
    // Re-adds are not counted (nor are the few new items that read present).
    assert!(
        (4900..=5001).contains(&f.base().added()),
        "{}",
        f.base().added()
    );
}

#[test]
fn time_window_keeps_the_window_and_forgets_after_the_slack() {
    let mut f = time_filter(0.01, 10_000, 3600, Growth::Scaling(2));
    let t0 = 1_700_000_000_000u64;
    // 100 items a minute for 3 hours (about half the capacity per window).
    let mut added_at = Vec::new();
    for minute in 0..180u64 {
        let now = t0 + minute * 60_000;
        for j in 0..100 {
            let i = minute * 100 + j;
            f.add(&item("t", i), now, u64::MAX, true).unwrap();
            added_at.push(now);
        }
        for (i, &at) in added_at.iter().enumerate() {
            let age = now - at;
            let present = f.contains(&item("t", i as u64), now);
            if age < HOUR {
                assert!(present, "item {i} of age {age} at minute {minute}");
            }
        }
    }
    // Everything older than window + slack is forgotten (up to the rate).
    let now = t0 + 179 * 60_000;
    let old = added_at
        .iter()
        .enumerate()
        .filter(|(_, &at)| now - at >= HOUR + f.slack())
        .map(|(i, _)| i as u64);
    let (mut present, mut total) = (0, 0);
    for i in old {
        present += u64::from(f.contains(&item("t", i), now));
        total += 1;
    }
    assert!(total > 5000);
    assert!(
        present as f64 <= total as f64 * 0.01 * 2.0 + 3.0,
        "{present}/{total}"
    );
    // The steady state holds at most k + l slices, all of the base size.
    assert!(f.slices.len() <= (f.hashes + f.generations) as usize);
    assert!(f
        .slices
        .iter()
        .all(|s| s.level == 0 && s.bit_count() == f.base_bits));
}

/// A time window over 11 windows of churn and 1,100,000 adds at its capacity's rate (one
/// item every 36 ms for an hour-long window of 100,000): every item inside the window is
/// found at every check, the false-positive rate stays under the request, items past the
/// window plus the slack read present no more often, and the memory is the steady state's.
#[test]
fn time_window_over_a_million_adds() {
    let mut f = time_filter(0.01, 100_000, 3600, Growth::Scaling(2));
    let t0 = 1_750_000_000_000u64;
    let at = |i: u64| t0 + i * 36;
    let total = 1_100_000u64;
    let (mut fp, mut trials, mut remembered, mut old_trials) = (0u64, 0u64, 0u64, 0u64);
    for i in 0..total {
        f.add(&item("w", i), at(i), u64::MAX, true).unwrap();
        if (i + 1) % 50_000 == 0 {
            let now = at(i);
            // Every item of the last hour.
            let first = (i + 1).saturating_sub(100_000);
            for j in first..=i {
                assert!(f.contains(&item("w", j), now), "item {j} at {i}");
            }
            for p in 0..5000 {
                fp += u64::from(f.contains(&item("never", i * 5000 + p), now));
                trials += 1;
            }
            // Items added before the window and its slack (none in the first hour).
            let gone = now.saturating_sub(t0 + HOUR + f.slack()) / 36;
            for j in gone.saturating_sub(2000)..gone {
                remembered += u64::from(f.contains(&item("w", j), now));
                old_trials += 1;
            }
        }
    }
    let rate = fp as f64 / trials as f64;
    let bits = f.bit_bytes() as f64 * 8.0 / 100_000.0;
    eprintln!(
        "time window: {total} adds, fpr {rate:.5} ({fp}/{trials}), forgotten read present \
         {remembered}/{old_trials}, {bits:.2} bits per window item, {} slices",
        f.slices.len()
    );
    assert!(rate <= 0.01, "{rate}");
    assert!(remembered as f64 <= old_trials as f64 * 0.015 + 3.0);
    assert!(bits < 20.5, "{bits}");
    assert!(f.slices.iter().all(|s| s.level == 0));
}

#[test]
fn new_items_after_an_idle_spell_do_not_keep_old_ones_alive() {
    let mut f = time_filter(0.01, 1000, 3600, Growth::Scaling(2));
    let t0 = 1_800_000_000_000u64;
    let old: Vec<Vec<u8>> = (0..300).map(|i| item("old", i)).collect();
    let young: Vec<Vec<u8>> = (0..300).map(|i| item("young", i)).collect();
    for it in &old {
        f.add(it, t0, u64::MAX, true).unwrap();
    }
    // 50 minutes without adds, then a burst.
    for it in &young {
        f.add(it, t0 + 50 * 60_000, u64::MAX, true).unwrap();
    }
    let past = t0 + HOUR + f.slack();
    let remembered = old.iter().filter(|it| f.contains(it, past)).count();
    assert!(
        remembered <= 6,
        "{remembered}/300 old items past window + slack"
    );
    assert!(young.iter().all(|it| f.contains(it, past)));
}

#[test]
fn the_far_future_is_the_latest_clock_not_an_overflow() {
    // Found by the chunks fuzz target: at u64::MAX, "ended + window" saturated and every
    // slice read as expired, so an item was missing right after its add.
    let mut f = time_filter(0.01, 100, 60, Growth::Scaling(2));
    for now in [MAX_CLOCK - 1, MAX_CLOCK, u64::MAX] {
        f.add(b"late", now, u64::MAX, true).unwrap();
        assert!(f.contains(b"late", now), "{now}");
        assert!(f.base().clock() >= MAX_CLOCK - 1 && f.base().clock() <= MAX_CLOCK);
    }
}

#[test]
fn reads_use_the_clock_and_never_write() {
    let mut f = time_filter(0.01, 1000, 60, Growth::Scaling(2));
    let t0 = 1_000_000;
    f.add(b"a", t0, u64::MAX, true).unwrap();
    let before = f.clone();
    assert!(f.contains(b"a", t0 + 59_999));
    // Past the window plus the slack, a read treats the slices as gone, without dropping.
    assert!(!f.contains(b"a", t0 + 60_000 + f.slack()));
    assert_eq!(f.card(t0 + 60_000 + f.slack()), 0);
    assert_eq!(f.card(t0), 1);
    assert_eq!(f, before);
}

#[test]
fn a_clock_that_steps_back_neither_resurrects_nor_drops() {
    let mut f = time_filter(0.01, 1000, 60, Growth::Scaling(2));
    let t0 = 5_000_000;
    f.add(b"old", t0, u64::MAX, true).unwrap();
    // A write two windows later forgets "old" (and drops its slices).
    f.add(b"new", t0 + 120_000, u64::MAX, true).unwrap();
    assert!(!f.contains(b"old", t0 + 120_000));
    // The clock steps back an hour: "old" stays forgotten, "new" stays.
    let back = t0 + 120_000 - HOUR;
    assert!(!f.contains(b"old", back));
    assert!(f.contains(b"new", back));
    // An add at the stepped-back time is stamped at the filter's clock, so it lasts a
    // full window from there.
    f.add(b"during", back, u64::MAX, true).unwrap();
    assert_eq!(f.base().clock(), t0 + 120_000);
    assert!(f.contains(b"during", t0 + 120_000 + 59_999));
    assert!(f.contains(b"new", t0 + 120_000 + 59_999));
}

#[test]
fn a_burst_grows_the_filter_holds_the_rate_and_shrinks_back() {
    let mut f = time_filter(0.01, 1000, 60, Growth::Scaling(2));
    // The steady state: the ring alone.
    let base = f.ring().unwrap().bytes().len() as u64;
    let t0 = 10_000_000;
    // 20,000 items within one second: 20 times the capacity.
    for i in 0..20_000 {
        f.add(&item("burst", i), t0 + i / 20, u64::MAX, true)
            .unwrap();
    }
    let now = t0 + 1000;
    for i in 0..20_000 {
        assert!(f.contains(&item("burst", i), now), "{i}");
    }
    let (mut fp, trials) = (0, 200_000u64);
    for i in 0..trials {
        fp += u64::from(f.contains(&item("never", i), now));
    }
    let rate = fp as f64 / trials as f64;
    eprintln!(
        "burst: {} slices, {} bytes (steady state {base}), fpr {rate}",
        f.slices.len(),
        f.bit_bytes()
    );
    assert!(rate <= 0.01, "{rate}");
    assert!(f.bit_bytes() > base);
    // Grown slices have their own arrays, which lookups prefetch: the filter notes them,
    // and so does one decoded from its RDB form.
    assert!(f.own_arrays);
    let mut fields = Vec::new();
    rdb::encode(&Filter::from(f.clone()), &mut fields);
    let decoded = rdb::decode(&mut FieldSlice(&fields)).unwrap();
    assert_eq!(decoded, Filter::from(f.clone()));
    // After the window the burst ages out: a light load brings it back to base slices.
    for minute in 2..6u64 {
        f.add(&item("calm", minute), now + minute * 60_000, u64::MAX, true)
            .unwrap();
    }
    assert!(f.bit_bytes() <= base, "{}", f.bit_bytes());
    assert!(!f.own_arrays);
}

#[test]
fn nonscaling_and_the_memory_limit_refuse_without_changing_anything() {
    let mut f = time_filter(0.01, 100, 60, Growth::Fixed);
    let t0 = 1_000;
    let mut refused = None;
    for i in 0..10_000u64 {
        let before = f.clone();
        match f.add(&item("x", i), t0, u64::MAX, true) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e, FilterError::WindowFull);
                assert_eq!(f, before);
                refused = Some(i);
                break;
            }
        }
    }
    // The fixed budget takes more than the capacity, never less.
    let refused = refused.expect("a NONSCALING window refuses a burst");
    assert!(refused >= 100, "{refused}");
    // Every item taken is still there.
    for i in 0..refused {
        assert!(f.contains(&item("x", i), t0));
    }
    let mut g = time_filter(0.01, 100, 60, Growth::Scaling(2));
    let limit = g.base_bits / 8 * u64::from(g.hashes + g.generations + 2);
    let mut refused = false;
    for i in 0..100_000u64 {
        let before = g.clone();
        if let Err(e) = g.add(&item("y", i), t0, limit, true) {
            assert!(matches!(e, FilterError::TooLarge { .. }), "{e:?}");
            assert_eq!(g, before);
            refused = true;
            break;
        }
    }
    assert!(refused);
}

#[test]
fn filters_with_tiny_capacities_work() {
    for capacity in [1, 2, 3, 7] {
        let mut f = count_filter(0.01, capacity);
        for i in 0..100 {
            f.add(&item("t", i), 0, u64::MAX, true).unwrap();
            for j in (i + 1).saturating_sub(capacity)..=i {
                assert!(f.contains(&item("t", j), 0), "{capacity} {j} {i}");
            }
        }
    }
}

#[test]
fn a_rings_size_saturates_instead_of_wrapping() {
    // A SCANDUMP header's ring is sized before its fields are checked: a wrapped size would
    // pass the limit that the saturated one fails.
    assert_eq!(Ring::bytes_for(48, u64::MAX, 64), u64::MAX);
    assert_eq!(Ring::bytes_for(11, 73 * 1000, 73), 11 * 1000 * 64);
}

#[test]
fn a_scandump_header_past_the_limit_is_refused_before_its_ring_is_allocated() {
    use crate::scandump::{filter_from_header, header, DumpError};
    use crate::sizing::MAX_LINK_BITS;
    let f = count_filter(0.01, 1000);
    let (_, segment_bits) = Ring::shape(u64::from(f.hashes), u64::from(f.generations)).unwrap();
    let mut h = header(&Filter::from(f));
    // The base slice's bits (after the 20 common bytes and kind, seed, error, capacity, window,
    // span, hashes, generations and base capacity): a ring of terabytes, past any machine's
    // memory, which the builder would refuse only after the per-filter limit had not been
    // checked (and, where the machine had the memory, after allocating it).
    let bits = MAX_LINK_BITS / segment_bits * segment_bits;
    h[77..85].copy_from_slice(&bits.to_le_bytes());
    assert!(matches!(
        filter_from_header(&h, 0, 1 << 30),
        Err(DumpError::TooLarge { .. })
    ));
}

/// A first-layout filter takes `NOREFRESH` per call: a held item's add answers `Present` and
/// changes nothing, on both paths; an absent item is added.
#[test]
fn a_norefresh_call_leaves_held_items_as_they_were() {
    let now = 1_700_000_000_000u64;
    let mut f = time_filter(0.01, 1000, 3600, Growth::Scaling(2));
    for i in 0..100 {
        f.add(&item("in", i), now, u64::MAX, true).unwrap();
    }
    let before = f.clone();
    let later = now + HOUR / 2;
    assert_eq!(
        f.add(&item("in", 5), later, u64::MAX, false),
        Ok(AddOutcome::Present)
    );
    let held: Vec<Vec<u8>> = (0..100).map(|i| item("in", i)).collect();
    f.add_many(
        held.iter().map(Vec::as_slice),
        later,
        u64::MAX,
        false,
        |r| {
            assert_eq!(r, Ok(AddOutcome::Present));
            true
        },
    );
    assert_eq!(f, before);
    assert_eq!(f.add(b"new", later, u64::MAX, false), Ok(AddOutcome::Added));
}
