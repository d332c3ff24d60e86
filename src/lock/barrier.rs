//! The two halves of the asymmetric barrier between an unlock and a
//! sleeper (see the lock's module docs). The `membarrier` calls, and what
//! stands for them under loom, are in sync.rs.

use crate::sync::{fence, membarrier_global, membarrier_register};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process is registered for the sleepers' `membarrier`,
/// so that its unlocks need no fence. Cleared in forked children.
pub(super) static FENCELESS: AtomicBool = AtomicBool::new(false);

/// Register this process for the sleepers' barrier; its unlocks drop
/// the fence if that worked.
pub(super) fn register() {
    if membarrier_register() {
        FENCELESS.store(true, Ordering::Relaxed);
    }
}

/// The unlocking side, between its store of the word and its read of
/// the count: a compiler barrier in a registered process, else a fence.
#[inline(always)]
pub(crate) fn light() {
    // (Never registered under loom: there the fence always.)
    if FENCELESS.load(Ordering::Relaxed) {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The sleeper's side, between raising the count and reading the word:
/// a fence here and one on every CPU running a registered process.
/// False when the kernel refused the latter (then a registered
/// holder's read may miss the count).
pub(crate) fn heavy() -> bool {
    #[cfg(all(test, not(loom)))]
    HEAVY_CALLS.with(|c| c.set(c.get() + 1));
    fence(Ordering::SeqCst);
    membarrier_global()
}

#[cfg(all(test, not(loom)))]
thread_local! {
    /// How many times this thread issued the heavy half (tests: which
    /// waits sleep fenced).
    pub(crate) static HEAVY_CALLS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}
