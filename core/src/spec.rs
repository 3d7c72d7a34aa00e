//! What a new filter is asked to be: its error rate, its capacity and how it grows. Every way of
//! creating a filter (BF.RESERVE, BF.INSERT, an add to a missing key, the module defaults)
//! produces one [`FilterSpec`]; [`crate::Filter::new`] builds from it: a scaling chain
//! ([`crate::Chain`]) or, with a window, a sliding filter ([`crate::Sliding`]).

/// How a filter grows once its newest link is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    /// NONSCALING: one link, and adds are refused once it is full.
    Fixed,
    /// A new link of `n` times the last one's capacity (RedisBloom's EXPANSION, at least 1).
    Scaling(u32),
    /// rsbloom's `EXPANDABLE`: a growing filter ([`crate::growing`]), no links.
    Expandable,
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
            Growth::Fixed | Growth::Expandable => Self::FIXED_STORED_EXPANSION,
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
    Time {
        /// The window's length, in whole seconds.
        seconds: u64,
    },
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
    /// What the filter remembers.
    pub window: Window,
    /// Whether an add of an item a window already holds refreshes it (set again in the
    /// newest generation, so it stays a full window more): the default. `NOREFRESH` makes
    /// such an add answer 0 and change nothing, so an item leaves a window after its first
    /// add, however often it is added again. Only a window filter has the mode: it is
    /// `true` for every other spec.
    pub refresh: bool,
}

/// A cuckoo filter to create (CF.RESERVE's arguments, or an implicit creation's defaults),
/// before its seed is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooSpec {
    /// Items asked for; at least `2 × bucket_size`.
    pub capacity: u64,
    /// Slots per bucket, 1 to 255.
    pub bucket_size: u8,
    /// Kicks tried before growing, 1 to 65535.
    pub max_iterations: u16,
    /// Growth factor of each new sub-filter's buckets: 0 (never grows) or a power of two up
    /// to 32768, as RedisBloom stores it.
    pub expansion: u16,
}

impl CuckooSpec {
    /// RedisBloom's capacity for a filter an add creates (fixed: INITIAL_SIZE does not apply).
    pub const DEFAULT_CAPACITY: u64 = 1024;
    /// RedisBloom's default slots per bucket.
    pub const DEFAULT_BUCKET_SIZE: u8 = 2;
    /// RedisBloom's default kicks before growing.
    pub const DEFAULT_MAX_ITERATIONS: u16 = 20;
    /// RedisBloom's default expansion.
    pub const DEFAULT_EXPANSION: u16 = 1;

    /// The filter an add to a missing key creates: RedisBloom's defaults, with `capacity`
    /// from CF.INSERT's CAPACITY.
    pub const fn implicit(capacity: u64) -> Self {
        CuckooSpec {
            capacity,
            bucket_size: Self::DEFAULT_BUCKET_SIZE,
            max_iterations: Self::DEFAULT_MAX_ITERATIONS,
            expansion: Self::DEFAULT_EXPANSION,
        }
    }

    /// Buckets of the first sub-filter: `capacity / bucket_size` rounded up to a power of two.
    /// May be 2^64 or more in truth: then `u64::MAX`, which every bound refuses.
    pub fn buckets(&self) -> u64 {
        (self.capacity / u64::from(self.bucket_size).max(1))
            .max(1)
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX)
    }

    /// The expansion RedisBloom stores for a requested one: the next power of two (0 stays 0).
    pub fn stored_expansion(requested: u16) -> u16 {
        if requested == 0 {
            0
        } else {
            requested.next_power_of_two()
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

    #[test]
    fn cuckoo_buckets_and_expansion_round_as_redisbloom_does() {
        let buckets = |capacity, bucket_size| {
            CuckooSpec {
                capacity,
                bucket_size,
                ..CuckooSpec::implicit(0)
            }
            .buckets()
        };
        assert_eq!(buckets(1000, 2), 512);
        assert_eq!(buckets(4, 2), 2);
        assert_eq!(buckets(5, 2), 2);
        assert_eq!(buckets(7, 2), 4);
        assert_eq!(buckets(100000, 2), 65536);
        assert_eq!(buckets(510, 255), 2);
        assert_eq!(buckets(u64::MAX, 1), u64::MAX);
        assert_eq!(buckets(1 << 57, 2), 1 << 56);
        let stored: Vec<u16> = [0, 1, 3, 5, 32767, 32768]
            .into_iter()
            .map(CuckooSpec::stored_expansion)
            .collect();
        assert_eq!(stored, [0, 1, 4, 8, 32768, 32768]);
    }
}
