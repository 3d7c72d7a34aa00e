//! BF.ADD key item, BF.MADD key item [item ...],
//! BF.INSERT key [CAPACITY n] [ERROR r] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item ...:
//! the insert path, creating the filter (with the module defaults or INSERT's options) when
//! the key is missing.

use super::create::{create, Shape};
use super::{chain_error_text, Args, Ctx, Slot};
use crate::core::{AddOutcome, Chain, ChainError};
use crate::{args, config, errors, stats};

pub fn add(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    insert(ctx, a, 2, false, Some(Shape::defaults()), c"bf.add");
}

pub fn madd(ctx: &Ctx, a: &Args) {
    if a.len() < 3 {
        return ctx.reply_wrong_arity();
    }
    insert(ctx, a, 2, true, Some(Shape::defaults()), c"bf.madd");
}

/// BF.INSERT. Options are parsed as RedisBloom 2.8.2 does: each token is recognised by its
/// first character (and the second for ERROR/EXPANSION, the third for NOCREATE/NONSCALING);
/// value parse failures are reported during the scan, range failures after it.
pub fn insert_command(ctx: &Ctx, a: &Args) {
    if a.len() < 4 {
        return ctx.reply_wrong_arity();
    }
    let mut error = None;
    let mut capacity = None;
    let mut expansion = None;
    let mut nocreate = false;
    let mut nonscaling = false;
    let mut items_at = None;
    let mut i = 2;
    while i < a.len() {
        let token = a.get(i);
        let at = |n: usize| token.get(n).map(u8::to_ascii_lowercase);
        // The option's value, or None when the option is the last argument.
        let value = (i + 1 < a.len()).then(|| a.get(i + 1));
        match at(0) {
            Some(b'i') => {
                items_at = Some(i + 1);
                break;
            }
            Some(b'e' | b'c') => {
                let Some(value) = value else {
                    return ctx.reply_wrong_arity();
                };
                if at(0) == Some(b'c') {
                    match args::integer(value) {
                        Some(c) => capacity = Some(c),
                        None => return ctx.reply_error(errors::INSERT_BAD_CAPACITY),
                    }
                } else if at(1) == Some(b'r') {
                    match args::double(value) {
                        Some(e) => error = Some(e),
                        None => return ctx.reply_error(errors::INSERT_BAD_ERROR_RATE),
                    }
                } else {
                    match args::integer(value) {
                        Some(e) => expansion = Some(e),
                        None => return ctx.reply_error(errors::INSERT_BAD_EXPANSION),
                    }
                }
                i += 1;
            }
            Some(b'n') if at(2) == Some(b'c') => nocreate = true,
            Some(b'n') => nonscaling = true,
            _ => return ctx.reply_error(errors::INSERT_UNKNOWN_ARGUMENT),
        }
        i += 1;
    }
    let first = match items_at {
        Some(first) if first < a.len() => first,
        _ => return ctx.reply_wrong_arity(),
    };
    if error.is_some_and(|e| !(e > 0.0 && e < 1.0))
        || capacity.is_some_and(|c| c < 1)
        || expansion.is_some_and(|e| e < 1)
    {
        return ctx.reply_error(errors::INSERT_BAD_ARGUMENT);
    }
    let mut shape = Shape::defaults();
    if let Some(e) = error {
        shape.error = e;
    }
    if let Some(c) = capacity {
        shape.capacity = c as u64;
    }
    if let Some(e) = expansion {
        // rsbloom: a huge expansion saturates instead of wrapping (RedisBloom truncates it to
        // 32 bits, so 4294967296 becomes a growth of 0).
        shape.expansion = u32::try_from(e).unwrap_or(u32::MAX);
        shape.nonscaling = false;
    }
    shape.nonscaling |= nonscaling;
    insert(
        ctx,
        a,
        first,
        true,
        (!nocreate).then_some(shape),
        c"bf.insert",
    );
}

/// Adds `a[first..]` to the filter at `a[1]`, replying one result (or an array of them when
/// `multi`). A missing key is created as `create_as` says (see [`create`]), or is `ERR not found`
/// when `create_as` is None (INSERT's NOCREATE). A full NONSCALING filter ends the array with its error, as
/// RedisBloom does.
fn insert(
    ctx: &Ctx,
    a: &Args,
    first: usize,
    multi: bool,
    create_as: Option<Shape>,
    event: &std::ffi::CStr,
) {
    let key = ctx.open_key(a, 1, true);
    let chain: &mut Chain = match key.slot() {
        Slot::Other => return ctx.reply_error(errors::WRONG_TYPE),
        Slot::Bloom(chain) => chain,
        Slot::Empty => {
            let Some(shape) = create_as else {
                return ctx.reply_error(errors::NOT_FOUND);
            };
            match create(ctx, a, &key, shape, None) {
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
    let (mut replied, mut added, mut refused) = (0, 0, 0);
    let items = (first..a.len()).map(|i| a.get(i));
    chain.add_many(items, limit, |result| {
        replied += 1;
        match result {
            Ok(outcome) => {
                added += u64::from(outcome == AddOutcome::Added);
                ctx.reply_bool(outcome == AddOutcome::Added);
                true
            }
            Err(e) => {
                refused += 1;
                ctx.reply_error(&chain_error_text(&e));
                e != ChainError::Full
            }
        }
    });
    stats::adds(added, chain.bit_bytes() - bytes_before, refused);
    if multi {
        ctx.set_array_len(replied);
    }
    ctx.replicate_verbatim();
    ctx.notify(event, a, 1);
}
