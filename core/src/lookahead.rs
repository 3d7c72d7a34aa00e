//! The look-ahead of batch commands (BF.MADD, BF.MEXISTS, BF.INSERT, the bulk commands,
//! CF.MEXISTS, CF.INSERT): each item is hashed and its lines requested several items before it
//! is probed, so the cache misses of a batch overlap instead of queueing one after another.
//! Two ways, each kind's batches taking the one measured faster for them, each with its own
//! depth (a growing filter's loads depend on each other, the table entry then the lines it
//! points to: its batches go in blocks of three passes instead, `growing::filter::staged`):
//!
//! - **a ring** ([`answer_ahead`], [`each_ahead`]): one item prepared `DEPTH` items ahead of
//!   the one probed, interleaved: every other batch (blocks lost 2-3% on a 15-link chain's
//!   BF.BULKEXISTS, whose probes, not the loop, are the work).
//! - **blocks** ([`answer_in_blocks`], [`each_in_blocks`]): the next `DEPTH` items prepared
//!   in one short loop, then the block before stepped through in another, so each item's line
//!   was requested `DEPTH` to `2 * DEPTH - 1` items before its step. For a blocked link's adds,
//!   its lookups past the cache and a rotating window's lookups, where two small loops run
//!   faster than one large one and a block's requests back to back keep more lines in flight:
//!   BF.BULKADD of new items into a 10M filter 36.5 -> 31.3 ns an item in the core, 19.0 ->
//!   22.4 M items/s in the server; BF.BULKEXISTS on a 1 GiB filter 1.17-1.20x, on a 10M time
//!   window 6.6 -> 7.4 M items/s (alternating pairs), the same answers and bits.

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

/// Prepares the next items into `block` (as many as it holds, fewer at the end) and returns
/// how many. An item is taken only when it has a slot, so none is lost between blocks.
#[inline(always)]
fn fill<'a, H, const N: usize>(
    block: &mut [H; N],
    items: &mut impl Iterator<Item = &'a [u8]>,
    mut prepare: impl FnMut(&'a [u8]) -> H,
) -> usize {
    let mut len = 0;
    for (slot, item) in block.iter_mut().zip(items) {
        *slot = prepare(item);
        len += 1;
    }
    len
}

/// Passes each item's answer to `answer`, in order: `lookup` of its hash, prepared by
/// `prepare` a block before (the read-only batches): [`each_in_blocks`] over the filter
/// shared, no step stopping.
pub(crate) fn answer_in_blocks<'a, S, H: Copy + Default, A, const DEPTH: usize>(
    state: &S,
    items: impl Iterator<Item = &'a [u8]>,
    prepare: impl Fn(&S, &'a [u8]) -> H,
    lookup: impl Fn(&S, H) -> A,
    mut answer: impl FnMut(A),
) {
    each_in_blocks::<_, H, DEPTH>(
        &mut &*state,
        items,
        |state, item| prepare(state, item),
        |state, h| {
            answer(lookup(state, h));
            true
        },
    );
}

/// Runs `step` on each item's prepared hash, in order, each item prepared (hashed, its lines
/// requested) by `prepare` a block before its step; stops early when `step` returns false.
/// `state` is the filter both work on: `step` may change it between items (a grown link, a new
/// sub-filter), and `prepare` sees it as it was up to `2 * DEPTH - 1` items before, so a step
/// checks what it was handed against the filter as it is.
pub(crate) fn each_in_blocks<'a, S, H: Copy + Default, const DEPTH: usize>(
    state: &mut S,
    items: impl Iterator<Item = &'a [u8]>,
    prepare: impl Fn(&S, &'a [u8]) -> H,
    mut step: impl FnMut(&mut S, H) -> bool,
) {
    let mut items = items;
    let mut blocks = [[H::default(); DEPTH]; 2];
    let mut current = 0;
    let mut len = fill(&mut blocks[current], &mut items, |item| {
        prepare(state, item)
    });
    while len > 0 {
        let next_len = fill(&mut blocks[current ^ 1], &mut items, |item| {
            prepare(state, item)
        });
        for &h in &blocks[current][..len] {
            if !step(state, h) {
                return;
            }
        }
        current ^= 1;
        len = next_len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ways: every item reaches its step once, in order, at every batch length around
    /// the depth's edges, and a step that stops ends the batch there.
    macro_rules! check_order {
        ($each:ident, $answer:ident) => {
            for n in [0usize, 1, 3, 4, 5, 7, 8, 9, 12, 17, 40] {
                let items: Vec<Vec<u8>> = (0..n).map(|i| i.to_string().into_bytes()).collect();
                let index = |_: &Vec<usize>, item: &[u8]| -> usize {
                    std::str::from_utf8(item).unwrap().parse().unwrap()
                };
                let mut seen = Vec::new();
                $each::<_, usize, 4>(
                    &mut seen,
                    items.iter().map(Vec::as_slice),
                    index,
                    |seen, i| {
                        seen.push(i);
                        true
                    },
                );
                assert_eq!(seen, (0..n).collect::<Vec<_>>());
                let mut stopped = Vec::new();
                $each::<_, usize, 4>(
                    &mut stopped,
                    items.iter().map(Vec::as_slice),
                    index,
                    |seen, i| {
                        seen.push(i);
                        i < 5
                    },
                );
                assert_eq!(stopped, (0..n.min(6)).collect::<Vec<_>>());
                let mut answers = Vec::new();
                $answer::<_, usize, _, 4>(
                    &(),
                    items.iter().map(Vec::as_slice),
                    |_, item| item.len(),
                    |_, len| len,
                    |a| answers.push(a),
                );
                assert_eq!(answers, items.iter().map(Vec::len).collect::<Vec<_>>());
            }
        };
    }

    #[test]
    fn every_item_is_stepped_once_in_order() {
        check_order!(each_ahead, answer_ahead);
        check_order!(each_in_blocks, answer_in_blocks);
    }
}
