//! The scalable chain (RedisBloom's model): items go into the newest link; a lookup checks
//! every link. When the newest link is full a new one is appended with `capacity * expansion`
//! and half the error rate, so the compound rate stays under the requested one.

use super::hash::ItemHash;
use super::link::{Layout, Link};
use super::sizing::{self, Geometry};

/// Fraction of the requested rate a NONSCALING link is sized for.
pub const NONSCALING_HEADROOM: f64 = 0.9;

/// Parameters of a new chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainParams {
    pub error: f64,
    pub capacity: u64,
    /// Growth factor; 0 or `nonscaling` means the chain never grows.
    pub expansion: u32,
    pub nonscaling: bool,
    /// Per-filter hash seed.
    pub seed: u64,
    /// Most bytes of bit storage the whole chain may take.
    pub max_bytes: u64,
}

/// Why a chain could not be created or could not take an item.
#[derive(Debug, Clone, PartialEq)]
pub enum ChainError {
    /// A NONSCALING chain is full.
    Full,
    /// The chain would need `needed` bytes, over the per-filter limit.
    TooLarge { needed: u64, limit: u64 },
    /// No link can honour the next error rate (it underflowed) or capacity (overflowed).
    CannotGrow,
}

/// Result of adding one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddOutcome {
    Added,
    /// All its bits were set already: it may have been added before.
    Present,
}

/// A chain of links: the value behind one Redis key.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Items added to the whole chain.
    pub items: u64,
    pub expansion: u32,
    pub nonscaling: bool,
    pub seed: u64,
    pub links: Vec<Link>,
}

impl Chain {
    /// A new chain with one empty link. The first link of a scaling chain uses half the
    /// requested rate.
    pub fn new(p: &ChainParams) -> Result<Self, ChainError> {
        let nonscaling = p.nonscaling || p.expansion == 0;
        // A scaling chain's links sum to p * (1 - 2^-links), leaving headroom under p; a
        // NONSCALING link is the whole budget, so it is sized for NONSCALING_HEADROOM of it,
        // enough that the measured rate stays under p despite sampling noise.
        let (error, target) = if nonscaling {
            (p.error, p.error * NONSCALING_HEADROOM)
        } else {
            (p.error * 0.5, p.error * 0.5)
        };
        let geometry = link_geometry(p.capacity, target, 0, p.max_bytes)?;
        Ok(Chain {
            items: 0,
            expansion: p.expansion,
            nonscaling,
            seed: p.seed,
            links: vec![Link::new(Layout::Classic, p.capacity, error, geometry)],
        })
    }

    /// Total bytes of bit storage.
    pub fn bit_bytes(&self) -> u64 {
        self.links.iter().map(Link::byte_count).sum()
    }

    /// Sum of the links' capacities.
    pub fn capacity(&self) -> u64 {
        self.links.iter().map(|l| l.capacity).sum()
    }

    /// Hashes an item once per layout present in the chain.
    #[inline]
    fn hashes(&self, item: &[u8]) -> Hashes {
        let mut h = Hashes {
            native: None,
            redisbloom: None,
            redisbloom32: None,
        };
        for link in &self.links {
            match link.layout {
                Layout::Classic if h.native.is_none() => {
                    h.native = Some(ItemHash::native(item, self.seed))
                }
                Layout::RedisBloom if h.redisbloom.is_none() => {
                    h.redisbloom = Some(ItemHash::redisbloom(item))
                }
                Layout::RedisBloom32 if h.redisbloom32.is_none() => {
                    h.redisbloom32 = Some(ItemHash::redisbloom32(item))
                }
                _ => {}
            }
        }
        h
    }

    /// Whether the item may have been added.
    pub fn contains(&self, item: &[u8]) -> bool {
        let h = self.hashes(item);
        self.links
            .iter()
            .rev()
            .any(|l| l.contains(h.for_layout(l.layout)))
    }

    /// Adds an item. `max_bytes` is the per-filter limit a new link must fit under.
    pub fn add(&mut self, item: &[u8], max_bytes: u64) -> Result<AddOutcome, ChainError> {
        let mut h = self.hashes(item);
        if self
            .links
            .iter()
            .rev()
            .any(|l| l.contains(h.for_layout(l.layout)))
        {
            return Ok(AddOutcome::Present);
        }
        if self.links.last().is_some_and(Link::is_full) {
            self.grow(max_bytes)?;
            if h.native.is_none() {
                h.native = Some(ItemHash::native(item, self.seed));
            }
        }
        let link = self.links.last_mut().expect("a chain always has a link");
        if link.insert(h.for_layout(link.layout)) {
            link.items += 1;
            self.items += 1;
            Ok(AddOutcome::Added)
        } else {
            Ok(AddOutcome::Present)
        }
    }

    /// Appends a link with `capacity * expansion` and half the error rate, or refuses when
    /// that link cannot be built or would break the memory limit.
    fn grow(&mut self, max_bytes: u64) -> Result<(), ChainError> {
        if self.nonscaling {
            return Err(ChainError::Full);
        }
        let last = self.links.last().expect("a chain always has a link");
        let capacity = last
            .capacity
            .checked_mul(u64::from(self.expansion))
            .ok_or(ChainError::CannotGrow)?;
        let error = last.error * 0.5;
        let geometry = link_geometry(capacity, error, self.bit_bytes(), max_bytes)?;
        self.links
            .push(Link::new(Layout::Classic, capacity, error, geometry));
        Ok(())
    }
}

