//! What a rotating window filter says of itself: BF.INFO's fields, its window, and BF.DEBUG's
//! lines.

use crate::describe::{clock_unit, expansion, Summary, WindowSummary};
use crate::window::rotating::{Rotating, EMPTY};

impl Rotating {
    /// BF.INFO's fields at server time `now`: a window's capacity, its live generations as
    /// "filters", the items inside the window.
    pub fn summary(&self, now: u64) -> Summary {
        Summary {
            capacity: self.base.capacity,
            filters: self.live_generations(now),
            items: self.card(now),
            expansion: expansion(self.base.growth),
            layout: None,
        }
    }

    /// `BF.INFO key WINDOW` at server time `now`.
    pub fn window_summary(&self, now: u64) -> WindowSummary {
        WindowSummary {
            layout: c"rotating",
            kind: self.base.kind,
            window: self.base.window,
            slack: self.slack(),
            live: self.live_generations(now),
            items: self.card(now),
            hashes: self.hashes(),
            refresh: self.refresh(),
        }
    }

    /// BF.DEBUG at server time `now`: `size:<items in window> window:<w> unit:<items|ms>
    /// clock:<c> layout:rotating hashes:<k> generations:<r> blocks:<b>`, then per slot:
    /// `slot:<s> generation:<number or none> live:<0|1> items:<taken> load:<base
    /// items>/<base limit> extras:<n>`, and after it one `extra hashes:<k> blocks:<b>
    /// load:<items>/<capacity>` line per extra array.
    pub fn debug_lines(&self, now: u64) -> Vec<String> {
        let clock = self.clock_at(now);
        let newest = self.generation_at(clock);
        let mut lines = vec![format!(
            "size:{} window:{} unit:{} clock:{clock} layout:rotating hashes:{} generations:{} \
             blocks:{}",
            self.card(now),
            self.base.window,
            clock_unit(self.base.kind),
            self.hashes(),
            self.generations(),
            self.blocks()
        )];
        for (i, slot) in self.slots().iter().enumerate() {
            let generation = match slot.generation {
                EMPTY => "none".to_string(),
                g => g.to_string(),
            };
            lines.push(format!(
                "slot:{i} generation:{generation} live:{} items:{} load:{}/{} extras:{}",
                u8::from(self.is_live(i, newest)),
                slot.count(),
                slot.load,
                slot.limit,
                slot.extras.len()
            ));
            for e in &slot.extras {
                lines.push(format!(
                    "extra hashes:{} blocks:{} load:{}/{}",
                    e.hashes, e.blocks, e.load, e.capacity
                ));
            }
        }
        lines
    }
}
