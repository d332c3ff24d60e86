//! The C ABI: `dqs_*` functions over an opaque `DqsQueue` handle.
//!
//! This is what the Perl XS glue (and any C program) calls; cbindgen turns
//! it into `include/data_queue_shared.h`. Rules:
//!
//! * No panic crosses this boundary: the crate is built with
//!   `panic = "abort"` and nothing here unwraps on caller input.
//! * Constructors return a handle or NULL; on NULL, `*err` holds a message
//!   and the OS error number. The handle is owned by the caller and freed
//!   with [`dqs_close`] exactly once. A handle may be used from any thread
//!   and inherited across `fork` (each process closes its own copy).
//! * Non-blocking calls return [`DQS_DONE`] or [`DQS_NONE`] (full/empty).
//!   Blocking calls may also return [`DQS_INTERRUPTED`]: a signal arrived,
//!   nothing happened, and the caller should run its handlers and call again
//!   with the same [`Deadline`] (`DqsDeadline` in C).
//! * Integer values cross as `int64_t`; Int32 and Int16 queues truncate as a
//!   C cast does and sign-extend on the way out. `dqs_int_*` on a Str
//!   handle (or `dqs_str_*` on an integer one) does nothing: full/empty.
//! * Strings popped from a Str queue are copied (under the queue lock) into
//!   a buffer owned by the handle and handed out as [`DqsStrItem`]s, valid
//!   until the next Str call on that handle. So a Str handle must not be
//!   used by two threads at once; integer handles may be.

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_int, CStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::error::Error;
use crate::futex::Deadline;
use crate::intq::IntQueue;
use crate::layout::Variant;
use crate::notify::Notifier;
use crate::ring::Element;
use crate::strq::StrQueue;
use crate::wait::Waited;
use crate::Stats;

/// The operation happened (pushed, popped, peeked).
pub const DQS_DONE: c_int = 1;
/// Nothing to do: full, empty, or the deadline passed.
pub const DQS_NONE: c_int = 0;
/// A signal interrupted a blocking call; retry with the same deadline.
pub const DQS_INTERRUPTED: c_int = -1;
/// The call failed; see the error out-parameter.
pub const DQS_ERROR: c_int = -2;

/// Variant codes, as stored in the header (see `layout::Variant`).
pub const DQS_INT64: u32 = 1;
/// 32-bit integer queue.
pub const DQS_INT32: u32 = 2;
/// 16-bit integer queue.
pub const DQS_INT16: u32 = 3;
/// String queue.
pub const DQS_STR: u32 = 4;

/// Error kinds reported in [`DqsError::kind`].
pub const DQS_E_ARG: c_int = 1;
/// An OS call failed ([`DqsError::os_errno`] says which error).
pub const DQS_E_IO: c_int = 2;
/// Not a queue of this variant, or a corrupt header.
pub const DQS_E_INCOMPATIBLE: c_int = 3;
/// An interrupted create left a partial header.
pub const DQS_E_INCOMPLETE: c_int = 4;
/// The fd is too small to hold a header.
pub const DQS_E_TOO_SMALL: c_int = 5;
/// The operation does not apply to this queue.
pub const DQS_E_UNSUPPORTED: c_int = 6;

/// Where a failed call describes its failure.
#[repr(C)]
pub struct DqsError {
    /// One of the `DQS_E_*` kinds.
    pub kind: c_int,
    /// The OS error number for `DQS_E_IO`, else 0.
    pub os_errno: c_int,
    /// A NUL-terminated one-line message without a trailing newline.
    pub msg: [c_char; 512],
}

fn set_error(err: *mut DqsError, e: &Error) {
    if err.is_null() {
        return;
    }
    let kind = match e {
        Error::InvalidArgument(_) => DQS_E_ARG,
        Error::Io { .. } => DQS_E_IO,
        Error::Incompatible { .. } => DQS_E_INCOMPATIBLE,
        Error::IncompleteCreate(_) => DQS_E_INCOMPLETE,
        Error::TooSmall(_) => DQS_E_TOO_SMALL,
        Error::Unsupported(_) => DQS_E_UNSUPPORTED,
    };
    let text = e.to_string();
    // SAFETY: the caller passed a valid, writable DqsError.
    let err = unsafe { &mut *err };
    err.kind = kind;
    err.os_errno = e.raw_os_error().unwrap_or(0);
    let n = text.len().min(err.msg.len() - 1);
    for (d, s) in err.msg.iter_mut().zip(text.as_bytes()[..n].iter()) {
        *d = *s as c_char;
    }
    err.msg[n] = 0;
}

