//! Writes: adds, the shifts that end generations and drop expired slices, the growth of a
//! burst, and the undo that leaves a refused add without effect.

use crate::hash::ItemHash;
use crate::outcome::{AddOutcome, FilterError};
use crate::sizing::{MAX_LINK_BITS, WORD_BITS};
use crate::spec::{Growth, Window};
use crate::window::common::{HEADROOM, MAX_CLOCK};
use crate::window::partitioned::design::{slice_bits, window_fpr};
use crate::window::partitioned::limits::fill;
use crate::window::partitioned::limits::{MAX_FILL_STEPS, MAX_SLICES, OPEN};
use crate::window::partitioned::lookup::FEW;
use crate::window::partitioned::ring::{Slice, Storage};
use crate::window::partitioned::Sliding;

/// Items a batch add looks up ahead of applying them (see [`Sliding::add_many`]): a shift in
/// the middle makes the rest look up again, so a filter that shifts often (a tiny generation)
/// repeats at most this much.
const SPECULATE: usize = 32;

/// Why a shift happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shift {
    /// The newest generation's time is up.
    Time,
    /// The newest generation took its share of items before its time was up (a burst).
    Burst,
    /// An older slice among the `k` newest reached its load.
    Load,
}

/// What a write did, to undo it when a later step is refused: the filter is left exactly as
/// it was, so a refused add changes nothing (and is not replicated).
struct Undo {
    clock: u64,
    next_generation: u64,
    dropped: Vec<Slice>,
    pushed: usize,
}

impl Sliding {
    /// Sets the item's bit in the newest `k` slices.
    fn set_newest(&mut self, h: &ItemHash) {
        let k = self.hashes as usize;
        let n = self.slices.len();
        for i in n - k..n {
            let (word, mask) = self.spot(&self.slices[i], h);
            let slice = &mut self.slices[i];
            match (&mut slice.storage, &mut self.ring) {
                (Storage::Own(words), _) => words[word] |= mask,
                (Storage::Ring { .. }, Some(ring)) => ring.words_mut()[word] |= mask,
                (Storage::Ring { .. }, None) => unreachable!("a ring slice without a ring"),
            }
            slice.load += 1;
        }
    }

