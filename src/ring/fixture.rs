//! Test fixtures: a ring on the heap with its intent records and repair
//! counters, shared by the ring's unit tests, its loom models and the
//! cross-module models.

use super::records::Record;
use super::{heap_slots, Element, Repair, RepairSource, Ring};
use crate::sync::{AtomicU64, Ordering};

/// A ring of `T` on the heap, both counters at 0, with a table of
/// intent records and the repair counters.
pub(crate) struct Repaired<T: Element> {
    pub(crate) head: AtomicU64,
    pub(crate) tail: AtomicU64,
    pub(crate) slots: Vec<T::Slot>,
    pub(crate) table: Vec<Record>,
    pub(crate) skipped: AtomicU64,
    pub(crate) recoveries: AtomicU64,
}

impl<T: Element> RepairSource for Repaired<T> {
    fn repair(&self) -> Repair<'_> {
        Repair {
            table: &self.table,
            skipped: &self.skipped,
            recoveries: &self.recoveries,
        }
    }
}

/// The owner tag of a model process: `pid << 32` (under loom, `pid` is a
/// model pid that `model_deaths` can declare dead; in unit tests use
/// [`live_tag`] and [`dead_tag`]).
pub(crate) fn tag_of(pid: u32) -> u64 {
    u64::from(pid) << 32
}

/// This process's real owner tag (alive).
#[cfg(not(loom))]
pub(crate) fn live_tag() -> u64 {
    crate::lock::current_tag()
}

/// An owner tag whose process certainly does not exist (above the
/// kernel's pid limit).
#[cfg(not(loom))]
pub(crate) fn dead_tag() -> u64 {
    tag_of(0x7FFF_FFF0) | 1
}

impl<T: Element> Repaired<T>
where
    T::Slot: Default,
{
    /// `recs` records (index 0 the overflow record, as in a mapping).
    pub(crate) fn new(cap: usize, recs: usize) -> Self {
        let s = Repaired {
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            slots: heap_slots::<T>(cap),
            table: (0..recs).map(|_| Record::new()).collect(),
            skipped: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
        };
        s.ring().init();
        s
    }

    /// The ring with no record and no repair (nobody dies).
    pub(crate) fn ring(&self) -> Ring<'_, T> {
        Ring::new(&self.head, &self.tail, &self.slots)
    }

    /// The ring as the participant of record `i`, owned by `tag`
    /// (claimed here if free), repairing dead owners' positions.
    pub(crate) fn ring_as(&self, i: usize, tag: u64) -> Ring<'_, T> {
        let r = &self.table[i];
        let _ = r
            .tag
            .compare_exchange(0, tag, Ordering::SeqCst, Ordering::Relaxed);
        Ring::new(&self.head, &self.tail, &self.slots)
            .with_record(r)
            .with_repair(self)
    }

    /// The ring repairing dead owners' positions, with no record of its
    /// own (a pure consumer or producer that never dies in the test).
    #[cfg(not(loom))]
    pub(crate) fn repairing(&self) -> Ring<'_, T> {
        Ring::new(&self.head, &self.tail, &self.slots).with_repair(self)
    }
}

impl<T: Element> Repaired<T>
where
    T::Slot: Default,
{
    /// The ring as model process `pid` (record `pid`, tag `tag_of(pid)`).
    #[cfg(loom)]
    pub(crate) fn as_pid(&self, pid: u32) -> Ring<'_, T> {
        self.ring_as(pid as usize, tag_of(pid))
    }
}
