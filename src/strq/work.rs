//! The work-queue calls of the Str queue (delivery counts, dead letters,
//! delays, touch; see the `lease` module's "Work queue" docs). Every call
//! holds both queue locks, as the lease calls do; dead and delayed items
//! keep their stored bytes in the lease data area.

use super::items::LEN_PACKED;
use super::state::Locked;
use super::StrQueue;
use crate::compress;
use crate::futex::Deadline;
use crate::lease::{
    check_delay, delay_ns, kill_point, now_ns, DeadItem, LeaseError, Table, WorkEnd, SCAN_NS,
};
use crate::sync::Ordering;
use crate::testpoint::Point;

type LResult<T> = std::result::Result<T, LeaseError>;

impl StrQueue {
    /// Busy pops' sleep slice (see `Table::wait_slice`).
    #[cold]
    pub(super) fn busy_slice(&self, deadline: &Deadline) -> Deadline {
        match Table::of(&self.region) {
            Some(t) => t.wait_slice(deadline),
            None => *deadline,
        }
    }

    /// Whether a blocked pop that noted the due hint `hint` must compute
    /// its slice again: lease records are in use and the hint changed.
    #[inline]
    pub(super) fn due_changed(&self, hint: u64) -> bool {
        self.leases_busy() && crate::lease::due_hint(&self.region) != hint
    }

    /// Run `f` under both locks after a look, then put back what must go
    /// back, commit and unlock.
    fn with_str_table<R>(
        &self,
        f: impl FnOnce(&Table<'_>, &mut Locked<'_, false>, u64) -> LResult<R>,
    ) -> LResult<R> {
        let t = self.lease_table()?;
        let mut l = self.lease_locked()?;
        let now = now_ns();
        self.str_lease_look(&t, now, SCAN_NS);
        let r = f(&t, &mut l, now);
        let returning = self.put_back(&t, &mut l);
        self.lease_finish(&t, l, &returning);
        r
    }

    /// The delivery count of lease `lease` (held by this process, this
    /// hand-out included); `None` once it ended.
    ///
    /// # Errors
    /// As [`StrQueue::ack`].
    pub fn deliveries(&self, lease: u64) -> LResult<Option<u64>> {
        let t = self.lease_table()?;
        Ok(t.held_by_me(lease)?
            .map(|(i, _)| t.recs[i].deliveries.load(Ordering::Relaxed)))
    }

    /// Push the deadline of lease `lease` forward (see
    /// [`IntQueue::touch`](crate::IntQueue::touch)).
    ///
    /// # Errors
    /// As [`StrQueue::ack`].
    pub fn touch(&self, lease: u64, timeout: Option<f64>) -> LResult<bool> {
        self.work_end(lease, WorkEnd::Touch(timeout))
    }

    fn work_end(&self, lease: u64, what: WorkEnd) -> LResult<bool> {
        self.with_str_table(|t, _, now| Ok(t.work_end(lease, now, what, false)?.0))
    }

    /// [`StrQueue::release`], the item coming back to the front only
    /// after `delay` seconds (see
    /// [`IntQueue::release_after`](crate::IntQueue::release_after)); its
    /// bytes wait in the lease data area.
    ///
    /// # Errors
    /// As [`StrQueue::ack`]; [`LeaseError::BadArg`] for a bad delay.
    pub fn release_after(&self, lease: u64, delay: f64) -> LResult<bool> {
        check_delay(delay)?;
        if delay == 0.0 {
            return self.release(lease);
        }
        let r = self.work_end(lease, WorkEnd::Delay(delay_ns(delay)));
        self.consumers().wake_all();
        r
    }

    /// Move the item of lease `lease` to the dead-letter area (its bytes
    /// stay where they are, in the lease data area).
    ///
    /// # Errors
    /// As [`StrQueue::ack`]; [`LeaseError::DeadFull`] (the lease stays
    /// held).
    pub fn bury(&self, lease: u64) -> LResult<bool> {
        self.work_end(lease, WorkEnd::Bury)
    }

    /// Push `bytes` (compressed as this handle's pushes are), visible at
    /// the front only after `delay` seconds; until then its bytes wait in
    /// the lease data area and it takes a lease record.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`], [`LeaseError::Full`],
    /// [`LeaseError::AreaFull`], [`LeaseError::TooBig`],
    /// [`LeaseError::BadArg`] for a bad delay.
    pub fn push_delayed(&self, delay: f64, bytes: &[u8], utf8: bool) -> LResult<()> {
        check_delay(delay)?;
        let r = if self.packs(bytes) {
            let level = self.compress.level.load(Ordering::Relaxed);
            compress::with_packed(bytes, level, |stored, packed| {
                self.put_delayed(delay, stored, utf8, packed.then_some(bytes.len() as u64))
            })
        } else {
            self.put_delayed(delay, bytes, utf8, None)
        };
        if r.is_ok() {
            self.consumers().wake_all();
        }
        r
    }

