//! Leases on the Str queue (see the module docs of `lease`): a child of
//! `strq` for its locked state and commits. Every lease operation holds
//! both queue locks (a return is a push at the front); the table is
//! guarded by the front lock, and a takeover of the front lock settles a
//! dead holder's records against the front state, whose counters are the
//! lease marks (`pop_ok`, and the count of pushes at the front). The
//! lease data area keeps a leased item's stored bytes until its
//! ack, so that a return is a front push of those bytes.

use super::items::{Item, LEN_PACKED};
use super::locking::Ends;
use super::state::Locked;
use super::StrQueue;
use crate::compress;
use crate::futex::Deadline;
use crate::lease::{
    kill_point, lease_id, now_ns, slice_outcome, LeaseError, LeaseInfo, LeaseStats, Table, BACK,
    DEAD_DEADLINE, DEAD_HOLDER_DIED, DEAD_RELEASED, FREE, HELD, RETURNED, RETURNING, SCAN_NS,
    TAKING,
};
use crate::lock::LockFail;
use crate::sync::Ordering;
use crate::testpoint::Point;
use crate::wait::{block_on, Miss, Waited};

type LResult<T> = std::result::Result<T, LeaseError>;

/// A leased pop's result: (utf8, lease id, delivery count).
type Leased = (bool, u64, u64);

/// After the commit that put record `i`'s item back in the queue: the
/// record keeps its count as [`BACK`] (holding no bytes), or is freed
/// when there is no count to keep (a kicked or delayed-pushed item).
fn back_or_free(t: &Table<'_>, i: usize, gen: u64) {
    if t.recs[i].deliveries.load(Ordering::Relaxed) == 0 {
        t.set(i, gen, FREE);
    } else {
        t.recs[i].value.store(0, Ordering::Relaxed);
        t.set(i, gen, BACK);
    }
}

/// The position of [`BACK`] record `i`'s item, if the item is still
/// there: the slot at that position holds an item with the same arena
/// offset and stored length.
fn back_match(t: &Table<'_>, l: &Locked<'_, false>, i: usize) -> Option<u32> {
    let r = &t.recs[i];
    let q = r.qpos.load(Ordering::Relaxed);
    let pos = (q >> 32) as u32;
    let it = l.item_at(pos)?;
    (it.off & 0xFFFF_FFFF == q & 0xFFFF_FFFF && it.len == r.due.load(Ordering::Relaxed))
        .then_some(pos)
}

/// Whether a commit that counts `now` has reached `mark` (wrapping).
fn reached(now: u64, mark: u64) -> bool {
    (now.wrapping_sub(mark) as i64) >= 0
}

