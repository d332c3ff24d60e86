//! Lease calls mixed into the operations (format 6), with the
//! work-queue calls (format 8: counts, dead letters, delays, touch).

use data_queue_shared::ring::Element;
use data_queue_shared::{IntQueue, LeaseError, StrQueue};

use crate::harness::Status;
use crate::ops::Val;
use crate::rng::Rng;

/// The lease and work-queue calls of a queue, as the fuzzer makes them.
pub(crate) trait Leasing {
    /// `pop_lease_counted`: the lease id and its count.
    fn pop(&self, t: Option<f64>) -> Result<Option<(u64, u64)>, LeaseError>;
    /// 0 ack, 1 release, 2 release_after(`x`), 3 bury, 4 touch(`x`),
    /// 5 deliveries.
    fn end(&self, l: u64, how: u64, x: f64) -> Result<bool, LeaseError>;
    /// 0 push_delayed(`x`), 1 kick(`n`), 2 dead_take, 3 dead_nth(`n`),
    /// 4 dead_count.
    fn work(&self, which: u64, x: f64, n: u64) -> Result<u64, LeaseError>;
    /// `lease_stats` and `leases`.
    fn look(&self) -> u64;
}

impl<T: Val + Element> Leasing for IntQueue<T> {
    fn pop(&self, t: Option<f64>) -> Result<Option<(u64, u64)>, LeaseError> {
        self.pop_lease_counted(t).map(|o| o.map(|x| (x.1, x.2)))
    }
    fn end(&self, l: u64, how: u64, x: f64) -> Result<bool, LeaseError> {
        match how {
            0 => self.ack(l),
            1 => self.release(l),
            2 => self.release_after(l, x),
            3 => self.bury(l),
            4 => self.touch(l, (x >= 0.0).then_some(x)),
            _ => self.deliveries(l).map(|d| d.is_some()),
        }
    }
    fn work(&self, which: u64, x: f64, n: u64) -> Result<u64, LeaseError> {
        match which {
            0 => self.push_delayed(x, T::from_u64(n)).map(|()| 1),
            1 => self.kick(n),
            2 => self.dead_take().map(|d| d.map_or(0, |d| d.deliveries)),
            3 => Ok(self.dead_nth(n).map_or(0, |d| d.deliveries)),
            _ => Ok(self.dead_count()),
        }
    }
    fn look(&self) -> u64 {
        let s = self.lease_stats();
        assert!(s.dead_items <= s.max_dead, "{s:?}");
        s.open + self.leases().len() as u64
    }
}

impl Leasing for StrQueue {
    fn pop(&self, t: Option<f64>) -> Result<Option<(u64, u64)>, LeaseError> {
        let mut b = Vec::new();
        self.pop_lease_counted(t, &mut b)
            .map(|o| o.map(|x| (x.1, x.2)))
    }
    fn end(&self, l: u64, how: u64, x: f64) -> Result<bool, LeaseError> {
        match how {
            0 => self.ack(l),
            1 => self.release(l),
            2 => self.release_after(l, x),
            3 => self.bury(l),
            4 => self.touch(l, (x >= 0.0).then_some(x)),
            _ => self.deliveries(l).map(|d| d.is_some()),
        }
    }
    fn work(&self, which: u64, x: f64, n: u64) -> Result<u64, LeaseError> {
        let mut b = Vec::new();
        match which {
            0 => {
                let item = vec![b'd'; (n % 300) as usize];
                self.push_delayed(x, &item, n % 2 == 0).map(|()| 1)
            }
            1 => self.kick(n),
            2 => self
                .dead_take(&mut b)
                .map(|d| d.map_or(0, |d| d.0.deliveries)),
            3 => self
                .dead_nth(n, &mut b)
                .map(|d| d.map_or(0, |d| d.0.deliveries)),
            _ => Ok(self.dead_count()),
        }
    }
    fn look(&self) -> u64 {
        let s = self.lease_stats();
        assert!(s.dead_items <= s.max_dead, "{s:?}");
        s.open + self.leases().len() as u64
    }
}

/// A delay or timeout argument: mostly short, sometimes 0, negative, NaN
/// or infinite (which must be refused cleanly).
fn secs(rng: &mut Rng) -> f64 {
    match rng.below(10) {
        0 => 0.0,
        1 => -1.0,
        2 => f64::NAN,
        3 => f64::INFINITY,
        _ => 0.0005 * rng.below(8) as f64,
    }
}

/// One lease call: a `pop_lease` (with or without a deadline), an end of
/// a lease taken before (or of a made-up id): ack, release, release with
/// a delay, bury, touch, deliveries; a queue-level work call; or a look
/// at the table.
pub(crate) fn lease_op(rng: &mut Rng, st: &Status, leases: &mut Vec<u64>, q: &dyn Leasing) {
    match rng.below(6) {
        0 | 1 => {
            st.enter(22);
            let t = rng.chance(30).then(|| 0.001 * rng.below(3) as f64);
            if let Ok(Some((l, n))) = q.pop(t) {
                assert!(n >= 1, "a leased item has been delivered at least once");
                leases.push(l);
            }
        }
        2 => {
            let l = if !leases.is_empty() && rng.chance(80) {
                leases.swap_remove(rng.below(leases.len() as u64) as usize)
            } else {
                rng.next()
            };
            let how = rng.below(6);
            st.enter(if how < 2 { 23 } else { 24 });
            let _ = q.end(l, how, secs(rng));
            if how >= 4 && rng.chance(50) {
                leases.push(l);
            }
        }
        3 => {
            st.enter(25);
            let n = if rng.chance(20) {
                u64::MAX
            } else {
                rng.below(5)
            };
            let _ = q.work(rng.below(5), secs(rng), n);
        }
        _ => {
            st.enter(10);
            q.look();
        }
    }
}
