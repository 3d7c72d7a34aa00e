//! `CF.BULKADD key [FRAMED] blob` and `CF.BULKEXISTS key [FRAMED] blob`: many items in one
//! argument (the blob's form: [`rsbloom_core::bulk`]), one byte per item in one bulk string:
//! what CF.INSERT's or CF.MEXISTS's answer for that item would be (`1`, `0`), or `E` for an
//! item the filter could not take (CF.INSERT's `-1`). CF.BULKADD creates a missing key as
//! CF.ADD does. Replicated as received when every item was taken, else as `CF.BULKADD key
//! FRAMED <the items taken>` (nothing when none was).

use super::create;
use crate::commands::{refuse, with_optional};
use crate::config;
use crate::datatype::Stored;
use crate::ffi::{Args, Ctx, KeyContent, Word};
use crate::stats::{self, Work};
use rsbloom_core::bulk::{self, NO, REFUSED, YES};
use rsbloom_core::errors::{self, cf};
use rsbloom_core::{Cuckoo, CuckooSpec};

/// The items of a bulk call, or the reply already sent.
fn parse<'a>(ctx: &Ctx, a: &'a Args, command: &str) -> Option<Vec<&'a [u8]>> {
    let words = match bulk::words(&a.to_vec(), command, false) {
        Ok(words) => words,
        Err(refusal) => {
            refuse(ctx, refusal);
            return None;
        }
    };
    match bulk::items(a.get(a.len() - 1), words.framed) {
        Ok(items) => Some(items),
        Err(e) => {
            ctx.reply_error(&e.reply());
            None
        }
    }
}

pub fn bulkadd(ctx: &Ctx, a: &Args) {
    let Some(items) = parse(ctx, a, "CF.BULKADD") else {
        return;
    };
    let max_filters = config::cf_max_expansions();
    let mut key = ctx.open_key(a, 1, true);
    let cf = match key.content::<Cuckoo>() {
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Value(cf) => cf,
        KeyContent::Empty => {
            // The new filter's one sub-filter would already be the limit: create nothing.
            if max_filters <= 1 {
                return ctx.reply_error(cf::MAX_EXPANSIONS);
            }
            let defaults = config::cuckoo_defaults();
            let spec = CuckooSpec {
                expansion: CuckooSpec::stored_expansion(defaults.expansion),
                ..defaults
            };
            match create(ctx, a, &mut key, &spec, None) {
                Ok(cf) => cf,
                Err(text) => return ctx.reply_error(&text),
            }
        }
    };
    if cf.filter_count() >= max_filters {
        return ctx.reply_error(cf::MAX_EXPANSIONS);
    }
    let limit = config::max_filter_bytes();
    let before = cf.gauges();
    let mut answers = Vec::with_capacity(items.len());
    cf.for_each_ahead(items.iter().copied(), |cf, hash| {
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
    replicate_applied(ctx, a, &items, &answers);
    ctx.notify(c"cf.bulkadd", a, 1);
}

/// Replicates what a bulk insert applied (see the module's docs).
fn replicate_applied(ctx: &Ctx, a: &Args, items: &[&[u8]], answers: &[u8]) {
    if !answers.contains(&REFUSED) {
        return ctx.replicate_verbatim();
    }
    let mut blob = Vec::new();
    for (item, _) in items.iter().zip(answers).filter(|(_, &b)| b != REFUSED) {
        bulk::push_frame(&mut blob, item);
    }
    if blob.is_empty() {
        return;
    }
    let argv = [Word::Arg(1), Word::Text("FRAMED"), Word::Bytes(&blob)];
    ctx.replicate(c"CF.BULKADD", a, &argv);
}

pub fn bulkexists(ctx: &Ctx, a: &Args) {
    let Some(items) = parse(ctx, a, "CF.BULKEXISTS") else {
        return;
    };
    with_optional(ctx, a, |cf: Option<&mut Cuckoo>| {
        stats::CUCKOO.items_checked(items.len() as u64);
        let mut answers = Vec::with_capacity(items.len());
        match cf {
            Some(cf) => cf.contains_many(items.iter().copied(), |present| {
                answers.push(if present { YES } else { NO })
            }),
            None => answers.resize(items.len(), NO),
        }
        ctx.reply_bulk(&answers);
    });
}
