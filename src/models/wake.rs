//! Models of the wait/wake protocol (wait.rs) on a queue reduced to an
//! item count: the announce-and-recheck window and the count reset.

use super::model;
use crate::futex::Deadline;
use crate::ring::Miss;
use crate::sync::{AtomicU32, Ordering};
use crate::wait::{block_on, Side, Waited};
use loom::sync::Arc;

/// The protocol is a store-buffering (Dekker) pair: the waiter's SeqCst
/// announcement then SeqCst look at the queue, the other side's SeqCst claim
/// then SeqCst look at the waiter count. C++ forbids both looks missing the
/// other side's write; loom does not model that, treating SeqCst accesses as
/// AcqRel (a documented loom limitation, tokio-rs/loom#180), so it would
/// report lost wake-ups that cannot happen. Loom does model SeqCst fences
/// fully, so the models put one where each side has its SeqCst write-then-
/// read pair: in the attempt closure (after the announcement) and between a
/// push or pop and its wake. That restores exactly the C++ guarantee, and
/// every other ordering in wait.rs and ring/ is checked as written.
pub(super) fn sc_fence() {
    loom::sync::atomic::fence(Ordering::SeqCst);
}

/// A queue reduced to an item count: the SeqCst claim of the real rings
/// (a successful CAS or fetch_add) and the two waiter sides.
#[derive(Default)]
struct Counted {
    items: AtomicU32,
    pop_waiters: AtomicU32,
    pop_futex: AtomicU32,
}

impl Counted {
    fn consumers(&self) -> Side<'_> {
        Side {
            waiters: &self.pop_waiters,
            futex: &self.pop_futex,
        }
    }

    /// A non-blocking pop: take one item if there is one. The first look
    /// is SeqCst, like the rings' final `tail` (or `head`) load on a miss.
    fn try_pop(&self) -> Result<(), Miss> {
        sc_fence();
        let mut n = self.items.load(Ordering::SeqCst);
        while n > 0 {
            match self
                .items
                .compare_exchange(n, n - 1, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(cur) => n = cur,
            }
        }
        Err(Miss::Settled)
    }

    /// A push: claim (SeqCst), then wake one waiter if anybody waits.
    fn push(&self) {
        self.items.fetch_add(1, Ordering::SeqCst);
        sc_fence();
        self.consumers().wake(1);
    }

    fn pop_wait(&self) {
        let r = block_on(self.consumers(), &Deadline::FOREVER, || self.try_pop());
        assert_eq!(r, Waited::Done(()));
    }

    /// `pop_wait` that opens `gate` when it enters the race window: its
    /// last look before announcing (or, should the retry count change, the
    /// first look after announcing). The looks before it report a settled
    /// miss without touching the queue, which a real run can do as well
    /// (nothing has been pushed yet when the producer waits for the gate).
    fn pop_wait_gated(&self, gate: &AtomicU32) {
        let mut calls = 0u32;
        let mut open = false;
        let r = block_on(self.consumers(), &Deadline::FOREVER, || {
            calls += 1;
            if !open {
                if calls < PRE_ANNOUNCE_LOOKS && self.pop_waiters.load(Ordering::Relaxed) == 0 {
                    return Err(Miss::Settled);
                }
                open = true;
                // Relaxed: the gate orders nothing, it only holds the
                // producer back until the window.
                gate.fetch_add(1, Ordering::Relaxed);
            }
            self.try_pop()
        });
        assert_eq!(r, Waited::Done(()));
    }
}

/// How many times `block_on` looks at a settled miss before announcing
/// itself: once, then `SETTLED_SPINS + SETTLED_YIELDS` (64 + 64) retries.
/// Each retry yields, and a loom yield runs the other threads first, so
/// without a gate the producer would always push during the retries and the
/// announce-and-recheck window would never meet a concurrent push.
const PRE_ANNOUNCE_LOOKS: u32 = 1 + 64 + 64;

/// Wait (yielding) until `n` waiters have opened `gate`.
fn wait_gate(gate: &AtomicU32, n: u32) {
    while gate.load(Ordering::Relaxed) < n {
        loom::thread::yield_now();
    }
}

/// One consumer in the window (its last look before announcing, the
/// announcement, the futex sample, the re-check and the sleep) while one
/// producer pushes: the consumer always gets the item.
#[test]
fn loom_wake_window_one_consumer() {
    model(3, || {
        let q = Arc::new(Counted::default());
        let gate = Arc::new(AtomicU32::new(0));
        let c = {
            let (q, gate) = (q.clone(), gate.clone());
            loom::thread::spawn(move || q.pop_wait_gated(&gate))
        };
        wait_gate(&gate, 1);
        q.push();
        c.join().unwrap();
        assert_eq!(q.items.load(Ordering::Relaxed), 0);
        assert_eq!(q.pop_waiters.load(Ordering::Relaxed), 0);
    });
}

/// Two consumers blocked (ungated: they may also be served during their
/// retries), two pushes each waking one: both consumers are served,
/// whichever of them a wake picks and whichever takes the item.
#[test]
fn loom_wake_two_consumers_two_pushes() {
    model(2, || {
        let q = Arc::new(Counted::default());
        let cs: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                loom::thread::spawn(move || q.pop_wait())
            })
            .collect();
        q.push();
        q.push();
        for c in cs {
            c.join().unwrap();
        }
        assert_eq!(q.items.load(Ordering::Relaxed), 0);
        assert_eq!(q.pop_waiters.load(Ordering::Relaxed), 0);
    });
}

/// The count reset that a run of fruitless wakes makes (a dead waiter's
/// count, then a new epoch with count 0 and a wake of everybody), racing a
/// live consumer in its window (announcement, futex sample, re-check,
/// sleep): the consumer still gets the item pushed after the reset, and no
/// count is left but possibly the dead one's, if the reset lost its CAS.
#[test]
fn loom_reset_keeps_a_live_waiter() {
    model(2, || {
        let q = Arc::new(Counted::default());
        let gate = Arc::new(AtomicU32::new(0));
        let c = {
            let (q, gate) = (q.clone(), gate.clone());
            loom::thread::spawn(move || q.pop_wait_gated(&gate))
        };
        wait_gate(&gate, 1);
        // A waiter that announced itself and was killed.
        q.pop_waiters.fetch_add(1, Ordering::SeqCst);
        let reset = q.consumers().reset();
        q.push();
        c.join().unwrap();
        assert_eq!(q.items.load(Ordering::Relaxed), 0);
        let left = crate::wait::waiter_count(&q.pop_waiters);
        assert_eq!(left, if reset { 0 } else { 1 }, "reset {reset}");
    });
}
