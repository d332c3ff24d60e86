//! Leases on the integer queues (the table they use, shared with Str, is
//! the `lease` module; see its docs): every table write holds the table's
//! robust lock; a takeover repairs first.

use super::IntQueue;
use crate::futex::Deadline;
use crate::lease::{
    kill_point, lease_id, now_ns, slice_outcome, LeaseError, LeaseInfo, LeaseStats, Table,
    DEAD_DEADLINE, DEAD_HOLDER_DIED, DEAD_RELEASED, FREE, HELD, RETURNED, SCAN_NS, TAKING,
};
use crate::lock::{LockFail, LockGuard};
use crate::ring::Element;
use crate::sync::Ordering;
use crate::testpoint::Point;
use crate::wait::{block_on_fenced, Waited};

type LResult<T> = std::result::Result<T, LeaseError>;

/// Longest wait for the Int lease lock (see `lease_lock`).
const LOCK_SECS: f64 = 1.0;

/// Longest wait of a plain pop for the Int lease lock: a live holder
/// keeps it for microseconds, and a dead one is taken over however short
/// the wait (the lock's last look); a stopped one must not stall pops
/// that need no lease.
const PLAIN_LOCK_SECS: f64 = 0.002;

/// What one `pop_lease` attempt found.
pub(super) enum Got<T> {
    /// The value, the lease id and the delivery count.
    Item(T, u64, u64),
    Empty,
    /// The lease lock stayed held until a blocked call's deadline (or this
    /// slice of it), or a signal came.
    Locked(LockFail),
}

