//! Memory hints that change speed, never results: software prefetch of probe lines, and
//! transparent huge pages for large bit arrays.

/// Bit arrays at least this large ask the kernel for 2 MiB pages: a random probe into a
/// gigabyte array with 4 KiB pages misses the TLB nearly every time, and the page walk costs
/// about as much as the miss itself. Smaller arrays gain little and would round up memory.
pub(crate) const HUGE_PAGE_MIN_BYTES: usize = 8 << 20;

const HUGE_PAGE: usize = 2 << 20;

/// Starts loading the cache line holding `word` into every cache level. A hint only: it reads
/// nothing the program can observe.
#[inline(always)]
pub(crate) fn prefetch(word: &u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is never a memory access in the language's sense: it cannot fault and
    // has no effect on program state; the pointer comes from a live reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((word as *const u64).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}

/// Asks for transparent huge pages over the whole 2 MiB pages inside `data` (a bit array's
/// words, a cuckoo filter's slots), when it is at least [`HUGE_PAGE_MIN_BYTES`]. Best done
/// before the pages are first touched (a fresh zeroed allocation is not), so page faults map
/// huge pages directly. Errors are ignored: the kernel may have THP disabled, and the array
/// works the same either way.
pub(crate) fn advise_huge_pages<T: Copy>(data: &mut [T]) {
    advise_huge_pages_from(data, HUGE_PAGE_MIN_BYTES);
}

/// [`advise_huge_pages`] for an array of at least `min_bytes` (a growing filter's segments
/// ask from one huge page up: they are its lines, all of them read at random).
pub(crate) fn advise_huge_pages_from<T: Copy>(data: &mut [T], min_bytes: usize) {
    let bytes = std::mem::size_of_val(data);
    if bytes < min_bytes.max(HUGE_PAGE) {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = data.as_mut_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + bytes) & !(HUGE_PAGE - 1);
        if end > first {
            // SAFETY: [first, end) lies inside the allocation `data` borrows mutably, and
            // MADV_HUGEPAGE changes only how the kernel backs those pages, not their contents.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// [`prefetch`] for the cache line holding any value (a table entry).
#[inline(always)]
pub(crate) fn prefetch_any<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `prefetch`: a hint that cannot fault, from a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// [`prefetch`] for the cache line holding `byte`.
#[inline(always)]
pub(crate) fn prefetch_byte(byte: &u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `prefetch`: a hint that cannot fault, from a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((byte as *const u8).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}
