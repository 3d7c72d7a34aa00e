//! The growing filter's model ([`Growing`]): chunks addressed by linear hashing, one split per
//! [`PER_CHUNK`] adds, each entry keeping the remainder bits it still knows.

use crate::growing::bits::{run_batch, Batch, Select};
use crate::growing::chunk::{CellProbe, Chunk, Shape};
use crate::growing::design::{self, PER_CHUNK};
use crate::hints;
use crate::memory::{allocated, copied_vec};
use crate::outcome::{AddOutcome, FilterError};
use xxhash_rust::xxh3::xxh3_128_with_seed;

/// Chunks per segment of the chunk table: the table grows a segment at a time, so it never
/// moves as a whole (a 100M-item filter has 520,000 chunks).
pub(crate) const SEGMENT: usize = 1024;

/// Levels a filter can reach: 2^40 chunks, far past any memory.
pub(crate) const MAX_LEVEL: u16 = 40;

/// Items a batch takes through each stage at once (see [`staged`]).
const BLOCK: usize = 16;

/// A hash's chunk, cell and remainder bits ([`Growing::locate`]).
type Located = (u64, usize, u64);

/// A Bloom key's filter that is never sized: it starts at a capacity hint and grows one chunk at
/// a time, holding its false-positive rate (see the folder's documentation).
#[derive(Debug, PartialEq)]
pub struct Growing {
    pub(crate) seed: u64,
    pub(crate) error: f64,
    pub(crate) capacity: u64,
    pub(crate) shape: Shape,
    /// The level the filter started at (`2^start_level` chunks).
    pub(crate) start_level: u16,
    /// Chunks `[0, split)` and `[2^level, 2^level + split)` have `level + 1` address bits,
    /// the others `level`.
    pub(crate) level: u16,
    pub(crate) split: u64,
    pub(crate) items: u64,
    /// The chunk table, in segments of [`SEGMENT`].
    pub(crate) segments: Vec<Vec<Chunk>>,
    /// Bytes of the chunks' blocks, as the allocator gives them.
    pub(crate) block_bytes: u64,
}

/// A copy (COPY of a key) whose table and blocks the allocator may refuse
/// ([`crate::memory::OutOfMemory::refuse_copy`]), where the derived copy aborted the server.
impl Clone for Growing {
    fn clone(&self) -> Self {
        let mut segments = copied_vec(&[], self.segments.len());
        segments.extend(
            self.segments
                .iter()
                .map(|segment| copied_vec(segment, segment.capacity())),
        );
        Growing {
            segments,
            seed: self.seed,
            error: self.error,
            capacity: self.capacity,
            shape: self.shape,
            start_level: self.start_level,
            level: self.level,
            split: self.split,
            items: self.items,
            block_bytes: self.block_bytes,
        }
    }
}

impl Growing {
    /// An empty filter for `error` starting at `capacity` items, hashed under `seed`, its
    /// starting table within `max_bytes`.
    pub fn new(error: f64, capacity: u64, seed: u64, max_bytes: u64) -> Result<Self, FilterError> {
        let shape = design::shape_for(error).ok_or(FilterError::CannotGrow)?;
        let start_level = design::start_level(capacity);
        let table = (std::mem::size_of::<Chunk>() as u64) << start_level;
        if table > max_bytes {
            return Err(FilterError::TooLarge {
                needed: table,
                limit: max_bytes,
            });
        }
        let mut g = Growing {
            seed,
            error,
            capacity,
            shape,
            start_level,
            level: start_level,
            split: 0,
            items: 0,
            segments: Vec::new(),
            block_bytes: 0,
        };
        for _ in 0..1u64 << start_level {
            g.push_chunk(Chunk::default())?;
        }
        Ok(g)
    }

    /// Items added.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The false-positive rate it holds.
    pub fn error(&self) -> f64 {
        self.error
    }

    /// The starting capacity it was created with.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Chunks in the table.
    pub fn chunk_count(&self) -> u64 {
        (1u64 << self.level) + self.split
    }

    #[inline(always)]
    pub(crate) fn chunk(&self, i: u64) -> &Chunk {
        &self.segments[i as usize / SEGMENT][i as usize % SEGMENT]
    }

