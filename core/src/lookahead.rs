//! The look-ahead of batch commands (BF.MADD, BF.MEXISTS, BF.INSERT, CF.MEXISTS, CF.INSERT):
//! each item is hashed and its lines prefetched `DEPTH` items before it is probed, so the cache
//! misses of a batch overlap instead of queueing one after another. Every filter kind's batches
//! go through this one ring, each with its own depth, but a growing filter's, whose loads
//! depend on each other (the table entry, then the lines it points to): they go in blocks of
//! three passes (`growing::filter::staged`).

/// A queue of up to `N` values, oldest first, in a fixed array: the look-ahead's window.
struct Ring<T, const N: usize> {
    slots: [T; N],
    head: usize,
    len: usize,
}

impl<T: Copy + Default, const N: usize> Ring<T, N> {
    /// An empty ring.
    fn new() -> Self {
        Ring {
            slots: [T::default(); N],
            head: 0,
            len: 0,
        }
    }

    /// Whether it holds `N` values.
    #[inline(always)]
    fn is_full(&self) -> bool {
        self.len == N
    }

    /// Appends `value`; the ring is not full.
    #[inline(always)]
    fn push(&mut self, value: T) {
        debug_assert!(self.len < N);
        self.slots[(self.head + self.len) % N] = value;
        self.len += 1;
    }

    /// Takes the oldest value.
    #[inline(always)]
    fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let value = self.slots[self.head];
        self.head = (self.head + 1) % N;
        self.len -= 1;
        Some(value)
    }
}

/// A window over a batch of items: prepares (hashes and prefetches) up to `DEPTH` items
/// before handing out the oldest one's hash.
pub(crate) struct Lookahead<I, H, const DEPTH: usize> {
    items: I,
    ring: Ring<H, DEPTH>,
}

impl<'a, I: Iterator<Item = &'a [u8]>, H: Copy + Default, const DEPTH: usize>
    Lookahead<I, H, DEPTH>
{
    /// A look-ahead over `items`, nothing prepared yet.
    pub(crate) fn new(items: I) -> Self {
        Lookahead {
            items,
            ring: Ring::new(),
        }
    }

    /// The next item's hash, after preparing the items that follow it. `prepare` is passed
    /// afresh each time because the caller may change the filter between items.
    #[inline]
    pub(crate) fn next(&mut self, mut prepare: impl FnMut(&'a [u8]) -> H) -> Option<H> {
        while !self.ring.is_full() {
            let Some(item) = self.items.next() else { break };
            self.ring.push(prepare(item));
        }
        self.ring.pop()
    }
}

/// Passes each item's answer to `answer`, in order: `lookup` of its hash, prepared by
/// `prepare` `DEPTH` items before (the read-only batches: MEXISTS, and MADD's look-ups).
pub(crate) fn answer_ahead<'a, S, H: Copy + Default, A, const DEPTH: usize>(
    state: &S,
    items: impl Iterator<Item = &'a [u8]>,
    prepare: impl Fn(&S, &'a [u8]) -> H,
    lookup: impl Fn(&S, H) -> A,
    mut answer: impl FnMut(A),
) {
    let mut ahead = Lookahead::<_, H, DEPTH>::new(items);
    while let Some(h) = ahead.next(|item| prepare(state, item)) {
        answer(lookup(state, h));
    }
}

/// Runs `step` on each item's prepared hash, in order, each item prepared (hashed, its lines
/// requested) by `prepare` `DEPTH` items before its step; stops early when `step` returns
/// false. `state` is the filter both work on: `step` may change it between items (a grown
/// link, a new sub-filter), and `prepare` sees it as it is then.
pub(crate) fn each_ahead<'a, S, H: Copy + Default, const DEPTH: usize>(
    state: &mut S,
    items: impl Iterator<Item = &'a [u8]>,
    prepare: impl Fn(&S, &'a [u8]) -> H,
    mut step: impl FnMut(&mut S, H) -> bool,
) {
    let mut ahead = Lookahead::<_, H, DEPTH>::new(items);
    while let Some(h) = ahead.next(|item| prepare(state, item)) {
        if !step(state, h) {
            break;
        }
    }
}
