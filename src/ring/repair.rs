//! Giving up stuck batch reservations: the shared [`Repair`] state, where
//! a ring finds it ([`RepairSource`]), and what a consumer does when the
//! position it needs is reserved but not published (see "Batches" in
//! the ring's module docs).

use super::{Element, Miss, Ring, SlotOps};
use crate::sync::{AtomicU64, Ordering};

/// Shared state for giving up stuck reservations (see the module docs).
#[derive(Clone, Copy)]
pub struct Repair<'a> {
    /// Position + 1 of the reservation last seen stuck (0: none).
    pub stuck_pos: &'a AtomicU64,
    /// CLOCK_MONOTONIC ns when it was first seen stuck.
    pub stuck_since: &'a AtomicU64,
    /// Positions given up (no item): subtracted from the push and pop
    /// counts.
    pub skipped: &'a AtomicU64,
    /// Recoveries of any kind (stats).
    pub recoveries: &'a AtomicU64,
    /// How long a position must stay stuck before it is given up.
    pub after_ns: u64,
}

/// Where a ring finds its [`Repair`] state. Looked up only when a consumer
/// meets an unpublished position, so the fast paths carry one pointer (the
/// queue header implements it) instead of the whole set.
pub trait RepairSource: Sync {
    /// The repair cells and bound.
    fn repair(&self) -> Repair<'_>;
}

impl RepairSource for Repair<'_> {
    fn repair(&self) -> Repair<'_> {
        *self
    }
}

impl<T: Element> Ring<'_, T> {
    /// [`unpublished`](Self::unpublished) for this ring. Passes the parts
    /// it needs, not `self`, so the fast paths never have to lay the ring
    /// out in memory for the call (nor compute the repair fields).
    #[inline(always)]
    pub(super) fn unpublished_at(&self, pos: u64) -> Option<Miss> {
        Self::unpublished(self.tail, self.slot(pos), pos, self.capacity(), self.repair)
    }

    /// A consumer found position `pos` (slot `slot`) not published. Empty,
    /// unless a batch reservation covers it; a reservation stuck long
    /// enough is given up (then `None`: look again).
    #[cold]
    #[inline(never)]
    fn unpublished(
        tail: &AtomicU64,
        slot: &T::Slot,
        pos: u64,
        cap: u64,
        repair: Option<&dyn RepairSource>,
    ) -> Option<Miss> {
        // `tail` in (pos, pos + capacity]: reserved, not yet published.
        // Compared in the slot's width, like the sequences: a hint may
        // come from another 2^32 lap of a narrow ring's positions.
        let ahead = slot.diff(tail.load(Ordering::SeqCst), pos);
        if ahead < 1 || ahead > cap as i64 {
            return Some(Miss::Settled);
        }
        let Some(r) = repair.map(RepairSource::repair) else {
            return Some(Miss::InFlight);
        };
        if r.after_ns > 0 {
            let now = crate::clock::now_ns();
            let key = pos.wrapping_add(1);
            if r.stuck_pos.load(Ordering::Relaxed) != key {
                // First sighting: start the clock (racy between consumers;
                // a lost update only moves the repair a little).
                r.stuck_since.store(now, Ordering::Relaxed);
                r.stuck_pos.store(key, Ordering::Relaxed);
                return Some(Miss::InFlight);
            }
            if now.wrapping_sub(r.stuck_since.load(Ordering::Relaxed)) < r.after_ns {
                return Some(Miss::InFlight);
            }
        }
        // RECOVERY: give the position up. Its producer, if alive, fails its
        // publish CAS and places the item elsewhere.
        let lap = pos & !(cap - 1);
        if slot.skip(lap, lap.wrapping_add(cap)) {
            r.skipped.fetch_add(1, Ordering::Relaxed);
            r.recoveries.fetch_add(1, Ordering::Relaxed);
            // The next position of a dead run has waited as long: hand the
            // clock on (`stuck_since` stays), so it goes without a new wait.
            r.stuck_pos.store(pos.wrapping_add(2), Ordering::Relaxed);
        }
        None
    }
}
