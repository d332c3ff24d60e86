//! The calls every variant answers alike: capacity, size, clear, stats.

use super::DqsQueue;
use crate::stats::Stats;

/// Slot count: the capacity after rounding (or the one stored in the file).
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_capacity(q: *const DqsQueue) -> u64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    q.queue.capacity()
}

/// Items in the queue: a snapshot, exact only while nobody else works.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_size(q: *const DqsQueue) -> u64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    q.queue.len()
}

/// 1 when every slot is taken, else 0 (a snapshot): items back from
/// leases that wait outside the slots count in [`dqs_size`] but take no
/// slot.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_is_full(q: *const DqsQueue) -> std::ffi::c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    std::ffi::c_int::from(q.queue.is_full())
}

/// Remove every item and wake every blocked producer (Str: and
/// consumer); returns how many items were removed (they do not count as
/// pops). On an integer queue a push racing with the clear may survive it.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_clear(q: *const DqsQueue) -> u64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    q.queue.clear()
}

/// Fill `*out` (caller-owned) with the queue's counters and gauges, read
/// without locking: exact once everybody is quiescent.
///
/// # Safety
/// Live handle; `out` valid for writing.
#[no_mangle]
pub unsafe extern "C" fn dqs_stats(q: *const DqsQueue, out: *mut Stats) {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let s = q.queue.stats();
    // SAFETY: the caller passes a writable Stats.
    unsafe { out.write(s) };
}
