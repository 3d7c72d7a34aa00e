//! `BF.EXISTS key item`, `BF.MEXISTS key item [item ...]`

use crate::commands::with_optional;
use crate::ffi::{Args, Ctx};
use crate::forget;
use crate::stats;
use rsbloom_core::Filter;

pub fn exists(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    check(ctx, a, false);
}

pub fn mexists(ctx: &Ctx, a: &Args) {
    if a.len() < 3 {
        return ctx.reply_wrong_arity();
    }
    check(ctx, a, true);
}

/// Replies whether each of `a[2..]` may be in the filter at `a[1]` (false for a missing key):
/// one boolean, or an array of them when `multi`.
fn check(ctx: &Ctx, a: &Args, multi: bool) {
    with_optional(ctx, a, |filter: Option<&mut Filter>| {
        stats::BLOOM.items_checked((a.len() - 2) as u64);
        if multi {
            ctx.reply_array(a.len() - 2);
        }
        let items = (2..a.len()).map(|i| a.get(i));
        match filter {
            // A time window reads at the server's clock, never writing: slices past the window
            // are skipped here and dropped by the next write. The other kinds read no clock.
            Some(filter) => {
                let now = filter.time_clock().map_or(0, |_| ctx.now_ms());
                forget::note_read(ctx, a, 1, filter, now);
                filter.contains_many(items, now, |present| ctx.reply_bool(present))
            }
            None => items.for_each(|_| ctx.reply_bool(false)),
        }
    });
}
