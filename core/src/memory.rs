//! What a value's allocations really take from the allocator: jemalloc's size classes (the
//! allocator of Redis and Valkey builds), so `MEMORY USAGE` says what a key adds to
//! `used_memory` instead of the bytes asked for (a small filter's 144-byte bit array takes a
//! 160-byte block; a 21.8 MB window a 24 MB one).

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the server's allocator is jemalloc (Redis's and Valkey's usual builds), whose size
/// classes [`allocated`] follows; else (a build on the C library's malloc, as `scripts/servers`'
/// Valkey 9.1) a block takes about what was asked. The module probes it at load.
static JEMALLOC_CLASSES: AtomicBool = AtomicBool::new(true);

/// Tells [`allocated`] whether the server's allocator rounds blocks to jemalloc's size classes.
pub fn set_jemalloc_classes(jemalloc: bool) {
    JEMALLOC_CLASSES.store(jemalloc, Ordering::Relaxed);
}

/// The bytes the server's allocator hands out for a request of `requested` bytes. jemalloc's
/// classes: 8, then multiples of 16 up to 128, then four classes per doubling (160, 192, 224,
/// 256, 320, …), large ones included; another allocator's: the request rounded up to 16.
pub fn allocated(requested: usize) -> u64 {
    let bytes = requested as u64;
    if !JEMALLOC_CLASSES.load(Ordering::Relaxed) {
        return bytes.div_ceil(16).saturating_mul(16);
    }
    match bytes {
        0 => 0,
        1..=8 => 8,
        9..=128 => bytes.div_ceil(16) * 16,
        _ => {
            let lg = 63 - u64::from((bytes - 1).leading_zeros());
            let step = 1u64 << (lg - 2);
            bytes.div_ceil(step).saturating_mul(step)
        }
    }
}

/// An allocation the allocator refused: the bytes asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory {
    /// Bytes of the refused block.
    pub bytes: u64,
}

impl OutOfMemory {
    /// Ends a filter's copy (COPY of a key, through `Clone`, which cannot return an error):
    /// a panic whose payload is this refusal, which the module's COPY turns into a failed
    /// COPY (and its panic hook into one log line), where a copy's allocation failure aborted
    /// the server.
    pub fn refuse_copy(self) -> ! {
        std::panic::panic_any(self)
    }
}

/// Types whose all-zero bytes are a valid value, which [`zeroed`] may hand out.
///
/// # Safety
/// All-zero bytes must be a valid value of the type, and it must need no drop.
pub unsafe trait Zeroable: Copy {}

// SAFETY: every bit pattern of an integer is a valid value, zero included.
unsafe impl Zeroable for u8 {}
// SAFETY: as for u8.
unsafe impl Zeroable for u64 {}

/// `count` zeroed values in one block, or the error when the allocator refuses it: a filter's
/// bits, whose size a client chooses (`BF.RESERVE`, growth, `RESTORE`, `BF.LOADCHUNK`, an RDB
/// value), so a refusal must be an error reply and never abort the server. Zeroed by the
/// allocator (calloc), so the kernel's zero pages back the block until it is written.
pub fn zeroed<T: Zeroable>(count: usize) -> Result<Box<[T]>, OutOfMemory> {
    if count == 0 {
        return Ok(Box::new([]));
    }
    let refused = OutOfMemory {
        bytes: (count as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    };
    let layout = std::alloc::Layout::array::<T>(count).map_err(|_| refused)?;
    let block = zeroed_block(layout)?.cast::<T>();
    // SAFETY: the block holds `count` zeroed T, each a valid value (the Zeroable contract),
    // aligned for T, owned by the Box from here on (made by the global allocator, as Box
    // frees it).
    Ok(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(block.as_ptr(), count)) })
}

