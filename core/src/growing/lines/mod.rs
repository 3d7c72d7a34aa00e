//! The one-line growing layout ([`LineFilter`]): a growing filter whose lookup reads one
//! 64-byte line found by arithmetic, with no table before it, at about 1.4 times a reserved
//! filter's memory (docs/growing.md, "One line a lookup").
//!
//! - An item's 64-bit hash gives its **group** (its first `level` bits: `2^level` groups) and
//!   a fraction `u` of the group (the bits after). A group has `G0` (4) to `2 * G0 - 1`
//!   buckets; its bucket is `floor(u * g)`, so growing a group by a bucket (Larson's partial
//!   expansions) moves no bit of any entry into an address: only the boundaries move (an
//!   entry whose known prefix a new boundary cuts is kept in both buckets).
//! - A group's `u` has 256 **cells** (its first 8 bits); an entry keeps its cell (in its
//!   bucket's unary header) and the next `rem` bits (its slot, with the marker that says how
//!   many it still has). `rem` comes from the rate ([`line::Widths`]).
//! - Every `load` adds a line, one group grows by a bucket (`G0` passes over the groups a
//!   level), so memory follows the items a line at a time. The last pass writes its groups'
//!   `2 * G0` buckets as the next level's two groups of `G0`: `u`'s first bit becomes the
//!   group's address and each entry gives its cell the first bit it kept (InfiniFilter's
//!   fingerprint sacrifice: one bit a doubling; an entry with none left matches its whole
//!   cell and is copied to both halves).
//! - Bucket `k` of group `j` is line `j + k * 2^level`: lines only ever grow at the end.
//! - A full bucket sends the entries of its last cells to its buddy (the other line of its
//!   128-byte pair) and, when that is full too, to an overflow map; only lookups of those
//!   cells read there (0.5-1.2% of absent lookups at 1%).
//!
//! Every filter `EXPANDABLE` creates has this layout; the chunk layout ([`crate::Growing`])
//! keeps loading and growing the filters saved with it.
//!
//! Files: [`filter`] (the model, places and batches, defrag), [`grow`] (inserts and growth
//! steps), [`format`](mod@format) (its saved pieces, both formats', and a decoded one's
//! checks), [`scandump`] (its SCANDUMP header and steps), [`describe`] (BF.INFO, BF.DEBUG),
//! [`line`](mod@line) (a line's fields and the widths), [`overflow`] (the entries no line had
//! room for).

pub(crate) mod describe;
pub(crate) mod filter;
pub(crate) mod format;
pub(crate) mod grow;
pub(crate) mod line;
pub(crate) mod overflow;
pub(crate) mod scandump;
#[cfg(test)]
mod tests;

pub use filter::LineFilter;
