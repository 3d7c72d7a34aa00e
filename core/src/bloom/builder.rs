//! The checks a decoded chain must pass: [`ChainBuilder`] owns every invariant a chain must
//! hold (link count, growth, per-link geometry, the memory the links take, item sums).

use crate::blocked::{BLOCK_BITS, MAX_BLOCK_HASHES};
use crate::bloom::chain::{Chain, MAX_LINKS};
use crate::bloom::link::{Layout, Link};
use crate::codec::{machine_memory, DecodeError};
use crate::sizing::{Geometry, MAX_LINK_BITS, MAX_LINK_HASHES};

/// A chain as a serialised form describes it, before its links.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChainHeader {
    /// Items in the whole chain.
    pub items: u64,
    /// How many links follow.
    pub links: u64,
    /// The stored expansion.
    pub expansion: u64,
    /// Whether the chain never grows (NONSCALING).
    pub nonscaling: bool,
    /// The chain's hash seed (native links).
    pub seed: u64,
}

/// One link as a serialised form describes it, before its bits are read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinkHeader {
    /// How the link hashes.
    pub layout: Layout,
    /// Items the link was sized for.
    pub capacity: u64,
    /// The error rate the link was sized for.
    pub error: f64,
    /// Bits each item sets.
    pub hashes: u64,
    /// The bit array's length.
    pub bits: u64,
    /// Items in this link (RedisBloom's RDB stores it after the bits: set it on the link then).
    pub items: u64,
}

impl LinkHeader {
    /// The per-link checks, the same for every format and for creation's limit
    /// ([`MAX_LINK_BITS`]): a link rsbloom built can always be loaded back.
    pub(crate) fn check(&self) -> Result<(), DecodeError> {
        if self.capacity == 0 {
            return Err(DecodeError::Capacity);
        }
        if !(self.error > 0.0 && self.error < 1.0) {
            return Err(DecodeError::ErrorRate);
        }
        if self.hashes == 0 || self.hashes > u64::from(MAX_LINK_HASHES) {
            return Err(DecodeError::HashCount);
        }
        if self.bits == 0 || !self.bits.is_multiple_of(64) || self.bits > MAX_LINK_BITS {
            return Err(DecodeError::BitCount);
        }
        if self.layout == Layout::NativeBlocked {
            // Whole blocks, and no more bits per item than a block's pattern has multipliers.
            if !self.bits.is_multiple_of(BLOCK_BITS) {
                return Err(DecodeError::BitCount);
            }
            if self.hashes > u64::from(MAX_BLOCK_HASHES) {
                return Err(DecodeError::HashCount);
            }
        }
        Ok(())
    }

    /// Bytes of the link's bit array (valid once [`LinkHeader::check`] passed).
    pub(crate) fn bytes(&self) -> u64 {
        self.bits / 8
    }
}

/// Builds a decoded chain link by link, checking each before allocating it.
#[derive(Debug)]
pub(crate) struct ChainBuilder {
    header: ChainHeader,
    expansion: u32,
    links: Vec<Link>,
    bytes: u64,
}

impl ChainBuilder {
    /// Starts a chain: checks the link count and the growth.
    pub(crate) fn new(header: ChainHeader) -> Result<Self, DecodeError> {
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
    pub(crate) fn link(&mut self, h: LinkHeader) -> Result<&mut Link, DecodeError> {
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
        let mut link = Link::new(h.layout, h.capacity, h.error, geometry)?;
        link.items = h.items;
        self.links.push(link);
        Ok(self.links.last_mut().expect("just pushed"))
    }

    /// The chain, once every link is in and their item counts add up to the chain's.
    pub(crate) fn finish(self) -> Result<Chain, DecodeError> {
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
