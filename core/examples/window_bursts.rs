//! The memory of a time window fed at 0.5, 1, 2 and 5 times its rated capacity for two windows,
//! then at its capacity for two more: the steady state, the peak, the memory once the burst
//! has aged out, and the false-positive rate measured along the way (the docs' sizing table;
//! `make bench` writes it to bench/BURSTS.md).
//! `cargo run --release -p rsbloom-core --example window_bursts [capacity]`

use rsbloom_core::window::rotating::Rotating;
use rsbloom_core::{FilterSpec, Growth, Window};

fn main() {
    let capacity: u64 = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("a capacity"));
    let seconds = 600;
    let window = seconds * 1000;
    println!(
        "Time window `WINDOW {seconds}` of capacity {capacity} at 0.01 (EXPANSION 2), fed \
         evenly for two windows at the rate shown, then two windows at its capacity.\n"
    );
    println!("| fed at | steady (bits per item of capacity) | peak | peak / steady | after | worst rate | mean rate |");
    println!("|---|---|---|---|---|---|---|");
    for times in [0.5, 1.0, 2.0, 5.0] {
        let spec = FilterSpec {
            error: 0.01,
            capacity,
            growth: Growth::Scaling(2),
            window: Window::Time { seconds },
            refresh: true,
        };
        let mut f = Rotating::new(&spec, 7, u64::MAX).expect("a filter");
        let steady = f.memory_usage();
        let start = 1_700_000_000_000u64;
        let (mut peak, mut added, mut worst, mut sum, mut checks) = (0, 0u64, 0f64, 0f64, 0);
        let step = 1000; // ms
        for ms in (0..4 * window).step_by(step as usize) {
            let rate = if ms < 2 * window { times } else { 1.0 };
            let due = ((ms + step) as f64 * rate * capacity as f64 / window as f64) as u64;
            let target = if ms < 2 * window {
                due
            } else {
                (2.0 * times * capacity as f64) as u64
                    + (ms + step - 2 * window) * capacity / window
            };
            while added < target {
                let item = format!("in:{added}");
                if let Err(e) = f.add(item.as_bytes(), start + ms, u64::MAX, true) {
                    panic!("the add of {item} at {ms} ms was refused: {e:?}");
                }
                added += 1;
            }
            peak = peak.max(f.memory_usage());
            if ms % (window / 8) == 0 {
                let probes = 100_000;
                let hits = (0..probes)
                    .filter(|p| f.contains(format!("never:{ms}:{p}").as_bytes(), start + ms))
                    .count();
                let rate = hits as f64 / probes as f64;
                worst = worst.max(rate);
                sum += rate;
                checks += 1;
            }
        }
        let bits = |bytes: u64| bytes as f64 * 8.0 / capacity as f64;
        println!(
            "| {times}x | {:.2} | {:.2} | {:.2}x | {:.2} | {:.4} | {:.4} |",
            bits(steady),
            bits(peak),
            peak as f64 / steady as f64,
            bits(f.memory_usage()),
            worst,
            sum / f64::from(checks)
        );
    }
}
