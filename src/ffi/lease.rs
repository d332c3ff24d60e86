//! The C ABI of leased pops (see the `lease` module): `dqs_*_pop_lease*`,
//! `dqs_end_lease` (ack or release), `dqs_lease_stats`, `dqs_leases`, and the
//! create option `dqs_set_create_leases`. Return values follow the
//! conventions of the `ffi` module; a lease failure is `DQS_ERROR` with
//! `*err` of kind [`DQS_E_LEASE`] (or `DQS_E_CORRUPT` for a compressed
//! item that does not decode).

use std::ffi::{c_char, c_int};

use super::string::{one_item, str_queue};
use super::{
    DqsError, DqsQueue, DqsStrItem, DQS_DONE, DQS_ERROR, DQS_E_CORRUPT, DQS_INTERRUPTED, DQS_NONE,
};
use crate::any::AnyQueue;
use crate::futex::Deadline;
use crate::lease::{LeaseError, LeaseInfo, LeaseStats};
use crate::ring::Element;
use crate::wait::Waited;

/// Error kind (in `DqsError.kind`): a lease operation failed: no lease
/// table, every lease taken, no room in the Str lease data area, a lease
/// id that is not this queue's, a lease held by another process, or the
/// Str lock timeout.
pub const DQS_E_LEASE: c_int = 8;

pub(super) fn lease_error(err: *mut DqsError, e: &LeaseError) -> c_int {
    if err.is_null() {
        return DQS_ERROR;
    }
    let text = e.to_string();
    // SAFETY: the caller passed a valid, writable DqsError.
    let err = unsafe { &mut *err };
    err.kind = match e {
        LeaseError::Corrupt(_) => DQS_E_CORRUPT,
        _ => DQS_E_LEASE,
    };
    err.os_errno = 0;
    let n = text.len().min(err.msg.len() - 1);
    for (d, s) in err.msg.iter_mut().zip(text.as_bytes()[..n].iter()) {
        *d = *s as c_char;
    }
    err.msg[n] = 0;
    DQS_ERROR
}

/// Write `v` to `p` unless it is null.
///
/// # Safety
/// `p` null or writable.
pub(super) unsafe fn write_opt(p: *mut u64, v: u64) {
    if !p.is_null() {
        // SAFETY: not null, writable per the caller's contract.
        unsafe { p.write(v) };
    }
}

/// A lease timeout argument: negative or NaN for none.
pub(super) fn timeout_of(secs: f64) -> Option<f64> {
    (secs >= 0.0).then_some(secs)
}

/// Set this thread's lease table size for the queues it creates next
/// (until set again): `max_leases` records (negative: the default, 64; 0:
/// no lease table) and, for Str, `lease_bytes` of lease data (negative:
/// the default, see the Perl manual). Attaching ignores them. A value out
/// of range makes the create fail with `DQS_E_ARG`.
#[no_mangle]
pub extern "C" fn dqs_set_create_leases(max_leases: i64, lease_bytes: i64) {
    crate::lease::set_create_options(
        u64::try_from(max_leases).ok(),
        u64::try_from(lease_bytes).ok(),
    );
}

