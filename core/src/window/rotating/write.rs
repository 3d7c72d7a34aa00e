//! Writes: an add sets the item's bits in one line of the newest generation; the first add of
//! a generation clears its slot (and frees the extras of every stale one); a burst grows the
//! generation an extra array. Every check comes before the first change, so a refused add
//! changes nothing (and is not replicated).

use crate::blocked::pattern;
use crate::hash::ItemHash;
use crate::lines::Line;
use crate::lookahead::each_ahead;
use crate::outcome::{AddOutcome, FilterError};
use crate::sizing::MAX_LINK_BITS;
use crate::spec::{Growth, Window};
use crate::window::common::MAX_CLOCK;
use crate::window::rotating::design::{array_rate, max_load, ArrayDesign, BLOCK_BITS};
use crate::window::rotating::lookup::{Probe, DEPTH};
use crate::window::rotating::{
    Extra, Rotating, Slot, BASE_CEILING, BURST_CEILING, EMPTY, MAX_EXTRAS,
};

/// Where an add's bits go.
enum Target {
    /// The slot's base array.
    Base,
    /// Its newest extra array.
    Extra,
    /// A new extra array, grown for this add.
    NewExtra(Extra),
}

/// What an add does, decided before anything changes.
struct Plan {
    /// The slot of the newest generation.
    slot: usize,
    /// The newest generation's number.
    generation: u64,
    /// The base limit of a generation this add starts (None: it has started).
    starts: Option<u64>,
    target: Target,
}

impl Rotating {
    /// Adds one item at server time `now`: `Added` when no live generation held it, `Present`
    /// when one did. A present item is then set again in the newest generation (unless that
    /// one holds it), so it stays a full window, when `refresh` and the filter's mode both
    /// say so; else it stays as it was. A refused add changes nothing.
    pub fn add(
        &mut self,
        item: &[u8],
        now: u64,
        max_bytes: u64,
        refresh: bool,
    ) -> Result<AddOutcome, FilterError> {
        let h = self.hash(item);
        self.add_hashed(&h, now, max_bytes, refresh && self.refresh)
    }

