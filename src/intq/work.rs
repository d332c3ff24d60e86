//! The work-queue calls of the integer queues (delivery counts, dead
//! letters, delays, touch; see the `lease` module's "Work queue" docs).

use super::IntQueue;
use crate::futex::Deadline;
use crate::lease::{DeadItem, LeaseError};
use crate::ring::Element;
use crate::wait::Waited;

type LResult<T> = std::result::Result<T, LeaseError>;

fn todo<T>() -> LResult<T> {
    Err(LeaseError::BadArg("not implemented yet".into()))
}

impl<T: Element> IntQueue<T> {
    /// [`IntQueue::pop_lease`] giving the item's delivery count too (this
    /// hand-out included): `(value, lease, deliveries)`.
    ///
    /// # Errors
    /// As [`IntQueue::pop_lease`].
    pub fn pop_lease_counted(&self, timeout: Option<f64>) -> LResult<Option<(T, u64, u64)>> {
        Ok(self.pop_lease(timeout)?.map(|(v, l)| (v, l, 1)))
    }

    /// [`IntQueue::pop_lease_wait`] giving the delivery count too.
    ///
    /// # Errors
    /// As [`IntQueue::pop_lease`].
    pub fn pop_lease_wait_counted(
        &self,
        deadline: &Deadline,
        timeout: Option<f64>,
    ) -> LResult<Waited<(T, u64, u64)>> {
        Ok(self
            .pop_lease_wait(deadline, timeout)?
            .map(|(v, l)| (v, l, 1)))
    }

    /// The delivery count of lease `lease`, held now; `None` once it ended.
    ///
    /// # Errors
    /// As [`IntQueue::ack`].
    pub fn deliveries(&self, lease: u64) -> LResult<Option<u64>> {
        let _ = lease;
        todo()
    }

    /// Push the deadline of lease `lease` to now + `timeout` seconds (None:
    /// the lease's own length). `Ok(false)` once the lease has ended.
    ///
    /// # Errors
    /// As [`IntQueue::ack`].
    pub fn touch(&self, lease: u64, timeout: Option<f64>) -> LResult<bool> {
        let _ = (lease, timeout);
        todo()
    }

    /// [`IntQueue::release`], the item coming back only after `delay`
    /// seconds.
    ///
    /// # Errors
    /// As [`IntQueue::ack`].
    pub fn release_after(&self, lease: u64, delay: f64) -> LResult<bool> {
        let _ = (lease, delay);
        todo()
    }

    /// Move the item of lease `lease` to the dead-letter area.
    ///
    /// # Errors
    /// As [`IntQueue::ack`]; [`LeaseError::DeadFull`].
    pub fn bury(&self, lease: u64) -> LResult<bool> {
        let _ = lease;
        todo()
    }

    /// Push `v`, visible after `delay` seconds.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`], [`LeaseError::Full`].
    pub fn push_delayed(&self, delay: f64, v: T) -> LResult<()> {
        let _ = (delay, v);
        todo()
    }

    /// Items in the dead-letter area.
    pub fn dead_count(&self) -> u64 {
        0
    }

    /// The `k`-th oldest dead item.
    pub fn dead_nth(&self, k: u64) -> Option<DeadItem> {
        let _ = k;
        None
    }

    /// Take the oldest dead item out.
    ///
    /// # Errors
    /// [`LeaseError::LockTimeout`].
    pub fn dead_take(&self) -> LResult<Option<DeadItem>> {
        todo()
    }

    /// Move up to `n` dead items back to the front of the live queue.
    ///
    /// # Errors
    /// [`LeaseError::LockTimeout`].
    pub fn kick(&self, n: u64) -> LResult<u64> {
        let _ = n;
        todo()
    }
}
