//! The rotating layout's oracle tests: the rate measured at every moment of a sweeping window,
//! no false negatives inside it, forgetting after the slack, time, bursts, the batch paths
//! against the single ones, refusals that change nothing, and both formats.

use crate::codec::{Field, FieldSlice};
use crate::outcome::{AddOutcome, FilterError};
use crate::scandump;
use crate::spec::{FilterSpec, Growth, Window};
use crate::window::common::HEADROOM;
use crate::window::rotating::design::Design;
use crate::window::rotating::Rotating;
use crate::{rdb, Filter};

fn count_filter(error: f64, capacity: u64) -> Rotating {
    let spec = FilterSpec {
        error,
        capacity,
        growth: Growth::Fixed,
        window: Window::Count,
        refresh: true,
    };
    Rotating::new(&spec, 0x5eed, u64::MAX).unwrap()
}

fn time_filter(error: f64, capacity: u64, seconds: u64, growth: Growth) -> Rotating {
    let spec = FilterSpec {
        error,
        capacity,
        growth,
        window: Window::Time { seconds },
        refresh: true,
    };
    Rotating::new(&spec, 0x5eed, u64::MAX).unwrap()
}

/// A week's time window at 1% for 10,000 items, refreshing or in the `NOREFRESH` mode.
fn week_filter(refresh: bool) -> Rotating {
    let spec = FilterSpec {
        error: 0.01,
        capacity: 10_000,
        growth: Growth::Scaling(2),
        window: Window::Time {
            seconds: WEEK / 1000,
        },
        refresh,
    };
    Rotating::new(&spec, 0x5eed, u64::MAX).unwrap()
}

const HOUR: u64 = 3_600_000;
const DAY: u64 = 24 * HOUR;
const WEEK: u64 = 7 * DAY;

/// The days (from 0) on which a crawler that meets a URL every day and fetches it when the
/// filter's add answers "added" fetches it, over `days`, the adds made at noon by `add`.
fn fetch_days(days: u64, mut add: impl FnMut(&[u8], u64) -> AddOutcome) -> Vec<u64> {
    let start = 1_700_000_000_000u64;
    (0..days)
        .filter(|day| {
            add(b"https://example.com/daily", start + day * DAY + 12 * HOUR) == AddOutcome::Added
        })
        .collect()
}

fn item(tag: &str, i: u64) -> Vec<u8> {
    format!("{tag}:{i}").into_bytes()
}

/// Never-added items that read present, of `probes` asked at `now`.
fn false_positives(f: &Rotating, tag: &str, probes: u64, now: u64) -> u64 {
    (0..probes)
        .filter(|&p| f.contains(&item(tag, p), now))
        .count() as u64
}

/// The most a rate measured as `hits` of `trials` may be when the true rate is `rate`: 3.3
/// standard deviations above it (a one-sided 99.95% bound).
fn bound(rate: f64, trials: u64) -> f64 {
    rate + 3.3 * (rate * (1.0 - rate) / trials as f64).sqrt()
}

/// A count window fed `adds` items, measured at the worst moment of every generation (the
/// newest one add short of full: `r + 1` full generations) and midway: every item of the last
/// `capacity` reads present; the rate over never-added items stays under the request at every
/// moment (each within its sampling bound, the worst moments pooled under it outright); items
/// past window + slack read present no more often than that.
fn sweep_count_window(error: f64, capacity: u64, adds: u64, probes: u64) {
    let mut f = count_filter(error, capacity);
    let g = f.generation_items;
    let (mut worst_hits, mut worst_trials) = (0, 0);
    let (mut stale_hits, mut stale_trials) = (0, 0);
    for i in 0..adds {
        f.add(&item("in", i), 0, u64::MAX, true).unwrap();
        let n = i + 1;
        let at_worst = n % g == g - 1;
        if at_worst || n % g == g / 2 {
            for j in n.saturating_sub(capacity)..n {
                assert!(f.contains(&item("in", j), 0), "item {j} missing after {n}");
            }
            let hits = false_positives(&f, &format!("never{n}"), probes, 0);
            assert!(
                (hits as f64 / probes as f64) <= bound(error, probes),
                "{hits} of {probes} after {n}"
            );
            if at_worst && n > capacity {
                worst_hits += hits;
                worst_trials += probes;
            }
            let old = n.saturating_sub(capacity + f.slack());
            for j in old.saturating_sub(probes / 10)..old {
                stale_hits += u64::from(f.contains(&item("in", j), 0));
                stale_trials += 1;
            }
        }
    }
    let worst = worst_hits as f64 / worst_trials as f64;
    let bits = f.memory_usage() as f64 * 8.0 / capacity as f64;
    eprintln!(
        "count window {error} x {capacity}: rate at the worst moments {worst:.5} \
         ({worst_hits}/{worst_trials}), computed {:.5}; items past the slack read present \
         {stale_hits}/{stale_trials}; {bits:.2} bits per window item",
        Design::for_error(error).unwrap().worst_rate()
    );
    assert!(worst <= error, "worst moments measured {worst}");
    assert!(
        stale_hits as f64 <= (stale_trials as f64 * error * 1.5).max(3.0),
        "{stale_hits}/{stale_trials}"
    );
}

