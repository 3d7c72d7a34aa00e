//! `BF.BULKADD key [FRAMED] [AT ms] [NOREFRESH] blob` and `BF.BULKEXISTS key [FRAMED] blob`:
//! many items in one argument (the blob's form: [`rsbloom_core::bulk`]), one byte per item
//! in one bulk string: what BF.MADD's or BF.MEXISTS's answer for that item would be (`1`,
//! `0`), or `E` for an item an add could not take. Every kind of Bloom key answers them:
//! chains, both window layouts, valkey-bloom's filters; BF.BULKADD creates a missing key as
//! BF.ADD does.
//!
//! Replication: the command as received when every item was taken at the filter's clock; else
//! `BF.BULKADD key FRAMED [AT clock] [NOREFRESH] <the items taken>` (nothing when none was), so
//! a replica or an AOF replay applies exactly the primary's changes (as BF.MADD's are,
//! [`super::add`]).

use super::add::{filter_to_add_to, write_time, NewFilter};
use crate::commands::{bulk_items, with_optional};
use crate::config;
use crate::datatype::Stored;
use crate::ffi::{Args, Ctx, Word};
use crate::forget;
use crate::stats::{self, Work};
use rsbloom_core::bulk::{self, Items, NO, REFUSED, YES};
use rsbloom_core::window::args::WindowWords;
use rsbloom_core::{AddOutcome, Filter};

pub fn bulkadd(ctx: &Ctx, a: &Args) {
    let Some((words, items, mut answers)) = bulk_items(ctx, a, "BF.BULKADD", true) else {
        return;
    };
    let mut key = ctx.open_key(a, 1, true);
    let window_words = WindowWords {
        window: None,
        at: words.at,
        norefresh: words.norefresh,
    };
    let create_as = NewFilter::Native(config::default_spec());
    let count = items.len() as u64;
    let Some(filter) = filter_to_add_to(ctx, a, &mut key, Some(&create_as), &window_words, count)
    else {
        return;
    };
    let before = filter.gauges();
    let clock_before = filter.time_clock();
    let now = write_time(ctx, words.at, clock_before);
    let limit = config::max_filter_bytes();
    filter.add_many(items.clone(), now, limit, !words.norefresh, |result| {
        answers.push(match result {
            Ok(AddOutcome::Added) => YES,
            Ok(AddOutcome::Present) => NO,
            Err(_) => REFUSED,
        });
        true
    });
    let added = answers.iter().filter(|&&b| b == YES).count() as u64;
    let refused = answers.iter().filter(|&&b| b == REFUSED).count() as u64;
    let work = Work {
        added,
        refused,
        ..Work::default()
    };
    stats::BLOOM.value_changed(before, filter.gauges(), work);
    ctx.reply_bulk(&answers);
    let clock = filter
        .time_clock()
        .filter(|&after| Some(after) != clock_before);
    replicate_applied(ctx, a, items, &answers, clock, words.norefresh);
    ctx.notify(c"bf.bulkadd", a, 1);
}

/// Replicates what a bulk add applied: the command as received when every item was taken and
/// the write did not move a time window's clock; else the items taken, framed, at the clock
/// the write happened at (see the module's docs).
fn replicate_applied(
    ctx: &Ctx,
    a: &Args,
    items: Items,
    answers: &[u8],
    clock: Option<u64>,
    norefresh: bool,
) {
    if clock.is_none() && !answers.contains(&REFUSED) {
        return ctx.replicate_verbatim();
    }
    let Some(blob) = bulk::taken(items, answers) else {
        return;
    };
    let clock = clock.map(|c| c.to_string());
    let mut argv = vec![Word::Arg(1), Word::Text("FRAMED")];
    if let Some(clock) = &clock {
        argv.extend([Word::Text("AT"), Word::Text(clock)]);
    }
    if norefresh {
        argv.push(Word::Text("NOREFRESH"));
    }
    argv.push(Word::Bytes(&blob));
    ctx.replicate(c"BF.BULKADD", a, &argv);
}

pub fn bulkexists(ctx: &Ctx, a: &Args) {
    let Some((_, items, mut answers)) = bulk_items(ctx, a, "BF.BULKEXISTS", false) else {
        return;
    };
    with_optional(ctx, a, |filter: Option<&mut Filter>| {
        stats::BLOOM.items_checked(items.len() as u64);
        let count = items.len();
        match filter {
            Some(filter) => {
                let now = filter.time_clock().map_or(0, |_| ctx.now_ms());
                forget::note_read(ctx, a, 1, filter, now);
                filter.contains_many(items, now, |present| {
                    answers.push(if present { YES } else { NO })
                });
            }
            None => answers.resize(count, NO),
        }
        ctx.reply_bulk(&answers);
    });
}
