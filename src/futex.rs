//! Process-shared futex wait and wake, and the absolute deadline they use.
//!
//! Waits use `FUTEX_WAIT_BITSET` with an absolute `CLOCK_MONOTONIC` deadline,
//! so a wait interrupted by a signal resumes with exactly the time left and a
//! wall-clock jump changes nothing. The futex words live in shared memory, so
//! the private (`FUTEX_PRIVATE_FLAG`) variants must not be used.

use crate::sync::AtomicU32;

/// An absolute point on `CLOCK_MONOTONIC`, or "never".
///
/// Blocking calls take a deadline rather than a timeout, so a wait that a
/// signal interrupts resumes with exactly the time left. Make one with
/// `Deadline::after_secs` in Rust or `dqs_deadline()` in C; `FOREVER`
/// (`DqsDeadline_FOREVER` in C) never expires.
// The example lives on `after_secs`: cbindgen copies this comment into
// the C header, where Rust code would be out of place.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    /// Seconds of the monotonic clock.
    pub sec: i64,
    /// Nanoseconds, 0 to 999 999 999.
    pub nsec: i64,
    /// 1 when the wait has no end (then `sec`/`nsec` are ignored).
    pub forever: i32,
}

/// The longest finite timeout honoured; longer ones wait forever. (About 31
/// years: far enough that nobody notices, near enough that no sum overflows.)
const MAX_TIMEOUT_SECS: f64 = 1.0e9;

impl Deadline {
    /// A deadline that never comes.
    pub const FOREVER: Deadline = Deadline {
        sec: 0,
        nsec: 0,
        forever: 1,
    };

    /// `timeout` seconds from now. Negative, infinite or NaN timeouts (NaN
    /// is outside every range) wait forever; 0 is a deadline already past
    /// (try once).
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::Deadline;
    /// let d = Deadline::after_secs(0.0); // already past: try once
    /// assert!(d.expired());
    /// assert_eq!(d.remaining_secs(), Some(0.0));
    /// let f = Deadline::after_secs(-1.0); // negative, infinite, NaN: never
    /// assert_eq!(f, Deadline::FOREVER);
    /// assert_eq!(f.remaining_secs(), None);
    /// let d = Deadline::after_secs(60.0);
    /// assert!(!d.expired() && d.remaining_secs().unwrap() <= 60.0);
    /// ```
    pub fn after_secs(timeout: f64) -> Deadline {
        if !(0.0..=MAX_TIMEOUT_SECS).contains(&timeout) {
            return Deadline::FOREVER;
        }
        let now = crate::clock::now();
        let whole = timeout.trunc();
        let frac = ((timeout - whole) * 1e9) as i64;
        let mut sec = now.0 + whole as i64;
        let mut nsec = now.1 + frac;
        if nsec >= 1_000_000_000 {
            sec += 1;
            nsec -= 1_000_000_000;
        }
        Deadline {
            sec,
            nsec,
            forever: 0,
        }
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        if self.forever != 0 {
            return false;
        }
        let (s, n) = crate::clock::now();
        (s, n) >= (self.sec, self.nsec)
    }

    /// The earlier of `self` and `other`; a deadline that never comes is
    /// later than any other.
    pub(crate) fn earliest(self, other: Deadline) -> Deadline {
        if other.forever != 0
            || (self.forever == 0 && (self.sec, self.nsec) < (other.sec, other.nsec))
        {
            self
        } else {
            other
        }
    }

    /// Seconds left (0 when past; `None` when forever).
    pub fn remaining_secs(&self) -> Option<f64> {
        if self.forever != 0 {
            return None;
        }
        let (s, n) = crate::clock::now();
        let left = (self.sec - s) as f64 + (self.nsec - n) as f64 / 1e9;
        Some(left.max(0.0))
    }
}

/// The embedder's "a signal is waiting for its handler" flag: Perl's
/// `PL_sig_pending`, registered by the XS at load time (`dqs_set_signal_flag`).
///
/// A signal handler that only sets a flag (as Perl's do: they run the Perl
/// code later, at a safe point) can land while a waiting thread is awake
/// between two sleeps, say checking a lock holder's liveness; the next
/// `FUTEX_WAIT` then sleeps on, and the handler runs only at the deadline.
/// So interruptible waits look at the flag before every sleep, and while a
/// flag is registered they sleep at most [`SIGNAL_SLICE_SECS`] at a time,
/// which bounds the one window left (between the look and the system
/// call). Without a flag (Rust and C users) nothing changes.
#[cfg(not(loom))]
static SIGNAL_FLAG: std::sync::atomic::AtomicPtr<libc::c_int> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// Test mode (`DQS_TEST_NO_SLICE` set, not empty or `0`, when the flag is
/// registered, i.e. when the Perl module loads): sleeps are not sliced, so
/// a wait ends only by a wake-up, its deadline or a signal. A lost wake-up
/// then costs the whole wait instead of at most one slice, which lets the
/// wake-up tests prove the futex path alone. The cost: a signal landing in
/// the window between the flag check and the sleep is handled only when
/// the wait ends.
#[cfg(not(loom))]
static NO_SLICE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The longest single sleep of an interruptible wait while a signal flag
/// is registered: how late a handler can run at worst (a signal landing in
/// the few instructions between the flag check and the sleep), against
/// four wake-ups a second of an idle waiter (a few microseconds of CPU).
// Under loom no flag is ever registered, so nothing slices.
#[cfg_attr(loom, allow(dead_code))]
pub const SIGNAL_SLICE_SECS: f64 = 0.25;

