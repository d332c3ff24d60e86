//! Taking the locks of a `StrQueue`, the back lock (pushes at the back)
//! and the front lock (pops at the front): at once when free, else
//! waiting up to the handle's lock timeout (or a blocking call's
//! deadline) and taking a lock over from a dead holder, counted either
//! way. An operation that needs both takes the back lock first. Also the
//! two sides that wait (consumers, producers) and the miss counters.

use super::state::Locked;
use super::{set_errno, StrQueue};
use crate::futex::Deadline;
use crate::lock::{LockFail, LockGuard};
use crate::sync::Ordering;
use crate::testpoint::KillPoint;
use crate::wait::{Side, Waited};

/// How many times an operation that needs both locks lets the back lock
/// go to wait for the front lock alone before it waits for the front lock
/// holding the back one (see [`StrQueue::lock_both`]).
const BOTH_ROUNDS: u32 = 4;

/// A wait result whose attempt may have failed to take the lock.
pub(super) fn flatten<R>(w: Waited<std::result::Result<R, LockFail>>) -> Waited<R> {
    match w {
        Waited::Done(Ok(r)) => Waited::Done(r),
        Waited::Done(Err(LockFail::TimedOut)) | Waited::TimedOut => Waited::TimedOut,
        Waited::Done(Err(LockFail::Interrupted)) | Waited::Interrupted => Waited::Interrupted,
    }
}

/// Which locks an operation takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Ends {
    /// The back lock: pushes at the back.
    Back,
    /// The front lock: pops at the front, peek.
    Front,
    /// Both, the back first: the other ends, clear, leases.
    Both,
}

impl Ends {
    /// The locks a push (at the front with `front`) takes.
    pub(super) fn push(front: bool) -> Ends {
        if front {
            Ends::Both
        } else {
            Ends::Back
        }
    }

    /// The locks a pop (at the back with `back`) takes.
    pub(super) fn pop(back: bool) -> Ends {
        if back {
            Ends::Both
        } else {
            Ends::Front
        }
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

    /// Take the lock of one side (the back with `back`), taking it over
    /// from a dead holder, waiting until the deadline `deadline()`
    /// computes (only when the lock is found held); count it.
    #[inline(always)]
    pub(super) fn lock_side<const H: bool>(
        &self,
        back: bool,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> std::result::Result<LockGuard<'_>, LockFail> {
        let s = self.side(back);
        let guard = match LockGuard::try_acquire_robust(&s.lock, &s.owner) {
            Some(g) => g,
            None => self.lock_held(back, deadline(), interruptible)?,
        };
        self.took_lock::<H>(back);
        Ok(guard)
    }

    /// The lock of one side if it is free now (one CAS), counted; `None`
    /// when it is held (or this process has not cached its owner tag
    /// yet), for the general path to wait for it.
    #[inline(always)]
    pub(super) fn try_lock<const H: bool>(&self, back: bool) -> Option<LockGuard<'_>> {
        let s = self.side(back);
        let guard = LockGuard::try_acquire_robust(&s.lock, &s.owner)?;
        self.took_lock::<H>(back);
        self.hold_hooks::<H>();
        Some(guard)
    }

    /// Once an operation holds every lock it takes: the test hooks that
    /// kill or stop the process there.
    #[inline(always)]
    fn hold_hooks<const H: bool>(&self) {
        if H {
            self.kill_point.hit(KillPoint::LockHeld);
            self.kill_point.hit(KillPoint::LockStop);
        }
    }

    /// Right after taking a lock: count it.
    #[inline(always)]
    fn took_lock<const H: bool>(&self, back: bool) {
        // Only written under this lock: load + store is exact.
        let (acquired, _) = self.header().str_lock_counters(back);
        let v = acquired.load(Ordering::Relaxed);
        acquired.store(v.wrapping_add(1), Ordering::Relaxed);
    }

