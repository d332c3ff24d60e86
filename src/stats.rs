//! [`Stats`]: the counters and gauges a queue reports, shared by every
//! queue type and the C ABI (`DqsStats`).

// For the doc links only: the queues depend on this module, not the
// other way round.
#[cfg(doc)]
use crate::{IntQueue, StrQueue};

/// A snapshot of a queue's counters and gauges (what Perl's `stats` shows).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Items in the queue.
    pub size: u64,
    /// Slot count.
    pub capacity: u64,
    /// Bytes mapped (header + slots + arena).
    pub mmap_size: u64,
    /// Successful pushes.
    pub push_ok: u64,
    /// Successful pops. Items an [`IntQueue::clear`] removes count as
    /// pops (so `push_ok - pop_ok` is the size); those a
    /// [`StrQueue::clear`] removes do not.
    pub pop_ok: u64,
    /// Pushes that found the queue full (and waits that timed out full).
    pub push_full: u64,
    /// Pops that found the queue empty (and waits that timed out empty).
    pub pop_empty: u64,
    /// Crash recoveries performed.
    pub recoveries: u64,
    /// Producers blocked now.
    pub push_waiters: u64,
    /// Consumers blocked now.
    pub pop_waiters: u64,
    /// Str: arena bytes.
    pub arena_cap: u64,
    /// Str: arena bytes in use.
    pub arena_used: u64,
    /// Str: lock acquisitions.
    pub lock_acquired: u64,
    /// Str: acquisitions that found the lock held.
    pub lock_contended: u64,
    /// Str: items stored compressed, ever (see `StrQueue::set_compress`).
    pub compressed: u64,
    /// Str: arena bytes those items did not take, ever: the sum of each
    /// one's length rounded up to 8 minus its compressed length rounded up
    /// to 8.
    pub compressed_saved: u64,
}
