//! The checks a decoded window filter must pass: [`SlidingBuilder`] owns its parameters, each
//! slice's geometry and counts, and the memory.

use crate::codec::{machine_memory, DecodeError};
use crate::sizing::MAX_LINK_BITS;
use crate::spec::Window;
use crate::window::common::{WindowHead, MAX_CLOCK};
use crate::window::partitioned::limits::OPEN;
use crate::window::partitioned::ring::{Ring, Slice};
use crate::window::partitioned::{self, Sliding};

/// A window filter as a serialised form describes it, before its slices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SlidingHeader {
    /// The fields every window filter starts with (its `span`: a time window's generation
    /// length in milliseconds, 0 for a count window).
    pub head: WindowHead,
    /// Bits each item sets (`k`).
    pub hashes: u64,
    /// Generations per window (`l`).
    pub generations: u64,
    /// Loads a base slice takes.
    pub base_capacity: u64,
    /// Bits of a base slice.
    pub base_bits: u64,
    /// 0 for a filter that does not grow (count windows, NONSCALING time windows).
    pub expansion: u64,
    /// The filter's clock.
    pub clock: u64,
    /// Adds since creation.
    pub added: u64,
    /// The number the next slice gets.
    pub next_generation: u64,
    /// How many slices follow.
    pub slices: u64,
    /// The blocked layout (a ring of base slices, whose bits come before the slices'); false
    /// for the sliced layout, where every slice has its own array.
    pub ring: bool,
}

impl SlidingHeader {
    /// Bytes of the ring the header describes (0 for the sliced layout or a bad shape).
    pub(crate) fn ring_bytes(&self) -> u64 {
        match (self.ring, Ring::shape(self.hashes, self.generations)) {
            (true, Some((_, segment_bits))) => {
                Ring::bytes_for(self.hashes, self.base_bits, segment_bits)
            }
            _ => 0,
        }
    }

    /// The header fields of a filter, as every format writes them.
    pub(crate) fn of(f: &Sliding) -> Self {
        SlidingHeader {
            head: WindowHead::of(&f.base, f.span),
            hashes: u64::from(f.hashes),
            generations: u64::from(f.generations),
            base_capacity: f.base_capacity,
            base_bits: f.base_bits,
            expansion: f.base.stored_expansion(),
            clock: f.base.clock,
            added: f.base.added,
            next_generation: f.next_generation,
            slices: f.slices.len() as u64,
            ring: f.ring.is_some(),
        }
    }
}

/// One slice as a serialised form describes it, before its bits: `bits` is the size of its
/// own array, 0 for a slice in the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SliceHeader {
    /// The slice's number.
    pub generation: u64,
    /// The clock when it became the newest.
    pub started: u64,
    /// The clock when its generation ended ([`OPEN`] while it is the newest).
    pub ended: u64,
    /// Items added while it was the newest.
    pub count: u64,
    /// Bits set in it.
    pub load: u64,
    /// Loads it was sized for.
    pub capacity: u64,
    /// Its growth step (0 for a base slice).
    pub level: u64,
    /// Bits of its own array (0 in the ring).
    pub bits: u64,
}

impl SliceHeader {
    /// The header of a live slice.
    pub(crate) fn of(s: &Slice) -> Self {
        SliceHeader {
            generation: s.generation,
            started: s.started,
            ended: s.ended,
            count: s.count,
            load: s.load,
            capacity: s.capacity,
            level: u64::from(s.level),
            bits: s.bytes().len() as u64 * 8,
        }
    }

    /// Bytes of the slice's bit array (valid once the builder checked it).
    pub(crate) fn bytes(&self) -> u64 {
        self.bits / 8
    }

    /// Its fields in the order every format stores them.
    pub(crate) fn fields(&self) -> [u64; 8] {
        [
            self.generation,
            self.started,
            self.ended,
            self.count,
            self.load,
            self.capacity,
            self.level,
            self.bits,
        ]
    }

