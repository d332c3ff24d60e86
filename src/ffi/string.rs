//! String operations (`dqs_str_*`): byte buffers with a UTF-8 flag, and
//! the per-handle buffer popped strings are copied into.

use std::ffi::c_int;

use super::{push_status, set_error, status, DqsError, DqsQueue};
use super::{DQS_DONE, DQS_ERROR, DQS_NONE};
use crate::error::Error;
use crate::futex::Deadline;
use crate::strq::StrQueue;

/// One string handed across the ABI: bytes (not NUL-terminated), length,
/// and whether Perl should mark it UTF-8.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DqsStrItem {
    /// First byte (may be dangling when `len` is 0).
    pub ptr: *const u8,
    /// Length in bytes.
    pub len: usize,
    /// 1 when the string carries the UTF-8 flag, else 0.
    pub utf8: c_int,
}

/// Where popped strings are copied (under the queue lock) before the caller
/// turns them into its own strings. Owned by the handle, reused by every
/// call, valid until the next Str call on the same handle.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) bytes: Vec<u8>,
    ranges: Vec<(usize, usize, bool)>,
    items: Vec<DqsStrItem>,
    /// Why the last failed pop, peek or batch on this handle failed (an
    /// item it could not decode), until `dqs_str_error` takes it. Not
    /// cleared by every call: that would cost the hot paths a test.
    error: Option<Error>,
}

/// Scratch buffers above this are released after use, so one huge item
/// does not pin its size in every handle for ever.
const SCRATCH_KEEP: usize = 1 << 20;

impl Scratch {
    pub(super) fn reset(&mut self) {
        self.bytes.clear();
        self.ranges.clear();
        self.items.clear();
        if self.bytes.capacity() > SCRATCH_KEEP {
            self.bytes.shrink_to(SCRATCH_KEEP);
        }
        if self.items.capacity() > SCRATCH_KEEP / 16 {
            self.items.shrink_to(SCRATCH_KEEP / 16);
            self.ranges.shrink_to(SCRATCH_KEEP / 16);
        }
    }
}

/// The Str queue of a handle, or `None` for integer handles.
#[inline]
pub(super) fn str_queue(q: &DqsQueue) -> Option<&StrQueue> {
    q.queue.as_str()
}

/// # Safety
/// `ptr` readable for `len` bytes (or `len == 0`).
pub(super) unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// The Str handle's lock timeout in seconds, or a negative number when
/// its non-blocking calls wait as long as the lock holder lives (the
/// default; also the answer for an integer handle).
///
/// # Safety
/// `q` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_lock_timeout(q: *const DqsQueue) -> f64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    str_queue(q)
        .and_then(|sq| sq.lock_timeout())
        .unwrap_or(-1.0)
}

/// Set the Str handle's lock timeout: how long its non-blocking calls wait
/// for a lock held by a live process before they give up (returning
/// `DQS_NONE` or 0 items with `errno` = `ETIMEDOUT`). Negative, infinite or
/// NaN: wait as long as the holder lives. Does nothing on integer handles.
///
/// # Safety
/// `q` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_set_lock_timeout(q: *const DqsQueue, secs: f64) {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    if let Some(sq) = str_queue(q) {
        sq.set_lock_timeout(Some(secs));
    }
}

/// Push a copy of the `len` bytes at `ptr` (NUL bytes allowed) with its
/// UTF-8 flag (`utf8` non-zero) at the back, or with `front` non-zero at
/// the front (it is then popped next). Returns `DQS_DONE`, `DQS_NONE` (no
/// room now: slots or arena; or the lock timeout passed, `errno` =
/// `ETIMEDOUT`), or `DQS_ERROR` with `*err` filled (`DQS_E_ARG`) when the
/// string can never fit (longer than the usable arena or 2^31 - 1 bytes).
///
/// # Safety
/// Live handle; `ptr` readable for `len` bytes; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_push(
    q: *const DqsQueue,
    ptr: *const u8,
    len: usize,
    utf8: c_int,
    front: c_int,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle; readable bytes.
    let (q, b) = unsafe { (&*q, bytes(ptr, len)) };
    let Some(sq) = str_queue(q) else {
        return DQS_NONE;
    };
    let r = if front != 0 {
        sq.push_front(b, utf8 != 0)
    } else {
        sq.push(b, utf8 != 0)
    };
    push_status(r, err)
}

/// Push like `dqs_str_push()`, sleeping while there is no room, until
/// `*deadline`. `DQS_DONE`, `DQS_NONE` (timed out), `DQS_INTERRUPTED`, or
/// `DQS_ERROR` (can never fit).
///
/// # Safety
/// Live handle; `ptr` readable for `len` bytes; `deadline` valid; `err`
/// null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_push_wait(
    q: *const DqsQueue,
    ptr: *const u8,
    len: usize,
    utf8: c_int,
    front: c_int,
    deadline: *const Deadline,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle, readable bytes, valid deadline.
    let (q, b, d) = unsafe { (&*q, bytes(ptr, len), &*deadline) };
    let Some(sq) = str_queue(q) else {
        return DQS_NONE;
    };
    match sq.push_wait(b, utf8 != 0, front != 0, d) {
        Ok(w) => status(w, |()| ()),
        Err(e) => {
            set_error(err, &e);
            DQS_ERROR
        }
    }
}

