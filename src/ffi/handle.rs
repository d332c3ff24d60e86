//! Opening and closing handles, what a handle is (variant, path, fd), and
//! the process-wide calls (signal flag, wake count, deadlines, unlink).

use std::ffi::{c_char, c_int, CStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{bad_variant, boxed, set_error, DqsError, DqsQueue};
use super::{DQS_INT16, DQS_INT32, DQS_INT64, DQS_STR};
use crate::any::AnyQueue;
use crate::futex::Deadline;
use crate::layout::Variant;

/// Create or attach to the queue file `path` (NUL-terminated).
///
/// `variant` is `DQS_INT64`, `DQS_INT32`, `DQS_INT16` or `DQS_STR`.
/// `capacity` (1 to 2^30) is rounded up to a power of two, at least 2;
/// `arena` (Str only; 0 = `capacity * 256`, raised to at least 4096, at
/// most 2^32) is the string arena size; `mode` (e.g. `0600`) is applied
/// exactly, whatever the umask, to a newly created file. Several processes
/// may open a new path at once: one creates, the others wait and attach.
/// An existing file's stored geometry wins (`capacity`, `arena` and `mode`
/// are then ignored; ask `dqs_capacity()`). A symlink is refused.
///
/// Returns a new handle (free it with `dqs_close()`), or NULL with `*err`
/// filled: `DQS_E_ARG` (unknown variant, capacity or arena out of range),
/// `DQS_E_IO` (open, fallocate, mmap...; `os_errno` says why),
/// `DQS_E_INCOMPATIBLE` (another variant, another format version, a
/// damaged or truncated file), `DQS_E_INCOMPLETE` (a create was
/// interrupted: remove the file and retry).
///
/// # Safety
/// `path` must be a valid NUL-terminated string; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_open_path(
    path: *const c_char,
    variant: u32,
    capacity: u64,
    arena: u64,
    mode: u32,
    err: *mut DqsError,
) -> *mut DqsQueue {
    // SAFETY: the caller guarantees a NUL-terminated string.
    let c = unsafe { CStr::from_ptr(path) };
    let p = Path::new(std::ffi::OsStr::from_bytes(c.to_bytes()));
    boxed(
        Variant::from_u32(variant)
            .ok_or_else(|| bad_variant(variant))
            .and_then(|v| AnyQueue::open(p, v, capacity, arena, mode)),
        err,
    )
}

/// Create a queue in anonymous shared memory (`MAP_SHARED|MAP_ANONYMOUS`):
/// shared with children forked afterwards, reachable by no other process.
/// Arguments as for `dqs_open_path()`.
///
/// Returns a new handle, or NULL with `*err` filled (`DQS_E_ARG`,
/// `DQS_E_IO`).
///
/// # Safety
/// `err` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_open_anon(
    variant: u32,
    capacity: u64,
    arena: u64,
    err: *mut DqsError,
) -> *mut DqsQueue {
    boxed(
        Variant::from_u32(variant)
            .ok_or_else(|| bad_variant(variant))
            .and_then(|v| AnyQueue::anonymous(v, capacity, arena)),
        err,
    )
}

/// Create a queue in a new memfd labelled `name` (NUL-terminated; only a
/// label): close-on-exec, sealed against resizing. `dqs_memfd()` returns
/// its fd, which the handle owns; pass it to another process (over a Unix
/// socket, or across `fork` + `exec` after clearing close-on-exec) for
/// `dqs_open_fd()`. Other arguments as for `dqs_open_path()`.
///
/// Returns a new handle, or NULL with `*err` filled (`DQS_E_ARG`,
/// `DQS_E_IO`).
///
/// # Safety
/// `name` must be a valid NUL-terminated string; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_open_memfd(
    name: *const c_char,
    variant: u32,
    capacity: u64,
    arena: u64,
    err: *mut DqsError,
) -> *mut DqsQueue {
    // SAFETY: the caller guarantees a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(name) };
    boxed(
        Variant::from_u32(variant)
            .ok_or_else(|| bad_variant(variant))
            .and_then(|v| AnyQueue::memfd(name, v, capacity, arena)),
        err,
    )
}

/// Attach to the queue of variant `variant` behind `fd` (a memfd or an
/// open queue file), which is duplicated (`F_DUPFD_CLOEXEC`): the caller's
/// fd is untouched and stays the caller's to close.
///
/// Returns a new handle, or NULL with `*err` filled: `DQS_E_IO` (a bad
/// fd), `DQS_E_TOO_SMALL` (smaller than a header), `DQS_E_INCOMPATIBLE`
/// (another variant or format, or a damaged header), `DQS_E_ARG`.
///
/// # Safety
/// `err` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_open_fd(fd: c_int, variant: u32, err: *mut DqsError) -> *mut DqsQueue {
    boxed(
        Variant::from_u32(variant)
            .ok_or_else(|| bad_variant(variant))
            .and_then(|v| AnyQueue::from_fd(fd, v)),
        err,
    )
}