/// Pop the oldest item with a lease: `*out` the value, `*lease` the lease
/// id to pass to `dqs_end_lease()`. `lease_timeout` seconds
/// (negative: none) after which the item goes back if not acked.
/// `DQS_DONE`, `DQS_NONE` (empty), or `DQS_ERROR` (`DQS_E_LEASE`: no lease
/// table, or every lease taken).
///
/// # Safety
/// Live integer-queue handle; `out` and `lease` writable; `err` null or
/// valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_pop_lease(
    q: *const DqsQueue,
    lease_timeout: f64,
    out: *mut i64,
    lease: *mut u64,
    deliveries: *mut u64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let t = timeout_of(lease_timeout);
    let r = match &q.queue {
        AnyQueue::Int(iq) => iq
            .pop_lease_counted(t)
            .map(|o| o.map(|(v, l, n)| (v.to_i64(), l, n))),
        AnyQueue::Int32(iq) => iq
            .pop_lease_counted(t)
            .map(|o| o.map(|(v, l, n)| (v.to_i64(), l, n))),
        AnyQueue::Int16(iq) => iq
            .pop_lease_counted(t)
            .map(|o| o.map(|(v, l, n)| (v.to_i64(), l, n))),
        AnyQueue::Str(_) => return DQS_NONE,
    };
    match r {
        Ok(Some((v, l, n))) => {
            // SAFETY: writable per the contract.
            unsafe {
                out.write(v);
                lease.write(l);
                write_opt(deliveries, n);
            }
            DQS_DONE
        }
        Ok(None) => DQS_NONE,
        Err(e) => lease_error(err, &e),
    }
}

/// `dqs_int_pop_lease()`, sleeping while the queue is empty until
/// `*deadline`: `DQS_DONE`, `DQS_NONE` (timed out), `DQS_INTERRUPTED`
/// (call again with the same deadline) or `DQS_ERROR`.
///
/// # Safety
/// As `dqs_int_pop_lease()`; `deadline` valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_pop_lease_wait(
    q: *const DqsQueue,
    deadline: *const Deadline,
    lease_timeout: f64,
    out: *mut i64,
    lease: *mut u64,
    deliveries: *mut u64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle and deadline.
    let (q, d) = unsafe { (&*q, &*deadline) };
    let t = timeout_of(lease_timeout);
    let r = match &q.queue {
        AnyQueue::Int(iq) => iq
            .pop_lease_wait_counted(d, t)
            .map(|w| w.map(|(v, l, n)| (v.to_i64(), l, n))),
        AnyQueue::Int32(iq) => iq
            .pop_lease_wait_counted(d, t)
            .map(|w| w.map(|(v, l, n)| (v.to_i64(), l, n))),
        AnyQueue::Int16(iq) => iq
            .pop_lease_wait_counted(d, t)
            .map(|w| w.map(|(v, l, n)| (v.to_i64(), l, n))),
        AnyQueue::Str(_) => return DQS_NONE,
    };
    match r {
        Ok(Waited::Done((v, l, n))) => {
            // SAFETY: writable per the contract.
            unsafe {
                out.write(v);
                lease.write(l);
                write_opt(deliveries, n);
            }
            DQS_DONE
        }
        Ok(Waited::TimedOut) => DQS_NONE,
        Ok(Waited::Interrupted) => DQS_INTERRUPTED,
        Err(e) => lease_error(err, &e),
    }
}

/// Pop the front string with a lease into `*out` (valid until the next Str
/// call on this handle, as for `dqs_str_pop()`) and its lease id into
/// `*lease`. `DQS_DONE`, `DQS_NONE` (empty) or `DQS_ERROR` (`DQS_E_LEASE`,
/// or `DQS_E_CORRUPT` for a compressed item that does not decode).
///
/// # Safety
/// Live Str handle not used by another thread at the same time; `out`
/// and `lease` writable; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_pop_lease(
    q: *const DqsQueue,
    lease_timeout: f64,
    out: *mut DqsStrItem,
    lease: *mut u64,
    deliveries: *mut u64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle; exclusive use of the scratch (the C contract).
    let (q, sc) = unsafe { (&*q, &mut *(*q).scratch.get()) };
    let Some(sq) = str_queue(q) else {
        return DQS_NONE;
    };
    sc.reset();
    match sq.pop_lease_counted(timeout_of(lease_timeout), &mut sc.bytes) {
        Ok(Some((utf8, l, n))) => {
            one_item(sc, utf8, out);
            // SAFETY: writable per the contract.
            unsafe {
                lease.write(l);
                write_opt(deliveries, n);
            }
            DQS_DONE
        }
        Ok(None) => DQS_NONE,
        Err(e) => lease_error(err, &e),
    }
}

