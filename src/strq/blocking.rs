//! The blocking calls of `StrQueue`, `push_wait` and `pop_wait`: one
//! attempt under the lock per wake-up, by [`block_on_looking`] (see "Waiting" in
//! the module docs); `pop_wait` looks without the lock first.

use super::locking::{flatten, Ends};
use super::{failure_errno, set_errno, StrQueue};
use crate::compress;
use crate::error::Result;
use crate::futex::Deadline;
use crate::lock::LockFail;
use crate::sync::Ordering;
use crate::wait::{block_on_looking, Miss, Waited};

impl StrQueue {
    /// Push at the back (or the front), sleeping while there is no room,
    /// until `deadline`. A timeout counts in `push_full`.
    ///
    /// # Errors
    /// As [`StrQueue::push`], checked before waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{Deadline, StrQueue, Waited};
    /// let q = StrQueue::anonymous(2, 0)?;
    /// let d = Deadline::after_secs(0.01);
    /// assert_eq!(q.push_wait(b"a", false, false, &d)?, Waited::Done(()));
    /// assert_eq!(q.push_wait(b"b", false, true, &d)?, Waited::Done(())); // at the front
    /// // Full: waits until the deadline (retry on Interrupted).
    /// let w = loop {
    ///     match q.push_wait(b"c", false, false, &d)? {
    ///         Waited::Interrupted => continue,
    ///         w => break w,
    ///     }
    /// };
    /// assert_eq!(w, Waited::TimedOut);
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_wait(
        &self,
        bytes: &[u8],
        utf8: bool,
        front: bool,
        deadline: &Deadline,
    ) -> Result<Waited<()>> {
        // HOOK(compress): compress once, before waiting.
        if self.packs(bytes) {
            let level = self.compress.level.load(Ordering::Relaxed);
            return compress::with_packed(bytes, level, |stored, packed| {
                let orig = packed.then_some(bytes.len() as u64);
                self.check_stored(stored.len(), orig)?;
                self.push_wait_stored(stored, utf8, front, deadline, orig)
            });
        }
        self.check(bytes.len())?;
        self.push_wait_stored(bytes, utf8, front, deadline, None)
    }

    /// [`StrQueue::push_wait`] of the bytes to store, checked; `packed` as
    /// for [`Locked::put_any`].
    fn push_wait_stored(
        &self,
        bytes: &[u8],
        utf8: bool,
        front: bool,
        deadline: &Deadline,
        packed: Option<u64>,
    ) -> Result<Waited<()>> {
        // SYNC POINT (see "Waiting" in the module docs): an attempt that
        // finds no room settles with the front (`settle_with`: the front
        // lock seen free by a SeqCst load, or taken) and looks again
        // before it reports a settled miss. A consumer frees room under
        // the front lock, unlocks, then checks `push_waiters` (SeqCst);
        // this producer announces itself (SeqCst), then looks at the
        // front lock. In the single SeqCst order either the consumer's
        // check comes after our announcement (it wakes us), or its lock
        // CAS comes after our look at the lock word, so our look read
        // the lock free only from its unlock or later (then the look
        // again sees the room it made) or saw it held (then we wait for
        // the lock, and the same holds for our CAS). A push at the front
        // holds both locks in its attempt, which settles by itself.
        // The retries before the announcement look at the slot count
        // without a lock (a queue full of slots takes no lock while its
        // producer spins; one out of bytes is seen under the lock).
        let ends = Ends::push(front);
        let r = flatten(block_on_looking(
            self.producers(),
            deadline,
            || self.looks_full(),
            || {
                let mut l = match self.lock_until::<true>(ends, || *deadline, true) {
                    Err(f) => return Ok(Err(f)),
                    Ok(l) => l,
                };
                if l.put_any(bytes, utf8, front, packed) {
                    return Ok(Ok(()));
                }
                if ends == Ends::Back {
                    // Settle with the back lock let go (as pop_wait does with
                    // the front lock): waiting for the front lock while holding
                    // the back one would hold up every producer while a
                    // consumer holding the front lock is stopped.
                    drop(l);
                    if let Err(f) = self.settle_with(false, deadline) {
                        return Ok(Err(f));
                    }
                    l = match self.lock_until::<true>(ends, || *deadline, true) {
                        Err(f) => return Ok(Err(f)),
                        Ok(l) => l,
                    };
                    if l.put_any(bytes, utf8, front, packed) {
                        return Ok(Ok(()));
                    }
                }
                Err(Miss::Settled)
            },
        ));
        match r {
            Waited::Done(()) => self.consumers().wake(1),
            Waited::TimedOut => self.count_full(),
            Waited::Interrupted => {}
        }
        Ok(r)
    }

