//! BF.DEBUG key: the chain's item count, then one status line per link; for a window filter,
//! its window, then one line per slice with its age and fill; for a valkey-bloom filter, the
//! chain's lines with its sub-filters as links.

use crate::commands::with_value;
use crate::ffi::{Args, Ctx};
use rsbloom_core::window::partitioned::limits::OPEN;
use rsbloom_core::window::partitioned::Sliding;
use rsbloom_core::window::rotating::{Rotating, EMPTY};
use rsbloom_core::Window;
use rsbloom_core::{Chain, Filter, ValkeyBloom};

pub fn debug(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    with_value(ctx, a, false, |filter: &mut Filter| {
        let lines = match filter {
            Filter::Chain(chain) => lines(chain),
            Filter::Sliding(s) => window_lines(s, ctx.now_ms()),
            Filter::Rotating(r) => rotating_lines(r, ctx.now_ms()),
            Filter::Valkey(v) => valkey_lines(v),
        };
        ctx.reply_array(lines.len());
        for line in &lines {
            ctx.reply_bulk(line.as_bytes());
        }
    });
}

/// `size:<items>`, then per link
/// `bytes:<b> bits:<m> hashes:<k> hashwidth:<64|32> capacity:<n> size:<items> ratio:<error>`.
fn lines(chain: &Chain) -> Vec<String> {
    let links = chain.links().iter().map(|l| {
        format!(
            "bytes:{} bits:{} hashes:{} hashwidth:{} capacity:{} size:{} ratio:{}",
            l.byte_count(),
            l.bit_count(),
            l.hashes,
            l.layout.hash_width(),
            l.capacity,
            l.items,
            format_g(l.error)
        )
    });
    std::iter::once(format!("size:{}", chain.items()))
        .chain(links)
        .collect()
}

/// A chain's lines for a valkey-bloom filter, in the same shape: its sub-filters' `k`,
/// capacity, items and the tightened rate each was sized for (SipHash: 64-bit).
fn valkey_lines(v: &ValkeyBloom) -> Vec<String> {
    let filters = v.filters().iter().enumerate().map(|(i, f)| {
        format!(
            "bytes:{} bits:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{}",
            f.bits().len(),
            f.bit_count(),
            f.hashes(),
            f.capacity,
            f.items,
            format_g(v.rate_of(i))
        )
    });
    std::iter::once(format!("size:{}", v.items()))
        .chain(filters)
        .collect()
}

/// `size:<items in window> window:<w> unit:<items|ms> clock:<c> hashes:<k> generations:<l>`,
/// then per slice, oldest first: `slice:<number> live:<0|1> age:<clock - started>
/// ended:<clock units, or open> bits:<m> items:<added while newest> load:<bits set>/<capacity>
/// fill:<estimated share of set bits> level:<growth step>`. Ages and times are in the window's
/// unit: inserts or milliseconds.
fn window_lines(s: &Sliding, now: u64) -> Vec<String> {
    let clock = s.clock_at(now);
    let first_live = s.first_live(clock);
    let unit = match s.kind() {
        Window::Count | Window::Unbounded => "items",
        Window::Time { .. } => "ms",
    };
    let head = format!(
        "size:{} window:{} unit:{unit} clock:{clock} hashes:{} generations:{}",
        s.card(now),
        s.window(),
        s.hashes(),
        s.generations()
    );
    let slices = s.slices().iter().enumerate().map(|(i, slice)| {
        let ended = match slice.ended {
            OPEN => "open".to_string(),
            t => t.to_string(),
        };
        format!(
            "slice:{} live:{} age:{} ended:{ended} bits:{} items:{} load:{}/{} fill:{} level:{}",
            slice.generation,
            u8::from(i >= first_live),
            clock.saturating_sub(slice.started),
            slice.bit_count(),
            slice.count,
            slice.load,
            slice.capacity,
            format_g(slice.fill()),
            slice.level
        )
    });
    std::iter::once(head).chain(slices).collect()
}

/// `size:<items in window> window:<w> unit:<items|ms> clock:<c> layout:rotating hashes:<k>
/// generations:<r> blocks:<b>`, then per slot: `slot:<s> generation:<number or none>
/// live:<0|1> items:<taken> load:<base items>/<base limit> extras:<n>`, and after it one
/// `extra hashes:<k> blocks:<b> load:<items>/<capacity>` line per extra array.
fn rotating_lines(r: &Rotating, now: u64) -> Vec<String> {
    let clock = r.clock_at(now);
    let newest = r.generation_at(clock);
    let unit = match r.kind() {
        Window::Count | Window::Unbounded => "items",
        Window::Time { .. } => "ms",
    };
    let mut lines = vec![format!(
        "size:{} window:{} unit:{unit} clock:{clock} layout:rotating hashes:{} generations:{} \
         blocks:{}",
        r.card(now),
        r.window(),
        r.hashes(),
        r.generations(),
        r.blocks()
    )];
    for (i, slot) in r.slots().iter().enumerate() {
        let generation = match slot.generation {
            EMPTY => "none".to_string(),
            g => g.to_string(),
        };
        let live = r.is_live(i, newest);
        lines.push(format!(
            "slot:{i} generation:{generation} live:{} items:{} load:{}/{} extras:{}",
            u8::from(live),
            slot.count(),
            slot.load,
            slot.limit,
            slot.extras.len()
        ));
        for e in &slot.extras {
            lines.push(format!(
                "extra hashes:{} blocks:{} load:{}/{}",
                e.hashes, e.blocks, e.load, e.capacity
            ));
        }
    }
    lines
}

/// Formats like C's `printf("%g")`: 6 significant digits, trailing zeros dropped, scientific
/// notation (with a signed exponent of at least two digits) below 1e-4 or from 1e6 on.
pub fn format_g(x: f64) -> String {
    const PRECISION: i32 = 6;
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // The exponent after rounding to PRECISION digits decides the style, as in C.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, x);
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    if (-4..PRECISION).contains(&exp) {
        let decimals = (PRECISION - 1 - exp) as usize;
        trim_zeros(&format!("{x:.decimals$}")).to_string()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim_zeros(mantissa), exp.abs())
    }
}

/// Drops trailing fractional zeros and a bare trailing point.
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn format_g_matches_c() {
        for (x, want) in [
            (0.005, "0.005"),
            (0.0025, "0.0025"),
            (0.00125, "0.00125"),
            (6.25e-05, "6.25e-05"),
            (1.5625e-05, "1.5625e-05"),
            (5e-301, "5e-301"),
            (1.0, "1"),
            (0.5, "0.5"),
            (0.0001, "0.0001"),
            (0.1 + 0.2, "0.3"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (999999.5, "1e+06"),
            (0.000099999996, "0.0001"),
            (1.0 / 3.0, "0.333333"),
            (2.5e-10, "2.5e-10"),
            (0.0, "0"),
            (-0.25, "-0.25"),
        ] {
            assert_eq!(format_g(x), want, "{x:e}");
        }
    }
}