/// A zeroed block of `layout` (its size not zero) from the global allocator, or the error when
/// it refuses.
pub(crate) fn zeroed_block(
    layout: std::alloc::Layout,
) -> Result<std::ptr::NonNull<u8>, OutOfMemory> {
    debug_assert!(layout.size() > 0);
    let refused = OutOfMemory {
        bytes: layout.size() as u64,
    };
    // SAFETY: the layout has a non-zero size (the caller's contract).
    let block = unsafe { std::alloc::alloc_zeroed(layout) };
    let block = std::ptr::NonNull::new(block).ok_or(refused)?;
    // A block the allocator misaligned (the C library's malloc put a window's 64-byte lines
    // 16 bytes past a boundary until the module's allocator headered them) is refused: a Box
    // of it would be undefined behaviour.
    if !(block.as_ptr() as usize).is_multiple_of(layout.align()) {
        // SAFETY: the block was just made with this layout, and nothing else holds it.
        unsafe { std::alloc::dealloc(block.as_ptr(), layout) };
        return Err(refused);
    }
    Ok(block)
}

/// Blocks at least this many bytes start on a cache line ([`Block`]): a blocked link's 512-bit
/// blocks are then each one line. The C library's malloc starts a large block 16 bytes past a
/// page, and each block straddled two lines, the second not prefetched (core BF.BULKEXISTS-
/// style lookups on a 10M filter: 30-33 -> 24-28 ns an item). Smaller blocks keep their type's
/// alignment, so a small link takes what RedisBloom's does (jemalloc would put 144 bytes padded
/// to 192 in a larger class); from here up a 64-byte padding stays in jemalloc's size class.
const LINED_MIN_BYTES: usize = 4096;

/// A filter's large array (a link's bits, a window's lines, a cuckoo filter's slots): zeroed
/// values owned like a `Box<[T]>`, starting on a cache line from [`LINED_MIN_BYTES`] up (which
/// a `Box<[T]>`'s layout can neither promise nor free). Its copy (COPY of a key) ends when the
/// allocator refuses the block ([`OutOfMemory::refuse_copy`]), where a `Box<[T]>`'s copy
/// aborted the server.
pub struct Block<T: Zeroable> {
    start: std::ptr::NonNull<T>,
    len: usize,
}

// SAFETY: a Block owns its values as a Box<[T]> does; sending or sharing it sends or shares
// the values.
unsafe impl<T: Zeroable + Send> Send for Block<T> {}
// SAFETY: as for Send.
unsafe impl<T: Zeroable + Sync> Sync for Block<T> {}

impl<T: Zeroable> Block<T> {
    /// The allocation's layout for `len` values (not zero).
    fn layout(len: usize) -> Option<std::alloc::Layout> {
        let layout = std::alloc::Layout::array::<T>(len).ok()?;
        if layout.size() >= LINED_MIN_BYTES {
            layout.align_to(64).ok()
        } else {
            Some(layout)
        }
    }

    /// `len` zeroed values, or the error when the allocator refuses them.
    pub fn zeroed(len: usize) -> Result<Self, OutOfMemory> {
        let refused = OutOfMemory {
            bytes: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64),
        };
        let start = match len {
            0 => std::ptr::NonNull::dangling(),
            _ => zeroed_block(Self::layout(len).ok_or(refused)?)?.cast(),
        };
        Ok(Block { start, len })
    }

    /// Where the values start, for the defrag walk ([`crate::defrag::Defrag::block`]).
    pub(crate) fn start(&self) -> Option<std::ptr::NonNull<u8>> {
        (self.len > 0).then_some(self.start.cast())
    }

    /// Takes the values' new address after the defrag allocator moved them.
    ///
    /// # Safety
    /// `start` holds this block's values, copied there by the allocator that made the block,
    /// in a block of the same size class (so aligned as this one), and the old block is freed.
    pub(crate) unsafe fn moved_to(&mut self, start: std::ptr::NonNull<u8>) {
        self.start = start.cast();
    }
}

