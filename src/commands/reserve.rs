//! BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [SEED s]
//!
//! `SEED` is rsbloom's own option: it fixes the filter's hash seed instead of drawing a random
//! one. rsbloom replicates every creation with it, so replicas and AOF replays match bit for bit.

use super::create::{create, Shape};
use super::{Args, Ctx, Slot};
use crate::{args, config, errors};

pub fn reserve(ctx: &Ctx, a: &Args) {
    // RedisBloom's arity, plus two arguments for rsbloom's SEED option.
    let has_seed = (4..a.len()).any(|i| args::is(a.get(i), "SEED"));
    if a.len() < 4 || a.len() > if has_seed { 9 } else { 7 } {
        return ctx.reply_wrong_arity();
    }
    let error = match args::double(a.get(2)) {
        None => return ctx.reply_error(errors::BAD_ERROR_RATE),
        Some(e) if !(e > 0.0 && e < 1.0) => return ctx.reply_error(errors::ERROR_RATE_RANGE),
        Some(e) => e,
    };
    let capacity = match args::integer(a.get(3)) {
        None => return ctx.reply_error(errors::BAD_CAPACITY),
        Some(c) if c <= 0 => return ctx.reply_error(errors::CAPACITY_RANGE),
        Some(c) => c as u64,
    };
    let mut nonscaling = false;
    let mut expansion_at = None;
    let mut seed_at = None;
    let mut i = 4;
    while i < a.len() {
        let arg = a.get(i);
        if args::is(arg, "NONSCALING") {
            nonscaling = true;
        } else if args::is(arg, "EXPANSION") {
            // Like RedisBloom, the first EXPANSION counts: `EXPANSION 10 EXPANSION` is 10.
            expansion_at.get_or_insert(i + 1);
            i += 1;
        } else if args::is(arg, "SEED") {
            seed_at = Some(i + 1);
            i += 1;
        } else {
            return ctx.reply_error(errors::UNKNOWN_RESERVE_ARGUMENT);
        }
        i += 1;
    }
    let mut expansion = config::expansion();
    if let Some(at) = expansion_at {
        if at >= a.len() {
            return ctx.reply_error(errors::NO_EXPANSION);
        }
        if nonscaling {
            return ctx.reply_error(errors::NONSCALING_EXPANSION);
        }
        expansion = match args::integer(a.get(at)) {
            None => return ctx.reply_error(errors::BAD_EXPANSION),
            Some(e) if e < 1 => return ctx.reply_error(errors::EXPANSION_RANGE),
            Some(e) => u32::try_from(e).unwrap_or(u32::MAX),
        };
    } else if expansion == 0 {
        nonscaling = true;
    }
    let seed = match seed_at {
        None => None,
        Some(at) => match a.get_checked(at).and_then(args::unsigned) {
            Some(s) => Some(s),
            None => return ctx.reply_error(errors::BAD_SEED),
        },
    };
    let key = ctx.open_key(a, 1, true);
    match key.slot() {
        Slot::Bloom(_) => return ctx.reply_error(errors::ITEM_EXISTS),
        Slot::Other => return ctx.reply_error(errors::WRONG_TYPE),
        Slot::Empty => {}
    }
    let shape = Shape {
        error,
        capacity,
        expansion: expansion.max(1),
        nonscaling,
    };
    match create(ctx, a, &key, shape, seed) {
        Err(text) => ctx.reply_error(&text),
        Ok(_) => {
            ctx.reply_ok();
            ctx.notify(c"bf.reserve", a, 1);
        }
    }
}
