//! The ring's pop for `pop_lease` on the integer queues
//! (src/intq/lease.rs): it notes the position and value it is about to
//! claim right before the claim, so that the lease table can hold an
//! intent. A child of `ring` for its private steps; the plain pops do not
//! use it.

use super::records::Side;
use super::{Element, Hook, Miss, Ring, SlotOps, Step, MAX_TRIES};
use crate::sync::Ordering;

impl<T: Element> Ring<'_, T> {
    /// [`Ring::try_pop`], calling `note(Some((pos, value)))` right before
    /// the CAS of `head` that claims the value at position `pos`, and
    /// `note(None)` right after such a CAS failed (the pop then goes on).
    /// A process killed between the two calls may or may not have taken
    /// the value; [`Ring::holds`] tells which afterwards.
    ///
    /// # Errors
    /// As [`Ring::try_pop`].
    pub(crate) fn try_pop_noted(&self, mut note: impl FnMut(Option<(u64, T)>)) -> Result<T, Miss> {
        for _ in 0..MAX_TRIES {
            let h = self.head.load(Ordering::Relaxed);
            let slot = self.slot(h);
            let lap = self.lap(h);
            let d = slot.diff(slot.seq(), lap.wrapping_add(1));
            if d == 0 {
                let v = slot.get();
                note(Some((h, v)));
                self.note(Side::Pop, h, 1);
                self.hit(Hook::PopRecorded);
                if self
                    .head
                    .compare_exchange(h, h.wrapping_add(1), Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    self.hit(Hook::PopClaimed);
                    slot.free(lap.wrapping_add(self.capacity()), v);
                    return Ok(v);
                }
                note(None);
                continue;
            }
            match self.pop_miss(h, d) {
                Step::Retry => {}
                Step::Miss(m) => {
                    self.unnote(Side::Pop);
                    return Err(m);
                }
                Step::Claimed(p) => {
                    let s = self.slot(p);
                    let v = s.get();
                    note(Some((p, v)));
                    s.free(self.lap(p).wrapping_add(self.capacity()), v);
                    return Ok(v);
                }
            }
        }
        self.unnote(Side::Pop);
        Err(Miss::Settled)
    }

    /// Whether position `pos` is still unclaimed (nobody has taken it):
    /// `head` has not passed it.
    pub(crate) fn holds(&self, pos: u64) -> bool {
        pos.wrapping_sub(self.head.load(Ordering::Acquire)) as i64 >= 0
    }
}