#[test]
fn count_window_one_percent_at_every_moment() {
    sweep_count_window(0.01, 200_000, 1_000_000, 40_000);
}

#[test]
fn count_window_a_tenth_of_a_percent_at_every_moment() {
    sweep_count_window(0.001, 200_000, 700_000, 200_000);
}

#[test]
fn memory_and_slack_meet_the_targets() {
    for (error, bits) in [(0.01, 17.5), (0.001, 25.0)] {
        let f = count_filter(error, 1_000_000);
        let measured = f.memory_usage() as f64 * 8.0 / 1e6;
        assert!(measured <= bits, "{error}: {measured} bits per item");
        assert!(
            f.slack() * 8 <= f.base().window(),
            "slack {} of {}",
            f.slack(),
            f.base().window()
        );
        let design = Design::for_error(error).unwrap();
        assert!(design.worst_rate() <= HEADROOM * error * 1.0001);
    }
}

#[test]
fn a_full_count_window_counts_its_capacity() {
    let mut f = count_filter(0.01, 10_000);
    for i in 0..25_000 {
        f.add(&item("in", i), 0, u64::MAX, true).unwrap();
        // Below capacity: every add counts but one that was a false positive in the newest
        // generation (it wrote nothing).
        let card = f.card(0);
        assert!(card <= (i + 1).min(10_000) && card as f64 >= 0.99 * (i + 1).min(10_000) as f64);
    }
    assert_eq!(f.card(0), 10_000);
}

#[test]
fn re_adding_refreshes_an_item_and_answers_present() {
    let mut f = count_filter(0.01, 1000);
    assert_eq!(f.add(b"kept", 0, u64::MAX, true), Ok(AddOutcome::Added));
    assert_eq!(f.add(b"kept", 0, u64::MAX, true), Ok(AddOutcome::Present));
    let clock = f.base().clock();
    for i in 0..5000 {
        f.add(&item("in", i), 0, u64::MAX, true).unwrap();
        if i % 500 == 0 {
            f.add(b"kept", 0, u64::MAX, true).unwrap();
        }
    }
    assert!(f.contains(b"kept", 0));
    // The re-add within the newest generation wrote nothing.
    assert_eq!(clock, 1);
}

/// The re-fetch schedule: with `NOREFRESH` (the filter's mode, or the call's), a URL met
/// every day is due on day 0 and again once the window and part of the slack have passed
/// (7 to 8 days after its fetch), every time; a refreshing window keeps it forever.
#[test]
fn norefresh_makes_a_daily_url_due_again_after_a_week() {
    let mut mode = week_filter(false);
    let schedule = fetch_days(40, |url, now| mode.add(url, now, u64::MAX, true).unwrap());
    for pair in schedule.windows(2) {
        let gap = pair[1] - pair[0];
        assert!((7..=8).contains(&gap), "{schedule:?}");
    }
    assert_eq!(schedule[0], 0);
    assert!(schedule.len() >= 5, "{schedule:?}");
    let mut call = week_filter(true);
    let by_call = fetch_days(40, |url, now| call.add(url, now, u64::MAX, false).unwrap());
    assert_eq!(by_call, schedule);
    let mut refreshing = week_filter(true);
    let never = fetch_days(40, |url, now| {
        refreshing.add(url, now, u64::MAX, true).unwrap()
    });
    assert_eq!(never, [0]);
}

