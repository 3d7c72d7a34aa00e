//! CF.DEBUG key: the filter's parameters and counts in one line.

use crate::commands::with_value;
use crate::ffi::{Args, Ctx};
use rsbloom_core::Cuckoo;

pub fn debug(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    with_value(ctx, a, false, |cf: &mut Cuckoo| {
        let line = cf.debug_line();
        ctx.reply_bulk(line.as_bytes());
    });
}
