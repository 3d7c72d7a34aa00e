//! Window filters: Bloom filters that forget (`SLIDING`, `WINDOW seconds`).

pub mod builder;
pub mod sliding;