    pub(crate) fn chunk_mut(&mut self, i: u64) -> &mut Chunk {
        &mut self.segments[i as usize / SEGMENT][i as usize % SEGMENT]
    }

    /// Puts `chunk` at `i` (a loaded one), keeping the block count.
    pub(crate) fn replace_chunk(&mut self, i: u64, chunk: Chunk) {
        let added = chunk.block().len() as u64 * 8;
        let old = std::mem::replace(self.chunk_mut(i), chunk);
        self.block_bytes = self.block_bytes + added - old.block().len() as u64 * 8;
    }

    /// Every chunk, in address order.
    pub(crate) fn chunks(&self) -> impl Iterator<Item = &Chunk> {
        self.segments.iter().flatten()
    }

    /// Appends a chunk to the table: the last segment grows by an eighth at a time (so a small
    /// filter's table stays small), a full one starts the next.
    pub(crate) fn push_chunk(&mut self, chunk: Chunk) -> Result<(), FilterError> {
        let refused = |bytes: usize| FilterError::OutOfMemory {
            needed: bytes as u64,
        };
        if self.segments.last().is_none_or(|s| s.len() == SEGMENT) {
            // Exactly one more: a doubling Vec starts at four (96 bytes, a fifth of a
            // 200-item filter's memory).
            self.segments
                .try_reserve_exact(1)
                .map_err(|_| refused(24))?;
            self.segments.push(Vec::new());
        }
        let last = self
            .segments
            .last_mut()
            .expect("a segment was just ensured");
        if last.len() == last.capacity() {
            let more = (last.len() / 8).clamp(1, SEGMENT - last.len());
            last.try_reserve_exact(more)
                .map_err(|_| refused(more * std::mem::size_of::<Chunk>()))?;
        }
        self.block_bytes += chunk.block().len() as u64 * 8;
        last.push(chunk);
        Ok(())
    }

