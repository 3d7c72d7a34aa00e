//! Core micro-benchmarks (`make bench-core`): `Chain::add` and `Chain::contains` on a filter
//! that fits in cache (~1 MiB) and on one far beyond every cache (~1 GiB, 8.6e9 bits); a time
//! window's lookup with and without the read's note for caching clients.
//!
//! Items are 32-byte URLs, like the ones `make bench` sends. Lookups run on a filter about as
//! dense as a full one (half its bits set at random), so an absent item stops after about two
//! probes as it would in a filter at capacity; the present items were really added. Adds start
//! from an empty filter, which is cleared (untimed) whenever the pool of new items runs out.
//!
//! Each operation runs one item at a time (`contains`, `add`) and in batches of 100
//! (`contains_many`, `add_many`, which hash ahead and prefetch): every op is handed consecutive
//! slices of `batch` items from the same pools, and criterion reports items per second.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use rsbloom_core::{Chain, FilterSpec, Growth, Window};

const ITEM_LEN: usize = 32;
type Item = [u8; ITEM_LEN];

/// An operation under test, applied to a slice of `batch` items.
struct Op {
    name: &'static str,
    batch: usize,
    run: fn(&mut Chain, &[Item]),
}

fn contains_one(chain: &mut Chain, items: &[Item]) {
    black_box(chain.contains(black_box(&items[0])));
}

fn add_one(chain: &mut Chain, items: &[Item]) {
    black_box(chain.add(black_box(&items[0]), u64::MAX)).expect("add");
}

/// Items per batch, as in one `BF.MADD` / `BF.MEXISTS` of `make bench`.
const BATCH: usize = 100;

fn contains_batch(chain: &mut Chain, items: &[Item]) {
    chain.contains_many(items.iter().map(|i| &i[..]), |present| {
        black_box(present);
    });
}

fn add_batch(chain: &mut Chain, items: &[Item]) {
    chain.add_many(items.iter().map(|i| &i[..]), u64::MAX, |outcome| {
        black_box(outcome).expect("add");
        true
    });
}

/// Run on present and on absent items of a dense filter.
const LOOKUPS: &[Op] = &[
    Op {
        name: "contains",
        batch: 1,
        run: contains_one,
    },
    Op {
        name: "contains_many",
        batch: BATCH,
        run: contains_batch,
    },
];

/// Run on new items of an initially empty filter.
const INSERTS: &[Op] = &[
    Op {
        name: "add",
        batch: 1,
        run: add_one,
    },
    Op {
        name: "add_many",
        batch: BATCH,
        run: add_batch,
    },
];

struct Scenario {
    name: &'static str,
    /// 0.01 gives a first link at 0.005: 11.03 bits per item.
    capacity: u64,
    /// Items added to the dense filter for the present-item lookups, and as many absent ones.
    lookup_pool: usize,
    /// New items per pass of the add benchmark; the filter is cleared between passes.
    add_pool: usize,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "in_cache_1MiB",
        capacity: 760_000,
        lookup_pool: 1 << 16,
        add_pool: 380_000,
    },
    Scenario {
        name: "out_of_cache_1GiB",
        capacity: 780_000_000,
        lookup_pool: 1 << 20,
        add_pool: 1 << 22,
    },
];

/// `prefix` (20 bytes) followed by `i` as 12 digits.
fn items(prefix: &[u8; 20], count: usize) -> Vec<Item> {
    (0..count)
        .map(|i| {
            let mut item = [0u8; ITEM_LEN];
            item[..20].copy_from_slice(prefix);
            item[20..].copy_from_slice(format!("{i:012}").as_bytes());
            item
        })
        .collect()
}

fn new_chain(capacity: u64) -> Chain {
    let spec = FilterSpec {
        error: 0.01,
        capacity,
        growth: Growth::Scaling(2),
        window: Window::Unbounded,
        refresh: true,
    };
    Chain::new(&spec, 0x5eed, u64::MAX).expect("chain")
}

/// Sets each bit with probability 1/2 (splitmix64), like a filter filled to capacity, without
/// adding hundreds of millions of items. Also faults every page in before anything is timed.
fn make_dense(chain: &mut Chain) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for words in chain.bit_arrays_mut() {
        for word in words {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *word = z ^ (z >> 31);
        }
    }
}

