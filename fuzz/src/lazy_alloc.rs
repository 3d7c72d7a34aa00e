//! Big zeroed blocks mapped lazily, as Redis's allocator maps them.
//!
//! The RDB decoders allocate a link's zeroed bit array as soon as its header fields pass
//! validation, before its bits are read, so a corrupt value may declare up to 2^40 bits that it
//! does not hold. Under Redis that costs address space only: jemalloc maps big blocks with
//! MAP_NORESERVE when the kernel overcommits (Linux's default, and what Redis asks for), the
//! pages are never touched, and the block is freed when the read of the missing bits fails.
//! ASan and glibc cannot reserve that lazily and abort instead, so the fuzz targets' global
//! allocator ([`LazyAlloc`]) serves big zeroed blocks from one region reserved at start-up
//! with MAP_NORESERVE ([`install`]); everything else goes to the system allocator (ASan's).
//! Bit arrays are never reallocated, so only zeroed allocations and their frees are routed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rsbloom_core::sizing::MAX_LINK_BITS;

/// Zeroed blocks from this size on are served from the lazy region; no fuzz input can back a
/// link this big, so every such block is one whose bits are missing.
const LAZY_FROM: usize = 64 << 20;
/// Room for the largest link the decoders accept.
const REGION_BYTES: usize = (MAX_LINK_BITS / 8) as usize + 4096;
/// The region is page-aligned: no block the decoders allocate asks for more.
const REGION_ALIGN: usize = 4096;

static REGION: AtomicUsize = AtomicUsize::new(0);
static IN_USE: AtomicBool = AtomicBool::new(false);

/// Reserves the region. Call once, before the decoders run; until then big zeroed blocks go to
/// the system allocator like the rest.
pub fn install() {
    // SAFETY: an anonymous private mapping at an address of the kernel's choice; nothing else
    // refers to that range.
    let region = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            REGION_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert_ne!(region, libc::MAP_FAILED, "reserve the lazy region");
    REGION.store(region as usize, Ordering::SeqCst);
}

/// The fuzz targets' global allocator: the system's, but for big zeroed blocks once
/// [`install`] has reserved the region.
pub struct LazyAlloc;

// SAFETY: every block comes from the system allocator with the caller's layout, except the
// region, which is handed out to one owner at a time (IN_USE), is page-aligned and at least as
// large as any block it serves, and is only taken back by `dealloc` of that same pointer.
unsafe impl GlobalAlloc for LazyAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let region = REGION.load(Ordering::SeqCst);
        if region == 0 || layout.size() < LAZY_FROM {
            // SAFETY: the caller's contract, passed on.
            return unsafe { System.alloc_zeroed(layout) };
        }
        // One lazy block at a time: a decoder frees a link whose bits are missing before it
        // allocates the next one.
        if layout.size() > REGION_BYTES
            || layout.align() > REGION_ALIGN
            || IN_USE.swap(true, Ordering::SeqCst)
        {
            return std::ptr::null_mut();
        }
        region as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let region = REGION.load(Ordering::SeqCst);
        if region != 0 && ptr as usize == region {
            // SAFETY: the region is ours; dropping its pages makes it read as zeros again, as
            // a fresh zeroed block must.
            unsafe { libc::madvise(ptr.cast(), REGION_BYTES, libc::MADV_DONTNEED) };
            IN_USE.store(false, Ordering::SeqCst);
        } else {
            // SAFETY: every other block came from the system allocator with this layout.
            unsafe { System.dealloc(ptr, layout) };
        }
    }
}
