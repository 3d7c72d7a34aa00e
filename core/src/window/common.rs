//! What both window layouts share and neither owns: what a window filter is beyond its layout
//! ([`WindowBase`], with its accessors), the head of its fields in both formats
//! ([`WindowHead`], read, written and checked once), the clock's limit and the rate headroom.

use crate::codec::{DecodeError, FieldReader, FieldWriter};
use crate::scandump::engine::Fields;
use crate::spec::{FilterSpec, Growth, Window};

/// Share of the requested rate the computed worst-case rate may reach: room for sampling
/// noise, so a measured rate stays under the request (as NONSCALING chains have).
pub const HEADROOM: f64 = 0.9;

/// The latest clock a filter takes (2^62: about 146 million years of milliseconds, or that
/// many inserts): every time plus a window stays far from overflowing, so no sum saturates
/// into "expired at once". Later times are taken as this one.
pub const MAX_CLOCK: u64 = 1 << 62;

/// What a window filter is, whichever its layout: the window asked for, the hash seed, the
/// rate, the capacity, how it grows, its clock and how many items it took. Each layout keeps
/// one and answers these through [`base`](crate::window::rotating::Rotating::base).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowBase {
    pub(crate) kind: Window,
    pub(crate) seed: u64,
    /// The requested false-positive rate.
    pub(crate) error: f64,
    /// Items a window holds.
    pub(crate) capacity: u64,
    /// The window in clock units: inserts (`capacity`) or milliseconds.
    pub(crate) window: u64,
    /// How a time window grows in a burst (`Fixed` for a count window).
    pub(crate) growth: Growth,
    /// Inserts so far (count window), or the latest write's Unix ms (time window).
    pub(crate) clock: u64,
    /// Items added (not re-added) since creation: the module's item gauge.
    pub(crate) added: u64,
}

impl WindowBase {
    /// A new filter's, for `spec` (whose window is `Count` or `Time`) under `seed`.
    pub(crate) fn for_spec(spec: &FilterSpec, seed: u64) -> Self {
        let (kind, window, growth) = match spec.window {
            Window::Unbounded | Window::Count => (Window::Count, spec.capacity, Growth::Fixed),
            Window::Time { seconds } => (Window::Time { seconds }, seconds * 1000, spec.growth),
        };
        WindowBase {
            kind,
            seed,
            error: spec.error,
            capacity: spec.capacity,
            window,
            growth,
            clock: 0,
            added: 0,
        }
    }

    /// The window: `Count` (SLIDING) or `Time` (WINDOW).
    pub fn kind(&self) -> Window {
        self.kind
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The requested false-positive rate.
    pub fn error(&self) -> f64 {
        self.error
    }

    /// Items a window holds.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The window, in inserts (count window) or milliseconds (time window).
    pub fn window(&self) -> u64 {
        self.window
    }

    /// How a time window grows in a burst (`Fixed` with NONSCALING, and for a count window).
    pub fn growth(&self) -> Growth {
        self.growth
    }

    /// The latest clock a write happened at.
    pub fn clock(&self) -> u64 {
        self.clock
    }

    /// Items added since creation (re-adds not counted).
    pub fn added(&self) -> u64 {
        self.added
    }

    /// Expansion as both formats store it: 0 when it does not grow.
    pub(crate) fn stored_expansion(&self) -> u64 {
        match self.growth {
            Growth::Fixed | Growth::Expandable => 0,
            Growth::Scaling(n) => u64::from(n),
        }
    }
}

/// The first fields of a window filter of either layout, in the same order in the RDB value
/// and the SCANDUMP header: its kind (1 count, 2 time), seed, rate, capacity, window and the
/// clock units a generation spans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WindowHead {
    pub(crate) kind: u64,
    pub(crate) seed: u64,
    pub(crate) error: f64,
    pub(crate) capacity: u64,
    pub(crate) window: u64,
    pub(crate) span: u64,
}

impl WindowHead {
    /// The head of a filter with this base and generation span.
    pub(crate) fn of(base: &WindowBase, span: u64) -> Self {
        WindowHead {
            kind: match base.kind {
                Window::Time { .. } => 2,
                Window::Count | Window::Unbounded => 1,
            },
            seed: base.seed,
            error: base.error,
            capacity: base.capacity,
            window: base.window,
            span,
        }
    }

    /// Writes it as RDB fields.
    pub(crate) fn write(&self, w: &mut impl FieldWriter) {
        w.unsigned(self.kind);
        w.unsigned(self.seed);
        w.double(self.error);
        for v in [self.capacity, self.window, self.span] {
            w.unsigned(v);
        }
    }

    /// Reads it from RDB fields.
    pub(crate) fn read(r: &mut impl FieldReader) -> Result<Self, DecodeError> {
        Ok(WindowHead {
            kind: r.unsigned()?,
            seed: r.unsigned()?,
            error: r.double()?,
            capacity: r.unsigned()?,
            window: r.unsigned()?,
            span: r.unsigned()?,
        })
    }

    /// Bytes of it in a SCANDUMP header.
    pub(crate) const DUMP_BYTES: usize = 1 + 8 + 8 + 8 + 8 + 8;

    /// Appends it to a SCANDUMP header.
    pub(crate) fn dump(&self, out: &mut Vec<u8>) {
        out.push(self.kind as u8);
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.error.to_le_bytes());
        for v in [self.capacity, self.window, self.span] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// Reads it from a SCANDUMP header whose length was checked.
    pub(crate) fn undump(f: &mut Fields) -> Self {
        WindowHead {
            kind: u64::from(f.u8()),
            seed: f.u64(),
            error: f.f64(),
            capacity: f.u64(),
            window: f.u64(),
            span: f.u64(),
        }
    }

    /// The base of a decoded filter with this head, its stored expansion, clock and count,
    /// checked as every window filter must be: a known kind, a rate a filter can have, an
    /// expansion only for a time window, a capacity, a clock within [`MAX_CLOCK`].
    pub(crate) fn base(
        &self,
        expansion: u64,
        clock: u64,
        added: u64,
    ) -> Result<WindowBase, DecodeError> {
        let (kind, growth) = kind_and_growth(self.kind, self.window, expansion, self.error)?;
        if self.capacity == 0 || clock > MAX_CLOCK {
            return Err(DecodeError::WindowParameters);
        }
        Ok(WindowBase {
            kind,
            seed: self.seed,
            error: self.error,
            capacity: self.capacity,
            window: self.window,
            growth,
            clock,
            added,
        })
    }
}

/// The window and growth a decoded window filter of either layout declares (`kind` 1: count,
/// 2: time; `expansion` 0: it does not grow, which a count window never does), once its
/// error rate is one a filter can have.
fn kind_and_growth(
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