impl<T: Zeroable> std::ops::Deref for Block<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `start` points to `len` initialised values this block owns (or dangles,
        // aligned, with `len` 0).
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> std::ops::DerefMut for Block<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

impl<T: Zeroable> Drop for Block<T> {
    fn drop(&mut self) {
        if let Some(layout) = Self::layout(self.len).filter(|_| self.len > 0) {
            // SAFETY: the block was made with this layout (`zeroed`), and is freed once.
            unsafe { std::alloc::dealloc(self.start.as_ptr().cast(), layout) };
        }
    }
}

impl<T: Zeroable> Clone for Block<T> {
    fn clone(&self) -> Self {
        let mut copy = Block::zeroed(self.len).unwrap_or_else(|refused| refused.refuse_copy());
        copy.copy_from_slice(self);
        copy
    }
}

impl<T: Zeroable + std::fmt::Debug> std::fmt::Debug for Block<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: Zeroable + PartialEq> PartialEq for Block<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Zeroable + Eq> Eq for Block<T> {}

/// A boxed slice of at most [`u16::MAX`] values in 10 bytes of alignment 1 (its start and a
/// 16-bit length, packed), where a `Box<[T]>` takes 16 of alignment 8: a struct of 8-byte
/// fields lays it in its small fields' tail. A cuckoo filter's struct is then 40 bytes, not 48:
/// what RedisBloom's takes from Redis 7.4's jemalloc (a 40-byte class; a CF.ADD key cost 8
/// bytes more than RedisBloom's, 1,170.7 against 1,162.7) and 16 bytes less from the C
/// library's malloc (a 48-byte chunk, not 64).
#[repr(C, packed)]
pub struct ShortSlice<T> {
    start: std::ptr::NonNull<T>,
    len: u16,
    owns: std::marker::PhantomData<Box<[T]>>,
}

// SAFETY: a ShortSlice owns its values as a Box<[T]> does; sending or sharing it sends or
// shares the values.
unsafe impl<T: Send> Send for ShortSlice<T> {}
// SAFETY: as for Send.
unsafe impl<T: Sync> Sync for ShortSlice<T> {}

impl<T> ShortSlice<T> {
    /// The values, None when there are more than [`u16::MAX`].
    pub fn from_box(values: Box<[T]>) -> Option<Self> {
        let len = u16::try_from(values.len()).ok()?;
        let start = std::ptr::NonNull::from(Box::leak(values)).cast::<T>();
        Some(ShortSlice {
            start,
            len,
            owns: std::marker::PhantomData,
        })
    }

    /// [`Self::from_box`] of a vector's values (its spare capacity let go).
    pub fn from_vec(values: Vec<T>) -> Option<Self> {
        Self::from_box(values.into_boxed_slice())
    }

    /// The values as the box they came in (no copy).
    pub fn into_box(self) -> Box<[T]> {
        let raw = self.raw();
        std::mem::forget(self);
        // SAFETY: `raw` is the box `from_box` took apart, whose ownership passes back here
        // once (`self` is forgotten, never dropped).
        unsafe { Box::from_raw(raw) }
    }

    /// The values' slice pointer (the packed fields read by value, never by reference).
    fn raw(&self) -> *mut [T] {
        let (start, len) = (self.start, self.len);
        std::ptr::slice_from_raw_parts_mut(start.as_ptr(), usize::from(len))
    }
}

impl<T> Default for ShortSlice<T> {
    fn default() -> Self {
        Self::from_box(Box::default()).expect("an empty box")
    }
}

impl<T> std::ops::Deref for ShortSlice<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `raw` is a live boxed slice this value owns (or an empty one).
        unsafe { &*self.raw() }
    }
}

impl<T> std::ops::DerefMut for ShortSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, borrowed mutably through `self`.
        unsafe { &mut *self.raw() }
    }
}

impl<T> Drop for ShortSlice<T> {
    fn drop(&mut self) {
        // SAFETY: the box `from_box` took apart, dropped once.
        drop(unsafe { Box::from_raw(self.raw()) });
    }
}

