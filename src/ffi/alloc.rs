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

use std::alloc::{GlobalAlloc, Layout, System};

use redis_module::raw;
use rsbloom_core::memory::zero_block;

/// See the module docs.
pub struct ModuleAlloc;

/// Redis's allocator (jemalloc) aligns every block to at least 16 bytes; larger alignments
/// are padded into the size as the redis-module crate does.
fn padded(layout: Layout) -> usize {
    (layout.size() + layout.align() - 1) & !(layout.align() - 1)
}

// SAFETY: Redis's API pointers are set once, in RedisModule_OnLoad, before the module
// allocates anything, and never unset; so a block is always freed by the allocator that made
// it (the Try* calls and their plain twins share the server's allocator). jemalloc returns
// blocks aligned to their padded size class, which covers `align`.
unsafe impl GlobalAlloc for ModuleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract of GlobalAlloc::alloc.
        unsafe {
            match (raw::RedisModule_TryAlloc, raw::RedisModule_Alloc) {
                (Some(try_alloc), _) => try_alloc(padded(layout)).cast(),
                (None, Some(alloc)) => alloc(padded(layout)).cast(),
                (None, None) => System.alloc(layout),
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let size = padded(layout);
        // SAFETY: forwarded contract of GlobalAlloc::alloc_zeroed; a block from TryAlloc is
        // fresh private memory of `size` bytes, which zero_block may zero.
        unsafe {
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
                (None, None, None) => System.alloc_zeroed(layout),
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the same allocator (see the impl's SAFETY note).
        unsafe {
            match raw::RedisModule_Free {
                Some(free) => free(ptr.cast()),
                None => System.dealloc(ptr, layout),
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for dealloc; Redis's realloc keeps the 16-byte alignment.
        unsafe {
            let server_realloc = raw::RedisModule_TryRealloc.or(raw::RedisModule_Realloc);
            match server_realloc {
                Some(realloc) if layout.align() <= 16 => realloc(ptr.cast(), new_size).cast(),
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

/// Tells the core's memory accounting whether the server's allocator is jemalloc: the size it
/// reports for a 129-byte block is jemalloc's class, 160, there, and about what was asked on
/// the C library's malloc. Found by what the allocator does, never by a version.
pub fn probe_size_classes() {
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
        rsbloom_core::memory::set_jemalloc_classes(size(block) == 160);
        free(block);
    }
}