    /// The locks `ends`, waiting until `deadline` (the back first), with
    /// the state loaded.
    #[inline(always)]
    pub(super) fn lock_until<const H: bool>(
        &self,
        ends: Ends,
        deadline: impl Fn() -> Deadline,
        interruptible: bool,
    ) -> std::result::Result<Locked<'_, H>, LockFail> {
        let (gb, gf) = match ends {
            Ends::Back => (
                Some(self.lock_side::<H>(true, &deadline, interruptible)?),
                None,
            ),
            Ends::Front => (
                None,
                Some(self.lock_side::<H>(false, &deadline, interruptible)?),
            ),
            Ends::Both => {
                let (gb, gf) = self.lock_both::<H>(&deadline, interruptible)?;
                (Some(gb), Some(gf))
            }
        };
        self.hold_hooks::<H>();
        Ok(Locked::new(self, gb, gf))
    }

    /// Both locks, the back first, without waiting for the front lock
    /// while holding the back one (up to [`BOTH_ROUNDS`] times): with the
    /// back lock held, the front lock is only tried; when it is held, the
    /// back lock is let go, the front lock waited for (taken over from a
    /// dead holder) and let go, and it all starts again. So a front
    /// holder that is stopped (SIGSTOP, a debugger) or slow holds up the
    /// call, not every producer behind it. After that many rounds (the
    /// front taken again by others each time) the front lock is waited
    /// for with the back one held, as the lock order allows. No lock is
    /// ever waited for while the front one is held, so the order stays
    /// back, then front; nothing is changed before both are held, so a
    /// round that lets go commits nothing. Each lock taken is counted.
    #[inline(never)]
    fn lock_both<const H: bool>(
        &self,
        deadline: &impl Fn() -> Deadline,
        interruptible: bool,
    ) -> std::result::Result<(LockGuard<'_>, LockGuard<'_>), LockFail> {
        for _ in 0..BOTH_ROUNDS {
            let gb = self.lock_side::<H>(true, deadline, interruptible)?;
            let s = self.side(false);
            if let Some(gf) = LockGuard::try_acquire_robust(&s.lock, &s.owner) {
                self.took_lock::<H>(false);
                return Ok((gb, gf));
            }
            drop(gb);
            drop(self.lock_side::<H>(false, deadline, interruptible)?);
        }
        let gb = self.lock_side::<H>(true, deadline, interruptible)?;
        // A failure drops `gb` (nothing changed: no commit).
        let gf = self.lock_side::<H>(false, deadline, interruptible)?;
        Ok((gb, gf))
    }

    /// [`StrQueue::lock_until`] for a non-blocking call, waiting at most
    /// the handle's lock timeout. `None` (and `errno` = `ETIMEDOUT`) when
    /// that passed with a lock still held by a live process.
    #[inline(always)]
    pub(super) fn locked<const H: bool>(&self, ends: Ends) -> Option<Locked<'_, H>> {
        let d = std::cell::OnceCell::new();
        match self.lock_until::<H>(ends, || *d.get_or_init(|| self.lock_deadline()), false) {
            Ok(l) => Some(l),
            Err(_) => {
                set_errno(libc::ETIMEDOUT);
                None
            }
        }
    }

    /// [`StrQueue::lock_side`] when the lock was found held: wait for it
    /// (taking it over from a dead holder) and count how it was taken.
    #[cold]
    #[inline(never)]
    fn lock_held(
        &self,
        back: bool,
        deadline: Deadline,
        interruptible: bool,
    ) -> std::result::Result<LockGuard<'_>, LockFail> {
        let s = self.side(back);
        let (guard, got) =
            LockGuard::acquire_robust(&s.lock, &s.owner, || deadline, interruptible)?;
        // Only written under this lock: load + store is exact.
        if got.contended {
            let (_, contended) = self.header().str_lock_counters(back);
            let v = contended.load(Ordering::Relaxed);
            contended.store(v.wrapping_add(1), Ordering::Relaxed);
        }
        if got.recovered {
            // Nothing to repair in the queue state: each side's committed
            // state is whole (see "Crash safety").
            self.header().str_recoveries.fetch_add(1, Ordering::Relaxed);
            if !back {
                // HOOK(lease): the lease table is guarded by the front
                // lock (every lease operation holds it): settle a dead
                // holder's lease records first.
                self.lease_recover();
            }
        }
        Ok(guard)
    }

    /// Before a blocking call sleeps for want of what the other side
    /// (the back with `back`) gives: make sure its last change is seen.
    /// Its lock is free (a SeqCst look), or it is taken and given back at
    /// once (taking over a dead holder), so that every operation of that
    /// side has either released its lock before this (and the caller's
    /// next look at the side word sees it) or takes it after (and then
    /// sees the caller's announcement as a waiter). See "Waiting" in the
    /// module docs. `Err` when the deadline passed or a signal came.
    pub(super) fn settle_with(
        &self,
        back: bool,
        deadline: &Deadline,
    ) -> std::result::Result<(), LockFail> {
        // SYNC POINT: SeqCst, in the total order with the caller's SeqCst
        // announcement and the other side's SeqCst lock CAS and waiter
        // check.
        if self.side(back).lock.word.load(Ordering::SeqCst) == 0 {
            return Ok(());
        }
        self.lock_side::<true>(back, || *deadline, true).map(drop)
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
