//! What a new filter is asked to be: its error rate, its capacity and how it grows. Every way of
//! creating a filter (BF.RESERVE, BF.INSERT, an add to a missing key, the module defaults)
//! produces one [`FilterSpec`]; [`super::Filter::new`] builds from it: a scaling chain
//! ([`super::Chain`]) or, with a window, a sliding filter ([`super::Sliding`]).

/// How a filter grows once its newest link is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    /// NONSCALING: one link, and adds are refused once it is full.
    Fixed,
    /// A new link of `n` times the last one's capacity (RedisBloom's EXPANSION, at least 1).
    Scaling(u32),
}

impl Growth {
    /// The expansion every NONSCALING filter stores (RedisBloom's default growth). A NONSCALING
    /// filter never uses it, and its replicated form (`NONSCALING`) carries no expansion, so it
    /// stores one fixed value: a replica or an AOF replay then rebuilds the same bits whatever
    /// its own `bf.expansion`.
    pub const FIXED_STORED_EXPANSION: u32 = 2;

    /// The growth an expansion setting means: RedisBloom's rule that 0 is NONSCALING, here and
    /// nowhere else.
    pub fn from_expansion(expansion: u32) -> Growth {
        match expansion {
            0 => Growth::Fixed,
            n => Growth::Scaling(n),
        }
    }

    /// The expansion a chain of this growth stores (and SCANDUMP, the RDB and BF.INFO show).
    pub fn stored_expansion(self) -> u32 {
        match self {
            Growth::Fixed => Self::FIXED_STORED_EXPANSION,
            Growth::Scaling(n) => n,
        }
    }
}

/// What a filter remembers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Every item ever added (RedisBloom's filters).
    Unbounded,
    /// rsbloom's `SLIDING`: the newest `capacity` items added.
    Count,
    /// rsbloom's `WINDOW seconds`: the items added in the last `seconds`.
    Time { seconds: u64 },
}

impl Window {
    /// The longest `WINDOW` accepted, in seconds (about 136 years): its milliseconds and every
    /// time sum the filter makes stay far inside 64 bits.
    pub const MAX_SECONDS: u64 = u32::MAX as u64;
}

/// A filter to create, before its seed is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilterSpec {
    /// The false-positive rate to honour, in (0, 1).
    pub error: f64,
    /// Items the first link holds, at least 1; for a window filter, the items a window holds.
    pub capacity: u64,
    /// How the filter grows; a `Count` window never does (it is always `Fixed` there).
    pub growth: Growth,
    pub window: Window,
}

impl FilterSpec {
    /// A RedisBloom filter: no window.
    pub fn unbounded(error: f64, capacity: u64, growth: Growth) -> Self {
        FilterSpec {
            error,
            capacity,
            growth,
            window: Window::Unbounded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_zero_is_fixed_and_fixed_stores_one_expansion() {
        assert_eq!(Growth::from_expansion(0), Growth::Fixed);
        assert_eq!(Growth::from_expansion(4), Growth::Scaling(4));
        assert_eq!(Growth::Fixed.stored_expansion(), 2);
        assert_eq!(Growth::Scaling(7).stored_expansion(), 7);
    }
}
