//! The scalable chain (RedisBloom's model): items go into the newest link; a lookup checks
//! every link. When the newest link is full a new one is appended with `capacity * expansion`
//! and half the error rate, so the compound rate stays under the requested one.

use crate::blocked::{array_rate, ArrayDesign, BLOCK_BITS};
use crate::bloom::link::{Layout, Link, BLOCKED_MIN_BITS};
use crate::defrag::Defrag;
use crate::hash::ItemHash;
use crate::lookahead::{answer_ahead, answer_in_blocks, each_ahead, each_in_blocks};
use crate::memory::allocated;
use crate::outcome::{AddOutcome, FilterError};
use crate::sizing::{self, Geometry};
use crate::spec::{FilterSpec, Growth};

/// Fraction of the requested rate a NONSCALING link is sized for.
pub(crate) const NONSCALING_HEADROOM: f64 = 0.9;

/// How many items ahead of the one being probed a chain's batch hashes and prefetches (its
/// ring's depth; a blocked link's blocks, its adds' and its lookups' from 16 MiB, hold as
/// many). DRAM answers in ~150 ns while a probe takes a few: several items' lines must be in
/// flight to hide it, but not so many that the prefetches overflow the core's miss buffers or
/// evict each other.
pub(crate) const AHEAD: usize = 16;

/// A blocked link's lookups go in blocks ([`answer_in_blocks`]) from this size up, where its
/// lines come from memory and a block's requests back to back keep more of them in flight;
/// below it, in the cache's reach, the ring ([`answer_ahead`]) is faster. BF.BULKEXISTS of
/// 1,000, blocks against the ring (alternating pairs, 5M items held): 1M filter 0.95x, 10M
/// (12.7 MB) 0.93-1.00x, 30M (38 MB) 1.08x, 50M 1.10x, 100M 1.05x, 1 GiB 1.20x.
const LOOKUP_BLOCKS_FROM_BYTES: u64 = 16 << 20;

/// Share of its budget a grown link is sized for. The first link keeps RedisBloom's size for
/// half the request; the links grown after it give up a fifth of theirs, so a chain whose newest
/// link is full sits near 0.9 × the request, as a NONSCALING filter does, instead of on it: a
/// filter with the defaults fed 200,000 URLs (its eleventh link 95% full) measured 1.02% at a
/// 1% request before.
pub(crate) const GROWN_HEADROOM: f64 = 0.8;

/// Most links a chain may have (a 1e-300 EXPANSION 1 chain underflows near 1000).
pub(crate) const MAX_LINKS: u64 = 1 << 16;

/// A chain of links: the value behind one Redis key. Built by [`Chain::new`] or, from a
/// serialised form, by [`crate::bloom::builder::ChainBuilder`], which between them own every invariant:
/// at least one link, item counts that add up, a scaling chain's expansion of at least 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Items added to the whole chain.
    items: u64,
    /// The stored expansion ([`Growth::stored_expansion`] for chains built here; whatever
    /// RedisBloom stored for its NONSCALING filters).
    expansion: u32,
    nonscaling: bool,
    seed: u64,
    links: Vec<Link>,
}

impl Chain {
    /// Moves its blocks (the links' array, each link's bits) where the server's defrag
    /// allocator says.
    pub fn defrag(&mut self, d: &mut Defrag) {
        d.vec(&mut self.links);
        for link in &mut self.links {
            link.defrag(d);
        }
    }

