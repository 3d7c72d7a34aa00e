//! The look-ahead of batch commands (MADD, MEXISTS, INSERT): each item is hashed and its
//! lines prefetched [`LOOKAHEAD`] items before it is probed, so the cache misses of a batch
//! overlap instead of queueing one after another.

/// How many items ahead of the one being probed a batch hashes and prefetches. DRAM answers in
/// ~150 ns while a probe takes a few: several items' lines must be in flight to hide it, but
/// not so many that the prefetches overflow the core's miss buffers or evict each other.
pub const LOOKAHEAD: usize = 16;

/// A window over a batch of items: prepares (hashes and prefetches) up to [`LOOKAHEAD`] items
/// before handing out the oldest one's hash.
pub struct Lookahead<I, H> {
    items: I,
    ring: [H; LOOKAHEAD],
    head: usize,
    len: usize,
}

impl<'a, I: Iterator<Item = &'a [u8]>, H: Copy + Default> Lookahead<I, H> {
    pub fn new(items: I) -> Self {
        Lookahead {
            items,
            ring: [H::default(); LOOKAHEAD],
            head: 0,
            len: 0,
        }
    }

    /// The next item's hash, after preparing the items that follow it. `prepare` is passed
    /// afresh each time because the caller may change the filter between items.
    #[inline]
    pub fn next(&mut self, mut prepare: impl FnMut(&'a [u8]) -> H) -> Option<H> {
        while self.len < LOOKAHEAD {
            let Some(item) = self.items.next() else { break };
            self.ring[(self.head + self.len) % LOOKAHEAD] = prepare(item);
            self.len += 1;
        }
        if self.len == 0 {
            return None;
        }
        let h = self.ring[self.head];
        self.head = (self.head + 1) % LOOKAHEAD;
        self.len -= 1;
        Some(h)
    }
}
