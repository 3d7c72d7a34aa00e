//! The false-positive rate delivered against the rate asked for, for the docs' table:
//! `cargo run --release -p rsbloom-core --example rate_table [filters] [lookups]`.
//!
//! Every cell builds `filters` filters (5 by default) with random seeds, adds their capacity of
//! items (a fixed filter, NONSCALING) or ten times it (a scaling filter, expansion 2, which then
//! holds four or five links), and looks up `lookups` never-added items in each (100,000 by
//! default). A cell passes when the false positives stay within the 99.9% Poisson bound of the
//! requested rate over those lookups. `make test` runs the same measurement at a smaller size
//! with fixed seeds (`rate_table` in `core/src/bloom/chain.rs`'s tests).

use rsbloom_core::bloom::rates::{measure, Cell, CAPACITIES, ERROR_RATES};
use rsbloom_core::Growth;

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<u64>().expect("a number"));
    let filters = args.next().unwrap_or(5);
    let lookups = args.next().unwrap_or(100_000);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_nanos() as u64;
    println!(
        "{filters} filters per cell, {lookups} lookups each, seeds from {seed:#x}; \
         measured rate / requested rate, `over` past the 99.9% Poisson bound"
    );
    let mut over = 0;
    for (name, growth) in [("fixed", Growth::Fixed), ("scaling", Growth::Scaling(2))] {
        println!("\n{name}\n");
        let head: Vec<String> = CAPACITIES.iter().map(u64::to_string).collect();
        println!("| error rate | {} |", head.join(" | "));
        println!("|---|{}", "---:|".repeat(CAPACITIES.len()));
        for error in ERROR_RATES {
            let cells: Vec<String> = CAPACITIES
                .iter()
                .map(|&capacity| {
                    let cell = Cell {
                        error,
                        capacity,
                        growth,
                    };
                    let m = measure(&cell, filters, lookups, seed);
                    over += usize::from(!m.within_bound());
                    let verdict = if m.within_bound() { "" } else { " over" };
                    format!("{:.2}{verdict}", m.rate() / error)
                })
                .collect();
            println!("| {error:e} | {} |", cells.join(" | "));
        }
    }
    println!("\n{over} cells over the bound");
}
