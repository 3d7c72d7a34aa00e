//! Growing filters (`EXPANDABLE`): a Bloom key's filter that is never sized. It starts at a
//! capacity hint and grows one chunk at a time, holding its false-positive rate at about the
//! memory of a filter reserved for the items it holds, with one chunk to read per lookup at
//! any size, where a scaling chain reads every link and costs four times the memory.
//!
//! The design is InfiniFilter's (Dayan, Bercea, Reviriego, Pagh, SIGMOD 2023) idea on linear
//! hashing's growth:
//! - an item's 128-bit hash gives its chunk (the low `level` or `level + 1` bits: linear
//!   hashing), its cell in the chunk (the next `q` bits) and its remainder (the bits after);
//!   its entry is the remainder's first `W` bits (`W` from the rate, [`design`]);
//! - every [`PER_CHUNK`](design::PER_CHUNK) adds, the chunk at the split pointer splits in two:
//!   each entry's cell's lowest bit becomes an address bit, and the cell takes the remainder's
//!   first bit, so an entry keeps one remainder bit less per split (InfiniFilter's fingerprint
//!   sacrifice) and new entries start with `W` again. Entries out of bits (void) match their
//!   cell and are copied to both cells they may belong to;
//! - a chunk is a unary header of its cells' counts and packed slots, each slot a marker bit
//!   and the remainder bits it still has ([`chunk`]), in one block that grows entry by entry:
//!   memory follows the items with no doubling (a quotient filter that doubles spends twice
//!   the memory right after), and each add or split does a bounded amount of work (one chunk),
//!   so no command waits for the filter to grow.
//!
//! Files: [`filter`] (the model, [`Growing`]), [`chunk`], [`bits`] (bit fields and select),
//! [`design`] (widths from the rate),
//! [`builder`] (a decoded one's invariants), [`records`] (the chunks' serialised form both
//! formats carry), [`rdb`], [`scandump`], [`describe`]. [`lines`] is the next layout, a lookup
//! reading one line with no table (not served yet: it has no format).

pub(crate) mod bits;
pub(crate) mod builder;
pub(crate) mod chunk;
pub(crate) mod describe;
pub(crate) mod design;
pub(crate) mod filter;
pub mod lines;
pub(crate) mod rdb;
pub(crate) mod records;
pub(crate) mod scandump;
#[cfg(test)]
mod tests;

pub use filter::Growing;
