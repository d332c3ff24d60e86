//! Integer operations (`dqs_int_*`): values cross as `int64_t`.

use std::ffi::c_int;

use super::{status, DqsQueue, DQS_DONE, DQS_NONE};
use crate::any::AnyQueue;
use crate::futex::Deadline;
use crate::intq::IntQueue;
use crate::ring::Element;
use crate::wait::Waited;

macro_rules! with_int {
    ($q:expr, $iq:ident => $body:expr, $on_str:expr) => {
        match &$q.queue {
            AnyQueue::Int($iq) => $body,
            AnyQueue::Int32($iq) => $body,
            AnyQueue::Int16($iq) => $body,
            AnyQueue::Str(_) => $on_str,
        }
    };
}

fn write_value(v: Option<i64>, out: *mut i64) -> c_int {
    match v {
        Some(v) => {
            // SAFETY: the caller passes a writable `out`.
            unsafe { out.write(v) };
            DQS_DONE
        }
        None => DQS_NONE,
    }
}

/// Push `v` (truncated to the queue's width, as a C cast). Lock-free.
/// Returns `DQS_DONE`, or `DQS_NONE` when the queue is full (or the
/// handle is a Str one).
///
/// # Safety
/// Live integer-queue handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_push(q: *const DqsQueue, v: i64) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    with_int!(q, iq => iq.push(Element::from_i64(v)), false) as c_int
}

/// Pop the oldest item into `*out` (sign-extended). Lock-free. Returns
/// `DQS_DONE`, or `DQS_NONE` when the queue is empty (`*out` untouched).
///
/// # Safety
/// Live integer-queue handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_pop(q: *const DqsQueue, out: *mut i64) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    write_value(with_int!(q, iq => iq.pop().map(Element::to_i64), None), out)
}

/// Look at the oldest item without taking it (best effort under
/// concurrency). `DQS_DONE` or `DQS_NONE` (empty).
///
/// # Safety
/// Live integer-queue handle; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_peek(q: *const DqsQueue, out: *mut i64) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    write_value(
        with_int!(q, iq => iq.peek().map(Element::to_i64), None),
        out,
    )
}

/// Push `v`, sleeping while full, until `*deadline`. `DQS_DONE`,
/// `DQS_NONE` (timed out) or `DQS_INTERRUPTED`.
///
/// # Safety
/// Live integer-queue handle; `deadline` valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_push_wait(
    q: *const DqsQueue,
    v: i64,
    deadline: *const Deadline,
) -> c_int {
    // SAFETY: live handle and deadline.
    let (q, d) = unsafe { (&*q, &*deadline) };
    status(
        with_int!(q, iq => iq.push_wait(Element::from_i64(v), d), Waited::TimedOut),
        |()| (),
    )
}

/// Pop into `*out`, sleeping while empty, until `*deadline`. `DQS_DONE`,
/// `DQS_NONE` (timed out) or `DQS_INTERRUPTED`.
///
/// # Safety
/// Live integer-queue handle; `out` writable; `deadline` valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_pop_wait(
    q: *const DqsQueue,
    out: *mut i64,
    deadline: *const Deadline,
) -> c_int {
    // SAFETY: live handle and deadline.
    let (q, d) = unsafe { (&*q, &*deadline) };
    let w = with_int!(q, iq => iq.pop_wait(d).map(Element::to_i64), Waited::TimedOut);
    // SAFETY: writable per the contract.
    status(w, |v| unsafe { out.write(v) })
}

/// Push the `n` values at `vals` in order until one does not fit; returns
/// how many were pushed (0 to `n`). Items are claimed in runs, so this is
/// much cheaper than `n` calls of `dqs_int_push()`.
///
/// # Safety
/// Live integer-queue handle; `vals` readable for `n` items.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_push_multi(
    q: *const DqsQueue,
    vals: *const i64,
    n: usize,
) -> usize {
    if n == 0 {
        return 0;
    }
    // SAFETY: live handle; `vals` holds `n` items.
    let (q, vals) = unsafe { (&*q, std::slice::from_raw_parts(vals, n)) };
    match &q.queue {
        // The values as they are: no narrowing copy.
        AnyQueue::Int(iq) => iq.push_slice(vals),
        _ => with_int!(q, iq => iq.push_multi(vals.iter().map(|&v| Element::from_i64(v))), 0),
    }
}

/// Pop up to `n` items, oldest first, into `out` (caller-owned);
/// returns how many (0 when empty).
///
/// # Safety
/// Live integer-queue handle; `out` writable for `n` items.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_pop_multi(q: *const DqsQueue, out: *mut i64, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    // SAFETY: live handle; `out` holds `n` writable items.
    let (q, out) = unsafe { (&*q, std::slice::from_raw_parts_mut(out, n)) };
    match &q.queue {
        // Straight into `out`: no widening copy.
        AnyQueue::Int(iq) => iq.pop_multi(out),
        _ => with_int!(q, iq => pop_widened(iq, out), 0),
    }
}

/// Pop into `out` through a small buffer of the queue's own width.
fn pop_widened<T: Element>(iq: &IntQueue<T>, out: &mut [i64]) -> usize {
    const CHUNK: usize = 256;
    let mut buf = [T::from_i64(0); CHUNK];
    let mut done = 0;
    while done < out.len() {
        let want = (out.len() - done).min(CHUNK);
        let got = iq.pop_multi(&mut buf[..want]);
        for (d, s) in out[done..done + got].iter_mut().zip(&buf[..got]) {
            *d = s.to_i64();
        }
        done += got;
        if got < want {
            break;
        }
    }
    done
}
