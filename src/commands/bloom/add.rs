//! `BF.ADD key item`, `BF.MADD key item [item ...]`,
//! `BF.INSERT key [CAPACITY n] [ERROR r] [EXPANSION n] [NOCREATE] [NONSCALING]
//! [SLIDING | WINDOW s] [NOREFRESH] [AT ms] ITEMS item ...`: the insert path, creating the
//! filter (with the module defaults or INSERT's options) when the key is missing.
//!
//! A write to a time window happens at a clock: the server's, or INSERT's `AT`. A write that
//! moves the filter's clock is replicated as `BF.INSERT key NOCREATE AT <that clock> ITEMS
//! <the items taken>`, so a replica or an AOF replay ends generations and drops slices exactly
//! where the primary did, whatever its own clock says. A write at the clock the filter already
//! has (most adds under load: hundreds share a millisecond) is replicated as received, and a
//! replayed write without `AT` happens at the filter's clock: the same clock, without building
//! a new command for every add (perf, BF.ADD at pipeline 32 on a 10 M window filter: the
//! allocator's share of the server's time fell from 17% to 8%, ops/s from 0.34-0.42 M to
//! 0.50-0.58 M).

use super::{create, create_valkey};
use crate::commands::{random_seed, refuse};
use crate::config;
use crate::datatype::Stored;
use crate::ffi::{Args, Ctx, Key, KeyContent, Word};
use crate::stats::{self, Work};
use rsbloom_core::bloom::args;
use rsbloom_core::window::args::{at_refusal, WindowWords};
use rsbloom_core::{errors, AddOutcome, Filter, FilterError, FilterSpec, ValkeySpec, Window};

pub fn add(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    let call = AddCall {
        first: 2,
        multi: false,
        create_as: Some(NewFilter::Native(config::default_spec())),
        words: WindowWords::default(),
        event: c"bf.add",
    };
    add_items(ctx, a, call);
}

pub fn madd(ctx: &Ctx, a: &Args) {
    if a.len() < 3 {
        return ctx.reply_wrong_arity();
    }
    let call = AddCall {
        first: 2,
        multi: true,
        create_as: Some(NewFilter::Native(config::default_spec())),
        words: WindowWords::default(),
        event: c"bf.madd",
    };
    add_items(ctx, a, call);
}

/// What an add to a missing key creates.
pub(super) enum NewFilter {
    /// rsbloom's filter: every add from a client.
    Native(FilterSpec),
    /// A valkey-bloom filter: valkey-bloom's replicated creation (`BF.INSERT … TIGHTENING t
    /// SEED s`, from a primary or the AOF).
    Valkey(ValkeySpec),
}

/// BF.INSERT, its options parsed by [`args::insert`] (valkey-bloom's `TIGHTENING` and `SEED`
/// only from a replayed command).
pub fn insert(ctx: &Ctx, a: &Args) {
    match args::insert(&a.to_vec(), config::default_spec(), ctx.is_replayed()) {
        Ok(i) => {
            let create = match (i.create, i.valkey) {
                (Some(spec), Some(valkey)) => Some(NewFilter::Valkey(ValkeySpec::of_insert(
                    &spec,
                    valkey.tightening,
                    valkey.seed.unwrap_or_else(random_valkey_seed),
                ))),
                (spec, _) => spec.map(NewFilter::Native),
            };
            let call = AddCall {
                first: i.first_item,
                multi: true,
                create_as: create,
                words: i.words,
                event: c"bf.insert",
            };
            add_items(ctx, a, call)
        }
        Err(refusal) => refuse(ctx, refusal),
    }
}

/// A random 32-byte seed, for a replayed valkey-bloom creation without one (as valkey-bloom
/// draws one).
fn random_valkey_seed() -> [u8; 32] {
    let mut seed = [0u8; 32];
    for part in seed.chunks_mut(8) {
        part.copy_from_slice(&random_seed().to_le_bytes());
    }
    seed
}

/// One add command: its items `a[first..]`, whether it replies an array (`multi`), what a
/// missing key is created as (None: INSERT's NOCREATE, `ERR not found`), INSERT's window words
/// (the window it asks for, which an existing filter must have; the time a time window adds
/// at, else the server's clock; NOREFRESH), and its keyspace event.
struct AddCall<'e> {
    first: usize,
    multi: bool,
    create_as: Option<NewFilter>,
    words: WindowWords,
    event: &'e std::ffi::CStr,
}

/// Adds `a[call.first..]` to the filter at `a[1]`, replying one result (or an array of them
/// when `multi`), creating a missing key as `create_as` says (see [`create`]). A full
/// NONSCALING filter ends the array with its error, as RedisBloom does. Window words that
/// cannot apply, and a client's AT outside the clock bounds, are refused before anything
/// changes.
fn add_items(ctx: &Ctx, a: &Args, call: AddCall) {
    let mut key = ctx.open_key(a, 1, true);
    let items = (a.len() - call.first) as u64;
    let create_as = call.create_as.as_ref();
    let Some(filter) = filter_to_add_to(ctx, a, &mut key, create_as, &call.words, items) else {
        return;
    };
    let limit = config::max_filter_bytes();
    if call.multi {
        ctx.reply_postponed_array();
    }
    let before = filter.gauges();
    let clock_before = filter.time_clock();
    let now = write_time(ctx, call.words.at, clock_before);
    let first = call.first;
    let (mut replied, mut added) = (0, 0);
    // Argument indexes of the items refused: rare, so no allocation on the usual path.
    let mut refused = Vec::new();
    let items = (first..a.len()).map(|i| a.get(i));
    filter.add_many(items, now, limit, !call.words.norefresh, |result| {
        let at = first + replied;
        replied += 1;
        match result {
            Ok(outcome) => {
                added += u64::from(outcome == AddOutcome::Added);
                ctx.reply_bool(outcome == AddOutcome::Added);
                true
            }
            Err(e) => {
                refused.push(at);
                ctx.reply_error(&errors::filter_error(&e));
                e != FilterError::Full
            }
        }
    });
    // A window filter may free slices as it goes: its bytes may fall.
    let work = Work {
        added,
        refused: refused.len() as u64,
        ..Work::default()
    };
    stats::BLOOM.value_changed(before, filter.gauges(), work);
    if call.multi {
        ctx.set_array_len(replied);
    }
    // A time window's clock travels with the write whenever the write moved it.
    let clock = filter
        .time_clock()
        .filter(|&after| Some(after) != clock_before);
    let applied = first..first + replied;
    replicate_applied(ctx, a, applied, &refused, clock, call.words.norefresh);
    ctx.notify(call.event, a, 1);
}

