//! Module settings: defaults for implicitly created filters and the per-filter memory limit.
//! Set by module load arguments (`loadmodule librsbloom.so ERROR_RATE 0.01 ...`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::args;

/// Default per-filter limit: 2 GiB, room for a billion URLs at 1% (about 1.4 GB) while one
/// command cannot take the server down.
pub const DEFAULT_MAX_FILTER_BYTES: u64 = 2 << 30;

static ERROR_RATE_BITS: AtomicU64 = AtomicU64::new(0x3f847ae147ae147b); // 0.01
static INITIAL_SIZE: AtomicU64 = AtomicU64::new(100);
static EXPANSION: AtomicU64 = AtomicU64::new(2);
static MAX_FILTER_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILTER_BYTES);

/// Default error rate for implicitly created filters.
pub fn error_rate() -> f64 {
    f64::from_bits(ERROR_RATE_BITS.load(Relaxed))
}

/// Default capacity for implicitly created filters.
pub fn initial_size() -> u64 {
    INITIAL_SIZE.load(Relaxed)
}

/// Default expansion; 0 means new filters are NONSCALING.
pub fn expansion() -> u32 {
    EXPANSION.load(Relaxed) as u32
}

/// Most bytes of bit storage one filter may take.
pub fn max_filter_bytes() -> u64 {
    MAX_FILTER_BYTES.load(Relaxed)
}

/// Applies the module load arguments, pairs of `NAME value`. Returns the error to log.
pub fn apply_load_args(argv: &[&[u8]]) -> Result<(), String> {
    if !argv.len().is_multiple_of(2) {
        return Err("module arguments come in pairs: NAME value".into());
    }
    for pair in argv.chunks(2) {
        let (name, value) = (pair[0], pair[1]);
        let text = String::from_utf8_lossy(value);
        let bad = |what: &str| {
            Err(format!(
                "{} must be {what}, got '{text}'",
                String::from_utf8_lossy(name)
            ))
        };
        if args::is(name, "ERROR_RATE") {
            match args::double(value) {
                Some(r) if r > 0.0 && r < 1.0 => ERROR_RATE_BITS.store(r.to_bits(), Relaxed),
                _ => return bad("a number between 0 and 1, exclusive"),
            }
        } else if args::is(name, "INITIAL_SIZE") {
            match args::integer(value) {
                Some(n) if n >= 1 => INITIAL_SIZE.store(n as u64, Relaxed),
                _ => return bad("an integer >= 1"),
            }
        } else if args::is(name, "EXPANSION") {
            match args::integer(value) {
                Some(n) if (0..=i64::from(u32::MAX)).contains(&n) => {
                    EXPANSION.store(n as u64, Relaxed)
                }
                _ => return bad("an integer >= 0 (0 means NONSCALING)"),
            }
        } else if args::is(name, "MAX_FILTER_BYTES") {
            match args::integer(value) {
                Some(n) if n >= 64 => MAX_FILTER_BYTES.store(n as u64, Relaxed),
                _ => return bad("an integer >= 64"),
            }
        } else {
            return Err(format!(
                "unknown module argument '{}'",
                String::from_utf8_lossy(name)
            ));
        }
    }
    Ok(())
}
