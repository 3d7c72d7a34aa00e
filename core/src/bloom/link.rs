//! One link of a chain: a fixed-size Bloom filter with its own capacity and error rate.

use crate::defrag::Defrag;
use crate::memory::{Block, OutOfMemory};

use crate::blocked::{has_pattern, pattern, BLOCK_BITS};
use crate::hash::{mix64, reduce, ItemHash};
use crate::hints;
use crate::sizing::{words_as_bytes, words_as_bytes_mut, Geometry};

/// How a link maps an item onto bits. Stored per link in every serialised form, so a chain can
/// hold links of different layouts (a filter migrated from RedisBloom keeps its old links and
/// grows new native ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// rsbloom's plain hashing: xxh3-128 under the filter seed, probes `h1 + i*h2` reduced by
    /// multiply-shift. The step's image in the link is a uniform real `s` in `0..bits`, and an
    /// item whose `d·s` lands within a bit of a multiple of `bits` (`2/bits` of items, for each
    /// `d < k`) sets only `d` distinct bits: a floor of about `2/bits` under the link's rate.
    /// In a small link that floor is the rate (a 64-bit link at 1e-6 answered 1166 times the
    /// request), so new links take this layout only where [`Layout::for_new_link`] finds the
    /// floor negligible, and [`Layout::NativeMixed`] below it.
    Native = 1,
    /// RedisBloom's layout (64-bit mode): MurmurHash64A pair, probes `(a + i*b) mod bits`.
    RedisBloom = 2,
    /// RedisBloom's legacy 32-bit mode (filters whose options lack FORCE64): MurmurHash2 pair,
    /// zero-extended, probes `(a + i*b) mod bits`.
    RedisBloom32 = 3,
    /// The same xxh3-128 pair, each probe `h1 + i*h2` mixed ([`mix64`]) before the
    /// multiply-shift reduction, so that an item's `k` positions are as good as independent in
    /// a link of any size (the rate table in the docs, from [`crate::bloom::rates`]). The mix
    /// costs 13-16% of a batch's items/s in a 10M filter (BF.MADD / BF.MEXISTS of 100, P32),
    /// so only links too small for the plain probes take it.
    NativeMixed = 4,
    /// rsbloom's blocked hashing: the same xxh3-128 pair, and all of an item's `k` bits in one
    /// 512-bit block (a cache line): the block at `h1` by multiply-shift, the bits in it from
    /// `h2` ([`crate::blocked::pattern`]). A lookup loads one line where the other layouts
    /// load `k`: in a 10M filter at 1% their 7 prefetches per item were the server's time in
    /// a bulk lookup. Sized at the exact rate of a blocked array
    /// ([`crate::blocked::ArrayDesign`]), which takes more bits for a rate (11.4 bits per item
    /// at 1% against 9.6). New links of at least [`BLOCKED_MIN_BITS`] take it.
    NativeBlocked = 5,
}

/// New links whose classic size would reach this many bits (1 MiB, a quarter of this
/// machine's 4 MiB L2) are blocked: smaller ones stay in cache, where `k` probes cost little
/// and the classic layout's fewer bits (and RedisBloom's geometry) win.
pub(crate) const BLOCKED_MIN_BITS: u64 = 1 << 23;

/// A new link takes the plain probes when `bits × error` reaches this: their floor of about
/// `2/bits` is then at most 0.2% of the link's rate. At 1% that is links of 102,400 bits
/// (about 10,700 items) and up; at 1e-6, links of 10^9 bits.
const PLAIN_PROBES_MIN_BITS_TIMES_RATE: f64 = 1024.0;

impl Layout {
    /// Whether the layout hashes with rsbloom's xxh3-128 pair (every layout but RedisBloom's).
    pub fn is_native(self) -> bool {
        matches!(
            self,
            Layout::Native | Layout::NativeMixed | Layout::NativeBlocked
        )
    }

