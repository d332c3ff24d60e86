//! Models of the Str lock (the lock module): mutual exclusion and no lost
//! wake-up, takeover from a holder that stopped inside its critical
//! section, and the lock and unlock exactly as the Str hot paths make
//! them.

use super::model;
use crate::futex::Deadline;
use crate::lock::{model_deaths, Acquired, Lock, LockGuard};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use loom::cell::UnsafeCell;
use loom::sync::Arc;

/// Protected state: `(value, dirty)`. A critical section sets dirty, adds
/// one, clears dirty; one that stops half way leaves dirty set.
type State = UnsafeCell<(u32, bool)>;

/// Three threads, blocking lock (acquire_as, futex waits without deadline):
/// mutual exclusion (loom checks the cell accesses never overlap) and no
/// lost wake-up (a sleeper that is never woken is a deadlock).
#[test]
fn loom_lock_three_threads_exclude_and_wake() {
    model(2, || {
        let w = Arc::new(Lock::new());
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let hs: Vec<_> = (1..=3u32)
            .map(|pid| {
                let (w, data) = (w.clone(), data.clone());
                loom::thread::spawn(move || {
                    let (_g, _) = LockGuard::acquire_as(&w, pid);
                    // SAFETY: only touched under the lock; loom checks it.
                    data.with_mut(|p| unsafe { (*p).0 += 1 });
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY: every thread has been joined.
        assert_eq!(data.with(|p| unsafe { (*p).0 }), 3);
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
    });
}

/// A robust acquisition by model pid `pid` (no deadline, not interruptible).
pub(super) fn robust<'a>(w: &'a Lock, tag: &AtomicU64, pid: u32) -> (LockGuard<'a>, Acquired) {
    LockGuard::acquire_robust_as(
        w,
        tag,
        pid,
        u64::from(pid) << 32,
        || Deadline::FOREVER,
        false,
    )
    .expect("a lock wait without deadline or interruption cannot fail")
}

/// A waiter's critical section: repair when it took over (the stopped
/// holder's half update must be visible), then a full update.
fn waiter_section(data: &State, got: Acquired) {
    // SAFETY: called with the lock held; loom checks the accesses never
    // overlap and that the stopped holder's write happened before.
    data.with_mut(|p| unsafe {
        assert_eq!((*p).1, got.recovered, "dirty exactly when taken over");
        (*p).1 = true;
        (*p).0 += 1;
        (*p).1 = false;
    });
}

/// The preemption bound of the three-thread takeover model: every
/// interleaving with at most three forced switches (about 90 s of loom on
/// a busy 2-core host; bound 1, as before, left most of them unexplored).
const BOUND_TAKEOVER: usize = 3;

/// Model pid 1 takes the lock, half-updates the state and stops for good
/// (the guard is leaked, then the pid is declared dead); pids 2 and 3 take
/// the lock robustly. In every interleaving within the bound: the lock is
/// never held by two at once, every waiter gets it, at most one recovers
/// and it sees the half update; the stopped holder's lock is recovered
/// exactly when a waiter came after it (otherwise the word still names it
/// at the end).
#[test]
fn loom_lock_takeover_from_stopped_holder() {
    model(BOUND_TAKEOVER, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let recovered = Arc::new(AtomicU32::new(0));
        let holder = {
            let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
            loom::thread::spawn(move || {
                let (g, got) = robust(&w, &tag, 1);
                assert!(!got.recovered);
                // SAFETY: under the lock.
                data.with_mut(|p| unsafe { (*p).1 = true });
                std::mem::forget(g);
                model_deaths::mark_dead(1);
            })
        };
        let waiters: Vec<_> = (2..=3u32)
            .map(|pid| {
                let (w, tag, data, recovered) =
                    (w.clone(), tag.clone(), data.clone(), recovered.clone());
                loom::thread::spawn(move || {
                    let (_g, got) = robust(&w, &tag, pid);
                    waiter_section(&data, got);
                    if got.recovered {
                        recovered.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        holder.join().unwrap();
        for h in waiters {
            h.join().unwrap();
        }
        let rec = recovered.load(Ordering::Relaxed);
        let end = w.word.load(Ordering::Relaxed);
        assert!(rec <= 1, "recovered {rec} times");
        // Not recovered <=> the stopped holder still owns the word.
        assert_eq!(rec == 0, end == 1, "word {end:#x}");
        // SAFETY: every thread has been joined.
        let (v, dirty) = data.with(|p| unsafe { *p });
        assert_eq!(v, 2);
        assert_eq!(dirty, rec == 0);
    });
}

/// The takeover with one waiter (pid 2), a smaller space than the above
/// searched with more preemptions.
#[test]
fn loom_lock_takeover_one_waiter() {
    model(3, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let holder = {
            let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
            loom::thread::spawn(move || {
                let (g, _) = robust(&w, &tag, 1);
                // SAFETY: under the lock.
                data.with_mut(|p| unsafe { (*p).1 = true });
                std::mem::forget(g);
                model_deaths::mark_dead(1);
            })
        };
        let (g, got) = robust(&w, &tag, 2);
        waiter_section(&data, got);
        drop(g);
        holder.join().unwrap();
        let end = w.word.load(Ordering::Relaxed);
        assert_eq!(got.recovered, end == 0, "word {end:#x}");
    });
}

/// A live holder (pids 1 and 2 in turn, each unlocking normally after
/// dawdling) is never taken over, even when the other's polls find it
/// stuck; both sections complete.
#[test]
fn loom_lock_live_holder_not_taken_over() {
    model(3, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let hs: Vec<_> = (1..=2u32)
            .map(|pid| {
                let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
                loom::thread::spawn(move || {
                    let (_g, got) = robust(&w, &tag, pid);
                    assert!(!got.recovered, "pid {pid} took over a live holder");
                    waiter_section(&data, got);
                    // Hold on for a while: a loom yield runs the other
                    // thread, which polls, finds us stuck and must then
                    // ask (and be told we live) before anything else.
                    for _ in 0..3 {
                        loom::thread::yield_now();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY: every thread has been joined.
        assert_eq!(data.with(|p| unsafe { *p }), (2, false));
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
    });
}
/// A model "process" `pid`'s owner tag (`pid << 32`, no start time).
fn tag_of(pid: u32) -> u64 {
    u64::from(pid) << 32
}

/// The lock and unlock exactly as the Str hot paths make them: one try
/// (`try_acquire_robust`, the CAS and the tag store), else the robust
/// acquisition (`acquire_robust`, spin, count as a sleeper, sleep); then
/// `unlock` (a plain store, the light barrier, a read of the sleeper
/// count) and `wake_one` when it says somebody may sleep. Under loom the
/// robust sleep has no deadline while its holder lives (lock.rs,
/// `robust_sleep`): a lost wake-up is a deadlock.
fn pair_section(w: &Lock, tag: &AtomicU64, data: &State, pid: u32) {
    let g = match LockGuard::try_acquire_robust_tagged(w, tag, tag_of(pid)) {
        Some(g) => g,
        None => {
            let (g, got) = robust(w, tag, pid);
            assert!(!got.recovered, "pid {pid} took over a live holder");
            g
        }
    };
    // SAFETY: only touched under the lock; loom checks it.
    data.with_mut(|p| unsafe { (*p).0 += 1 });
    if g.unlock() {
        LockGuard::wake_one(w);
    }
}

/// Two threads, each taking and freeing the lock twice by the hot paths'
/// pair: mutual exclusion, no lost wake-up, the lock free and nobody
/// counted as a sleeper at the end. Bound 3: every interleaving with at
/// most three forced switches (a lost wake-up needs one or two).
#[test]
fn loom_robust_pair_two_threads() {
    model(3, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let other = {
            let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
            loom::thread::spawn(move || {
                for _ in 0..2 {
                    pair_section(&w, &tag, &data, 2);
                }
            })
        };
        for _ in 0..2 {
            pair_section(&w, &tag, &data, 1);
        }
        other.join().unwrap();
        // SAFETY: every thread has been joined.
        assert_eq!(data.with(|p| unsafe { (*p).0 }), 4);
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
        assert_eq!(
            crate::lock::sleeper_count(w.sleepers.load(Ordering::Relaxed)),
            0
        );
    });
}

/// Three threads, one pair each: two of them may sleep at once, so an
/// unlock must wake one and the next unlock the other. Bound 2.
#[test]
fn loom_robust_pair_three_threads() {
    model(2, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let hs: Vec<_> = (2..=3u32)
            .map(|pid| {
                let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
                loom::thread::spawn(move || pair_section(&w, &tag, &data, pid))
            })
            .collect();
        pair_section(&w, &tag, &data, 1);
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY: every thread has been joined.
        assert_eq!(data.with(|p| unsafe { (*p).0 }), 3);
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
    });
}
