//! A cross-process mutex on one 32-bit futex word in shared memory.
//!
//! The algorithm is the three-state futex mutex of Ulrich Drepper's
//! "Futexes Are Tricky" (mutex #3: free / locked / locked-with-waiters),
//! with the owner's process id stored in the word so that a later crash
//! takeover can tell whether the holder still lives:
//!
//! ```text
//! 0                        free
//! pid                      held by process `pid`; nobody sleeps on the word
//! pid | CONTENDED          held; somebody may sleep on the word
//! ```
//!
//! `pid` is the locker's `getpid()` at lock time (see [`current_pid`]), so a
//! child that inherited its parent's handle across `fork` locks as itself.
//! Linux pids are below 2^22, well clear of the `CONTENDED` (0x8000_0000) bit.
//!
//! Locking is one SeqCst CAS `0 -> pid` when the word is free. Otherwise the
//! locker spins about `SPIN` rounds (the queue's critical sections are a
//! few loads, stores and one `memcpy`, usually shorter than a futex round
//! trip), then marks the word contended and sleeps on it. A sleeper that
//! wakes takes the lock *with* the contended bit, because it cannot know
//! whether others still sleep (Drepper's conservative rule). Unlocking swaps
//! in 0 and calls `FUTEX_WAKE` only when the old word had the bit, so an
//! uncontended lock/unlock pair makes no system call.
//!
//! # Crash takeover
//!
//! A holder killed inside the critical section (SIGKILL, the OOM killer, a
//! segfault) leaves its pid in the word. A waiter that has found the same
//! owner in the word for one poll interval ([`POLL_SECS`]) of the monotonic
//! clock, counted from when it first saw that owner, asks the kernel
//! whether the owner still exists, and asks again every interval while it
//! does. Sleepers use a futex timeout that ends at the next check, so they
//! re-check even when nobody wakes them, and a sleep cut short by a signal
//! does not restart the interval. A wait that is about to give up (its
//! deadline passed, or with `interruptible` a signal arrived) asks once
//! more if the word still names the owner it watched: the caller's retry
//! after a signal starts a new watch, so without that last look a signal
//! every few milliseconds, or a lock timeout shorter than the interval,
//! would keep a dead holder's lock from ever being taken over. That costs
//! one `/proc` read per signal or timeout while the lock is held.
//!
//! * `kill(pid, 0)` failing with `ESRCH`: dead (and reaped);
//! * `/proc/<pid>/stat` gone, or its state `Z` (zombie) or `X`: dead;
//! * `T`/`t` (stopped, traced) and every other state: alive. A stopped
//!   holder is never taken over; callers bound their wait with a deadline.
//!
//! PID reuse: right after its CAS the holder stores a tag, `pid << 32 |
//! starttime`, in a second word (`lock_owner` in the header), where
//! `starttime` is field 22 of `/proc/self/stat` (clock ticks since boot,
//! low 32 bits), read once per process. When the tag names the word's pid
//! but the process now using that pid started at another time, the holder
//! is dead and the pid belongs to somebody else. In the few instructions
//! between the CAS and the tag store the tag names the previous holder;
//! then a process with that pid that started more than one tick after this
//! waiter first saw the word cannot be the holder either. (The residue is a
//! holder killed inside those few instructions whose pid is reused before
//! any waiter looks: such a waiter waits until that unrelated process
//! exits, never forever.)
//!
//! The dead word is replaced by one CAS `dead -> me | CONTENDED`, so exactly
//! one waiter wins; it learns so through [`Acquired::recovered`] and repairs
//! the protected state (see strq.rs) before using it. The contended bit is
//! kept because other waiters may sleep on the word.
//!
//! Robust futexes (`set_robust_list`) would let the kernel mark the word
//! itself, but glibc owns the one robust list each thread may register, the
//! kernel matches thread ids (not pids) and the word format would have to
//! follow the kernel's; pid polling needs none of that and costs nothing
//! until a holder has been seen stuck for a poll interval (or a wait for
//! it ends early).
//!
//! Pids are those of the caller's pid namespace: processes sharing a queue
//! must share one.
//!
//! Everything takes a plain `&AtomicU32`, so the lock also works on a heap
//! word (tests, the loom model).