    /// The item's 128-bit hash: the low bits address its chunk and cell, the next ones are its
    /// remainder.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> u128 {
        xxh3_128_with_seed(item, self.seed)
    }

    /// The chunk, cell and remainder bits of a hash.
    #[inline(always)]
    fn locate(&self, hash: u128) -> Located {
        // Without a branch: whether the chunk is split yet is a coin toss per item.
        let low = hash as u64 & ((1u64 << self.level) - 1);
        let depth = self.level + u16::from(low < self.split);
        let chunk = hash as u64 & ((1u64 << depth) - 1);
        let cell = (hash >> depth) as usize & (self.shape.cells() - 1);
        let rest = (hash >> (depth + self.shape.cell_bits)) as u64;
        (chunk, cell, rest)
    }

    /// Whether the item may have been added.
    pub fn contains(&self, item: &[u8]) -> bool {
        let mut found = false;
        self.contains_many(std::iter::once(item), |present| found = present);
        found
    }

    /// Where a lookup of a located hash reads in its chunk, and its remainder bits: the lines
    /// are requested.
    #[inline(always)]
    fn probe(&self, (chunk, cell, rest): Located) -> (CellProbe<'_>, u64) {
        let probe = self.chunk(chunk).probe(self.shape, cell);
        probe.prefetch(self.shape);
        (probe, rest)
    }

    /// Checks items in order, passing each answer on, through the look-ahead ([`staged`]).
    pub fn contains_many<'a>(
        &self,
        items: impl Iterator<Item = &'a [u8]>,
        answer: impl FnMut(bool),
    ) {
        run_batch(Staged {
            items,
            stages: Lookups {
                filter: self,
                answer,
            },
        });
    }

    /// Adds an item of this hash: `Present` when it may be in already (nothing changes), else
    /// a new entry, after the split its count asks for. `max_bytes` is the per-filter limit.
    #[inline(always)]
    fn add_hashed<S: Select>(
        &mut self,
        hash: u128,
        max_bytes: u64,
    ) -> Result<AddOutcome, FilterError> {
        let (chunk, cell, rest) = self.locate(hash);
        let Err(mut place) = self.chunk(chunk).find::<S>(self.shape, cell, rest) else {
            return Ok(AddOutcome::Present);
        };
        // The table and the blocks, with room for a split's new chunk: counted, not summed
        // over the segments, as this runs on every add.
        let table = self.chunk_count() * std::mem::size_of::<Chunk>() as u64;
        let split_room = 8 * self.shape.words(2 * PER_CHUNK as usize) as u64;
        let needed = self.block_bytes + table + split_room;
        if needed > max_bytes {
            return Err(FilterError::TooLarge {
                needed,
                limit: max_bytes,
            });
        }
        let (mut chunk, mut rest) = (chunk, rest);
        if self.items + 1 > PER_CHUNK * self.chunk_count() {
            self.split_next()?;
            let cell;
            (chunk, cell, rest) = self.locate(hash);
            // The item was absent: it is added even if the split's shorter entries now match
            // it, so the chunk count stays the one its items give (`builder::chunks_for`).
            place = self.chunk(chunk).place::<S>(self.shape, cell);
        }
        let shape = self.shape;
        let target = self.chunk_mut(chunk);
        let before = target.block().len();
        target.insert_at(shape, place, shape.new_slot(rest))?;
        let after = target.block().len();
        self.block_bytes += (after - before) as u64 * 8;
        self.items += 1;
        Ok(AddOutcome::Added)
    }

    /// Adds an item: `Present` when it may be in already (nothing changes), else a new entry,
    /// after the split its count asks for. `max_bytes` is the per-filter limit.
    pub fn add(&mut self, item: &[u8], max_bytes: u64) -> Result<AddOutcome, FilterError> {
        let mut result = Ok(AddOutcome::Present);
        self.add_many(std::iter::once(item), max_bytes, |r| {
            result = r;
            true
        });
        result
    }

    /// Adds items in order, passing each outcome to `outcome`, which returns whether to go on.
    pub fn add_many<'a>(
        &mut self,
        items: impl Iterator<Item = &'a [u8]>,
        max_bytes: u64,
        outcome: impl FnMut(Result<AddOutcome, FilterError>) -> bool,
    ) {
        run_batch(Staged {
            items,
            stages: Adds {
                filter: self,
                max_bytes,
                outcome,
            },
        });
    }

    /// Splits the chunk at the split pointer into itself and a new last chunk (linear
    /// hashing's step: one chunk's entries, a bounded amount of work). On a refusal nothing
    /// changed.
    fn split_next(&mut self) -> Result<(), FilterError> {
        if self.level >= MAX_LEVEL {
            return Err(FilterError::CannotGrow);
        }
        let (low, high) = self.chunk(self.split).split(self.shape)?;
        self.push_chunk(high)?;
        let old = std::mem::replace(self.chunk_mut(self.split), low);
        let low_words = self.chunk(self.split).block().len();
        self.block_bytes = self.block_bytes + low_words as u64 * 8 - old.block().len() as u64 * 8;
        self.split += 1;
        if self.split == 1u64 << self.level {
            self.level += 1;
            self.split = 0;
        }
        Ok(())
    }

    /// Bytes of the chunks' blocks.
    pub fn bit_bytes(&self) -> u64 {
        self.block_bytes
    }

    /// Bytes its allocations take from the allocator (not its own struct): the chunk table's
    /// segments and every chunk's block.
    pub fn heap_bytes(&self) -> u64 {
        let chunk_size = std::mem::size_of::<Chunk>();
        let table = allocated(self.segments.capacity() * std::mem::size_of::<Vec<Chunk>>());
        let segments: u64 = self
            .segments
            .iter()
            .map(|s| allocated(s.capacity() * chunk_size))
            .sum();
        table + segments + self.block_bytes
    }

    /// Moves its blocks where the walk's mover says: the table, each segment, each chunk's.
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        d.vec(&mut self.segments);
        for segment in &mut self.segments {
            d.vec(segment);
            for chunk in segment.iter_mut() {
                d.slice(chunk.block_mut());
            }
        }
    }
}

/// What a batch does with each item once it is hashed and located ([`staged`]): the second
/// stage's work, which reads the table entry and requests lines, and the third's. The methods
/// are always inlined, so that the whole batch is compiled inside `run_batch`'s function for
/// the CPU's BMI2 and POPCNT: an add's third stage as a closure was left out of line, and with
/// it the select of every add's lookup (a call per select, a dozen instructions per count of
/// ones).
trait Stages {
    /// What the second stage hands the third.
    type Probe: Copy + Default;
    fn filter(&self) -> &Growing;
    fn prepare(&self, hash: u128, place: Located) -> Self::Probe;
    /// The item's work, compiled for a [`Select`]; returns whether to go on.
    fn step<S: Select>(&mut self, probe: Self::Probe) -> bool;
}

