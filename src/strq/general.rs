//! The single-item calls of `StrQueue` at both ends (`push`, `push_front`,
//! `pop` at either end, `peek`): which code serves a call (the fast paths
//! of `fast.rs`, or the hooked copy for a handle with a crash point), and
//! the general code every other case runs under the lock.

use super::locking::Ends;
use super::state::Locked;
use super::{failure_errno, set_errno, StrQueue};
use crate::compress;
use crate::error::Result;
use crate::lock::LockGuard;
use crate::testpoint::KillPoint;

impl StrQueue {
    /// `push` and `push_front` for a handle with a crash point: the same
    /// code with the hooks compiled in.
    #[cold]
    #[inline(never)]
    fn push_hooked(&self, bytes: &[u8], utf8: bool, front: bool) -> Result<bool> {
        if front {
            self.push_general::<true>(bytes, utf8, true)
        } else {
            self.push_back::<true>(bytes, utf8)
        }
    }

    /// A push at either end, every case: the length check, a lock that may
    /// have to be waited for (at the front both), any placement.
    #[inline(never)]
    pub(super) fn push_general<const H: bool>(
        &self,
        bytes: &[u8],
        utf8: bool,
        front: bool,
    ) -> Result<bool> {
        self.check(bytes.len())?;
        if self.looks_full() {
            return self.found_full();
        }
        let Some(mut l) = self.locked::<H>(Ends::push(front)) else {
            return Ok(false);
        };
        let ok = l.put(bytes, utf8, front);
        l.release();
        self.after_put(ok)
    }

    /// [`StrQueue::push_general`] at the back once the back lock is held
    /// (`guard`) and the length checked: the fast path's fallback. Cold
    /// for the layout of the hot path that falls back to it.
    #[cold]
    #[inline(never)]
    pub(super) fn push_locked<const H: bool, const FRONT: bool>(
        &self,
        guard: LockGuard<'_>,
        bytes: &[u8],
        utf8: bool,
    ) -> Result<bool> {
        debug_assert!(!FRONT);
        let mut l = Locked::<H>::new(self, Some(guard), None);
        let ok = l.put(bytes, utf8, FRONT);
        l.release();
        self.after_put(ok)
    }

    /// After a push found every slot taken (without the lock): count the
    /// miss; no room.
    #[inline(never)]
    pub(super) fn found_full(&self) -> Result<bool> {
        self.count_full();
        self.missed();
        Ok(false)
    }

    /// After a locked push of one item released the lock: wake a consumer
    /// if it went in, else count the miss.
    pub(super) fn after_put(&self, ok: bool) -> Result<bool> {
        if ok {
            self.consumers().wake(1);
            Ok(true)
        } else {
            self.found_full()
        }
    }

