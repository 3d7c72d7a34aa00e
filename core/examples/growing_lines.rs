//! The one-line growing layout (`rsbloom_core::growing::lines::LineFilter`, docs/growing.md
//! "One line a lookup") measured beside the core's growing filter and a reserved one, in one
//! process, alternating: `cargo run --release -p rsbloom-core --example growing_lines --
//! [items] [rounds] [error]`, built for the CPU as the module's batches are (`RUSTFLAGS="-C
//! target-cpu=native"`).
//!
//! Each filter is filled with the items in batches of 1,000 (as BF.MADD sends them), from a
//! start of 100 items for the growing ones and reserved for them all for the other. It prints
//! memory (the allocator's bytes: the lines, the overflow, the buffers), the overflow's
//! entries, the rate among a million absent items, the time per add over the whole fill, and
//! absent lookups (batches of 100, hashing included) of both growing filters against the
//! reserved one, `rounds` times alternating; and the process's huge pages, to show the
//! reserved filter's array has them as in the server.

use std::alloc::{GlobalAlloc, Layout, System};
use std::time::Instant;

use rsbloom_core::growing::lines::LineFilter;
use rsbloom_core::{Chain, Filter, FilterSpec, Growing, Growth, Window};

/// Large blocks straight from `mmap`, as the server's allocator gives them: Rust's system
/// allocator zeroes a block aligned past 16 bytes with a write (its `alloc_zeroed`), which
/// faults every page in at 4 KiB before the reserved filter's huge-page advice can act, so
/// its array ran on 4 KiB pages in this example (28,672 kB of `AnonHugePages` at 13.1M, the
/// prototype's segments only), where the server's (jemalloc's calloc) runs on 2 MiB ones.
struct FreshPages;

/// Blocks from this size on are mapped fresh.
const MAPPED_FROM: usize = 1 << 20;

// SAFETY: blocks of MAPPED_FROM bytes or more are anonymous private mappings (page-aligned,
// zeroed, covering any alignment up to a page, which no type here exceeds), freed by munmap of
// the same length; smaller ones are the system allocator's, freed by it. Each block is freed
// by the branch that made it, as both decide on the layout's size alone.
unsafe impl GlobalAlloc for FreshPages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() < MAPPED_FROM {
            // SAFETY: forwarded contract.
            return unsafe { System.alloc(layout) };
        }
        // SAFETY: a new anonymous mapping; MAP_FAILED is turned into the null refusal.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                layout.size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            p.cast()
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() < MAPPED_FROM {
            // SAFETY: forwarded contract.
            return unsafe { System.alloc_zeroed(layout) };
        }
        // SAFETY: forwarded contract; a fresh mapping is zeroed.
        unsafe { self.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() < MAPPED_FROM {
            // SAFETY: forwarded contract: the system allocator made it.
            return unsafe { System.dealloc(ptr, layout) };
        }
        // SAFETY: `alloc` mapped this block with this length.
        unsafe { libc::munmap(ptr.cast(), layout.size()) };
    }
}

#[global_allocator]
static ALLOCATOR: FreshPages = FreshPages;

fn url(prefix: &str, i: u64) -> Vec<u8> {
    format!("https://{prefix}.example.com/p/{i:012}").into_bytes()
}

/// A filter of the core filled with the items in batches of 1,000 (as BF.MADD sends them),
/// and its time per add.
fn filled(mut filter: Filter, items: u64) -> (Filter, f64) {
    let t = Instant::now();
    for b in (0..items).step_by(1000) {
        let batch: Vec<Vec<u8>> = (b..(b + 1000).min(items)).map(|i| url("q", i)).collect();
        filter.add_many(batch.iter().map(|v| v.as_slice()), 0, u64::MAX, true, |r| {
            r.is_ok()
        });
    }
    (filter, t.elapsed().as_nanos() as f64 / items as f64)
}