    /// [`StrQueue::pop`], sleeping while the queue is empty, until
    /// `deadline`. A timeout counts in `pop_empty`. `Interrupted` (a
    /// signal) means nothing was popped: call again with the same deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{Deadline, StrQueue, Waited};
    /// let q = StrQueue::anonymous(8, 0)?;
    /// let mut buf = Vec::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| q.push("\u{263a}".as_bytes(), true));
    ///     let d = Deadline::after_secs(10.0);
    ///     let w = loop {
    ///         match q.pop_wait(false, &mut buf, &d) {
    ///             Waited::Interrupted => continue,
    ///             w => break w,
    ///         }
    ///     };
    ///     assert_eq!(w, Waited::Done(true));
    /// });
    /// assert_eq!(buf, "\u{263a}".as_bytes());
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn pop_wait(&self, back: bool, out: &mut Vec<u8>, deadline: &Deadline) -> Waited<bool> {
        self.pop_wait_checked(back, out, deadline)
            .unwrap_or_else(|e| {
                set_errno(failure_errno(&e));
                Waited::TimedOut
            })
    }

    /// [`StrQueue::pop_wait`], with an item that cannot be decoded
    /// reported as [`StrQueue::pop_checked`] does (the unchecked form
    /// reports it as `TimedOut` with `errno` set as [`StrQueue::pop`]
    /// does).
    ///
    /// # Errors
    /// As [`StrQueue::pop_checked`].
    pub fn pop_wait_checked(
        &self,
        back: bool,
        out: &mut Vec<u8>,
        deadline: &Deadline,
    ) -> Result<Waited<bool>> {
        // SYNC POINT: as in push_wait, with the roles swapped: a producer
        // publishes under the back lock, unlocks, then checks
        // `pop_waiters` (SeqCst). A front pop settles with the back after
        // its own lock is released (the back lock is never taken after
        // the front one), then tries once more; a back pop holds both.
        let ends = Ends::pop(back);
        let r = loop {
            // HOOK(lease): while leases are open, sleep at most 50 ms at a
            // time and look for dead holders when due, as `pop` does.
            // A new due time of a delayed item ends the slice (as a
            // lock timeout: the loop computes it again).
            let (slice, hint) = if self.leases_busy() {
                (
                    self.busy_slice(deadline),
                    crate::lease::due_hint(&self.region),
                )
            } else {
                (*deadline, 0)
            };
            let mut take = || {
                out.clear();
                match self.lock_until::<true>(ends, || *deadline, true) {
                    Err(f) => Ok(Err(f)),
                    Ok(mut l) => match l.copy_end(back, true, out) {
                        Some(t) => Ok(Ok((t.utf8, t.packed))),
                        None => Err(Miss::Settled),
                    },
                }
            };
            // An attempt first looks at the side words without a lock (as
            // a plain pop does), and believes an "empty" only once it has
            // settled with the back and looked again, as `pop_lease_wait`
            // does (the loom model
            // `loom_str_split_blocked_lease_look_settles_with_the_back`);
            // so a blocked consumer takes a lock only when there is an
            // item to take, about once per item, and none while it spins
            // (the retries only look). A locked miss after a look that saw
            // an item (another consumer was first) settles as before. While
            // leases are open, a due look for dead holders comes first: it
            // puts their items back at the front.
            let attempt = || {
                if self.leases_busy() {
                    self.plain_lease_look();
                }
                let mut settled = false;
                if self.looks_empty() {
                    if let Err(f) = self.settle_with(true, deadline) {
                        return Ok(Err(f));
                    }
                    if self.looks_empty() {
                        if self.due_changed(hint) {
                            return Ok(Err(LockFail::TimedOut));
                        }
                        return Err(Miss::Settled);
                    }
                    settled = true;
                }
                match take() {
                    Err(Miss::Settled) if !settled && ends == Ends::Front => {
                        if let Err(f) = self.settle_with(true, deadline) {
                            return Ok(Err(f));
                        }
                        take()
                    }
                    r => r,
                }
            };
            let w = flatten(block_on_looking(
                self.consumers(),
                &slice,
                || self.looks_empty(),
                attempt,
            ));
            match w {
                Waited::TimedOut if !deadline.expired() => {}
                w => break w,
            }
        };
        match r {
            Waited::Done((utf8, packed)) => {
                self.wake_producers();
                // HOOK(compress): decode, the lock released.
                if packed {
                    compress::unpack(out)?;
                }
                Ok(Waited::Done(utf8))
            }
            Waited::TimedOut => {
                self.count_empty();
                Ok(Waited::TimedOut)
            }
            Waited::Interrupted => Ok(Waited::Interrupted),
        }
    }
}
