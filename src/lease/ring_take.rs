//! The ring's pop with a note before the take, for `pop_lease` on the
//! integer queues (see the `lease` module): a child of `ring` for its
//! private walk steps. The plain pops do not use it.

use super::{Hook, Miss, Ring, SlotOps, MAX_WALK};
use crate::ring::Element;
use crate::sync::Ordering;

impl<T: Element> Ring<'_, T> {
    /// [`Ring::try_pop`], calling `note(Some((pos, value)))` right before
    /// the CAS that takes the value at position `pos`, and `note(None)`
    /// right after such a CAS failed (the walk then goes on). A process
    /// killed between the two calls may or may not have taken the value;
    /// [`Ring::holds`] tells which afterwards, unless another consumer
    /// has taken it since.
    ///
    /// # Errors
    /// As [`Ring::try_pop`].
    pub(crate) fn try_pop_noted(&self, mut note: impl FnMut(Option<(u64, T)>)) -> Result<T, Miss> {
        let mut pos = self.head.load(Ordering::Relaxed);
        let mut walked = 0u32;
        loop {
            let slot = self.slot(pos);
            let lap = self.lap(pos);
            let d = slot.diff(slot.seq(), lap.wrapping_add(1));
            if d == 0 {
                note(Some((pos, slot.value())));
                if let Some(v) = slot.take(lap, lap.wrapping_add(self.capacity())) {
                    self.hit(Hook::PopClaimed);
                    self.head.store(pos.wrapping_add(1), Ordering::Relaxed);
                    return Ok(v);
                }
                note(None);
            } else if d > 0 {
                pos = self.step(self.head, pos, 1, walked);
            } else if self.behind(d, 1) {
                pos = self.rebase(pos, 1, d, walked).ok_or(Miss::Settled)?;
            } else if let Some(m) = self.unpublished_at(pos) {
                return Err(m);
            }
            walked += 1;
            if walked >= MAX_WALK {
                return Err(Miss::Settled);
            }
        }
    }

    /// Whether the slot of position `pos` still holds that position's
    /// published value (nobody has taken it).
    pub(crate) fn holds(&self, pos: u64) -> bool {
        let slot = self.slot(pos);
        slot.diff(slot.seq(), self.lap(pos).wrapping_add(1)) == 0
    }
}