enum Kind {
    I64(IntQueue<i64>),
    I32(IntQueue<i32>),
    I16(IntQueue<i16>),
    Str(StrQueue),
}

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
struct Scratch {
    bytes: Vec<u8>,
    ranges: Vec<(usize, usize, bool)>,
    items: Vec<DqsStrItem>,
}

/// Scratch buffers above this are released after use, so one huge item
/// does not pin its size in every handle for ever.
const SCRATCH_KEEP: usize = 1 << 20;

impl Scratch {
    fn reset(&mut self) {
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

/// An open queue handle (opaque).
pub struct DqsQueue {
    kind: Kind,
    scratch: UnsafeCell<Scratch>,
    /// This process's eventfd for event loops (never in shared memory).
    notifier: Notifier,
}

macro_rules! with_any {
    ($q:expr, $x:ident => $body:expr) => {
        match &$q.kind {
            Kind::I64($x) => $body,
            Kind::I32($x) => $body,
            Kind::I16($x) => $body,
            Kind::Str($x) => $body,
        }
    };
}

fn boxed(kind: crate::Result<Kind>, err: *mut DqsError) -> *mut DqsQueue {
    match kind {
        Ok(kind) => Box::into_raw(Box::new(DqsQueue {
            kind,
            scratch: UnsafeCell::new(Scratch::default()),
            notifier: Notifier::new(),
        })),
        Err(e) => {
            set_error(err, &e);
            std::ptr::null_mut()
        }
    }
}

fn bad_variant(variant: u32) -> Error {
    Error::InvalidArgument(format!("unknown queue variant {variant}"))
}

/// Create or attach to the queue file `path` (NUL-terminated). `capacity`
/// is rounded up to a power of two; `arena` (Str only, 0 = default) is the
/// string arena size; `mode` applies to a newly created file. An existing
/// file's stored geometry wins. Returns NULL and fills `*err` on failure.
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
        match Variant::from_u32(variant) {
            Some(Variant::Int64) => IntQueue::open(p, capacity, mode).map(Kind::I64),
            Some(Variant::Int32) => IntQueue::open(p, capacity, mode).map(Kind::I32),
            Some(Variant::Int16) => IntQueue::open(p, capacity, mode).map(Kind::I16),
            Some(Variant::Str) => StrQueue::open(p, capacity, arena, mode).map(Kind::Str),
            None => Err(bad_variant(variant)),
        },
        err,
    )
}

/// Create a queue in anonymous shared memory (shared with children forked
/// afterwards). Returns NULL and fills `*err` on failure.
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
        match Variant::from_u32(variant) {
            Some(Variant::Int64) => IntQueue::anonymous(capacity).map(Kind::I64),
            Some(Variant::Int32) => IntQueue::anonymous(capacity).map(Kind::I32),
            Some(Variant::Int16) => IntQueue::anonymous(capacity).map(Kind::I16),
            Some(Variant::Str) => StrQueue::anonymous(capacity, arena).map(Kind::Str),
            None => Err(bad_variant(variant)),
        },
        err,
    )
}

/// Create a queue in a new memfd labelled `name` (close-on-exec, sealed
/// against resizing); [`dqs_memfd`] returns its fd. NULL and `*err` on failure.
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
        match Variant::from_u32(variant) {
            Some(Variant::Int64) => IntQueue::memfd(name, capacity).map(Kind::I64),
            Some(Variant::Int32) => IntQueue::memfd(name, capacity).map(Kind::I32),
            Some(Variant::Int16) => IntQueue::memfd(name, capacity).map(Kind::I16),
            Some(Variant::Str) => StrQueue::memfd(name, capacity, arena).map(Kind::Str),
            None => Err(bad_variant(variant)),
        },
        err,
    )
}