    /// Push a copy of `bytes` (with its UTF-8 flag) at the back.
    ///
    /// Returns `Ok(false)` when there is no room now: every slot is taken,
    /// or the arena has no contiguous space for it (counted in `push_full`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the
    /// string could never fit: longer than the usable arena, or than
    /// [`MAX_ITEM`](crate::layout::MAX_ITEM) bytes. The message names both
    /// sizes.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{Error, StrQueue};
    /// let q = StrQueue::anonymous(2, 4096)?;
    /// assert!(q.push(b"", false)?); // empty strings are items too
    /// assert!(q.push(&[0, 255], false)?);
    /// assert!(!q.push(b"x", false)?); // every slot taken: try later
    /// let err = q.push(&[0; 5000], false).unwrap_err(); // can never fit
    /// assert!(matches!(err, Error::InvalidArgument(_)));
    /// assert_eq!(err.to_string(), "string of 5000 bytes exceeds the arena of 4096 bytes");
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        // HOOK(compress): one load and one compare when compression is off.
        if self.packs(bytes) {
            return self.push_packed(bytes, utf8, false);
        }
        self.push_plain(bytes, utf8)
    }

    /// [`StrQueue::push`] storing `bytes` as they are.
    #[inline(always)]
    pub(super) fn push_plain(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        match self.kill_point {
            KillPoint::None => self.push_back::<false>(bytes, utf8),
            _ => self.push_hooked(bytes, utf8, false),
        }
    }

    /// Push a copy of `bytes` at the front (it becomes the next item
    /// popped). As [`StrQueue::push`] otherwise.
    ///
    /// # Errors
    /// As [`StrQueue::push`].
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// q.push(b"second", false)?;
    /// q.push(b"third", false)?;
    /// q.push_front(b"urgent", false)?; // jumps the queue
    /// let mut buf = Vec::new();
    /// q.pop(false, &mut buf); // the front
    /// assert_eq!(buf, b"urgent");
    /// q.pop(true, &mut buf); // the back: a stack at that end
    /// assert_eq!(buf, b"third");
    /// q.pop(true, &mut buf);
    /// assert_eq!(buf, b"second");
    /// assert_eq!(q.pop(true, &mut buf), None);
    /// assert!(buf.is_empty());
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_front(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        // HOOK(compress)
        if self.packs(bytes) {
            return self.push_packed(bytes, utf8, true);
        }
        self.push_front_plain(bytes, utf8)
    }

    /// [`StrQueue::push_front`] storing `bytes` as they are.
    pub(super) fn push_front_plain(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        match self.kill_point {
            KillPoint::None => self.push_general::<false>(bytes, utf8, true),
            _ => self.push_hooked(bytes, utf8, true),
        }
    }

    /// Remove the front (or, with `back`, the back) item, copying its bytes
    /// into `out` (cleared first). Returns its UTF-8 flag, or `None` when
    /// the queue is empty (counted in `pop_empty`; `out` is then empty).
    ///
    /// A compressed item is decoded, after the lock is released. One that
    /// cannot be decoded (see [`StrQueue::pop_checked`]) is removed and
    /// reported as no item, with `errno` set to `EBADMSG` (corrupt) or
    /// `ENOTSUP` (a build without the `zstd` feature).
    ///
    /// # Examples
    ///
    /// See [`StrQueue::push_front`] (both ends) and [`StrQueue`] (the
    /// UTF-8 flag).
    pub fn pop(&self, back: bool, out: &mut Vec<u8>) -> Option<bool> {
        let r = self.pop_raw(back, out);
        // HOOK(compress): a failed decode reads as no item; one load when
        // the queue was simply empty.
        if r.is_none() {
            if let Some(e) = compress::take_failure() {
                set_errno(failure_errno(&e));
            }
        }
        r
    }

    /// [`StrQueue::pop`], with a compressed item that cannot be decoded
    /// reported as an error: [`Error::Corrupt`](crate::Error::Corrupt) for
    /// one whose bytes were scribbled over,
    /// [`Error::Unsupported`](crate::Error::Unsupported) when this build
    /// lacks the `zstd` feature. Either way the item has been removed and
    /// the queue goes on.
    ///
    /// # Errors
    /// As above.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// q.push(b"job", false)?;
    /// let mut buf = Vec::new();
    /// assert_eq!(q.pop_checked(false, &mut buf)?, Some(false));
    /// assert_eq!(q.pop_checked(false, &mut buf)?, None);
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    #[inline(always)]
    pub fn pop_checked(&self, back: bool, out: &mut Vec<u8>) -> Result<Option<bool>> {
        let r = self.pop_raw(back, out);
        if r.is_none() {
            if let Some(e) = compress::take_failure() {
                return Err(e);
            }
        }
        Ok(r)
    }

    /// [`StrQueue::pop`] before a failed decode is picked up (see
    /// `pop_locked`).
    #[inline(always)]
    fn pop_raw(&self, back: bool, out: &mut Vec<u8>) -> Option<bool> {
        // HOOK(lease): one load of a word on the line the wake reads
        // anyway; while leases are open, a look for dead holders when due.
        if self.leases_busy() {
            self.plain_lease_look();
        }
        match (self.kill_point, back) {
            (KillPoint::None, false) => self.pop_front::<false>(out),
            (KillPoint::None, true) => self.pop_general::<false>(true, out),
            _ => self.pop_hooked(back, out),
        }
    }

    /// `pop` for a handle with a crash point: the same code with the hooks
    /// compiled in.
    #[cold]
    #[inline(never)]
    fn pop_hooked(&self, back: bool, out: &mut Vec<u8>) -> Option<bool> {
        if back {
            self.pop_general::<true>(true, out)
        } else {
            self.pop_front::<true>(out)
        }
    }

    /// A pop at either end, every case: a lock that may have to be waited
    /// for (at the back both), an empty queue, an item that does not fit
    /// in `out` yet.
    #[inline(never)]
    pub(super) fn pop_general<const H: bool>(&self, back: bool, out: &mut Vec<u8>) -> Option<bool> {
        out.clear();
        if self.looks_empty() {
            return self.found_empty(None);
        }
        let l = self.locked::<H>(Ends::pop(back))?;
        self.pop_in::<H>(l, back, out)
    }

    /// [`StrQueue::pop_general`] at the front once the front lock is held
    /// (`guard`), with `out` empty: the fast path's fallback. Cold as
    /// [`StrQueue::push_locked`] is.
    #[cold]
    #[inline(never)]
    pub(super) fn pop_locked<const H: bool>(
        &self,
        guard: LockGuard<'_>,
        back: bool,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        debug_assert!(!back);
        self.pop_in::<H>(Locked::new(self, None, Some(guard)), back, out)
    }

    /// A pop under the locks `l` holds.
    fn pop_in<const H: bool>(
        &self,
        mut l: Locked<'_, H>,
        back: bool,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        let t = l.copy_end(back, true, out);
        l.release();
        match t {
            Some(t) => {
                self.wake_producers();
                // HOOK(compress): decode, the lock released; a failure is
                // kept for the public call (`pop`, `pop_checked`).
                if t.packed {
                    if let Err(e) = compress::unpack(out) {
                        compress::fail(e);
                        return None;
                    }
                }
                Some(t.utf8)
            }
            None => {
                self.count_empty();
                self.missed();
                None
            }
        }
    }

    /// After a pop found the queue empty, holding the front lock (`guard`)
    /// or not: unlock (waking a sleeper on the lock word), count the miss;
    /// no item.
    #[inline(never)]
    pub(super) fn found_empty(&self, guard: Option<LockGuard<'_>>) -> Option<bool> {
        if let Some(g) = guard {
            if g.unlock() {
                LockGuard::wake_one(&self.side(false).lock);
            }
        }
        self.count_empty();
        self.missed();
        None
    }

    /// Copy the front item's bytes into `out` (cleared first) without
    /// removing it; exact (under the lock). Returns its UTF-8 flag, or
    /// `None` when the queue is empty.
    ///
    /// # Examples
    ///
    /// See [`StrQueue::clear`].
    pub fn peek(&self, out: &mut Vec<u8>) -> Option<bool> {
        self.peek_checked(out).unwrap_or_else(|e| {
            set_errno(failure_errno(&e));
            None
        })
    }

    /// [`StrQueue::peek`], with a front item that cannot be decoded
    /// reported as [`StrQueue::pop_checked`] does (it stays in the queue;
    /// the unchecked form reports no item, `errno` set as by
    /// [`StrQueue::pop`]).
    ///
    /// # Errors
    /// As [`StrQueue::pop_checked`].
    pub fn peek_checked(&self, out: &mut Vec<u8>) -> Result<Option<bool>> {
        out.clear();
        let Some(mut l) = self.locked::<true>(Ends::Front) else {
            return Ok(None);
        };
        let t = l.copy_end(false, false, out);
        l.release();
        match t {
            // HOOK(compress): decode, the lock released.
            Some(t) if t.packed => compress::unpack(out).map(|()| Some(t.utf8)),
            Some(t) => Ok(Some(t.utf8)),
            None => {
                self.missed();
                Ok(None)
            }
        }
    }
}
