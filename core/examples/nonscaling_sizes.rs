//! The bit arrays of NONSCALING filters, rsbloom against RedisBloom, for the README's table:
//! `cargo run --release --example nonscaling_sizes`.
//!
//! rsbloom sizes a NONSCALING filter's one link for 90% of the requested rate with the fewest
//! bits that honour it; RedisBloom uses `bits = n·|ln p|/ln²2`, `k = ceil(ln 2 · bits/n)`, which
//! lands above the request. Both round up to whole 64-bit words.

use rsbloom_core::sizing::{self, classic_fpr};
use rsbloom_core::{Chain, FilterSpec, Growth, Window};

fn main() {
    println!("| error rate | capacity | rsbloom bytes | RedisBloom bytes | rsbloom larger by | expected rate at capacity / request, rsbloom / RedisBloom |");
    println!("|---|---:|---:|---:|---:|---|");
    for error in [0.5, 0.1, 0.01, 0.001, 0.0001] {
        for capacity in [100u64, 10_000, 1_000_000, 100_000_000] {
            let spec = FilterSpec {
                error,
                capacity,
                growth: Growth::Fixed,
                window: Window::Unbounded,
                refresh: true,
            };
            let ours = Chain::new(&spec, 0, u64::MAX).expect("a filter");
            let link = &ours.links()[0];
            let theirs = sizing::redisbloom(capacity, error).expect("RedisBloom's geometry");
            let rate = |bits, hashes| classic_fpr(bits, hashes, capacity);
            println!(
                "| {error} | {capacity} | {} | {} | {:+.1}% | {:.4} / {:.4} |",
                link.byte_count(),
                theirs.bytes(),
                (link.byte_count() as f64 / theirs.bytes() as f64 - 1.0) * 100.0,
                rate(link.bit_count(), link.hashes) / error,
                rate(theirs.bits, theirs.hashes) / error,
            );
        }
    }
}