    /// The native layout a new link of `bits` bits sized for `error` takes: the plain probes
    /// where their floor cannot show in its rate, the mixed ones below.
    pub fn for_new_link(bits: u64, error: f64) -> Self {
        if bits as f64 * error >= PLAIN_PROBES_MIN_BITS_TIMES_RATE {
            Layout::Native
        } else {
            Layout::NativeMixed
        }
    }

    /// Width of the hash, as BF.DEBUG's `hashwidth` shows it.
    pub fn hash_width(self) -> u32 {
        match self {
            Layout::RedisBloom32 => 32,
            Layout::Native | Layout::NativeMixed | Layout::NativeBlocked | Layout::RedisBloom => 64,
        }
    }

    /// The tag written to disk.
    pub fn tag(self) -> u64 {
        self as u64
    }

    /// The layout for a tag read from disk.
    pub fn from_tag(tag: u64) -> Option<Self> {
        match tag {
            1 => Some(Layout::Native),
            2 => Some(Layout::RedisBloom),
            3 => Some(Layout::RedisBloom32),
            4 => Some(Layout::NativeMixed),
            5 => Some(Layout::NativeBlocked),
            _ => None,
        }
    }
}

/// Words in a block of a blocked link.
const BLOCK_WORDS: usize = (BLOCK_BITS / 64) as usize;

/// One fixed-size Bloom filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// How this link hashes: rsbloom's native hashing or RedisBloom's.
    pub layout: Layout,
    /// Items this link is sized for.
    pub capacity: u64,
    /// The error rate this link was sized for.
    pub error: f64,
    /// Bits each item sets (`k`).
    pub hashes: u32,
    /// Items added to this link (adds that set at least one new bit).
    pub items: u64,
    /// The bits, 64 to a word: bit `x` is bit `x % 64` of word `x / 64`.
    bits: Block<u64>,
}

impl Link {
    /// Moves its bits' block where the server's defrag allocator says.
    pub(crate) fn defrag(&mut self, d: &mut Defrag) {
        d.block(&mut self.bits);
    }

    /// A zeroed link of the given geometry, or the error when the allocator refuses its bits.
    pub fn new(
        layout: Layout,
        capacity: u64,
        error: f64,
        geometry: Geometry,
    ) -> Result<Self, OutOfMemory> {
        let mut words = Block::zeroed((geometry.bits / 64) as usize)?;
        hints::advise_huge_pages(&mut words);
        Ok(Link {
            layout,
            capacity,
            error,
            hashes: geometry.hashes,
            items: 0,
            bits: words,
        })
    }

    /// Number of bits.
    pub fn bit_count(&self) -> u64 {
        self.bits.len() as u64 * 64
    }

    /// Bytes of bit storage.
    pub fn byte_count(&self) -> u64 {
        self.bit_count() / 8
    }

    /// Whether the link holds as many items as it was sized for.
    pub fn is_full(&self) -> bool {
        self.items >= self.capacity
    }

    /// The first word of an item's block in a blocked link.
    #[inline(always)]
    fn block_of(&self, hash: &ItemHash) -> usize {
        reduce(hash.h1, self.bit_count() / BLOCK_BITS) as usize * BLOCK_WORDS
    }

    #[inline(always)]
    fn position(&self, hash: &ItemHash, i: u32) -> u64 {
        let x = hash.probe(i);
        match self.layout {
            // A blocked link answers before any probe (see `contains`).
            Layout::Native | Layout::NativeBlocked => reduce(x, self.bit_count()),
            Layout::NativeMixed => reduce(mix64(x), self.bit_count()),
            Layout::RedisBloom | Layout::RedisBloom32 => x % self.bit_count(),
        }
    }

    /// Starts loading every line `hash` probes, so that a later [`Link::contains`] or
    /// [`Link::insert`] finds them in cache.
    #[inline]
    pub fn prefetch(&self, hash: &ItemHash) {
        let words = &self.bits;
        if self.layout == Layout::NativeBlocked {
            self.request_block(hash);
            return;
        }
        for i in 0..self.hashes {
            hints::prefetch(&words[(self.position(hash, i) >> 6) as usize]);
        }
    }

