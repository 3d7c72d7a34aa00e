//! What a window filter of the first layout says of itself: BF.INFO's fields, its window, and
//! BF.DEBUG's lines.

use crate::describe::{clock_unit, expansion, format_g, Summary, WindowSummary};
use crate::window::partitioned::limits::OPEN;
use crate::window::partitioned::Sliding;

impl Sliding {
    /// Slices a read at `now` looks at.
    fn live_slices(&self, now: u64) -> u64 {
        (self.slices().len() - self.first_live(self.clock_at(now))) as u64
    }

    /// BF.INFO's fields at server time `now`: a window's capacity, its live slices as
    /// "filters", the items inside the window.
    pub fn summary(&self, now: u64) -> Summary {
        Summary {
            capacity: self.base.capacity,
            filters: self.live_slices(now),
            items: self.card(now),
            expansion: expansion(self.base.growth),
            layout: None,
        }
    }

    /// `BF.INFO key WINDOW` at server time `now`.
    pub fn window_summary(&self, now: u64) -> WindowSummary {
        WindowSummary {
            layout: c"age-partitioned",
            kind: self.base.kind,
            window: self.base.window,
            slack: self.slack(),
            live: self.live_slices(now),
            items: self.card(now),
            hashes: self.hashes(),
            refresh: true,
        }
    }

    /// BF.DEBUG at server time `now`: `size:<items in window> window:<w> unit:<items|ms>
    /// clock:<c> hashes:<k> generations:<l>`, then per slice, oldest first: `slice:<number>
    /// live:<0|1> age:<clock - started> ended:<clock units, or open> bits:<m> items:<added
    /// while newest> load:<bits set>/<capacity> fill:<estimated share of set bits>
    /// level:<growth step>`. Ages and times are in the window's unit.
    pub fn debug_lines(&self, now: u64) -> Vec<String> {
        let clock = self.clock_at(now);
        let first_live = self.first_live(clock);
        let head = format!(
            "size:{} window:{} unit:{} clock:{clock} hashes:{} generations:{}",
            self.card(now),
            self.base.window,
            clock_unit(self.base.kind),
            self.hashes(),
            self.generations()
        );
        let slices = self.slices().iter().enumerate().map(|(i, slice)| {
            let ended = match slice.ended {
                OPEN => "open".to_string(),
                t => t.to_string(),
            };
            format!(
                "slice:{} live:{} age:{} ended:{ended} bits:{} items:{} load:{}/{} fill:{} \
                 level:{}",
                slice.generation,
                u8::from(i >= first_live),
                clock.saturating_sub(slice.started),
                slice.bit_count(),
                slice.count,
                slice.load,
                slice.capacity,
                format_g(slice.fill()),
                slice.level
            )
        });
        std::iter::once(head).chain(slices).collect()
    }
}
