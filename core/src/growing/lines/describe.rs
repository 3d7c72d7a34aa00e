//! What a one-line growing filter says of itself: BF.INFO's fields (its capacity is what its
//! lines hold at their mean load; one filter; no expansion rate; `Layout: expandable`, as the
//! chunk layout's) and BF.DEBUG's lines.

use crate::describe::{format_g, Summary};
use crate::growing::lines::filter::LineFilter;

impl LineFilter {
    /// BF.INFO's fields.
    pub fn summary(&self) -> Summary {
        Summary {
            capacity: u64::from(self.widths.load) * self.line_count(),
            filters: 1,
            items: self.items,
            expansion: None,
            layout: Some(c"expandable"),
        }
    }

    /// BF.DEBUG: `size:<items>`, then `layout:expandable` with the rate, the starting
    /// capacity, `lines` (this layout), the widths, the level, pass and next group, the lines,
    /// the overflow's entries and the bytes counted against the per-filter limit.
    pub fn debug_lines(&self) -> Vec<String> {
        vec![
            format!("size:{}", self.items),
            format!(
                "layout:expandable ratio:{} capacity:{} format:lines remainderbits:{} load:{} \
                 level:{} pass:{} next:{} lines:{} overflow:{} bytes:{}",
                format_g(self.error),
                self.capacity,
                self.widths.rem,
                self.widths.load,
                self.level,
                self.pass,
                self.next,
                self.line_count(),
                self.overflow.entries(),
                self.counted_bytes()
            ),
        ]
    }
}
