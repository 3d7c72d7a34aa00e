//! What both window layouts share and neither owns: the clock's limit, the rate headroom,
//! and the check of the window and growth a decoded filter of either layout declares.

use crate::codec::DecodeError;
use crate::spec::{Growth, Window};

/// Share of the requested rate the computed worst-case rate may reach: room for sampling
/// noise, so a measured rate stays under the request (as NONSCALING chains have).
pub const HEADROOM: f64 = 0.9;

/// The latest clock a filter takes (2^62: about 146 million years of milliseconds, or that
/// many inserts): every time plus a window stays far from overflowing, so no sum saturates
/// into "expired at once". Later times are taken as this one.
pub const MAX_CLOCK: u64 = 1 << 62;

/// The window and growth a decoded window filter of either layout declares (`kind` 1: count,
/// 2: time; `expansion` 0: it does not grow, which a count window never does), once its
/// error rate is one a filter can have.
pub(crate) fn kind_and_growth(
    kind: u64,
    window: u64,
    expansion: u64,
    error: f64,
) -> Result<(Window, Growth), DecodeError> {
    let kind = match kind {
        1 => Window::Count,
        2 => Window::Time {
            seconds: window / 1000,
        },
        _ => return Err(DecodeError::WindowParameters),
    };
    let growth = match (kind, expansion) {
        (_, 0) => Growth::Fixed,
        (Window::Time { .. }, n) if n <= u64::from(u32::MAX) => Growth::Scaling(n as u32),
        _ => return Err(DecodeError::Expansion),
    };
    if !(error > 0.0 && error < 1.0) {
        return Err(DecodeError::ErrorRate);
    }
    Ok((kind, growth))
}
