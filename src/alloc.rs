//! The global allocator: Redis's own (so INFO memory, MEMORY USAGE and maxmemory account for
//! every filter) once the module is loaded, the system's in unit tests where no server exists.
//! Zeroed allocations use Redis's calloc, so a fresh multi-gigabyte bit array is not memset
//! page by page.

use std::alloc::{GlobalAlloc, Layout, System};

use redis_module::raw;

/// See the module docs.
pub struct ModuleAlloc;

/// Redis's allocator (jemalloc) aligns every block to at least 16 bytes; larger alignments
/// are padded into the size as the redis-module crate does.
fn padded(layout: Layout) -> usize {
    (layout.size() + layout.align() - 1) & !(layout.align() - 1)
}

// SAFETY: Redis's API pointers are set once, in RedisModule_OnLoad, before the module
// allocates anything, and never unset; so a block is always freed by the allocator that made
// it. jemalloc returns blocks aligned to their padded size class, which covers `align`.
unsafe impl GlobalAlloc for ModuleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract of GlobalAlloc::alloc.
        unsafe {
            match raw::RedisModule_Alloc {
                Some(alloc) => alloc(padded(layout)).cast(),
                None => System.alloc(layout),
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract of GlobalAlloc::alloc_zeroed.
        unsafe {
            match raw::RedisModule_Calloc {
                Some(calloc) => calloc(1, padded(layout)).cast(),
                None => System.alloc_zeroed(layout),
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
            match raw::RedisModule_Realloc {
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
