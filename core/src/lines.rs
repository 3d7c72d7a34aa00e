//! Cache-line arrays: 64-byte aligned blocks of 512 bits, allocated zeroed (so the kernel's
//! zero pages back them until first written) and seen as words or as the little-endian bytes
//! every format stores. The window filters' blocked layouts keep their bits in them, and a
//! Bloom link's word array starts on a line when it is large ([`Words`]).

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::defrag::Defrag;
use crate::hints;
use crate::memory::{self, OutOfMemory, Zeroable};
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
pub(crate) fn zeroed(count: usize) -> Result<Box<[Line]>, OutOfMemory> {
    let mut data = memory::zeroed::<Line>(count.max(1))?;
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

/// Word arrays at least this large start on a cache line: a blocked link's 512-bit blocks are
/// then each one line. The C library's malloc starts a large block 16 bytes past a page, and
/// each block straddled two lines, the second not prefetched (core BF.BULKEXISTS-style lookups
/// on a 10M filter: 30-33 -> 24-28 ns an item). Smaller arrays keep the words' alignment, so a
/// small link takes what RedisBloom's does (jemalloc would put 144 bytes padded to 192 in a
/// larger class); from here up a 64-byte padding stays in jemalloc's size class.
const LINED_MIN_BYTES: usize = 4096;

/// A Bloom link's bits: zeroed words owned like a `Box<[u64]>`, starting on a cache line when
/// there are at least [`LINED_MIN_BYTES`] of them (which a `Box<[u64]>`'s layout cannot
/// promise, nor free).
pub(crate) struct Words {
    start: NonNull<u64>,
    len: usize,
}

// SAFETY: Words owns its block as a Box<[u64]> does; sending or sharing it sends or shares
// plain words.
unsafe impl Send for Words {}
// SAFETY: as for Send.
unsafe impl Sync for Words {}

impl Words {
    /// The block's layout for `len` words (not zero).
    fn layout(len: usize) -> Option<Layout> {
        let layout = Layout::array::<u64>(len).ok()?;
        if layout.size() >= LINED_MIN_BYTES {
            layout.align_to(64).ok()
        } else {
            Some(layout)
        }
    }

    /// `len` zeroed words, or the error when the allocator refuses them.
    pub(crate) fn zeroed(len: usize) -> Result<Self, OutOfMemory> {
        if len == 0 {
            return Ok(Words {
                start: NonNull::dangling(),
                len,
            });
        }
        let layout = Self::layout(len).ok_or(OutOfMemory {
            bytes: (len as u64).saturating_mul(8),
        })?;
        let start = memory::zeroed_block(layout)?.cast();
        Ok(Words { start, len })
    }

    /// Moves the block where the server's defrag allocator says (a step of the walk, empty or
    /// not, as for a boxed slice).
    pub(crate) fn defrag(&mut self, d: &mut Defrag) {
        let block = (self.len > 0).then_some(self.start.cast());
        // SAFETY: the mover copied the block's bytes to `new`, a block of the same size class
        // from the same allocator (jemalloc, the only one a server defragments with, so
        // aligned as the old one was: its classes from 4 KiB up are multiples of 64), and freed
        // the old one, which is never read or freed again.
        d.owned(block, |new| self.start = new.cast());
    }
}

impl std::ops::Deref for Words {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        // SAFETY: `start` points to `len` initialised words this value owns (or dangles,
        // aligned, with `len` 0).
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for Words {
    fn deref_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `deref`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

impl Drop for Words {
    fn drop(&mut self) {
        if let Some(layout) = Self::layout(self.len).filter(|_| self.len > 0) {
            // SAFETY: the block was made with this layout (`zeroed`), and is freed once.
            unsafe { std::alloc::dealloc(self.start.as_ptr().cast(), layout) };
        }
    }
}

/// A copy (COPY of a key): a refused block panics, which the module's COPY callback turns into
/// a failed COPY, where a `Box<[u64]>`'s copy would abort the server.
impl Clone for Words {
    fn clone(&self) -> Self {
        let mut copy = Words::zeroed(self.len).expect("memory for a copy of a link's bits");
        copy.copy_from_slice(self);
        copy
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl PartialEq for Words {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Large arrays start on a cache line, small ones need not; both are zeroed, writable,
    /// copied and compared as their words.
    #[test]
    fn large_word_arrays_start_on_a_line() {
        for len in [0, 1, 18, 511, 512, 513, 100_000] {
            let mut words = Words::zeroed(len).unwrap();
            assert_eq!(words.len(), len);
            assert!(words.iter().all(|&w| w == 0));
            if len * 8 >= LINED_MIN_BYTES {
                assert_eq!(words.as_ptr() as usize % 64, 0, "{len} words");
            }
            words
                .iter_mut()
                .enumerate()
                .for_each(|(i, w)| *w = i as u64);
            let copy = words.clone();
            assert_eq!(copy, words);
            assert!(copy.iter().enumerate().all(|(i, &w)| w == i as u64));
        }
    }
}