    /// A blocked link's block for `hash` (its first word) and the key of its bits, the block's
    /// line requested: a batch's look-ahead step, whose answer [`Link::block_holds`] gives.
    #[inline(always)]
    pub(crate) fn request_block(&self, hash: &ItemHash) -> (usize, u64) {
        debug_assert_eq!(self.layout, Layout::NativeBlocked);
        let at = self.block_of(hash);
        hints::prefetch(&self.bits[at]);
        (at, hash.h2)
    }

    /// Whether the block from [`Link::request_block`] holds the key's bits.
    #[inline(always)]
    pub(crate) fn block_holds(&self, (at, key): (usize, u64)) -> bool {
        let block = self.bits[at..at + BLOCK_WORDS]
            .try_into()
            .expect("a whole block");
        has_pattern(block, key, self.hashes)
    }

    /// Sets the key's bits in the block from [`Link::request_block`]; true when at least one
    /// was new. A block that holds them all is not written: a crawler re-adds mostly URLs it
    /// has, and a written line goes back to memory dirty (and, during a BGSAVE, copies its
    /// page). BF.BULKADD of 3M present items into a 10M filter: 1.09x items/s, 7% less server
    /// CPU (6 alternating rounds); of new items 0.97x and 1.06x in two runs of 6 and 8.
    #[inline(always)]
    pub(crate) fn insert_block(&mut self, (at, key): (usize, u64)) -> bool {
        let mask = pattern(key, self.hashes);
        let block = &mut self.bits[at..at + BLOCK_WORDS];
        let changed = block
            .iter()
            .zip(&mask)
            .fold(0, |changed, (word, bits)| changed | bits & !*word);
        if changed != 0 {
            for (word, bits) in block.iter_mut().zip(&mask) {
                *word |= bits;
            }
        }
        changed != 0
    }

    /// Whether every probe of `hash` is set.
    #[inline]
    pub fn contains(&self, hash: &ItemHash) -> bool {
        let words = &self.bits;
        if self.layout == Layout::NativeBlocked {
            return self.block_holds((self.block_of(hash), hash.h2));
        }
        (0..self.hashes).all(|i| {
            let p = self.position(hash, i);
            words[(p >> 6) as usize] & (1u64 << (p & 63)) != 0
        })
    }

    /// Sets every probe of `hash`; true when at least one bit was new.
    #[inline]
    pub fn insert(&mut self, hash: &ItemHash) -> bool {
        if self.layout == Layout::NativeBlocked {
            return self.insert_block((self.block_of(hash), hash.h2));
        }
        // The probes are read up to the first clear bit, and only the bits from there on are
        // written: an item already present (a crawler's URL added again) writes nothing, so
        // it dirties no line and, during a BGSAVE, copies no page, as the blocked links.
        let is_set = |link: &Self, p: u64| link.bits[(p >> 6) as usize] & (1u64 << (p & 63)) != 0;
        let Some(first_clear) = (0..self.hashes).find(|&i| !is_set(self, self.position(hash, i)))
        else {
            return false;
        };
        for i in first_clear..self.hashes {
            let p = self.position(hash, i);
            self.bits[(p >> 6) as usize] |= 1u64 << (p & 63);
        }
        true
    }

    /// The bit array as 64-bit words; bit `x` is bit `x % 64` of word `x / 64`, which on disk
    /// (little-endian words) is RedisBloom's "lowest bit of each byte first".
    pub fn words(&self) -> &[u64] {
        &self.bits
    }

    /// Mutable access to the words, for loading.
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.bits
    }

    /// The bit array as bytes, as every serialised form stores it: little-endian words.
    pub fn bytes(&self) -> &[u8] {
        words_as_bytes(self.words())
    }

    /// Mutable byte view of the bit array (see [`Link::bytes`]).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        words_as_bytes_mut(self.words_mut())
    }
}
