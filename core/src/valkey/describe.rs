//! What a valkey-bloom filter says of itself: BF.INFO's fields from its loaded values, as
//! valkey-bloom answers them, and BF.DEBUG's lines in a chain's shape.

use crate::describe::{format_g, Summary};
use crate::valkey::filter::ValkeyBloom;

impl ValkeyBloom {
    /// BF.INFO's fields.
    pub fn summary(&self) -> Summary {
        Summary {
            capacity: self.capacity(),
            filters: self.filters().len() as u64,
            items: self.items(),
            expansion: (self.expansion() != 0).then_some(self.expansion()),
            layout: None,
        }
    }

    /// BF.DEBUG: a chain's lines with its sub-filters as links: their `k`, capacity, items and
    /// the tightened rate each was sized for (SipHash: 64-bit).
    pub fn debug_lines(&self) -> Vec<String> {
        let filters = self.filters().iter().enumerate().map(|(i, f)| {
            format!(
                "bytes:{} bits:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{}",
                f.bits().len(),
                f.bit_count(),
                f.hashes(),
                f.capacity,
                f.items,
                format_g(self.rate_of(i))
            )
        });
        std::iter::once(format!("size:{}", self.items()))
            .chain(filters)
            .collect()
    }
}
