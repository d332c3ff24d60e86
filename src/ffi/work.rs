//! The C ABI of the work-queue calls (see the `lease` module's "Work
//! queue" docs): delivery counts, dead letters, delays and touch, and the
//! create option `dqs_set_create_work`. Return values follow the
//! conventions of the `ffi` module; a failure is `DQS_ERROR` with `*err`
//! of kind `DQS_E_LEASE` (or `DQS_E_CORRUPT`).

use std::ffi::c_int;

use super::lease::{lease_error, timeout_of, write_opt};
use super::string::{bytes, one_item, str_queue};
use super::{DqsError, DqsQueue, DqsStrItem, DQS_DONE, DQS_NONE};
use crate::any::AnyQueue;
use crate::lease::{DeadItem, LeaseError};
use crate::ring::Element;

/// Dead-letter reason: released after its last allowed delivery.
pub const DQS_DEAD_RELEASED: c_int = 1;
/// Dead-letter reason: its lease deadline passed after its last allowed
/// delivery.
pub const DQS_DEAD_DEADLINE: c_int = 2;
/// Dead-letter reason: its holder died after its last allowed delivery.
pub const DQS_DEAD_HOLDER_DIED: c_int = 3;
/// Dead-letter reason: buried by its holder (`dqs_bury`).
pub const DQS_DEAD_BURIED: c_int = 4;

/// One item of the dead-letter area, as `dqs_dead_nth` and
/// `dqs_dead_take` give it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct DqsDeadInfo {
    /// Pop order of the item (as a lease's `seq`).
    pub seq: u64,
    /// Leased hand-outs it had.
    pub deliveries: u64,
    /// `DQS_DEAD_RELEASED`, `DQS_DEAD_DEADLINE`, `DQS_DEAD_HOLDER_DIED` or
    /// `DQS_DEAD_BURIED`.
    pub reason: i32,
    /// CLOCK_REALTIME nanoseconds of the move.
    pub when_ns: u64,
    /// Int: the value. Str: the item's length (decoded).
    pub value: i64,
    /// Str: the bytes it takes in the lease data area. Int: 0.
    pub stored: u64,
}

impl From<DeadItem> for DqsDeadInfo {
    fn from(d: DeadItem) -> DqsDeadInfo {
        DqsDeadInfo {
            seq: d.seq,
            deliveries: d.deliveries,
            reason: d.reason as i32,
            when_ns: d.when_ns,
            value: d.value,
            stored: d.stored,
        }
    }
}

/// A delay argument: `Err` for a negative, NaN or infinite one.
fn delay_of(delay: f64, err: *mut DqsError) -> Result<f64, c_int> {
    if delay.is_finite() && delay >= 0.0 {
        Ok(delay)
    } else {
        Err(lease_error(
            err,
            &LeaseError::BadArg(format!("delay '{delay}' is not a number of seconds >= 0")),
        ))
    }
}

fn status(r: Result<bool, LeaseError>, err: *mut DqsError) -> c_int {
    match r {
        Ok(true) => DQS_DONE,
        Ok(false) => DQS_NONE,
        Err(e) => lease_error(err, &e),
    }
}

/// Set this thread's work-queue options for the queues it creates next
/// (until set again): `max_deliveries` (negative: the default, 0 =
/// unlimited; at most 2^32-1) and `max_dead` dead-letter records
/// (negative: the default, 64; 0: no dead-letter area; at most 65536).
/// Attaching ignores them. A value out of range makes the create fail
/// with `DQS_E_ARG`.
#[no_mangle]
pub extern "C" fn dqs_set_create_work(max_deliveries: i64, max_dead: i64) {
    crate::create_opts::set_work_options(
        u64::try_from(max_deliveries).ok(),
        u64::try_from(max_dead).ok(),
    );
}

/// Release lease `lease`, its item coming back to the front of the queue
/// only after `delay` seconds (0: as `dqs_end_lease` with `release` 1).
/// `DQS_DONE`, `DQS_NONE` (the lease had ended), `DQS_ERROR` (a bad delay,
/// a foreign id, no free record for a delayed item).
///
/// # Safety
/// Live handle (a Str one not used by another thread at the same time);
/// `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_release_after(
    q: *const DqsQueue,
    lease: u64,
    delay: f64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let d = match delay_of(delay, err) {
        Ok(d) => d,
        Err(c) => return c,
    };
    status(q.queue.release_after(lease, d), err)
}

/// Move the item of held lease `lease` to the dead-letter area (reason
/// `DQS_DEAD_BURIED`). `DQS_DONE`, `DQS_NONE` (the lease had ended),
/// `DQS_ERROR` (a foreign id, the area full or absent: the lease stays
/// held).
///
/// # Safety
/// As `dqs_release_after()`.
#[no_mangle]
pub unsafe extern "C" fn dqs_bury(q: *const DqsQueue, lease: u64, err: *mut DqsError) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    status(q.queue.bury(lease), err)
}

/// Push the deadline of held lease `lease` to now + `lease_timeout`
/// seconds (negative: the lease's own length; a lease without a deadline
/// then keeps none). `DQS_DONE`, `DQS_NONE` (ended), `DQS_ERROR`.
///
/// # Safety
/// As `dqs_release_after()`.
#[no_mangle]
pub unsafe extern "C" fn dqs_touch(
    q: *const DqsQueue,
    lease: u64,
    lease_timeout: f64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    status(q.queue.touch(lease, timeout_of(lease_timeout)), err)
}