    /// A new chain with one empty link, hashed under `seed`, within `max_bytes` of bit storage.
    /// The first link of a scaling chain uses half the requested rate.
    pub fn new(spec: &FilterSpec, seed: u64, max_bytes: u64) -> Result<Self, FilterError> {
        let (error, target, classic) = match spec.growth {
            // An expandable spec builds a growing filter (`Filter::new`), never a chain.
            Growth::Fixed | Growth::Expandable => {
                // The one link is the whole budget: it is sized for NONSCALING_HEADROOM of it,
                // enough that the measured rate stays under the request despite sampling noise.
                let target = spec.error * NONSCALING_HEADROOM;
                let classic = link_geometry(spec.capacity, target, 0, max_bytes)?;
                (spec.error, target, classic)
            }
            Growth::Scaling(_) => {
                let error = spec.error * 0.5;
                let classic = first_link_geometry(spec.capacity, error, max_bytes)?;
                (error, error, classic)
            }
        };
        let (layout, geometry) = native_layout(spec.capacity, error, target, classic, 0, max_bytes);
        Ok(Chain {
            items: 0,
            expansion: spec.growth.stored_expansion(),
            nonscaling: spec.growth == Growth::Fixed,
            seed,
            links: vec![Link::new(layout, spec.capacity, error, geometry)?],
        })
    }

    /// A chain a decoder checked (see [`crate::bloom::builder::ChainBuilder`]).
    pub(super) fn from_decoded(
        items: u64,
        expansion: u32,
        nonscaling: bool,
        seed: u64,
        links: Vec<Link>,
    ) -> Self {
        Chain {
            items,
            expansion,
            nonscaling,
            seed,
            links,
        }
    }

    /// Items added to the whole chain.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The expansion the chain stores (for a NONSCALING chain, one it never uses).
    pub fn expansion(&self) -> u32 {
        self.expansion
    }

    /// Whether the chain never grows.
    pub fn is_nonscaling(&self) -> bool {
        self.nonscaling
    }

    /// The per-filter hash seed of its native links.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The links, oldest first.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The links, for the SCANDUMP loader to fill their bits.
    pub(crate) fn links_mut(&mut self) -> &mut [Link] {
        &mut self.links
    }

    /// Each link's bit array. Any bits make a valid filter (LOADCHUNK writes them too); the
    /// counts stay as they are.
    pub fn bit_arrays_mut(&mut self) -> impl Iterator<Item = &mut [u64]> {
        self.links.iter_mut().map(Link::words_mut)
    }

    /// Empties the filter, keeping its links.
    pub fn clear(&mut self) {
        for link in &mut self.links {
            link.words_mut().fill(0);
            link.items = 0;
        }
        self.items = 0;
    }

    /// Bytes the chain takes in memory: its structs plus the bit arrays (MEMORY USAGE, BF.INFO's
    /// Size).
    pub fn memory_usage(&self) -> u64 {
        (std::mem::size_of::<Chain>() + self.links.len() * std::mem::size_of::<Link>()) as u64
            + self.bit_bytes()
    }

    /// Bytes its allocations take from the allocator (not its own struct, which lives where
    /// its owner puts it): the links' array and each link's bits.
    pub fn heap_bytes(&self) -> u64 {
        let links = allocated(self.links.capacity() * std::mem::size_of::<Link>());
        self.links
            .iter()
            .fold(links, |sum, l| sum + allocated(l.bytes().len()))
    }

    /// How far the first link's expected rate when full lies above its share of the budget
    /// (0 when it does not). See `first_link_geometry`.
    pub fn first_link_excess(&self) -> f64 {
        let first = &self.links[0];
        let rate = match first.layout {
            Layout::NativeBlocked => {
                let per_block = first.capacity as f64 / (first.bit_count() / BLOCK_BITS) as f64;
                array_rate(first.hashes, per_block)
            }
            _ => sizing::classic_fpr(first.bit_count(), first.hashes, first.capacity),
        };
        (rate / first.error - 1.0).max(0.0)
    }

    /// Total bytes of bit storage.
    pub fn bit_bytes(&self) -> u64 {
        self.links.iter().map(Link::byte_count).sum()
    }

    /// Sum of the links' capacities.
    pub fn capacity(&self) -> u64 {
        self.links.iter().map(|l| l.capacity).sum()
    }

