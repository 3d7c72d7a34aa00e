//! The one rule for every function Redis calls (commands, data-type callbacks, config
//! callbacks): no panic unwinds into Redis's C code, which would abort the server.

/// Runs `f`, turning a panic into `fallback`.
pub fn no_unwind<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
}
