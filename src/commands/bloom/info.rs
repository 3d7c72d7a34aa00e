//! `BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION | WINDOW]`, `BF.CARD key`
//!
//! A window filter answers the five fields as a filter of its window: its capacity, its
//! memory, its live slices as "filters", the items inside the window, its expansion (null when
//! it does not grow). rsbloom's `WINDOW` field adds the window itself. A valkey-bloom filter
//! answers them from its loaded values, as valkey-bloom does (Size is rsbloom's memory).

use std::ffi::CStr;

use crate::commands::{with_optional, with_value};
use crate::ffi::{Args, Ctx};
use crate::forget;
use rsbloom_core::args;
use rsbloom_core::describe::{Summary, WindowSummary};
use rsbloom_core::errors;
use rsbloom_core::{Filter, Window};

/// One BF.INFO field: the option that selects it, its name in the reply, and its value from
/// the kind's summary and the memory (None is a null).
struct Field {
    option: &'static str,
    name: &'static CStr,
    value: fn(&Summary, u64) -> Option<i64>,
}

/// The fields in reply order.
const FIELDS: [Field; 5] = [
    Field {
        option: "CAPACITY",
        name: c"Capacity",
        value: |s, _| Some(saturate(s.capacity)),
    },
    Field {
        option: "SIZE",
        name: c"Size",
        value: |_, memory| Some(saturate(memory)),
    },
    Field {
        option: "FILTERS",
        name: c"Number of filters",
        value: |s, _| Some(saturate(s.filters)),
    },
    Field {
        option: "ITEMS",
        name: c"Number of items inserted",
        value: |s, _| Some(saturate(s.items)),
    },
    Field {
        option: "EXPANSION",
        name: c"Expansion rate",
        value: |s, _| s.expansion.map(i64::from),
    },
];

/// `BF.INFO key WINDOW`: a map (flat pairs in RESP2) of the window, its unit, the slack in that
/// unit, the live slices (or generations), the items inside the window, the bits each item
/// sets, the layout (`rotating`, or `age-partitioned` for a filter of the first layout), and
/// what an add of a held item does (`Adds`: `refresh`, or `norefresh` in that mode).
fn reply_window(ctx: &Ctx, w: &WindowSummary) {
    let (unit, window, slack) = match w.kind {
        Window::Count | Window::Unbounded => (c"items", w.window, w.slack),
        Window::Time { .. } => (c"seconds", w.window / 1000, w.slack.div_ceil(1000)),
    };
    ctx.reply_map(8);
    ctx.reply_simple_string(c"Window");
    ctx.reply_integer(saturate(window));
    ctx.reply_simple_string(c"Unit");
    ctx.reply_simple_string(unit);
    ctx.reply_simple_string(c"Slack");
    ctx.reply_integer(saturate(slack));
    ctx.reply_simple_string(c"Slices");
    ctx.reply_integer(saturate(w.live));
    ctx.reply_simple_string(c"Items in window");
    ctx.reply_integer(saturate(w.items));
    ctx.reply_simple_string(c"Hashes per item");
    ctx.reply_integer(i64::from(w.hashes));
    ctx.reply_simple_string(c"Layout");
    ctx.reply_simple_string(w.layout);
    ctx.reply_simple_string(c"Adds");
    ctx.reply_simple_string(if w.refresh { c"refresh" } else { c"norefresh" });
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
        forget::note_read(ctx, a, 1, filter, now);
        let summary = filter.summary(now);
        let memory = filter.memory_usage();
        let reply_value = |f: &Field| match (f.value)(&summary, memory) {
            Some(n) => ctx.reply_integer(n),
            None => ctx.reply_null(),
        };
        if a.len() == 2 {
            ctx.reply_map(FIELDS.len() + usize::from(summary.layout.is_some()));
            for f in &FIELDS {
                ctx.reply_simple_string(f.name);
                reply_value(f);
            }
            if let Some(layout) = summary.layout {
                ctx.reply_simple_string(c"Layout");
                ctx.reply_simple_string(layout);
            }
            return;
        }
        if args::is(a.get(2), "WINDOW") {
            return match filter.window_summary(now) {
                Some(view) => reply_window(ctx, &view),
                None => ctx.reply_error(errors::NOT_A_WINDOW),
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
        let now = ctx.now_ms();
        if let Some(f) = &filter {
            forget::note_read(ctx, a, 1, f, now);
        }
        ctx.reply_integer(filter.map_or(0, |f| saturate(f.card(now))));
    });
}
