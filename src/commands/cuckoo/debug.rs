//! CF.DEBUG key: the filter's parameters and counts in one line.

use crate::redis::{Args, Ctx};
use rsbloom_core::Cuckoo;

pub fn debug(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let cf = match key.value::<Cuckoo>() {
        Ok(cf) => cf,
        Err(text) => return ctx.reply_error(text),
    };
    let line = format!(
        "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
        cf.bucket_size(),
        cf.buckets(),
        cf.items(),
        cf.deletes(),
        cf.filter_count(),
        cf.max_iterations(),
        cf.expansion()
    );
    ctx.reply_bulk(line.as_bytes());
}
