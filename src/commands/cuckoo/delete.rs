//! CF.DEL key item; CF.COMPACT key: deleting items, and giving back what deletes freed.

use crate::datatype::Stored;
use crate::ffi::{Args, Ctx, Key, KeyContent};
use crate::stats::{self, Work};
use rsbloom_core::errors::{self, cf};
use rsbloom_core::Cuckoo;

/// The filter at `a[1]` for CF.DEL and CF.COMPACT, which answer a missing key with their own
/// text (`missing`) and another type with WRONGTYPE; `None` once the error is replied.
fn existing<'k>(ctx: &Ctx, key: &'k mut Key, missing: &str) -> Option<&'k mut Cuckoo> {
    match key.content::<Cuckoo>() {
        KeyContent::Value(cf) => Some(cf),
        KeyContent::Empty => {
            ctx.reply_error(missing);
            None
        }
        KeyContent::Other => {
            ctx.reply_error(errors::WRONG_TYPE);
            None
        }
    }
}

pub fn del(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, true);
    let Some(cf) = existing(ctx, &mut key, cf::DEL_NOT_FOUND) else {
        return;
    };
    let before = cf.gauges();
    let deleted = cf.delete(cf.hash(a.get(2)));
    let work = Work {
        deleted: u64::from(deleted),
        ..Work::default()
    };
    stats::CUCKOO.value_changed(before, cf.gauges(), work);
    ctx.reply_bool(deleted);
    ctx.replicate_verbatim();
    ctx.notify(c"cf.del", a, 1);
}

pub fn compact(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, true);
    let Some(cf) = existing(ctx, &mut key, cf::COMPACT_NOT_FOUND) else {
        return;
    };
    let before = cf.gauges();
    cf.compact();
    stats::CUCKOO.value_changed(before, cf.gauges(), Work::default());
    ctx.reply_ok();
    ctx.replicate_verbatim();
    ctx.notify(c"cf.compact", a, 1);
}
