//! BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION], BF.CARD key

use std::ffi::CStr;

use crate::core::Chain;
use crate::redis::{Args, Ctx, KeyContent};
use crate::{args, errors};

/// One BF.INFO field: the option that selects it, its name in the reply, and its value (None
/// is a null).
struct Field {
    option: &'static str,
    name: &'static CStr,
    value: fn(&Chain) -> Option<i64>,
}

/// The fields in reply order.
const FIELDS: [Field; 5] = [
    Field {
        option: "CAPACITY",
        name: c"Capacity",
        value: |c| Some(saturate(c.capacity())),
    },
    Field {
        option: "SIZE",
        name: c"Size",
        value: |c| Some(saturate(c.memory_usage())),
    },
    Field {
        option: "FILTERS",
        name: c"Number of filters",
        value: |c| Some(saturate(c.links().len() as u64)),
    },
    Field {
        option: "ITEMS",
        name: c"Number of items inserted",
        value: |c| Some(saturate(c.items())),
    },
    Field {
        option: "EXPANSION",
        name: c"Expansion rate",
        value: |c| (!c.is_nonscaling()).then_some(i64::from(c.expansion())),
    },
];

fn saturate(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// BF.INFO: a map of every field (a flat array of pairs in RESP2), or of the one field asked
/// for, which RESP2 gets as a one-element array holding only the value (as RedisBloom does).
pub fn info(ctx: &Ctx, a: &Args) {
    if !(2..=3).contains(&a.len()) {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    let chain = match key.filter() {
        Ok(chain) => chain,
        Err(text) => return ctx.reply_error(text),
    };
    let reply_value = |f: &Field| match (f.value)(chain) {
        Some(n) => ctx.reply_integer(n),
        None => ctx.reply_null(),
    };
    if a.len() == 2 {
        ctx.reply_map(FIELDS.len());
        for f in &FIELDS {
            ctx.reply_simple_string(f.name);
            reply_value(f);
        }
        return;
    }
    let Some(f) = FIELDS.iter().find(|f| args::is(a.get(2), f.option)) else {
        return ctx.reply_error(errors::INVALID_INFO_VALUE);
    };
    if ctx.is_resp3() {
        ctx.reply_map(1);
        ctx.reply_simple_string(f.name);
    } else {
        ctx.reply_array(1);
    }
    reply_value(f);
}

/// BF.CARD: the number of items inserted, 0 for a missing key.
pub fn card(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    match key.content() {
        KeyContent::Empty => ctx.reply_integer(0),
        KeyContent::Other => ctx.reply_error(errors::WRONG_TYPE),
        KeyContent::Bloom(chain) => ctx.reply_integer(saturate(chain.items())),
    }
}
