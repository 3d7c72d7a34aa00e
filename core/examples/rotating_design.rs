//! Prints the rotating window layout's design search, the table the docs quote: for each error
//! rate, the best `k` and bits per window item for every `r` tried, and the design chosen.
//! `cargo run --release -p rsbloom-core --example rotating_design`

use rsbloom_core::window::rotating::design::{
    generation_rate, ArrayDesign, Design, MAX_GENERATIONS, MIN_GENERATIONS,
};

fn main() {
    println!("| request | r | k | items per block | bits per window item | slack | worst moment |");
    println!("|---|---|---|---|---|---|---|");
    for error in [0.1, 0.05, 0.01, 0.005, 0.001, 1e-4, 1e-5, 1e-6] {
        let chosen = Design::for_error(error).expect("a design");
        let shown = [MIN_GENERATIONS, 10, 12, MAX_GENERATIONS];
        for r in (MIN_GENERATIONS..=MAX_GENERATIONS)
            .filter(|&r| shown.contains(&r) || r == chosen.generations)
        {
            let Some(array) = ArrayDesign::for_rate(generation_rate(error, r)) else {
                continue;
            };
            let d = Design {
                generations: r,
                array,
            };
            let mark = if d == chosen { " (chosen)" } else { "" };
            println!(
                "| {error} | {r}{mark} | {} | {:.2} | {:.2} | 1/{r} | {:.3e} |",
                d.array.hashes,
                d.array.per_block,
                d.bits_per_window_item(),
                d.worst_rate()
            );
        }
    }
}
