//! Models of the real ring with its neighbours (format 7): both sides
//! blocking on it (wait.rs) with the plain publish and free stores, the
//! light half of the asymmetric barrier after them and the heavy half in
//! the sleeper (both SeqCst fences under loom, which is what the pair
//! amounts to; no `sc_fence` stand-in is needed, unlike the models of
//! `wake.rs`: the code itself has the fences), and the Int64 slot (two
//! words, two plain stores). The ring's own models are in
//! ring_ops.rs.

use super::model;
use crate::futex::Deadline;
use crate::ring::fixture::Repaired;
use crate::sync::{AtomicU32, Ordering};
use crate::wait::{block_on_fenced, Side, Waited};
use loom::sync::Arc;

/// The real ring (capacity 2, the smallest the queues make) with both
/// sides: consumer and producer block in turn on the ring's `Miss` reports
/// (`InFlight` included), as `IntQueue::push_wait` and `pop_wait` do.
struct RingQ {
    ring: Repaired<i64>,
    waiters: [AtomicU32; 2],
    futex: [AtomicU32; 2],
}

impl RingQ {
    fn new(cap: usize) -> Arc<Self> {
        Arc::new(RingQ {
            ring: Repaired::new(cap, 4),
            waiters: [AtomicU32::new(0), AtomicU32::new(0)],
            futex: [AtomicU32::new(0), AtomicU32::new(0)],
        })
    }

    /// Side 0: consumers; side 1: producers.
    fn side(&self, i: usize) -> Side<'_> {
        Side {
            waiters: &self.waiters[i],
            futex: &self.futex[i],
        }
    }

    fn push_wait(&self, pid: u32, v: i64) {
        let r = block_on_fenced(self.side(1), &Deadline::FOREVER, || {
            self.ring.as_pid(pid).try_push(v)
        });
        assert_eq!(r, Waited::Done(()));
        crate::lock::barrier::light();
        self.side(0).wake(1);
    }

    fn pop_wait(&self, pid: u32) -> i64 {
        let r = block_on_fenced(self.side(0), &Deadline::FOREVER, || {
            self.ring.as_pid(pid).try_pop()
        });
        crate::lock::barrier::light();
        self.side(1).wake(1);
        match r {
            Waited::Done(v) => v,
            other => panic!("pop_wait ended with {other:?}"),
        }
    }
}

/// Producer pushes 1, 2, 3 into a ring of two slots (so it blocks on full
/// unless the consumer is quick), the consumer pops three times (blocking
/// on empty): both finish, FIFO. A lost wake-up leaves a sleeper blocked
/// for ever, which loom reports.
#[test]
fn loom_wake_both_sides_on_the_ring() {
    model(2, || {
        let q = RingQ::new(2);
        let p = {
            let q = q.clone();
            loom::thread::spawn(move || {
                for v in 1..=3 {
                    q.push_wait(2, v);
                }
            })
        };
        let got: Vec<i64> = (0..3).map(|_| q.pop_wait(1)).collect();
        p.join().unwrap();
        assert_eq!(got, [1, 2, 3]);
        assert_eq!(q.waiters[0].load(Ordering::Relaxed), 0);
        assert_eq!(q.waiters[1].load(Ordering::Relaxed), 0);
    });
}

/// The pairing alone: one consumer sleeps on an empty ring, one producer
/// publishes with its plain Release store and then reads the waiter count
/// after the light barrier. The consumer must be woken (or see the item
/// in its re-check after the heavy barrier).
#[test]
fn loom_plain_publish_wakes_a_sleeper() {
    model(3, || {
        let q = RingQ::new(2);
        let p = {
            let q = q.clone();
            loom::thread::spawn(move || q.push_wait(2, 7))
        };
        assert_eq!(q.pop_wait(1), 7);
        p.join().unwrap();
    });
}

/// The Int64 slot (value word, then sequence word): two producers race
/// for the two slots of a ring while the main thread pops once. Whatever
/// was accepted arrives exactly once, each producer's items in order.
#[test]
fn loom_slot64_two_producers_one_consumer() {
    model(3, || {
        let s = Arc::new(Repaired::<i64>::new(2, 4));
        let spawn = |pid: u32, vals: &'static [i64]| {
            let s = s.clone();
            loom::thread::spawn(move || {
                vals.iter()
                    .copied()
                    .filter(|&v| s.as_pid(pid).try_push(v).is_ok())
                    .collect::<Vec<i64>>()
            })
        };
        let (a, b) = (spawn(2, &[10, 11]), spawn(3, &[20, 21]));
        let mut got: Vec<i64> = s.as_pid(1).try_pop().into_iter().collect();
        let (pa, pb) = (a.join().unwrap(), b.join().unwrap());
        loop {
            match s.as_pid(1).try_pop() {
                Ok(v) => got.push(v),
                Err(crate::ring::Miss::InFlight) => loom::thread::yield_now(),
                Err(crate::ring::Miss::Settled) => break,
            }
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