/// The time a write happens at: `AT`'s when given; else, for a time window whose clock is
/// `clock`, the server's (a replayed write without `AT` happened at the filter's clock: the
/// primary replicated it as received); 0 for the other kinds, which read no clock (3% of a
/// count window's BF.ADD server time, by perf).
pub(super) fn write_time(ctx: &Ctx, at: Option<u64>, clock: Option<u64>) -> u64 {
    match (at, clock) {
        (Some(at), _) => at,
        (None, None) => 0,
        (None, Some(clock)) if ctx.is_replayed() => clock,
        (None, Some(_)) => ctx.now_ms(),
    }
}

/// The filter an add of `items` items goes to: the key's, or one created as `create_as` says;
/// None when the add is refused (the reply sent): a key of another type, window `words` that
/// cannot apply to the filter, a client's AT outside the clock bounds, NOCREATE (`create_as`
/// None) on a missing key, or a creation the memory limit refuses.
pub(super) fn filter_to_add_to<'k>(
    ctx: &Ctx,
    a: &Args,
    key: &'k mut Key,
    create_as: Option<&NewFilter>,
    words: &WindowWords,
    items: u64,
) -> Option<&'k mut Filter> {
    // The window words, then a client's AT against the clocks (a replayed one is the
    // primary's choice, taken as it is).
    let refused = |has: Option<Window>, clock: Option<u64>| {
        let text = words.refusal(has).or_else(|| match (words.at, has) {
            (Some(at), Some(Window::Time { seconds })) if !ctx.is_replayed() => {
                at_refusal(at, seconds, ctx.now_ms(), clock, config::at_tolerance())
            }
            _ => None,
        });
        text.map(|text| ctx.reply_error(&text))
    };
    // Asked first, so that the borrow of the value below is the one returned.
    if !key.is_empty() {
        return match key.content::<Filter>() {
            KeyContent::Value(filter) => refused(Some(filter.window()), filter.time_clock())
                .is_none()
                .then_some(filter),
            _ => {
                ctx.reply_error(errors::WRONG_TYPE);
                None
            }
        };
    }
    let window_of = |new: &NewFilter| match new {
        NewFilter::Native(spec) => spec.window,
        NewFilter::Valkey(_) => Window::Unbounded,
    };
    if refused(create_as.map(window_of), None).is_some() {
        return None;
    }
    let created = match create_as {
        None => Err(errors::NOT_FOUND.to_string()),
        Some(NewFilter::Native(spec)) => create(ctx, a, key, *spec, None),
        Some(NewFilter::Valkey(spec)) => create_valkey(ctx, a, key, spec),
    };
    match created {
        Ok(filter) => Some(filter),
        Err(text) => {
            if create_as.is_some() {
                // The memory limit refused the implicit creation: every item is refused.
                stats::BLOOM.work_done(Work {
                    refused: items,
                    ..Work::default()
                });
            }
            ctx.reply_error(&text);
            None
        }
    }
}

/// Replicates what an add applied. When every item was taken, the command as received. When
/// some were refused (a full NONSCALING filter, the memory limit), the items that were taken,
/// in order, or nothing when none was: a replica or an AOF replay then applies the same
/// changes and never meets the error, which Redis would count as a propagation error
/// (`propagation-error-behavior`). A refused item changed nothing, so leaving it out changes
/// no other item's outcome. Those items go as `BF.MADD key …`, or as `BF.INSERT key NOCREATE
/// [NOREFRESH] [AT clock] ITEMS …` when the call was `NOREFRESH` or its write moved a time
/// window's `clock` (the time it happened at).
fn replicate_applied(
    ctx: &Ctx,
    a: &Args,
    handled: std::ops::Range<usize>,
    refused: &[usize],
    clock: Option<u64>,
    norefresh: bool,
) {
    if clock.is_none() && refused.is_empty() && handled.end == a.len() {
        return ctx.replicate_verbatim();
    }
    // Both ascending: walk them together.
    let mut refused = refused.iter().peekable();
    let taken: Vec<Word> = handled
        .filter(|&i| refused.next_if_eq(&&i).is_none())
        .map(Word::Arg)
        .collect();
    if taken.is_empty() {
        return;
    }
    let key = std::iter::once(Word::Arg(1));
    if clock.is_none() && !norefresh {
        let argv: Vec<Word> = key.chain(taken).collect();
        return ctx.replicate(c"BF.MADD", a, &argv);
    }
    let clock = clock.map(|c| c.to_string());
    let mut options = vec![Word::Text("NOCREATE")];
    if norefresh {
        options.push(Word::Text("NOREFRESH"));
    }
    if let Some(clock) = &clock {
        options.extend([Word::Text("AT"), Word::Text(clock)]);
    }
    options.push(Word::Text("ITEMS"));
    let argv: Vec<Word> = key.chain(options).chain(taken).collect();
    ctx.replicate(c"BF.INSERT", a, &argv);
}
