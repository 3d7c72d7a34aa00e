//! A growing filter's widths, from its error rate and starting capacity.
//!
//! A lookup compares the item with the entries of one cell. An entry added when the filter had
//! `2^g` chunks keeps `W` remainder bits then, and one fewer at every later level, so it
//! matches a stranger with odds `2^-(W - age)`; entries of age `a` are about `2^-(a+1)` of all
//! (each level doubles the items), so each level's entries add the same `2^-(W+1)` per entry
//! of a cell, and after `G` levels of growth an absent item matches with odds about
//! `density × (G + 1) / 2 × 2^-W`, `density` being the entries of a cell (`PER_CHUNK / 2^q`,
//! about 1.05 as measured). `W` is chosen for [`PLANNED_LEVELS`] levels
//! of growth, a million-fold: from 100 items to 100 million. A filter that grows further keeps
//! answering, its rate rising by about `1 / (G + 1)` per level past them.

use crate::growing::chunk::Shape;

/// Adds between two splits: a chunk holds this many entries on average (between half and
/// twice as many, by where the split pointer is).
pub(crate) const PER_CHUNK: u64 = 192;

/// `q`: 256 cells a chunk, for [`PER_CHUNK`] entries: 0.75 an occupied cell on average, about
/// the density that costs least (header bits against remainder bits).
pub(crate) const CELL_BITS: u16 = 8;

/// Levels of growth the remainder is sized for (a million-fold).
pub(crate) const PLANNED_LEVELS: u32 = 20;

/// The most remainder bits a slot holds (slots of up to 32 bits).
pub(crate) const MAX_REMAINDER_BITS: u32 = 31;

/// The entries of a cell a lookup meets, as measured: [`PER_CHUNK`] over the cells is 0.75,
/// and the chunks not yet split at a level hold twice what the split ones do, the void
/// entries' copies add some: the rate measured at every doubling from 100 to 1.6M items
/// (`tests.rs`, 100,000 absent items each) fits 1.05 × the aging sum × 2^-W.
fn density() -> f64 {
    PER_CHUNK as f64 / f64::from(1u32 << CELL_BITS) * 1.4
}

/// The widths for `error`: None when it would need more than [`MAX_REMAINDER_BITS`] (a rate
/// under 5.2e-9).
pub(crate) fn shape_for(error: f64) -> Option<Shape> {
    let aging = f64::from(PLANNED_LEVELS + 1) / 2.0;
    let bits = (density() * aging / error).log2().ceil().max(1.0);
    (bits <= f64::from(MAX_REMAINDER_BITS)).then(|| Shape {
        cell_bits: CELL_BITS,
        slot_bits: bits as u16 + 1,
    })
}

/// The level a filter for `capacity` items starts at: enough chunks for them at
/// [`PER_CHUNK`] each, a power of two.
pub(crate) fn start_level(capacity: u64) -> u16 {
    let chunks = capacity.div_ceil(PER_CHUNK).max(1);
    let level = chunks.next_power_of_two().trailing_zeros();
    level.min(MAX_START_LEVEL.into()) as u16
}

/// The highest level a filter starts at: 65,536 chunks (12.6M items, a 2 MiB table, built in
/// about a millisecond). A larger capacity is a hint the filter grows to, a chunk at a time,
/// so that no BF.RESERVE builds a table for a billion items at once.
pub(crate) const MAX_START_LEVEL: u16 = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remainders_follow_the_rate() {
        let bits = |e| shape_for(e).unwrap().remainder_bits();
        assert_eq!(bits(0.01), 11);
        assert_eq!(bits(0.001), 14);
        assert_eq!(bits(0.5), 5);
        assert!(shape_for(1e-10).is_none());
        // errors::EXPANDABLE_ERROR_RATE's bound.
        assert!(shape_for(5.2e-9).is_some());
        assert!(shape_for(5.1e-9).is_none());
    }

    #[test]
    fn the_start_has_room_for_the_capacity() {
        assert_eq!(start_level(100), 0);
        assert_eq!(start_level(192), 0);
        assert_eq!(start_level(193), 1);
        assert_eq!(start_level(2_000_000), 14);
        assert_eq!(start_level(u64::MAX), MAX_START_LEVEL);
    }
}
