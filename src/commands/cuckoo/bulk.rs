//! `CF.BULKADD key [FRAMED] blob` and `CF.BULKEXISTS key [FRAMED] blob`: many items in one
//! argument (the blob's form: [`rsbloom_core::bulk`]), one byte per item in one bulk string:
//! what CF.INSERT's or CF.MEXISTS's answer for that item would be (`1`, `0`), or `E` for an
//! item the filter could not take (CF.INSERT's `-1`). CF.BULKADD creates a missing key as
//! CF.ADD does. Replicated as received when every item was taken, else as `CF.BULKADD key
//! FRAMED <the items taken>` (nothing when none was).

use super::add::{add_defaults, filter_to_insert_into};
use crate::commands::{bulk_items, with_optional};
use crate::config;
use crate::datatype::Stored;
use crate::ffi::{Args, Ctx, Word};
use crate::stats::{self, Work};
use rsbloom_core::bulk::{self, Items, NO, REFUSED, YES};
use rsbloom_core::Cuckoo;

pub fn bulkadd(ctx: &Ctx, a: &Args) {
    let Some((_, items, mut answers)) = bulk_items(ctx, a, "CF.BULKADD", false) else {
        return;
    };
    let max_filters = config::cf_max_expansions();
    let mut key = ctx.open_key(a, 1, true);
    let Some(cf) = filter_to_insert_into(ctx, a, &mut key, Some(add_defaults()), max_filters)
    else {
        return;
    };
    let limit = config::max_filter_bytes();
    let before = cf.gauges();
    cf.for_each_ahead(items.clone(), |cf, hash| {
        answers.push(match cf.insert(hash, max_filters, limit) {
            Ok(_) => YES,
            Err(_) => REFUSED,
        });
    });
    let refused = answers.iter().filter(|&&b| b == REFUSED).count() as u64;
    let work = Work {
        added: answers.len() as u64 - refused,
        refused,
        ..Work::default()
    };
    stats::CUCKOO.value_changed(before, cf.gauges(), work);
    ctx.reply_bulk(&answers);
    replicate_applied(ctx, a, items, &answers);
    ctx.notify(c"cf.bulkadd", a, 1);
}

/// Replicates what a bulk insert applied (see the module's docs).
fn replicate_applied(ctx: &Ctx, a: &Args, items: Items, answers: &[u8]) {
    if !answers.contains(&REFUSED) {
        return ctx.replicate_verbatim();
    }
    let Some(blob) = bulk::taken(items, answers) else {
        return;
    };
    let argv = [Word::Arg(1), Word::Text("FRAMED"), Word::Bytes(&blob)];
    ctx.replicate(c"CF.BULKADD", a, &argv);
}

pub fn bulkexists(ctx: &Ctx, a: &Args) {
    let Some((_, items, mut answers)) = bulk_items(ctx, a, "CF.BULKEXISTS", false) else {
        return;
    };
    with_optional(ctx, a, |cf: Option<&mut Cuckoo>| {
        stats::CUCKOO.items_checked(items.len() as u64);
        let count = items.len();
        match cf {
            Some(cf) => cf.contains_many(items, |present| {
                answers.push(if present { YES } else { NO })
            }),
            None => answers.resize(count, NO),
        }
        ctx.reply_bulk(&answers);
    });
}