use std::sync::atomic::{
    AtomicBool, AtomicU32 as StdAtomicU32, AtomicU64 as StdAtomicU64, Ordering as StdOrdering,
};
use std::sync::Once;

use crate::futex::{self, Deadline, WaitResult};
use crate::sync::{spin_hint, AtomicU32, AtomicU64, Ordering};

/// Set in the lock word while somebody may be sleeping on it.
pub(crate) const CONTENDED: u32 = 0x8000_0000;
/// The owner-pid bits of the lock word.
pub(crate) const PID_MASK: u32 = !CONTENDED;

/// Spin rounds before sleeping. Under loom each round is a scheduling point,
/// so the model spins once to keep the state space small.
#[cfg(not(loom))]
const SPIN: u32 = 100;
#[cfg(loom)]
const SPIN: u32 = 1;

/// How long a sleeper waits on an unchanged lock word before it checks
/// whether the owner still lives (and how often it checks afterwards). The
/// takeover latency after a holder dies is at most about this, plus one
/// `/proc` read.
pub const POLL_SECS: f64 = POLL_NS as f64 / 1e9;

/// [`POLL_SECS`] in nanoseconds.
const POLL_NS: u64 = 10_000_000;

/// Why a bounded lock wait gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockFail {
    /// The deadline passed with the lock still held by a live process.
    TimedOut,
    /// A signal arrived while sleeping (only when asked to report it).
    Interrupted,
}

/// How the lock was taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acquired {
    /// The lock was found held and had to be waited for.
    pub contended: bool,
    /// The lock was taken over from a dead holder: the protected state may
    /// be half updated and must be repaired before use.
    pub recovered: bool,
}

/// The owner pid recorded in a lock word (0 when free).
#[inline]
pub const fn owner_pid(word: u32) -> u32 {
    word & PID_MASK
}

/// Whether the lock word says somebody may be sleeping on it.
#[inline]
pub const fn is_contended(word: u32) -> bool {
    word & CONTENDED != 0
}

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
}

static TAG_CACHE: StdAtomicU64 = StdAtomicU64::new(0);

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
        TAG_CACHE.store(t, StdOrdering::Relaxed);
    }
    t
}

/// The fields of `/proc/<pid>/stat` the liveness check uses.
struct ProcStat {
    state: u8,
    start: u64,
}

/// `Err(true)` when the process does not exist, `Err(false)` when procfs
/// cannot tell.
fn proc_stat(pid: u32) -> Result<ProcStat, bool> {
    let raw = match std::fs::read(format!("/proc/{pid}/stat")) {
        Ok(r) => r,
        Err(e) => return Err(e.kind() == std::io::ErrorKind::NotFound),
    };
    // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so
    // parse from the last ')'. Then field 3 (state) is the first word and
    // field 22 (starttime) the twentieth.
    let close = raw.iter().rposition(|&b| b == b')').ok_or(false)?;
    let rest = std::str::from_utf8(&raw[close + 1..]).map_err(|_| false)?;
    let mut f = rest.split_ascii_whitespace();
    let state = f.next().and_then(|s| s.bytes().next()).ok_or(false)?;
    let start = f.nth(18).and_then(|s| s.parse().ok()).ok_or(false)?;
    Ok(ProcStat { state, start })
}

/// Clock ticks since boot now (the unit of `starttime`).
fn boot_ticks() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    (ts.tv_sec as u64) * hz + (ts.tv_nsec as u64) * hz / 1_000_000_000
}

