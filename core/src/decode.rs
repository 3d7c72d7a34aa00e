//! The one decoder skeleton. rsbloom's RDB format ([`super::rdb`]), RedisBloom's RDB encodings
//! ([`super::redisbloom_rdb`]) and the SCANDUMP header ([`super::scandump`]) each read their
//! own fields, then build the filter through [`ChainBuilder`], which owns every invariant a
//! chain must hold (link count, growth, per-link geometry, the memory the links take, item
//! sums), or, for a window filter, [`SlidingBuilder`] (its parameters, each slice's geometry
//! and counts, the memory), or, for a cuckoo filter, [`CuckooBuilder`] (its parameters, each
//! sub-filter's buckets, the memory). A check that fires names itself in [`DecodeError`], so a test can
//! assert which one.

use std::fmt;

use super::chain::{Chain, MAX_LINKS};
use super::cuckoo::{self, Cuckoo, MAX_BUCKETS, MAX_EXPANSION, MAX_FILTERS};
use super::link::{Layout, Link};
use super::sizing::{Geometry, MAX_HASHES, MAX_LINK_BITS};
use super::sliding::{self, Kind, Ring, Slice, Sliding, MAX_CLOCK, OPEN};
use super::spec::{Growth, Window};

/// Why a serialised filter was refused: which check fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ended early, held a field of another type, or Redis reported a read error.
    Read(&'static str),
    /// An encoding version this build does not read.
    UnknownEncoding,
    /// Flag or option bits this build does not know.
    UnknownFlags,
    /// No links, or more than [`MAX_LINKS`].
    LinkCount,
    /// A scaling chain without expansion, or an expansion past 32 bits.
    Expansion,
    /// A link layout tag this build does not know.
    UnknownLayout,
    /// A link capacity of 0.
    Capacity,
    /// A link error rate outside (0, 1).
    ErrorRate,
    /// A link hash count of 0 or above [`MAX_HASHES`].
    HashCount,
    /// A link bit count of 0, not whole 64-bit words, or above [`MAX_LINK_BITS`].
    BitCount,
    /// A RedisBloom power-of-two link whose bit count is not `2^n2`.
    PowerOfTwo,
    /// A RedisBloom link whose hash count is not `ceil(ln 2 * bits per entry)`.
    BitsPerEntry,
    /// The links' item counts overflow or do not add up to the chain's.
    ItemSum,
    /// The links together would take more than this machine's memory (RAM and swap).
    MachineMemory,
    /// An empty piece of a bit array.
    EmptyPiece,
    /// A piece of a bit array running past the end of its link.
    LongPiece,
    /// A SCANDUMP header whose length is not what its link count says.
    HeaderLength,
    /// A window filter's parameters that no window filter has (kind, window, hashes,
    /// generations, base slice).
    WindowParameters,
    /// A window filter's slice count: over the limit, or neither 0 nor at least `k`.
    SliceCount,
    /// A slice whose numbers cannot be: generations out of order, an open generation that is
    /// not the newest, counts over its load or its load over its capacity.
    SliceState,
    /// A slice in the ring whose place another slice holds.
    RingPlace,
    /// A cuckoo filter's sub-filter count: 0, over 65535, or not what its header said.
    FilterCount,
    /// A cuckoo bucket size of 0 or above 255.
    BucketSize,
    /// A cuckoo filter's max iterations of 0 or above 65535.
    Iterations,
    /// A cuckoo expansion that is neither 0 nor a power of two up to 32768, or 0 with more
    /// than one sub-filter.
    CuckooExpansion,
    /// A sub-filter bucket count that is 0, not a power of two, 2^56 or more, or (the first)
    /// not the header's.
    Buckets,
    /// A slot array whose length is not its buckets × the bucket size.
    SlotArray,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            DecodeError::Read(what) => what,
            DecodeError::UnknownEncoding => "unknown encoding version",
            DecodeError::UnknownFlags => "unknown flags or options",
            DecodeError::LinkCount => "bad link count",
            DecodeError::Expansion => "bad expansion (a scaling filter needs 1 to 2^32-1)",
            DecodeError::UnknownLayout => "unknown link layout",
            DecodeError::Capacity => "link capacity 0",
            DecodeError::ErrorRate => "link error rate outside (0, 1)",
            DecodeError::HashCount => "bad link hash count",
            DecodeError::BitCount => "bad link bit count",
            DecodeError::PowerOfTwo => "power-of-two link whose bit count is not 2^n2",
            DecodeError::BitsPerEntry => "link hash count disagrees with its bits per entry",
            DecodeError::ItemSum => "link item counts disagree with the filter's",
            DecodeError::MachineMemory => "filter larger than this machine's memory",
            DecodeError::EmptyPiece => "empty bit-array piece",
            DecodeError::LongPiece => "bit-array piece longer than its link",
            DecodeError::HeaderLength => "header length disagrees with its link count",
            DecodeError::WindowParameters => "bad window filter parameters",
            DecodeError::SliceCount => "bad window slice count",
            DecodeError::SliceState => "bad window slice state",
            DecodeError::RingPlace => "two window slices in one place of the ring",
            DecodeError::FilterCount => "bad cuckoo sub-filter count",
            DecodeError::BucketSize => "bad cuckoo bucket size (1 to 255)",
            DecodeError::Iterations => "bad cuckoo max iterations (1 to 65535)",
            DecodeError::CuckooExpansion => {
                "bad cuckoo expansion (0 with one sub-filter, or a power of two up to 32768)"
            }
            DecodeError::Buckets => "bad cuckoo bucket count",
            DecodeError::SlotArray => "cuckoo slot array length disagrees with its buckets",
        };
        f.write_str(text)
    }
}

