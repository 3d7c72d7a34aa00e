//! Lookups: a single item prefetches its lines and scans its runs (`Sliding::exists`); a
//! batch scans many items round-robin, each probe prefetched a turn ahead
//! (`Sliding::scan_many`).

use crate::hash::reduce;
use crate::hash::ItemHash;
use crate::hints;
use crate::window::partitioned::ring::Slice;
use crate::window::partitioned::ring::{key, Storage};
use crate::window::partitioned::Sliding;

/// Items a batch lookup scans at once (see [`Sliding::scan_many`]): enough misses in flight to
/// cover DRAM's latency, few enough for the core's miss buffers.
pub(super) const SCANS: usize = 16;

/// Below this many items, a command looks them up one by one ([`Sliding::exists`]).
pub(super) const FEW: usize = 4;

/// One item's run scan as a state machine, for many items at once ([`Sliding::scan_many`]):
/// it tests the far end of each candidate run first and skips past any unset bit; `age` is
/// the next age to test, ages `start..known` are known to be set, `end` is the current run's
/// end. It answers as [`Sliding::exists`] does.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scan {
    pub(super) h: ItemHash,
    pub(super) start: usize,
    pub(super) known: usize,
    pub(super) end: usize,
    pub(super) age: usize,
}

impl Scan {
    /// A scan of `k`-runs, testing the first run's far end first (`live >= k`).
    pub(super) fn new(h: ItemHash, k: usize) -> Self {
        Scan {
            h,
            start: 0,
            known: 0,
            end: k,
            age: k - 1,
        }
    }

    /// Takes the bit at `age`; the answer once the scan is over (whether a run was found).
    #[inline]
    pub(super) fn step(&mut self, set: bool, k: usize, live: usize) -> Option<bool> {
        if set {
            if self.age == self.known {
                return Some(true);
            }
            self.age -= 1;
        } else {
            self.known = self.end;
            self.start = self.age + 1;
            if self.start + k > live {
                return Some(false);
            }
            self.end = self.start + k;
            self.age = self.end - 1;
        }
        None
    }
}

impl Sliding {
    /// Whether the item may have been added within the window, at server time `now`.
    pub fn contains(&self, item: &[u8], now: u64) -> bool {
        let clock = self.clock_at(now);
        self.exists(&self.hash(item), self.first_live(clock))
    }

    #[inline]
    /// An item's hash under this filter's seed.
    pub fn hash(&self, item: &[u8]) -> ItemHash {
        ItemHash::native(item, self.base.seed)
    }

    /// The item's bit in `slice`: its word (in the slice's own array, or in the ring's) and
    /// mask.
    ///
    /// Multiply-shift hashing of the item's key under the slice's own odd multiplier (a
    /// universal family), so an item's positions in two slices are unrelated (plain double
    /// hashing `h1 + i*h2` would put them on one line, and an item that collides with another
    /// in one slice would likely collide in the next).
    #[inline(always)]
    pub(super) fn spot(&self, slice: &Slice, h: &ItemHash) -> (usize, u64) {
        let x = key(h);
        let bit = match (&slice.storage, &self.ring) {
            (Storage::Own(_), _) => reduce(x.wrapping_mul(slice.salt), slice.bits),
            (&Storage::Ring { group, offset }, Some(ring)) => {
                ring.spot(group, offset, slice.salt, x)
            }
            (Storage::Ring { .. }, None) => unreachable!("a ring slice in a filter without a ring"),
        };
        ((bit >> 6) as usize, 1u64 << (bit & 63))
    }

    /// The item's bit in `slice`.
    #[inline(always)]
    pub(super) fn test(&self, slice: &Slice, h: &ItemHash) -> bool {
        let (word, mask) = self.spot(slice, h);
        self.words_of(slice)[word] & mask != 0
    }

    /// Starts loading the line of the item's bit in `slice`.
    #[inline(always)]
    pub(super) fn prefetch(&self, slice: &Slice, h: &ItemHash) {
        hints::prefetch(&self.words_of(slice)[self.spot(slice, h).0]);
    }

