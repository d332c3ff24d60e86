//! Loom models of the work-queue steps (filter `loom_work`) on the real
//! table code (`Table` in src/lease/mod.rs): the delivery count
//! (`Table::deliver`), the move to the dead-letter area
//! (`Table::give_back`, `Table::move_dead`), the takeover's settling of a
//! move cut short (`Table::settle_dead_moves`) and the return of a dead
//! holder's lease, against a concurrent plain pop of returned items and
//! a concurrent re-lease, with a holder that dies at the model's kill
//! points (the thread unwinds at `kill_point`, leaving its stores).
//!
//! The table lock is a loom `Mutex` here (the lock, its takeover and its
//! wake-ups have their own models in lock.rs); a dead holder's lock is
//! taken over by the next locker, which settles the table first, as
//! `lease_recover` does.

use crate::lease::{
    DeadRec, Died, LeaseHead, LeaseRec, Table, DEAD_HOLDER_DIED, DEAD_RELEASED, DIE_AT, FREE, HELD,
    RETURNED,
};
use crate::sync::{AtomicU64, Ordering};
use crate::testpoint::Point;
use loom::sync::{Arc, Mutex};

fn z() -> AtomicU64 {
    AtomicU64::new(0)
}

/// One lease record, one dead-letter record (or none), the head and the
/// two header words, and the lock with its "holder died" flag.
struct Shared {
    head: LeaseHead,
    recs: Vec<LeaseRec>,
    dead: Vec<DeadRec>,
    busy: AtomicU64,
    returned: AtomicU64,
    /// The table lock; `true` while a dead holder's work awaits the
    /// takeover's repair.
    lock: Mutex<bool>,
}

impl Shared {
    fn new(max_deliveries: u64, dead: usize) -> Arc<Self> {
        let head = LeaseHead {
            lock: crate::lock::Lock::new(),
            lock_owner: z(),
            next_seq: z(),
            acked: z(),
            released: z(),
            returned_dead: z(),
            returned_timeout: z(),
            last_scan: z(),
            max_deliveries: AtomicU64::new(max_deliveries),
            next_due: z(),
            delivered: z(),
            dead: z(),
            buried: z(),
            kicked: z(),
            drained: z(),
            touched: z(),
            dead_full: z(),
            dead_next: z(),
            reserved: std::array::from_fn(|_| z()),
        };
        let rec = || LeaseRec {
            state: z(),
            owner: z(),
            seq: z(),
            value: z(),
            meta: z(),
            deadline: z(),
            mark: z(),
            since: z(),
            deliveries: z(),
            length: z(),
            due: z(),
            qpos: z(),
            reserved: std::array::from_fn(|_| z()),
        };
        let drec = || DeadRec {
            state: z(),
            seq: z(),
            deliveries: z(),
            reason: z(),
            when_ns: z(),
            value: z(),
            meta: z(),
            src: z(),
        };
        Arc::new(Shared {
            head,
            recs: vec![rec()],
            dead: (0..dead).map(|_| drec()).collect(),
            busy: z(),
            returned: z(),
            lock: Mutex::new(false),
        })
    }