    /// A slice header from its fields, in [`SliceHeader::fields`]'s order.
    pub(crate) fn from_fields(f: [u64; 8]) -> Self {
        let [generation, started, ended, count, load, capacity, level, bits] = f;
        SliceHeader {
            generation,
            started,
            ended,
            count,
            load,
            capacity,
            level,
            bits,
        }
    }
}

/// Builds a decoded window filter slice by slice, checking each before allocating it.
#[derive(Debug)]
pub(crate) struct SlidingBuilder {
    filter: Sliding,
    declared: usize,
    bytes: u64,
}

impl SlidingBuilder {
    /// Starts a window filter: checks every parameter against what [`Sliding::new`] can make.
    pub(crate) fn new(h: SlidingHeader) -> Result<Self, DecodeError> {
        let bad = Err(DecodeError::WindowParameters);
        let base = h.head.base(h.expansion, h.clock, h.added)?;
        let WindowHead { window, span, .. } = h.head;
        let time_ok =
            (1000..=Window::MAX_SECONDS * 1000).contains(&window) && span >= 1 && span <= window;
        let shape_ok = match base.kind {
            Window::Count | Window::Unbounded => window == base.capacity && span == 0,
            Window::Time { .. } => time_ok,
        };
        if !shape_ok
            || h.hashes == 0
            || h.hashes > u64::from(partitioned::limits::MAX_SLICE_HASHES)
            || h.generations == 0
            || h.generations
                > u64::from(
                    partitioned::limits::MAX_SLICE_HASHES * partitioned::limits::MIN_SLACK_DIVISOR,
                )
            || h.base_capacity < h.hashes
            || h.base_bits == 0
            || h.base_bits > MAX_LINK_BITS
            || h.next_generation > MAX_CLOCK
        {
            return bad;
        }
        // A ring's slices are whole segments; own arrays, whole words.
        let shape_ok = match (h.ring, Ring::shape(h.hashes, h.generations)) {
            (true, Some((_, segment_bits))) => h.base_bits.is_multiple_of(segment_bits),
            (true, None) => false,
            (false, _) => h.base_bits.is_multiple_of(64),
        };
        if !shape_ok {
            return bad;
        }
        let bytes = h.ring_bytes();
        if machine_memory().is_some_and(|memory| bytes > memory) {
            return Err(DecodeError::MachineMemory);
        }
        let n = h.slices;
        if n > partitioned::limits::MAX_SLICES as u64 || (n != 0 && n < h.hashes) {
            return Err(DecodeError::SliceCount);
        }
        Ok(SlidingBuilder {
            filter: Sliding {
                base,
                span,
                hashes: h.hashes as u32,
                generations: h.generations as u32,
                base_capacity: h.base_capacity,
                base_bits: h.base_bits,
                next_generation: h.next_generation,
                slices: Vec::with_capacity(n as usize),
                ring: match h.ring {
                    true => Some(Ring::new(h.hashes, h.generations, h.base_bits)?),
                    false => None,
                },
                own_arrays: false,
            },
            declared: n as usize,
            bytes,
        })
    }

    /// The ring's bytes for the decoder to fill (empty for the sliced layout); before the
    /// slices.
    pub(crate) fn ring(&mut self) -> &mut [u8] {
        self.filter.ring.as_mut().map_or(&mut [], Ring::bytes_mut)
    }

