//! Batches: a push that reserves a run of positions with one CAS of
//! `tail`, and a pop that claims a run with one CAS of `head` (see
//! "Counters are authoritative" in the ring's module docs).

use super::{Element, Hook, Miss, Ring, SlotOps};

impl<T: Element> Ring<'_, T> {
    /// Push the longest prefix of `vals` whose slots are free, with one
    /// reservation; returns how many went in (at least 1).
    ///
    /// # Errors
    /// As [`Ring::try_push`], when not even the first value fit (nothing
    /// was pushed). An empty `vals` is `Ok(0)`.
    #[inline]
    pub fn try_push_batch(&self, vals: &[T]) -> Result<usize, Miss> {
        if vals.is_empty() {
            return Ok(0);
        }
        let (t, m) = self.reserve(vals.len() as u64)?;
        self.publish_run(t, &vals[..m as usize]);
        Ok(m as usize)
    }

    /// Publish `vals` into the reserved positions from `t`, in order
    /// (crate-visible for the loom models, src/models/).
    #[inline]
    pub(crate) fn publish_run(&self, t: u64, vals: &[T]) {
        for (i, &v) in vals.iter().enumerate() {
            let p = t.wrapping_add(i as u64);
            self.slot(p).put(self.lap(p), v);
            if i == 0 && vals.len() > 1 {
                self.hit(Hook::PushMidRun);
            }
        }
    }

    /// Pop up to `out.len()` items in queue order with one claim; returns
    /// how many were written to `out` (at least one).
    ///
    /// # Errors
    /// As [`Ring::try_pop`], when not even the first item could be taken
    /// (nothing was written to `out`). An empty `out` is `Ok(0)`.
    #[inline]
    pub fn try_pop_batch(&self, out: &mut [T]) -> Result<usize, Miss> {
        if out.is_empty() {
            return Ok(0);
        }
        let (h, m) = self.claim(out.len() as u64)?;
        let cap = self.capacity();
        for (i, o) in out[..m as usize].iter_mut().enumerate() {
            let p = h.wrapping_add(i as u64);
            let s = self.slot(p);
            let v = s.get();
            *o = v;
            s.free(self.lap(p).wrapping_add(cap), v);
            if i == 0 && m > 1 {
                self.hit(Hook::PopMidRun);
            }
        }
        Ok(m as usize)
    }
}
