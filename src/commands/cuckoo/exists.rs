//! CF.EXISTS key item; CF.MEXISTS key item ...; CF.COUNT key item

use crate::redis::{Args, Ctx, Key, KeyContent};
use crate::stats;
use rsbloom_core::{errors, Cuckoo};

/// The filter at `a[1]` for a reader: `None` when the key is missing, WRONGTYPE (replied, as
/// every Redis command does; RedisBloom reads another type as empty) for another type.
fn read<'k>(ctx: &Ctx, key: &'k mut Key) -> Result<Option<&'k mut Cuckoo>, ()> {
    match key.content::<Cuckoo>() {
        KeyContent::Empty => Ok(None),
        KeyContent::Value(cf) => Ok(Some(cf)),
        KeyContent::Other => {
            ctx.reply_error(errors::WRONG_TYPE);
            Err(())
        }
    }
}

pub fn exists(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let Ok(cf) = read(ctx, &mut key) else { return };
    stats::CUCKOO.items_checked(1);
    ctx.reply_bool(cf.is_some_and(|cf| cf.contains(cf.hash(a.get(2)))));
}

pub fn mexists(ctx: &Ctx, a: &Args) {
    if a.len() < 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let Ok(cf) = read(ctx, &mut key) else { return };
    let n = a.len() - 2;
    stats::CUCKOO.items_checked(n as u64);
    ctx.reply_array(n);
    match cf {
        Some(cf) => cf.contains_many((2..a.len()).map(|i| a.get(i)), |present| {
            ctx.reply_bool(present)
        }),
        None => (0..n).for_each(|_| ctx.reply_bool(false)),
    }
}

pub fn count(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let Ok(cf) = read(ctx, &mut key) else { return };
    stats::CUCKOO.items_checked(1);
    let n = cf.map_or(0, |cf| cf.count(cf.hash(a.get(2))));
    ctx.reply_integer(n as i64);
}