/// A batch's items and the stages they go through: the [`Batch`] that `run_batch` compiles.
struct Staged<I, T> {
    items: I,
    stages: T,
}

impl<'a, I: Iterator<Item = &'a [u8]>, T: Stages> Batch for Staged<I, T> {
    type Output = ();

    #[inline(always)]
    fn run<S: Select>(mut self) {
        staged::<S, T>(&mut self.stages, self.items);
    }
}

/// A batch in blocks of [`BLOCK`] items, each block in three passes, as a lookup's loads
/// depend on each other: every item of the block is hashed and located and its chunk's table
/// entry requested, then `prepare` reads each entry (and requests the lines it points to), then
/// `step` gets what each found. Each load was requested a block's worth of work before it is
/// needed, and a block's loads are independent of each other, so their misses overlap. A
/// sliding look-ahead (two rings, each stage 8 items ahead) waited longer: redis-benchmark
/// BF.MEXISTS of 100 absent items (P32, one server), server time per call against a reserved
/// filter's 1.41-1.43 at 2M items -> 1.30 (blocks of 32: 1.33, of 64: 1.33), at 13M 2.56 ->
/// 1.79 (blocks of 32: 1.81). `step` may change the filter between items (a split): the
/// hints then miss, the answers do not, as an add's step locates its hash afresh.
#[inline(always)]
fn staged<'a, S: Select, T: Stages>(stages: &mut T, mut items: impl Iterator<Item = &'a [u8]>) {
    let mut hashes = [0u128; BLOCK];
    let mut located = [Located::default(); BLOCK];
    let mut probes = [T::Probe::default(); BLOCK];
    loop {
        let g = stages.filter();
        let mut n = 0;
        while n < BLOCK {
            let Some(item) = items.next() else { break };
            let hash = g.hash(item);
            let place = g.locate(hash);
            hints::prefetch_any(g.chunk(place.0));
            (hashes[n], located[n]) = (hash, place);
            n += 1;
        }
        if n == 0 {
            return;
        }
        for ((probe, &hash), &place) in probes.iter_mut().zip(&hashes[..n]).zip(&located[..n]) {
            *probe = stages.prepare(hash, place);
        }
        for &probe in &probes[..n] {
            if !stages.step::<S>(probe) {
                return;
            }
        }
    }
}

/// A lookup's stages ([`Growing::contains_many`]).
struct Lookups<'g, A> {
    filter: &'g Growing,
    answer: A,
}

impl<'g, A: FnMut(bool)> Stages for Lookups<'g, A> {
    type Probe = (CellProbe<'g>, u64);

    #[inline(always)]
    fn filter(&self) -> &Growing {
        self.filter
    }

    /// The probe borrows the filter (not the stages) until the step.
    #[inline(always)]
    fn prepare(&self, _: u128, place: Located) -> Self::Probe {
        let filter: &'g Growing = self.filter;
        filter.probe(place)
    }

    #[inline(always)]
    fn step<S: Select>(&mut self, (probe, rest): Self::Probe) -> bool {
        (self.answer)(probe.matches::<S>(self.filter.shape, rest));
        true
    }
}

/// An add's stages ([`Growing::add_many`]): the second only requests the lines, as the third
/// locates the item again (a split between may have moved it).
struct Adds<'g, O> {
    filter: &'g mut Growing,
    max_bytes: u64,
    outcome: O,
}

impl<O: FnMut(Result<AddOutcome, FilterError>) -> bool> Stages for Adds<'_, O> {
    type Probe = u128;

    #[inline(always)]
    fn filter(&self) -> &Growing {
        self.filter
    }

    #[inline(always)]
    fn prepare(&self, hash: u128, place: Located) -> u128 {
        self.filter.probe(place);
        hash
    }

    #[inline(always)]
    fn step<S: Select>(&mut self, hash: u128) -> bool {
        (self.outcome)(self.filter.add_hashed::<S>(hash, self.max_bytes))
    }
}