/// Register the flag that [`signal_pending`] reads (null: none).
///
/// # Safety
/// `flag` must be null or point to an `int` that stays valid, and is only
/// written as a whole (a `sig_atomic_t`), for the rest of the process.
pub unsafe fn set_signal_flag(flag: *const libc::c_int) {
    #[cfg(not(loom))]
    {
        NO_SLICE.store(
            std::env::var_os("DQS_TEST_NO_SLICE").is_some_and(|v| !v.is_empty() && v != "0"),
            std::sync::atomic::Ordering::Relaxed,
        );
        SIGNAL_FLAG.store(flag.cast_mut(), std::sync::atomic::Ordering::Release);
    }
    #[cfg(loom)]
    let _ = flag;
}

/// Whether the registered flag says a signal waits for its handler.
#[inline]
pub(crate) fn signal_pending() -> bool {
    #[cfg(not(loom))]
    {
        let p = SIGNAL_FLAG.load(std::sync::atomic::Ordering::Acquire);
        // SAFETY: a registered flag stays valid for the process
        // (set_signal_flag's contract); volatile, as a signal handler
        // writes it.
        !p.is_null() && unsafe { std::ptr::read_volatile(p) } != 0
    }
    #[cfg(loom)]
    {
        false
    }
}

/// The deadline for one sleep of an interruptible wait: `d`, or
/// [`SIGNAL_SLICE_SECS`] from now if that is earlier and a signal flag is
/// registered.
fn slice(d: &Deadline) -> Deadline {
    #[cfg(not(loom))]
    {
        if SIGNAL_FLAG
            .load(std::sync::atomic::Ordering::Relaxed)
            .is_null()
            || NO_SLICE.load(std::sync::atomic::Ordering::Relaxed)
        {
            return *d;
        }
        Deadline::after_secs(SIGNAL_SLICE_SECS).earliest(*d)
    }
    #[cfg(loom)]
    {
        *d
    }
}

/// [`wait`] for a caller that gives up on a signal: `Interrupted` without
/// sleeping when the registered flag says a handler is due (see
/// [`signal_pending`]), and with a flag registered a sleep of at most
/// [`SIGNAL_SLICE_SECS`], after which it reports `TimedOut` even though
/// `deadline` may not have passed (callers check it).
pub fn wait_interruptible(word: &AtomicU32, expected: u32, deadline: &Deadline) -> WaitResult {
    if signal_pending() {
        return WaitResult::Interrupted;
    }
    wait(word, expected, &slice(deadline))
}

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitResult {
    /// Woken, or the word no longer held the expected value: look again.
    Woken,
    /// The deadline passed.
    TimedOut,
    /// A signal arrived; the caller must let its handler run.
    Interrupted,
}

/// Sleep while `*word == expected`, until woken or `deadline`.
#[cfg(not(loom))]
pub fn wait(word: &AtomicU32, expected: u32, deadline: &Deadline) -> WaitResult {
    let ts;
    let tsp = if deadline.forever != 0 {
        std::ptr::null()
    } else {
        ts = libc::timespec {
            tv_sec: deadline.sec,
            tv_nsec: deadline.nsec,
        };
        &ts as *const libc::timespec
    };
    // SAFETY: `word` points to a live, 4-byte aligned u32 in a mapping that
    // outlives this call; `tsp` is null or points to `ts` on this stack.
    // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT_BITSET,
            expected,
            tsp,
            std::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        )
    };
    if rc == 0 {
        return WaitResult::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ETIMEDOUT) => WaitResult::TimedOut,
        Some(libc::EINTR) => WaitResult::Interrupted,
        // EAGAIN: the word changed before we slept. Anything else is
        // treated the same way: the caller re-checks its condition.
        _ => WaitResult::Woken,
    }
}