/// `dqs_str_pop_lease()`, sleeping while the queue is empty until
/// `*deadline` (`DQS_NONE` then; `DQS_INTERRUPTED`: call again).
///
/// # Safety
/// As `dqs_str_pop_lease()`; `deadline` valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_pop_lease_wait(
    q: *const DqsQueue,
    deadline: *const Deadline,
    lease_timeout: f64,
    out: *mut DqsStrItem,
    lease: *mut u64,
    deliveries: *mut u64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle and deadline; exclusive scratch.
    let (q, sc, d) = unsafe { (&*q, &mut *(*q).scratch.get(), &*deadline) };
    let Some(sq) = str_queue(q) else {
        return DQS_NONE;
    };
    sc.reset();
    match sq.pop_lease_wait_counted(d, timeout_of(lease_timeout), &mut sc.bytes) {
        Ok(Waited::Done((utf8, l, n))) => {
            one_item(sc, utf8, out);
            // SAFETY: writable per the contract.
            unsafe {
                lease.write(l);
                write_opt(deliveries, n);
            }
            DQS_DONE
        }
        Ok(Waited::TimedOut) => DQS_NONE,
        Ok(Waited::Interrupted) => DQS_INTERRUPTED,
        Err(e) => lease_error(err, &e),
    }
}

/// End lease `lease` (`release` 0: ack, the item is gone; 1: release, the
/// item goes back to the front). `DQS_DONE`; `DQS_NONE` when the lease had
/// already ended (acked, released, or returned after its holder died or
/// its deadline passed: an ack after the deadline always gives
/// `DQS_NONE`); `DQS_ERROR` (`DQS_E_LEASE`) for an id that is not this
/// queue's or a lease another process holds.
///
/// # Safety
/// Live handle (a Str one not used by another thread at the same time);
/// `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_end_lease(
    q: *const DqsQueue,
    lease: u64,
    release: c_int,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let back = release != 0;
    let r = match &q.queue {
        AnyQueue::Int(iq) => iq.end(lease, back),
        AnyQueue::Int32(iq) => iq.end(lease, back),
        AnyQueue::Int16(iq) => iq.end(lease, back),
        AnyQueue::Str(sq) => {
            if back {
                sq.release(lease)
            } else {
                sq.ack(lease)
            }
        }
    };
    match r {
        Ok(true) => DQS_DONE,
        Ok(false) => DQS_NONE,
        Err(e) => lease_error(err, &e),
    }
}

trait End {
    fn end(&self, lease: u64, back: bool) -> Result<bool, LeaseError>;
}

impl<T: Element> End for crate::IntQueue<T> {
    fn end(&self, lease: u64, back: bool) -> Result<bool, LeaseError> {
        if back {
            self.release(lease)
        } else {
            self.ack(lease)
        }
    }
}

/// Fill `*out` with the queue's lease counters (after a look for dead
/// holders, which returns their leases).
///
/// # Safety
/// Live handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn dqs_lease_stats(q: *const DqsQueue, out: *mut LeaseStats) {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let s = q.queue.lease_stats();
    // SAFETY: writable per the contract.
    unsafe { out.write(s) };
}

/// The leases open or waiting, oldest pop first: fills up to `n` entries
/// of `out` and returns how many there are (call again with a larger
/// buffer if that is more than `n`).
///
/// # Safety
/// Live handle; `out` writable for `n` entries (may be NULL when `n` is 0).
#[no_mangle]
pub unsafe extern "C" fn dqs_leases(q: *const DqsQueue, out: *mut LeaseInfo, n: usize) -> usize {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let v = q.queue.leases();
    for (k, info) in v.iter().take(n).enumerate() {
        // SAFETY: `k < n`, writable per the contract.
        unsafe { out.add(k).write(*info) };
    }
    v.len()
}