/// Push the `n` items at `items` (their bytes and flags; `ptr` of an
/// empty item may be anything) at the back under one lock until one does
/// not fit; returns how many were pushed, or -1 with `*err` filled (and
/// nothing pushed) when any item can never fit.
///
/// # Safety
/// Live handle; `items` readable for `n` entries, each `ptr` for its `len`;
/// `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_push_multi(
    q: *const DqsQueue,
    items: *const DqsStrItem,
    n: usize,
    err: *mut DqsError,
) -> isize {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let Some(sq) = str_queue(q) else {
        return 0;
    };
    if n == 0 {
        return 0;
    }
    // SAFETY: `items` holds `n` entries.
    let items = unsafe { std::slice::from_raw_parts(items, n) };
    // SAFETY: each entry's bytes are readable per the contract.
    let item = |it: &DqsStrItem| (unsafe { bytes(it.ptr, it.len) }, it.utf8 != 0);
    // Read where they lie: no copy of the batch (a heap Vec per call cost
    // more than the 100 pushes of a typical batch).
    match sq.push_multi_iter(items.iter().map(item)) {
        Ok(k) => k as isize,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// `dqs_str_push_multi()` for a blocked batch (`push_wait_multi`): the
/// wait for the lock ends at `*deadline` or at a signal instead of at the
/// handle's lock timeout. `DQS_DONE` with `*done` set to how many were
/// pushed, `DQS_NONE` (the deadline passed with the lock held),
/// `DQS_INTERRUPTED`, or `DQS_ERROR` (an item can never fit; nothing
/// pushed).
///
/// # Safety
/// As `dqs_str_push_multi()`; `deadline` valid; `done` writable.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_push_multi_until(
    q: *const DqsQueue,
    items: *const DqsStrItem,
    n: usize,
    deadline: *const Deadline,
    done: *mut usize,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle, valid deadline.
    let (q, d) = unsafe { (&*q, &*deadline) };
    let Some(sq) = str_queue(q) else {
        return DQS_NONE;
    };
    let items: &[DqsStrItem] = if n == 0 {
        &[]
    } else {
        // SAFETY: `items` holds `n` entries.
        unsafe { std::slice::from_raw_parts(items, n) }
    };
    // SAFETY: each entry's bytes are readable per the contract.
    let item = |it: &DqsStrItem| (unsafe { bytes(it.ptr, it.len) }, it.utf8 != 0);
    match sq.push_multi_iter_until(items.iter().map(item), d) {
        // SAFETY: `done` is writable per the contract.
        Ok(w) => status(w, |k| unsafe { done.write(k) }),
        Err(e) => {
            set_error(err, &e);
            DQS_ERROR
        }
    }
}

pub(super) fn one_item(sc: &mut Scratch, utf8: bool, out: *mut DqsStrItem) {
    let item = DqsStrItem {
        ptr: sc.bytes.as_ptr(),
        len: sc.bytes.len(),
        utf8: utf8 as c_int,
    };
    // SAFETY: the caller passes a writable item.
    unsafe { out.write(item) };
}

/// Pop the front (or, with `back` non-zero, the back) item into `*out`.
/// With `peek` non-zero, copy the front item without removing it (`back`
/// is then ignored). Returns `DQS_DONE`, or `DQS_NONE` when the queue is
/// empty (or the lock timeout passed, `errno` = `ETIMEDOUT`), or
/// `DQS_ERROR` for a compressed item that could not be decoded (removed,
/// unless peeked; `dqs_str_error()` says why). Compressed items are
/// decoded into the handle's buffer after the lock is released.
///
/// `out->ptr` points into the handle's buffer: valid until the next Str
/// call on this handle or `dqs_close()`; copy the bytes to keep them.
///
/// # Safety
/// Live handle, not used concurrently by another thread; `out` writable.
/// `out->ptr` is valid until the next Str call on this handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_pop(
    q: *const DqsQueue,
    back: c_int,
    peek: c_int,
    out: *mut DqsStrItem,
) -> c_int {
    // SAFETY: live handle; the C contract forbids concurrent Str calls on
    // one handle, so this call has the scratch buffers to itself.
    let (q, sc) = unsafe { (&*q, &mut *(*q).scratch.get()) };
    let Some(sq) = str_queue(q) else {
        return DQS_NONE;
    };
    sc.reset();
    let r = if peek != 0 {
        sq.peek_checked(&mut sc.bytes)
    } else {
        sq.pop_checked(back != 0, &mut sc.bytes)
    };
    match r {
        Ok(Some(utf8)) => {
            one_item(sc, utf8, out);
            DQS_DONE
        }
        Ok(None) => DQS_NONE,
        Err(e) => failed(sc, e),
    }
}

/// Keep `e` for `dqs_str_error()`; `DQS_ERROR`.
#[cold]
fn failed(sc: &mut Scratch, e: Error) -> c_int {
    sc.error = Some(e);
    DQS_ERROR
}

