//! The one atomics facade of the crate.
//!
//! Every atomic the queues touch comes from here, and so do the fences and
//! the ways a thread yields or backs off, so that a `--cfg loom` build
//! swaps them all for loom's model-checked versions at once.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU32, AtomicU64};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64};

pub(crate) use std::sync::atomic::Ordering;

/// Whether this is a loom build, whose atomics are larger than the
/// shared-memory words they model: compile-time layout checks of types
/// made of them hold only when this is false.
pub(crate) const LOOM: bool = cfg!(loom);

/// Hint to the CPU that we are spinning; a loom yield under the model.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Let other threads run; a loom yield under the model.
pub(crate) fn yield_now() {
    #[cfg(not(loom))]
    std::thread::yield_now();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Sleep `us` microseconds, the longest back-off; a loom yield under the
/// model (time is not modelled).
pub(crate) fn sleep_micros(us: u64) {
    #[cfg(not(loom))]
    std::thread::sleep(std::time::Duration::from_micros(us));
    #[cfg(loom)]
    {
        let _ = us;
        loom::thread::yield_now();
    }
}

/// The rounds of a spin-wait that spins `n` rounds: one under loom, where
/// each round is a scheduling point, to keep the state space small.
pub(crate) const fn spin_rounds(n: u32) -> u32 {
    if cfg!(loom) {
        1
    } else {
        n
    }
}

// From <linux/membarrier.h>.
const MEMBARRIER_CMD_GLOBAL_EXPEDITED: libc::c_int = 1 << 1;
const MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED: libc::c_int = 1 << 2;

/// Register this process for [`membarrier_global`]; whether the kernel
/// did. Under loom (no kernel) false: a model process is never
/// registered, so it keeps its fences.
pub(crate) fn membarrier_register() -> bool {
    !cfg!(loom) && membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED)
}

/// A full barrier on every CPU that runs a thread of a registered
/// process (`MEMBARRIER_CMD_GLOBAL_EXPEDITED`); whether the kernel did
/// it. Under loom true: with nobody registered, the SeqCst fences on
/// both sides are what the pair amounts to.
pub(crate) fn membarrier_global() -> bool {
    cfg!(loom) || membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)
}

fn membarrier(cmd: libc::c_int) -> bool {
    // SAFETY: membarrier takes two integers and touches no memory of ours.
    unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0, 0) == 0 }
}
