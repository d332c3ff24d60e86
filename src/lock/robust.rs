//! The robust acquisition of a lock (the Str queue's): the tag store, the
//! slow path that watches a stuck holder and takes the lock over from a
//! dead one, and its sleeps (see the lock's module docs, "Crash
//! takeover").

use super::identity::{current_tag, TAG_CACHE};
use super::liveness::{boot_ticks, holder_is_dead, impossible_word, not_a_holder};
use super::IMPOSTOR_NS;
use super::{owner_pid, spin, try_take, Acquired, Lock, LockFail, LockGuard, Sleeper};
use super::{PID_MASK, POLL_NS};
use crate::futex::{self, Deadline, WaitResult};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use std::sync::atomic::Ordering as StdOrdering;

impl<'a> LockGuard<'a> {
    /// Take the lock as this process, taking it over from a dead holder
    /// (see the lock's module docs), waiting at most until `deadline()`
    /// (computed only when the lock is found held). `tag` is
    /// the owner-tag word next to the lock word. With `interruptible`, a
    /// signal that interrupts a sleep ends the wait with
    /// [`LockFail::Interrupted`]; otherwise the wait goes on.
    ///
    /// # Errors
    /// [`LockFail::TimedOut`] when the deadline passed with a live holder;
    /// [`LockFail::Interrupted`] as above.
    #[inline]
    pub fn acquire_robust(
        lock: &'a Lock,
        tag: &AtomicU64,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> Result<(Self, Acquired), LockFail> {
        // The tag carries the pid: one cached load gives both.
        let my_tag = current_tag();
        Self::acquire_robust_as(
            lock,
            tag,
            (my_tag >> 32) as u32,
            my_tag,
            deadline,
            interruptible,
        )
    }

    /// One attempt of [`acquire_robust`](Self::acquire_robust) for a free
    /// lock: the CAS and the tag store, nothing else. `None` when the lock
    /// is held, or before this process has cached its owner tag (then call
    /// `acquire_robust`, which fills the cache and waits if it must). No
    /// call, so a caller's fast path stays free of them.
    #[inline(always)]
    pub fn try_acquire_robust(lock: &'a Lock, tag: &AtomicU64) -> Option<Self> {
        Self::try_acquire_robust_tagged(lock, tag, TAG_CACHE.load(StdOrdering::Relaxed))
    }

    /// [`try_acquire_robust`](Self::try_acquire_robust) as the owner tag
    /// `my_tag` (0: none cached yet), whose pid must be a lock word as it
    /// stands: the loom models run several "processes" as threads of one.
    #[inline(always)]
    pub(crate) fn try_acquire_robust_tagged(
        lock: &'a Lock,
        tag: &AtomicU64,
        my_tag: u64,
    ) -> Option<Self> {
        // A cached tag's pid is a lock word as it stands (checked to be in
        // 1..=PID_MASK when the cache was filled).
        let me = (my_tag >> 32) as u32;
        if my_tag == 0 {
            return None;
        }
        if !try_take(&lock.word, me) {
            return None;
        }
        // Relaxed: as in acquire_robust_as.
        tag.store(my_tag, Ordering::Relaxed);
        Some(LockGuard { lock })
    }

    /// [`acquire_robust`](Self::acquire_robust) recording `pid` (as in
    /// [`acquire_as`](Self::acquire_as)) and the tag `my_tag` as the
    /// owner: the loom models run several "processes" as threads of one.
    #[inline]
    pub(crate) fn acquire_robust_as(
        lock: &'a Lock,
        tag: &AtomicU64,
        pid: u32,
        my_tag: u64,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> Result<(Self, Acquired), LockFail> {
        let me = (pid & PID_MASK).max(1);
        let got = if try_take(&lock.word, me) {
            Acquired::default()
        } else {
            lock_slow_robust(lock, tag, me, &deadline(), interruptible)?
        };
        // Relaxed: read only by waiters judging a stuck holder, which is
        // a heuristic on top of the word itself (see the lock's module docs).
        tag.store(my_tag, Ordering::Relaxed);
        Ok((LockGuard { lock }, got))
    }
}

/// A point `ns` on CLOCK_MONOTONIC (nanoseconds), or `d` if that is earlier.
fn earlier(d: &Deadline, ns: u64) -> Deadline {
    Deadline {
        sec: (ns / 1_000_000_000).min(i64::MAX as u64) as i64,
        nsec: (ns % 1_000_000_000) as i64,
        forever: 0,
    }
    .earliest(*d)
}

/// The clock a waiter judges a holder stuck by: CLOCK_MONOTONIC in
/// nanoseconds. Under loom, where time is not modelled (a futex wait with a
/// deadline yields and reports a timeout, see futex.rs), every timed-out
/// wait counts as one poll interval, which keeps the model deterministic.
struct WatchClock {
    #[cfg(loom)]
    ns: u64,
}

impl WatchClock {
    fn new() -> Self {
        WatchClock {
            #[cfg(loom)]
            ns: 0,
        }
    }

    fn now(&self) -> u64 {
        #[cfg(not(loom))]
        {
            crate::clock::now_ns()
        }
        #[cfg(loom)]
        {
            self.ns
        }
    }

    /// After a futex wait that ended with `r`.
    fn slept(&mut self, r: WaitResult) {
        #[cfg(loom)]
        if r == WaitResult::TimedOut {
            self.ns += POLL_NS;
        }
        let _ = r;
    }
}

/// The word a waiter is watching: the lock word as it found it, when it
/// first saw it (boot ticks, for [`owner_is_dead`]; and monotonic ns),
/// and when it next asks whether that owner lives (monotonic ns).
struct Watch {
    word: u32,
    since: u64,
    first: u64,
    check_at: u64,
}

/// Whether the word `cur` is the one `w` watches and names no holder (a
/// dead one, or a word no locker wrote; `now`: the watch clock); if so,
/// take the lock over with one CAS `cur -> me` (only one waiter's CAS
/// from this exact value succeeds).
fn take_over(word: &AtomicU32, tag: &AtomicU64, cur: u32, me: u32, w: &Watch, now: u64) -> bool {
    cur != 0
        && cur == w.word
        && (impossible_word(cur)
            || holder_is_dead(owner_pid(cur), tag.load(Ordering::Relaxed), w.since)
            || (now.saturating_sub(w.first) >= IMPOSTOR_NS
                && not_a_holder(owner_pid(cur), tag.load(Ordering::Relaxed))))
        // SYNC POINT: SeqCst like the ordinary take; the dead holder's
        // stores are in memory already.
        && word
            .compare_exchange(cur, me, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
}

#[cold]
#[inline(never)]
fn lock_slow_robust(
    lock: &Lock,
    tag: &AtomicU64,
    me: u32,
    deadline: &Deadline,
    interruptible: bool,
) -> Result<Acquired, LockFail> {
    let word = &lock.word;
    let mut got = Acquired {
        contended: true,
        recovered: false,
    };
    if spin(word, me) {
        return Ok(got);
    }
    let mut sleeper = Sleeper::announce(&lock.sleepers);
    let mut clock = WatchClock::new();
    let mut watch = Watch {
        word: 0,
        since: 0,
        first: 0,
        check_at: 0,
    };
    // Before this call gives up (deadline, signal): take a free lock, or
    // ask once more whether the watched owner lives. A caller interrupted
    // by a steady stream of signals, or with a lock timeout shorter than a
    // poll interval, still takes a dead holder's lock over.
    let last_look = |got: &mut Acquired, watch: &Watch, now: u64| {
        let cur = word.load(Ordering::Relaxed);
        if cur == 0 {
            try_take(word, me)
        } else if take_over(word, tag, cur, me, watch, now) {
            got.recovered = true;
            true
        } else {
            false
        }
    };
    loop {
        let cur = word.load(Ordering::Relaxed);
        if cur == 0 {
            if try_take(word, me) {
                return Ok(got);
            }
            continue;
        }
        let now = clock.now();
        if cur != watch.word {
            watch = Watch {
                word: cur,
                since: boot_ticks(),
                first: now,
                check_at: now.saturating_add(POLL_NS),
            };
        } else if now >= watch.check_at {
            // The same owner for a poll interval of this waiter's clock,
            // however often its sleeps were cut short: ask, then again
            // every interval while it lives (a stopped holder, say).
            watch.check_at = now.saturating_add(POLL_NS);
            if take_over(word, tag, cur, me, &watch, now) {
                got.recovered = true;
                return Ok(got);
            }
            continue;
        }
        if deadline.expired() {
            return if last_look(&mut got, &watch, now) {
                Ok(got)
            } else {
                Err(LockFail::TimedOut)
            };
        }
        if sleeper.recount() {
            continue;
        }
        let until = sleeper.until(earlier(deadline, watch.check_at));
        let r = robust_sleep(word, cur, &until, deadline, interruptible);
        clock.slept(r);
        let fail = match r {
            WaitResult::Interrupted if interruptible => LockFail::Interrupted,
            WaitResult::TimedOut if deadline.expired() => LockFail::TimedOut,
            _ => continue,
        };
        return if last_look(&mut got, &watch, clock.now()) {
            Ok(got)
        } else {
            Err(fail)
        };
    }
}

/// One sleep of a robust locker on `word` while it reads `cur`, until
/// `until`.
///
/// Under loom, a wait without deadline (and not interruptible) instead
/// blocks until a wake picks it or the lock word names a holder declared
/// dead (`model_deaths`): only then does a real sleeper depend on its poll
/// interval, after which it asks (the model reports `TimedOut`, and its
/// clock moves one interval on). A live holder's unlock must wake it: a
/// lost wake-up deadlocks the model instead of passing as an early
/// timeout.
#[inline]
fn robust_sleep(
    word: &AtomicU32,
    cur: u32,
    until: &Deadline,
    deadline: &Deadline,
    interruptible: bool,
) -> WaitResult {
    #[cfg(loom)]
    if deadline.forever != 0 && !interruptible {
        return futex::wait_unless(word, cur, || {
            let now = word.load(Ordering::SeqCst);
            now != 0 && super::model_deaths::is_dead(owner_pid(now))
        });
    }
    let _ = deadline;
    if interruptible {
        futex::wait_interruptible(word, cur, until)
    } else {
        futex::wait(word, cur, until)
    }
}
