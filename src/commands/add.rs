//! BF.ADD key item, BF.MADD key item [item ...],
//! BF.INSERT key [CAPACITY n] [ERROR r] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item ...:
//! the insert path, creating the filter (with the module defaults or INSERT's options) when
//! the key is missing.

use super::chain_error_text;
use super::create::create;
use crate::args::{self, Refusal};
use crate::core::{AddOutcome, Chain, ChainError, FilterSpec};
use crate::redis::{Args, Ctx, KeyContent, Word};
use crate::{config, errors, stats};

pub fn add(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    insert(ctx, a, 2, false, Some(config::default_spec()), c"bf.add");
}

pub fn madd(ctx: &Ctx, a: &Args) {
    if a.len() < 3 {
        return ctx.reply_wrong_arity();
    }
    insert(ctx, a, 2, true, Some(config::default_spec()), c"bf.madd");
}

/// BF.INSERT, its options parsed by [`args::insert`].
pub fn insert_command(ctx: &Ctx, a: &Args) {
    match args::insert(&a.to_vec(), config::default_spec()) {
        Ok(i) => insert(ctx, a, i.first_item, true, i.create, c"bf.insert"),
        Err(Refusal::Arity) => ctx.reply_wrong_arity(),
        Err(Refusal::Reply(text)) => ctx.reply_error(text),
    }
}

/// Adds `a[first..]` to the filter at `a[1]`, replying one result (or an array of them when
/// `multi`). A missing key is created as `create_as` says (see [`create`]), or is `ERR not
/// found` when `create_as` is None (INSERT's NOCREATE). A full NONSCALING filter ends the array
/// with its error, as RedisBloom does.
fn insert(
    ctx: &Ctx,
    a: &Args,
    first: usize,
    multi: bool,
    create_as: Option<FilterSpec>,
    event: &std::ffi::CStr,
) {
    let mut key = ctx.open_key(a, 1, true);
    let chain: &mut Chain = match key.content() {
        KeyContent::Other => return ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Bloom(chain) => chain,
        KeyContent::Empty => {
            let Some(spec) = create_as else {
                return ctx.reply_error(errors::NOT_FOUND);
            };
            match create(ctx, a, &mut key, spec, None) {
                Ok(chain) => chain,
                Err(text) => {
                    // The memory limit refused the implicit creation: every item is refused.
                    stats::adds(0, 0, (a.len() - first) as u64);
                    return ctx.reply_error(&text);
                }
            }
        }
    };
    let limit = config::max_filter_bytes();
    if multi {
        ctx.reply_postponed_array();
    }
    let bytes_before = chain.bit_bytes();
    let (mut replied, mut added) = (0, 0);
    // Argument indexes of the items refused: rare, so no allocation on the usual path.
    let mut refused = Vec::new();
    let items = (first..a.len()).map(|i| a.get(i));
    chain.add_many(items, limit, |result| {
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
                ctx.reply_error(&chain_error_text(&e));
                e != ChainError::Full
            }
        }
    });
    stats::adds(
        added,
        chain.bit_bytes() - bytes_before,
        refused.len() as u64,
    );
    if multi {
        ctx.set_array_len(replied);
    }
    replicate_applied(ctx, a, first..first + replied, &refused);
    ctx.notify(event, a, 1);
}

/// Replicates what an add applied. When every item was taken, the command as received. When
/// some were refused (a full NONSCALING filter, the memory limit), `BF.MADD key` with the
/// items that were taken, in order, or nothing when none was: a replica or an AOF replay then
/// applies the same changes and never meets the error, which Redis would count as a
/// propagation error (`propagation-error-behavior`). A refused item changed nothing, so
/// leaving it out changes no other item's outcome.
fn replicate_applied(ctx: &Ctx, a: &Args, handled: std::ops::Range<usize>, refused: &[usize]) {
    if refused.is_empty() && handled.end == a.len() {
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
    let argv: Vec<Word> = std::iter::once(Word::Arg(1)).chain(taken).collect();
    ctx.replicate(c"BF.MADD", a, &argv);
}