    /// Hashes an item once per layout present in the chain. The native hash is always taken:
    /// a chain may grow a native link in the middle of a batch.
    #[inline]
    fn hash(&self, item: &[u8]) -> ItemHashes {
        let mut h = ItemHashes {
            native: ItemHash::native(item, self.seed),
            redisbloom: None,
            redisbloom32: None,
        };
        for link in &self.links {
            match link.layout {
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

    /// Whether every link hashes natively: every chain rsbloom creates, and one migrated from
    /// RedisBloom never becomes one, since growth appends native links only. Its batches
    /// carry the one native hash per item instead of a hash per layout: with the wider
    /// [`ItemHashes`] a bulk lookup took 40.3 ns per item in the core (a 1M filter, blobs of
    /// 1,000 URLs), with the one hash 31.6.
    fn all_native(&self) -> bool {
        self.links.iter().all(|l| l.layout.is_native())
    }

    /// Hashes an item and starts loading every line its probes touch, in every link (a batch's
    /// look-ahead step). All k, not just the first few that usually refute an absent item: a
    /// present item needs them all, and one that stalls on its third probe costs four times
    /// what the extra prefetches do (measured on a 1 GiB filter: 60 ns per present item
    /// against 230, 44 per absent one against 31).
    #[inline(always)]
    fn hash_and_prefetch<H: ChainHash>(&self, item: &[u8]) -> H {
        let h = H::of(self, item);
        for link in &self.links {
            link.prefetch(h.for_layout(link.layout));
        }
        h
    }

    /// Whether the item may have been added. Newest link first: it is the largest, so the
    /// likeliest to hold an item.
    pub fn contains(&self, item: &[u8]) -> bool {
        self.contains_hashed(&self.hash(item))
    }

    /// [`Chain::contains`] of an item's hashes.
    #[inline(always)]
    fn contains_hashed<H: ChainHash>(&self, h: &H) -> bool {
        self.links
            .iter()
            .rev()
            .any(|l| l.contains(h.for_layout(l.layout)))
    }

    /// Checks items in order, passing each answer to `answer`. Each item is hashed and its
    /// lines prefetched [`AHEAD`] items before it is probed, so the cache misses of a
    /// batch overlap instead of queueing one after another.
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        answer: impl FnMut(bool),
    ) {
        if let [link] = &self.links[..] {
            if link.layout == Layout::NativeBlocked {
                return Self::contains_batch_blocked(link, self.seed, items, answer);
            }
        }
        if self.all_native() {
            self.contains_batch::<ItemHash>(items, answer)
        } else {
            self.contains_batch::<ItemHashes>(items, answer)
        }
    }

    fn contains_batch<'a, H: ChainHash>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        answer: impl FnMut(bool),
    ) {
        let lookup = |chain: &Self, h: H| chain.contains_hashed(&h);
        answer_ahead::<_, _, _, AHEAD>(self, items, Self::hash_and_prefetch, lookup, answer);
    }

    /// [`Chain::contains_batch`] of a chain of one blocked link (a reserved filter whose link
    /// reaches [`BLOCKED_MIN_BITS`], about 870,000 items at 1%): the block an item's line
    /// request found is the one its step reads, with no loop over links or layouts per item.
    /// Bulk lookups on a 10M filter: 34.4 -> 29.4-30 ns per item in the core; in the server
    /// (`make bench-ab`, against the build before) BF.MEXISTS 1.10x, BF.BULKEXISTS 1.10x.
    #[inline(always)]
    fn contains_batch_blocked<'a>(
        link: &Link,
        seed: u64,
        items: impl Iterator<Item = &'a [u8]>,
        answer: impl FnMut(bool),
    ) {
        let prepare = |link: &Link, item: &[u8]| link.request_block(&ItemHash::native(item, seed));
        if link.byte_count() >= LOOKUP_BLOCKS_FROM_BYTES {
            answer_in_blocks::<_, _, _, AHEAD>(link, items, prepare, Link::block_holds, answer);
        } else {
            answer_ahead::<_, _, _, AHEAD>(link, items, prepare, Link::block_holds, answer);
        }
    }

    /// Adds an item. `max_bytes` is the per-filter limit a new link must fit under.
    pub fn add(&mut self, item: &[u8], max_bytes: u64) -> Result<AddOutcome, FilterError> {
        let h = self.hash(item);
        self.add_hashed(&h, max_bytes)
    }

