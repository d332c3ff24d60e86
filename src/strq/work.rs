//! The work-queue calls of the Str queue (delivery counts, dead letters,
//! delays, touch; see the `lease` module's "Work queue" docs).

use super::StrQueue;
use crate::futex::Deadline;
use crate::lease::{DeadItem, LeaseError};
use crate::wait::Waited;

type LResult<T> = std::result::Result<T, LeaseError>;

fn todo<T>() -> LResult<T> {
    Err(LeaseError::BadArg("not implemented yet".into()))
}

impl StrQueue {
    /// [`StrQueue::pop_lease`] giving the delivery count too:
    /// `(utf8, lease, deliveries)`.
    ///
    /// # Errors
    /// As [`StrQueue::pop_lease`].
    pub fn pop_lease_counted(
        &self,
        timeout: Option<f64>,
        out: &mut Vec<u8>,
    ) -> LResult<Option<(bool, u64, u64)>> {
        Ok(self.pop_lease(timeout, out)?.map(|(u, l)| (u, l, 1)))
    }

    /// [`StrQueue::pop_lease_wait`] giving the delivery count too.
    ///
    /// # Errors
    /// As [`StrQueue::pop_lease`].
    pub fn pop_lease_wait_counted(
        &self,
        deadline: &Deadline,
        timeout: Option<f64>,
        out: &mut Vec<u8>,
    ) -> LResult<Waited<(bool, u64, u64)>> {
        Ok(self
            .pop_lease_wait(deadline, timeout, out)?
            .map(|(u, l)| (u, l, 1)))
    }

    /// The delivery count of lease `lease`; `None` once it ended.
    ///
    /// # Errors
    /// As [`StrQueue::ack`].
    pub fn deliveries(&self, lease: u64) -> LResult<Option<u64>> {
        let _ = lease;
        todo()
    }

    /// Push the deadline of lease `lease` forward.
    ///
    /// # Errors
    /// As [`StrQueue::ack`].
    pub fn touch(&self, lease: u64, timeout: Option<f64>) -> LResult<bool> {
        let _ = (lease, timeout);
        todo()
    }

    /// [`StrQueue::release`] after `delay` seconds.
    ///
    /// # Errors
    /// As [`StrQueue::ack`].
    pub fn release_after(&self, lease: u64, delay: f64) -> LResult<bool> {
        let _ = (lease, delay);
        todo()
    }

    /// Move the item of lease `lease` to the dead-letter area.
    ///
    /// # Errors
    /// As [`StrQueue::ack`]; [`LeaseError::DeadFull`].
    pub fn bury(&self, lease: u64) -> LResult<bool> {
        let _ = lease;
        todo()
    }

    /// Push `bytes`, visible after `delay` seconds.
    ///
    /// # Errors
    /// [`LeaseError::NoLeases`], [`LeaseError::Full`],
    /// [`LeaseError::AreaFull`], [`LeaseError::TooBig`].
    pub fn push_delayed(&self, delay: f64, bytes: &[u8], utf8: bool) -> LResult<()> {
        let _ = (delay, bytes, utf8);
        todo()
    }

    /// Items in the dead-letter area.
    pub fn dead_count(&self) -> u64 {
        0
    }

    /// The `k`-th oldest dead item, its bytes into `out`: (info, utf8).
    ///
    /// # Errors
    /// [`LeaseError::LockTimeout`], [`LeaseError::Corrupt`].
    pub fn dead_nth(&self, k: u64, out: &mut Vec<u8>) -> LResult<Option<(DeadItem, bool)>> {
        let _ = (k, out);
        Ok(None)
    }

    /// Take the oldest dead item out, its bytes into `out`.
    ///
    /// # Errors
    /// [`LeaseError::LockTimeout`], [`LeaseError::Corrupt`].
    pub fn dead_take(&self, out: &mut Vec<u8>) -> LResult<Option<(DeadItem, bool)>> {
        let _ = out;
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
