//! Taking the lock of a `StrQueue`: at once when it is free, else waiting
//! up to the handle's lock timeout (or a blocking call's deadline) and
//! taking it over from a dead holder, counted either way. Also the two
//! sides that wait (consumers, producers) and the miss counters.

use super::{set_errno, StrQueue};
use crate::futex::Deadline;
use crate::lock::{LockFail, LockGuard};
use crate::sync::Ordering;
use crate::testpoint::KillPoint;
use crate::wait::{Side, Waited};

/// A wait result whose attempt may have failed to take the lock.
pub(super) fn flatten<R>(w: Waited<std::result::Result<R, LockFail>>) -> Waited<R> {
    match w {
        Waited::Done(Ok(r)) => Waited::Done(r),
        Waited::Done(Err(LockFail::TimedOut)) | Waited::TimedOut => Waited::TimedOut,
        Waited::Done(Err(LockFail::Interrupted)) | Waited::Interrupted => Waited::Interrupted,
    }
}

impl StrQueue {
    /// When a non-blocking call that found the lock held gives up.
    pub(super) fn lock_deadline(&self) -> Deadline {
        match self.lock_timeout_ns.load(Ordering::Relaxed) {
            u64::MAX => Deadline::FOREVER,
            ns => Deadline::after_secs(ns as f64 / 1e9),
        }
    }

    /// After a non-blocking call found the queue full or empty: with a
    /// lock timeout set, `errno` 0 tells this apart from a lock timeout.
    #[inline]
    pub(super) fn missed(&self) {
        if self.lock_timeout_ns.load(Ordering::Relaxed) != u64::MAX {
            set_errno(0);
        }
    }

    /// Take the lock (taking it over from a dead holder), waiting until
    /// the deadline `deadline()` computes (only when the lock is found
    /// held); count it.
    #[inline(always)]
    pub(super) fn lock_guard<const H: bool>(
        &self,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> std::result::Result<LockGuard<'_>, LockFail> {
        let h = self.header();
        let guard = match LockGuard::try_acquire_robust(&h.lock, &h.lock_owner) {
            Some(g) => g,
            None => self.lock_held(deadline(), interruptible)?,
        };
        self.took_lock::<H>();
        Ok(guard)
    }

    /// The lock if it is free now (one CAS), counted; `None` when it is
    /// held (or this process has not cached its owner tag yet), for the
    /// general path to wait for it.
    #[inline(always)]
    pub(super) fn try_lock<const H: bool>(&self) -> Option<LockGuard<'_>> {
        let h = self.header();
        let guard = LockGuard::try_acquire_robust(&h.lock, &h.lock_owner)?;
        self.took_lock::<H>();
        Some(guard)
    }

    /// Right after taking the lock: the test hooks, and the count.
    #[inline(always)]
    fn took_lock<const H: bool>(&self) {
        if H {
            self.kill_point.hit(KillPoint::LockHeld);
            self.kill_point.hit(KillPoint::LockStop);
        }
        // Counters only written under the lock: load + store is exact.
        let h = self.header();
        let v = h.lock_acquired.load(Ordering::Relaxed);
        h.lock_acquired.store(v.wrapping_add(1), Ordering::Relaxed);
    }

    /// The lock for a non-blocking call, waiting at most the handle's lock
    /// timeout. `None` (and `errno` = `ETIMEDOUT`) when that passed with
    /// the lock still held by a live process.
    #[inline(always)]
    pub(super) fn guard_now<const H: bool>(&self) -> Option<LockGuard<'_>> {
        match self.lock_guard::<H>(|| self.lock_deadline(), false) {
            Ok(g) => Some(g),
            Err(_) => {
                set_errno(libc::ETIMEDOUT);
                None
            }
        }
    }

    /// [`StrQueue::lock_until`] when the lock was found held: wait for it
    /// (taking it over from a dead holder) and count how it was taken.
    #[cold]
    #[inline(never)]
    fn lock_held(
        &self,
        deadline: Deadline,
        interruptible: bool,
    ) -> std::result::Result<LockGuard<'_>, LockFail> {
        let h = self.header();
        let (guard, got) =
            LockGuard::acquire_robust(&h.lock, &h.lock_owner, || deadline, interruptible)?;
        // Only written under the lock: load + store is exact.
        if got.contended {
            let v = h.lock_contended.load(Ordering::Relaxed);
            h.lock_contended.store(v.wrapping_add(1), Ordering::Relaxed);
        }
        if got.recovered {
            h.str_recoveries().fetch_add(1, Ordering::Relaxed);
            // HOOK(lease): settle a dead holder's lease records first.
            self.lease_recover();
        }
        Ok(guard)
    }

    #[inline(always)]
    pub(super) fn consumers(&self) -> Side<'_> {
        let h = self.header();
        Side {
            waiters: &h.pop_waiters,
            futex: &h.pop_futex,
        }
    }

    #[inline(always)]
    pub(super) fn producers(&self) -> Side<'_> {
        let h = self.header();
        Side {
            waiters: &h.push_waiters,
            futex: &h.push_futex,
        }
    }

    /// After items left: wake every blocked producer (see "Waiting" in the
    /// module docs for why not just one). Costs one load when nobody waits.
    #[inline]
    pub(super) fn wake_producers(&self) {
        self.producers().wake(u32::MAX);
    }

    pub(super) fn count_full(&self) {
        self.header()
            .str_push_full()
            .fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn count_empty(&self) {
        self.header()
            .str_pop_empty()
            .fetch_add(1, Ordering::Relaxed);
    }
}
