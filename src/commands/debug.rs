//! BF.DEBUG key: the chain's item count, then one status line per link.

use crate::core::Chain;
use crate::redis::{Args, Ctx};

pub fn debug(ctx: &Ctx, a: &Args) {
    if a.len() != 2 {
        return ctx.reply_wrong_arity();
    }
    let mut key = ctx.open_key(a, 1, false);
    match key.filter() {
        Err(text) => ctx.reply_error(text),
        Ok(chain) => {
            let lines = lines(chain);
            ctx.reply_array(lines.len());
            for line in &lines {
                ctx.reply_bulk(line.as_bytes());
            }
        }
    }
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
