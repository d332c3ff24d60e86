//! Batches: a push that reserves a run of positions with one CAS of
//! `tail`, and a pop that takes slot by slot (see "Batches" in the
//! ring's module docs).

use super::{Element, Hook, Miss, Ring, SlotOps, MAX_WALK};
use crate::sync::Ordering;

impl<T: Element> Ring<'_, T> {
    /// Push the longest prefix of `vals` that fits; returns how many went
    /// in (possibly 0 when peers took the room first: call again).
    ///
    /// Checks that the slots of `tail .. tail + m` are free, reserves them
    /// with one CAS of `tail`, then publishes value after value, each into
    /// the next reserved slot that is still free for its position. A slot
    /// a peer filled (its `tail` hint was behind) or a consumer gave up is
    /// passed over with the same value, so the values go in order into
    /// increasing positions and none is lost; at most the tail of `vals`
    /// is left for the caller's next call.
    ///
    /// # Errors
    /// [`Miss::Settled`] when the ring is full at `tail` (nothing was
    /// pushed), as for [`Ring::try_push`]. An empty `vals` is `Ok(0)`.
    #[inline]
    pub fn try_push_batch(&self, vals: &[T]) -> Result<usize, Miss> {
        if vals.is_empty() {
            return Ok(0);
        }
        let want = (vals.len() as u64).min(self.capacity());
        let mut pos = self.tail.load(Ordering::Relaxed);
        for walked in 0..MAX_WALK {
            let slot = self.slot(pos);
            let d = slot.diff(slot.seq(), self.lap(pos));
            if d == 0 {
                let mut m = 1u64;
                while m < want {
                    let p = pos.wrapping_add(m);
                    let s = self.slot(p);
                    if s.diff(s.seq(), self.lap(p)) != 0 {
                        break;
                    }
                    m += 1;
                }
                if m == 1 {
                    // No run to reserve: a plain push.
                    if slot.publish(self.lap(pos), vals[0]) {
                        self.tail.store(pos.wrapping_add(1), Ordering::Relaxed);
                        return Ok(1);
                    }
                    continue;
                }
                // SYNC POINT: the reservation. Producers that read `tail`
                // after it start past the run; one that read it before may
                // still fill a slot of it, which the publish CAS settles.
                match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(m),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Ok(self.publish_run(pos, m, vals)),
                    Err(cur) => pos = cur,
                }
            } else if d > 0 {
                pos = self.step(self.tail, pos, 0, walked);
            } else if !self.behind(d, 0) {
                return Err(Miss::Settled);
            } else {
                pos = self.rebase(pos, 0, d, walked).ok_or(Miss::Settled)?;
            }
        }
        Err(Miss::Settled)
    }

    /// Publish `vals` in order into the reserved positions `pos .. pos + m`
    /// (`m <= vals.len()`), passing over a slot a peer filled or a
    /// consumer gave up; how many went in. Out of line: with only the run's
    /// own state live, the 16-byte CAS of each slot leaves the loop enough
    /// registers (inlined into the reservation walk it spilled and reloaded
    /// five of them per item).
    #[inline(never)]
    pub(super) fn publish_run(&self, pos: u64, m: u64, vals: &[T]) -> usize {
        debug_assert!(m <= vals.len() as u64);
        let mut n = 0usize;
        for i in 0..m {
            let p = pos.wrapping_add(i);
            // SAFETY: n <= i < m <= vals.len() (one item per position at
            // most), so `n` indexes `vals`.
            let v = unsafe { *vals.get_unchecked(n) };
            if self.slot(p).publish(self.lap(p), v) {
                n += 1;
                if n == 1 {
                    self.hit(Hook::PushReserved);
                }
            }
        }
        n
    }

    /// Pop up to `out.len()` items in queue order, slot by slot; returns
    /// how many were written to `out` (at least one unless `out` is empty).
    ///
    /// # Errors
    /// As [`Ring::try_pop`], when not even the first item could be taken
    /// (nothing was written to `out`). An empty `out` is `Ok(0)`.
    #[inline]
    pub fn try_pop_batch(&self, out: &mut [T]) -> Result<usize, Miss> {
        if out.is_empty() {
            return Ok(0);
        }
        let cap = self.capacity();
        let mut pos = self.head.load(Ordering::Relaxed);
        let mut n = 0usize;
        let mut walked = 0u32;
        while n < out.len() {
            let slot = self.slot(pos);
            let lap = self.lap(pos);
            let d = slot.diff(slot.seq(), lap.wrapping_add(1));
            if d == 0 {
                if let Some(v) = slot.take(lap, lap.wrapping_add(cap)) {
                    // SAFETY of the index: n < out.len() (loop condition).
                    out[n] = v;
                    n += 1;
                    pos = pos.wrapping_add(1);
                    continue;
                }
            } else if d < 0 {
                if n > 0 {
                    break;
                }
                if self.behind(d, 1) {
                    match self.rebase(pos, 1, d, walked) {
                        Some(p) => pos = p,
                        None => break,
                    }
                } else if let Some(m) = self.unpublished_at(pos) {
                    return Err(m);
                }
                // Else repaired, or the slot moved: look again, but count
                // the step (a slot a repair cannot move, as hostile memory
                // can leave one, would otherwise spin here forever).
            } else if n == 0 {
                pos = self.step(self.head, pos, 1, walked);
            } else {
                // A peer took this one; our run continues after it.
                pos = pos.wrapping_add(1);
            }
            walked += 1;
            if walked >= MAX_WALK {
                break;
            }
        }
        if n == 0 {
            return Err(Miss::Settled);
        }
        self.head.store(pos, Ordering::Relaxed);
        Ok(n)
    }
}
