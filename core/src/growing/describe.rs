//! What a growing filter says of itself: BF.INFO's fields (its capacity is what it holds before
//! its next split; one filter; no expansion rate, as it has no links; `Layout: expandable`)
//! and BF.DEBUG's lines.

use crate::describe::{format_g, Summary};
use crate::growing::design::PER_CHUNK;
use crate::growing::filter::Growing;

impl Growing {
    /// BF.INFO's fields.
    pub fn summary(&self) -> Summary {
        Summary {
            capacity: PER_CHUNK * self.chunk_count(),
            filters: 1,
            items: self.items,
            expansion: None,
            layout: Some(c"expandable"),
        }
    }

    /// BF.DEBUG: `size:<items>`, then `layout:expandable` with the rate, the widths, the
    /// levels, the split pointer, the chunks and their entries and bytes.
    pub fn debug_lines(&self) -> Vec<String> {
        let entries: u64 = self.chunks().map(|c| c.entries() as u64).sum();
        vec![
            format!("size:{}", self.items),
            format!(
                "layout:expandable ratio:{} capacity:{} cellbits:{} slotbits:{} startlevel:{} \
                 level:{} split:{} chunks:{} entries:{} bytes:{}",
                format_g(self.error),
                self.capacity,
                self.shape.cell_bits,
                self.shape.slot_bits,
                self.start_level,
                self.level,
                self.split,
                self.chunk_count(),
                entries,
                self.block_bytes
            ),
        ]
    }
}
