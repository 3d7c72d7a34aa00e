//! BF.ADD key item, BF.MADD key item [item ...]: the insert path, creating the filter with
//! the module defaults when the key is missing.

use super::{chain_error_text, new_chain, Args, Ctx, Slot};
use crate::core::{AddOutcome, Chain, ChainError};
use crate::{config, errors};

pub fn add(ctx: &Ctx, a: &Args) {
    if a.len() != 3 {
        return ctx.reply_wrong_arity();
    }
    insert(ctx, a, 2, false, c"bf.add");
}

pub fn madd(ctx: &Ctx, a: &Args) {
    if a.len() < 3 {
        return ctx.reply_wrong_arity();
    }
    insert(ctx, a, 2, true, c"bf.madd");
}

/// Adds `a[first..]` to the filter at `a[1]`, replying one result (or an array of them when
/// `multi`). A full NONSCALING filter ends the array with its error, as RedisBloom does.
fn insert(ctx: &Ctx, a: &Args, first: usize, multi: bool, event: &std::ffi::CStr) {
    let key = ctx.open_key(a, 1, true);
    let chain: &mut Chain = match key.slot() {
        Slot::Other => return ctx.reply_error(errors::WRONG_TYPE),
        Slot::Bloom(chain) => chain,
        Slot::Empty => {
            let expansion = config::expansion();
            match new_chain(
                config::error_rate(),
                config::initial_size(),
                expansion.max(1),
                expansion == 0,
            ) {
                Ok(chain) => key.create(chain),
                Err(text) => return ctx.reply_error(&text),
            }
        }
    };
    let limit = config::max_filter_bytes();
    if multi {
        ctx.reply_postponed_array();
    }
    let mut replied = 0;
    for i in first..a.len() {
        replied += 1;
        match chain.add(a.get(i), limit) {
            Ok(outcome) => ctx.reply_bool(outcome == AddOutcome::Added),
            Err(e) => {
                ctx.reply_error(&chain_error_text(&e));
                if e == ChainError::Full {
                    break;
                }
            }
        }
    }
    if multi {
        ctx.set_array_len(replied);
    }
    ctx.replicate_verbatim();
    ctx.notify(event, a, 1);
}
