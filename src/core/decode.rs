//! The one decoder skeleton. rsbloom's RDB format ([`super::rdb`]), RedisBloom's RDB encodings
//! ([`super::redisbloom_rdb`]) and the SCANDUMP header ([`super::scandump`]) each read their
//! own fields, then build the chain through [`ChainBuilder`], which owns every invariant a
//! chain must hold (link count, growth, per-link geometry, the memory the links take, item
//! sums). A check that fires names itself in [`DecodeError`], so a test can assert which one.

use std::fmt;

use super::chain::{Chain, MAX_LINKS};
use super::link::{Layout, Link};
use super::sizing::{Geometry, MAX_HASHES, MAX_LINK_BITS};

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