/// A non-refreshing add of a held item changes nothing: no bit, no count, no clock.
#[test]
fn a_norefresh_add_of_a_held_item_changes_nothing() {
    let now = 1_700_000_000_000u64;
    for mut f in [week_filter(false), count_filter(0.01, 1000)] {
        f.refresh = false;
        assert_eq!(f.add(b"x", now, u64::MAX, true), Ok(AddOutcome::Added));
        let before = f.clone();
        assert_eq!(
            f.add(b"x", now + DAY, u64::MAX, true),
            Ok(AddOutcome::Present)
        );
        let items: Vec<&[u8]> = vec![b"x"; 40];
        f.add_many(items.into_iter(), now + 2 * DAY, u64::MAX, true, |r| {
            assert_eq!(r, Ok(AddOutcome::Present));
            true
        });
        assert_eq!(f, before);
    }
}

#[test]
fn time_window_keeps_the_window_and_forgets_after_the_slack() {
    let mut f = time_filter(0.01, 10_000, 10, Growth::Scaling(2));
    let start = 1_700_000_000_000u64;
    for i in 0..1000 {
        f.add(&item("old", i), start + i, u64::MAX, true).unwrap();
    }
    for ms in (0..10_000).step_by(500) {
        f.add(&item("tick", ms), start + ms, u64::MAX, true)
            .unwrap();
        assert!((0..1000).all(|i| f.contains(&item("old", i), start + ms)));
    }
    let gone = start + 1000 + 10_000 + f.slack();
    let remembered = (0..1000)
        .filter(|&i| f.contains(&item("old", i), gone))
        .count();
    assert!(remembered <= 30, "{remembered} of 1000 still present");
    // Reads never write.
    let before = f.clone();
    let _ = f.contains(b"x", gone + 1_000_000);
    assert_eq!(f, before);
}

#[test]
fn time_window_at_its_capacity_holds_the_rate_and_its_memory() {
    let (capacity, seconds) = (100_000u64, 100);
    let mut f = time_filter(0.01, capacity, seconds, Growth::Scaling(2));
    let steady = f.memory_usage();
    let start = 1_700_000_000_000u64;
    let step = seconds * 1000 * 1000 / capacity; // microseconds between adds
    let (mut hits, mut trials) = (0, 0);
    for i in 0..3 * capacity {
        let now = start + i * step / 1000;
        f.add(&item("in", i), now, u64::MAX, true).unwrap();
        if (i + 1) % (capacity / 4) == 0 {
            let h = false_positives(&f, &format!("never{i}"), 40_000, now);
            assert!(h as f64 / 40_000.0 <= bound(0.01, 40_000), "{h} after {i}");
            hits += h;
            trials += 40_000;
        }
    }
    let rate = hits as f64 / trials as f64;
    eprintln!(
        "time window at capacity: rate {rate:.5}, memory {} of steady {steady}",
        f.memory_usage()
    );
    assert!(rate <= 0.01);
    assert!(f.memory_usage() as f64 <= steady as f64 * 1.1);
}

/// A time window fed `times` its capacity for two windows, then at its capacity: the rate
/// holds at every checkpoint, the memory grows, and it goes back once the burst ages out.
fn burst(times: u64) -> (u64, u64, u64) {
    let (capacity, seconds) = (20_000u64, 100);
    let mut f = time_filter(0.01, capacity, seconds, Growth::Scaling(2));
    let steady = f.memory_usage();
    let start = 1_700_000_000_000u64;
    let window = seconds * 1000;
    let (mut hits, mut trials) = (0, 0);
    let mut peak = 0;
    let mut added = 0u64;
    for ms in (0..4 * window).step_by(100) {
        let rate = if ms < 2 * window { times } else { 1 };
        let per_step = capacity * rate * 100 / window;
        for _ in 0..per_step {
            f.add(&item("in", added), start + ms, u64::MAX, true)
                .unwrap();
            added += 1;
        }
        peak = peak.max(f.memory_usage());
        if ms % (window / 8) == 0 {
            let h = false_positives(&f, &format!("never{ms}"), 20_000, start + ms);
            assert!(
                h as f64 / 20_000.0 <= bound(0.01, 20_000),
                "x{times}: {h} at {ms}"
            );
            hits += h;
            trials += 20_000;
        }
    }
    let rate = hits as f64 / trials as f64;
    eprintln!(
        "burst x{times}: rate {rate:.5}, peak memory {peak} ({:.2}x steady), after {}",
        peak as f64 / steady as f64,
        f.memory_usage()
    );
    assert!(rate <= 0.01, "x{times}: {rate}");
    (steady, peak, f.memory_usage())
}