/// Why a pop, peek or batch pop on this Str handle failed: a compressed
/// item it could not decode (`DQS_E_CORRUPT`: its bytes were scribbled
/// over; `DQS_E_UNSUPPORTED`: this build lacks the `zstd` feature). Call
/// it right after `dqs_str_pop()` or `dqs_str_pop_wait()` returned
/// `DQS_ERROR`, or `dqs_str_pop_multi()` returned 0: it then fills `*err`,
/// forgets the error and returns `DQS_ERROR`. It returns `DQS_DONE`
/// (`*err` untouched) when there is no error to report (a batch that
/// returned 0 found the queue empty).
///
/// # Safety
/// Live handle, not used concurrently by another thread; `err` null or
/// valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_error(q: *const DqsQueue, err: *mut DqsError) -> c_int {
    // SAFETY: live handle, exclusive use of its scratch (the C contract).
    let sc = unsafe { &mut *(*q).scratch.get() };
    match sc.error.take() {
        Some(e) => {
            set_error(err, &e);
            DQS_ERROR
        }
        None => DQS_DONE,
    }
}

/// Compress the strings of at least `min_bytes` bytes that this Str
/// handle pushes (every push call) with zstd at `level` (3 is zstd's
/// default; negative levels are its fast ones), when that makes them
/// shorter; `min_bytes` 0 turns it off. This handle only; readers decode
/// without any setting. Returns the previous `min_bytes` (0: off), or -1
/// with `*err` filled: `DQS_E_ARG` for a level zstd does not have,
/// `DQS_E_UNSUPPORTED` for an integer handle or a build without the
/// `zstd` feature.
///
/// # Safety
/// Live handle; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_set_compress(
    q: *const DqsQueue,
    min_bytes: u64,
    level: c_int,
    err: *mut DqsError,
) -> i64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let r = match str_queue(q) {
        Some(sq) => sq.set_compress(min_bytes, level),
        None => Err(Error::Unsupported("compression is for Str queues")),
    };
    match r {
        Ok(prev) => i64::try_from(prev).unwrap_or(i64::MAX),
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// `dqs_str_pop()` (without peek), sleeping while empty, until
/// `*deadline`. `DQS_DONE`, `DQS_NONE` (timed out), `DQS_INTERRUPTED`, or
/// `DQS_ERROR` as for `dqs_str_pop()`.
///
/// # Safety
/// As `dqs_str_pop()`; `deadline` valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_pop_wait(
    q: *const DqsQueue,
    back: c_int,
    deadline: *const Deadline,
    out: *mut DqsStrItem,
) -> c_int {
    // SAFETY: live handle; exclusive use of the scratch buffers for this
    // call (the C contract); valid deadline.
    let (q, sc, d) = unsafe { (&*q, &mut *(*q).scratch.get(), &*deadline) };
    let Some(sq) = str_queue(q) else {
        return DQS_NONE;
    };
    sc.reset();
    match sq.pop_wait_checked(back != 0, &mut sc.bytes, d) {
        Ok(w) => status(w, |utf8| one_item(sc, utf8, out)),
        Err(e) => failed(sc, e),
    }
}

/// Pop up to `n` items from the front under one lock. When `has_budget`
/// is 1, `max_bytes` is a byte budget: stop before the total length would
/// exceed it, but (when `first_exempt` is 1) always take one item if there
/// is one. Returns how many; `*out` points to that many items, valid until the
/// next Str call on this handle. Compressed items count at their decoded
/// length. 0 also when the batch met a compressed item that could not be
/// decoded: then `dqs_str_error()` says why, and the whole batch taken
/// with it is gone.
///
/// # Safety
/// As `dqs_str_pop()`; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn dqs_str_pop_multi(
    q: *const DqsQueue,
    n: usize,
    has_budget: c_int,
    max_bytes: u64,
    first_exempt: c_int,
    out: *mut *const DqsStrItem,
) -> usize {
    // SAFETY: live handle; the C contract forbids concurrent Str calls on
    // one handle, so this call has the scratch buffers to itself.
    let (q, sc) = unsafe { (&*q, &mut *(*q).scratch.get()) };
    let Some(sq) = str_queue(q) else {
        return 0;
    };
    sc.reset();
    let budget = (has_budget != 0).then_some(max_bytes);
    let got =
        match sq.pop_multi_checked(n, budget, first_exempt != 0, &mut sc.bytes, &mut sc.ranges) {
            // 0 items: no error left over from an earlier call for
            // `dqs_str_error()` to report.
            Ok(0) => {
                sc.error = None;
                0
            }
            Ok(got) => got,
            Err(e) => {
                failed(sc, e);
                0
            }
        };
    let base = sc.bytes.as_ptr();
    sc.items
        .extend(sc.ranges.iter().map(|&(start, len, utf8)| DqsStrItem {
            // SAFETY: `start` indexes `bytes`, which holds every range.
            ptr: unsafe { base.add(start) },
            len,
            utf8: utf8 as c_int,
        }));
    // SAFETY: writable per the contract.
    unsafe { out.write(sc.items.as_ptr()) };
    got
}
