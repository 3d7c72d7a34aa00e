//! Module-wide statistics for `INFO bf` (section `bf_stats`): for each filter kind, live gauges
//! of the values Redis holds and counters of the work done since the module loaded.
//!
//! Both kinds count the same way, through one [`Counters`] each ([`BLOOM`], [`CUCKOO`]): the
//! gauges are kept exact by counting every place a value enters Redis (a command creating a
//! key, RDB load, COPY: [`Counters::value_created`]) or leaves it (the type's free callback:
//! [`Counters::value_freed`]), and every change a command makes to a live value, once per
//! command ([`Counters::value_changed`], from the value's [`Gauges`] before and after).
//! Relaxed atomics: INFO needs no ordering, and a value may be freed in a lazyfree thread.

use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What the gauges follow of one value: the bytes of its bits or slots, and the items it
/// counts (`BF.CARD`'s adds for a Bloom filter, the inserted items for a cuckoo filter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gauges {
    pub bytes: u64,
    pub items: u64,
}

/// What one command did to a filter, item by item.
#[derive(Debug, Default, Clone, Copy)]
pub struct Work {
    /// Items inserted (new to a Bloom filter; every insert of a cuckoo filter).
    pub added: u64,
    /// Items deleted (cuckoo filters).
    pub deleted: u64,
    /// Items refused: a full filter, the memory limit, a filter that cannot grow.
    pub refused: u64,
}

/// The gauges and counters of one filter kind.
pub struct Counters {
    filters: AtomicU64,
    bytes: AtomicU64,
    items: AtomicU64,
    adds: AtomicU64,
    checks: AtomicU64,
    deletes: AtomicU64,
    refusals: AtomicU64,
}

/// Bloom and window filters (`MBbloom--`), reported without a prefix.
pub static BLOOM: Counters = Counters::new();
/// Cuckoo filters (`MBbloomCF`), reported as `cf_*`.
pub static CUCKOO: Counters = Counters::new();

/// Adds `delta` (wrapping: a cuckoo item count may wrap below zero, as RedisBloom's does, and
/// the gauge with it, consistently with the free that subtracts the value's own count). Each
/// atomic add is a locked instruction: only the counters that moved are touched.
fn add(cell: &AtomicU64, delta: u64) {
    if delta != 0 {
        cell.fetch_add(delta, Relaxed);
    }
}

impl Counters {
    const fn new() -> Self {
        Counters {
            filters: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            items: AtomicU64::new(0),
            adds: AtomicU64::new(0),
            checks: AtomicU64::new(0),
            deletes: AtomicU64::new(0),
            refusals: AtomicU64::new(0),
        }
    }

    /// A value with these gauges became one Redis holds.
    pub fn value_created(&self, g: Gauges) {
        self.filters.fetch_add(1, Relaxed);
        add(&self.bytes, g.bytes);
        add(&self.items, g.items);
    }

    /// A value Redis held, with these gauges, is being freed.
    pub fn value_freed(&self, g: Gauges) {
        self.filters.fetch_sub(1, Relaxed);
        add(&self.bytes, g.bytes.wrapping_neg());
        add(&self.items, g.items.wrapping_neg());
    }

    /// One write command on a live value: its gauges before and after (growth, slices a window
    /// dropped, a LOADCHUNK or a compaction move them too), and the work it did.
    pub fn value_changed(&self, before: Gauges, after: Gauges, work: Work) {
        add(&self.bytes, after.bytes.wrapping_sub(before.bytes));
        add(&self.items, after.items.wrapping_sub(before.items));
        self.work_done(work);
    }

    /// Work that changed no value (items refused before a filter could be created).
    pub fn work_done(&self, work: Work) {
        add(&self.adds, work.added);
        add(&self.deletes, work.deleted);
        add(&self.refusals, work.refused);
    }

    /// `n` items looked up (`*.EXISTS`, `*.MEXISTS`, `CF.COUNT`).
    pub fn items_checked(&self, n: u64) {
        add(&self.checks, n);
    }
}

/// Active defrag's work on the module's values (both kinds).
pub struct DefragCounters {
    /// Values whose every block the defrag walked.
    values: AtomicU64,
    /// Blocks the server's allocator moved.
    moved: AtomicU64,
}

impl DefragCounters {
    /// Blocks moved.
    pub fn moved(&self, n: u64) {
        add(&self.moved, n);
    }
    /// A value walked to its end.
    pub fn value_done(&self) {
        add(&self.values, 1);
    }
}

/// Active defrag's counters.
pub static DEFRAG: DefragCounters = DefragCounters {
    values: AtomicU64::new(0),
    moved: AtomicU64::new(0),
};

/// The fields of the `bf_stats` section, in order: the Bloom filters', then the cuckoo
/// filters' (`cf_`, with `cf_deletes`), then active defrag's.
pub fn fields() -> [(&'static CStr, u64); 15] {
    let (b, c) = (&BLOOM, &CUCKOO);
    [
        (c"filters", b.filters.load(Relaxed)),
        (c"bytes", b.bytes.load(Relaxed)),
        (c"items", b.items.load(Relaxed)),
        (c"adds", b.adds.load(Relaxed)),
        (c"checks", b.checks.load(Relaxed)),
        (c"refusals", b.refusals.load(Relaxed)),
        (c"cf_filters", c.filters.load(Relaxed)),
        (c"cf_bytes", c.bytes.load(Relaxed)),
        (c"cf_items", c.items.load(Relaxed)),
        (c"cf_adds", c.adds.load(Relaxed)),
        (c"cf_checks", c.checks.load(Relaxed)),
        (c"cf_deletes", c.deletes.load(Relaxed)),
        (c"cf_refusals", c.refusals.load(Relaxed)),
        (c"defrag_values", DEFRAG.values.load(Relaxed)),
        (c"defrag_moved", DEFRAG.moved.load(Relaxed)),
    ]
}