impl<T: Clone> Clone for ShortSlice<T> {
    fn clone(&self) -> Self {
        Self::from_vec(self.to_vec()).expect("as many values as the original")
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for ShortSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: PartialEq> PartialEq for ShortSlice<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Eq> Eq for ShortSlice<T> {}

/// A copy of `values` in a vector of `capacity` (at least their count), or the allocator's
/// refusal: a saved bit array read into a filter (`to_vec` aborts the server when refused).
pub fn try_copied<T: Clone>(values: &[T], capacity: usize) -> Result<Vec<T>, OutOfMemory> {
    let capacity = capacity.max(values.len());
    let mut copy = Vec::new();
    copy.try_reserve_exact(capacity).map_err(|_| OutOfMemory {
        bytes: (capacity as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    })?;
    copy.extend_from_slice(values);
    Ok(copy)
}

/// [`try_copied`] for a filter's copy (COPY of a key): a refused allocation ends it
/// ([`OutOfMemory::refuse_copy`]), where `Vec::clone` aborted the server.
pub(crate) fn copied_vec<T: Clone>(values: &[T], capacity: usize) -> Vec<T> {
    try_copied(values, capacity).unwrap_or_else(|refused| refused.refuse_copy())
}

/// Blocks at least this large are zeroed by handing their whole pages back to the kernel
/// (which maps zero pages until they are written) instead of writing zeros into them.
const ZERO_BY_KERNEL_BYTES: usize = 1 << 20;

/// Zeroes `len` bytes at `block`, a block an allocator just handed out. A large block's whole
/// pages go back to the kernel (`MADV_DONTNEED`: they read as zeros and take no memory until
/// written, as a calloc'd block's do) and only its ends are written; a small one is written.
/// For an allocator without a calloc that can fail (Redis 7.0's module API has none).
///
/// # Safety
/// `block` must be valid for writes of `len` bytes, and its pages must be private anonymous
/// memory that nothing else uses (a fresh block from malloc, which keeps its bookkeeping
/// outside large blocks).
pub unsafe fn zero_block(block: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    if len >= ZERO_BY_KERNEL_BYTES {
        let page = 4096;
        let start = block as usize;
        let first = start.next_multiple_of(page);
        let end = (start + len) & !(page - 1);
        // SAFETY: [first, end) is inside the block (the caller's contract), and dropping its
        // pages only makes them read as zeros; the ends around it are written.
        let dropped = unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED) == 0
        };
        if dropped {
            // SAFETY: both ranges are inside the block.
            unsafe {
                std::ptr::write_bytes(block, 0, first - start);
                std::ptr::write_bytes(end as *mut u8, 0, start + len - end);
            }
            return;
        }
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::write_bytes(block, 0, len) };
}

/// What the server allocates for a module value beside the module's own blocks (its object
/// header and module-value record, 16 bytes each), which `MEMORY USAGE` counts only if the
/// module's figure does.
pub const SERVER_VALUE_BYTES: u64 = 32;

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy the allocator cannot make is the refusal, and a filter's copy ends with it as
    /// the panic's payload (which the module's COPY and its panic hook recognise).
    #[test]
    fn a_refused_copy_is_an_error_or_a_payload() {
        let huge = isize::MAX as usize / 2;
        let refused = try_copied(&[1u8, 2], huge).unwrap_err();
        assert_eq!(refused.bytes, huge as u64);
        assert_eq!(try_copied(&[1u8, 2], 0).unwrap(), [1, 2]);
        let ended = std::panic::catch_unwind(|| copied_vec(&[1u64], huge)).unwrap_err();
        assert_eq!(
            ended.downcast_ref::<OutOfMemory>(),
            Some(&OutOfMemory {
                bytes: (huge as u64).saturating_mul(8)
            })
        );
    }