/// Nanoseconds per absent lookup, batches of 100 items of `record` bytes from `absent`.
fn lookup_ns(absent: &[u8], record: usize, mut batch: impl FnMut(&[u8]) -> usize) -> (f64, usize) {
    let t = Instant::now();
    let positives = absent.chunks(100 * record).map(&mut batch).sum();
    let lookups = absent.len() / record;
    (t.elapsed().as_nanos() as f64 / lookups as f64, positives)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let items: u64 = args.get(1).map_or(2_000_000, |s| s.parse().unwrap());
    let rounds: usize = args.get(2).map_or(5, |s| s.parse().unwrap());
    let error: f64 = args.get(3).map_or(0.01, |s| s.parse().unwrap());
    let seed = 7;
    let mut lines = LineFilter::new(error, 100, seed, u64::MAX).unwrap();
    let t = Instant::now();
    for b in (0..items).step_by(1000) {
        let batch: Vec<Vec<u8>> = (b..(b + 1000).min(items)).map(|i| url("q", i)).collect();
        lines.add_many(batch.iter().map(|v| v.as_slice()), u64::MAX, |r| r.is_ok());
    }
    let lines_add_ns = t.elapsed().as_nanos() as f64 / items as f64;
    let spec = FilterSpec {
        error,
        capacity: items,
        growth: Growth::Fixed,
        window: Window::Unbounded,
        refresh: true,
    };
    let (reserved, reserved_add_ns) = filled(
        Filter::Chain(Chain::new(&spec, seed, u64::MAX).unwrap()),
        items,
    );
    let growing = Filter::Growing(Box::new(Growing::new(error, 100, seed, u64::MAX).unwrap()));
    let (growing, growing_add_ns) = filled(growing, items);
    for b in (0..items).step_by(1000) {
        let batch: Vec<Vec<u8>> = (b..(b + 1000).min(items)).map(|i| url("q", i)).collect();
        let mut missed = 0;
        lines.contains_many(batch.iter().map(|v| v.as_slice()), |p| {
            missed += usize::from(!p)
        });
        assert_eq!(missed, 0, "false negatives near item {b}");
    }
    // One buffer of equal-length items, as a bulk command's blob: no item is a cache miss of
    // its own.
    let record = url("absent", 0).len();
    let probes = 1_000_000;
    let absent: Vec<u8> = (0..probes).flat_map(|i| url("absent", i)).collect();
    let lines_batch = |chunk: &[u8]| {
        let mut positives = 0;
        lines.contains_many(chunk.chunks(record), |p| positives += usize::from(p));
        positives
    };
    let core_batch = |f: &Filter, chunk: &[u8]| {
        let mut positives = 0;
        f.contains_many(chunk.chunks(record), 0, |p| positives += usize::from(p));
        positives
    };
    let (mut ratio_lines, mut ratio_growing, mut ns) = (Vec::new(), Vec::new(), Vec::new());
    let mut fp = 0;
    for _ in 0..rounds {
        let (l, positives) = lookup_ns(&absent, record, lines_batch);
        let (r, _) = lookup_ns(&absent, record, |c| core_batch(&reserved, c));
        let (g, _) = lookup_ns(&absent, record, |c| core_batch(&growing, c));
        fp = positives;
        ratio_lines.push(r / l);
        ratio_growing.push(r / g);
        ns.push(format!("{l:.1}/{g:.1}/{r:.1}"));
    }
    let per_item = |bytes: u64| bytes as f64 * 8.0 / items as f64;
    println!(
        "{items} items at {error}: bits per item: one-line {:.1}, growing {:.1}, reserved {:.1}; \
         overflow {} entries; one-line rate {:.3}%; ns per add: one-line {lines_add_ns:.0}, \
         growing {growing_add_ns:.0}, reserved {reserved_add_ns:.0}; ns per lookup \
         (one-line/growing/reserved) {ns:?}: speed against reserved, medians: one-line {:.3}, \
         growing {:.3}",
        per_item(lines.heap_bytes()),
        per_item(growing.memory_usage()),
        per_item(reserved.memory_usage()),
        lines.overflow_entries(),
        fp as f64 * 100.0 / probes as f64,
        median(ratio_lines),
        median(ratio_growing),
    );
    println!("huge pages: {} kB in the process", huge_page_kb());
}

/// The process's memory on transparent huge pages (`AnonHugePages` summed over
/// `/proc/self/smaps`), to tell whether the reserved filter's array got them too.
fn huge_page_kb() -> u64 {
    std::fs::read_to_string("/proc/self/smaps")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("AnonHugePages:"))
        .filter_map(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .sum()
}