    /// Checks a slice and allocates its zeroed bits (refusing, before allocating, slices that
    /// together pass the machine's memory). Returns its bytes for the decoder to fill.
    pub(crate) fn slice(&mut self, h: SliceHeader) -> Result<&mut [u8], DecodeError> {
        let slices = &self.filter.slices;
        if slices.len() == self.declared {
            return Err(DecodeError::SliceCount);
        }
        // 0 bits: a slice in the ring.
        if (h.bits == 0 && self.filter.ring.is_none())
            || !h.bits.is_multiple_of(64)
            || h.bits > MAX_LINK_BITS
        {
            return Err(DecodeError::BitCount);
        }
        let newest = slices.len() + 1 == self.declared;
        let in_order = slices.last().is_none_or(|s| s.generation < h.generation)
            && h.generation < self.filter.next_generation;
        if !in_order
            || (h.ended == OPEN) != newest
            || h.started > MAX_CLOCK
            || (h.ended != OPEN && h.ended > MAX_CLOCK)
            || h.capacity == 0
            || h.load > h.capacity
            || h.count > h.load
            || h.level > 64
        {
            return Err(DecodeError::SliceState);
        }
        self.bytes = self.bytes.saturating_add(h.bytes());
        if machine_memory().is_some_and(|memory| self.bytes > memory) {
            return Err(DecodeError::MachineMemory);
        }
        let level = h.level as u32;
        let mut slice = match h.bits {
            0 => self
                .filter
                .ring_slice(h.generation, h.capacity, level)
                .ok_or(DecodeError::RingPlace)?,
            bits => Slice::new(h.generation, h.started, bits, h.capacity, level)?,
        };
        slice.started = h.started;
        slice.ended = h.ended;
        slice.count = h.count;
        slice.load = h.load;
        self.filter.slices.push(slice);
        Ok(self
            .filter
            .slices
            .last_mut()
            .expect("just pushed")
            .bytes_mut())
    }

    /// The filter, once every slice is in.
    pub(crate) fn finish(mut self) -> Result<Sliding, DecodeError> {
        if self.filter.slices.len() != self.declared {
            return Err(DecodeError::SliceCount);
        }
        self.filter.note_own_arrays();
        Ok(self.filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_window_layout_check_names_itself() {
        use crate::{FilterSpec, Growth, Window};
        let spec = FilterSpec {
            error: 0.01,
            capacity: 1000,
            growth: Growth::Fixed,
            window: Window::Count,
            refresh: true,
        };
        let mut f = Sliding::new(&spec, 1, u64::MAX).unwrap();
        f.add(b"item", 0, u64::MAX, true).unwrap();
        let k = u64::from(f.hashes());
        let slots = k + u64::from(f.generations());
        let good = SlidingHeader {
            slices: 2 * k,
            next_generation: 4 * slots,
            ..SlidingHeader::of(&f)
        };
        let start = |f: fn(&mut SlidingHeader)| {
            let mut h = good;
            f(&mut h);
            SlidingBuilder::new(h).map(|_| ())
        };
        let bad = Err(DecodeError::WindowParameters);
        assert_eq!(start(|_| {}), Ok(()));
        // A ring holds whole segments and needs (k + l) / k of them per line; own arrays are
        // whole words.
        assert_eq!(start(|h| h.base_bits += 1), bad);
        assert_eq!(start(|h| h.generations = h.hashes), bad);
        assert_eq!(start(|h| h.ring = false), bad);
        assert_eq!(
            start(|h| {
                h.ring = false;
                h.base_bits = 64 * 100;
            }),
            Ok(())
        );

        // One place of the ring per slice: generations `k + l` (the ring's slots) apart share
        // a place.
        let slice = |generation| SliceHeader {
            ended: 1,
            bits: 0,
            generation,
            ..SliceHeader::of(&f.slices()[0])
        };
        let mut b = SlidingBuilder::new(good).unwrap();
        assert!(b.slice(slice(3)).is_ok());
        assert_eq!(b.slice(slice(3 + k)).map(|_| ()), Ok(()));
        assert_eq!(
            b.slice(slice(3 + slots)).err(),
            Some(DecodeError::RingPlace)
        );
        // A sliced filter has no ring to put a 0-bit slice in.
        let mut b = SlidingBuilder::new(SlidingHeader {
            ring: false,
            base_bits: 64 * 100,
            ..good
        })
        .unwrap();
        assert_eq!(b.slice(slice(3)).err(), Some(DecodeError::BitCount));
        assert!(b.ring().is_empty());
    }
}