/// The delivery count of held lease `lease` into `*out`. `DQS_DONE`,
/// `DQS_NONE` (ended), `DQS_ERROR` (a foreign id).
///
/// # Safety
/// As `dqs_release_after()`; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn dqs_deliveries(
    q: *const DqsQueue,
    lease: u64,
    out: *mut u64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.queue.deliveries(lease) {
        Ok(Some(n)) => {
            // SAFETY: writable per the contract.
            unsafe { write_opt(out, n) };
            DQS_DONE
        }
        Ok(None) => DQS_NONE,
        Err(e) => lease_error(err, &e),
    }
}

/// Push `v` (converted as `dqs_int_push` does), visible to pops only after
/// `delay` seconds. `DQS_DONE` or `DQS_ERROR` (a bad delay, no lease
/// table, every record taken).
///
/// # Safety
/// Live integer-queue handle; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_push_delayed(
    q: *const DqsQueue,
    delay: f64,
    v: i64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let d = match delay_of(delay, err) {
        Ok(d) => d,
        Err(c) => return c,
    };
    let r = match &q.queue {
        AnyQueue::Int(iq) => iq.push_delayed(d, Element::from_i64(v)),
        AnyQueue::Int32(iq) => iq.push_delayed(d, Element::from_i64(v)),
        AnyQueue::Int16(iq) => iq.push_delayed(d, Element::from_i64(v)),
        AnyQueue::Str(_) => return DQS_NONE,
    };
    status(r.map(|()| true), err)
}

/// Push the `len` bytes at `p` (compressed as the queue's pushes are),
/// visible to pops only after `delay` seconds. `DQS_DONE` or `DQS_ERROR`
/// (a bad delay, no lease table, every record taken, no room in the lease
/// data area).
///
/// # Safety
/// Live Str handle; `p` readable for `len` bytes; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_push_delayed(
    q: *const DqsQueue,
    delay: f64,
    p: *const u8,
    len: usize,
    utf8: c_int,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle; readable bytes.
    let (q, b) = unsafe { (&*q, bytes(p, len)) };
    let Some(sq) = str_queue(q) else {
        return DQS_NONE;
    };
    let d = match delay_of(delay, err) {
        Ok(d) => d,
        Err(c) => return c,
    };
    status(sq.push_delayed(d, b, utf8 != 0).map(|()| true), err)
}

/// Items in the dead-letter area now.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_dead_count(q: *const DqsQueue) -> u64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    q.queue.dead_count()
}

fn dead_out(
    r: Result<Option<(DeadItem, bool)>, LeaseError>,
    sc: &mut super::string::Scratch,
    info: *mut DqsDeadInfo,
    item: *mut DqsStrItem,
    err: *mut DqsError,
) -> c_int {
    match r {
        Ok(Some((d, utf8))) => {
            // SAFETY: writable per the contract.
            unsafe { info.write(d.into()) };
            if !item.is_null() {
                one_item(sc, utf8, item);
            }
            DQS_DONE
        }
        Ok(None) => DQS_NONE,
        Err(e) => lease_error(err, &e),
    }
}

/// The `k`-th oldest item of the dead-letter area (0: the oldest) into
/// `*info`, and for Str its bytes into `*item` (valid until the next Str
/// call on the handle; `item` may be NULL). `DQS_DONE`, `DQS_NONE` (past
/// the end) or `DQS_ERROR`.
///
/// # Safety
/// Live handle (a Str one not used by another thread at the same time);
/// `info` writable; `item` null or writable; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_dead_nth(
    q: *const DqsQueue,
    k: u64,
    info: *mut DqsDeadInfo,
    item: *mut DqsStrItem,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle; exclusive scratch (the C contract).
    let (q, sc) = unsafe { (&*q, &mut *(*q).scratch.get()) };
    sc.reset();
    let r = q.queue.dead_nth(k, &mut sc.bytes);
    dead_out(r, sc, info, item, err)
}

/// Remove the oldest item of the dead-letter area, into `*info` and (Str)
/// `*item` as `dqs_dead_nth()`. `DQS_DONE`, `DQS_NONE` (the area is
/// empty) or `DQS_ERROR`.
///
/// # Safety
/// As `dqs_dead_nth()`.
#[no_mangle]
pub unsafe extern "C" fn dqs_dead_take(
    q: *const DqsQueue,
    info: *mut DqsDeadInfo,
    item: *mut DqsStrItem,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle; exclusive scratch (the C contract).
    let (q, sc) = unsafe { (&*q, &mut *(*q).scratch.get()) };
    sc.reset();
    let r = q.queue.dead_take(&mut sc.bytes);
    dead_out(r, sc, info, item, err)
}

/// Move up to `n` items of the dead-letter area (oldest first) to the
/// front of the live queue, their delivery counts reset to 0; `*moved`
/// (unless NULL) how many (fewer when the area has fewer, or the live
/// queue has no room). `DQS_DONE` or `DQS_ERROR`.
///
/// # Safety
/// As `dqs_release_after()`; `moved` null or writable.
#[no_mangle]
pub unsafe extern "C" fn dqs_kick(
    q: *const DqsQueue,
    n: u64,
    moved: *mut u64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.queue.kick(n) {
        Ok(m) => {
            // SAFETY: null or writable per the contract.
            unsafe { write_opt(moved, m) };
            DQS_DONE
        }
        Err(e) => lease_error(err, &e),
    }
}