/// A chain as a serialised form describes it, before its links.
#[derive(Debug, Clone, Copy)]
pub struct ChainHeader {
    /// Items in the whole chain.
    pub items: u64,
    /// How many links follow.
    pub links: u64,
    pub expansion: u64,
    pub nonscaling: bool,
    pub seed: u64,
}

/// One link as a serialised form describes it, before its bits are read.
#[derive(Debug, Clone, Copy)]
pub struct LinkHeader {
    pub layout: Layout,
    pub capacity: u64,
    pub error: f64,
    pub hashes: u64,
    pub bits: u64,
    /// Items in this link (RedisBloom's RDB stores it after the bits: set it on the link then).
    pub items: u64,
}

impl LinkHeader {
    /// The per-link checks, the same for every format and for creation's limit
    /// ([`MAX_LINK_BITS`]): a link rsbloom built can always be loaded back.
    pub fn check(&self) -> Result<(), DecodeError> {
        if self.capacity == 0 {
            return Err(DecodeError::Capacity);
        }
        if !(self.error > 0.0 && self.error < 1.0) {
            return Err(DecodeError::ErrorRate);
        }
        if self.hashes == 0 || self.hashes > u64::from(MAX_HASHES) {
            return Err(DecodeError::HashCount);
        }
        if self.bits == 0 || !self.bits.is_multiple_of(64) || self.bits > MAX_LINK_BITS {
            return Err(DecodeError::BitCount);
        }
        Ok(())
    }

    /// Bytes of the link's bit array (valid once [`LinkHeader::check`] passed).
    pub fn bytes(&self) -> u64 {
        self.bits / 8
    }
}

/// Builds a decoded chain link by link, checking each before allocating it.
#[derive(Debug)]
pub struct ChainBuilder {
    header: ChainHeader,
    expansion: u32,
    links: Vec<Link>,
    bytes: u64,
}

