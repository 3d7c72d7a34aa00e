//! What a Bloom filter (a chain or a window filter) answers to an add.

/// Why a Bloom filter (a chain or a window filter) could not be created or could not take an
/// item.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterError {
    /// A NONSCALING chain is full.
    Full,
    /// The chain would need `needed` bytes, over the per-filter limit.
    TooLarge {
        /// Bytes the filter would need.
        needed: u64,
        /// The per-filter limit.
        limit: u64,
    },
    /// One link would need `needed` bytes, over the most one link may have
    /// ([`MAX_LINK_BITS`](crate::sizing::MAX_LINK_BITS)), although the per-filter limit allows it.
    LinkTooLarge {
        /// Bytes the link would need.
        needed: u64,
    },
    /// No link can honour the next error rate (it underflowed) or capacity (overflowed).
    CannotGrow,
    /// A NONSCALING time window took more than its capacity within a window: another slice
    /// would pass its fixed memory, and no slice may go while items inside the window need it.
    WindowFull,
    /// The allocator refused the bits (an address-space limit, strict overcommit, a
    /// container's memory limit): nothing changed.
    OutOfMemory {
        /// Bytes of the refused block.
        needed: u64,
    },
}

impl From<crate::memory::OutOfMemory> for FilterError {
    fn from(e: crate::memory::OutOfMemory) -> Self {
        FilterError::OutOfMemory { needed: e.bytes }
    }
}

/// Result of adding one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddOutcome {
    /// At least one of its bits was unset: it is new.
    Added,
    /// All its bits were set already: it may have been added before.
    Present,
}
