//! This process's identity as a lock owner: its pid and its owner tag
//! (`pid << 32 | starttime`), each cached process-wide and forgotten in a
//! forked child by a `pthread_atfork` handler (see the lock's module docs,
//! "Crash takeover").

use std::sync::atomic::{
    AtomicBool, AtomicU32 as StdAtomicU32, AtomicU64 as StdAtomicU64, Ordering as StdOrdering,
};
use std::sync::Once;

use super::barrier;
use super::liveness::proc_stat;
use super::PID_MASK;

/// This process's id, as `getpid()` returns it now.
///
/// `getpid()` is a real system call on current glibc (about 100 ns measured
/// in this project's container), paid twice per push/pop pair if called on
/// every lock. So the value is cached process-wide, and a
/// `pthread_atfork` child handler clears the cache in every child created
/// with `fork()`: the cache never outlives the process that filled it, and
/// the result always equals `getpid()` at the time of the call.
#[inline]
pub fn current_pid() -> u32 {
    let p = PID_CACHE.load(StdOrdering::Relaxed);
    if p != 0 {
        return p;
    }
    current_pid_slow()
}

static PID_CACHE: StdAtomicU32 = StdAtomicU32::new(0);
static NO_CACHE: AtomicBool = AtomicBool::new(false);
static ATFORK: Once = Once::new();

extern "C" fn forget_pid_in_child() {
    // Runs in the child right after fork(), single-threaded; an atomic
    // store is async-signal-safe.
    PID_CACHE.store(0, StdOrdering::Relaxed);
    TAG_CACHE.store(0, StdOrdering::Relaxed);
    barrier::FENCELESS.store(false, StdOrdering::Relaxed);
}

pub(super) static TAG_CACHE: StdAtomicU64 = StdAtomicU64::new(0);

/// This process's owner tag: `pid << 32 | starttime` (low 32 bits of the
/// clock-tick start time from `/proc/self/stat`, 0 without procfs). Cached
/// like [`current_pid`] and forgotten in forked children.
#[inline]
pub fn current_tag() -> u64 {
    // Nonzero only when filled by this process: a forked child's handler
    // clears it, and it is never filled without that handler.
    let t = TAG_CACHE.load(StdOrdering::Relaxed);
    if t != 0 {
        return t;
    }
    current_tag_slow()
}

#[cold]
fn current_tag_slow() -> u64 {
    let pid = current_pid();
    let start = proc_stat(pid).map_or(0, |s| s.start as u32);
    let t = u64::from(pid) << 32 | u64::from(start);
    // Cached only when its pid is a lock word as it stands (always, for a
    // Linux pid): `try_acquire_robust` uses it without masking.
    if !NO_CACHE.load(StdOrdering::Relaxed) && (1..=PID_MASK).contains(&pid) {
        // Once per process (the cache is filled once): the registration
        // that lets its unlocks skip the fence. A forked child's handler
        // cleared both, so the child registers as itself.
        barrier::register();
        TAG_CACHE.store(t, StdOrdering::Relaxed);
    }
    t
}

#[cold]
fn current_pid_slow() -> u32 {
    ATFORK.call_once(|| {
        // SAFETY: registers a handler that only does an atomic store.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(forget_pid_in_child)) };
        if rc != 0 {
            // No handler (ENOMEM): a cached pid could leak into a child,
            // so never cache and ask the kernel every time.
            NO_CACHE.store(true, StdOrdering::Relaxed);
        }
    });
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    if !NO_CACHE.load(StdOrdering::Relaxed) {
        PID_CACHE.store(pid, StdOrdering::Relaxed);
    }
    pid
}
