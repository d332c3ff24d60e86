//! Models of the real ring with its neighbours: both sides blocking on
//! it (wait.rs), the Int64 slot (its 16-byte CAS emulated on one loom
//! word, ring/slot.rs) against producers and the give-up CAS, and the
//! repair of a dead batch reservation after a real stuck interval. The
//! ring's own models are in ring/loom.rs.

use super::model;
use super::wake::sc_fence;
use crate::futex::Deadline;
use crate::ring::fixture::Repaired;
use crate::ring::{heap_slots, Miss, Ring, Slot64};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::wait::{block_on, Side, Waited};
use loom::sync::Arc;

/// The real ring (capacity 2, the smallest the queues make) with both
/// sides: consumer and producer block in turn on the ring's `Miss` reports
/// (`InFlight` included).
struct RingQ {
    head: AtomicU64,
    tail: AtomicU64,
    slots: Vec<Slot64>,
    waiters: [AtomicU32; 2],
    futex: [AtomicU32; 2],
}

impl RingQ {
    fn new(cap: usize) -> Arc<Self> {
        let q = Arc::new(RingQ {
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            slots: heap_slots::<i64>(cap),
            waiters: [AtomicU32::new(0), AtomicU32::new(0)],
            futex: [AtomicU32::new(0), AtomicU32::new(0)],
        });
        q.ring().init();
        q
    }

    fn ring(&self) -> Ring<'_, i64> {
        Ring::new(&self.head, &self.tail, &self.slots)
    }

    /// Side 0: consumers; side 1: producers.
    fn side(&self, i: usize) -> Side<'_> {
        Side {
            waiters: &self.waiters[i],
            futex: &self.futex[i],
        }
    }

    fn push_wait(&self, v: i64) {
        let r = block_on(self.side(1), &Deadline::FOREVER, || {
            sc_fence();
            self.ring().try_push(v)
        });
        assert_eq!(r, Waited::Done(()));
        sc_fence();
        self.side(0).wake(1);
    }

    fn pop_wait(&self) -> i64 {
        let r = block_on(self.side(0), &Deadline::FOREVER, || {
            sc_fence();
            self.ring().try_pop()
        });
        sc_fence();
        self.side(1).wake(1);
        match r {
            Waited::Done(v) => v,
            other => panic!("pop_wait ended with {other:?}"),
        }
    }
}

/// Producer pushes 1, 2, 3 into a ring of two slots (so it blocks on full
/// unless the consumer is quick), the consumer pops three times (blocking
/// on empty): both finish, FIFO.
#[test]
fn loom_wake_both_sides_on_the_ring() {
    model(2, || {
        let q = RingQ::new(2);
        let p = {
            let q = q.clone();
            loom::thread::spawn(move || {
                for v in 1..=3 {
                    q.push_wait(v);
                }
            })
        };
        let got: Vec<i64> = (0..3).map(|_| q.pop_wait()).collect();
        p.join().unwrap();
        assert_eq!(got, [1, 2, 3]);
        assert_eq!(q.waiters[0].load(Ordering::Relaxed), 0);
        assert_eq!(q.waiters[1].load(Ordering::Relaxed), 0);
    });
}

/// The Int64 slot (its 16-byte CAS emulated on one loom word, ring/slot.rs):
/// two producers race for the two slots of a ring while the main thread
/// pops once. Whatever was accepted arrives exactly once, each producer's
/// items in order.
#[test]
fn loom_slot64_two_producers_one_consumer() {
    model(3, || {
        let s = Arc::new(Repaired::<i64>::new(2, 0));
        let spawn = |vals: &'static [i64]| {
            let s = s.clone();
            loom::thread::spawn(move || {
                vals.iter()
                    .copied()
                    .filter(|&v| s.ring().try_push(v).is_ok())
                    .collect::<Vec<i64>>()
            })
        };
        let (a, b) = (spawn(&[10, 11]), spawn(&[20, 21]));
        let mut got: Vec<i64> = s.ring().try_pop().into_iter().collect();
        let (pa, pb) = (a.join().unwrap(), b.join().unwrap());
        while let Ok(v) = s.ring().try_pop() {
            got.push(v);
        }
        let from = |t: i64| {
            got.iter()
                .copied()
                .filter(|v| v / 10 == t)
                .collect::<Vec<_>>()
        };
        assert_eq!(from(1), pa);
        assert_eq!(from(2), pb);
        assert_eq!(got.len(), pa.len() + pb.len());
    });
}

/// The Int64 slot's publish (16-byte CAS) racing a consumer's give-up
/// (8-byte CAS of the sequence) on the same slots: a batch producer
/// reserves two positions and publishes them while a consumer gives up at
/// once whatever it finds unpublished. What the producer counts as pushed
/// arrives once and in order; nothing else arrives.
#[test]
fn loom_slot64_publish_races_the_repair() {
    model(3, || {
        let s = Arc::new(Repaired::<i64>::new(4, 0));
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_pop().ok())
        };
        let n = s.ring().try_push_batch(&[1, 2]).unwrap_or(0);
        let pushed = [1i64, 2][..n].to_vec();
        let mut got: Vec<i64> = c.join().unwrap().into_iter().collect();
        while let Ok(v) = s.ring().try_pop() {
            got.push(v);
        }
        assert_eq!(got, pushed);
    });
}

/// Pop until an item comes (yielding on a miss); also returns how many
/// misses said `InFlight` before any position was given up.
fn pop_one(s: &Repaired<i64>) -> (i64, u32) {
    let mut early = 0;
    loop {
        match s.ring().try_pop() {
            Ok(v) => return (v, early),
            Err(m) => {
                if m == Miss::InFlight && s.st.skipped.load(Ordering::Relaxed) == 0 {
                    early += 1;
                }
                loom::thread::yield_now();
            }
        }
    }
}

/// Repair after a real stuck interval (bound 3 ticks, not the give-up-at-
/// once form): a producer "dies" right after reserving two positions of an
/// Int64 ring; a live producer pushes after it; a consumer pops until it
/// gets the live item. The consumer reports the hole `InFlight` before it
/// gives anything up (the clock starts at the first sighting), then gives
/// up both dead positions (the second without a new wait), and gets the
/// live item once.
#[test]
fn loom_repair_after_a_stuck_interval() {
    model(2, || {
        let s = Arc::new(Repaired::<i64>::new(4, 3));
        let dead = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let _ = s
                    .tail
                    .compare_exchange(0, 2, Ordering::SeqCst, Ordering::Relaxed);
            })
        };
        dead.join().unwrap();
        let live = {
            let s = s.clone();
            loom::thread::spawn(move || {
                while s.ring().try_push(7).is_err() {
                    loom::thread::yield_now();
                }
            })
        };
        let (v, early) = pop_one(&s);
        live.join().unwrap();
        assert_eq!(v, 7);
        assert!(
            early >= 3,
            "gave a position up after {early} looks, not 3 ticks"
        );
        assert_eq!(s.st.skipped.load(Ordering::Relaxed), 2);
        assert_eq!(s.st.recoveries.load(Ordering::Relaxed), 2);
        assert_eq!(s.ring().try_pop(), Err(Miss::Settled));
    });
}
