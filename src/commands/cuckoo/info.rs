//! `CF.INFO key`

use crate::commands::with_value;
use crate::ffi::{Args, Ctx};
use rsbloom_core::Cuckoo;

pub fn info(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    with_value(ctx, a, false, |cf: &mut Cuckoo| {
        let fields = cf.info_fields();
        ctx.reply_map(fields.len());
        for (name, value) in fields {
            ctx.reply_simple_string(name);
            ctx.reply_integer(value);
        }
    });
}
