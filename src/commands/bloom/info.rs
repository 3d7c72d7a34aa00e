//! `BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION | WINDOW]`, `BF.CARD key`
//!
//! A window filter answers the five fields as a filter of its window: its capacity, its
//! memory, its live slices as "filters", the items inside the window, its expansion (null when
//! it does not grow). rsbloom's `WINDOW` field adds the window itself.

use std::ffi::CStr;

use crate::commands::{with_optional, with_value};
use crate::redis::{Args, Ctx};
use rsbloom_core::args;
use rsbloom_core::errors;
use rsbloom_core::window::sliding::Sliding;
use rsbloom_core::Window;
use rsbloom_core::{Filter, Growth};

/// One BF.INFO field: the option that selects it, its name in the reply, and its value at the
/// server time `now` (None is a null).
struct Field {
    option: &'static str,
    name: &'static CStr,
    value: fn(&Filter, u64) -> Option<i64>,
}

/// The fields in reply order.
const FIELDS: [Field; 5] = [
    Field {
        option: "CAPACITY",
        name: c"Capacity",
        value: |f, _| {
            Some(saturate(match f {
                Filter::Chain(c) => c.capacity(),
                Filter::Sliding(s) => s.capacity(),
            }))
        },
    },
    Field {
        option: "SIZE",
        name: c"Size",
        value: |f, _| Some(saturate(f.memory_usage())),
    },
    Field {
        option: "FILTERS",
        name: c"Number of filters",
        value: |f, now| {
            Some(saturate(match f {
                Filter::Chain(c) => c.links().len() as u64,
                Filter::Sliding(s) => live_slices(s, now),
            }))
        },
    },
    Field {
        option: "ITEMS",
        name: c"Number of items inserted",
        value: |f, now| Some(saturate(f.card(now))),
    },
    Field {
        option: "EXPANSION",
        name: c"Expansion rate",
        value: |f, _| match f {
            Filter::Chain(c) => (!c.is_nonscaling()).then_some(i64::from(c.expansion())),
            Filter::Sliding(s) => match s.growth() {
                Growth::Fixed => None,
                Growth::Scaling(n) => Some(i64::from(n)),
            },
        },
    },
];

/// Slices a read at `now` looks at.
fn live_slices(s: &Sliding, now: u64) -> u64 {
    (s.slices().len() - s.first_live(s.clock_at(now))) as u64
}

/// `BF.INFO key WINDOW`: a map (flat pairs in RESP2) of the window, its unit, the slack in that
/// unit, the live slices, the items inside the window and the bits each item sets.
fn reply_window(ctx: &Ctx, s: &Sliding, now: u64) {
    let (unit, window, slack) = match s.kind() {
        Window::Count | Window::Unbounded => (c"items", s.window(), s.slack()),
        Window::Time { .. } => (c"seconds", s.window() / 1000, s.slack().div_ceil(1000)),
    };
    ctx.reply_map(6);
    ctx.reply_simple_string(c"Window");
    ctx.reply_integer(saturate(window));
    ctx.reply_simple_string(c"Unit");
    ctx.reply_simple_string(unit);
    ctx.reply_simple_string(c"Slack");
    ctx.reply_integer(saturate(slack));
    ctx.reply_simple_string(c"Slices");
    ctx.reply_integer(saturate(live_slices(s, now)));
    ctx.reply_simple_string(c"Items in window");
    ctx.reply_integer(saturate(s.card(now)));
    ctx.reply_simple_string(c"Hashes per item");
    ctx.reply_integer(i64::from(s.hashes()));
}

fn saturate(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// BF.INFO: a map of every field (a flat array of pairs in RESP2), or of the one field asked
/// for, which RESP2 gets as a one-element array holding only the value (as RedisBloom does).
pub fn info(ctx: &Ctx, a: &Args) {
    if !(2..=3).contains(&a.len()) {
        return ctx.reply_wrong_arity();
    }
    with_value(ctx, a, false, |filter: &mut Filter| {
        let now = ctx.now_ms();
        let reply_value = |f: &Field| match (f.value)(filter, now) {
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
        if args::is(a.get(2), "WINDOW") {
            return match filter {
                Filter::Sliding(s) => reply_window(ctx, s, now),
                Filter::Chain(_) => ctx.reply_error(errors::NOT_A_WINDOW),
            };
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
    });
}

/// BF.CARD: the number of items inserted (for a window filter, inside the window), 0 for a
/// missing key.
pub fn card(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    with_optional(ctx, a, |filter: Option<&mut Filter>| {
        ctx.reply_integer(filter.map_or(0, |f| saturate(f.card(ctx.now_ms()))));
    });
}