    fn table(&self) -> Table<'_> {
        Table::from_parts(
            &self.head,
            &self.recs,
            &self.dead,
            &self.busy,
            &self.returned,
        )
    }

    /// Under the lock: settle first if the last holder died (the
    /// takeover's repair: the moves cut short, then the dead holder's
    /// lease returned, as `lease_recover` and the look that follows do).
    fn locked<R>(&self, f: impl FnOnce(&Table<'_>) -> R) -> R {
        let mut died = self.lock.lock().unwrap();
        let t = self.table();
        if *died {
            *died = false;
            t.settle_dead_moves();
            for i in 0..t.recs.len() {
                let (gen, st) = t.state(i);
                if st == HELD {
                    t.give_back(i, gen, DEAD_HOLDER_DIED, true);
                }
            }
            let n = (0..t.recs.len())
                .filter(|&i| t.state(i).1 == RETURNED)
                .count();
            t.returned.store(n as u64, Ordering::SeqCst);
            t.recount_busy();
        }
        f(&t)
    }

    /// Run `f` under the lock in a holder that may die at `point`: a
    /// death leaves the lock to be taken over (flag set).
    fn holder(&self, point: Option<Point>, f: impl FnOnce(&Table<'_>)) {
        DIE_AT.with(|d| d.set(point));
        let mut died = self.lock.lock().unwrap();
        let t = self.table();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&t)));
        DIE_AT.with(|d| d.set(None));
        if let Err(e) = r {
            assert!(e.is::<Died>(), "a model thread panicked");
            *died = true;
        }
    }

    /// A returned item, as the item 7 leased `n` times and given back.
    fn returned_item(&self, n: u64) {
        let t = self.table();
        let r = &t.recs[0];
        r.value.store(7, Ordering::Relaxed);
        r.deliveries.store(n, Ordering::Relaxed);
        t.set(0, 1, RETURNED);
        t.returned.store(1, Ordering::SeqCst);
        t.busy.store(1, Ordering::SeqCst);
    }

    /// The re-lease of the returned item (as `pop_lease_once` does):
    /// its new count, or `None`.
    fn relet(t: &Table<'_>) -> Option<u64> {
        if t.returned.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let i = *t.in_state_by_seq(RETURNED).first()?;
        let gen = t.begin(i, 1, None, false);
        let n = t.deliver(i);
        t.set(i, gen, HELD);
        t.returned.fetch_sub(1, Ordering::SeqCst);
        Some(n)
    }

    /// A plain pop of a returned item (as `take_returned` does): its
    /// value, or `None`.
    fn plain_pop(&self) -> Option<u64> {
        if self.returned.load(Ordering::SeqCst) == 0 && self.busy.load(Ordering::Relaxed) == 0 {
            return None;
        }
        self.locked(|t| {
            let i = *t.in_state_by_seq(RETURNED).first()?;
            let (gen, _) = t.state(i);
            t.set(i, gen, FREE);
            t.returned.fetch_sub(1, Ordering::SeqCst);
            t.recount_busy();
            Some(t.recs[i].value.load(Ordering::Relaxed))
        })
    }

    /// Where the item is at the end (after a last takeover): (in the
    /// live queue or held, in the dead area).
    fn census(&self) -> (usize, usize) {
        self.locked(|t| {
            let live = (0..t.recs.len())
                .filter(|&i| matches!(t.state(i).1, RETURNED | HELD))
                .count();
            (live, t.dead_count() as usize)
        })
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    super::model(3, f);
}

/// A leaser re-leases a returned item (its count goes 1 -> 2) and
/// releases it, which moves it to the dead-letter area at
/// `max_deliveries` 2, dying at each point of the way or not at all,
/// while a plain pop races for the returned item. The item is never lost
/// and never in two places; the count the leaser saw is the one the dead
/// record keeps.
#[test]
fn loom_work_count_and_dead_move_vs_plain_pop() {
    for die in [
        None,
        Some(Point::WorkCounted),
        Some(Point::WorkDeadMoved),
        Some(Point::LeaseIntReturned),
    ] {
        model(move || {
            let s = Shared::new(2, 1);
            s.returned_item(1);
            let a = {
                let s = s.clone();
                loom::thread::spawn(move || {
                    let mut seen = None;
                    s.holder(die, |t| seen = Shared::relet(t));
                    if seen.is_some() {
                        s.holder(die, |t| {
                            let (gen, _) = t.state(0);
                            t.give_back(0, gen, DEAD_RELEASED, true);
                        });
                    }
                    seen
                })
            };
            let b = {
                let s = s.clone();
                loom::thread::spawn(move || s.plain_pop())
            };
            let seen = a.join().unwrap();
            let popped = b.join().unwrap();
            let (live, dead) = s.census();
            let popped = usize::from(popped.is_some());
            assert_eq!(
                live + dead + popped,
                1,
                "once: {live} {dead} {popped} ({die:?})"
            );
            if seen.is_some() {
                assert_eq!(seen, Some(2), "the count goes on from the return");
                assert_eq!(popped, 0);
            }
            if dead == 1 {
                let d = s.table().dead_item(0, false);
                assert_eq!((d.value, d.deliveries), (7, 2));
            }
        });
    }
}

/// The same with the dead-letter area full (no record): the spent item
/// goes back to the live queue, counted in `dead_full`.
#[test]
fn loom_work_full_dead_area_keeps_the_item() {
    model(|| {
        let s = Shared::new(2, 0);
        s.returned_item(1);
        let a = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let mut seen = None;
                s.holder(None, |t| seen = Shared::relet(t));
                if seen.is_some() {
                    s.holder(None, |t| {
                        let (gen, _) = t.state(0);
                        assert!(t.give_back(0, gen, DEAD_RELEASED, true));
                    });
                }
                seen
            })
        };
        let b = {
            let s = s.clone();
            loom::thread::spawn(move || s.plain_pop())
        };
        let seen = a.join().unwrap();
        let popped = b.join().unwrap();
        let (live, dead) = s.census();
        assert_eq!(dead, 0);
        assert_eq!(live + usize::from(popped.is_some()), 1);
        if seen.is_some() {
            assert_eq!(s.head.dead_full.load(Ordering::Relaxed), 1);
        }
    });
}
