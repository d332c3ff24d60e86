//! The batch calls of `StrQueue`: `push_multi` and `pop_multi`, many
//! items under one lock.

use super::locking::Ends;
use super::{failure_errno, set_errno, StrQueue};
use crate::compress;
use crate::error::{Error, Result};
use crate::futex::Deadline;
use crate::lock::LockFail;
use crate::sync::Ordering;
use crate::wait::Waited;

/// A batch push without a deadline: its lock wait ends only at the lock
/// timeout, which gives 0 pushed.
fn done_or_none(w: Waited<usize>) -> usize {
    match w {
        Waited::Done(n) => n,
        Waited::TimedOut | Waited::Interrupted => 0,
    }
}

impl StrQueue {
    /// Push `items` at the back, in order, under one lock, until one does
    /// not fit now (a full queue or arena); returns how many were pushed.
    /// Stopping early counts once in `push_full`. Wakes one consumer per
    /// item pushed.
    ///
    /// # Errors
    /// As [`StrQueue::push`] when any item could never fit; then nothing is
    /// pushed (all items are checked before the lock is taken).
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// let batch: [(&[u8], bool); 5] =
    ///     [(b"a", false), (b"b", false), ("\u{e9}".as_bytes(), true), (b"d", false), (b"e", false)];
    /// assert_eq!(q.push_multi(&batch)?, 4); // the fifth did not fit
    /// let (mut bytes, mut items) = (Vec::new(), Vec::new());
    /// assert_eq!(q.pop_multi(10, Some(2), &mut bytes, &mut items), 2); // at most 2 bytes
    /// assert_eq!(items, [(0, 1, false), (1, 1, false)]);
    /// assert_eq!(bytes, b"ab");
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_multi(&self, items: &[(&[u8], bool)]) -> Result<usize> {
        self.push_multi_in(items, None).map(done_or_none)
    }

    /// [`StrQueue::push_multi`], its lock wait ending at `wait` (or a
    /// signal) if given, else at the lock timeout.
    fn push_multi_in(
        &self,
        items: &[(&[u8], bool)],
        wait: Option<&Deadline>,
    ) -> Result<Waited<usize>> {
        // HOOK(compress): compress what this handle compresses, first (no
        // look at the items when it is off).
        let min = self.compress.min.load(Ordering::Relaxed);
        if min != u64::MAX && items.iter().any(|(b, _)| b.len() as u64 >= min) {
            let level = self.compress.level.load(Ordering::Relaxed);
            let wants = |len: usize| len as u64 >= self.compress.min.load(Ordering::Relaxed);
            return compress::with_packed_batch(items, wants, level, |stored| {
                for &(b, _, packed, orig) in stored {
                    self.check_stored(b.len(), packed.then_some(orig))?;
                }
                Ok(self.push_multi_stored(
                    stored.len(),
                    stored
                        .iter()
                        .map(|&(b, utf8, packed, orig)| (b, utf8, packed.then_some(orig))),
                    wait,
                ))
            });
        }
        for (b, _) in items {
            self.check(b.len())?;
        }
        Ok(self.push_multi_stored(
            items.len(),
            items.iter().map(|&(b, utf8)| (b, utf8, None)),
            wait,
        ))
    }

