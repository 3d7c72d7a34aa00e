//! What a chain says of itself: BF.INFO's fields and BF.DEBUG's lines.

use crate::bloom::chain::Chain;
use crate::describe::{format_g, Summary};

impl Chain {
    /// BF.INFO's fields.
    pub fn summary(&self) -> Summary {
        Summary {
            capacity: self.capacity(),
            filters: self.links().len() as u64,
            items: self.items(),
            expansion: (!self.is_nonscaling()).then_some(self.expansion()),
            layout: None,
        }
    }

    /// BF.DEBUG: `size:<items>`, then per link `bytes:<b> bits:<m> hashes:<k>
    /// hashwidth:<64|32> capacity:<n> size:<items> ratio:<error>`.
    pub fn debug_lines(&self) -> Vec<String> {
        let links = self.links().iter().map(|l| {
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
        std::iter::once(format!("size:{}", self.items()))
            .chain(links)
            .collect()
    }
}
