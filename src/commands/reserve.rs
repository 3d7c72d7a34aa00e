//! BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [SEED s]
//!
//! `SEED` is rsbloom's own option: it fixes the filter's hash seed instead of drawing a random
//! one. rsbloom replicates every creation with it, so replicas and AOF replays match bit for bit.

use super::create::{create, Shape};
use super::{Args, Ctx, Slot};
use crate::args::{self, Refusal};
use crate::{config, errors};

pub fn reserve(ctx: &Ctx, a: &Args) {
    let argv: Vec<&[u8]> = (0..a.len()).map(|i| a.get(i)).collect();
    let r = match args::reserve(&argv, config::expansion()) {
        Ok(r) => r,
        Err(Refusal::Arity) => return ctx.reply_wrong_arity(),
        Err(Refusal::Reply(text)) => return ctx.reply_error(text),
    };
    let key = ctx.open_key(a, 1, true);
    match key.slot() {
        Slot::Bloom(_) => return ctx.reply_error(errors::ITEM_EXISTS),
        Slot::Other => return ctx.reply_error(errors::WRONG_TYPE),
        Slot::Empty => {}
    }
    let shape = Shape {
        error: r.error,
        capacity: r.capacity,
        expansion: r.expansion,
        nonscaling: r.nonscaling,
    };
    match create(ctx, a, &key, shape, r.seed) {
        Err(text) => ctx.reply_error(&text),
        Ok(_) => {
            ctx.reply_ok();
            ctx.notify(c"bf.reserve", a, 1);
        }
    }
}
