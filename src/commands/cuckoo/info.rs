//! `CF.INFO key`

use crate::commands::with_value;
use crate::ffi::{Args, Ctx};
use rsbloom_core::Cuckoo;

pub fn info(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    with_value(ctx, a, false, |cf: &mut Cuckoo| {
        let fields: [(&std::ffi::CStr, i64); 8] = [
            (c"Size", cf.memory_usage() as i64),
            (c"Number of buckets", cf.buckets() as i64),
            (c"Number of filters", cf.filter_count() as i64),
            // Signed, as RedisBloom replies it: -1 after an underflow.
            (c"Number of items inserted", cf.items() as i64),
            (c"Number of items deleted", cf.deletes() as i64),
            (c"Bucket size", i64::from(cf.bucket_size())),
            (c"Expansion rate", i64::from(cf.expansion())),
            (c"Max iterations", i64::from(cf.max_iterations())),
        ];
        ctx.reply_map(fields.len());
        for (name, value) in fields {
            ctx.reply_simple_string(name);
            ctx.reply_integer(value);
        }
    });
}