impl ChainBuilder {
    /// Starts a chain: checks the link count and the growth.
    pub fn new(header: ChainHeader) -> Result<Self, DecodeError> {
        if header.links == 0 || header.links > MAX_LINKS {
            return Err(DecodeError::LinkCount);
        }
        let expansion = u32::try_from(header.expansion).map_err(|_| DecodeError::Expansion)?;
        if !header.nonscaling && expansion == 0 {
            return Err(DecodeError::Expansion);
        }
        Ok(ChainBuilder {
            header,
            expansion,
            links: Vec::with_capacity(header.links as usize),
            bytes: 0,
        })
    }

    /// Checks a link and allocates its zeroed bits, refusing a chain larger than the machine's
    /// memory before allocating: a forged header must not make the server ask for terabytes,
    /// which the allocator answers by aborting Redis when the kernel will not overcommit that
    /// much. A genuine filter that large could not have been held here either. Returns the link
    /// for the decoder to fill.
    pub fn link(&mut self, h: LinkHeader) -> Result<&mut Link, DecodeError> {
        if self.links.len() as u64 == self.header.links {
            return Err(DecodeError::LinkCount);
        }
        h.check()?;
        self.bytes = self.bytes.saturating_add(h.bytes());
        if machine_memory().is_some_and(|memory| self.bytes > memory) {
            return Err(DecodeError::MachineMemory);
        }
        let geometry = Geometry {
            bits: h.bits,
            hashes: h.hashes as u32,
        };
        let mut link = Link::new(h.layout, h.capacity, h.error, geometry);
        link.items = h.items;
        self.links.push(link);
        Ok(self.links.last_mut().expect("just pushed"))
    }

    /// The chain, once every link is in and their item counts add up to the chain's.
    pub fn finish(self) -> Result<Chain, DecodeError> {
        if self.links.len() as u64 != self.header.links {
            return Err(DecodeError::LinkCount);
        }
        let sum = self
            .links
            .iter()
            .try_fold(0u64, |sum, l| sum.checked_add(l.items))
            .ok_or(DecodeError::ItemSum)?;
        if sum != self.header.items {
            return Err(DecodeError::ItemSum);
        }
        Ok(Chain::from_decoded(
            self.header.items,
            self.expansion,
            self.header.nonscaling,
            self.header.seed,
            self.links,
        ))
    }
}

/// A window filter as a serialised form describes it, before its slices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlidingHeader {
    /// 1: count window (`SLIDING`), 2: time window (`WINDOW`).
    pub kind: u64,
    pub seed: u64,
    pub error: f64,
    pub capacity: u64,
    pub window: u64,
    pub span: u64,
    pub hashes: u64,
    pub generations: u64,
    pub base_capacity: u64,
    pub base_bits: u64,
    /// 0 for a filter that does not grow (count windows, NONSCALING time windows).
    pub expansion: u64,
    pub clock: u64,
    pub added: u64,
    pub next_generation: u64,
    pub slices: u64,
    /// The blocked layout (a ring of base slices, whose bits come before the slices'); false
    /// for the sliced layout, where every slice has its own array.
    pub ring: bool,
}

impl SlidingHeader {
    /// Bytes of the ring the header describes (0 for the sliced layout or a bad shape).
    pub fn ring_bytes(&self) -> u64 {
        match (self.ring, Ring::shape(self.hashes, self.generations)) {
            (true, Some((_, segment_bits))) => {
                Ring::bytes_for(self.hashes, self.base_bits, segment_bits)
            }
            _ => 0,
        }
    }

    /// The header fields of a filter, as every format writes them.
    pub fn of(f: &Sliding) -> Self {
        SlidingHeader {
            kind: match f.kind {
                Kind::Count => 1,
                Kind::Time => 2,
            },
            seed: f.seed,
            error: f.error,
            capacity: f.capacity,
            window: f.window,
            span: f.span,
            hashes: u64::from(f.hashes),
            generations: u64::from(f.generations),
            base_capacity: f.base_capacity,
            base_bits: f.base_bits,
            expansion: match f.growth {
                Growth::Fixed => 0,
                Growth::Scaling(n) => u64::from(n),
            },
            clock: f.clock,
            added: f.added,
            next_generation: f.next_generation,
            slices: f.slices.len() as u64,
            ring: f.ring.is_some(),
        }
    }
}