    /// [`Chain::add`] of an item's hashes.
    #[inline(always)]
    fn add_hashed<H: ChainHash>(
        &mut self,
        h: &H,
        max_bytes: u64,
    ) -> Result<AddOutcome, FilterError> {
        let (newest, older) = self.links.split_last().expect("a chain always has a link");
        if older
            .iter()
            .rev()
            .any(|l| l.contains(h.for_layout(l.layout)))
        {
            return Ok(AddOutcome::Present);
        }
        // The newest link is not probed before the insert below: an insert that sets no new
        // bit is exactly an item the link held, so one pass over its lines answers both.
        if newest.is_full() {
            if newest.contains(h.for_layout(newest.layout)) {
                return Ok(AddOutcome::Present);
            }
            self.grow(max_bytes)?;
        }
        let link = self.links.last_mut().expect("a chain always has a link");
        let inserted = link.insert(h.for_layout(link.layout));
        Ok(self.counted(inserted))
    }

    /// The outcome of an insert into the newest link, counted: an insert that set a new bit
    /// is a new item.
    #[inline(always)]
    fn counted(&mut self, inserted: bool) -> AddOutcome {
        if !inserted {
            return AddOutcome::Present;
        }
        self.links
            .last_mut()
            .expect("a chain always has a link")
            .items += 1;
        self.items += 1;
        AddOutcome::Added
    }

    /// Adds items in order, passing each outcome to `outcome`, which returns whether to go
    /// on; prefetching as [`Chain::contains_many`] does. Items behave exactly as if added one
    /// by one: a duplicate later in the batch is `Present`, and the chain grows mid-batch.
    pub fn add_many<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        max_bytes: u64,
        outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        if let [link] = &self.links[..] {
            if link.layout == Layout::NativeBlocked {
                return self.add_batch_blocked(items, max_bytes, outcome);
            }
        }
        if self.all_native() {
            self.add_batch::<ItemHash>(items, max_bytes, outcome)
        } else {
            self.add_batch::<ItemHashes>(items, max_bytes, outcome)
        }
    }

    fn add_batch<'a, H: ChainHash>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        max_bytes: u64,
        mut outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        each_ahead::<_, H, AHEAD>(
            self,
            items,
            |chain, item| chain.hash_and_prefetch(item),
            |chain, h| outcome(chain.add_hashed(&h, max_bytes)),
        );
    }

    /// [`Chain::add_batch`] of a chain of one blocked link, as [`Chain::contains_batch_blocked`]:
    /// each item's block is found when its line is requested and inserted into directly while
    /// the link has room; a full link takes the general path, which grows the chain (whose
    /// later items then take it too) or refuses. BF.BULKADD into a fresh 10M filter:
    /// 1.07-1.11x (two runs of 6 alternating rounds), BF.MADD of 100 1.01x. In blocks
    /// ([`each_in_blocks`]) rather than a ring: BF.BULKADD of new items into a 10M filter
    /// holding 3M, 19.0 -> 22.4 M items/s (3 alternating pairs), BF.MADD of 100 1.028x.
    fn add_batch_blocked<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        max_bytes: u64,
        mut outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        each_in_blocks::<_, (ItemHash, usize), AHEAD>(
            self,
            items,
            |chain, item| {
                let h = ItemHash::native(item, chain.seed);
                match &chain.links[..] {
                    [link] => (h, link.request_block(&h).0),
                    links => {
                        links.iter().for_each(|link| link.prefetch(&h));
                        (h, 0)
                    }
                }
            },
            |chain, (h, at)| {
                outcome(match &mut chain.links[..] {
                    [link] if !link.is_full() => {
                        let inserted = link.insert_block((at, h.h2));
                        Ok(chain.counted(inserted))
                    }
                    _ => chain.add_hashed(&h, max_bytes),
                })
            },
        );
    }

    /// Appends a link with `capacity * expansion` and half the error rate, or refuses when
    /// that link cannot be built or would break the memory limit.
    fn grow(&mut self, max_bytes: u64) -> Result<(), FilterError> {
        if self.nonscaling {
            return Err(FilterError::Full);
        }
        let last = self.links.last().expect("a chain always has a link");
        let capacity = last
            .capacity
            .checked_mul(u64::from(self.expansion))
            .ok_or(FilterError::CannotGrow)?;
        let error = last.error * 0.5;
        // Each grown link gives back the first link's excess, in proportion to its share.
        let target = error * (1.0 - self.first_link_excess()) * GROWN_HEADROOM;
        let existing = self.bit_bytes();
        let classic = link_geometry(capacity, target, existing, max_bytes)?;
        let (layout, geometry) =
            native_layout(capacity, error, target, classic, existing, max_bytes);
        let link = Link::new(layout, capacity, error, geometry)?;
        self.links
            .try_reserve(1)
            .map_err(|_| FilterError::OutOfMemory {
                needed: std::mem::size_of::<Link>() as u64,
            })?;
        self.links.push(link);
        Ok(())
    }
}