    /// [`StrQueue::push_multi`] of the items `items` yields, each
    /// `(bytes, utf8)`, read where they lie (the C ABI's array of item
    /// descriptions is not first copied into a slice of pairs): walked once
    /// to check that every item can ever fit (nothing is pushed otherwise),
    /// then again to store them under one lock. A handle that compresses,
    /// with an item long enough for it, takes [`StrQueue::push_multi`] on a
    /// collected copy.
    ///
    /// # Errors
    /// As [`StrQueue::push_multi`].
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// let words = ["a", "b", "c", "d", "e"];
    /// assert_eq!(q.push_multi_iter(words.iter().map(|w| (w.as_bytes(), false)))?, 4);
    /// let mut buf = Vec::new();
    /// assert_eq!(q.pop(false, &mut buf), Some(false));
    /// assert_eq!(buf, b"a");
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_multi_iter<'b, I>(&self, items: I) -> Result<usize>
    where
        I: ExactSizeIterator<Item = (&'b [u8], bool)> + Clone,
    {
        self.push_multi_iter_in(items, None).map(done_or_none)
    }

    /// [`StrQueue::push_multi_iter`] for a blocked batch (a caller that
    /// goes on with [`StrQueue::push_wait`] for what did not fit): the
    /// wait for the back lock ends at `deadline` (`TimedOut`) or at a
    /// signal (`Interrupted`), with nothing pushed, instead of at the
    /// handle's lock timeout.
    ///
    /// # Errors
    /// As [`StrQueue::push_multi`].
    pub fn push_multi_iter_until<'b, I>(
        &self,
        items: I,
        deadline: &Deadline,
    ) -> Result<Waited<usize>>
    where
        I: ExactSizeIterator<Item = (&'b [u8], bool)> + Clone,
    {
        self.push_multi_iter_in(items, Some(deadline))
    }

    fn push_multi_iter_in<'b, I>(&self, items: I, wait: Option<&Deadline>) -> Result<Waited<usize>>
    where
        I: ExactSizeIterator<Item = (&'b [u8], bool)> + Clone,
    {
        // HOOK(compress): as push_multi decides it.
        let min = self.compress.min.load(Ordering::Relaxed);
        if min != u64::MAX && items.clone().any(|(b, _)| b.len() as u64 >= min) {
            let batch: Vec<(&[u8], bool)> = items.collect();
            return self.push_multi_in(&batch, wait);
        }
        for (b, _) in items.clone() {
            self.check(b.len())?;
        }
        Ok(self.push_multi_stored(items.len(), items.map(|(b, utf8)| (b, utf8, None)), wait))
    }

    /// [`StrQueue::push_multi`] of `len` checked items to store, each
    /// with `packed` as for [`Locked::put_any`]; the lock wait as for
    /// [`StrQueue::push_multi_in`] (a lock timeout gives `Done(0)` with
    /// `errno` set).
    fn push_multi_stored<'b>(
        &self,
        len: usize,
        items: impl Iterator<Item = (&'b [u8], bool, Option<u64>)>,
        wait: Option<&Deadline>,
    ) -> Waited<usize> {
        let mut n = 0usize;
        {
            let mut l = match wait {
                None => match self.locked::<true>(Ends::Back) {
                    Some(l) => l,
                    None => return Waited::Done(0),
                },
                Some(d) => match self.lock_until::<true>(Ends::Back, || *d, true) {
                    Ok(l) => l,
                    Err(LockFail::TimedOut) => return Waited::TimedOut,
                    Err(LockFail::Interrupted) => return Waited::Interrupted,
                },
            };
            for (b, utf8, packed) in items {
                if !l.put_any(b, utf8, false, packed) {
                    break;
                }
                n += 1;
            }
        }
        if n < len {
            self.count_full();
            self.missed();
        }
        self.consumers().wake(u32::try_from(n).unwrap_or(u32::MAX));
        Waited::Done(n)
    }

    /// Pop up to `n` items from the front under one lock, appending their
    /// bytes to `out` and `(start, len, utf8)` for each to `items` (`start`
    /// indexes `out`). With `max_bytes`, stop before the total length of
    /// the items taken would exceed it, but always take the first item if
    /// there is one. Returns how many were taken; none (with `n > 0`)
    /// counts in `pop_empty`.
    ///
    /// # Examples
    ///
    /// See [`StrQueue::push_multi`].
    pub fn pop_multi(
        &self,
        n: usize,
        max_bytes: Option<u64>,
        out: &mut Vec<u8>,
        items: &mut Vec<(usize, usize, bool)>,
    ) -> usize {
        self.pop_multi_budget(n, max_bytes, true, out, items)
    }

    /// [`StrQueue::pop_multi`], where `first_exempt = false` makes the
    /// budget apply to the first item too (for a batch that continues one
    /// already started, as `pop_wait_multi` does after its blocking pop).
    /// A batch that meets an item it cannot decode returns 0 with `errno`
    /// set as [`StrQueue::pop`] does (see [`StrQueue::pop_multi_checked`]).
    pub fn pop_multi_budget(
        &self,
        n: usize,
        max_bytes: Option<u64>,
        first_exempt: bool,
        out: &mut Vec<u8>,
        items: &mut Vec<(usize, usize, bool)>,
    ) -> usize {
        self.pop_multi_checked(n, max_bytes, first_exempt, out, items)
            .unwrap_or_else(|e| {
                set_errno(failure_errno(&e));
                0
            })
    }

    /// [`StrQueue::pop_multi_budget`], with a compressed item that cannot
    /// be decoded reported as [`StrQueue::pop_checked`] does. The budget
    /// counts compressed items at their decoded length. Items are decoded
    /// after the lock is released, so the whole batch has been removed by
    /// then: the items taken with a bad one are lost with it (the error
    /// says how many), and `out` and `items` are left as they were.
    ///
    /// # Errors
    /// As [`StrQueue::pop_checked`].
    pub fn pop_multi_checked(
        &self,
        n: usize,
        max_bytes: Option<u64>,
        first_exempt: bool,
        out: &mut Vec<u8>,
        items: &mut Vec<(usize, usize, bool)>,
    ) -> Result<usize> {
        let mut got = 0usize;
        let mut over_budget = false;
        let (out0, items0) = (out.len(), items.len());
        // HOOK(compress): which of the items taken are compressed.
        let mut packed = Vec::new();
        // HOOK(lease): as in `pop`.
        if self.leases_busy() {
            self.plain_lease_look();
        }
        {
            let Some(mut l) = self.locked::<true>(Ends::Front) else {
                return Ok(0);
            };
            let mut total = 0u64;
            // The items there when the lock was taken, at most the
            // capacity: what one call may take. `count()` is clamped each
            // time, but every item taken moves `head`, so in hostile
            // memory (a `tail` far past `head`) a loop bounded by it alone
            // would go round the slots ~2^31 times (Perl's drain asks for
            // SIZE_MAX). Items pushed meanwhile are left for the next call.
            let n = n.min(l.count() as usize);
            while got < n {
                if let (Some(budget), true) = (max_bytes, got > 0 || !first_exempt) {
                    match l.read_end(false) {
                        Some(i) if total.saturating_add(self.item_len(i)) <= budget => {}
                        Some(_) => {
                            over_budget = true;
                            break;
                        }
                        None => break,
                    }
                }
                let Some(t) = l.copy_end(false, true, out) else {
                    break;
                };
                let len = if t.packed {
                    packed.push(items.len());
                    self.packed_len(&out[t.start..t.start + t.len], t.len as u64)
                } else {
                    t.len as u64
                };
                total = total.saturating_add(len);
                items.push((t.start, t.len, t.utf8));
                got += 1;
            }
        }
        if got > 0 {
            self.wake_producers();
        } else if n > 0 && !over_budget {
            self.count_empty();
            self.missed();
        }
        if !packed.is_empty() {
            // HOOK(compress): decode, the lock released.
            compress::unpack_batch(out, items, items0, out0, &packed).map_err(|e| match e {
                Error::Corrupt(m) if got > 1 => Error::Corrupt(format!(
                    "{m}; the {} other items taken with it are lost",
                    got - 1
                )),
                e => e,
            })?;
        }
        Ok(got)
    }
}
