//! Window filters: Bloom filters that forget (`SLIDING`, `WINDOW seconds`), in two sibling
//! layouts. New ones have the rotating layout, in [`rotating`] (its own folder: model, design,
//! lookups, writes, formats, what it says of itself). Filters of the first layout, an
//! age-partitioned Bloom filter, keep it: [`partitioned`], the same files. What both share and
//! neither owns (the clock's limit, the rate headroom, a decoded window's checks) is
//! [`common`]; [`args`] parses the window options of `BF.RESERVE` and `BF.INSERT`.

pub mod args;
pub mod common;
pub mod partitioned;
pub mod rotating;
