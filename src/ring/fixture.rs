//! Test fixtures: a ring on the heap with its repair cells, shared by the
//! ring's unit tests, its loom models and the cross-module models.

use super::{heap_slots, Element, Repair, RepairSource, Ring};
use crate::sync::AtomicU64;

/// The repair cells a queue header holds, and the bound: nanoseconds, or
/// under loom ticks of the loom clock (clock.rs, `now_ns`: one tick per
/// reading).
pub(crate) struct RepairState {
    pub(crate) stuck_pos: AtomicU64,
    pub(crate) stuck_since: AtomicU64,
    pub(crate) skipped: AtomicU64,
    pub(crate) recoveries: AtomicU64,
    after_ns: u64,
}

impl RepairState {
    pub(crate) fn new(after_ns: u64) -> Self {
        RepairState {
            stuck_pos: AtomicU64::new(0),
            stuck_since: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            after_ns,
        }
    }
}

impl RepairSource for RepairState {
    fn repair(&self) -> Repair<'_> {
        Repair {
            stuck_pos: &self.stuck_pos,
            stuck_since: &self.stuck_since,
            skipped: &self.skipped,
            recoveries: &self.recoveries,
            after_ns: self.after_ns,
        }
    }
}

/// A ring of `T` on the heap, both counters at 0, giving up stuck
/// reservations after `after_ns` (see [`RepairState`]).
pub(crate) struct Repaired<T: Element> {
    pub(crate) head: AtomicU64,
    pub(crate) tail: AtomicU64,
    pub(crate) slots: Vec<T::Slot>,
    pub(crate) st: RepairState,
}

impl<T: Element> Repaired<T>
where
    T::Slot: Default,
{
    pub(crate) fn new(cap: usize, after_ns: u64) -> Self {
        let s = Repaired {
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            slots: heap_slots::<T>(cap),
            st: RepairState::new(after_ns),
        };
        s.ring().init();
        s
    }

    pub(crate) fn ring(&self) -> Ring<'_, T> {
        Ring::new(&self.head, &self.tail, &self.slots).with_repair(&self.st)
    }
}
