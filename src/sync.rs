//! The one atomics facade of the crate.
//!
//! Every atomic the queues touch comes from here, so that a `--cfg loom`
//! build swaps them all for loom's model-checked versions at once.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64};

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64};

pub(crate) use std::sync::atomic::Ordering;

/// Hint to the CPU that we are spinning; a loom yield under the model.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
