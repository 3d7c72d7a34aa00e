//! Active defragmentation of a value's blocks: the server's allocator moves a block from a
//! sparse page to a denser one (`RedisModule_DefragAlloc`: a copy at a new address, the old
//! block freed), and the value takes the new address. The core walks a value's blocks in a
//! fixed order, one step per block, and stops when the server says its time slice is over,
//! returning where to resume ([`Defrag::stopped`]): a value with many blocks is done in
//! bounded steps. Large blocks are left where they are by the allocator itself (they have
//! pages of their own), so a step costs a call and, for a small block, a copy.

use crate::memory::{Block, Zeroable};

/// What moves blocks: the server's defrag allocator, behind the module's safe wrapper.
pub trait Mover {
    /// The new address of the block at `block` when the allocator moved it (its bytes
    /// copied there, the old block freed), or None when it stays.
    fn moved(&mut self, block: *mut u8) -> Option<*mut u8>;
    /// Whether the time slice is over: the walk stops after the current block.
    fn should_stop(&mut self) -> bool;
}

/// One walk over a value's blocks, from block number `from` on.
pub struct Defrag<'m> {
    mover: &'m mut dyn Mover,
    from: usize,
    at: usize,
    stopped: Option<usize>,
    moved: u64,
}

impl<'m> Defrag<'m> {
    /// A walk that skips the first `from` blocks (0: a new walk).
    pub fn new(mover: &'m mut dyn Mover, from: usize) -> Self {
        Defrag {
            mover,
            from,
            at: 0,
            stopped: None,
            moved: 0,
        }
    }

    /// Where the next walk resumes when this one stopped early; None when it saw every block.
    pub fn stopped(&self) -> Option<usize> {
        self.stopped
    }

    /// Blocks moved by this walk.
    pub fn moved(&self) -> u64 {
        self.moved
    }

    /// One step: `relocate` is handed the mover when this block's turn has come.
    fn step(&mut self, relocate: impl FnOnce(&mut dyn Mover) -> bool) {
        if self.stopped.is_some() {
            return;
        }
        self.at += 1;
        if self.at <= self.from {
            return;
        }
        if relocate(&mut *self.mover) {
            self.moved += 1;
        }
        if self.mover.should_stop() {
            self.stopped = Some(self.at);
        }
    }

    /// A boxed slice's block.
    pub fn slice<T>(&mut self, block: &mut Box<[T]>) {
        self.step(|mover| {
            let len = block.len();
            if len == 0 || std::mem::size_of::<T>() == 0 {
                return false;
            }
            let Some(new) = mover.moved(block.as_mut_ptr().cast()) else {
                return false;
            };
            // SAFETY: the mover copied the block's bytes, `len` initialised T, to `new`, a block
            // of the same size from the same allocator (so aligned as the old one was), and
            // freed the old block; the old Box is forgotten, never dropped or read again.
            let fresh =
                unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(new.cast(), len)) };
            std::mem::forget(std::mem::replace(block, fresh));
            true
        });
    }

    /// A filter's large array ([`Block`]).
    pub fn block<T: Zeroable>(&mut self, block: &mut Block<T>) {
        self.step(|mover| {
            let Some(new) = block.start().and_then(|start| mover.moved(start.as_ptr())) else {
                return false;
            };
            let Some(new) = std::ptr::NonNull::new(new) else {
                return false;
            };
            // SAFETY: the mover copied the block's bytes to `new`, a block of the same size
            // class from the same allocator (jemalloc, the only one a server defragments with,
            // whose classes from 4 KiB up are multiples of 64, so aligned as the old one), and
            // freed the old block.
            unsafe { block.moved_to(new) };
            true
        });
    }

    /// A vector's buffer (its spare capacity included).
    pub fn vec<T>(&mut self, v: &mut Vec<T>) {
        self.step(|mover| {
            let (len, capacity) = (v.len(), v.capacity());
            if capacity == 0 || std::mem::size_of::<T>() == 0 {
                return false;
            }
            let Some(new) = mover.moved(v.as_mut_ptr().cast()) else {
                return false;
            };
            // SAFETY: as in `slice`: the buffer's bytes (its `len` initialised T and the spare
            // capacity) are at `new`, from the same allocator, the old buffer freed and its
            // Vec forgotten.
            let fresh = unsafe { Vec::from_raw_parts(new.cast(), len, capacity) };
            std::mem::forget(std::mem::replace(v, fresh));
            true
        });
    }

    /// A boxed value's block.
    pub fn boxed<T>(&mut self, b: &mut Box<T>) {
        self.step(|mover| {
            if std::mem::size_of::<T>() == 0 {
                return false;
            }
            let Some(new) = mover.moved(std::ptr::from_mut::<T>(b).cast()) else {
                return false;
            };
            // SAFETY: as in `slice`, for one T.
            let fresh = unsafe { Box::from_raw(new.cast::<T>()) };
            std::mem::forget(std::mem::replace(b, fresh));
            true
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mover that copies every block it is shown into a new one (as the server's does) and
    /// stops every `every` blocks.
    struct Copier {
        sizes: std::collections::HashMap<usize, std::alloc::Layout>,
        every: usize,
        seen: usize,
    }

    impl Mover for Copier {
        fn moved(&mut self, block: *mut u8) -> Option<*mut u8> {
            let layout = *self.sizes.get(&(block as usize))?;
            // SAFETY: `block` is a live block of `layout` (registered by the test), copied
            // into a new block of the same layout and then freed, as the server's mover does.
            unsafe {
                let new = std::alloc::alloc(layout);
                std::ptr::copy_nonoverlapping(block, new, layout.size());
                std::alloc::dealloc(block, layout);
                Some(new)
            }
        }
        fn should_stop(&mut self) -> bool {
            self.seen += 1;
            self.seen.is_multiple_of(self.every)
        }
    }

    #[test]
    fn blocks_move_with_their_contents_in_bounded_steps() {
        let mut words: Box<[u64]> = (0..100).collect();
        let mut list: Vec<u32> = Vec::with_capacity(10);
        list.extend([7, 8, 9]);
        let mut one = Box::new(42u64);
        let mut copier = Copier {
            sizes: [
                (
                    words.as_ptr() as usize,
                    std::alloc::Layout::for_value(&*words),
                ),
                (
                    list.as_ptr() as usize,
                    std::alloc::Layout::array::<u32>(10).unwrap(),
                ),
                (
                    &*one as *const u64 as usize,
                    std::alloc::Layout::new::<u64>(),
                ),
            ]
            .into(),
            every: 2,
            seen: 0,
        };
        let before = (words.as_ptr() as usize, list.as_ptr() as usize);
        let mut from = 0;
        let mut walks = 0;
        loop {
            let mut d = Defrag::new(&mut copier, from);
            d.slice(&mut words);
            d.vec(&mut list);
            d.boxed(&mut one);
            walks += 1;
            match d.stopped() {
                Some(next) => from = next,
                None => break,
            }
        }
        assert_eq!(walks, 2, "two blocks a step");
        assert_ne!((words.as_ptr() as usize, list.as_ptr() as usize), before);
        assert_eq!(words.iter().sum::<u64>(), 4950);
        assert_eq!((list.as_slice(), list.capacity()), (&[7, 8, 9][..], 10));
        assert_eq!(*one, 42);
        list.push(10);
        assert_eq!(list.len(), 4);
    }
}
