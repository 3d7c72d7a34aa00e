//! Cache-line arrays: 64-byte aligned blocks of 512 bits, allocated zeroed (so the kernel's
//! zero pages back them until first written) and seen as words or as the little-endian bytes
//! every format stores. The window filters' blocked layouts keep their bits in them.

use crate::hints;
use crate::memory::{Block, OutOfMemory, Zeroable};
use crate::sizing::{words_as_bytes, words_as_bytes_mut};

/// One cache line: 512 bits, aligned so that a line is one miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub(crate) struct Line(pub [u64; 8]);

/// Bits in a [`Line`].
pub(crate) const LINE_BITS: u64 = 512;

// SAFETY: a Line is eight u64s, for which all-zero bytes are a valid value; it is Copy.
unsafe impl Zeroable for Line {}

/// `count` zeroed lines (at least one), with huge pages asked for when large; the error when
/// the allocator refuses them.
pub(crate) fn zeroed(count: usize) -> Result<Block<Line>, OutOfMemory> {
    let mut data = Block::<Line>::zeroed(count.max(1))?;
    hints::advise_huge_pages(&mut data);
    Ok(data)
}

/// The lines as words.
pub(crate) fn words(lines: &[Line]) -> &[u64] {
    // SAFETY: a Line is `repr(C)` over [u64; 8] with no padding, so the lines are exactly
    // `8 * len` initialised u64s.
    unsafe { std::slice::from_raw_parts(lines.as_ptr().cast::<u64>(), lines.len() * 8) }
}

/// The lines as writable words.
pub(crate) fn words_mut(lines: &mut [Line]) -> &mut [u64] {
    // SAFETY: as in `words`; any u64 is a valid value, so writes cannot break a Line.
    unsafe { std::slice::from_raw_parts_mut(lines.as_mut_ptr().cast::<u64>(), lines.len() * 8) }
}

/// The lines' bits as bytes (little-endian words, lines in order), as the formats store them.
pub(crate) fn bytes(lines: &[Line]) -> &[u8] {
    words_as_bytes(words(lines))
}

/// The lines' bits as writable bytes, for a decoder or LOADCHUNK to fill.
pub(crate) fn bytes_mut(lines: &mut [Line]) -> &mut [u8] {
    words_as_bytes_mut(words_mut(lines))
}