#[test]
fn bursts_grow_hold_the_rate_and_give_the_memory_back() {
    for times in [2, 5] {
        let (steady, peak, after) = burst(times);
        assert!(peak > steady, "x{times} grew nothing");
        assert!(
            after as f64 <= steady as f64 * 1.1,
            "x{times}: {after} after, {steady}"
        );
    }
}

#[test]
fn nonscaling_time_window_refuses_without_changing_anything() {
    let mut f = time_filter(0.01, 1000, 10, Growth::Fixed);
    let now = 1_700_000_000_000u64;
    let mut i = 0;
    let refused = loop {
        match f.add(&item("in", i), now, u64::MAX, true) {
            Ok(_) => i += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(refused, FilterError::WindowFull);
    // One generation took its share of the window and more (the rest of the window is empty),
    // as much as its fixed memory holds at the rate.
    assert!(i >= f.generation_items, "took only {i}");
    let before = f.clone();
    assert_eq!(
        f.add(b"more", now, u64::MAX, true),
        Err(FilterError::WindowFull)
    );
    assert_eq!(f, before);
    // A window later, it takes items again.
    assert!(f.add(b"more", now + 11_000, u64::MAX, true).is_ok());
}

#[test]
fn the_memory_limit_refuses_a_burst_without_changing_anything() {
    let mut f = time_filter(0.01, 1000, 10, Growth::Scaling(2));
    let limit = f.bit_bytes();
    let now = 1_700_000_000_000u64;
    let mut i = 0;
    let refused = loop {
        match f.add(&item("in", i), now, limit, true) {
            Ok(_) => i += 1,
            Err(e) => break e,
        }
    };
    assert!(
        matches!(refused, FilterError::TooLarge { .. }),
        "{refused:?}"
    );
    let before = f.clone();
    assert!(f.add(b"more", now, limit, true).is_err());
    assert_eq!(f, before);
}

#[test]
fn a_clock_far_ahead_forgets_everything_and_the_filter_goes_on() {
    let mut f = time_filter(0.01, 1000, 10, Growth::Scaling(2));
    let now = 1_700_000_000_000u64;
    f.add(b"a", now, u64::MAX, true).unwrap();
    let far = now + 1_000_000_000;
    assert!(!f.contains(b"a", far));
    assert_eq!(f.add(b"b", far, u64::MAX, true), Ok(AddOutcome::Added));
    assert!(f.contains(b"b", far));
    // A read at an earlier server time sees the filter's clock: nothing comes back.
    assert!(!f.contains(b"a", now));
    assert!(f.contains(b"b", now));
}

#[test]
fn batch_paths_answer_exactly_as_single_ones() {
    let mut single = time_filter(0.01, 5000, 10, Growth::Scaling(2));
    let mut batch = single.clone();
    let now = 1_700_000_000_000u64;
    let items: Vec<Vec<u8>> = (0..40_000).map(|i| item("in", i % 30_000)).collect();
    for (round, chunk) in items.chunks(1000).enumerate() {
        let at = now + round as u64 * 700;
        let want: Vec<_> = chunk
            .iter()
            .map(|i| single.add(i, at, u64::MAX, true))
            .collect();
        let mut got = Vec::new();
        batch.add_many(chunk.iter().map(|i| &i[..]), at, u64::MAX, true, |r| {
            got.push(r);
            true
        });
        assert_eq!(got, want);
        assert_eq!(batch, single);
        let mut answers = Vec::new();
        let probes: Vec<Vec<u8>> = (0..2000).map(|i| item("in", i * 17)).collect();
        batch.contains_many(probes.iter().map(|p| &p[..]), at, |a| answers.push(a));
        let want: Vec<bool> = probes.iter().map(|p| single.contains(p, at)).collect();
        assert_eq!(answers, want);
    }
    assert!(single.has_extras, "the test should have reached a burst");
}

#[test]
fn both_formats_round_trip_with_extras() {
    let mut f = time_filter(0.01, 2000, 10, Growth::Scaling(2));
    let now = 1_700_000_000_000u64;
    for i in 0..9000 {
        f.add(&item("in", i), now + i / 3, u64::MAX, true).unwrap();
    }
    assert!(f.has_extras);
    let filter = Filter::from(f);
    let mut fields: Vec<Field> = Vec::new();
    rdb::encode(&filter, &mut fields);
    let back = rdb::decode(&mut FieldSlice(&fields)).unwrap();
    assert_eq!(back, filter);

    let header = scandump::header(&filter);
    let mut copy = scandump::filter_from_header(&header, 0, u64::MAX).unwrap();
    for (next, data) in scandump::chunks(&filter) {
        scandump::load_chunk(&mut copy, next, &data).unwrap();
    }
    assert_eq!(copy, filter);
    // The NOREFRESH mode travels in both.
    let Filter::Rotating(mut quiet) = filter.clone() else {
        unreachable!()
    };
    quiet.refresh = false;
    let quiet = Filter::Rotating(quiet);
    let mut fields: Vec<Field> = Vec::new();
    rdb::encode(&quiet, &mut fields);
    assert_eq!(rdb::decode(&mut FieldSlice(&fields)).unwrap(), quiet);
    let mut copy = scandump::filter_from_header(&scandump::header(&quiet), 0, u64::MAX).unwrap();
    for (next, data) in scandump::chunks(&quiet) {
        scandump::load_chunk(&mut copy, next, &data).unwrap();
    }
    assert_eq!(copy, quiet);
    assert_ne!(copy, filter);
    // The per-filter limit refuses the header before allocating.
    let refused = scandump::filter_from_header(&header, 0, 1000);
    assert!(matches!(refused, Err(scandump::DumpError::TooLarge { .. })));
}

#[test]
fn every_truncation_of_a_header_is_refused() {
    let mut f = time_filter(0.01, 2000, 10, Growth::Scaling(2));
    for i in 0..9000 {
        f.add(&item("in", i), 1_700_000_000_000 + i / 3, u64::MAX, true)
            .unwrap();
    }
    let header = scandump::header(&Filter::from(f));
    for len in 0..header.len() {
        assert!(scandump::filter_from_header(&header[..len], 0, u64::MAX).is_err());
    }
}

/// The forgetting curve across the slack, the figures docs/window-filters.md quotes: a week's
/// window (generations of 21 h) fed 200,000 items at even times over a week, each read once
/// it is a week and `x` old, `x` spread evenly over the slack: the share still read present
/// is the share whose generation has not left yet, `1 − x / 21 h` (plus the rate), in every
/// 3-hour band; past the slack, only the rate.
#[test]
fn forgetting_curve_across_the_slack() {
    let mut f = Rotating::new(
        &FilterSpec {
            capacity: 200_000,
            ..spec_of(&week_filter(true))
        },
        7,
        u64::MAX,
    )
    .unwrap();
    let start = 1_700_000_000_000u64;
    let n = 200_000u64;
    let at = |i: u64| start + i * WEEK / n;
    for i in 0..n {
        f.add(&item("u", i), at(i), u64::MAX, true).unwrap();
    }
    let span = f.slack();
    assert_eq!(span, 21 * HOUR);
    let mut bands = [(0u64, 0u64); 7];
    let mut gone = 0;
    for i in 0..n {
        let past = crate::hash::mix64(i) % span;
        let band = &mut bands[(past / (3 * HOUR)) as usize];
        band.0 += u64::from(f.contains(&item("u", i), at(i) + WEEK + past));
        band.1 += 1;
        gone += u64::from(f.contains(&item("u", i), at(i) + WEEK + span));
    }
    let mut table = String::from("| past the window | still present |\n|---|---|\n");
    for (b, &(present, total)) in bands.iter().enumerate() {
        let share = present as f64 / total as f64;
        let middle = (b as f64 + 0.5) * 3.0 / 21.0;
        table += &format!("| {}-{} h | {:.0}% |\n", 3 * b, 3 * b + 3, 100.0 * share);
        assert!(
            (share - (1.0 - middle)).abs() < 0.03,
            "band {b}: {share} against {}",
            1.0 - middle
        );
    }
    eprintln!("{table}");
    assert!(
        gone as f64 / n as f64 <= 0.01,
        "{gone} of {n} past the slack"
    );
}

/// The spec a filter was made from.
fn spec_of(f: &Rotating) -> FilterSpec {
    FilterSpec {
        error: f.base.error,
        capacity: f.base.capacity,
        growth: f.base.growth,
        window: f.base.kind,
        refresh: f.refresh,
    }
}