impl<T: Element> IntQueue<T> {
    pub(super) fn lease_table(&self) -> LResult<Table<'_>> {
        Table::of(self.region()).ok_or(LeaseError::NoLeases)
    }

    /// Take the table lock, repairing the table after a dead holder. A
    /// live holder keeps it for microseconds; one that keeps it for
    /// [`LOCK_SECS`] is stopped (or the word was scribbled with a live
    /// pid): then the operation fails with [`LeaseError::LockTimeout`].
    pub(super) fn lease_lock<'a>(&self, t: &Table<'a>) -> LResult<LockGuard<'a>> {
        self.lease_lock_for(t, LOCK_SECS)
    }

    /// [`IntQueue::lease_lock`], waiting at most `secs` for a live holder.
    fn lease_lock_for<'a>(&self, t: &Table<'a>, secs: f64) -> LResult<LockGuard<'a>> {
        self.lease_lock_until(t, secs, None)
            .map_err(|_| LeaseError::LockTimeout)
    }

    /// [`IntQueue::lease_lock_for`], for a blocked call (`wait`: its
    /// deadline, or the end of this slice of its wait) also giving up at
    /// `wait` or on a signal.
    fn lease_lock_until<'a>(
        &self,
        t: &Table<'a>,
        secs: f64,
        wait: Option<&Deadline>,
    ) -> std::result::Result<LockGuard<'a>, LockFail> {
        let (g, got) = LockGuard::acquire_robust(
            &t.head.lock,
            &t.head.lock_owner,
            || {
                let d = Deadline::after_secs(secs);
                wait.map_or(d, |w| d.earliest(*w))
            },
            wait.is_some(),
        )?;
        if got.recovered {
            self.lease_recover(t);
        }
        Ok(g)
    }

    /// After a takeover: settle the dead holder's `TAKING` record (see the
    /// `lease` docs) and recount the returned items.
    #[cold]
    fn lease_recover(&self, t: &Table<'_>) {
        let ring = self.ring();
        for i in 0..t.recs.len() {
            let (gen, st) = t.state(i);
            if st == TAKING {
                let pos = t.recs[i].meta.load(Ordering::Relaxed);
                if ring.holds(pos) {
                    t.set(i, gen, FREE);
                } else {
                    // Taken: held by the dead process, returned by the
                    // look that follows.
                    t.set(i, gen, HELD);
                }
            }
        }
        t.settle_dead_moves();
        self.recount(t);
        t.recount_busy();
        self.region()
            .header()
            .recoveries
            .fetch_add(1, Ordering::Relaxed);
        t.head.last_scan.store(0, Ordering::Relaxed);
    }

    /// Store the true number of returned records in the header word.
    fn recount(&self, t: &Table<'_>) {
        let n = (0..t.recs.len())
            .filter(|&i| t.state(i).1 == RETURNED)
            .count() as u64;
        t.returned.store(n, Ordering::SeqCst);
    }

    /// Return the leases whose holder died or whose deadline passed, if it
    /// is time to look (always with `gap` 0), and the delayed items that
    /// are due. How many came back to the queue.
    pub(super) fn lease_look(&self, t: &Table<'_>, now: u64, gap: u64) -> u64 {
        let mut n = 0;
        if t.due_now(now) {
            n += self.int_make_due(t, now);
        }
        if !t.due(now, gap) {
            return n;
        }
        // The look also recomputes the due hint (hostile memory).
        n += self.int_make_due(t, now);
        let back = t.to_return(now);
        for &(i, dead) in &back {
            let (gen, _) = t.state(i);
            t.count_return(dead);
            let why = if dead {
                DEAD_HOLDER_DIED
            } else {
                DEAD_DEADLINE
            };
            n += u64::from(t.give_back(i, gen, why, true));
        }
        n
    }

    /// Delayed items due at `now` become returned items: how many.
    fn int_make_due(&self, t: &Table<'_>, now: u64) -> u64 {
        let due = t.make_due(now);
        for _ in &due {
            t.returned.fetch_add(1, Ordering::SeqCst);
        }
        due.len() as u64
    }

    /// One `pop_lease`: returned items first (oldest pop first), then the
    /// ring. Wakes consumers for items it returned.
    pub(super) fn pop_lease_once(
        &self,
        timeout: Option<f64>,
        wait: Option<&Deadline>,
    ) -> LResult<Got<T>> {
        let t = self.lease_table()?;
        let g = match self.lease_lock_until(&t, LOCK_SECS, wait) {
            Ok(g) => g,
            Err(_) if wait.is_none() => return Err(LeaseError::LockTimeout),
            Err(f) => return Ok(Got::Locked(f)),
        };
        let now = now_ns();
        let mut woke = self.lease_look(&t, now, SCAN_NS);
        let mut forced = false;
        let r = loop {
            if t.returned.load(Ordering::SeqCst) != 0 {
                if let Some(&i) = t.in_state_by_seq(RETURNED).first() {
                    // Lease it again, keeping its pop order.
                    let gen = t.begin(i, now, timeout, false);
                    let v = t.recs[i].value.load(Ordering::Relaxed);
                    let n = t.deliver(i);
                    t.set(i, gen, HELD);
                    t.returned.fetch_sub(1, Ordering::SeqCst);
                    break Ok(Got::Item(T::from_i64(v as i64), lease_id(gen, i), n));
                }
                self.recount(&t);
            }
            let Some(i) = t.free_record() else {
                break Err(LeaseError::Full(t.recs.len() as u64));
            };
            t.busy_ahead();
            let gen = t.begin(i, now, timeout, true);
            let old = t.state(i).0;
            let rec = &t.recs[i];
            // With this thread's intent record: between its `head` CAS and
            // its free, a live leaser must be seen by a producer's repair.
            let taken = self.with_ring(|ring| {
                ring.try_pop_noted(|note| match note {
                    Some((pos, v)) => {
                        rec.value.store(v.to_i64() as u64, Ordering::Relaxed);
                        rec.meta.store(pos, Ordering::Relaxed);
                        t.set(i, gen, TAKING);
                        kill_point(Point::LeaseIntIntent);
                    }
                    None => t.set(i, old, FREE),
                })
            });
            match taken {
                Ok(v) => {
                    kill_point(Point::LeaseIntTaken);
                    rec.value.store(v.to_i64() as u64, Ordering::Relaxed);
                    let n = t.deliver(i);
                    t.set(i, gen, HELD);
                    // The slot was freed with a plain store (ring docs,
                    // "Waiters").
                    crate::lock::barrier::light();
                    self.producers().wake(1);
                    break Ok(Got::Item(v, lease_id(gen, i), n));
                }
                Err(_) if !forced => {
                    // Empty: a dead holder's items may be what is left.
                    forced = true;
                    let n = self.lease_look(&t, now, SCAN_NS / 20);
                    woke += n;
                    if n == 0 {
                        break Ok(Got::Empty);
                    }
                }
                Err(_) => break Ok(Got::Empty),
            }
        };
        t.recount_busy();
        drop(g);
        if woke > 0 {
            self.consumers().wake(woke.min(u32::MAX as u64) as u32);
        }
        r
    }

    /// Pop the oldest item with a lease: the item leaves the queue for
    /// every other consumer but stays held for this process until
    /// [`IntQueue::ack`] (gone) or [`IntQueue::release`] (back to the
    /// front). If this process dies first, or `timeout` seconds pass, the
    /// next operation that looks returns it to the front. `Ok(None)` when
    /// the queue is empty.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`] for a queue created without a lease table,
    /// [`LeaseError::Full`] when every lease record is taken (plain pops
    /// still work).
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let q = IntQueue::<i64>::anonymous(8)?;
    /// q.push(1);
    /// q.push(2);
    /// let (v, lease) = q.pop_lease(None)?.unwrap();
    /// assert_eq!(v, 1);
    /// assert!(q.release(lease)?); // back to the front
    /// let (v, lease) = q.pop_lease(None)?.unwrap();
    /// assert_eq!(v, 1);
    /// assert!(q.ack(lease)?); // done with it
    /// assert!(!q.ack(lease)?); // a lease ends once
    /// assert_eq!(q.pop(), Some(2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pop_lease(&self, timeout: Option<f64>) -> LResult<Option<(T, u64)>> {
        Ok(self.pop_lease_counted(timeout)?.map(|(v, l, _)| (v, l)))
    }

    /// [`IntQueue::pop_lease`] giving the item's delivery count too (this
    /// hand-out included): `(value, lease, deliveries)`.
    ///
    /// # Errors
    /// As [`IntQueue::pop_lease`].
    pub fn pop_lease_counted(&self, timeout: Option<f64>) -> LResult<Option<(T, u64, u64)>> {
        match self.pop_lease_once(timeout, None)? {
            Got::Item(v, l, n) => Ok(Some((v, l, n))),
            Got::Locked(_) => Err(LeaseError::LockTimeout),
            Got::Empty => {
                self.region()
                    .header()
                    .pop_empty
                    .fetch_add(1, Ordering::Relaxed);
                Ok(None)
            }
        }
    }

    /// [`IntQueue::pop_lease`], sleeping while the queue is empty, until
    /// `deadline`. While lease records are in use it wakes every 50 ms to
    /// look for dead holders (and at the due time of a delayed item). `Interrupted`: call again with the same deadline.
    /// Its waits for the lease lock end at `deadline` too (then
    /// `TimedOut`), or after a second if that comes first (then
    /// [`LeaseError::LockTimeout`], as for the other lease calls).
    ///
    /// # Errors
    /// As [`IntQueue::pop_lease`].
    pub fn pop_lease_wait(
        &self,
        deadline: &Deadline,
        timeout: Option<f64>,
    ) -> LResult<Waited<(T, u64)>> {
        Ok(self
            .pop_lease_wait_counted(deadline, timeout)?
            .map(|(v, l, _)| (v, l)))
    }

    /// [`IntQueue::pop_lease_wait`] giving the delivery count too. While
    /// items are delayed it sleeps at most until the earliest falls due.
    ///
    /// # Errors
    /// As [`IntQueue::pop_lease`].
    pub fn pop_lease_wait_counted(
        &self,
        deadline: &Deadline,
        timeout: Option<f64>,
    ) -> LResult<Waited<(T, u64, u64)>> {
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
            let w = block_on_fenced(self.consumers(), &slice, || {
                match self.pop_lease_once(timeout, Some(&slice)) {
                    Ok(Got::Item(v, l, n)) => Ok(Ok(Some((v, l, n)))),
                    Ok(Got::Empty) if self.due_changed(hint) => Ok(Ok(None)),
                    Ok(Got::Empty) => Err(crate::ring::Miss::Settled),
                    Ok(Got::Locked(f)) => Ok(Err(Err(f))),
                    Err(e) => Ok(Err(Ok(e))),
                }
            });
            // The lock bound: LOCK_SECS.
            match slice_outcome(w, &slice, deadline) {
                Some(Ok(Waited::TimedOut)) => {
                    self.region()
                        .header()
                        .pop_empty
                        .fetch_add(1, Ordering::Relaxed);
                    return Ok(Waited::TimedOut);
                }
                Some(Ok(Waited::Done(Some(x)))) => return Ok(Waited::Done(x)),
                Some(Ok(Waited::Interrupted)) => return Ok(Waited::Interrupted),
                Some(Err(e)) => return Err(e),
                Some(Ok(Waited::Done(None))) | None => {}
            }
        }
    }

    /// End lease `lease`: the item is gone for good. `Ok(false)` when the
    /// lease had already ended: acked or released before, or returned to
    /// the queue because its holder was taken for dead or its deadline
    /// passed (then the item may be served again; an ack after the
    /// deadline always returns false and returns the item).
    ///
    /// # Errors
    /// [`LeaseError::BadLease`] for an id no lease of this queue ever
    /// had, [`LeaseError::NotHolder`] when another process holds it.
    pub fn ack(&self, lease: u64) -> LResult<bool> {
        self.end_lease(lease, false)
    }

    /// End lease `lease` by putting its item back at the front of the
    /// queue (served before every other item). `Ok(false)` as for
    /// [`IntQueue::ack`].
    ///
    /// # Errors
    /// As [`IntQueue::ack`].
    pub fn release(&self, lease: u64) -> LResult<bool> {
        self.end_lease(lease, true)
    }

    fn end_lease(&self, lease: u64, back: bool) -> LResult<bool> {
        let t = self.lease_table()?;
        let g = self.lease_lock(&t)?;
        let now = now_ns();
        let mut woke = self.lease_look(&t, now, SCAN_NS);
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
                    woke += u64::from(t.give_back(i, gen, why, true));
                } else {
                    kill_point(Point::LeaseIntAck);
                    t.set(i, gen, FREE);
                    Table::count(&t.head.acked, 1);
                }
                Ok(!late)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(e),
        };
        t.recount_busy();
        drop(g);
        if woke > 0 {
            self.consumers().wake(woke.min(u32::MAX as u64) as u32);
        }
        r
    }

    /// Counters and gauges of the leases (all zero without a table). Looks
    /// for dead holders first, as every lease operation does.
    pub fn lease_stats(&self) -> LeaseStats {
        let Ok(t) = self.lease_table() else {
            return LeaseStats::default();
        };
        self.lease_look_now(&t);
        t.stats()
    }

    /// The leases open or waiting, oldest pop first (after a look for
    /// dead holders).
    pub fn leases(&self) -> Vec<LeaseInfo> {
        let Ok(t) = self.lease_table() else {
            return Vec::new();
        };
        self.lease_look_now(&t);
        t.list(false)
    }

    pub(super) fn lease_look_now(&self, t: &Table<'_>) {
        let Ok(g) = self.lease_lock(t) else {
            return;
        };
        let n = self.lease_look(t, now_ns(), 0);
        t.recount_busy();
        drop(g);
        if n > 0 {
            self.consumers().wake(n.min(u32::MAX as u64) as u32);
        }
    }

    /// A plain pop's way to the returned items (the header word said
    /// there are some, or leases are busy): the oldest one, after a look
    /// for dead holders if one is due (see [`IntQueue::take_returned`]).
    #[cold]
    #[inline(never)]
    pub(crate) fn pop_returned(&self, empty: bool) -> Option<T> {
        let mut v = [T::from_i64(0)];
        (self.take_returned(&mut v, empty) == 1).then_some(v[0])
    }

    /// Up to `out.len()` returned items into `out`, oldest pop first; how
    /// many. Looks for dead holders and passed deadlines first when a
    /// look is due: every [`SCAN_NS`], or `SCAN_NS / 20` when the caller
    /// found the ring `empty` (as `pop_lease` does). Takes the lease lock
    /// only when there is something to do, or when it is held: a leaser
    /// killed inside `pop_lease` is taken over (and its intent settled)
    /// before the plain pop goes to the ring, so that the pop cannot take
    /// the item the dead leaser's record names (see the `lease` docs). A
    /// live holder is waited for at most [`PLAIN_LOCK_SECS`]. Wakes
    /// consumers for items it returned and did not take.
    #[cold]
    #[inline(never)]
    pub(crate) fn take_returned(&self, out: &mut [T], empty: bool) -> usize {
        let Some(t) = Table::of(self.region()) else {
            return 0;
        };
        let now = now_ns();
        let gap = if empty { SCAN_NS / 20 } else { SCAN_NS };
        let held = t.head.lock.word.load(Ordering::Relaxed) != 0;
        if out.is_empty()
            || !(held || self.any_returned() || t.look_due(now, gap) || t.due_now(now))
        {
            return 0;
        }
        let Ok(g) = self.lease_lock_for(&t, PLAIN_LOCK_SECS) else {
            return 0;
        };
        let back = self.lease_look(&t, now, gap);
        let mut n = 0;
        if t.returned.load(Ordering::SeqCst) != 0 {
            for &i in t.in_state_by_seq(RETURNED).iter().take(out.len()) {
                let (gen, _) = t.state(i);
                out[n] = T::from_i64(t.recs[i].value.load(Ordering::Relaxed) as i64);
                t.set(i, gen, FREE);
                t.returned.fetch_sub(1, Ordering::SeqCst);
                n += 1;
            }
            if n == 0 {
                self.recount(&t);
            }
        }
        t.recount_busy();
        drop(g);
        let left = back.saturating_sub(n as u64);
        if left > 0 {
            self.consumers().wake(left.min(u32::MAX as u64) as u32);
        }
        n
    }

    /// Whether lease records are in use (held, or returned and waiting):
    /// the one load a plain pop pays for leases.
    #[inline(always)]
    pub(crate) fn leases_busy(&self) -> bool {
        self.region().header().lease_busy.load(Ordering::Relaxed) != 0
    }

    /// Returned items waiting (the header word, which shared memory may
    /// have scribbled: never more than the table has records).
    #[inline]
    pub(crate) fn returned_waiting(&self) -> u64 {
        self.region()
            .header()
            .lease_returned
            .load(Ordering::Relaxed)
            .min(self.region().geometry().max_leases)
    }

    /// `peek` of an empty ring when items came back from leases: the
    /// oldest of them (a snapshot, no lock).
    #[cold]
    #[inline(never)]
    pub(crate) fn peek_returned(&self) -> Option<T> {
        let t = Table::of(self.region())?;
        let i = *t.in_state_by_seq(RETURNED).first()?;
        Some(T::from_i64(t.recs[i].value.load(Ordering::Relaxed) as i64))
    }

    /// Whether the header word says items came back from leases: the one
    /// load a plain pop pays for leases, when it found the ring empty.
    #[inline(always)]
    pub(crate) fn any_returned(&self) -> bool {
        // SYNC POINT: SeqCst, as the ring's sequence loads: a `pop_wait`
        // re-checks with it after announcing itself (SeqCst), and a
        // returner bumps the word (SeqCst) before it reads the waiter
        // count to wake them, so one of the two sees the other.
        self.region().header().lease_returned.load(Ordering::SeqCst) != 0
    }
}