    /// Adds items in order at server time `now`, each hashed and its lines requested
    /// [`DEPTH`] items ahead, passing each outcome to `outcome`, which returns whether to go on.
    pub fn add_many<'a>(
        &mut self,
        items: impl ExactSizeIterator<Item = &'a [u8]>,
        now: u64,
        max_bytes: u64,
        refresh: bool,
        mut outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        let refresh = refresh && self.refresh;
        each_ahead::<_, ItemHash, DEPTH>(
            self,
            items,
            |f, item| {
                let h = f.hash(item);
                f.prefetch(&h);
                h
            },
            |f, h| outcome(f.add_hashed(&h, now, max_bytes, refresh)),
        );
    }

    fn add_hashed(
        &mut self,
        h: &ItemHash,
        now: u64,
        max_bytes: u64,
        refresh: bool,
    ) -> Result<AddOutcome, FilterError> {
        let clock = self.clock_at(now);
        let generation = self.generation_at(clock);
        let slot = (generation % self.slots.len() as u64) as usize;
        let started = self.slots[slot].generation == generation;
        // One probe for the tests and the write: the pattern is k multiplies.
        let probe = self.probe(h);
        if started && self.holds_probe(&probe, h, 1 << slot) {
            return Ok(AddOutcome::Present);
        }
        let live = self.live_mask(generation);
        let found = self.holds_probe(&probe, h, live);
        if found && !refresh {
            // NOREFRESH: no bit, no count, no clock moves.
            return Ok(AddOutcome::Present);
        }
        let plan = self.plan(slot, generation, started, live, max_bytes)?;
        self.apply(plan, h, &probe);
        self.base.clock = match self.base.kind {
            Window::Count | Window::Unbounded => (clock + 1).min(MAX_CLOCK),
            Window::Time { .. } => clock,
        };
        Ok(if found {
            AddOutcome::Present
        } else {
            self.base.added = self.base.added.saturating_add(1);
            AddOutcome::Added
        })
    }

    /// Decides where the add's bits go, refusing before anything changes.
    fn plan(
        &self,
        slot: usize,
        generation: u64,
        started: bool,
        live: u32,
        max_bytes: u64,
    ) -> Result<Plan, FilterError> {
        let starts = (!started).then(|| self.base_limit(slot, live));
        let s = &self.slots[slot];
        let (load, limit, extras) = match starts {
            Some(limit) => (0, limit, &[][..]),
            None => (s.load, s.limit, &s.extras[..]),
        };
        let target = if load < limit {
            Target::Base
        } else if extras.last().is_some_and(|e| e.load < e.capacity) {
            Target::Extra
        } else {
            Target::NewExtra(self.grow(slot, live, starts.is_some(), extras.len(), max_bytes)?)
        };
        Ok(Plan {
            slot,
            generation,
            starts,
            target,
        })
    }

    /// The most items slot `slot`'s base array takes in a generation that starts now with the
    /// slots of `live` around it: a generation's items in a count window (it turns by count);
    /// in a time window at least that many, and more while the window's rate stays at most
    /// [`BASE_CEILING`] × the request (with the generations to come at their share), so that a
    /// generation a little over its share needs no extra.
    fn base_limit(&self, slot: usize, live: u32) -> u64 {
        let share = self.generation_items;
        match self.base.kind {
            Window::Count | Window::Unbounded => share,
            Window::Time { .. } => {
                let others = self.pass(live, slot, None);
                let room = max_load(
                    self.blocks,
                    self.hashes,
                    others,
                    BASE_CEILING * self.base.error,
                );
                room.max(share)
            }
        }
    }

    /// The probability that a never-added item passes every array the window will hold while
    /// the newest generation lives, but slot `except`'s base array (and with `newest`, that
    /// slot's base array at that load): every other slot's base array at its load or a
    /// generation's items, whichever is more (older generations take no more, and the
    /// generation that reuses a slot always takes its share: counting a slot's old generation
    /// at its load instead let a burst's extras promise the rate twice), and every live
    /// extra at its capacity.
    fn pass(&self, live: u32, except: usize, newest: Option<u64>) -> f64 {
        let base = |load: u64| 1.0 - array_rate(self.hashes, load as f64 / self.blocks as f64);
        let mut pass = 1.0;
        for (s, slot) in self.slots.iter().enumerate() {
            if live & 1 << s == 0 {
                pass *= base(self.generation_items);
                continue;
            }
            match (s == except, newest) {
                (false, _) => pass *= base(slot.load.max(self.generation_items)),
                (true, Some(load)) => pass *= base(load),
                (true, None) => {}
            }
            for e in &slot.extras {
                pass *= 1.0 - array_rate(e.hashes, e.capacity as f64 / e.blocks as f64);
            }
        }
        pass
    }

    /// A new extra array for the newest generation (in slot `slot`, `fresh` when this add
    /// starts it, with `extras` of them so far): a generation's items times `EXPANSION` per extra
    /// before it, at a `1/(r+1)` share of the rate the window has left under its ceiling, so
    /// that every generation of a sustained burst finds a share left (halving the rest for each
    /// extra instead, a window fed at twice its capacity grew to 6.4 times its memory; with
    /// shares, 2.6 times).
    fn grow(
        &self,
        slot: usize,
        live: u32,
        fresh: bool,
        extras: usize,
        max_bytes: u64,
    ) -> Result<Extra, FilterError> {
        let Growth::Scaling(expansion) = self.base.growth else {
            return Err(FilterError::WindowFull);
        };
        if extras >= MAX_EXTRAS {
            return Err(FilterError::CannotGrow);
        }
        let capacity = u64::from(expansion.max(1))
            .checked_pow(extras as u32)
            .and_then(|f| f.checked_mul(self.generation_items))
            .ok_or(FilterError::CannotGrow)?;
        let newest = if fresh { 0 } else { self.slots[slot].limit };
        let pass = self.pass(live | 1 << slot, slot, Some(newest));
        let left = 1.0 - (1.0 - BURST_CEILING * self.base.error) / pass;
        let share = left / f64::from(self.generations + 1);
        let design = ArrayDesign::for_rate(share).ok_or(FilterError::CannotGrow)?;
        let blocks = design.blocks_for(capacity);
        if blocks.saturating_mul(BLOCK_BITS) > MAX_LINK_BITS {
            return Err(FilterError::LinkTooLarge {
                needed: blocks.saturating_mul(BLOCK_BITS / 8),
            });
        }
        let needed = self
            .bit_bytes()
            .saturating_add(blocks.saturating_mul(BLOCK_BITS / 8));
        if needed > max_bytes {
            return Err(FilterError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        Ok(Extra::new(design.hashes, blocks, capacity)?)
    }

    /// Carries out a plan: starts the generation if it must, then sets the item's bits.
    fn apply(&mut self, plan: Plan, h: &ItemHash, probe: &Probe) {
        if let Some(limit) = plan.starts {
            self.start(plan.slot, plan.generation, limit);
        }
        let line = probe.first + plan.slot;
        let slot = &mut self.slots[plan.slot];
        match plan.target {
            Target::Base => {
                or_into(&mut self.base_lines[line], &probe.mask);
                slot.load += 1;
            }
            Target::Extra => set_extra(slot.extras.last_mut().expect("planned"), h),
            Target::NewExtra(extra) => {
                slot.extras.push(extra);
                set_extra(slot.extras.last_mut().expect("just pushed"), h);
                self.has_extras = true;
            }
        }
    }

    /// Generation `generation` takes slot `slot`: its lines cleared, its extras and those of
    /// every stale slot freed (the memory of a burst goes back as it ages out).
    fn start(&mut self, slot: usize, generation: u64, limit: u64) {
        let slots = self.slots.len();
        for line in self.base_lines.iter_mut().skip(slot).step_by(slots) {
            *line = Line::default();
        }
        self.slots[slot] = Slot {
            generation,
            load: 0,
            limit,
            extras: Vec::new(),
        };
        let live = self.live_mask(generation);
        for (s, other) in self.slots.iter_mut().enumerate() {
            if live & 1 << s == 0 && other.generation != EMPTY {
                other.extras = Vec::new();
            }
        }
        self.note_extras();
    }
}

fn or_into(line: &mut Line, mask: &[u64; 8]) {
    for (word, bits) in line.0.iter_mut().zip(mask) {
        *word |= bits;
    }
}

fn set_extra(extra: &mut Extra, h: &ItemHash) {
    let line = extra.line_of(h);
    or_into(&mut extra.lines[line], &pattern(h.h2, extra.hashes));
    extra.load += 1;
}
