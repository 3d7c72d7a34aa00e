//! The global allocator: Redis's own (so INFO memory, MEMORY USAGE and maxmemory account for
//! every filter) once the module is loaded, the system's in unit tests where no server exists.
//!
//! Its fallible calls where the server has them (`RedisModule_TryAlloc` since Redis 7.0,
//! `TryCalloc` and `TryRealloc` where offered; found by capability, each on its own): a
//! refused block is then a null the core turns into an error reply (`memory::zeroed`, the
//! bits whose size a client chooses), where Redis's `RedisModule_Alloc` aborts the server
//! ("Out of memory allocating …"). Zeroed blocks use the server's calloc, so a fresh
//! multi-gigabyte bit array is not written page by page; without a calloc that can fail, a
//! block from `TryAlloc` is zeroed by giving its pages back to the kernel (`memory::zero_block`).
//!
//! Alignment past the server's 16 bytes (the window filters' 64-byte cache lines): jemalloc
//! puts a block whose size is a multiple of 64 on a 64-byte boundary, so the size is padded;
//! the C library's malloc (a server built with `MALLOC=libc`, as `scripts/servers`' Valkey 9.1)
//! does not (a large block starts 16 bytes past a page), so there the block is asked for
//! `align` bytes larger and handed out from its first boundary, with the server's address kept
//! just before it ([`Headered`]).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

use redis_module::raw;
use rsbloom_core::memory::zero_block;

/// See the module docs.
pub struct ModuleAlloc;

/// The alignment every block of the server's allocator has.
const SERVER_ALIGN: usize = 16;

/// Whether the server's allocator aligns a block by its size (jemalloc), which the module's
/// load finds ([`probe_allocator`]) before it allocates anything aligned past 16 bytes (only
/// filters do), so a block is always freed the way it was made.
static ALIGNS_BY_SIZE: AtomicBool = AtomicBool::new(true);

/// How a block of `layout` is asked of the server's allocator.
#[derive(Clone, Copy)]
enum Request {
    /// The size padded to the alignment (jemalloc, or an alignment of 16 at most).
    Padded(usize),
    /// `align` bytes more, handed out past a header ([`Headered`]).
    Headered(usize),
}

impl Request {
    fn of(layout: Layout) -> Request {
        let align = layout.align();
        if align <= SERVER_ALIGN || ALIGNS_BY_SIZE.load(Ordering::Relaxed) {
            Request::Padded((layout.size() + align - 1) & !(align - 1))
        } else {
            Request::Headered(layout.size() + align)
        }
    }

    fn bytes(self) -> usize {
        match self {
            Request::Padded(bytes) | Request::Headered(bytes) => bytes,
        }
    }

    /// The block handed out of the server's block `base` (null stays null).
    fn hand_out(self, base: *mut u8, layout: Layout) -> *mut u8 {
        match self {
            Request::Headered(_) if !base.is_null() => Headered::place(base, layout.align()),
            _ => base,
        }
    }

    /// The server's block behind a block handed out.
    ///
    /// # Safety
    /// `block` came from [`Request::hand_out`] of a request for the same layout.
    unsafe fn server_block(self, block: *mut u8) -> *mut u8 {
        match self {
            // SAFETY: the caller's contract: a headered block has its base before it.
            Request::Headered(_) => unsafe { Headered::base(block) },
            Request::Padded(_) => block,
        }
    }
}

/// A block aligned past [`SERVER_ALIGN`] on an allocator that does not align by size: the
/// server's block, `align` bytes larger than asked, is handed out from the first `align`
/// boundary past its start (16 to `align` bytes in, as the server's blocks start on 16), and
/// the server's address is kept in the 8 bytes before that boundary.
struct Headered;

impl Headered {
    fn place(base: *mut u8, align: usize) -> *mut u8 {
        let skip = align - (base as usize & (align - 1));
        // SAFETY: `skip` is 16 to `align` bytes (base is 16-aligned, align a larger power of
        // two), inside the server's block of `align` extra bytes, and the 8 bytes before the
        // boundary (8-aligned) are in that block too, unused by the block handed out.
        unsafe {
            let block = base.add(skip);
            block.cast::<*mut u8>().sub(1).write(base);
            block
        }
    }

    /// # Safety
    /// `block` came from [`Headered::place`].
    unsafe fn base(block: *mut u8) -> *mut u8 {
        // SAFETY: the caller's contract: `place` wrote the base there.
        unsafe { block.cast::<*mut u8>().sub(1).read() }
    }
}

