//! Big zeroed blocks mapped lazily, as Redis's allocator maps them.
//!
//! The RDB decoders allocate a link's zeroed bit array as soon as its header fields pass
//! validation, before its bits are read, so a corrupt value may declare up to 2^40 bits that it
//! does not hold. Under Redis that costs address space only: jemalloc maps big blocks with
//! MAP_NORESERVE when the kernel overcommits (Linux's default, and what Redis asks for), the
//! pages are never touched, and the block is freed when the read of the missing bits fails.
//! ASan and glibc cannot reserve that lazily and abort instead, so the `rdb` target routes the
//! module's zeroed allocations (through the module allocator's `RedisModule_Calloc` hook)
//! here: big ones land in one region reserved at start-up with MAP_NORESERVE, the rest go to
//! the C allocator (ASan's). Bit arrays are never reallocated, so `RedisModule_Realloc` stays
//! unset.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rsbloom_core::sizing::MAX_LINK_BITS;

/// Zeroed blocks from this size on are served from the lazy region; no fuzz input can back a
/// link this big, so every such block is one whose bits are missing.
const LAZY_FROM: usize = 64 << 20;
/// Room for the largest link the decoders accept.
const REGION_BYTES: usize = (MAX_LINK_BITS / 8) as usize + 4096;

static REGION: AtomicUsize = AtomicUsize::new(0);
static IN_USE: AtomicBool = AtomicBool::new(false);

/// Reserves the region and installs the hooks. Call once, before the decoders run.
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
    // SAFETY: single-threaded start-up, before any decoder runs. Until now the module allocator
    // used the C allocator for everything, and `lazy_free` hands every block that is not the
    // region back to it, so blocks allocated before and freed after this switch stay valid.
    unsafe {
        redis_module::raw::RedisModule_Calloc = Some(lazy_calloc);
        redis_module::raw::RedisModule_Free = Some(lazy_free);
    }
}

unsafe extern "C" fn lazy_calloc(count: usize, size: usize) -> *mut c_void {
    let bytes = count.saturating_mul(size);
    if bytes < LAZY_FROM {
        // SAFETY: the C allocator's calloc, freed by `lazy_free` through `free`.
        return unsafe { libc::calloc(count, size) };
    }
    // One lazy block at a time: a decoder frees a link whose bits are missing before it
    // allocates the next one.
    if bytes > REGION_BYTES || IN_USE.swap(true, Ordering::SeqCst) {
        return std::ptr::null_mut();
    }
    REGION.load(Ordering::SeqCst) as *mut c_void
}

unsafe extern "C" fn lazy_free(ptr: *mut c_void) {
    let region = REGION.load(Ordering::SeqCst);
    if ptr as usize == region && region != 0 {
        // SAFETY: the region is ours; dropping its pages makes it read as zeros again, as a
        // fresh calloc must.
        unsafe { libc::madvise(ptr, REGION_BYTES, libc::MADV_DONTNEED) };
        IN_USE.store(false, Ordering::SeqCst);
    } else {
        // SAFETY: every other block came from the C allocator (directly or through
        // `lazy_calloc`).
        unsafe { libc::free(ptr) };
    }
}
