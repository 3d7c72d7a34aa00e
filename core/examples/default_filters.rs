//! A crawler's filter as `BF.ADD` creates it (RedisBloom's defaults: 1%, capacity 100,
//! expansion 2), fed 2,000,000 URLs, then asked about 1,000,000 it never saw; 20 runs with
//! random seeds: `cargo run --release -p rsbloom-core --example default_filters [runs] [urls]`.

use rsbloom_core::bloom::rates::default_filter_run;

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<u64>().expect("a number"));
    let runs = args.next().unwrap_or(20);
    let urls = args.next().unwrap_or(2_000_000);
    let lookups = 1_000_000;
    let mut worst = 0f64;
    for run in 0..runs {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("a clock after 1970")
            .as_nanos() as u64
            ^ run;
        let m = default_filter_run(run, seed, urls, lookups);
        worst = worst.max(m.rate());
        println!(
            "run {run:2}: {} of {lookups} never-added URLs read present: {:.4}%",
            m.hits,
            m.rate() * 100.0
        );
    }
    println!("worst of {runs} runs: {:.4}% (request 1%)", worst * 100.0);
}