/// Unmap and free the handle, closing the fds it owns (its memfd or
/// duplicate, and an eventfd it created). Shared state is not touched:
/// other handles and processes keep using the queue, and a thread blocked
/// in another process is not woken. NULL is ignored. No other call on the
/// handle may be in progress, and the handle is invalid afterwards.
///
/// # Safety
/// `q` must be null or a handle from a `dqs_open_*` call not yet closed.
#[no_mangle]
pub unsafe extern "C" fn dqs_close(q: *mut DqsQueue) {
    if !q.is_null() {
        // SAFETY: the caller passes a live handle exactly once.
        drop(unsafe { Box::from_raw(q) });
    }
}

/// The handle's variant: `DQS_INT64`, `DQS_INT32`, `DQS_INT16` or
/// `DQS_STR`.
///
/// # Safety
/// `q` must be a live handle (as for every function below).
#[no_mangle]
pub unsafe extern "C" fn dqs_variant(q: *const DqsQueue) -> u32 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.queue {
        AnyQueue::Int(_) => DQS_INT64,
        AnyQueue::Int32(_) => DQS_INT32,
        AnyQueue::Int16(_) => DQS_INT16,
        AnyQueue::Str(_) => DQS_STR,
    }
}

/// The file path (NUL-terminated, owned by the handle), or NULL for
/// anonymous and memfd queues.
///
/// # Safety
/// Live handle; the string lives as long as the handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_path(q: *const DqsQueue) -> *const c_char {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    q.queue.path().map_or(std::ptr::null(), |p| p.as_ptr())
}

/// The memfd (or fd attached with `dqs_open_fd()`), or -1.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_memfd(q: *const DqsQueue) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    q.queue.fd()
}

/// Remove the handle's backing file. Returns 0, or -1 with `*err` filled
/// (`DQS_E_UNSUPPORTED` for anonymous and memfd queues).
///
/// # Safety
/// Live handle; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_unlink(q: *const DqsQueue, err: *mut DqsError) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.queue.unlink() {
        Ok(()) => 0,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// Remove the queue file at `path` (NUL-terminated) without opening it.
/// Handles open on it keep working. Returns 0, or -1 with `*err` filled
/// (`DQS_E_IO`, e.g. `ENOENT`).
///
/// # Safety
/// `path` NUL-terminated; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_unlink_path(path: *const c_char, err: *mut DqsError) -> c_int {
    // SAFETY: the caller guarantees a NUL-terminated string.
    let c = unsafe { CStr::from_ptr(path) };
    match crate::region::unlink(Path::new(std::ffi::OsStr::from_bytes(c.to_bytes()))) {
        Ok(()) => 0,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// Flush a file-backed mapping to its file (`msync`; a no-op in effect
/// for anonymous and memfd queues). Returns 0, or -1 with `*err` filled
/// (`DQS_E_IO`).
///
/// # Safety
/// Live handle; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_sync(q: *const DqsQueue, err: *mut DqsError) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.queue.sync() {
        Ok(()) => 0,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// Register the flag a signal handler sets when it defers its work (Perl's
/// `PL_sig_pending`), or NULL for none. Blocking calls then also return
/// `DQS_INTERRUPTED` when they find the flag set before a sleep, and sleep
/// at most a quarter of a second at a time, so a signal that lands while a
/// waiter is awake between two sleeps is not held back until the deadline.
/// Process-wide; call it once, before any wait. With the environment
/// variable `DQS_TEST_NO_SLICE` set (not empty or `0`) at that call, sleeps
/// are not sliced (a test mode: see futex.rs).
///
/// # Safety
/// `flag` is NULL or points to an `int` (a `sig_atomic_t`) valid for the
/// rest of the process.
#[no_mangle]
pub unsafe extern "C" fn dqs_set_signal_flag(flag: *const c_int) {
    // SAFETY: the caller's contract is set_signal_flag's.
    unsafe { crate::futex::set_signal_flag(flag) }
}

/// Sleepers this process has woken so far, queue waiters and lock sleepers
/// alike (the sum of `FUTEX_WAKE`'s counts). For tests: a lost wake-up
/// shows as a count that did not move.
#[no_mangle]
pub extern "C" fn dqs_futex_woken() -> u64 {
    crate::futex::woken()
}

/// The deadline `timeout` seconds from now, on `CLOCK_MONOTONIC` (wall
/// clock changes do not affect it). Negative or infinite timeouts (and
/// NaN) never expire; 0 has already expired (try once). Returned by value;
/// pass a pointer to it to the `*_wait` calls, and reuse it when one
/// returns `DQS_INTERRUPTED`. Thread-safe.
#[no_mangle]
pub extern "C" fn dqs_deadline(timeout: f64) -> Deadline {
    Deadline::after_secs(timeout)
}
