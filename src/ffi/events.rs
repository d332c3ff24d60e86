//! Event-loop notification: the handle's eventfd (`dqs_eventfd*`,
//! `dqs_notify`).

use std::ffi::c_int;

use super::{set_error, DqsError, DqsQueue, DQS_DONE, DQS_ERROR, DQS_NONE};

/// The handle's eventfd, created (non-blocking, close-on-exec) on the
/// first call and returned again by later ones; an fd set with
/// `dqs_eventfd_set()` is returned as is. Returns the fd, or -1 with
/// `*err` filled. An eventfd created here is closed by `dqs_close()`.
///
/// # Safety
/// Live handle; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_eventfd(q: *const DqsQueue, err: *mut DqsError) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.notifier.eventfd() {
        Ok(fd) => fd,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// Use the caller's open `fd` (for example an eventfd inherited across
/// `fork`) as the handle's eventfd; the handle never closes it. An eventfd
/// the handle created earlier is closed (unless it is `fd`). `fd` -1
/// turns notification off (the handle forgets its eventfd, closing one it
/// created). Returns 0, or -1 with `*err` filled (a closed fd, or a
/// negative one other than -1).
///
/// # Safety
/// Live handle; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_eventfd_set(
    q: *const DqsQueue,
    fd: c_int,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.notifier.set_fd(fd) {
        Ok(()) => 0,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// The handle's eventfd, or -1 when none is set.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_eventfd_fileno(q: *const DqsQueue) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    q.notifier.fd().unwrap_or(-1)
}

/// Signal the handle's eventfd (add 1 to its counter). `DQS_DONE`,
/// `DQS_NONE` when no eventfd is set, or `DQS_ERROR` with `*err` filled
/// (`EBADF`: the fd was closed behind the handle's back).
///
/// # Safety
/// Live handle; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_notify(q: *const DqsQueue, err: *mut DqsError) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.notifier.notify() {
        Ok(true) => DQS_DONE,
        Ok(false) => DQS_NONE,
        Err(e) => {
            set_error(err, &e);
            DQS_ERROR
        }
    }
}

/// Read and reset the eventfd's counter into `*count` (0 when nothing is
/// pending). `DQS_DONE`, `DQS_NONE` when no eventfd is set, or `DQS_ERROR`
/// with `*err` filled (`EBADF`: the fd was closed behind the handle's back).
///
/// # Safety
/// Live handle; `count` writable; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_eventfd_consume(
    q: *const DqsQueue,
    count: *mut u64,
    err: *mut DqsError,
) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.notifier.consume() {
        Ok(Some(n)) => {
            // SAFETY: writable per the contract.
            unsafe { count.write(n) };
            DQS_DONE
        }
        Ok(None) => DQS_NONE,
        Err(e) => {
            set_error(err, &e);
            DQS_ERROR
        }
    }
}