/// One slice as a serialised form describes it, before its bits: `bits` is the size of its
/// own array, 0 for a slice in the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceHeader {
    pub generation: u64,
    pub started: u64,
    pub ended: u64,
    pub count: u64,
    pub load: u64,
    pub capacity: u64,
    pub level: u64,
    pub bits: u64,
}

impl SliceHeader {
    pub fn of(s: &Slice) -> Self {
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
    pub fn bytes(&self) -> u64 {
        self.bits / 8
    }

    /// Its fields in the order every format stores them.
    pub fn fields(&self) -> [u64; 8] {
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
    pub fn from_fields(f: [u64; 8]) -> Self {
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
pub struct SlidingBuilder {
    filter: Sliding,
    declared: usize,
    bytes: u64,
}

impl SlidingBuilder {
    /// Starts a window filter: checks every parameter against what [`Sliding::new`] can make.
    pub fn new(h: SlidingHeader) -> Result<Self, DecodeError> {
        let bad = Err(DecodeError::WindowParameters);
        let kind = match h.kind {
            1 => Kind::Count,
            2 => Kind::Time,
            _ => return bad,
        };
        let growth = match (kind, h.expansion) {
            (_, 0) => Growth::Fixed,
            (Kind::Time, n) if n <= u64::from(u32::MAX) => Growth::Scaling(n as u32),
            _ => return Err(DecodeError::Expansion),
        };
        if !(h.error > 0.0 && h.error < 1.0) {
            return Err(DecodeError::ErrorRate);
        }
        let time_ok = h.window >= 1000
            && h.window <= Window::MAX_SECONDS * 1000
            && h.span >= 1
            && h.span <= h.window;
        let shape_ok = match kind {
            Kind::Count => h.window == h.capacity && h.span == 0,
            Kind::Time => time_ok,
        };
        if !shape_ok
            || h.capacity == 0
            || h.hashes == 0
            || h.hashes > u64::from(sliding::MAX_HASHES)
            || h.generations == 0
            || h.generations > u64::from(sliding::MAX_HASHES * sliding::MIN_SLACK_DIVISOR)
            || h.base_capacity < h.hashes
            || h.base_bits == 0
            || h.base_bits > MAX_LINK_BITS
            || h.clock > MAX_CLOCK
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
        if n > sliding::MAX_SLICES as u64 || (n != 0 && n < h.hashes) {
            return Err(DecodeError::SliceCount);
        }
        Ok(SlidingBuilder {
            filter: Sliding {
                kind,
                seed: h.seed,
                error: h.error,
                capacity: h.capacity,
                window: h.window,
                span: h.span,
                hashes: h.hashes as u32,
                generations: h.generations as u32,
                base_capacity: h.base_capacity,
                base_bits: h.base_bits,
                growth,
                clock: h.clock,
                added: h.added,
                next_generation: h.next_generation,
                slices: Vec::with_capacity(n as usize),
                ring: h
                    .ring
                    .then(|| Ring::new(h.hashes, h.generations, h.base_bits)),
                own_arrays: false,
            },
            declared: n as usize,
            bytes,
        })
    }

    /// The ring's bytes for the decoder to fill (empty for the sliced layout); before the
    /// slices.
    pub fn ring(&mut self) -> &mut [u8] {
        self.filter.ring.as_mut().map_or(&mut [], Ring::bytes_mut)
    }

    /// Checks a slice and allocates its zeroed bits (refusing, before allocating, slices that
    /// together pass the machine's memory). Returns its bytes for the decoder to fill.
    pub fn slice(&mut self, h: SliceHeader) -> Result<&mut [u8], DecodeError> {
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
            bits => Slice::new(h.generation, h.started, bits, h.capacity, level),
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
    pub fn finish(mut self) -> Result<Sliding, DecodeError> {
        if self.filter.slices.len() != self.declared {
            return Err(DecodeError::SliceCount);
        }
        self.filter.note_own_arrays();
        Ok(self.filter)
    }
}

/// A cuckoo filter as a serialised form describes it, before its sub-filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooHeader {
    pub items: u64,
    pub deletes: u64,
    /// Buckets of the first sub-filter.
    pub buckets: u64,
    pub filters: u64,
    pub bucket_size: u64,
    pub max_iterations: u64,
    pub expansion: u64,
    pub seed: u64,
}

impl CuckooHeader {
    /// Buckets of sub-filter `k` as growth makes it (`buckets × expansion^k`), for the forms
    /// that do not store each count (the SCANDUMP header, RedisBloom's oldest RDB encodings).
    pub fn grown_buckets(&self, k: u64) -> Result<u64, DecodeError> {
        u32::try_from(k)
            .ok()
            .and_then(|k| self.expansion.checked_pow(k))
            .and_then(|factor| factor.checked_mul(self.buckets))
            .filter(|&n| n < MAX_BUCKETS)
            .ok_or(DecodeError::Buckets)
    }
}

/// Builds a decoded cuckoo filter sub-filter by sub-filter, checking each before allocating it.
#[derive(Debug)]
pub struct CuckooBuilder {
    header: CuckooHeader,
    filters: Vec<Box<[u8]>>,
    bytes: u64,
}

impl CuckooBuilder {
    /// Starts a filter: checks the sub-filter count, bucket size, iterations and expansion.
    pub fn new(header: CuckooHeader) -> Result<Self, DecodeError> {
        if header.filters == 0 || header.filters > MAX_FILTERS as u64 {
            return Err(DecodeError::FilterCount);
        }
        if !(1..=255).contains(&header.bucket_size) {
            return Err(DecodeError::BucketSize);
        }
        if !(1..=65535).contains(&header.max_iterations) {
            return Err(DecodeError::Iterations);
        }
        let e = header.expansion;
        let expansion_ok = if e == 0 {
            header.filters == 1
        } else {
            e.is_power_of_two() && e <= u64::from(MAX_EXPANSION)
        };
        if !expansion_ok {
            return Err(DecodeError::CuckooExpansion);
        }
        Ok(CuckooBuilder {
            header,
            filters: Vec::with_capacity(header.filters as usize),
            bytes: 0,
        })
    }

    /// Checks the next sub-filter's bucket count and allocates its zeroed slots, refusing a
    /// filter larger than the machine's memory first (as [`ChainBuilder::link`] does). Returns
    /// the slots for the decoder to fill.
    pub fn filter(&mut self, buckets: u64) -> Result<&mut [u8], DecodeError> {
        if self.filters.len() as u64 == self.header.filters {
            return Err(DecodeError::FilterCount);
        }
        let first_ok = !self.filters.is_empty() || buckets == self.header.buckets;
        if !buckets.is_power_of_two() || buckets >= MAX_BUCKETS || !first_ok {
            return Err(DecodeError::Buckets);
        }
        let bytes = buckets * self.header.bucket_size;
        self.bytes = self.bytes.saturating_add(bytes);
        if machine_memory().is_some_and(|memory| self.bytes > memory) {
            return Err(DecodeError::MachineMemory);
        }
        self.filters.push(cuckoo::zeroed(bytes));
        Ok(self.filters.last_mut().expect("just pushed"))
    }

    /// The filter, once every sub-filter is in.
    pub fn finish(self) -> Result<Cuckoo, DecodeError> {
        if self.filters.len() as u64 != self.header.filters {
            return Err(DecodeError::FilterCount);
        }
        let h = self.header;
        Ok(Cuckoo::from_parts(
            self.filters,
            h.bucket_size as u8,
            h.max_iterations as u16,
            h.expansion as u16,
            h.items,
            h.deletes,
            h.seed,
        ))
    }
}

/// Bytes of RAM plus swap, when the OS tells.
pub fn machine_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysinfo is plain integers, for which all-zero bytes are a valid value.
        let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable sysinfo struct.
        if unsafe { libc::sysinfo(&mut info) } == 0 {
            let unit = u64::from(info.mem_unit.max(1));
            let total = (info.totalram as u64).saturating_add(info.totalswap as u64);
            return Some(total.saturating_mul(unit));
        }
    }
    None
}

/// Sink of typed fields (Redis's module RDB I/O, or a `Vec<Field>` in tests).
pub trait FieldWriter {
    fn unsigned(&mut self, v: u64);
    fn double(&mut self, v: f64);
    fn bytes(&mut self, v: &[u8]);
}

/// Source of typed fields; every read may fail (truncated or corrupt input).
pub trait FieldReader {
    fn unsigned(&mut self) -> Result<u64, DecodeError>;
    fn double(&mut self) -> Result<f64, DecodeError>;
    /// Reads one string field into the start of `dst` and returns its length; a field longer
    /// than `dst` is [`DecodeError::LongPiece`].
    fn bytes_into(&mut self, dst: &mut [u8]) -> Result<usize, DecodeError>;
}

/// Fills `dst` from consecutive non-empty string fields (a bit array's pieces).
pub fn read_pieces(r: &mut impl FieldReader, mut dst: &mut [u8]) -> Result<(), DecodeError> {
    while !dst.is_empty() {
        match r.bytes_into(dst)? {
            0 => return Err(DecodeError::EmptyPiece),
            n => dst = &mut dst[n..],
        }
    }
    Ok(())
}

/// In-memory field stream, for tests and fuzzing.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Field {
    #[default]
    None,
    Unsigned(u64),
    Double(f64),
    Bytes(Vec<u8>),
}

impl FieldWriter for Vec<Field> {
    fn unsigned(&mut self, v: u64) {
        self.push(Field::Unsigned(v));
    }
    fn double(&mut self, v: f64) {
        self.push(Field::Double(v));
    }
    fn bytes(&mut self, v: &[u8]) {
        self.push(Field::Bytes(v.to_vec()));
    }
}

/// Reads back a `Vec<Field>`.
pub struct FieldSlice<'a>(pub &'a [Field]);

