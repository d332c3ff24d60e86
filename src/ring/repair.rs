//! Repairing a dead owner's positions (see "Repair" in the ring's module
//! docs): the shared [`Repair`] state, where a ring finds it
//! ([`RepairSource`]), and what a consumer does at a hole and a producer
//! at an unfreed slot.

use super::records::{live_cover, Record, Side};
use super::{Element, Miss, Ring, SlotOps, Step};
use crate::sync::{spin_hint, spin_rounds, yield_now, AtomicU64, Ordering};

/// Shared state for repairs.
#[derive(Clone, Copy)]
pub struct Repair<'a> {
    /// The intent records of every participant.
    pub table: &'a [Record],
    /// Positions given up (no item): subtracted from the push and pop
    /// counts.
    pub skipped: &'a AtomicU64,
    /// Recoveries of any kind (stats).
    pub recoveries: &'a AtomicU64,
}

/// Where a ring finds its [`Repair`] state. Looked up only when a
/// position is stuck, so the fast paths carry one pointer.
pub trait RepairSource: Sync {
    /// The repair cells and the record table.
    fn repair(&self) -> Repair<'_>;

    /// A repair freed a slot for the producers (a hole given up, a dead
    /// consumer's slot freed): wake a sleeping producer, which may have
    /// read the ring full before (nobody else wakes it for a slot that
    /// never held an item). No waiters here by default.
    fn freed_slot(&self) {}
}

impl RepairSource for Repair<'_> {
    fn repair(&self) -> Repair<'_> {
        *self
    }
}

/// Spin rounds, then yields, that a stuck position gets before the
/// records are looked at: the owner is usually a few instructions from
/// its store. (One each under loom.)
const STUCK_SPINS: u32 = spin_rounds(256);
const STUCK_YIELDS: u32 = spin_rounds(4);

/// Wait briefly for `moved` to become true; whether it did.
fn settles(moved: impl Fn() -> bool) -> bool {
    for i in 0..STUCK_SPINS + STUCK_YIELDS {
        if moved() {
            return true;
        }
        if i < STUCK_SPINS {
            spin_hint();
        } else {
            yield_now();
        }
    }
    moved()
}

impl<T: Element> Ring<'_, T> {
    /// A consumer at `h`: reserved (`tail > h`) but unpublished. Wait
    /// briefly; then, unless a live producer's record covers `h`, claim
    /// `h` and give it up.
    #[cold]
    #[inline(never)]
    pub(super) fn hole(&self, h: u64) -> Step {
        let slot = self.slot(h);
        let lap = self.lap(h);
        let seq = slot.seq();
        if settles(|| slot.seq() != seq || self.head.load(Ordering::Relaxed) != h) {
            return Step::Retry;
        }
        let Some(r) = self.repair.map(|r| r.repair()) else {
            return Step::Miss(Miss::InFlight);
        };
        if live_cover(r.table, Side::Push, h, self.capacity()) {
            return Step::Miss(Miss::InFlight);
        }
        // RECOVERY: the reserver is dead. Claim `h` like an item (so no
        // two repairers give it up, and the producers of the next lap see
        // it claimed), then give it up.
        self.note(Side::Pop, h, 1);
        if self
            .head
            .compare_exchange(h, h.wrapping_add(1), Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return Step::Retry;
        }
        if slot.skip(lap, lap.wrapping_add(self.capacity())) {
            r.skipped.fetch_add(1, Ordering::Relaxed);
            r.recoveries.fetch_add(1, Ordering::Relaxed);
            if let Some(src) = self.repair {
                src.freed_slot();
            }
            return Step::Retry;
        }
        if slot.diff(slot.seq(), lap.wrapping_add(1)) == 0 {
            // Published after all (only scribbled records allow it): ours.
            return Step::Claimed(h);
        }
        Step::Retry
    }

    /// A producer at `t`: last lap's position `q = t - capacity` was
    /// claimed (`head > q`) but its slot not freed. Wait briefly; then,
    /// unless a live consumer's record covers `q`, free it. `Ok`: look
    /// again.
    #[cold]
    #[inline(never)]
    pub(super) fn unfreed(&self, t: u64) -> Result<(), Miss> {
        let cap = self.capacity();
        let q = t.wrapping_sub(cap);
        let slot = self.slot(t);
        let seq = slot.seq();
        if settles(|| slot.seq() != seq || self.tail.load(Ordering::Relaxed) != t) {
            return Ok(());
        }
        let Some(r) = self.repair.map(|r| r.repair()) else {
            return Err(Miss::InFlight);
        };
        if live_cover(r.table, Side::Pop, q, cap) {
            return Err(Miss::InFlight);
        }
        // No counter CAS guards the slot CAS below. With `tail` still at
        // `t` no later lap has reached this slot, so a 32-bit sequence
        // (narrow slots) cannot be read as a later lap's; a producer
        // stopped across 2^32 positions during the records' look (a
        // `kill` and a /proc read) sees `tail` moved instead. (Residue:
        // stopped between this load and the CAS, a few instructions.)
        if self.tail.load(Ordering::Acquire) != t {
            return Ok(());
        }
        // RECOVERY: the claimer is dead. Its item went with it; a hole a
        // dead repairer claimed and did not give up is given up here.
        let lq = self.lap(q);
        if slot.skip(lq.wrapping_add(1), lq.wrapping_add(cap)) {
            r.recoveries.fetch_add(1, Ordering::Relaxed);
            if let Some(src) = self.repair {
                src.freed_slot();
            }
        } else if slot.skip(lq, lq.wrapping_add(cap)) {
            r.skipped.fetch_add(1, Ordering::Relaxed);
            r.recoveries.fetch_add(1, Ordering::Relaxed);
            if let Some(src) = self.repair {
                src.freed_slot();
            }
        } else if slot.seq() == seq {
            // Neither: scribbled memory. Report full rather than loop.
            return Err(Miss::Settled);
        }
        Ok(())
    }
}
