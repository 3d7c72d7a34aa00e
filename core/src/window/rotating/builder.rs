//! [`RotatingBuilder`]: every invariant a decoded rotating window filter must hold, checked
//! before anything is allocated or trusted. The RDB value and the SCANDUMP header both read
//! through it.

use crate::codec::{machine_memory, DecodeError};
use crate::lines;
use crate::sizing::MAX_LINK_BITS;
use crate::spec::{Growth, Window};
use crate::window::common::WindowHead;
use crate::window::rotating::design::{
    BLOCK_BITS, MAX_BLOCK_HASHES, MAX_GENERATIONS, MIN_GENERATIONS,
};
use crate::window::rotating::{Extra, Rotating, Slot, Watch, EMPTY, MAX_EXTRAS};

/// A rotating window filter's own fields, as both formats carry them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RotatingHeader {
    /// The fields every window filter starts with (its `span`: clock units per generation).
    pub head: WindowHead,
    /// Generations per window (`r`).
    pub generations: u64,
    /// Bits per item in a base array's block.
    pub hashes: u64,
    /// Blocks of a base array.
    pub blocks: u64,
    /// Items a generation is sized for.
    pub generation_items: u64,
    /// Expansion in a burst; 0: the window does not grow.
    pub expansion: u64,
    /// The filter's clock.
    pub clock: u64,
    /// Items added since creation.
    pub added: u64,
    /// Whether adds refresh held items (false: `NOREFRESH`, its own flag in both formats;
    /// data saved before the mode existed loads as refreshing).
    pub refresh: bool,
}

impl RotatingHeader {
    /// A filter's header fields.
    pub(crate) fn of(f: &Rotating) -> Self {
        RotatingHeader {
            head: WindowHead::of(&f.base, f.span),
            generations: u64::from(f.generations),
            hashes: u64::from(f.hashes),
            blocks: f.blocks,
            generation_items: f.generation_items,
            expansion: f.base.stored_expansion(),
            clock: f.base.clock,
            added: f.base.added,
            refresh: f.refresh,
        }
    }

    /// Bytes of the interleaved base arrays.
    pub(crate) fn base_bytes(&self) -> u64 {
        Rotating::base_bytes(self.blocks, self.generations as u32)
    }
}

/// A slot's fields: its generation, base load and limit, and how many extras follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotHeader {
    /// Its generation number ([`EMPTY`] if none).
    pub generation: u64,
    /// Items in its base array.
    pub load: u64,
    /// The most its base array takes.
    pub limit: u64,
    /// Extra arrays that follow.
    pub extras: u64,
}

impl SlotHeader {
    /// A slot's fields.
    pub(crate) fn of(s: &Slot) -> Self {
        SlotHeader {
            generation: s.generation,
            load: s.load,
            limit: s.limit,
            extras: s.extras.len() as u64,
        }
    }
}

/// An extra array's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExtraHeader {
    /// Bits per item in its block.
    pub hashes: u64,
    /// Blocks.
    pub blocks: u64,
    /// Items it is sized for.
    pub capacity: u64,
    /// Items in it.
    pub load: u64,
}

impl ExtraHeader {
    /// An extra array's fields.
    pub(crate) fn of(e: &Extra) -> Self {
        ExtraHeader {
            hashes: u64::from(e.hashes),
            blocks: e.blocks,
            capacity: e.capacity,
            load: e.load,
        }
    }

    /// Bytes of its bits.
    pub(crate) fn bytes(&self) -> u64 {
        self.blocks.saturating_mul(BLOCK_BITS / 8)
    }
}

/// Builds a decoded rotating window filter: the header, then each slot in order with its
/// extras, checking each before allocating it.
#[derive(Debug)]
pub(crate) struct RotatingBuilder {
    filter: Rotating,
    /// Slots read so far.
    slots: usize,
    /// Extras the current slot still owes.
    owed: u64,
    bytes: u64,
}

