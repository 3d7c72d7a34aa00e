//! `CF.EXISTS key item`; `CF.MEXISTS key item ...`; `CF.COUNT key item`

use crate::commands::with_optional;
use crate::ffi::{Args, Ctx};
use crate::stats;
use rsbloom_core::Cuckoo;

pub fn exists(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    with_optional(ctx, a, |cf: Option<&mut Cuckoo>| {
        stats::CUCKOO.items_checked(1);
        ctx.reply_bool(cf.is_some_and(|cf| cf.contains(cf.hash(a.get(2)))));
    });
}

pub fn mexists(ctx: &Ctx, a: &Args) {
    if a.len() < 3 {
        return ctx.reply_wrong_arity();
    }
    with_optional(ctx, a, |cf: Option<&mut Cuckoo>| {
        let n = a.len() - 2;
        stats::CUCKOO.items_checked(n as u64);
        ctx.reply_array(n);
        let items = (2..a.len()).map(|i| a.get(i));
        match cf {
            Some(cf) => cf.contains_many(items, |present| ctx.reply_bool(present)),
            None => items.for_each(|_| ctx.reply_bool(false)),
        }
    });
}

pub fn count(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    with_optional(ctx, a, |cf: Option<&mut Cuckoo>| {
        stats::CUCKOO.items_checked(1);
        let n = cf.map_or(0, |cf| cf.count(cf.hash(a.get(2))));
        ctx.reply_integer(n as i64);
    });
}