/// The first link of a scaling chain takes RedisBloom's geometry for its share `error` (half
/// the request): the same bits as RedisBloom, whose rounded-up hash count leaves the link's
/// rate a hair above its share (0.005017 for 0.005, at most ~5% above for any rate). The
/// links grown later are each sized that fraction under their own shares, and then at
/// [`GROWN_HEADROOM`] of that, so the chain's rates sum to under the request at every length:
/// `r0(1+x) + h(1-x)(p/2)(1 - 2^-(L-1)) < p(1+h)/2` for `r0 = p/2`, `h` the headroom (0.9p).
/// A filter that never grows thus costs exactly RedisBloom's memory and its measured rate stays
/// near half the request.
fn first_link_geometry(capacity: u64, error: f64, max_bytes: u64) -> Result<Geometry, FilterError> {
    match sizing::redisbloom(capacity, error) {
        Some(g) if g.bytes() <= max_bytes => Ok(g),
        _ => link_geometry(capacity, error, 0, max_bytes),
    }
}

/// A new native link's layout and geometry for `capacity` items (`error`: the rate it is
/// stored with; `target`: the rate it is sized for; `classic`: its classic geometry): blocked
/// where the classic link would reach [`BLOCKED_MIN_BITS`] and a blocked array of at most
/// `MAX_LINK_BITS` within `max_bytes` (beside the chain's `existing` bytes) reaches the
/// target; else the classic geometry, with the plain or mixed probes
/// ([`Layout::for_new_link`]).
fn native_layout(
    capacity: u64,
    error: f64,
    target: f64,
    classic: Geometry,
    existing: u64,
    max_bytes: u64,
) -> (Layout, Geometry) {
    if classic.bits >= BLOCKED_MIN_BITS {
        if let Some(design) = ArrayDesign::for_rate(target) {
            let bits = design.blocks_for(capacity).saturating_mul(BLOCK_BITS);
            let blocked = Geometry {
                bits,
                hashes: design.hashes,
            };
            let fits = existing.saturating_add(blocked.bytes()) <= max_bytes;
            if bits <= sizing::MAX_LINK_BITS && fits {
                return (Layout::NativeBlocked, blocked);
            }
        }
    }
    (Layout::for_new_link(classic.bits, error), classic)
}

/// Sizes a new link for a chain that already has `existing` bytes, within `max_bytes`.
fn link_geometry(
    capacity: u64,
    error: f64,
    existing: u64,
    max_bytes: u64,
) -> Result<Geometry, FilterError> {
    let too_large = |bytes: u64| FilterError::TooLarge {
        needed: existing.saturating_add(bytes),
        limit: max_bytes,
    };
    match sizing::classic(capacity, error) {
        Some(g) if existing.saturating_add(g.bytes()) > max_bytes => Err(too_large(g.bytes())),
        Some(g) => Ok(g),
        // The rate is fine but no link of at most MAX_LINK_BITS honours it: name the size
        // asked for, against the per-filter limit when that is the smaller one.
        None if error.is_normal() && error < 1.0 => {
            let needed = sizing::estimate_bytes(capacity, error);
            if existing.saturating_add(needed) > max_bytes {
                Err(too_large(needed))
            } else {
                Err(FilterError::LinkTooLarge { needed })
            }
        }
        None => Err(FilterError::CannotGrow),
    }
}

