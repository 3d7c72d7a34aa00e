//! The entries no line had room for: open-addressing tables of packed entries, one per run of
//! `2^run_bits` lines, so that a line's offset in its run, its entry's cell and its slot fit
//! one 32-bit word (slots of up to 16 bits, rates down to about 2e-5) or else one 64-bit word.
//! A `HashMap` of a list per line took 3.4 bits an item at 2M items at 1% (a slot, a list
//! header and a list block per line sending entries there: 21.0 bits an item against the
//! lines' 17.6); 64-bit words 1.2 (18.7).

use crate::defrag::Defrag;
use crate::growing::lines::line::{Entry, Widths, CELL_BITS};
use crate::memory::{allocated, copied_vec, OutOfMemory};

/// The tables grow by a quarter when more than 7/8 full, and shrink by a quarter when less
/// than half full.
const GROW_AT: (usize, usize) = (7, 8);
const SHRINK_AT: (usize, usize) = (1, 2);

/// A table's word: a packed entry, zero for an empty place (a slot is never zero).
pub(crate) trait Word: Copy + Default + PartialEq + std::fmt::Debug {
    fn from_u64(v: u64) -> Self;
    fn get(self) -> u64;
}

impl Word for u32 {
    fn from_u64(v: u64) -> Self {
        v as u32
    }
    fn get(self) -> u64 {
        u64::from(self)
    }
}

impl Word for u64 {
    fn from_u64(v: u64) -> Self {
        v
    }
    fn get(self) -> u64 {
        self
    }
}

/// How entries are packed: the slot in the low `slot` bits, the cell above, the line's offset
/// in its run above that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Packing {
    slot: u32,
    run_bits: u32,
}

impl Packing {
    fn pack(&self, offset: u64, e: Entry) -> u64 {
        (offset << CELL_BITS | u64::from(e.cell)) << self.slot | u64::from(e.slot)
    }

    fn offset(&self, word: u64) -> u64 {
        word >> (self.slot + CELL_BITS)
    }

    fn entry(&self, word: u64) -> Entry {
        Entry {
            cell: (word >> self.slot) as u32 & ((1 << CELL_BITS) - 1),
            slot: (word & ((1 << self.slot) - 1)) as u32,
        }
    }

    fn split(&self, line: u64) -> (usize, u64) {
        (
            (line >> self.run_bits) as usize,
            line & ((1 << self.run_bits) - 1),
        )
    }
}

/// One run's table: linear probing from a home the line's offset gives, so a line's entries
/// sit together.
#[derive(Debug, Default)]
pub(crate) struct Table<W> {
    words: Vec<W>,
    len: usize,
}

impl<W: Word> Table<W> {
    #[inline(always)]
    fn home(&self, offset: u64) -> usize {
        let mixed = offset.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        ((mixed * self.words.len() as u64) >> 32) as usize
    }

