//! A cross-process mutex on one 32-bit futex word in shared memory.
//!
//! The algorithm is the three-state futex mutex of Ulrich Drepper's
//! "Futexes Are Tricky" (mutex #3: free / locked / locked-with-waiters),
//! with the owner's process id stored in the word so that a later crash
//! takeover can tell whether the holder still lives:
//!
//! ```text
//! 0                        free
//! pid                      held by process `pid`; nobody sleeps on the word
//! pid | CONTENDED          held; somebody may sleep on the word
//! ```
//!
//! `pid` is the locker's `getpid()` at lock time (see [`current_pid`]), so a
//! child that inherited its parent's handle across `fork` locks as itself.
//! Linux pids are below 2^22, well clear of the `CONTENDED` (0x8000_0000) bit.
//!
//! Locking is one SeqCst CAS `0 -> pid` when the word is free. Otherwise the
//! locker spins about `SPIN` rounds (the queue's critical sections are a
//! few loads, stores and one `memcpy`, usually shorter than a futex round
//! trip), then marks the word contended and sleeps on it. A sleeper that
//! wakes takes the lock *with* the contended bit, because it cannot know
//! whether others still sleep (Drepper's conservative rule). Unlocking swaps
//! in 0 and calls `FUTEX_WAKE` only when the old word had the bit, so an
//! uncontended lock/unlock pair makes no system call.
//!
//! Crash takeover (a holder killed while in the critical section) is not
//! done here yet; [`owner_pid`] is the hook it will use.
//!
//! Everything takes a plain `&AtomicU32`, so the lock also works on a heap
//! word (tests, the loom model).

use std::sync::atomic::{AtomicBool, AtomicU32 as StdAtomicU32, Ordering as StdOrdering};
use std::sync::Once;

use crate::futex::{self, Deadline};
use crate::sync::{spin_hint, AtomicU32, Ordering};

/// Set in the lock word while somebody may be sleeping on it.
pub(crate) const CONTENDED: u32 = 0x8000_0000;
/// The owner-pid bits of the lock word.
pub(crate) const PID_MASK: u32 = !CONTENDED;

/// Spin rounds before sleeping. Under loom each round is a scheduling point,
/// so the model spins once to keep the state space small.
#[cfg(not(loom))]
const SPIN: u32 = 100;
#[cfg(loom)]
const SPIN: u32 = 1;

/// The owner pid recorded in a lock word (0 when free).
#[inline]
pub const fn owner_pid(word: u32) -> u32 {
    word & PID_MASK
}

/// Whether the lock word says somebody may be sleeping on it.
#[inline]
pub const fn is_contended(word: u32) -> bool {
    word & CONTENDED != 0
}

/// This process's id, as `getpid()` returns it now.
///
/// `getpid()` is a real system call on current glibc (about 100 ns measured
/// in this project's container), paid twice per push/pop pair if called on
/// every lock. So the value is cached process-wide, and a
/// `pthread_atfork` child handler clears the cache in every child created
/// with `fork()`: the cache never outlives the process that filled it, and
/// the result always equals `getpid()` at the time of the call.
#[inline]
pub fn current_pid() -> u32 {
    let p = PID_CACHE.load(StdOrdering::Relaxed);
    if p != 0 {
        return p;
    }
    current_pid_slow()
}

static PID_CACHE: StdAtomicU32 = StdAtomicU32::new(0);
static NO_CACHE: AtomicBool = AtomicBool::new(false);
static ATFORK: Once = Once::new();

extern "C" fn forget_pid_in_child() {
    // Runs in the child right after fork(), single-threaded; an atomic
    // store is async-signal-safe.
    PID_CACHE.store(0, StdOrdering::Relaxed);
}

#[cold]
fn current_pid_slow() -> u32 {
    ATFORK.call_once(|| {
        // SAFETY: registers a handler that only does an atomic store.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(forget_pid_in_child)) };
        if rc != 0 {
            // No handler (ENOMEM): a cached pid could leak into a child,
            // so never cache and ask the kernel every time.
            NO_CACHE.store(true, StdOrdering::Relaxed);
        }
    });
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    if !NO_CACHE.load(StdOrdering::Relaxed) {
        PID_CACHE.store(pid, StdOrdering::Relaxed);
    }
    pid
}

/// Proof that the lock is held; unlocks when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LockGuard<'a> {
    word: &'a AtomicU32,
}