/// Times `iters` batches of `op` over consecutive slices of `pool`, wrapping around; `on_wrap`
/// runs untimed before each new pass.
fn drive(
    chain: &mut Chain,
    pool: &[Item],
    cursor: &mut usize,
    op: &Op,
    iters: u64,
    on_wrap: fn(&mut Chain),
) -> Duration {
    let usable = pool.len() - pool.len() % op.batch;
    let mut elapsed = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        if *cursor == usable {
            on_wrap(chain);
            *cursor = 0;
        }
        let batches = (left as usize).min((usable - *cursor) / op.batch);
        let slice = &pool[*cursor..*cursor + batches * op.batch];
        let start = Instant::now();
        for batch in slice.chunks_exact(op.batch) {
            (op.run)(chain, batch);
        }
        elapsed += start.elapsed();
        *cursor += batches * op.batch;
        left -= batches as u64;
    }
    elapsed
}

fn bench_op(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: String,
    chain: &mut Chain,
    pool: &[Item],
    op: &Op,
    on_wrap: fn(&mut Chain),
) {
    group.throughput(Throughput::Elements(op.batch as u64));
    let mut cursor = 0;
    group.bench_function(id, |b| {
        b.iter_custom(|iters| drive(chain, pool, &mut cursor, op, iters, on_wrap))
    });
}

fn core_benches(c: &mut Criterion) {
    for scenario in SCENARIOS {
        let mut chain = new_chain(scenario.capacity);
        eprintln!(
            "{}: {} bytes of bits, {} hashes",
            scenario.name,
            chain.bit_bytes(),
            chain.links()[0].hashes
        );
        make_dense(&mut chain);
        let present = items(b"https://example.com/", scenario.lookup_pool);
        for item in &present {
            chain.add(item, u64::MAX).expect("add");
        }
        let absent = items(b"https://example.org/", scenario.lookup_pool);

        let mut group = c.benchmark_group(scenario.name);
        group
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5))
            .sample_size(30);
        let keep = |_: &mut Chain| {};
        for op in LOOKUPS {
            let present_id = format!("{}_present/{}", op.name, op.batch);
            bench_op(&mut group, present_id, &mut chain, &present, op, keep);
            let absent_id = format!("{}_absent/{}", op.name, op.batch);
            bench_op(&mut group, absent_id, &mut chain, &absent, op, keep);
        }
        drop((present, absent));

        chain.clear();
        let new_items = items(b"https://example.net/", scenario.add_pool);
        for op in INSERTS {
            let id = format!("{}_new/{}", op.name, op.batch);
            bench_op(&mut group, id, &mut chain, &new_items, op, Chain::clear);
        }
        group.finish();
    }
}

/// A time window's lookup, alone and with the note a read takes for caching clients (the
/// moment the window next forgets, remembered once per moment): the second figure's excess is
/// what client-side-caching support costs a read.
fn window_benches(c: &mut Criterion) {
    use rsbloom_core::window::rotating::Rotating;
    let spec = FilterSpec {
        error: 0.01,
        capacity: 1_000_000,
        growth: Growth::Scaling(2),
        window: Window::Time { seconds: 3600 },
        refresh: true,
    };
    let mut window = Rotating::new(&spec, 7, u64::MAX).expect("a window");
    let start = 1_700_000_000_000u64;
    let present = items(b"https://example.com/", 1_000_000);
    for (i, item) in present.iter().enumerate() {
        window
            .add(item, start + i as u64 * 3600, u64::MAX, true)
            .expect("add");
    }
    let now = start + 3_600_000_000;
    let probes = items(b"https://example.org/", 100_000);
    let mut group = c.benchmark_group("time_window_1M");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
        .throughput(Throughput::Elements(probes.len() as u64));
    group.bench_function("contains", |b| {
        b.iter(|| {
            probes
                .iter()
                .filter(|p| window.contains(&p[..], now))
                .count()
        })
    });
    group.bench_function("contains_and_note", |b| {
        b.iter(|| {
            probes
                .iter()
                .filter(|p| {
                    black_box(window.note_read(now));
                    window.contains(&p[..], now)
                })
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, core_benches, window_benches);
criterion_main!(benches);
