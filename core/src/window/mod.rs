//! Window filters: Bloom filters that forget (`SLIDING`, `WINDOW seconds`). New ones have the
//! rotating layout, in [`rotating`] (its own folder: model, design, lookups, writes, formats).
//! Filters of the first layout, an age-partitioned Bloom filter, keep it: its model and its
//! clock are in [`sliding`]; [`design`] sizes it, [`ring`] lays its bits out, [`lookup`] and
//! [`write`](mod@write) read and change it; [`builder`], [`rdb`] and [`scandump`] are its serialised
//! forms, [`args`] its options.

pub mod args;
pub mod common;
pub mod partitioned;
pub mod rotating;