    /// `packed`: `stored` is the zstd frame of a string of this length.
    fn put_delayed(
        &self,
        delay: f64,
        stored: &[u8],
        utf8: bool,
        packed: Option<u64>,
    ) -> LResult<()> {
        let len = stored.len() as u64;
        if len > self.max_len {
            return Err(LeaseError::TooBig {
                need: len,
                area: self.max_len,
            });
        }
        self.with_str_table(|t, _, now| {
            let Some(i) = t.free_record() else {
                return Err(LeaseError::Full(t.recs.len() as u64));
            };
            let doff = t.place(len)?;
            // SAFETY: `place` found `doff + len` inside the data area in
            // a range no record keeps; `stored` is the caller's; we hold
            // the lock.
            unsafe { t.write(doff, stored.as_ptr(), stored.len()) };
            t.busy_ahead();
            let gen = t.begin(i, now, None, true);
            let r = &t.recs[i];
            let lw = len as u32 | if packed.is_some() { LEN_PACKED } else { 0 };
            r.value.store(doff << 32 | u64::from(lw), Ordering::Relaxed);
            r.meta.store(u64::from(utf8), Ordering::Relaxed);
            t.delay(i, gen, now.saturating_add(delay_ns(delay)));
            if let Some(orig) = packed {
                // Counted once, as a push stored compressed is.
                self.count_packed(len, orig);
            }
            Ok(())
        })
    }

    /// Items in the dead-letter area now.
    pub fn dead_count(&self) -> u64 {
        Table::of(&self.region).map_or(0, |t| t.dead_count())
    }

    /// Dead-letter record `k`'s item into `out` (decoded): its info and
    /// utf8 flag. Caller holds the locks.
    fn dead_copy(t: &Table<'_>, k: usize, out: &mut Vec<u8>) -> LResult<(DeadItem, bool)> {
        let mut d = t.dead_item(k, true);
        out.clear();
        let Some((off, lw, utf8)) = t.dead_data_of(k) else {
            return Err(LeaseError::Corrupt(crate::Error::Corrupt(
                "a dead-letter record names bytes outside the lease data area".into(),
            )));
        };
        let len = u64::from(lw & !LEN_PACKED);
        // SAFETY: `dead_data_of` checked `off + len` against the area; the
        // caller holds the lock.
        out.extend_from_slice(unsafe { t.bytes(off, len) });
        if lw & LEN_PACKED != 0 {
            compress::unpack(out).map_err(LeaseError::Corrupt)?;
        }
        d.value = out.len() as i64;
        Ok((d, utf8))
    }

    /// The `k`-th oldest item of the dead-letter area (0: the oldest), its
    /// bytes into `out`: `(info, utf8)`.
    ///
    /// # Errors
    /// [`LeaseError::LockTimeout`]; [`LeaseError::Corrupt`] for a record
    /// whose bytes cannot be read (scribbled memory).
    pub fn dead_nth(&self, k: u64, out: &mut Vec<u8>) -> LResult<Option<(DeadItem, bool)>> {
        let Some(t) = Table::of(&self.region) else {
            return Ok(None);
        };
        if t.dead.is_empty() {
            return Ok(None);
        }
        self.with_str_table(|t, _, _| {
            let order = t.dead_by_age();
            let Some(&i) = usize::try_from(k).ok().and_then(|k| order.get(k)) else {
                return Ok(None);
            };
            Self::dead_copy(t, i, out).map(Some)
        })
    }

    /// Take the oldest item out of the dead-letter area, its bytes into
    /// `out`. A record whose bytes cannot be read is taken out too (then
    /// [`LeaseError::Corrupt`]).
    ///
    /// # Errors
    /// As [`StrQueue::dead_nth`].
    pub fn dead_take(&self, out: &mut Vec<u8>) -> LResult<Option<(DeadItem, bool)>> {
        self.with_str_table(|t, _, _| {
            let Some(&k) = t.dead_by_age().first() else {
                return Ok(None);
            };
            let r = Self::dead_copy(t, k, out);
            kill_point(Point::WorkDeadDrain);
            t.dead_free(k);
            Table::count(&t.head.drained, 1);
            r.map(Some)
        })
    }

    /// Move up to `n` items of the dead-letter area to the front of the
    /// queue (the oldest in front), their counts reset; how many moved.
    /// It stops early when the queue has no room for the next.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`], [`LeaseError::LockTimeout`].
    pub fn kick(&self, n: u64) -> LResult<u64> {
        let moved = self.with_str_table(|t, l, _| {
            let ks: Vec<usize> = t
                .dead_by_age()
                .into_iter()
                .take(usize::try_from(n).unwrap_or(usize::MAX))
                .collect();
            let mut done = Vec::new();
            // Newest first, so that the oldest ends in front.
            for &k in ks.iter().rev() {
                let Some((off, lw, utf8)) = t.dead_data_of(k) else {
                    // Scribbled: its bytes are not in the area. Forget it.
                    t.dead_free(k);
                    continue;
                };
                let len = u64::from(lw & !LEN_PACKED);
                if len > self.max_len {
                    t.dead_free(k);
                    continue;
                }
                // SAFETY: `dead_data_of` checked `off + len`; we hold the
                // lock.
                let bytes = unsafe { t.bytes(off, len) };
                if !l.put_any(bytes, utf8, true, None) {
                    break;
                }
                if lw & LEN_PACKED != 0 {
                    self.flag_packed(u64::from(l.front.head), len);
                }
                done.push(k);
            }
            // The pushes land first, then the records are freed: a holder
            // killed in between leaves the items twice, never lost.
            l.commit();
            if !done.is_empty() {
                kill_point(Point::WorkKicked);
            }
            for &k in &done {
                t.dead_free(k);
                Table::count(&t.head.kicked, 1);
            }
            Ok(done.len() as u64)
        })?;
        if moved > 0 {
            self.consumers().wake(moved.min(u64::from(u32::MAX)) as u32);
        }
        Ok(moved)
    }
}