    #[inline(always)]
    pub(super) fn words_of<'a>(&'a self, slice: &'a Slice) -> &'a [u64] {
        match (&slice.storage, &self.ring) {
            (Storage::Own(words), _) => words,
            (Storage::Ring { .. }, Some(ring)) => ring.words(),
            (Storage::Ring { .. }, None) => unreachable!("a ring slice in a filter without a ring"),
        }
    }

    /// Whether the item has `k` consecutive set bits among the slices from `first` on.
    ///
    /// Every line the scan may touch is loaded first, together: the item's line in each of
    /// the ring's groups (`k` lines hold all its bits there), and its word in each live slice
    /// with its own array. The scan then tests the far end of each candidate run and skips
    /// past any unset bit ([`Scan`]).
    #[inline]
    pub(super) fn exists(&self, h: &ItemHash, first: usize) -> bool {
        let live = self.slices.len() - first;
        let k = self.hashes as usize;
        if live < k {
            return false;
        }
        if let Some(ring) = &self.ring {
            ring.prefetch(key(h));
        }
        if self.own_arrays {
            self.slices[first..]
                .iter()
                .filter(|slice| !slice.in_ring())
                .for_each(|slice| self.prefetch(slice, h));
        }
        let newest = self.slices.len() - 1;
        let mut scan = Scan::new(*h, k);
        loop {
            let set = self.test(&self.slices[newest - scan.age], h);
            if let Some(found) = scan.step(set, k, live) {
                return found;
            }
        }
    }

    /// Checks items in order at server time `now`, passing each answer to `answer`: exactly
    /// those of [`Sliding::contains`], found by `Sliding::scan_many`.
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        now: u64,
        mut answer: impl FnMut(bool),
    ) {
        let hashes: Vec<ItemHash> = items.map(|item| self.hash(item)).collect();
        let first = self.first_live(self.clock_at(now));
        if hashes.len() < FEW {
            return hashes.iter().for_each(|h| answer(self.exists(h, first)));
        }
        let mut found = vec![false; hashes.len()];
        self.scan_many(&hashes, first, |i, f| found[i] = f);
        found.into_iter().for_each(&mut answer);
    }

    /// Whether each item has a run among the slices from `first` on, reported as `(index,
    /// found)` in any order.
    ///
    /// An item's scan is a chain of dependent probes (the next age to test depends on the last
    /// bit), each a likely cache miss in another slice: one item at a time, they queue. So this
    /// scans [`SCANS`] items at once, round-robin: each turn tests one probe per item and
    /// prefetches that item's next one, which has arrived by its next turn.
    pub(super) fn scan_many(
        &self,
        hashes: &[ItemHash],
        first: usize,
        mut report: impl FnMut(usize, bool),
    ) {
        let live = self.slices.len() - first;
        let k = self.hashes as usize;
        if live < k {
            return (0..hashes.len()).for_each(|i| report(i, false));
        }
        let newest = self.slices.len() - 1;
        let line = |h: &ItemHash, age: usize| self.prefetch(&self.slices[newest - age], h);
        let mut scans: [Option<(usize, Scan)>; SCANS] = [None; SCANS];
        let mut next = 0;
        loop {
            let mut active = false;
            for slot in scans.iter_mut() {
                let Some((i, scan)) = slot else {
                    if next < hashes.len() {
                        let scan = Scan::new(hashes[next], k);
                        if let Some(ring) = &self.ring {
                            ring.prefetch(key(&scan.h));
                        }
                        line(&scan.h, scan.age);
                        *slot = Some((next, scan));
                        next += 1;
                        active = true;
                    }
                    continue;
                };
                active = true;
                let set = self.test(&self.slices[newest - scan.age], &scan.h);
                match scan.step(set, k, live) {
                    Some(found) => {
                        report(*i, found);
                        *slot = None;
                    }
                    None => line(&scan.h, scan.age),
                }
            }
            if !active {
                break;
            }
        }
    }
}