impl StrQueue {
    pub(super) fn lease_table(&self) -> LResult<Table<'_>> {
        Table::of(&self.region).ok_or(LeaseError::NoLeases)
    }

    /// The lock with the state loaded, waiting at most the handle's lock
    /// timeout (a takeover has already repaired the table: see
    /// [`StrQueue::lease_recover`]).
    pub(super) fn lease_locked(&self) -> LResult<Locked<'_, false>> {
        // Both locks: a lease's return is a push at the front.
        self.locked::<false>(Ends::Both)
            .ok_or(LeaseError::LockTimeout)
    }

    /// [`StrQueue::lease_locked`] for a blocked call whose wait (or this
    /// slice of it) ends at `wait`: the locks are waited for until then
    /// or the lock timeout, whichever is first, and a signal ends the
    /// wait.
    fn lease_locked_until(
        &self,
        wait: &Deadline,
    ) -> std::result::Result<Locked<'_, false>, LockFail> {
        let d = std::cell::OnceCell::new();
        self.lock_until::<false>(
            Ends::Both,
            || *d.get_or_init(|| self.lock_deadline().earliest(*wait)),
            true,
        )
    }

    /// After a lock takeover, before anything else: settle the dead
    /// holder's records against the committed state (see the `lease`
    /// docs). Called by `lock_held`.
    #[cold]
    pub(super) fn lease_recover(&self) {
        let Some(t) = Table::of(&self.region) else {
            return;
        };
        // The lease marks count the front's own operations (a return is
        // a push at the front), so the front state (its lock is held)
        // decides them.
        let f = self.load_front();
        let (pushed, popped) = (f.pushes, f.pop_ok);
        for i in 0..t.recs.len() {
            let (gen, st) = t.state(i);
            let mark = t.recs[i].mark.load(Ordering::Relaxed);
            match st {
                TAKING if reached(popped, mark) => t.set(i, gen, HELD),
                TAKING => t.set(i, gen, FREE),
                RETURNING if reached(pushed, mark) => back_or_free(&t, i, gen),
                RETURNING => t.set(i, gen, RETURNED),
                _ => {}
            }
        }
        t.settle_dead_moves();
        t.recount_busy();
        t.head.last_scan.store(0, Ordering::Relaxed);
    }

    /// Mark the leases to return now (dead holder, deadline passed) as
    /// returned, if it is time to look (`gap` ns since the last look).
    pub(super) fn str_lease_look(&self, t: &Table<'_>, now: u64, gap: u64) -> u64 {
        let mut n = 0;
        if t.due_now(now) {
            n += t.make_due(now).len() as u64;
        }
        if !t.due(now, gap) {
            return n;
        }
        n += t.make_due(now).len() as u64;
        let back = t.to_return(now);
        for &(i, dead) in &back {
            let (gen, _) = t.state(i);
            t.count_return(dead);
            let why = if dead {
                DEAD_HOLDER_DIED
            } else {
                DEAD_DEADLINE
            };
            n += u64::from(t.give_back(i, gen, why, false));
        }
        n
    }

    /// Free the [`BACK`] records whose item is no longer in the queue
    /// where they saw it (a plain pop took it, or `clear`), so that no
    /// other item inherits their count. Caller holds both locks.
    fn sweep_back(&self, t: &Table<'_>, l: &Locked<'_, false>) {
        for i in 0..t.recs.len() {
            let (gen, st) = t.state(i);
            if st == BACK && back_match(t, l, i).is_none() {
                t.set(i, gen, FREE);
            }
        }
    }

    /// Before a front push writes position `pos`: free the [`BACK`]
    /// records that name it (their item has left it: a plain pop took
    /// it), so that the new item does not inherit their count. Caller
    /// holds both locks.
    #[cold]
    #[inline(never)]
    pub(super) fn forget_back_at(&self, pos: u32) {
        let Some(t) = Table::of(&self.region) else {
            return;
        };
        for i in 0..t.recs.len() {
            let (gen, st) = t.state(i);
            if st == BACK && (t.recs[i].qpos.load(Ordering::Relaxed) >> 32) as u32 == pos {
                t.set(i, gen, FREE);
            }
        }
    }

    /// The record to lease the front item with: the [`BACK`] record that
    /// holds its count, else a free one, else (every record in use) a
    /// [`BACK`] record of another item, whose count is forgotten. `None`
    /// when every record holds a lease, a returned or a delayed item.
    fn record_for_front(&self, t: &Table<'_>, l: &Locked<'_, false>) -> Option<(usize, bool)> {
        let head = l.front.head;
        if let Some(i) =
            (0..t.recs.len()).find(|&i| t.state(i).1 == BACK && back_match(t, l, i) == Some(head))
        {
            return Some((i, false));
        }
        if let Some(i) = t.free_record() {
            return Some((i, true));
        }
        let i = (0..t.recs.len()).find(|&i| t.state(i).1 == BACK)?;
        let (gen, _) = t.state(i);
        t.set(i, gen, FREE);
        Some((i, true))
    }

    /// Push the returned items back at the front, newest pop first so
    /// that the oldest ends in front, while they fit; each becomes
    /// `RETURNING` with the `push_ok` its commit reaches. The records to
    /// free after the commit.
    pub(super) fn put_back(&self, t: &Table<'_>, l: &mut Locked<'_, false>) -> Vec<usize> {
        self.sweep_back(t, l);
        let mut done = Vec::new();
        for &i in t.in_state_by_seq(RETURNED).iter().rev() {
            let (gen, _) = t.state(i);
            let Some((off, lw, utf8)) = t.data_of(i) else {
                // Scribbled: its bytes are not in the area. Forget it.
                t.set(i, gen, FREE);
                continue;
            };
            let len = u64::from(lw & !LEN_PACKED);
            if len > self.max_len {
                t.set(i, gen, FREE);
                continue;
            }
            // SAFETY: `data_of` checked `off + len` against the area; we
            // hold the lock.
            let bytes = unsafe { t.bytes(off, len) };
            if !l.put_any(bytes, utf8, true, None) {
                break;
            }
            if lw & LEN_PACKED != 0 {
                // Stored compressed: flagged again, not counted again.
                self.flag_packed(u64::from(l.front.head), len);
            }
            // Where the item is now, for its count (see `BACK`).
            let at = l.front.head;
            let off = l.item_at(at).map_or(0, |it| it.off);
            t.recs[i]
                .qpos
                .store(u64::from(at) << 32 | (off & 0xFFFF_FFFF), Ordering::Relaxed);
            t.recs[i].due.store(len, Ordering::Relaxed);
            t.recs[i].mark.store(l.front.pushes, Ordering::Relaxed);
            t.set(i, gen, RETURNING);
            kill_point(Point::LeaseStrReturning);
            done.push(i);
        }
        done
    }

    /// Commit, free the records whose return the commit completed, unlock
    /// and wake consumers for them.
    pub(super) fn lease_finish(
        &self,
        t: &Table<'_>,
        mut l: Locked<'_, false>,
        returning: &[usize],
    ) {
        l.commit();
        if !returning.is_empty() {
            kill_point(Point::LeaseStrReturned);
        }
        for &i in returning {
            let (gen, _) = t.state(i);
            back_or_free(t, i, gen);
        }
        t.recount_busy();
        l.release();
        if !returning.is_empty() {
            self.consumers()
                .wake(returning.len().min(u32::MAX as usize) as u32);
        }
    }

    /// One `pop_lease`: `Ok(None)` when empty. `settle`: the deadline of
    /// a blocked call, whose "empty" from the look settles with the back
    /// first.
    fn str_pop_lease_once(
        &self,
        timeout: Option<f64>,
        out: &mut Vec<u8>,
        settle: Option<&Deadline>,
    ) -> LResult<std::result::Result<Option<Leased>, LockFail>> {
        let t = self.lease_table()?;
        out.clear();
        let now = now_ns();
        // Empty, nothing waiting to go back and no look due: answered
        // without the lock, as a plain pop answers "empty" (a consumer
        // polling an empty queue must not hold up the producers). SYNC
        // POINT: for a blocked call, as pop_wait's settled miss (see
        // "Waiting" in the module docs): the look alone may miss a push
        // whose word store is not yet visible while the producer misses
        // our announcement, and we would sleep next to an item. If the
        // settling fails (deadline, signal), the locks decide.
        if self.looks_empty()
            && now.wrapping_sub(t.head.last_scan.load(Ordering::Relaxed)) < SCAN_NS / 20
            && !t.due_now(now)
            && t.in_state_by_seq(RETURNED).is_empty()
            && settle.is_none_or(|d| self.settle_with(true, d).is_ok() && self.looks_empty())
        {
            return Ok(Ok(None));
        }
        let mut l = match settle {
            None => self.lease_locked()?,
            Some(d) => match self.lease_locked_until(d) {
                Ok(l) => l,
                Err(f) => return Ok(Err(f)),
            },
        };
        self.str_lease_look(&t, now, SCAN_NS);
        let mut returning = self.put_back(&t, &mut l);
        if l.count() == 0 && self.str_lease_look(&t, now, SCAN_NS / 20) > 0 {
            returning.extend(self.put_back(&t, &mut l));
        }
        let mut woke = 0;
        if !returning.is_empty() {
            // Land the returns first (their records become `BACK`), so
            // that the front item's count is found below and a return is
            // never undone with this pop.
            l.commit();
            kill_point(Point::LeaseStrReturned);
            for &i in &returning {
                let (gen, _) = t.state(i);
                back_or_free(&t, i, gen);
            }
            woke = returning.len();
            returning.clear();
        }
        if woke > 1 {
            self.consumers()
                .wake((woke - 1).min(u32::MAX as usize) as u32);
        }
        let Some(Item {
            off,
            len,
            utf8,
            packed,
            ..
        }) = l.read_end(false)
        else {
            self.lease_finish(&t, l, &returning);
            return Ok(Ok(None));
        };
        let Some((i, fresh)) = self.record_for_front(&t, &l) else {
            self.lease_finish(&t, l, &returning);
            return Err(LeaseError::Full(t.recs.len() as u64));
        };
        if !fresh {
            // Its count goes on; it holds no bytes while `BACK`.
            t.recs[i].value.store(0, Ordering::Relaxed);
        }
        let doff = match t.place(len) {
            Ok(o) => o,
            Err(e) => {
                self.lease_finish(&t, l, &returning);
                return Err(e);
            }
        };
        // SAFETY: `read_end` checked `off + len <= usable`; `place` found
        // `doff + len` inside the data area in a range no record keeps;
        // the arena and the data area do not overlap; we hold the lock.
        unsafe { t.write(doff, self.arena_ptr(off), len as usize) };
        let gen = t.begin(i, now, timeout, fresh);
        let rec = &t.recs[i];
        let lw = len as u32 | if packed { LEN_PACKED } else { 0 };
        rec.value
            .store(doff << 32 | u64::from(lw), Ordering::Relaxed);
        rec.meta.store(u64::from(utf8), Ordering::Relaxed);
        rec.mark
            .store(l.front.pop_ok.wrapping_add(1), Ordering::Relaxed);
        if fresh {
            t.busy_ahead();
        }
        let n = t.deliver(i);
        t.set(i, gen, TAKING);
        if l.copy_end(false, true, out).is_none() {
            // `out` could not grow: leave the item where it is.
            t.set(i, gen, FREE);
            self.lease_finish(&t, l, &returning);
            return Ok(Ok(None));
        }
        kill_point(Point::LeaseStrPending);
        l.commit();
        kill_point(Point::LeaseStrCommitted);
        t.set(i, gen, HELD);
        self.lease_finish(&t, l, &returning);
        self.wake_producers();
        let id = lease_id(gen, i);
        if packed {
            if let Err(e) = compress::unpack(out) {
                // Unreadable: gone, as a plain pop of it would be.
                let _ = self.end_str_lease(id, false);
                return Err(LeaseError::Corrupt(e));
            }
        }
        Ok(Ok(Some((utf8, id, n))))
    }

    /// Pop the front item with a lease into `out` (see
    /// [`IntQueue::pop_lease`](crate::IntQueue::pop_lease)): `Ok(Some((utf8,
    /// lease)))`, or `Ok(None)` when the queue is empty. The item's stored
    /// bytes are kept in the lease data area until the lease ends.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`], [`LeaseError::Full`], the data area has no
    /// room ([`LeaseError::AreaFull`], [`LeaseError::TooBig`]; the item
    /// stays queued), [`LeaseError::LockTimeout`], or
    /// [`LeaseError::Corrupt`] for a compressed item that does not decode
    /// (removed).
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(8, 0)?;
    /// q.push(b"job", false)?;
    /// let mut buf = Vec::new();
    /// let (_, lease) = q.pop_lease(None, &mut buf)?.unwrap();
    /// assert_eq!(buf, b"job");
    /// assert!(q.release(lease)?); // back at the front
    /// assert_eq!(q.pop(false, &mut buf), Some(false));
    /// assert_eq!(buf, b"job");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pop_lease(
        &self,
        timeout: Option<f64>,
        out: &mut Vec<u8>,
    ) -> LResult<Option<(bool, u64)>> {
        Ok(self
            .pop_lease_counted(timeout, out)?
            .map(|(u, l, _)| (u, l)))
    }

    /// [`StrQueue::pop_lease`] giving the delivery count too (this
    /// hand-out included): `(utf8, lease, deliveries)`.
    ///
    /// # Errors
    /// As [`StrQueue::pop_lease`].
    pub fn pop_lease_counted(
        &self,
        timeout: Option<f64>,
        out: &mut Vec<u8>,
    ) -> LResult<Option<(bool, u64, u64)>> {
        // Without a deadline the locks fail only at the lock timeout.
        let r = self
            .str_pop_lease_once(timeout, out, None)?
            .map_err(|_| LeaseError::LockTimeout)?;
        if r.is_none() {
            self.count_empty();
        }
        Ok(r)
    }

    /// [`StrQueue::pop_lease`], sleeping while the queue is empty, until
    /// `deadline`; while leases are open it wakes every 50 ms to look for
    /// dead holders. `Interrupted`: call again with the same deadline.
    /// Its waits for the locks end at `deadline` too (then `TimedOut`),
    /// or at the handle's lock timeout if that comes first (then
    /// [`LeaseError::LockTimeout`], as for the other lease calls).
    ///
    /// # Errors
    /// As [`StrQueue::pop_lease`].
    pub fn pop_lease_wait(
        &self,
        deadline: &Deadline,
        timeout: Option<f64>,
        out: &mut Vec<u8>,
    ) -> LResult<Waited<(bool, u64)>> {
        Ok(self
            .pop_lease_wait_counted(deadline, timeout, out)?
            .map(|(u, l, _)| (u, l)))
    }

    /// [`StrQueue::pop_lease_wait`] giving the delivery count too. While
    /// items are delayed it sleeps at most until the earliest falls due.
    ///
    /// # Errors
    /// As [`StrQueue::pop_lease`].
    pub fn pop_lease_wait_counted(
        &self,
        deadline: &Deadline,
        timeout: Option<f64>,
        out: &mut Vec<u8>,
    ) -> LResult<Waited<(bool, u64, u64)>> {
        let t = self.lease_table()?;
        loop {
            let (slice, hint) = if self.leases_busy() {
                (
                    t.wait_slice(deadline),
                    t.head.next_due.load(Ordering::Relaxed),
                )
            } else {
                (*deadline, 0)
            };
            // `None`: a new due time ends the slice.
            let w = block_on(self.consumers(), &slice, || {
                match self.str_pop_lease_once(timeout, out, Some(&slice)) {
                    Ok(Ok(Some(x))) => Ok(Ok(Some(x))),
                    Ok(Ok(None)) if self.due_changed(hint) => Ok(Ok(None)),
                    Ok(Ok(None)) => Err(Miss::Settled),
                    Ok(Err(f)) => Ok(Err(Err(f))),
                    Err(e) => Ok(Err(Ok(e))),
                }
            });
            // The lock bound: the handle's lock timeout.
            match slice_outcome(w, &slice, deadline) {
                Some(Ok(Waited::TimedOut)) => {
                    self.count_empty();
                    return Ok(Waited::TimedOut);
                }
                Some(Ok(Waited::Done(Some(x)))) => return Ok(Waited::Done(x)),
                Some(Ok(Waited::Interrupted)) => return Ok(Waited::Interrupted),
                Some(Err(e)) => return Err(e),
                Some(Ok(Waited::Done(None))) | None => {}
            }
        }
    }

    /// End lease `lease`: the item is gone. `Ok(false)` when it had
    /// already ended (see [`IntQueue::ack`](crate::IntQueue::ack)).
    ///
    /// # Errors
    /// [`LeaseError::BadLease`], [`LeaseError::NotHolder`],
    /// [`LeaseError::LockTimeout`].
    pub fn ack(&self, lease: u64) -> LResult<bool> {
        self.end_str_lease(lease, false)
    }

    /// End lease `lease` by pushing its item back at the front (if the
    /// queue has no room now, it goes back as soon as a later lease
    /// operation finds room). `Ok(false)` as for [`StrQueue::ack`].
    ///
    /// # Errors
    /// As [`StrQueue::ack`].
    pub fn release(&self, lease: u64) -> LResult<bool> {
        self.end_str_lease(lease, true)
    }

    fn end_str_lease(&self, lease: u64, back: bool) -> LResult<bool> {
        let t = self.lease_table()?;
        let mut l = self.lease_locked()?;
        let now = now_ns();
        self.str_lease_look(&t, now, SCAN_NS);
        let r = match t.held_by_me(lease) {
            Ok(Some((i, gen))) => {
                let late = t.expired(i, now);
                if back || late {
                    if late {
                        t.count_return(false);
                    } else {
                        Table::count(&t.head.released, 1);
                    }
                    let why = if late { DEAD_DEADLINE } else { DEAD_RELEASED };
                    t.give_back(i, gen, why, false);
                } else {
                    kill_point(Point::LeaseStrAck);
                    t.set(i, gen, FREE);
                    Table::count(&t.head.acked, 1);
                }
                Ok(!late)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(e),
        };
        let returning = self.put_back(&t, &mut l);
        self.lease_finish(&t, l, &returning);
        r
    }

    pub(super) fn str_lease_look_now(&self, t: &Table<'_>) {
        if let Ok(mut l) = self.lease_locked() {
            self.str_lease_look(t, now_ns(), 0);
            let returning = self.put_back(t, &mut l);
            self.lease_finish(t, l, &returning);
        }
    }

    /// A plain pop's look for dead holders and passed deadlines while
    /// lease records are in use (the header word said so): when one is
    /// due (every [`SCAN_NS`], or `SCAN_NS / 20` when the queue looks
    /// empty, as `pop_lease`), take both locks, return what must come
    /// back to the front, and unlock; the pop then goes on as usual.
    #[cold]
    #[inline(never)]
    pub(super) fn plain_lease_look(&self) {
        let Some(t) = Table::of(&self.region) else {
            return;
        };
        let now = now_ns();
        let gap = if self.looks_empty() {
            SCAN_NS / 20
        } else {
            SCAN_NS
        };
        if !t.look_due(now, gap) && !t.due_now(now) {
            return;
        }
        if let Ok(mut l) = self.lease_locked() {
            self.str_lease_look(&t, now, gap);
            let returning = self.put_back(&t, &mut l);
            self.lease_finish(&t, l, &returning);
        }
    }

    /// Whether lease records are in use (held, or returned and waiting
    /// for room): the one load a plain pop pays for leases.
    #[inline(always)]
    pub(in crate::strq) fn leases_busy(&self) -> bool {
        self.header().lease_busy.load(Ordering::Relaxed) != 0
    }

    /// Returned items waiting in the lease table for room in the queue
    /// (a snapshot, without the lock).
    #[inline(always)]
    pub(super) fn returned_in_table(&self) -> u64 {
        if !self.leases_busy() {
            return 0;
        }
        self.returned_in_table_busy()
    }

    #[cold]
    #[inline(never)]
    fn returned_in_table_busy(&self) -> u64 {
        Table::of(&self.region).map_or(0, |t| t.stats().waiting)
    }

    /// Counters and gauges of the leases (after a look for dead holders).
    pub fn lease_stats(&self) -> LeaseStats {
        let Ok(t) = self.lease_table() else {
            return LeaseStats::default();
        };
        self.str_lease_look_now(&t);
        t.stats()
    }

    /// The leases open or waiting, oldest pop first (after a look for
    /// dead holders); `value` is the item's length (decoded, for one
    /// stored compressed), `stored` the bytes it takes.
    pub fn leases(&self) -> Vec<LeaseInfo> {
        let Ok(t) = self.lease_table() else {
            return Vec::new();
        };
        let Ok(mut l) = self.lease_locked() else {
            return t.list(true);
        };
        self.str_lease_look(&t, now_ns(), 0);
        let returning = self.put_back(&t, &mut l);
        let mut v = t.list(true);
        // Those being pushed back are free once the commit below lands.
        v.retain(|info| !returning.contains(&((info.id & 0xFFFF) as usize)));
        for info in &mut v {
            let Some((off, lw, _)) = t.data_of((info.id & 0xFFFF) as usize) else {
                continue;
            };
            if lw & LEN_PACKED != 0 {
                let len = u64::from(lw & !LEN_PACKED);
                // SAFETY: `data_of` checked `off + len` against the area;
                // we hold the lock. A frame header is at most 18 bytes.
                let head = unsafe { t.bytes(off, len.min(18)) };
                if let Some(n) = compress::content_size(head) {
                    info.value = n.min(i64::MAX as u64) as i64;
                }
            }
        }
        self.lease_finish(&t, l, &returning);
        v
    }
}
