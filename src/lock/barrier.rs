//! The two halves of the asymmetric barrier between an unlock and a
//! sleeper (see the lock's module docs).

use crate::sync::fence;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process is registered for the sleepers' `membarrier`,
/// so that its unlocks need no fence. Cleared in forked children.
pub(super) static FENCELESS: AtomicBool = AtomicBool::new(false);

// From <linux/membarrier.h>.
#[cfg(not(loom))]
const MEMBARRIER_CMD_GLOBAL_EXPEDITED: libc::c_int = 1 << 1;
#[cfg(not(loom))]
const MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED: libc::c_int = 1 << 2;

/// Register this process for the sleepers' barrier; its unlocks drop
/// the fence if that worked.
pub(super) fn register() {
    #[cfg(not(loom))]
    {
        // SAFETY: membarrier takes two integers and touches no memory
        // of ours.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED,
                0,
                0,
            )
        };
        if rc == 0 {
            FENCELESS.store(true, Ordering::Relaxed);
        }
    }
}

/// The unlocking side, between its store of the word and its read of
/// the count: a compiler barrier in a registered process, else a fence.
#[inline(always)]
pub(super) fn light() {
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
pub(super) fn heavy() -> bool {
    fence(Ordering::SeqCst);
    #[cfg(not(loom))]
    {
        // SAFETY: as in `register`.
        unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0 }
    }
    #[cfg(loom)]
    {
        true
    }
}
