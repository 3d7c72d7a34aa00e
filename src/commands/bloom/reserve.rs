//! `BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [SEED s] [SLIDING | WINDOW s]`
//!
//! `SEED` is rsbloom's own option: it fixes the filter's hash seed instead of drawing a random
//! one. rsbloom replicates every creation with it, so replicas and AOF replays match bit for bit.

use super::create;
use crate::commands::refuse;
use crate::config;
use crate::ffi::{Args, Ctx};
use rsbloom_core::bloom::args;
use rsbloom_core::Filter;

pub fn reserve(ctx: &Ctx, a: &Args) {
    match args::reserve(&a.to_vec(), config::expansion()) {
        Ok(r) => crate::commands::reserve::<Filter>(ctx, a, c"bf.reserve", |key| {
            create(ctx, a, key, r.spec, r.seed).map(|_| ())
        }),
        Err(refusal) => refuse(ctx, refusal),
    }
}