/// Wake up to `n` sleepers on `word`; how many were woken.
#[cfg(not(loom))]
pub fn wake(word: &AtomicU32, n: u32) -> u32 {
    let n = n.min(i32::MAX as u32) as i32;
    // SAFETY: `word` points to a live u32 in shared memory; FUTEX_WAKE only
    // reads its address.
    let rc = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n) };
    let woken = rc.max(0) as u32;
    // Relaxed: a statistic; one uncontended add next to a system call.
    WOKEN.fetch_add(u64::from(woken), std::sync::atomic::Ordering::Relaxed);
    woken
}

/// Sleepers this process has woken with `FUTEX_WAKE` (the kernel's count
/// of tasks woken, summed over every word: queue waiters and lock
/// sleepers alike). The wake-up tests check it moves by as many sleepers
/// as they expect to be woken, so a lost wake-up fails by count.
static WOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// See [`WOKEN`]: the number so far.
pub fn woken() -> u64 {
    WOKEN.load(std::sync::atomic::Ordering::Relaxed)
}

// Under loom there is no kernel; `model` stands in for it (see there).
#[cfg(loom)]
pub use model::{change_and_notify, wait, wait_unless, wake};

/// A loom model of the futex: a waiter with no deadline really blocks until
/// a `wake` on its word picks it, so a lost wake-up leaves every thread
/// blocked and loom reports the deadlock. The value check and the
/// enqueueing happen under one mutex that `wake` takes too, which is the
/// atomicity the kernel's hash-bucket lock gives. A wake picks at most `n`
/// sleepers of that word (oldest first) and never wakes another word's.
/// A wait with a finite deadline does not block: it yields and reports a
/// timeout (time is not modelled; every caller handles an early timeout by
/// looking again or by giving up as its deadline says).
#[cfg(loom)]
mod model {
    use super::{Deadline, WaitResult};
    use crate::sync::{AtomicU32, Ordering};
    use loom::sync::{Condvar, Mutex};

    struct Sleeper {
        word: usize,
        id: u64,
        picked: bool,
    }

    #[derive(Default)]
    struct Table {
        sleepers: Vec<Sleeper>,
        next_id: u64,
    }

    loom::lazy_static! {
        static ref TABLE: Mutex<Table> = Mutex::new(Table::default());
        static ref WOKEN: Condvar = Condvar::new();
    }

    /// Model of `FUTEX_WAIT_BITSET`: see the module docs.
    pub fn wait(word: &AtomicU32, expected: u32, deadline: &Deadline) -> WaitResult {
        if deadline.forever == 0 {
            loom::thread::yield_now();
            return if word.load(Ordering::SeqCst) == expected {
                WaitResult::TimedOut
            } else {
                WaitResult::Woken
            };
        }
        wait_unless(word, expected, || false)
    }

    /// [`wait`] without deadline that also ends when `stop()` holds, which
    /// is read under the table's mutex when the sleeper enqueues and after
    /// every notification: `TimedOut` then, as if the poll interval a real
    /// sleeper would have slept had passed. A change that makes `stop()`
    /// true must be made with [`change_and_notify`], so that no sleeper
    /// misses it between its look and its sleep.
    pub fn wait_unless(word: &AtomicU32, expected: u32, stop: impl Fn() -> bool) -> WaitResult {
        let addr = word as *const AtomicU32 as usize;
        let mut t = TABLE.lock().unwrap();
        if word.load(Ordering::SeqCst) != expected {
            return WaitResult::Woken;
        }
        if stop() {
            return WaitResult::TimedOut;
        }
        let id = t.next_id;
        t.next_id += 1;
        t.sleepers.push(Sleeper {
            word: addr,
            id,
            picked: false,
        });
        loop {
            t = WOKEN.wait(t).unwrap();
            let i = t.sleepers.iter().position(|s| s.id == id).unwrap();
            if t.sleepers[i].picked {
                t.sleepers.remove(i);
                return WaitResult::Woken;
            }
            if stop() {
                t.sleepers.remove(i);
                return WaitResult::TimedOut;
            }
        }
    }

    /// Run `f` under the table's mutex, then let every sleeper look at
    /// its `stop` condition again (see [`wait_unless`]); picks nobody.
    pub fn change_and_notify(f: impl FnOnce()) {
        let _t = TABLE.lock().unwrap();
        f();
        WOKEN.notify_all();
    }

    /// Model of `FUTEX_WAKE`: see the module docs. Returns the number of
    /// sleepers picked, like the kernel.
    pub fn wake(word: &AtomicU32, n: u32) -> u32 {
        let addr = word as *const AtomicU32 as usize;
        let mut t = TABLE.lock().unwrap();
        let mut left = n;
        for s in t.sleepers.iter_mut() {
            if left == 0 {
                break;
            }
            if s.word == addr && !s.picked {
                s.picked = true;
                left -= 1;
            }
        }
        if left < n {
            WOKEN.notify_all();
        }
        n - left
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