impl RotatingBuilder {
    /// Starts a filter: checks every parameter against what [`Rotating::new`] can make, and
    /// allocates the base arrays (zeroed) once they fit the machine.
    pub(crate) fn new(h: RotatingHeader) -> Result<Self, DecodeError> {
        let bad = Err(DecodeError::WindowParameters);
        let base = h.head.base(h.expansion, h.clock, h.added)?;
        let WindowHead { window, span, .. } = h.head;
        if h.hashes == 0 || h.hashes > u64::from(MAX_BLOCK_HASHES) {
            return Err(DecodeError::HashCount);
        }
        let r = h.generations;
        if !(u64::from(MIN_GENERATIONS)..=u64::from(MAX_GENERATIONS)).contains(&r)
            || h.generation_items != base.capacity.div_ceil(r)
        {
            return bad;
        }
        let shape_ok = match base.kind {
            Window::Count | Window::Unbounded => {
                window == base.capacity && span == h.generation_items
            }
            Window::Time { .. } => {
                (1000..=Window::MAX_SECONDS * 1000).contains(&window)
                    && window.is_multiple_of(1000)
                    && span == window.div_ceil(r).max(1)
            }
        };
        if !shape_ok {
            return bad;
        }
        if h.blocks == 0 || h.blocks.saturating_mul(BLOCK_BITS) > MAX_LINK_BITS {
            return Err(DecodeError::BitCount);
        }
        let bytes = h.base_bytes();
        if machine_memory().is_some_and(|memory| bytes > memory) {
            return Err(DecodeError::MachineMemory);
        }
        Ok(RotatingBuilder {
            filter: Rotating {
                base,
                span,
                generations: r as u32,
                hashes: h.hashes as u32,
                blocks: h.blocks,
                generation_items: h.generation_items,
                refresh: h.refresh,
                slots: Vec::with_capacity(r as usize + 1),
                base_lines: lines::zeroed((h.blocks * (r + 1)) as usize)?,
                has_extras: false,
                watch: Watch::default(),
            },
            slots: 0,
            owed: 0,
            bytes,
        })
    }

    /// The base arrays' bytes for the decoder to fill; before the slots.
    pub(crate) fn base_lines(&mut self) -> &mut [u8] {
        lines::bytes_mut(&mut self.filter.base_lines)
    }

    /// Checks the next slot: its generation belongs to its place and is not past the clock,
    /// and extras only where a time window grows.
    pub(crate) fn slot(&mut self, h: SlotHeader) -> Result<(), DecodeError> {
        let f = &self.filter;
        let count = u64::from(f.generations) + 1;
        if self.owed != 0 || self.slots as u64 == count {
            return Err(DecodeError::SliceCount);
        }
        let newest = f.generation_at(f.base.clock);
        let placed = h.generation == EMPTY
            || (h.generation % count == self.slots as u64 && h.generation <= newest);
        let grows = matches!(f.base.growth, Growth::Scaling(_));
        if !placed || (h.extras != 0 && !grows) || h.extras > MAX_EXTRAS as u64 {
            return Err(DecodeError::SliceState);
        }
        self.filter.slots.push(Slot {
            generation: h.generation,
            load: h.load,
            limit: h.limit,
            extras: Vec::with_capacity(h.extras as usize),
        });
        self.slots += 1;
        self.owed = h.extras;
        Ok(())
    }

    /// Checks the current slot's next extra array and allocates its zeroed bits (refusing,
    /// before allocating, arrays that together pass the machine's memory). Returns its bytes
    /// for the decoder to fill.
    pub(crate) fn extra(&mut self, h: ExtraHeader) -> Result<&mut [u8], DecodeError> {
        if self.owed == 0 {
            return Err(DecodeError::SliceCount);
        }
        if h.hashes == 0 || h.hashes > u64::from(MAX_BLOCK_HASHES) {
            return Err(DecodeError::HashCount);
        }
        if h.blocks == 0 || h.blocks.saturating_mul(BLOCK_BITS) > MAX_LINK_BITS {
            return Err(DecodeError::BitCount);
        }
        if h.capacity == 0 || h.load > h.capacity {
            return Err(DecodeError::SliceState);
        }
        self.bytes = self.bytes.saturating_add(h.bytes());
        if machine_memory().is_some_and(|memory| self.bytes > memory) {
            return Err(DecodeError::MachineMemory);
        }
        self.owed -= 1;
        let mut extra = Extra::new(h.hashes as u32, h.blocks, h.capacity)?;
        extra.load = h.load;
        let slot = self.filter.slots.last_mut().expect("a slot owes it");
        slot.extras.push(extra);
        Ok(lines::bytes_mut(
            &mut slot.extras.last_mut().expect("just pushed").lines,
        ))
    }

    /// The filter, once every slot and extra is in.
    pub(crate) fn finish(mut self) -> Result<Rotating, DecodeError> {
        if self.owed != 0 || self.slots != self.filter.generations as usize + 1 {
            return Err(DecodeError::SliceCount);
        }
        self.filter.note_extras();
        Ok(self.filter)
    }
}