/// An item's hashes as a chain's batch carries them: [`ItemHash`] alone where every link is
/// native ([`Chain::all_native`]), [`ItemHashes`] where some came from RedisBloom.
trait ChainHash: Copy + Default {
    /// The item's hashes for every layout in `chain`.
    fn of(chain: &Chain, item: &[u8]) -> Self;
    /// The hash a link of `layout` probes with.
    fn for_layout(&self, layout: Layout) -> &ItemHash;
}

impl ChainHash for ItemHash {
    #[inline(always)]
    fn of(chain: &Chain, item: &[u8]) -> Self {
        ItemHash::native(item, chain.seed)
    }

    #[inline(always)]
    fn for_layout(&self, layout: Layout) -> &ItemHash {
        debug_assert!(layout.is_native(), "a native hash for a {layout:?} link");
        self
    }
}

impl ChainHash for ItemHashes {
    #[inline(always)]
    fn of(chain: &Chain, item: &[u8]) -> Self {
        chain.hash(item)
    }

    #[inline(always)]
    fn for_layout(&self, layout: Layout) -> &ItemHash {
        let h = match layout {
            Layout::Native | Layout::NativeMixed | Layout::NativeBlocked => return &self.native,
            Layout::RedisBloom => &self.redisbloom,
            Layout::RedisBloom32 => &self.redisbloom32,
        };
        h.as_ref().expect("hashed for every layout in the chain")
    }
}

/// An item's hashes for every layout in a chain.
#[derive(Debug, Clone, Copy, Default)]
struct ItemHashes {
    native: ItemHash,
    redisbloom: Option<ItemHash>,
    redisbloom32: Option<ItemHash>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizing::MAX_LINK_BITS;
    use crate::Window;

    const NO_LIMIT: u64 = u64::MAX;

    fn params(error: f64, capacity: u64, expansion: u32, nonscaling: bool) -> FilterSpec {
        FilterSpec {
            error,
            capacity,
            growth: if nonscaling {
                Growth::Fixed
            } else {
                Growth::Scaling(expansion)
            },
            window: Window::Unbounded,
            refresh: true,
        }
    }

    fn item(prefix: &str, i: u64) -> Vec<u8> {
        format!("https://{prefix}.example/{i}").into_bytes()
    }