/// Whether the process that wrote lock word owner `pid` is certainly gone.
/// `tag` is the owner tag read from shared memory; `since` the boot tick
/// when this waiter first saw the word. See the module docs.
pub fn owner_is_dead(pid: u32, tag: u64, since: u64) -> bool {
    if pid == 0 {
        return false;
    }
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 only checks for existence; nothing is sent.
    if unsafe { libc::kill(p, 0) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    {
        return true;
    }
    let st = match proc_stat(pid) {
        Ok(st) => st,
        // Vanished between the two looks: dead. No procfs: kill said it
        // exists, and that is all we know.
        Err(gone) => return gone,
    };
    if matches!(st.state, b'Z' | b'X' | b'x') {
        return true;
    }
    if tag >> 32 == u64::from(pid) {
        // The tag is this holder's: a different start time means the pid
        // was reused. A tag start of 0 means the holder had no procfs.
        let t = tag as u32;
        t != 0 && t != st.start as u32
    } else {
        st.start > since.saturating_add(1)
    }
}

/// The liveness check the takeover uses: the kernel's word, or under loom
/// the model's (see `model_deaths`, compiled only under loom).
#[cfg(not(loom))]
#[inline]
fn holder_is_dead(pid: u32, tag: u64, since: u64) -> bool {
    owner_is_dead(pid, tag, since)
}

#[cfg(loom)]
fn holder_is_dead(pid: u32, _tag: u64, _since: u64) -> bool {
    model_deaths::is_dead(pid)
}

/// Process death for the loom models, where "processes" are threads: a
/// model thread that stops for good (while holding the lock, say) declares
/// its pid dead with [`mark_dead`](model_deaths::mark_dead) after its last
/// access to shared state, as the kernel only reports a process gone once
/// it has stopped running. The SeqCst store and load stand for the kernel's
/// own ordering between a process's exit and `kill(pid, 0)` failing.
#[cfg(loom)]
pub(crate) mod model_deaths {
    use crate::sync::{AtomicU32, Ordering};

    loom::lazy_static! {
        static ref DEAD: AtomicU32 = AtomicU32::new(0);
    }

    /// Declare model pid `pid` (1..=31) dead.
    pub(crate) fn mark_dead(pid: u32) {
        assert!((1..32).contains(&pid), "model pids are 1..=31");
        DEAD.fetch_or(1 << pid, Ordering::SeqCst);
    }

    /// Whether model pid `pid` has been declared dead.
    pub(crate) fn is_dead(pid: u32) -> bool {
        (1..32).contains(&pid) && DEAD.load(Ordering::SeqCst) & (1 << pid) != 0
    }
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

/// Proof that the lock is held; unlocks when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LockGuard<'a> {
    word: &'a AtomicU32,
}

impl<'a> LockGuard<'a> {
    /// Take the lock as this process ([`current_pid`]). Returns the guard
    /// and whether the lock was found held (contended).
    #[inline]
    pub fn acquire(word: &'a AtomicU32) -> (Self, bool) {
        Self::acquire_as(word, current_pid())
    }

    /// Take the lock recording `pid` as the owner (its low 31 bits; 0 is
    /// recorded as 1, since 0 means free). Returns the guard and whether
    /// the lock was found held.
    #[inline]
    pub fn acquire_as(word: &'a AtomicU32, pid: u32) -> (Self, bool) {
        let me = (pid & PID_MASK).max(1);
        // SYNC POINT: the SeqCst CAS that takes the lock acquires what the
        // previous holder released with its unlocking swap (the protected
        // header fields, slots and arena bytes). Being SeqCst it also sits
        // in the single total order with the waiters' SeqCst announcement
        // (see wait.rs and strq.rs).
        let contended = word
            .compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
            .is_err();
        if contended {
            lock_slow(word, me);
        }
        (LockGuard { word }, contended)
    }

    /// Take the lock as this process, taking it over from a dead holder
    /// (see the module docs), waiting at most until `deadline()` (computed
    /// only when the lock is found held). `tag` is
    /// the owner-tag word next to the lock word. With `interruptible`, a
    /// signal that interrupts a sleep ends the wait with
    /// [`LockFail::Interrupted`]; otherwise the wait goes on.
    ///
    /// # Errors
    /// [`LockFail::TimedOut`] when the deadline passed with a live holder;
    /// [`LockFail::Interrupted`] as above.
    #[inline]
    pub fn acquire_robust(
        word: &'a AtomicU32,
        tag: &AtomicU64,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> Result<(Self, Acquired), LockFail> {
        // The tag carries the pid: one cached load gives both.
        let my_tag = current_tag();
        Self::acquire_robust_as(
            word,
            tag,
            (my_tag >> 32) as u32,
            my_tag,
            deadline,
            interruptible,
        )
    }

    /// One attempt of [`acquire_robust`](Self::acquire_robust) for a free
    /// lock: the CAS and the tag store, nothing else. `None` when the lock
    /// is held, or before this process has cached its owner tag (then call
    /// `acquire_robust`, which fills the cache and waits if it must). No
    /// call, so a caller's fast path stays free of them.
    #[inline(always)]
    pub fn try_acquire_robust(word: &'a AtomicU32, tag: &AtomicU64) -> Option<Self> {
        let my_tag = TAG_CACHE.load(StdOrdering::Relaxed);
        // A cached tag's pid is a lock word as it stands (checked to be in
        // 1..=PID_MASK when the cache was filled).
        let me = (my_tag >> 32) as u32;
        if my_tag == 0 {
            return None;
        }
        // SYNC POINT: as in acquire_as.
        word.compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
            .ok()?;
        // Relaxed: as in acquire_robust_as.
        tag.store(my_tag, Ordering::Relaxed);
        Some(LockGuard { word })
    }

    /// Unlock, as dropping the guard does, but leave the wake-up to the
    /// caller: `true` when somebody may sleep on the lock word, who must
    /// then be woken with [`LockGuard::wake_one`]. A hot path that keeps
    /// every call out of line uses this.
    #[inline(always)]
    #[must_use = "a sleeper on the lock word must be woken with wake_one"]
    pub fn unlock(self) -> bool {
        let me = std::mem::ManuallyDrop::new(self);
        // SYNC POINT: as in drop.
        is_contended(me.word.swap(0, Ordering::Release))
    }

    /// Wake one sleeper on the lock word `word`, after
    /// [`LockGuard::unlock`] returned `true`.
    #[cold]
    #[inline(never)]
    pub fn wake_one(word: &AtomicU32) {
        futex::wake(word, 1);
    }

    /// [`acquire_robust`](Self::acquire_robust) recording `pid` (as in
    /// [`acquire_as`](Self::acquire_as)) and the tag `my_tag` as the
    /// owner: the loom models run several "processes" as threads of one.
    #[inline]
    pub(crate) fn acquire_robust_as(
        word: &'a AtomicU32,
        tag: &AtomicU64,
        pid: u32,
        my_tag: u64,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> Result<(Self, Acquired), LockFail> {
        let me = (pid & PID_MASK).max(1);
        // SYNC POINT: as in acquire_as.
        let got = if word
            .compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
        {
            Acquired::default()
        } else {
            lock_slow_robust(word, tag, me, &deadline(), interruptible)?
        };
        // Relaxed: read only by waiters judging a stuck holder, which is
        // a heuristic on top of the word itself (see the module docs).
        tag.store(my_tag, Ordering::Relaxed);
        Ok((LockGuard { word }, got))
    }
}

/// A point `ns` on CLOCK_MONOTONIC (nanoseconds), or `d` if that is earlier.
fn earlier(d: &Deadline, ns: u64) -> Deadline {
    Deadline {
        sec: (ns / 1_000_000_000).min(i64::MAX as u64) as i64,
        nsec: (ns % 1_000_000_000) as i64,
        forever: 0,
    }
    .earliest(*d)
}

/// The clock a waiter judges a holder stuck by: CLOCK_MONOTONIC in
/// nanoseconds. Under loom, where time is not modelled (a futex wait with a
/// deadline yields and reports a timeout, see futex.rs), every timed-out
/// wait counts as one poll interval, which keeps the model deterministic.
struct WatchClock {
    #[cfg(loom)]
    ns: u64,
}

impl WatchClock {
    fn new() -> Self {
        WatchClock {
            #[cfg(loom)]
            ns: 0,
        }
    }

    fn now(&self) -> u64 {
        #[cfg(not(loom))]
        {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid, writable timespec.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            (ts.tv_sec as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(ts.tv_nsec as u64)
        }
        #[cfg(loom)]
        {
            self.ns
        }
    }

    /// After a futex wait that ended with `r`.
    fn slept(&mut self, r: WaitResult) {
        #[cfg(loom)]
        if r == WaitResult::TimedOut {
            self.ns += POLL_NS;
        }
        let _ = r;
    }
}

/// The owner a waiter is watching: the pid bits of the lock word, when the
/// waiter first saw them (boot ticks, for [`owner_is_dead`]), and when it
/// next asks whether that owner lives (monotonic ns).
struct Watch {
    owner: u32,
    since: u64,
    check_at: u64,
}

/// Whether the word `cur` names the owner `w` watches and that owner is
/// dead; if so, take the lock over with one CAS `cur -> me | CONTENDED`
/// (only one waiter's CAS from this exact value succeeds).
fn take_over(word: &AtomicU32, tag: &AtomicU64, cur: u32, me: u32, w: &Watch) -> bool {
    cur != 0
        && owner_pid(cur) == w.owner
        && holder_is_dead(w.owner, tag.load(Ordering::Relaxed), w.since)
        // SYNC POINT: SeqCst like the ordinary take; the dead holder's
        // stores are in memory already.
        && word
            .compare_exchange(cur, me | CONTENDED, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
}

#[cold]
#[inline(never)]
fn lock_slow_robust(
    word: &AtomicU32,
    tag: &AtomicU64,
    me: u32,
    deadline: &Deadline,
    interruptible: bool,
) -> Result<Acquired, LockFail> {
    let mut got = Acquired {
        contended: true,
        recovered: false,
    };
    for _ in 0..SPIN {
        spin_hint();
        if word.load(Ordering::Relaxed) == 0
            && word
                .compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
        {
            return Ok(got);
        }
    }
    let mut clock = WatchClock::new();
    let mut watch = Watch {
        owner: 0,
        since: 0,
        check_at: 0,
    };
    // Before this call gives up (deadline, signal): take a free lock, or
    // ask once more whether the watched owner lives. A caller interrupted
    // by a steady stream of signals, or with a lock timeout shorter than a
    // poll interval, still takes a dead holder's lock over.
    let last_look = |got: &mut Acquired, watch: &Watch| {
        let cur = word.load(Ordering::Relaxed);
        if cur == 0 {
            word.compare_exchange(0, me | CONTENDED, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
        } else if take_over(word, tag, cur, me, watch) {
            got.recovered = true;
            true
        } else {
            false
        }
    };
    loop {
        let cur = word.load(Ordering::Relaxed);
        if cur == 0 {
            if word
                .compare_exchange(0, me | CONTENDED, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(got);
            }
            continue;
        }
        let owner = owner_pid(cur);
        let now = clock.now();
        if owner != watch.owner {
            watch = Watch {
                owner,
                since: boot_ticks(),
                check_at: now.saturating_add(POLL_NS),
            };
        } else if now >= watch.check_at {
            // The same owner for a poll interval of this waiter's clock,
            // however often its sleeps were cut short: ask, then again
            // every interval while it lives (a stopped holder, say).
            watch.check_at = now.saturating_add(POLL_NS);
            if take_over(word, tag, cur, me, &watch) {
                got.recovered = true;
                return Ok(got);
            }
            continue;
        }
        let marked = cur | CONTENDED;
        if cur != marked
            && word
                .compare_exchange(cur, marked, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            continue;
        }
        if deadline.expired() {
            return if last_look(&mut got, &watch) {
                Ok(got)
            } else {
                Err(LockFail::TimedOut)
            };
        }
        let until = earlier(deadline, watch.check_at);
        let r = if interruptible {
            futex::wait_interruptible(word, marked, &until)
        } else {
            futex::wait(word, marked, &until)
        };
        clock.slept(r);
        let fail = match r {
            WaitResult::Interrupted if interruptible => LockFail::Interrupted,
            WaitResult::TimedOut if deadline.expired() => LockFail::TimedOut,
            _ => continue,
        };
        return if last_look(&mut got, &watch) {
            Ok(got)
        } else {
            Err(fail)
        };
    }
}

#[cold]
#[inline(never)]
fn lock_slow(word: &AtomicU32, me: u32) {
    for _ in 0..SPIN {
        spin_hint();
        if word.load(Ordering::Relaxed) == 0
            && word
                .compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
    }
    loop {
        let cur = word.load(Ordering::Relaxed);
        if cur == 0 {
            // Take it marked contended: other sleepers may remain, and our
            // unlock must wake one of them.
            if word
                .compare_exchange(0, me | CONTENDED, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
            continue;
        }
        let marked = cur | CONTENDED;
        if cur != marked
            && word
                .compare_exchange(cur, marked, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            continue;
        }
        // Sleep while the word still reads `marked`. EINTR and spurious
        // wake-ups just look again: the holder's critical section is short
        // and contains no blocking call.
        futex::wait(word, marked, &Deadline::FOREVER);
    }
}

impl Drop for LockGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SYNC POINT: Release publishes everything written under the lock
        // to the next holder's acquiring CAS.
        let prev = self.word.swap(0, Ordering::Release);
        if is_contended(prev) {
            futex::wake(self.word, 1);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn word_holds_owner_pid_and_frees_on_drop() {
        let w = AtomicU32::new(0);
        {
            let (_g, contended) = LockGuard::acquire(&w);
            assert!(!contended);
            let v = w.load(Ordering::Relaxed);
            // SAFETY: getpid has no preconditions.
            assert_eq!(owner_pid(v), unsafe { libc::getpid() } as u32);
            assert!(!is_contended(v));
        }
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn one_try_takes_a_free_lock_as_this_process_and_unlock_reports_sleepers() {
        let (w, tag) = (AtomicU32::new(0), AtomicU64::new(0));
        // With the tag cached (current_tag fills the cache), one CAS.
        let me = current_tag();
        let g = LockGuard::try_acquire_robust(&w, &tag).expect("a free lock");
        assert_eq!(w.load(Ordering::Relaxed), (me >> 32) as u32);
        assert_eq!(owner_pid(w.load(Ordering::Relaxed)), current_pid());
        assert_eq!(tag.load(Ordering::Relaxed), me);
        // Held: the try fails and changes nothing.
        assert!(LockGuard::try_acquire_robust(&w, &tag).is_none());
        assert!(!g.unlock(), "nobody sleeps");
        assert_eq!(w.load(Ordering::Relaxed), 0);
        // A sleeper marked the word: unlock frees it and says so.
        let g = LockGuard::try_acquire_robust(&w, &tag).unwrap();
        w.fetch_or(CONTENDED, Ordering::Relaxed);
        assert!(g.unlock(), "a sleeper must be woken");
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn pid_zero_is_recorded_as_one() {
        let w = AtomicU32::new(0);
        let (_g, _) = LockGuard::acquire_as(&w, 0);
        assert_eq!(owner_pid(w.load(Ordering::Relaxed)), 1);
    }

    #[test]
    fn current_pid_matches_getpid() {
        // SAFETY: getpid has no preconditions.
        let real = unsafe { libc::getpid() } as u32;
        assert_eq!(current_pid(), real);
        assert_eq!(current_pid(), real);
    }

    /// The pid of a child that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    }

    #[test]
    fn a_live_process_is_alive_and_a_reaped_one_dead() {
        let me = current_pid();
        assert!(!owner_is_dead(me, current_tag(), boot_ticks()));
        assert!(owner_is_dead(dead_pid(), 0, boot_ticks()));
        // Our pid with a tag naming us but another start time: reused.
        let wrong = u64::from(me) << 32 | u64::from((current_tag() as u32).wrapping_add(1));
        assert!(owner_is_dead(me, wrong, boot_ticks()));
    }

    #[test]
    fn a_dead_holder_is_taken_over_once() {
        let w = AtomicU32::new(dead_pid() | CONTENDED);
        let tag = AtomicU64::new(0);
        let t0 = std::time::Instant::now();
        let (g, got) = LockGuard::acquire_robust(&w, &tag, || Deadline::FOREVER, false).unwrap();
        assert!(got.recovered && got.contended);
        assert!(t0.elapsed().as_secs() < 5);
        assert_eq!(owner_pid(w.load(Ordering::Relaxed)), current_pid());
        assert_eq!(tag.load(Ordering::Relaxed), current_tag());
        drop(g);
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_live_holder_makes_a_bounded_wait_time_out() {
        // Held by this very process (alive): never taken over.
        let w = AtomicU32::new(current_pid());
        let tag = AtomicU64::new(current_tag());
        let r = LockGuard::acquire_robust(&w, &tag, || Deadline::after_secs(0.05), true);
        assert_eq!(r.err(), Some(LockFail::TimedOut));
    }

    #[test]
    fn a_wait_that_times_out_first_takes_over_a_dead_holder() {
        // A lock timeout shorter than a poll interval (here: none at all)
        // still recovers the lock of a dead holder.
        let w = AtomicU32::new(dead_pid());
        let tag = AtomicU64::new(0);
        let (_g, got) =
            LockGuard::acquire_robust(&w, &tag, || Deadline::after_secs(0.0), false).unwrap();
        assert!(got.recovered);
    }

    extern "C" fn ignore_signal(_: libc::c_int) {}

    /// Run `f` while another thread sends SIGUSR1 (caught by a handler
    /// that returns, installed without SA_RESTART) to this thread about
    /// every 2 ms; returns what `f` returned and how many were sent.
    fn under_signal_storm<R>(f: impl FnOnce() -> R) -> (R, u32) {
        // SAFETY: installs a handler that does nothing, for SIGUSR1, which
        // nothing else in the test binary uses.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = ignore_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
        }
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        let stop = Arc::new(AtomicBool::new(false));
        let sender = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut sent = 0u32;
                while !stop.load(StdOrdering::Relaxed) {
                    // SAFETY: `me` is alive until `stop` is set and this
                    // thread joined.
                    unsafe { libc::pthread_kill(me, libc::SIGUSR1) };
                    sent += 1;
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                sent
            })
        };
        let r = f();
        stop.store(true, StdOrdering::Relaxed);
        (r, sender.join().unwrap())
    }

    #[test]
    fn a_dead_holder_is_taken_over_under_a_signal_storm() {
        for interruptible in [true, false] {
            let w = AtomicU32::new(dead_pid() | CONTENDED);
            let tag = AtomicU64::new(0);
            let ((got, interrupted), sent) = under_signal_storm(|| {
                let mut interrupted = 0u32;
                // A sleep cut short never lasts a whole poll interval, and
                // an interrupted call starts a new watch: the takeover
                // must come from the elapsed time and the last look.
                // (Before the fix it took 18 s here, when a gap between
                // signals happened to exceed the interval.)
                let d = Deadline::after_secs(10.0);
                loop {
                    match LockGuard::acquire_robust(&w, &tag, || d, interruptible) {
                        Ok((_g, got)) => break (got, interrupted),
                        Err(LockFail::Interrupted) => interrupted += 1,
                        Err(LockFail::TimedOut) => panic!("no takeover in 10 s"),
                    }
                }
            });
            assert!(got.recovered, "interruptible {interruptible}");
            assert!(sent > 0);
            // The interrupted sleep's last look finds the dead owner still
            // in the word: the call takes over instead of reporting it.
            assert_eq!(interrupted, 0, "interruptible {interruptible}");
        }
    }

    #[test]
    fn a_live_holder_is_not_taken_over_under_a_signal_storm() {
        let w = AtomicU32::new(current_pid() | CONTENDED);
        let tag = AtomicU64::new(current_tag());
        let (r, _) = under_signal_storm(|| {
            let d = Deadline::after_secs(0.1);
            loop {
                match LockGuard::acquire_robust(&w, &tag, || d, true) {
                    Err(LockFail::Interrupted) => continue,
                    r => break r.map(|(_, got)| got),
                }
            }
        });
        assert_eq!(r.err(), Some(LockFail::TimedOut));
        assert_eq!(w.load(Ordering::Relaxed), current_pid() | CONTENDED);
    }

    #[test]
    fn threads_are_mutually_excluded() {
        let w = Arc::new(AtomicU32::new(0));
        // A counter updated non-atomically (load + store) under the lock:
        // any overlap of two critical sections loses increments.
        let counter = Arc::new(std::sync::atomic::AtomicU64::new(0));
        const PER: u64 = 50_000;
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let (w, counter) = (w.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..PER {
                        let (_g, _) = LockGuard::acquire(&w);
                        let v = counter.load(Ordering::Relaxed);
                        std::hint::black_box(());
                        counter.store(v + 1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::Relaxed), 4 * PER);
        assert_eq!(w.load(Ordering::Relaxed), 0);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    #[test]
    fn loom_lock_excludes() {
        loom::model(|| {
            let w = Arc::new(AtomicU32::new(0));
            let data = Arc::new(UnsafeCell::new(0u32));
            let hs: Vec<_> = (1..=2u32)
                .map(|pid| {
                    let (w, data) = (w.clone(), data.clone());
                    loom::thread::spawn(move || {
                        let (_g, _) = LockGuard::acquire_as(&w, pid);
                        // SAFETY: only touched under the lock; loom checks
                        // that the accesses never overlap.
                        data.with_mut(|p| unsafe { *p += 1 });
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            // SAFETY: both threads have been joined.
            assert_eq!(data.with(|p| unsafe { *p }), 2);
            assert_eq!(w.load(Ordering::Relaxed), 0);
        });
    }
}