impl FieldSlice<'_> {
    fn next(&mut self) -> Result<&Field, DecodeError> {
        let (first, rest) = self.0.split_first().ok_or(DecodeError::Read("truncated"))?;
        self.0 = rest;
        Ok(first)
    }
}

impl FieldReader for FieldSlice<'_> {
    fn unsigned(&mut self) -> Result<u64, DecodeError> {
        match self.next()? {
            Field::Unsigned(v) => Ok(*v),
            _ => Err(DecodeError::Read("expected an unsigned field")),
        }
    }
    fn double(&mut self) -> Result<f64, DecodeError> {
        match self.next()? {
            Field::Double(v) => Ok(*v),
            _ => Err(DecodeError::Read("expected a double field")),
        }
    }
    fn bytes_into(&mut self, dst: &mut [u8]) -> Result<usize, DecodeError> {
        match self.next()? {
            Field::Bytes(v) if v.len() <= dst.len() => {
                dst[..v.len()].copy_from_slice(v);
                Ok(v.len())
            }
            Field::Bytes(_) => Err(DecodeError::LongPiece),
            _ => Err(DecodeError::Read("expected a string field")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(items: u64, links: u64) -> ChainHeader {
        ChainHeader {
            items,
            links,
            expansion: 2,
            nonscaling: false,
            seed: 1,
        }
    }

    fn link(items: u64) -> LinkHeader {
        LinkHeader {
            layout: Layout::Native,
            capacity: 10,
            error: 0.01,
            hashes: 7,
            bits: 128,
            items,
        }
    }

    #[test]
    fn each_chain_check_names_itself() {
        let start = |h| ChainBuilder::new(h).map(|_| ());
        assert_eq!(start(header(0, 0)), Err(DecodeError::LinkCount));
        assert_eq!(start(header(0, MAX_LINKS + 1)), Err(DecodeError::LinkCount));
        assert_eq!(start(header(0, MAX_LINKS)), Ok(()));
        let mut h = header(0, 1);
        h.expansion = 0;
        assert_eq!(start(h), Err(DecodeError::Expansion));
        h.nonscaling = true;
        assert_eq!(start(h), Ok(()));
        h.expansion = 1 << 32;
        assert_eq!(start(h), Err(DecodeError::Expansion));

        // One link declared, two given; two declared, one given; sums that disagree.
        let mut b = ChainBuilder::new(header(3, 1)).unwrap();
        b.link(link(3)).unwrap();
        assert_eq!(b.link(link(0)).err(), Some(DecodeError::LinkCount));
        assert!(b.finish().is_ok());
        let mut b = ChainBuilder::new(header(3, 2)).unwrap();
        b.link(link(3)).unwrap();
        assert_eq!(b.finish().err(), Some(DecodeError::LinkCount));
        let mut b = ChainBuilder::new(header(4, 1)).unwrap();
        b.link(link(3)).unwrap();
        assert_eq!(b.finish().err(), Some(DecodeError::ItemSum));
        let mut b = ChainBuilder::new(header(1, 2)).unwrap();
        b.link(link(u64::MAX)).unwrap();
        b.link(link(2)).unwrap();
        assert_eq!(b.finish().err(), Some(DecodeError::ItemSum));
    }

    #[test]
    fn each_link_check_names_itself() {
        let check = |f: fn(&mut LinkHeader)| {
            let mut h = link(0);
            f(&mut h);
            h.check()
        };
        assert_eq!(check(|_| {}), Ok(()));
        assert_eq!(check(|h| h.capacity = 0), Err(DecodeError::Capacity));
        assert_eq!(check(|h| h.error = 0.0), Err(DecodeError::ErrorRate));
        assert_eq!(check(|h| h.error = 1.0), Err(DecodeError::ErrorRate));
        assert_eq!(check(|h| h.error = f64::NAN), Err(DecodeError::ErrorRate));
        assert_eq!(check(|h| h.hashes = 0), Err(DecodeError::HashCount));
        assert_eq!(check(|h| h.hashes = 4097), Err(DecodeError::HashCount));
        assert_eq!(check(|h| h.hashes = 4096), Ok(()));
        assert_eq!(check(|h| h.bits = 0), Err(DecodeError::BitCount));
        assert_eq!(check(|h| h.bits = 65), Err(DecodeError::BitCount));
        assert_eq!(check(|h| h.bits = MAX_LINK_BITS), Ok(()));
        assert_eq!(
            check(|h| h.bits = MAX_LINK_BITS + 64),
            Err(DecodeError::BitCount)
        );
    }

    #[test]
    fn each_window_layout_check_names_itself() {
        use crate::{FilterSpec, Growth, Window};
        let spec = FilterSpec {
            error: 0.01,
            capacity: 1000,
            growth: Growth::Fixed,
            window: Window::Count,
        };
        let mut f = Sliding::new(&spec, 1, u64::MAX).unwrap();
        f.add(b"item", 0, u64::MAX).unwrap();
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

    #[test]
    fn a_chain_larger_than_memory_is_refused_before_allocating() {
        // Links of 2^40 bits (128 GiB) each, the most one link may have: refused once the
        // total passes this machine's memory, before that link is allocated (an allocation past
        // what the kernel will overcommit would abort the test process).
        let ram = machine_memory().expect("machine memory");
        let links = ram / (MAX_LINK_BITS / 8) + 1;
        let mut b = ChainBuilder::new(header(0, links + 1)).unwrap();
        let mut huge = link(0);
        huge.bits = MAX_LINK_BITS;
        let mut refused = None;
        for _ in 0..links {
            match b.link(huge) {
                Ok(_) => {}
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        assert_eq!(refused, Some(DecodeError::MachineMemory));
    }
}