// SAFETY: Redis's API pointers are set once, in RedisModule_OnLoad, before the module
// allocates anything, and never unset; so a block is always freed by the allocator that made
// it (the Try* calls and their plain twins share the server's allocator), and the way it was
// asked for (`Request::of` a layout answers the same from before the first block aligned past
// 16 bytes is made). Every block handed out is aligned: the server's are to 16, jemalloc's
// padded ones to their size class, which covers `align`, and headered ones by construction.
unsafe impl GlobalAlloc for ModuleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let request = Request::of(layout);
        // SAFETY: forwarded contract of GlobalAlloc::alloc.
        let base = unsafe {
            match (raw::RedisModule_TryAlloc, raw::RedisModule_Alloc) {
                (Some(try_alloc), _) => try_alloc(request.bytes()).cast(),
                (None, Some(alloc)) => alloc(request.bytes()).cast(),
                (None, None) => return System.alloc(layout),
            }
        };
        request.hand_out(base, layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let request = Request::of(layout);
        let size = request.bytes();
        // SAFETY: forwarded contract of GlobalAlloc::alloc_zeroed; a block from TryAlloc is
        // fresh private memory of `size` bytes, which zero_block may zero.
        let base = unsafe {
            match (
                raw::RedisModule_TryCalloc,
                raw::RedisModule_TryAlloc,
                raw::RedisModule_Calloc,
            ) {
                (Some(try_calloc), _, _) => try_calloc(1, size).cast(),
                (None, Some(try_alloc), _) => {
                    let block = try_alloc(size).cast::<u8>();
                    if !block.is_null() {
                        zero_block(block, size);
                    }
                    block
                }
                (None, None, Some(calloc)) => calloc(1, size).cast(),
                (None, None, None) => return System.alloc_zeroed(layout),
            }
        };
        request.hand_out(base, layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, for this layout (see the impl's SAFETY
        // note), so its request gives back the server's block.
        unsafe {
            match raw::RedisModule_Free {
                Some(free) => free(Request::of(layout).server_block(ptr).cast()),
                None => System.dealloc(ptr, layout),
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for dealloc; Redis's realloc keeps the 16-byte alignment.
        unsafe {
            let server_realloc = raw::RedisModule_TryRealloc.or(raw::RedisModule_Realloc);
            match server_realloc {
                Some(realloc) if layout.align() <= SERVER_ALIGN => {
                    realloc(ptr.cast(), new_size).cast()
                }
                Some(_) => {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
                None => System.realloc(ptr, layout, new_size),
            }
        }
    }
}

/// Finds whether the server's allocator is jemalloc, for the core's memory accounting (its
/// size classes) and for blocks aligned past 16 bytes (aligned by size there, headered on
/// another allocator): the size it reports for a 129-byte block is jemalloc's class, 160,
/// there, and about what was asked on the C library's malloc. Found by what the allocator
/// does, never by a version. Called first in the module's load, before any such block exists.
pub fn probe_allocator() {
    // SAFETY: the API pointers are set (OnLoad, after RedisModule_Init); the block is made,
    // measured and freed by the server's allocator here, and used for nothing else.
    unsafe {
        let (Some(alloc), Some(size), Some(free)) = (
            raw::RedisModule_Alloc,
            raw::RedisModule_MallocSize,
            raw::RedisModule_Free,
        ) else {
            return;
        };
        let block = alloc(129);
        if block.is_null() {
            return;
        }
        let jemalloc = size(block) == 160;
        rsbloom_core::memory::set_jemalloc_classes(jemalloc);
        ALIGNS_BY_SIZE.store(jemalloc, Ordering::Relaxed);
        free(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block aligned past 16 bytes on an allocator that aligns to 16 only: from a server
    /// block at each 16-byte offset from a 64-byte boundary, the block handed out is aligned,
    /// lies inside the server's block, and gives the server's address back.
    #[test]
    fn headered_blocks_are_aligned_inside_the_server_block() {
        let layout = Layout::from_size_align(1000, 64).unwrap();
        let bytes = layout.size() + layout.align();
        let arena = Layout::from_size_align(bytes + 64, 64).unwrap();
        // SAFETY: the arena is made and freed here; every pointer below stays inside it.
        unsafe {
            let start = System.alloc(arena);
            assert!(!start.is_null());
            for offset in [0, 16, 32, 48] {
                let base = start.add(offset);
                let request = Request::Headered(bytes);
                let block = request.hand_out(base, layout);
                assert_eq!(block as usize % 64, 0, "offset {offset}");
                let skip = block as usize - base as usize;
                assert!((16..=64).contains(&skip), "offset {offset}: skip {skip}");
                assert!(
                    skip + layout.size() <= bytes,
                    "offset {offset}: past the end"
                );
                block.write_bytes(0xa5, layout.size());
                assert_eq!(request.server_block(block), base, "offset {offset}");
            }
            assert!(Request::Headered(bytes)
                .hand_out(std::ptr::null_mut(), layout)
                .is_null());
            System.dealloc(start, arena);
        }
    }

    /// jemalloc (the default until the probe says otherwise) gets the size padded to the
    /// alignment; alignments of 16 or less are never headered.
    #[test]
    fn padded_requests_round_the_size_to_the_alignment() {
        let bytes = |size, align| Request::of(Layout::from_size_align(size, align).unwrap());
        assert!(matches!(bytes(100, 64), Request::Padded(128)));
        assert!(matches!(bytes(128, 64), Request::Padded(128)));
        assert!(matches!(bytes(100, 8), Request::Padded(104)));
        assert!(matches!(bytes(24, 16), Request::Padded(32)));
    }
}
