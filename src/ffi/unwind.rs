//! The one rule for every function Redis calls (commands, data-type callbacks, config
//! callbacks): no panic unwinds into Redis's C code, which would abort the server.

use rsbloom_core::memory::OutOfMemory;

/// Logs a copy that ended because the allocator refused its memory
/// ([`OutOfMemory::refuse_copy`]) as one line: a failed COPY, nothing to debug, and a
/// backtrace (with `RUST_BACKTRACE` set) would take memory to symbolise just when there is
/// none (a growing filter's COPY under `prlimit --as`: the server then aborted in Redis's next
/// allocation). Every other panic goes to the default hook. Installed at load; the hook is
/// this module's alone (its own copy of the standard library).
pub fn log_refused_copies() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        match info.payload().downcast_ref::<OutOfMemory>() {
            Some(refused) => eprintln!(
                "rsbloom: COPY failed: the allocator refused {} bytes for the copy",
                refused.bytes
            ),
            None => default(info),
        }
    }));
}

/// Runs `f`, turning a panic into `fallback`.
pub fn no_unwind<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
}
