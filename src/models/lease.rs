//! Loom models of the Int lease protocol (src/intq/lease.rs) against
//! plain pops and pushes (filter `loom_lease`): the ring's pop for
//! `pop_lease` (`Ring::try_pop_noted`, src/ring/lease_pop.rs) loses and
//! duplicates nothing; a leaser that dies after its take is settled
//! exactly by the repair's look at the slot; one that dies between its
//! intent and its take duplicates an item only when a plain pop took that
//! very item (the window the `lease` docs name).
//!
//! The ring is the real one. The lease record is a reduction: three words
//! (`state`, `pos`, `value`) standing for the `LeaseRec` fields `state`,
//! `meta` and `value`, written as the take in `IntQueue::pop_lease_once`
//! writes them and read as `IntQueue::lease_recover` reads a `TAKING`
//! record (both in src/intq/lease.rs); a change there does not reach this
//! model.

use crate::ring::{heap_slots, Ring, Slot32, SlotOps};
use crate::sync::{AtomicU64, Ordering};
use loom::sync::Arc;

/// A ring of Int32 slots and one lease record (state, position, value).
struct Shared {
    head: AtomicU64,
    tail: AtomicU64,
    slots: Vec<Slot32>,
    state: AtomicU64,
    pos: AtomicU64,
    value: AtomicU64,
}

const FREE: u64 = 0;
const TAKING: u64 = 1;
const HELD: u64 = 2;

impl Shared {
    fn new(cap: usize, pre: &[i32]) -> Arc<Self> {
        let s = Arc::new(Shared {
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            slots: heap_slots::<i32>(cap),
            state: AtomicU64::new(FREE),
            pos: AtomicU64::new(0),
            value: AtomicU64::new(0),
        });
        s.ring().init();
        for &v in pre {
            s.ring().try_push(v).unwrap();
        }
        s
    }
    fn ring(&self) -> Ring<'_, i32> {
        Ring::new(&self.head, &self.tail, &self.slots)
    }
    /// `pop_lease`'s take (src/intq/lease.rs), the record written as it does.
    fn lease_pop(&self) -> Option<i32> {
        let r = self.ring().try_pop_noted(|note| match note {
            Some((pos, v)) => {
                self.value.store(v as u32 as u64, Ordering::SeqCst);
                self.pos.store(pos, Ordering::SeqCst);
                self.state.store(TAKING, Ordering::SeqCst);
            }
            None => self.state.store(FREE, Ordering::SeqCst),
        });
        r.ok()
    }
    /// The takeover's repair (`lease_recover` in src/intq/lease.rs): the
    /// item of a `TAKING` record whose slot moved is returned.
    fn recover(&self) -> Option<i32> {
        match self.state.load(Ordering::SeqCst) {
            TAKING if self.ring().holds(self.pos.load(Ordering::SeqCst)) => None,
            TAKING | HELD => Some(self.value.load(Ordering::SeqCst) as u32 as i32),
            _ => None,
        }
    }
    fn drain(&self) -> Vec<i32> {
        let mut v = Vec::new();
        while let Ok(x) = self.ring().try_pop() {
            v.push(x);
        }
        v
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

fn sorted(mut v: Vec<i32>) -> Vec<i32> {
    v.sort_unstable();
    v
}

/// A leaser that completes, against a plain pop and a push at
/// capacity 2: every item once, the leased one held.
#[test]
fn loom_lease_take_vs_pop_and_push() {
    model(|| {
        let s = Shared::new(2, &[1, 2]);
        let a = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let v = s.lease_pop();
                if v.is_some() {
                    s.state.store(HELD, Ordering::SeqCst);
                }
                v
            })
        };
        let b = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_pop().ok())
        };
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_push(3).is_ok())
        };
        let leased = a.join().unwrap();
        let popped = b.join().unwrap();
        let pushed = c.join().unwrap();
        if let Some(v) = leased {
            assert_eq!(s.state.load(Ordering::SeqCst), HELD);
            assert_eq!(
                s.value.load(Ordering::SeqCst) as i32,
                v,
                "the record names the item"
            );
        }
        let mut all: Vec<i32> = leased.into_iter().chain(popped).collect();
        all.extend(s.drain());
        let want: Vec<i32> = if pushed { vec![1, 2, 3] } else { vec![1, 2] };
        assert_eq!(sorted(all), want, "nothing lost, nothing doubled");
    });
}

/// A leaser whose take lost the race for the last item (its CAS
/// failed) leaves no intent behind: killed right then, the repair
/// returns nothing, so the item the plain pop took is not doubled.
#[test]
fn loom_lease_failed_take_leaves_no_intent() {
    model(|| {
        let s = Shared::new(2, &[1]);
        let a = {
            let s = s.clone();
            loom::thread::spawn(move || s.lease_pop())
        };
        let b = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_pop().ok())
        };
        let leased = a.join().unwrap();
        let popped = b.join().unwrap();
        if leased.is_none() {
            assert_eq!(s.state.load(Ordering::SeqCst), FREE, "no intent left");
            assert_eq!(s.recover(), None);
        }
        let mut all: Vec<i32> = leased.into_iter().chain(popped).collect();
        all.extend(s.drain());
        assert_eq!(all, vec![1], "one item, once");
    });
}

/// A leaser killed after its take (before marking the record held):
/// the repair returns exactly its item, whatever a plain pop did.
#[test]
fn loom_lease_killed_after_take() {
    model(|| {
        let s = Shared::new(2, &[1, 2]);
        let a = {
            let s = s.clone();
            loom::thread::spawn(move || {
                s.lease_pop();
            })
        };
        let b = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_pop().ok())
        };
        a.join().unwrap();
        let popped = b.join().unwrap();
        let returned = s.recover();
        let mut all: Vec<i32> = returned.into_iter().chain(popped).collect();
        all.extend(s.drain());
        assert_eq!(sorted(all), vec![1, 2], "nothing lost, nothing doubled");
    });
}

/// A leaser killed between its intent and its take: nothing is ever
/// lost, and an item comes out twice only when the plain pop took the
/// very item the intent named.
#[test]
fn loom_lease_killed_between_intent_and_take() {
    model(|| {
        let s = Shared::new(2, &[1, 2]);
        let a = {
            let s = s.clone();
            loom::thread::spawn(move || {
                // The noted walk up to the intent; the process dies
                // before the CAS (the take is never made).
                let r = s.ring();
                let pos = s.head.load(Ordering::Relaxed);
                if r.published(pos) {
                    let v = r.slot(pos).get();
                    s.value.store(v as u32 as u64, Ordering::SeqCst);
                    s.pos.store(pos, Ordering::SeqCst);
                    s.state.store(TAKING, Ordering::SeqCst);
                }
            })
        };
        let b = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_pop().ok())
        };
        a.join().unwrap();
        let popped = b.join().unwrap();
        let returned = s.recover();
        let mut all: Vec<i32> = returned.into_iter().chain(popped).collect();
        all.extend(s.drain());
        let all = sorted(all);
        if all.len() == 3 {
            assert_eq!(
                returned, popped,
                "the one duplicate is the item the plain pop took"
            );
            let mut d = all.clone();
            d.dedup();
            assert_eq!(d, vec![1, 2]);
        } else {
            assert_eq!(all, vec![1, 2], "nothing lost");
        }
    });
}
