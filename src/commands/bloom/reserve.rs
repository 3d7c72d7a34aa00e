//! BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [SEED s]
//!
//! `SEED` is rsbloom's own option: it fixes the filter's hash seed instead of drawing a random
//! one. rsbloom replicates every creation with it, so replicas and AOF replays match bit for bit.

use super::create;
use crate::commands::refuse;
use crate::config;
use crate::redis::{Args, Ctx, KeyContent};
use rsbloom_core::bloom::args;
use rsbloom_core::{errors, Filter};

pub fn reserve(ctx: &Ctx, a: &Args) {
    let r = match args::reserve(&a.to_vec(), config::expansion()) {
        Ok(r) => r,
        Err(refusal) => return refuse(ctx, refusal),
    };
    let mut key = ctx.open_key(a, 1, true);
    match key.content::<Filter>() {
        KeyContent::Value(_) => return ctx.reply_error(errors::ITEM_EXISTS),
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Empty => {}
    }
    match create(ctx, a, &mut key, r.spec, r.seed) {
        Err(text) => ctx.reply_error(&text),
        Ok(_) => {
            ctx.reply_ok();
            ctx.notify(c"bf.reserve", a, 1);
        }
    }
}
