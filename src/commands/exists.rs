//! BF.EXISTS key item

use super::{Args, Ctx, Slot};
use crate::errors;

pub fn exists(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let key = ctx.open_key(a, 1, false);
    match key.slot() {
        Slot::Empty => ctx.reply_bool(false),
        // rsbloom: a key of another type is WRONGTYPE, as for every Redis command.
        Slot::Other => ctx.reply_error(errors::WRONG_TYPE),
        Slot::Bloom(chain) => ctx.reply_bool(chain.contains(a.get(2))),
    }
}