/// Sizes a new link for a chain that already has `existing` bytes, within `max_bytes`.
fn link_geometry(
    capacity: u64,
    error: f64,
    existing: u64,
    max_bytes: u64,
) -> Result<Geometry, ChainError> {
    let too_large = |bytes: u64| ChainError::TooLarge {
        needed: existing.saturating_add(bytes),
        limit: max_bytes,
    };
    match sizing::classic(capacity, error) {
        Some(g) if existing.saturating_add(g.bytes()) > max_bytes => Err(too_large(g.bytes())),
        Some(g) => Ok(g),
        // The rate is fine but no geometry fits in 2^62 bits: name the size asked for.
        None if error.is_normal() && error < 1.0 => {
            Err(too_large(sizing::estimate_bytes(capacity, error)))
        }
        None => Err(ChainError::CannotGrow),
    }
}

struct Hashes {
    native: Option<ItemHash>,
    redisbloom: Option<ItemHash>,
    redisbloom32: Option<ItemHash>,
}

impl Hashes {
    #[inline(always)]
    fn for_layout(&self, layout: Layout) -> &ItemHash {
        let h = match layout {
            Layout::Classic => &self.native,
            Layout::RedisBloom => &self.redisbloom,
            Layout::RedisBloom32 => &self.redisbloom32,
        };
        h.as_ref().expect("hashed for every layout in the chain")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_LIMIT: u64 = u64::MAX;

    fn params(error: f64, capacity: u64, expansion: u32, nonscaling: bool) -> ChainParams {
        ChainParams {
            error,
            capacity,
            expansion,
            nonscaling,
            seed: 42,
            max_bytes: NO_LIMIT,
        }
    }

    fn item(prefix: &str, i: u64) -> Vec<u8> {
        format!("https://{prefix}.example/{i}").into_bytes()
    }

    #[test]
    fn scaling_matches_redisbloom_capacities_and_ratios() {
        let mut c = Chain::new(&params(0.01, 100, 2, false)).unwrap();
        for i in 0..497 {
            c.add(&item("a", i), NO_LIMIT).unwrap();
        }
        let caps: Vec<u64> = c.links.iter().map(|l| l.capacity).collect();
        let ratios: Vec<f64> = c.links.iter().map(|l| l.error).collect();
        assert_eq!(caps, vec![100, 200, 400]);
        assert_eq!(ratios, vec![0.005, 0.0025, 0.00125]);
        assert_eq!(c.links[0].items, 100);
        assert_eq!(c.links[1].items, 200);
        assert_eq!(c.items, c.links.iter().map(|l| l.items).sum::<u64>());
        assert!((490..=497).contains(&c.items), "{}", c.items);
    }

    /// Fills a chain, then checks no false negatives and the measured false-positive rate.
    fn measure(p: ChainParams, added: u64) -> f64 {
        let mut c = Chain::new(&p).unwrap();
        for i in 0..added {
            c.add(&item("in", i), NO_LIMIT).unwrap();
        }
        for i in 0..added {
            assert!(c.contains(&item("in", i)), "false negative for item {i}");
        }
        let absent = 1_000_000u64;
        let fp = (0..absent).filter(|&i| c.contains(&item("out", i))).count();
        fp as f64 / absent as f64
    }

    #[test]
    fn false_positive_rates_honour_the_request() {
        for error in [0.01, 0.001] {
            // A scaling chain filled to 10x its initial capacity.
            let scaling = measure(params(error, 100_000, 2, false), 1_000_000);
            // A full non-scaling filter.
            let full = measure(params(error, 1_000_000, 2, true), 1_000_000);
            eprintln!("error {error}: scaling x10 fpr {scaling}, full nonscaling fpr {full}");
            assert!(
                scaling <= error,
                "scaling chain at {error}: measured {scaling}"
            );
            assert!(
                full <= error,
                "non-scaling filter at {error}: measured {full}"
            );
        }
    }

    #[test]
    fn nonscaling_refuses_when_full() {
        let mut c = Chain::new(&params(0.01, 3, 2, true)).unwrap();
        let mut added = 0;
        let mut i = 0;
        while added < 3 {
            if c.add(&item("n", i), NO_LIMIT).unwrap() == AddOutcome::Added {
                added += 1;
            }
            i += 1;
        }
        assert_eq!(c.add(b"one more", NO_LIMIT), Err(ChainError::Full));
        assert_eq!(c.links.len(), 1);
    }

    #[test]
    fn memory_limit_and_underflow_are_refused() {
        let mut p = params(0.01, 1_000_000_000_000_000_000, 2, false);
        assert!(
            matches!(Chain::new(&p), Err(ChainError::TooLarge { needed, .. }) if needed > 1 << 60)
        );
        p.capacity = 1000;
        p.max_bytes = 100;
        assert_eq!(
            Chain::new(&p),
            Err(ChainError::TooLarge {
                needed: 1384,
                limit: 100
            })
        );
        // 1e-300 halving per link underflows after ~700 links: refused, never a broken link.
        let mut c = Chain::new(&params(1e-300, 1, 1, false)).unwrap();
        let mut refused = false;
        for i in 0..5000 {
            match c.add(&item("u", i), NO_LIMIT) {
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e, ChainError::CannotGrow);
                    refused = true;
                    break;
                }
            }
        }
        assert!(refused);
        assert!(c.links.iter().all(|l| l.error > 0.0 && l.bit_count() > 0));
        assert!(!c.contains(b"never added"));
    }
}
