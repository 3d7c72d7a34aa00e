//! CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] [SEED s]

use super::create;
use crate::commands::refuse;
use crate::redis::{Args, Ctx, KeyContent};
use rsbloom_core::cuckoo::args;
use rsbloom_core::{errors, Cuckoo};

pub fn reserve(ctx: &Ctx, a: &Args) {
    let r = match args::reserve(&a.to_vec()) {
        Ok(r) => r,
        Err(refusal) => return refuse(ctx, refusal),
    };
    let mut key = ctx.open_key(a, 1, true);
    match key.content::<Cuckoo>() {
        KeyContent::Value(_) => return ctx.reply_error(errors::ITEM_EXISTS),
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Empty => {}
    }
    match create(ctx, a, &mut key, &r.spec, r.seed) {
        Err(text) => ctx.reply_error(&text),
        Ok(_) => {
            ctx.reply_ok();
            ctx.notify(c"cf.reserve", a, 1);
        }
    }
}
