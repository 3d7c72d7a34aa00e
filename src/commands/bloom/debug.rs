//! BF.DEBUG key: the lines the filter's kind gives (`Filter::debug_lines`): a chain's item
//! count, then one status line per link; a window filter's window, then one line per slice or
//! slot; a valkey-bloom filter's in the chain's shape.

use crate::commands::with_value;
use crate::ffi::{Args, Ctx};
use rsbloom_core::Filter;

pub fn debug(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    with_value(ctx, a, false, |filter: &mut Filter| {
        let lines = filter.debug_lines(ctx.now_ms());
        ctx.reply_array(lines.len());
        for line in &lines {
            ctx.reply_bulk(line.as_bytes());
        }
    });
}