/// Attach to the queue behind `fd`, which is duplicated (`F_DUPFD_CLOEXEC`):
/// the caller's fd is untouched and stays the caller's to close.
///
/// # Safety
/// `err` must be null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_open_fd(fd: c_int, variant: u32, err: *mut DqsError) -> *mut DqsQueue {
    boxed(
        match Variant::from_u32(variant) {
            Some(Variant::Int64) => IntQueue::from_fd(fd).map(Kind::I64),
            Some(Variant::Int32) => IntQueue::from_fd(fd).map(Kind::I32),
            Some(Variant::Int16) => IntQueue::from_fd(fd).map(Kind::I16),
            Some(Variant::Str) => StrQueue::from_fd(fd).map(Kind::Str),
            None => Err(bad_variant(variant)),
        },
        err,
    )
}

/// Unmap and free the handle (and close its own fd). Shared state is not
/// touched: other processes keep using the queue. NULL is ignored.
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

/// The handle's variant (`DQS_INT64` ...).
///
/// # Safety
/// `q` must be a live handle (as for every function below).
#[no_mangle]
pub unsafe extern "C" fn dqs_variant(q: *const DqsQueue) -> u32 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match q.kind {
        Kind::I64(_) => DQS_INT64,
        Kind::I32(_) => DQS_INT32,
        Kind::I16(_) => DQS_INT16,
        Kind::Str(_) => DQS_STR,
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
    with_any!(q, x => x.path().map_or(std::ptr::null(), |p| p.as_ptr()))
}

/// The memfd (or fd attached with [`dqs_open_fd`]), or -1.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_memfd(q: *const DqsQueue) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    with_any!(q, x => x.fd())
}

/// Slot count.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_capacity(q: *const DqsQueue) -> u64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    with_any!(q, x => x.capacity())
}

/// Items in the queue (a snapshot).
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_size(q: *const DqsQueue) -> u64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    with_any!(q, x => x.len())
}

/// Remove every item and wake every blocked producer; returns how many
/// items were removed.
///
/// # Safety
/// Live handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_clear(q: *const DqsQueue) -> u64 {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    with_any!(q, x => x.clear())
}