    /// The words of the run starting at `offset`'s home, up to the first empty place.
    fn run(&self, offset: u64) -> impl Iterator<Item = (usize, u64)> + '_ {
        let n = self.words.len();
        let start = if n == 0 { 0 } else { self.home(offset) };
        // The places from the home to the end, then from the start: no division a step.
        (start..n)
            .chain(0..start)
            .map(|i| (i, self.words[i].get()))
            .take_while(|&(_, w)| w != 0)
    }

    /// A table of `size` places holding these entries, or the allocator's refusal.
    fn rebuilt(&self, size: usize, p: &Packing) -> Result<Self, OutOfMemory> {
        let mut words = Vec::new();
        words.try_reserve_exact(size).map_err(|_| OutOfMemory {
            bytes: (size * std::mem::size_of::<W>()) as u64,
        })?;
        words.resize(size, W::default());
        let mut table = Table { words, len: 0 };
        for w in self.words.iter().map(|w| w.get()).filter(|&w| w != 0) {
            table.push_packed(w, p);
        }
        Ok(table)
    }

    fn push_packed(&mut self, word: u64, p: &Packing) {
        let n = self.words.len();
        let mut i = self.home(p.offset(word));
        while self.words[i] != W::default() {
            i = (i + 1) % n;
        }
        self.words[i] = W::from_u64(word);
        self.len += 1;
    }

    /// Makes room for `more` entries beyond those it holds, at most 7/8 full after them.
    fn reserve(&mut self, more: usize, p: &Packing) -> Result<(), OutOfMemory> {
        let needed = self.len + more;
        if needed * GROW_AT.1 <= self.words.len() * GROW_AT.0 {
            return Ok(());
        }
        let size = (needed * GROW_AT.1).div_ceil(GROW_AT.0);
        *self = self.rebuilt(size.max(self.words.len() * 5 / 4).max(8), p)?;
        Ok(())
    }

    /// Takes every entry of `offset` out; returns how many. The entries after a hole, up to
    /// the run's end, may have their home before it: put back, each lands at or before its
    /// old place.
    fn remove(&mut self, offset: u64, p: &Packing) -> usize {
        if self.len == 0 {
            return 0;
        }
        let n = self.words.len();
        let mut i = self.home(offset);
        let (mut taken, mut first_hole) = (0, None);
        while self.words[i] != W::default() {
            if p.offset(self.words[i].get()) == offset {
                self.words[i] = W::default();
                taken += 1;
                first_hole.get_or_insert(i);
            }
            i = (i + 1) % n;
        }
        self.len -= taken;
        if let Some(hole) = first_hole {
            let mut j = (hole + 1) % n;
            while j != i {
                let word = std::mem::take(&mut self.words[j]).get();
                if word != 0 {
                    self.len -= 1;
                    self.push_packed(word, p);
                }
                j = (j + 1) % n;
            }
        }
        taken
    }

    /// Bytes its words take from the allocator.
    fn heap_bytes(&self) -> u64 {
        allocated(self.words.capacity() * std::mem::size_of::<W>())
    }

    /// A table less than half full is rebuilt a quarter smaller (a refusal keeps it).
    fn shrink(&mut self, p: &Packing) {
        if self.len * SHRINK_AT.1 < self.words.len() * SHRINK_AT.0 && self.words.len() > 8 {
            if let Ok(smaller) = self.rebuilt((self.words.len() * 3 / 4).max(8), p) {
                *self = smaller;
            }
        }
    }
}

/// The tables of a filter's widths.
#[derive(Debug)]
enum Tables {
    Narrow(Vec<Table<u32>>),
    Wide(Vec<Table<u64>>),
}

/// A copy (COPY of a key) the allocator may refuse
/// ([`crate::memory::OutOfMemory::refuse_copy`]).
impl Clone for Tables {
    fn clone(&self) -> Self {
        match self {
            Tables::Narrow(t) => Tables::Narrow(copied_vec(t, t.len())),
            Tables::Wide(t) => Tables::Wide(copied_vec(t, t.len())),
        }
    }
}

impl<W: Word> Clone for Table<W> {
    fn clone(&self) -> Self {
        Table {
            words: copied_vec(&self.words, self.words.len()),
            len: self.len,
        }
    }
}

/// Runs a generic body on the tables, whichever their word.
macro_rules! with_tables {
    ($tables:expr, $t:ident => $body:expr) => {
        match $tables {
            Tables::Narrow($t) => $body,
            Tables::Wide($t) => $body,
        }
    };
}

/// The overflow: a table per run of lines, and the entries it holds.
#[derive(Debug, Clone)]
pub(crate) struct Overflow {
    packing: Packing,
    tables: Tables,
    entries: u64,
}

impl Overflow {
    /// An empty overflow for entries of these widths.
    pub(crate) fn new(w: &Widths) -> Self {
        // Bits a 32-bit word leaves for the line's offset (none for slots past 24 bits).
        let narrow = 32u32.saturating_sub(CELL_BITS + w.slot);
        let (run_bits, tables) = if narrow >= 8 {
            (narrow, Tables::Narrow(Vec::new()))
        } else {
            (16, Tables::Wide(Vec::new()))
        };
        Overflow {
            packing: Packing {
                slot: w.slot,
                run_bits,
            },
            tables,
            entries: 0,
        }
    }

    /// Entries held.
    pub(crate) fn entries(&self) -> u64 {
        self.entries
    }