    #[test]
    fn scaling_matches_redisbloom_capacities_and_ratios() {
        let mut c = Chain::new(&params(0.01, 100, 2, false), 42, NO_LIMIT).unwrap();
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
    fn measure(p: FilterSpec, added: u64) -> f64 {
        let mut c = Chain::new(&p, 42, NO_LIMIT).unwrap();
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

    /// Adds `items` one by one to one chain and in batches to a copy: the outcomes, and the
    /// chains afterwards, must be the same; so must the lookups of present and absent items.
    fn assert_batches_match_singles(mut single: Chain, items: &[Vec<u8>]) {
        let mut batched = single.clone();
        let mut expected = Vec::new();
        for item in items {
            let r = single.add(item, NO_LIMIT);
            expected.push(r.clone());
            if r == Err(FilterError::Full) {
                break;
            }
        }
        let mut got = Vec::new();
        // Uneven batch sizes, so batches start and end at every point of the lookahead window.
        for batch in items.chunks(37) {
            let mut go_on = true;
            batched.add_many(batch.iter().map(|v| &v[..]), NO_LIMIT, |r| {
                go_on = r != Err(FilterError::Full);
                got.push(r);
                go_on
            });
            if !go_on {
                break;
            }
        }
        assert_eq!(got, expected);
        assert_eq!(batched, single);
        let probes: Vec<Vec<u8>> = (0..3000)
            .map(|i| item("probe", i))
            .chain(items.iter().cloned())
            .collect();
        let mut answers = Vec::new();
        batched.contains_many(probes.iter().map(|v| &v[..]), |p| answers.push(p));
        let one_by_one: Vec<bool> = probes.iter().map(|p| single.contains(p)).collect();
        assert_eq!(answers, one_by_one);
    }

    #[test]
    fn batches_behave_like_single_items() {
        // Duplicates inside batches, and growth from 50 items to several links mid-batch.
        let items: Vec<Vec<u8>> = (0..2000).map(|i| item("b", i % 1500)).collect();
        assert_batches_match_singles(
            Chain::new(&params(0.01, 50, 2, false), 42, NO_LIMIT).unwrap(),
            &items,
        );
        // A NONSCALING filter that fills up in the middle of a batch.
        assert_batches_match_singles(
            Chain::new(&params(0.01, 100, 2, true), 42, NO_LIMIT).unwrap(),
            &items,
        );
        // A chain mixing RedisBloom's layouts (as migrated filters do) with native growth.
        let mut mixed = Chain::new(&params(0.01, 200, 2, false), 42, NO_LIMIT).unwrap();
        let g = sizing::redisbloom(100, 0.01).unwrap();
        mixed
            .links
            .insert(0, Link::new(Layout::RedisBloom32, 100, 0.01, g).unwrap());
        mixed
            .links
            .insert(1, Link::new(Layout::RedisBloom, 100, 0.01, g).unwrap());
        mixed.links[0].items = 100;
        mixed.links[1].items = 100;
        assert_batches_match_singles(mixed, &items);
    }

    #[test]
    fn batches_on_one_blocked_link_behave_like_single_items() {
        // A reserved filter big enough for a blocked link takes the batches' one-link path
        // (`add_batch_blocked`, and its lookups): it must answer and set bits as the general
        // path does, up to the batch that fills it (growing the chain, or refusing the rest).
        let items: Vec<Vec<u8>> = (0..1_000_000).map(|i| item("k", i % 950_000)).collect();
        for nonscaling in [false, true] {
            let chain = Chain::new(&params(0.01, 900_000, 2, nonscaling), 42, NO_LIMIT).unwrap();
            assert_eq!(chain.links.len(), 1);
            assert_eq!(chain.links[0].layout, Layout::NativeBlocked);
            assert_batches_match_singles(chain, &items);
        }
    }

    #[test]
    fn lookups_of_a_link_past_the_cache_go_in_blocks_and_answer_as_single_items() {
        // Past LOOKUP_BLOCKS_FROM_BYTES a blocked link's lookups take the blocks, not the ring.
        let mut chain = Chain::new(&params(0.01, 15_000_000, 2, false), 42, NO_LIMIT).unwrap();
        assert!(chain.links[0].byte_count() >= LOOKUP_BLOCKS_FROM_BYTES);
        assert_eq!(chain.links[0].layout, Layout::NativeBlocked);
        let items: Vec<Vec<u8>> = (0..200_000).map(|i| item("k", i)).collect();
        chain.add_many(items.iter().map(|v| &v[..]), NO_LIMIT, |_| true);
        let probes: Vec<Vec<u8>> = (0..200_000)
            .map(|i| item("probe", i))
            .chain(items.iter().cloned())
            .collect();
        let one_by_one: Vec<bool> = probes.iter().map(|p| chain.contains(p)).collect();
        for batch in [1, 15, 16, 17, 37, 1000] {
            let mut answers = Vec::new();
            for chunk in probes.chunks(batch) {
                chain.contains_many(chunk.iter().map(|v| &v[..]), |p| answers.push(p));
            }
            assert_eq!(answers, one_by_one, "batches of {batch}");
        }
        assert!(one_by_one[200_000..].iter().all(|&p| p));
    }

    #[test]
    fn first_link_costs_redisbloom_bits_and_the_chain_stays_under_the_request() {
        for error in [0.3, 0.05, 0.01, 0.001, 5e-5, 1e-9] {
            for expansion in [1, 2, 4] {
                let mut c =
                    Chain::new(&params(error, 1000, expansion, false), 42, NO_LIMIT).unwrap();
                let rb = sizing::redisbloom(1000, error * 0.5).unwrap();
                assert_eq!(
                    (c.links[0].bit_count(), c.links[0].hashes),
                    (rb.bits, rb.hashes)
                );
                // Every grown link stays under its share less the first link's excess, which
                // bounds the whole chain's rate by the request at any length (see
                // first_link_geometry); here, five links.
                let excess = c.first_link_excess();
                assert!(
                    excess < 0.05,
                    "{error}: first link {excess} above its share"
                );
                while c.links.len() < 5 {
                    c.grow(NO_LIMIT).unwrap();
                }
                let rate = |l: &Link| sizing::classic_fpr(l.bit_count(), l.hashes, l.capacity);
                for l in &c.links[1..] {
                    assert!(
                        rate(l) <= l.error * (1.0 - excess),
                        "{error}: link of {} items at {}",
                        l.capacity,
                        l.error
                    );
                }
                let sum: f64 = c.links.iter().map(rate).sum();
                assert!(sum <= error, "{error} x{expansion}: links sum to {sum}");
            }
        }
    }

    #[test]
    fn nonscaling_refuses_when_full() {
        let mut c = Chain::new(&params(0.01, 3, 2, true), 42, NO_LIMIT).unwrap();
        let mut added = 0;
        let mut i = 0;
        while added < 3 {
            if c.add(&item("n", i), NO_LIMIT).unwrap() == AddOutcome::Added {
                added += 1;
            }
            i += 1;
        }
        assert_eq!(c.add(b"one more", NO_LIMIT), Err(FilterError::Full));
        assert_eq!(c.links.len(), 1);
    }

    #[test]
    fn memory_limit_and_underflow_are_refused() {
        let mut p = params(0.01, 1_000_000_000_000_000_000, 2, false);
        assert!(
            matches!(Chain::new(&p, 42, NO_LIMIT), Err(FilterError::LinkTooLarge { needed }) if needed > 1 << 60)
        );
        assert!(
            matches!(Chain::new(&p, 42, 1 << 40), Err(FilterError::TooLarge { needed, limit: 1099511627776 }) if needed > 1 << 60)
        );
        p.capacity = 1000;
        assert_eq!(
            Chain::new(&p, 42, 100),
            Err(FilterError::TooLarge {
                needed: 1384,
                limit: 100
            })
        );
        // 1e-300 halving per link underflows after ~700 links: refused, never a broken link.
        let mut c = Chain::new(&params(1e-300, 1, 1, false), 42, NO_LIMIT).unwrap();
        let mut refused = false;
        for i in 0..5000 {
            match c.add(&item("u", i), NO_LIMIT) {
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e, FilterError::CannotGrow);
                    refused = true;
                    break;
                }
            }
        }
        assert!(refused);
        assert!(c.links.iter().all(|l| l.error > 0.0 && l.bit_count() > 0));
        assert!(!c.contains(b"never added"));
    }

    #[test]
    fn creation_and_the_decoders_share_one_link_limit() {
        // The largest NONSCALING filter at 1% that creation allows: its one link passes every
        // check a decoder makes, so it can be saved and loaded back; one item more is refused
        // at creation, before anything is allocated.
        let error = 0.01 * NONSCALING_HEADROOM;
        let fits = |capacity| sizing::classic(capacity, error).is_some();
        let (mut lo, mut hi) = (1u64, 1u64 << 40);
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let largest = sizing::classic(lo, error).unwrap();
        assert!(
            largest.bits > MAX_LINK_BITS - MAX_LINK_BITS / 1000,
            "{largest:?}"
        );
        let header = crate::bloom::builder::LinkHeader {
            layout: Layout::Native,
            capacity: lo,
            error: 0.01,
            hashes: u64::from(largest.hashes),
            bits: largest.bits,
            items: lo,
        };
        assert_eq!(header.check(), Ok(()));
        assert!(matches!(
            Chain::new(&params(0.01, hi, 2, true), 42, NO_LIMIT),
            Err(FilterError::LinkTooLarge { needed }) if needed > MAX_LINK_BITS / 8 * 99 / 100
        ));
    }
}