/// `msync` the mapping. Returns 0, or -1 with `*err` filled.
///
/// # Safety
/// Live handle; `err` null or valid.
#[no_mangle]
pub unsafe extern "C" fn dqs_sync(q: *const DqsQueue, err: *mut DqsError) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    match with_any!(q, x => x.sync()) {
        Ok(()) => 0,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// Fill `*out` with the queue's counters.
///
/// # Safety
/// Live handle; `out` valid for writing.
#[no_mangle]
pub unsafe extern "C" fn dqs_stats(q: *const DqsQueue, out: *mut Stats) {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    let s = with_any!(q, x => x.stats());
    // SAFETY: the caller passes a writable Stats.
    unsafe { out.write(s) };
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
    match with_any!(q, x => x.unlink()) {
        Ok(()) => 0,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

/// Remove the queue file at `path`. Returns 0, or -1 with `*err` filled.
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

/// The deadline `timeout` seconds from now. Negative or infinite timeouts
/// (and NaN) never expire; 0 has already expired (try once).
#[no_mangle]
pub extern "C" fn dqs_deadline(timeout: f64) -> Deadline {
    Deadline::after_secs(timeout)
}

fn status<R>(w: Waited<R>, out: impl FnOnce(R)) -> c_int {
    match w {
        Waited::Done(r) => {
            out(r);
            DQS_DONE
        }
        Waited::TimedOut => DQS_NONE,
        Waited::Interrupted => DQS_INTERRUPTED,
    }
}

macro_rules! with_int {
    ($q:expr, $iq:ident => $body:expr, $on_str:expr) => {
        match &$q.kind {
            Kind::I64($iq) => $body,
            Kind::I32($iq) => $body,
            Kind::I16($iq) => $body,
            Kind::Str(_) => $on_str,
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

/// Push `v` (truncated to the queue's width). `DQS_DONE` or `DQS_NONE` (full).
///
/// # Safety
/// Live integer-queue handle.
#[no_mangle]
pub unsafe extern "C" fn dqs_int_push(q: *const DqsQueue, v: i64) -> c_int {
    // SAFETY: live handle.
    let q = unsafe { &*q };
    with_int!(q, iq => iq.push(Element::from_i64(v)), false) as c_int
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

/// Pop into `*out`. `DQS_DONE` or `DQS_NONE` (empty).
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

/// Push `vals[0..n]` in order until one does not fit; returns how many
/// were pushed.
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
    with_int!(q, iq => iq.push_multi(vals.iter().map(|&v| Element::from_i64(v))), 0)
}

/// Pop up to `n` items into `out[0..]`; returns how many.
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
    with_int!(q, iq => pop_widened(iq, out), 0)
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

/// The Str queue of a handle, or `None` for integer handles.
fn str_queue(q: &DqsQueue) -> Option<&StrQueue> {
    match &q.kind {
        Kind::Str(sq) => Some(sq),
        _ => None,
    }
}

/// # Safety
/// `ptr` readable for `len` bytes (or `len == 0`).
unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

fn push_status(r: crate::Result<bool>, err: *mut DqsError) -> c_int {
    match r {
        Ok(true) => DQS_DONE,
        Ok(false) => DQS_NONE,
        Err(e) => {
            set_error(err, &e);
            DQS_ERROR
        }
    }
}

/// Push `len` bytes at `ptr` at the back (or, with `front`, the front).
/// `DQS_DONE`, `DQS_NONE` (no room now: slots or arena), or `DQS_ERROR`
/// with `*err` filled when the string can never fit.
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

/// Push like [`dqs_str_push`], sleeping while there is no room, until
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

/// Push `items[0..n]` at the back under one lock until one does not fit;
/// returns how many were pushed, or -1 with `*err` filled (and nothing
/// pushed) when any item can never fit.
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
    let batch: Vec<(&[u8], bool)> = items
        .iter()
        // SAFETY: each entry's bytes are readable per the contract.
        .map(|it| (unsafe { bytes(it.ptr, it.len) }, it.utf8 != 0))
        .collect();
    match sq.push_multi(&batch) {
        Ok(k) => k as isize,
        Err(e) => {
            set_error(err, &e);
            -1
        }
    }
}

fn one_item(sc: &mut Scratch, utf8: bool, out: *mut DqsStrItem) {
    let item = DqsStrItem {
        ptr: sc.bytes.as_ptr(),
        len: sc.bytes.len(),
        utf8: utf8 as c_int,
    };
    // SAFETY: the caller passes a writable item.
    unsafe { out.write(item) };
}

/// Pop the front (or, with `back`, the back) item into `*out`. `DQS_DONE`
/// or `DQS_NONE` (empty). With `peek`, copy the front item without
/// removing it (`back` is then ignored).
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
        sq.peek(&mut sc.bytes)
    } else {
        sq.pop(back != 0, &mut sc.bytes)
    };
    match r {
        Some(utf8) => {
            one_item(sc, utf8, out);
            DQS_DONE
        }
        None => DQS_NONE,
    }
}

/// [`dqs_str_pop`] (without peek), sleeping while empty, until
/// `*deadline`. `DQS_DONE`, `DQS_NONE` (timed out) or `DQS_INTERRUPTED`.
///
/// # Safety
/// As [`dqs_str_pop`]; `deadline` valid.
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
    let w = sq.pop_wait(back != 0, &mut sc.bytes, d);
    status(w, |utf8| one_item(sc, utf8, out))
}

/// Pop up to `n` items from the front under one lock. When `has_budget`
/// is 1, `max_bytes` is a byte budget: stop before the total length would
/// exceed it, but (when `first_exempt` is 1) always take one item if there
/// is one. Returns how many; `*out` points to that many items, valid until the
/// next Str call on this handle.
///
/// # Safety
/// As [`dqs_str_pop`]; `out` writable.
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
    let got = sq.pop_multi_budget(n, budget, first_exempt != 0, &mut sc.bytes, &mut sc.ranges);
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

/// The handle's eventfd, created (non-blocking, close-on-exec) on the
/// first call and returned again by later ones; an fd set with
/// [`dqs_eventfd_set`] is returned as is. Returns the fd, or -1 with
/// `*err` filled. An eventfd created here is closed by [`dqs_close`].
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
/// the handle created earlier is closed (unless it is `fd`). Returns 0, or
/// -1 with `*err` filled (negative or closed fd).
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
