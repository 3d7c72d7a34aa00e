//! What a filter says of itself, in the kinds' own words: BF.INFO's fields ([`Summary`]),
//! `BF.INFO key WINDOW`'s ([`WindowSummary`]) and BF.DEBUG's lines. Each kind fills these in
//! its own folder (`describe.rs`); the module only replies them, so a new layout's INFO and
//! DEBUG live with the layout.

use crate::spec::{Growth, Window};

/// BF.INFO's fields but `Size` (the memory, which the module measures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// `Capacity`: the items it was sized for (a window's: the items a window holds).
    pub capacity: u64,
    /// `Number of filters`: links, sub-filters, or a window's live slices or generations.
    pub filters: u64,
    /// `Number of items inserted` (a window's: the items inside the window).
    pub items: u64,
    /// `Expansion rate`; None (a null) when it does not grow.
    pub expansion: Option<u32>,
    /// rsbloom's `Layout` field, which only layouts RedisBloom does not have add (a growing
    /// filter's `expandable`), so a RedisBloom filter's reply stays RedisBloom's.
    pub layout: Option<&'static std::ffi::CStr>,
}

/// `BF.INFO key WINDOW`: what a window filter of either layout says of its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSummary {
    /// `rotating`, or `age-partitioned` for the first layout.
    pub layout: &'static std::ffi::CStr,
    /// A count window or a time window.
    pub kind: Window,
    /// The window, in the clock's units (inserts or milliseconds).
    pub window: u64,
    /// The most an item outlives the window, in the same units.
    pub slack: u64,
    /// Slices (first layout) or generations (rotating) a read looks at.
    pub live: u64,
    /// Items inside the window.
    pub items: u64,
    /// Bits each item sets.
    pub hashes: u32,
    /// Whether an add of a held item refreshes it (false: `NOREFRESH`).
    pub refresh: bool,
}

/// `Expansion rate` of a growth: None when it does not grow.
pub(crate) fn expansion(growth: Growth) -> Option<u32> {
    match growth {
        Growth::Fixed | Growth::Expandable => None,
        Growth::Scaling(n) => Some(n),
    }
}

/// The unit of a window's clock as BF.DEBUG names it.
pub(crate) fn clock_unit(kind: Window) -> &'static str {
    match kind {
        Window::Count | Window::Unbounded => "items",
        Window::Time { .. } => "ms",
    }
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