impl<'a> LockGuard<'a> {
    /// Take the lock as this process ([`current_pid`]). Returns the guard
    /// and whether the lock was found held (contended).
    #[inline]
    pub fn acquire(word: &'a AtomicU32) -> (Self, bool) {
        Self::acquire_as(word, current_pid())
    }

    /// Take the lock recording `pid` as the owner (its low 31 bits; 0 is
    /// recorded as 1, since 0 means free). Returns the guard and whether
    /// the lock was found held.
    #[inline]
    pub fn acquire_as(word: &'a AtomicU32, pid: u32) -> (Self, bool) {
        let me = (pid & PID_MASK).max(1);
        // SYNC POINT: the SeqCst CAS that takes the lock acquires what the
        // previous holder released with its unlocking swap (the protected
        // header fields, slots and arena bytes). Being SeqCst it also sits
        // in the single total order with the waiters' SeqCst announcement
        // (see wait.rs and strq.rs).
        let contended = word
            .compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
            .is_err();
        if contended {
            lock_slow(word, me);
        }
        (LockGuard { word }, contended)
    }
}

#[cold]
#[inline(never)]
fn lock_slow(word: &AtomicU32, me: u32) {
    for _ in 0..SPIN {
        spin_hint();
        if word.load(Ordering::Relaxed) == 0
            && word
                .compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
    }
    loop {
        let cur = word.load(Ordering::Relaxed);
        if cur == 0 {
            // Take it marked contended: other sleepers may remain, and our
            // unlock must wake one of them.
            if word
                .compare_exchange(0, me | CONTENDED, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
            continue;
        }
        let marked = cur | CONTENDED;
        if cur != marked
            && word
                .compare_exchange(cur, marked, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            continue;
        }
        // Sleep while the word still reads `marked`. EINTR and spurious
        // wake-ups just look again: the holder's critical section is short
        // and contains no blocking call.
        futex::wait(word, marked, &Deadline::FOREVER);
    }
}

impl Drop for LockGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SYNC POINT: Release publishes everything written under the lock
        // to the next holder's acquiring CAS.
        let prev = self.word.swap(0, Ordering::Release);
        if is_contended(prev) {
            futex::wake(self.word, 1);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn word_holds_owner_pid_and_frees_on_drop() {
        let w = AtomicU32::new(0);
        {
            let (_g, contended) = LockGuard::acquire(&w);
            assert!(!contended);
            let v = w.load(Ordering::Relaxed);
            // SAFETY: getpid has no preconditions.
            assert_eq!(owner_pid(v), unsafe { libc::getpid() } as u32);
            assert!(!is_contended(v));
        }
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn pid_zero_is_recorded_as_one() {
        let w = AtomicU32::new(0);
        let (_g, _) = LockGuard::acquire_as(&w, 0);
        assert_eq!(owner_pid(w.load(Ordering::Relaxed)), 1);
    }

    #[test]
    fn current_pid_matches_getpid() {
        // SAFETY: getpid has no preconditions.
        let real = unsafe { libc::getpid() } as u32;
        assert_eq!(current_pid(), real);
        assert_eq!(current_pid(), real);
    }

    #[test]
    fn threads_are_mutually_excluded() {
        let w = Arc::new(AtomicU32::new(0));
        // A counter updated non-atomically (load + store) under the lock:
        // any overlap of two critical sections loses increments.
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        const PER: u64 = 50_000;
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let (w, counter) = (w.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..PER {
                        let (_g, _) = LockGuard::acquire(&w);
                        let v = counter.load(Ordering::Relaxed);
                        std::hint::black_box(());
                        counter.store(v + 1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::Relaxed), 4 * PER);
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    #[test]
    fn loom_lock_excludes() {
        loom::model(|| {
            let w = Arc::new(AtomicU32::new(0));
            let data = Arc::new(UnsafeCell::new(0u32));
            let hs: Vec<_> = (1..=2u32)
                .map(|pid| {
                    let (w, data) = (w.clone(), data.clone());
                    loom::thread::spawn(move || {
                        let (_g, _) = LockGuard::acquire_as(&w, pid);
                        // SAFETY: only touched under the lock; loom checks
                        // that the accesses never overlap.
                        data.with_mut(|p| unsafe { *p += 1 });
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            // SAFETY: both threads have been joined.
            assert_eq!(data.with(|p| unsafe { *p }), 2);
            assert_eq!(w.load(Ordering::Relaxed), 0);
        });
    }
}