    /// Whether line `line` sent an entry of `cell` here that matches `slot`.
    pub(crate) fn matches(&self, line: u64, cell: u32, slot: u32) -> bool {
        let p = &self.packing;
        let (run, offset) = p.split(line);
        with_tables!(&self.tables, t => t.get(run).is_some_and(|t| {
            t.run(offset).any(|(_, w)| {
                let e = p.entry(w);
                p.offset(w) == offset && e.cell == cell && e.matches(slot)
            })
        }))
    }

    /// Copies every entry of line `line` into `out`, in order of cell and slot: the order of
    /// places in a table depends on its history, which a loaded copy (a replica's, a reload's)
    /// does not share, and a growth step writes entries in the order it takes them, so the
    /// copy's later bytes (and digest) would differ.
    pub(crate) fn collect(&self, line: u64, out: &mut Vec<Entry>) -> Result<(), OutOfMemory> {
        let p = &self.packing;
        let (run, offset) = p.split(line);
        let from = out.len();
        with_tables!(&self.tables, t => {
            let Some(t) = t.get(run) else { return Ok(()) };
            for (_, w) in t.run(offset).filter(|&(_, w)| p.offset(w) == offset) {
                out.try_reserve(1).map_err(|_| OutOfMemory { bytes: 8 })?;
                out.push(p.entry(w));
            }
            Ok::<(), OutOfMemory>(())
        })?;
        out[from..].sort_unstable_by_key(|e| (e.cell, e.slot));
        Ok(())
    }

    /// Makes room for `more` entries of line `line`'s run, so that the next `more` pushes
    /// there cannot fail.
    pub(crate) fn reserve(&mut self, line: u64, more: usize) -> Result<(), OutOfMemory> {
        let p = self.packing;
        let (run, _) = p.split(line);
        with_tables!(&mut self.tables, t => {
            if t.len() <= run {
                let refused = OutOfMemory { bytes: (run + 1) as u64 * 32 };
                t.try_reserve(run + 1 - t.len()).map_err(|_| refused)?;
                t.resize_with(run + 1, Table::default);
            }
            t[run].reserve(more, &p)
        })
    }

    /// Puts an entry of line `line` in; room was reserved ([`Self::reserve`]).
    pub(crate) fn push(&mut self, line: u64, e: Entry) {
        let p = self.packing;
        let (run, offset) = p.split(line);
        with_tables!(&mut self.tables, t => {
            let t = &mut t[run];
            assert!(t.len < t.words.len(), "overflow room reserved");
            t.push_packed(p.pack(offset, e), &p);
        });
        self.entries += 1;
    }

    /// Takes every entry of line `line` out, without shrinking its table ([`Self::shrink`]).
    pub(crate) fn remove(&mut self, line: u64) {
        let p = self.packing;
        let (run, offset) = p.split(line);
        let removed =
            with_tables!(&mut self.tables, t => t.get_mut(run).map_or(0, |t| t.remove(offset, &p)));
        self.entries -= removed as u64;
    }

    /// Shrinks line `line`'s table if it is less than half full.
    pub(crate) fn shrink(&mut self, line: u64) {
        let p = self.packing;
        let (run, _) = p.split(line);
        with_tables!(&mut self.tables, t => if let Some(t) = t.get_mut(run) { t.shrink(&p) });
    }

    /// The run a line's entries are in (a step reserves room once a run).
    pub(crate) fn run_of(&self, line: u64) -> u64 {
        line >> self.packing.run_bits
    }

    /// Moves its tables' blocks where the server's defrag allocator says.
    pub(crate) fn defrag(&mut self, d: &mut Defrag) {
        with_tables!(&mut self.tables, t => {
            d.vec(t);
            for table in t.iter_mut() {
                d.vec(&mut table.words);
            }
        });
    }

    /// Bytes its tables take from the allocator.
    pub(crate) fn heap_bytes(&self) -> u64 {
        with_tables!(&self.tables, t => {
            allocated(std::mem::size_of_val(&t[..]))
                + t.iter().map(Table::heap_bytes).sum::<u64>()
        })
    }
}
