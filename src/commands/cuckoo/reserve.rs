//! `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [SEED s]`

use super::create;
use crate::commands::refuse;
use crate::config;
use crate::ffi::{Args, Ctx};
use rsbloom_core::cuckoo::args;
use rsbloom_core::Cuckoo;

pub fn reserve(ctx: &Ctx, a: &Args) {
    match args::reserve(&a.to_vec(), config::cuckoo_defaults()) {
        Ok(r) => crate::commands::reserve::<Cuckoo>(ctx, a, c"cf.reserve", |key| {
            create(ctx, a, key, &r.spec, r.seed).map(|_| ())
        }),
        Err(refusal) => refuse(ctx, refusal),
    }
}