    /// Adds items in order at server time `now`, passing each outcome to `outcome`, which
    /// returns whether to go on.
    pub fn add_many<'a>(
        &mut self,
        items: impl ExactSizeIterator<Item = &'a [u8]>,
        now: u64,
        max_bytes: u64,
        refresh: bool,
        mut outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        if items.len() < FEW {
            for item in items {
                let h = self.hash(item);
                if !outcome(self.add_hashed(&h, now, max_bytes, refresh)) {
                    return;
                }
            }
            return;
        }
        let hashes: Vec<ItemHash> = items.map(|item| self.hash(item)).collect();
        let k = self.hashes as usize;
        let mut at = 0;
        while at < hashes.len() {
            // Look the next items up together, against the filter as it is now.
            let chunk = &hashes[at..hashes.len().min(at + SPECULATE)];
            let clock = self.clock_at(now);
            let first = self.first_live(clock);
            let state = (self.next_generation, self.slices.len(), first);
            let mut found = vec![false; chunk.len()];
            self.scan_many(chunk, first, |i, f| found[i] = f);
            for (j, h) in chunk.iter().enumerate() {
                // Prefetch a later item's lines in the newest slices (its insert, and the
                // re-check of an item not found).
                if let Some(later) = chunk.get(j + 8) {
                    let n = self.slices.len();
                    for slice in self.slices[n.saturating_sub(2 * k - 1)..].iter() {
                        self.prefetch(slice, later);
                    }
                }
                let clock = self.clock_at(now);
                let first = self.first_live(clock);
                if (self.next_generation, self.slices.len(), first) != state {
                    // A shift (or an expiry) since the look-up: look the rest up again.
                    break;
                }
                // Since the look-up only the newest k slices took bits. A run found then is
                // still there; a run not found then can only have appeared among the runs
                // that reach into those k slices: those starting at ages 0..k-1.
                let newest_run = self.run_at(h, 0);
                let exists = found[j]
                    || newest_run
                    || self.exists(h, first.max(self.slices.len().saturating_sub(2 * k - 1)));
                at += 1;
                if !outcome(self.apply(h, exists, newest_run, clock, max_bytes, refresh)) {
                    return;
                }
            }
        }
    }

    /// Adds one item at server time `now`. `Added` when it was absent; `Present` when it was
    /// found, in which case it is refreshed (set again in the newest slices) unless the newest
    /// generation holds it already or `refresh` is false (`NOREFRESH`). A refused add changes
    /// nothing.
    pub fn add(
        &mut self,
        item: &[u8],
        now: u64,
        max_bytes: u64,
        refresh: bool,
    ) -> Result<AddOutcome, FilterError> {
        let h = self.hash(item);
        self.add_hashed(&h, now, max_bytes, refresh)
    }

    fn add_hashed(
        &mut self,
        h: &ItemHash,
        now: u64,
        max_bytes: u64,
        refresh: bool,
    ) -> Result<AddOutcome, FilterError> {
        let clock = self.clock_at(now);
        // The lookup loads every line the insert then writes (the newest k slices are live).
        let exists = self.exists(h, self.first_live(clock));
        let newest_run = exists && self.run_at(h, 0);
        self.apply(h, exists, newest_run, clock, max_bytes, refresh)
    }

    /// The add of an item whose run was looked up: `exists` when it has one, `newest_run` when
    /// one starts at the newest slice.
    fn apply(
        &mut self,
        h: &ItemHash,
        exists: bool,
        newest_run: bool,
        clock: u64,
        max_bytes: u64,
        refresh: bool,
    ) -> Result<AddOutcome, FilterError> {
        if exists && !refresh {
            return Ok(AddOutcome::Present);
        }
        if newest_run && self.next_shift(clock).is_none() {
            // In the newest generation already: nothing to refresh.
            return Ok(AddOutcome::Present);
        }
        self.make_room(clock, max_bytes)?;
        self.set_newest(h);
        if let Some(newest) = self.slices.last_mut() {
            newest.count += 1;
        }
        if !matches!(self.base.kind, Window::Time { .. }) {
            self.base.clock = (self.base.clock + 1).min(MAX_CLOCK);
        }
        Ok(if exists {
            AddOutcome::Present
        } else {
            self.base.added = self.base.added.saturating_add(1);
            AddOutcome::Added
        })
    }

    /// Whether the `k` slices from `age` on (counting from the newest) all hold the item.
    fn run_at(&self, h: &ItemHash, age: usize) -> bool {
        let n = self.slices.len();
        let k = self.hashes as usize;
        n >= age + k && (age..age + k).all(|a| self.test(&self.slices[n - 1 - a], h))
    }

    /// Why the newest generation must end before the next insert at `clock`, if it must.
    fn next_shift(&self, clock: u64) -> Option<Shift> {
        let newest = self.slices.last()?;
        let k = self.hashes as usize;
        if matches!(self.base.kind, Window::Time { .. })
            && newest.started.saturating_add(self.span) <= clock
        {
            Some(Shift::Time)
        } else if newest.count >= newest.generation_items(self.hashes) {
            Some(Shift::Burst)
        } else if self.slices[self.slices.len().saturating_sub(k)..]
            .iter()
            .any(|s| s.load >= s.capacity)
        {
            Some(Shift::Load)
        } else {
            None
        }
    }

    /// Brings the filter to `clock` before an insert: drops the slices no longer needed, starts
    /// the first `k` slices of an empty filter, and shifts as often as the newest generation
    /// must end. On a refusal every step is undone.
    fn make_room(&mut self, clock: u64, max_bytes: u64) -> Result<(), FilterError> {
        let mut undo = Undo {
            clock: self.base.clock,
            next_generation: self.next_generation,
            dropped: Vec::new(),
            pushed: 0,
        };
        let result = self.make_room_logged(clock, max_bytes, &mut undo);
        let slices_changed = undo.pushed > 0 || !undo.dropped.is_empty();
        if let (Ok(()), Some(ring)) = (&result, &mut self.ring) {
            // New slices in the ring take places older ones left with their bits (cleared
            // only now, so that an undo gives those back intact).
            let pushed = self.slices.iter().rev();
            for slice in pushed.take_while(|s| s.generation >= undo.next_generation) {
                if let &Storage::Ring { group, offset } = &slice.storage {
                    ring.clear(group, offset);
                }
            }
        }
        if result.is_err() {
            for _ in 0..undo.pushed {
                self.slices.pop();
            }
            if let Some(newest) = self.slices.last_mut() {
                newest.ended = OPEN;
            }
            self.slices.splice(0..0, undo.dropped);
            self.base.clock = undo.clock;
            self.next_generation = undo.next_generation;
        }
        if slices_changed {
            self.note_own_arrays();
        }
        result
    }

    fn make_room_logged(
        &mut self,
        clock: u64,
        max_bytes: u64,
        undo: &mut Undo,
    ) -> Result<(), FilterError> {
        self.base.clock = clock;
        // Expired slices go at a shift (or all at once when none is live): a read skips them
        // meanwhile, and a count window keeps exactly k + l slices in its steady state.
        if self.first_live(clock) == self.slices.len() {
            self.drop_expired(undo);
        }
        if self.slices.is_empty() {
            // A new start: k empty slices, so the first items have their k bits.
            let new = self
                .new_bytes(self.base_bits)
                .saturating_mul(self.hashes.into());
            let needed = self.bit_bytes().saturating_add(new);
            if new > 0 && needed > max_bytes {
                return Err(FilterError::TooLarge {
                    needed,
                    limit: max_bytes,
                });
            }
            for _ in 0..self.hashes {
                if let Some(newest) = self.slices.last_mut() {
                    newest.ended = clock;
                }
                self.push(clock, self.base_bits, self.base_capacity, 0, undo)?;
            }
            return Ok(());
        }
        while let Some(cause) = self.next_shift(clock) {
            self.shift(cause, clock, max_bytes, undo)?;
        }
        Ok(())
    }

    fn drop_expired(&mut self, undo: &mut Undo) {
        let expired = self.first_live(self.base.clock);
        undo.dropped.extend(self.slices.drain(..expired));
    }

    /// The ring's place for the next slice, when it has `bits` bits (a base slice) and the
    /// place is free (it is not, for a while, when a burst made more than `k + l` slices).
    fn ring_place(&self, bits: u64) -> Option<Storage> {
        self.ring_place_of(self.next_generation, bits)
    }

    fn ring_place_of(&self, generation: u64, bits: u64) -> Option<Storage> {
        let ring = self.ring.as_ref().filter(|_| bits == self.base_bits)?;
        let slots = ring.slots();
        let taken = self
            .slices
            .iter()
            .any(|s| s.in_ring() && s.generation % slots == generation % slots);
        (!taken).then(|| ring.place(generation))
    }

    /// Slice number `generation` in its place in the ring, if the filter has one and the place
    /// is free (for the decoders).
    pub(super) fn ring_slice(&self, generation: u64, capacity: u64, level: u32) -> Option<Slice> {
        let place = self.ring_place_of(generation, self.base_bits)?;
        Some(Slice::with_storage(
            generation,
            0,
            self.base_bits,
            capacity,
            level,
            place,
        ))
    }

    /// Bytes a new slice of `bits` bits allocates: none in the ring, its own array elsewhere
    /// (whole words).
    fn new_bytes(&self, bits: u64) -> u64 {
        match self.ring_place(bits) {
            Some(_) => 0,
            None => bits.div_ceil(WORD_BITS) * 8,
        }
    }

    fn push(
        &mut self,
        started: u64,
        bits: u64,
        capacity: u64,
        level: u32,
        undo: &mut Undo,
    ) -> Result<(), FilterError> {
        let generation = self.next_generation;
        let slice = match self.ring_place(bits) {
            Some(place) => Slice::with_storage(generation, started, bits, capacity, level, place),
            None => {
                let bits = bits.next_multiple_of(WORD_BITS);
                Slice::new(generation, started, bits, capacity, level)?
            }
        };
        self.next_generation += 1;
        self.slices.push(slice);
        undo.pushed += 1;
        Ok(())
    }

    /// Ends the newest generation and starts a new slice. A count window's slices are all of
    /// the base size. A time window's new slice follows the rate (after a burst generation it
    /// takes `EXPANSION` times the previous one's items, after a generation its time ended, a
    /// step less), and its fill is halved until the computed rate over the live slices is back
    /// under the request.
    fn shift(
        &mut self,
        cause: Shift,
        clock: u64,
        max_bytes: u64,
        undo: &mut Undo,
    ) -> Result<(), FilterError> {
        let newest = self.slices.last().expect("shift needs a newest slice");
        let newest_level = newest.level;
        let (level, fixed) = match (self.base.kind, self.base.growth) {
            (Window::Count | Window::Unbounded, _) => (0, true),
            (Window::Time { .. }, Growth::Fixed | Growth::Expandable) => (0, true),
            (Window::Time { .. }, Growth::Scaling(_)) => match cause {
                Shift::Burst => (newest_level + 1, false),
                Shift::Load => (newest_level, false),
                Shift::Time => (newest_level.saturating_sub(1), false),
            },
        };
        let newest_started = newest.started;
        let ended = match cause {
            Shift::Time => newest_started.saturating_add(self.span),
            Shift::Burst | Shift::Load => clock,
        };
        self.drop_expired(undo);
        self.slices.last_mut().expect("checked above").ended = ended;
        if cause == Shift::Time {
            // After an idle spell, the generations that passed without adds get their empty
            // slices (up to k): the next items' runs then start in fresh slices instead of
            // reaching back into old ones, which would keep old items alive past their time.
            let spans = (clock - newest_started) / self.span.max(1);
            for i in 1..spans.min(u64::from(self.hashes)) {
                self.check_room(fixed, self.base_bits, max_bytes)?;
                let started = newest_started + i * self.span;
                self.push(started, self.base_bits, self.base_capacity, level, undo)?;
                self.slices.last_mut().expect("just pushed").ended = started + self.span;
            }
        }
        let (bits, capacity) = if fixed {
            (self.base_bits, self.base_capacity)
        } else {
            self.grown_slice(level)?
        };
        self.check_room(fixed, bits, max_bytes)?;
        self.push(clock, bits, capacity, level, undo)
    }

    /// Whether one more slice of `bits` fits: under the per-filter limit, and for a
    /// NONSCALING time window within its fixed budget of `k + l` slices.
    fn check_room(&self, fixed: bool, bits: u64, max_bytes: u64) -> Result<(), FilterError> {
        if self.slices.len() >= MAX_SLICES {
            return Err(FilterError::CannotGrow);
        }
        if fixed
            && matches!(self.base.kind, Window::Time { .. })
            && self.slices.len() >= (self.hashes + self.generations) as usize
        {
            return Err(FilterError::WindowFull);
        }
        let new = self.new_bytes(bits);
        let needed = self.bit_bytes().saturating_add(new);
        if new > 0 && needed > max_bytes {
            return Err(FilterError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        Ok(())
    }

    /// The bits and load capacity of a time window's new slice at growth `level`: the base
    /// capacity times `EXPANSION^level`, at the base load per bit, halved until the computed
    /// worst-case rate over the live slices (each at the most it may take before the next
    /// shift) is within [`HEADROOM`] of the request.
    fn grown_slice(&self, level: u32) -> Result<(u64, u64), FilterError> {
        let Growth::Scaling(expansion) = self.base.growth else {
            unreachable!("only a scaling time window grows");
        };
        let capacity = u64::from(expansion)
            .checked_pow(level)
            .and_then(|f| f.checked_mul(self.base_capacity))
            .ok_or(FilterError::CannotGrow)?;
        let base_load_per_bit = self.base_capacity as f64 / self.base_bits as f64;
        let k = self.hashes as usize;
        let generation = (capacity / k as u64).max(1);
        // The live slices that stay among the k newest take at most one more generation.
        let n = self.slices.len();
        let fills: Vec<f64> = (0..n)
            .map(|i| {
                let s = &self.slices[i];
                let load = if i + k > n {
                    s.capacity.min(s.load.saturating_add(generation))
                } else {
                    s.load
                };
                fill(load, s.bit_count())
            })
            .collect();
        let target = self.base.error * HEADROOM;
        let mut load_per_bit = base_load_per_bit;
        for step in 0..MAX_FILL_STEPS {
            // A base slice at the base fill is the ring's size, and goes there.
            let bits = if step == 0 && capacity == self.base_capacity {
                self.base_bits
            } else {
                slice_bits(capacity, load_per_bit)
            };
            if bits > MAX_LINK_BITS {
                return Err(FilterError::LinkTooLarge { needed: bits / 8 });
            }
            let new_fill = fill(generation, bits);
            // Lookup order: newest first.
            let rate = window_fpr(
                self.hashes,
                std::iter::once(new_fill).chain(fills.iter().rev().copied()),
            );
            if rate <= target {
                return Ok((bits, capacity));
            }
            load_per_bit *= 0.5;
        }
        Err(FilterError::CannotGrow)
    }
}
