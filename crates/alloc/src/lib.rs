//! The allocator of the `tauguard` binary and of the benches that measure it: mimalloc, set
//! never to return freed memory to the operating system.
//!
//! Why mimalloc: thousands of simulations in flight allocate small messages from every
//! worker; glibc's allocator spent a third of the harness's CPU on that (see the concurrency
//! bench in `crates/orchestrator/benches`).
//!
//! Why no purging: simulations start and finish continuously, so pages empty and fill again
//! all the time. mimalloc returns an empty page to the OS after a delay and the next
//! simulation faults it back in, zeroed by the kernel; at 1,000 simulations in flight that
//! cycle cost about a tenth of the harness's CPU. Keeping freed memory holds the process at
//! its peak footprint, a few megabytes per thousand simulations.

/// The global allocator type: declare it with `#[global_allocator]` in a binary, then call
/// [`keep_freed_memory`] first thing in `main`.
pub use mimalloc::MiMalloc as Allocator;

/// mimalloc's `mi_option_purge_delay` (milliseconds before an empty page is returned to the
/// OS; -1: never). `libmimalloc-sys` does not name it: it is position 15 of `mi_option_e`
/// (`mimalloc.h`); the test below checks it holds the option's documented default.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never return freed memory to the OS (see the crate documentation).
pub fn keep_freed_memory() {
    // SAFETY: `mi_option_set` stores an integer in mimalloc's option table, which any thread
    // may do at any time; the option is read afresh at each purge decision.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, -1)
    }
}

/// The purge delay in force, in milliseconds (-1: memory is never returned).
pub fn purge_delay_ms() -> std::ffi::c_long {
    // SAFETY: `mi_option_get` reads an integer from mimalloc's option table.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_get(PURGE_DELAY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeping_freed_memory_turns_purging_off() {
        // mimalloc 3's default purge delay is 1,000 ms: seeing it confirms the option's
        // position (unless the environment overrides it).
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(purge_delay_ms(), 1000);
        }
        keep_freed_memory();
        assert_eq!(purge_delay_ms(), -1);
    }
}