    /// A short slice takes 10 bytes of alignment 1, so that three words, it and five bytes
    /// make 40 (a cuckoo filter's struct); its values are the box's (no copy either way),
    /// dropped once, cloned and compared as values; past u16::MAX values it is refused.
    #[test]
    fn a_short_slice_is_a_box_in_ten_bytes() {
        assert_eq!(std::mem::size_of::<ShortSlice<u64>>(), 10);
        assert_eq!(std::mem::align_of::<ShortSlice<u64>>(), 1);
        struct Like {
            _words: [u64; 3],
            _short: ShortSlice<u64>,
            _small: (u16, u16, u8),
        }
        assert_eq!(std::mem::size_of::<Like>(), 40);

        let counted = std::rc::Rc::new(());
        let values: Vec<_> = (0..3).map(|_| counted.clone()).collect();
        let boxed = values.into_boxed_slice();
        let at = boxed.as_ptr();
        let mut short = ShortSlice::from_box(boxed).unwrap();
        assert_eq!((short.len(), short.as_ptr()), (3, at));
        assert_eq!(std::rc::Rc::strong_count(&counted), 4);
        let copy = short.clone();
        assert_eq!(copy, short);
        assert_eq!(std::rc::Rc::strong_count(&counted), 7);
        drop(copy);
        short[1] = std::rc::Rc::new(());
        assert_eq!(std::rc::Rc::strong_count(&counted), 3);
        let back = short.into_box();
        assert_eq!(back.as_ptr(), at);
        drop(back);
        assert_eq!(std::rc::Rc::strong_count(&counted), 1);

        assert!(ShortSlice::<u8>::default().is_empty());
        assert_eq!(
            ShortSlice::from_vec(vec![7u8; 65_535]).unwrap().len(),
            65_535
        );
        assert!(ShortSlice::from_vec(vec![7u8; 65_536]).is_none());
    }

    /// Large blocks start on a cache line, small ones need not; both are zeroed, writable,
    /// copied and compared as their values.
    #[test]
    fn large_blocks_start_on_a_line() {
        for len in [0, 1, 18, 511, 512, 513, 100_000] {
            let mut words = Block::<u64>::zeroed(len).unwrap();
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
        let bytes = Block::<u8>::zeroed(5000).unwrap();
        assert_eq!(bytes.as_ptr() as usize % 64, 0);
    }

    #[test]
    fn jemalloc_size_classes() {
        let classes: Vec<u64> = [
            0, 1, 8, 9, 16, 17, 48, 100, 128, 129, 144, 160, 161, 224, 225,
        ]
        .into_iter()
        .map(allocated)
        .collect();
        assert_eq!(
            classes,
            [0, 8, 8, 16, 16, 32, 48, 112, 128, 160, 160, 160, 192, 224, 256]
        );
        assert_eq!(allocated(257), 320);
        assert_eq!(allocated(1024), 1024);
        assert_eq!(allocated(1025), 1280);
        assert_eq!(allocated(21_846_576 - 100), 24 << 20);
        assert_eq!(allocated(usize::MAX), u64::MAX);
    }

    #[test]
    fn zero_block_zeroes_small_and_large_blocks() {
        for len in [0, 1, 4095, 1 << 20, (3 << 20) + 17] {
            let mut block = vec![0xa5u8; len + 64];
            // SAFETY: the vector's buffer, private memory, holds len + 64 bytes.
            unsafe { zero_block(block.as_mut_ptr().add(32), len) };
            assert!(block[32..32 + len].iter().all(|&b| b == 0), "{len}");
            assert!(block[..32]
                .iter()
                .chain(&block[32 + len..])
                .all(|&b| b == 0xa5));
        }
    }

    #[test]
    fn a_refused_block_is_an_error() {
        assert_eq!(zeroed::<u8>(3).unwrap().as_ref(), &[0, 0, 0]);
        assert!(zeroed::<u64>(0).unwrap().is_empty());
        // More than an address space holds: refused, whatever the machine.
        assert_eq!(
            zeroed::<u64>(usize::MAX / 16).map(|b| std::hint::black_box(b).len()),
            Err(OutOfMemory {
                bytes: (usize::MAX / 16) as u64 * 8
            })
        );
    }
}
