//! The work-queue calls of the integer queues (delivery counts, dead
//! letters, delays, touch; see the `lease` module's "Work queue" docs).
//! Every table write holds the table lock, as the lease calls do.

use super::IntQueue;
use crate::futex::Deadline;
use crate::lease::{
    check_delay, delay_ns, kill_point, now_ns, DeadItem, LeaseError, Table, WorkEnd, RETURNED,
};
use crate::ring::Element;
use crate::sync::Ordering;
use crate::testpoint::Point;

type LResult<T> = std::result::Result<T, LeaseError>;

impl<T: Element> IntQueue<T> {
    /// Busy pops' sleep slice (see `Table::wait_slice`).
    #[cold]
    pub(super) fn busy_slice(&self, deadline: &Deadline) -> Deadline {
        match Table::of(self.region()) {
            Some(t) => t.wait_slice(deadline),
            None => *deadline,
        }
    }

    /// Whether a blocked pop that noted the due hint `hint` must compute
    /// its slice again: lease records are in use and the hint changed.
    #[inline]
    pub(super) fn due_changed(&self, hint: u64) -> bool {
        self.leases_busy() && crate::lease::due_hint(self.region()) != hint
    }

    /// Run `f` on the table under its lock after a look, then recount and
    /// wake consumers for the items that came back (`f` adds its own).
    fn with_table<R>(&self, f: impl FnOnce(&Table<'_>, u64, &mut u64) -> LResult<R>) -> LResult<R> {
        let t = self.lease_table()?;
        let g = self.lease_lock(&t)?;
        let now = now_ns();
        let mut woke = self.lease_look(&t, now, crate::lease::SCAN_NS);
        let r = f(&t, now, &mut woke);
        t.recount_busy();
        drop(g);
        if woke > 0 {
            self.consumers().wake(woke.min(u32::MAX as u64) as u32);
        }
        r
    }

    /// The delivery count of lease `lease`, held now by this process
    /// (this hand-out included); `None` once the lease has ended.
    ///
    /// # Errors
    /// As [`IntQueue::ack`].
    pub fn deliveries(&self, lease: u64) -> LResult<Option<u64>> {
        let t = self.lease_table()?;
        Ok(t.held_by_me(lease)?
            .map(|(i, _)| t.recs[i].deliveries.load(Ordering::Relaxed)))
    }

    /// Push the deadline of lease `lease` to now + `timeout` seconds (None:
    /// the lease's own length, which a new `timeout` replaces). A lease
    /// without a deadline and no `timeout`: `Ok(true)`, nothing changes.
    /// `Ok(false)` once the lease has ended (a lease whose deadline has
    /// passed is returned, as a late ack returns it).
    ///
    /// # Errors
    /// As [`IntQueue::ack`].
    pub fn touch(&self, lease: u64, timeout: Option<f64>) -> LResult<bool> {
        self.work_end(lease, WorkEnd::Touch(timeout))
    }

    fn work_end(&self, lease: u64, what: WorkEnd) -> LResult<bool> {
        self.with_table(|t, now, woke| {
            let (held, back) = t.work_end(lease, now, what, true)?;
            *woke += back;
            Ok(held)
        })
    }

    /// [`IntQueue::release`], the item coming back to the front only after
    /// `delay` seconds (0: at once). Until then it is in no pop's view and
    /// not in `len`; an item that has had its last allowed delivery goes
    /// to the dead-letter area instead.
    ///
    /// # Errors
    /// As [`IntQueue::ack`]; [`LeaseError::BadArg`] for a negative, NaN or
    /// infinite delay.
    pub fn release_after(&self, lease: u64, delay: f64) -> LResult<bool> {
        check_delay(delay)?;
        if delay == 0.0 {
            return self.release(lease);
        }
        let r = self.work_end(lease, WorkEnd::Delay(delay_ns(delay)));
        // Sleepers recompute their slice from the due time.
        self.consumers().wake_all();
        r
    }

    /// Move the item of lease `lease` (held by this process) to the
    /// dead-letter area, whatever its count. `Ok(false)` once the lease
    /// has ended.
    ///
    /// # Errors
    /// As [`IntQueue::ack`]; [`LeaseError::DeadFull`] when the area is
    /// full or absent (the lease stays held).
    pub fn bury(&self, lease: u64) -> LResult<bool> {
        self.work_end(lease, WorkEnd::Bury)
    }

    /// Push `v` so that it becomes visible (at the front, as a returned
    /// item) only after `delay` seconds. It waits in a lease record.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`], [`LeaseError::Full`] (every record
    /// taken), [`LeaseError::BadArg`] for a bad delay.
    pub fn push_delayed(&self, delay: f64, v: T) -> LResult<()> {
        check_delay(delay)?;
        let r = self.with_table(|t, now, _| {
            let Some(i) = t.free_record() else {
                return Err(LeaseError::Full(t.recs.len() as u64));
            };
            t.busy_ahead();
            let gen = t.begin(i, now, None, true);
            t.recs[i].value.store(v.to_i64() as u64, Ordering::Relaxed);
            t.delay(i, gen, now.saturating_add(delay_ns(delay)));
            Ok(())
        });
        if r.is_ok() {
            self.consumers().wake_all();
        }
        r
    }

    /// Items in the dead-letter area now.
    pub fn dead_count(&self) -> u64 {
        Table::of(self.region()).map_or(0, |t| t.dead_count())
    }

    /// The `k`-th oldest item of the dead-letter area (0: the oldest), a
    /// snapshot.
    pub fn dead_nth(&self, k: u64) -> Option<DeadItem> {
        let t = Table::of(self.region())?;
        let i = *t.dead_by_age().get(usize::try_from(k).ok()?)?;
        Some(t.dead_item(i, false))
    }

    /// Take the oldest item out of the dead-letter area.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`], [`LeaseError::LockTimeout`].
    pub fn dead_take(&self) -> LResult<Option<DeadItem>> {
        self.with_table(|t, _, _| {
            let Some(&k) = t.dead_by_age().first() else {
                return Ok(None);
            };
            let d = t.dead_item(k, false);
            kill_point(Point::WorkDeadDrain);
            t.dead_free(k);
            Table::count(&t.head.drained, 1);
            Ok(Some(d))
        })
    }

    /// Move up to `n` items of the dead-letter area (oldest first) to the
    /// front of the live queue, their delivery counts reset to 0; how many
    /// moved. Each waits in a lease record as a returned item: it stops
    /// early when no record is free.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`], [`LeaseError::LockTimeout`].
    pub fn kick(&self, n: u64) -> LResult<u64> {
        self.with_table(|t, now, woke| {
            let mut moved = 0;
            for k in t.dead_by_age() {
                if moved >= n {
                    break;
                }
                let Some(i) = t.free_record() else {
                    break;
                };
                t.busy_ahead();
                let gen = t.begin(i, now, None, false);
                let (r, d) = (&t.recs[i], &t.dead[k]);
                r.value
                    .store(d.value.load(Ordering::Relaxed), Ordering::Relaxed);
                r.seq
                    .store(d.seq.load(Ordering::Relaxed), Ordering::Relaxed);
                r.deliveries.store(0, Ordering::Relaxed);
                t.set(i, gen, RETURNED);
                t.returned.fetch_add(1, Ordering::SeqCst);
                kill_point(Point::WorkKicked);
                t.dead_free(k);
                Table::count(&t.head.kicked, 1);
                moved += 1;
            }
            *woke += moved;
            Ok(moved)
        })
    }
}
