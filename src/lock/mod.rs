//! A cross-process mutex on two 32-bit words in shared memory ([`Lock`]):
//! the lock word, which holds the owner's process id so that a later crash
//! takeover can tell whether the holder still lives, and `sleepers`, the
//! number of lockers that have announced they will sleep on the word:
//!
//! ```text
//! word      0 (free) or pid (held by process `pid`)
//! sleepers  epoch (bits 24..32) | fruitless-wake tally (16..24) | count (0..16)
//! ```
//!
//! `pid` is the locker's `getpid()` at lock time (see [`current_pid`]), so a
//! child that inherited its parent's handle across `fork` locks as itself.
//! Linux pids are below 2^22, so the word's high bit is never set.
//!
//! Locking is one SeqCst CAS `0 -> pid` when the word is free. Otherwise the
//! locker spins about `SPIN` rounds (the queue's critical sections are a
//! few loads, stores and one `memcpy`, usually shorter than a futex round
//! trip), then counts itself in `sleepers` and sleeps on the word while it
//! is held; it stays counted until it has the lock or gives up. Unlocking
//! stores 0 and calls `FUTEX_WAKE` only when the count is not zero, so an
//! uncontended lock/unlock pair makes no system call, and its unlock is a
//! plain store: one locked instruction per lock and unlock, not two.
//!
//! # An unlock without a locked instruction
//!
//! The holder stores 0 and then reads the count; a sleeper raises the count
//! and then reads the word. That is Dekker's pattern: unless there is a
//! full barrier between the write and the read on *both* sides, each can
//! miss the other's write, and a holder would not wake a sleeper that saw
//! the lock held. An exchange (or a store and a fence) as the unlock is
//! such a barrier and costs as much as the CAS that took the lock: a third
//! of a Str push+pop pair (42 against 30 ns per pair measured with
//! `examples/str_pair`).
//!
//! So the barrier is asymmetric, as in liburcu and folly's asymmetric
//! fences. The sleeper, about to make a system call anyway, calls
//! `membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)` after raising the count:
//! the kernel runs a full barrier on every CPU that runs a thread of a
//! process registered for it, and a CPU that runs none of them passes a
//! context switch, itself a barrier. The holder needs only a compiler
//! barrier between its store and its read. If the holder's read comes after
//! the barrier point on its CPU, it sees the count and wakes; if before,
//! its store came before that point too, and the sleeper's read of the word
//! (after `membarrier` returns) sees the lock free, and it does not sleep.
//!
//! A process unlocks this way only once it is registered
//! (`MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED`, done when it caches its
//! owner tag, and again in each forked child); until then, or when the
//! kernel refuses, its unlock has a real fence after the store. A sleeper
//! whose `membarrier` call fails (an old kernel, a seccomp filter) cannot
//! rule out a missed wake from a registered holder, so it sleeps at most
//! [`FALLBACK_NS`] at a time and looks again. Under loom both halves are
//! SeqCst fences, which is what the pair amounts to, and the models check
//! the protocol with them (and find the lost wake-up without them).
//!
//! A sleeper killed while counted cannot take its count back, which would
//! leave every unlock paying a `FUTEX_WAKE` for nobody. So, as for the
//! queue's waiters (wait.rs), the count carries an epoch: a wake that
//! finds nobody asleep adds to the tally, and after [`RESET_AFTER`] of them
//! in a row the waker starts a new epoch with a count of 0 and wakes every
//! sleeper. A sleeper counts itself again when it finds the epoch moved
//! (after a wake, or at the latest after [`POLL_NS`], which caps every
//! sleep), and takes its count back only within the epoch it counted in.
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
//! * `/proc/<pid>/stat` state `Z` (zombie) or `X`: dead;
//! * `/proc/<pid>/stat` unreadable (vanished, or no procfs, `hidepid`,
//!   another pid namespace's procfs): dead only if `kill` now says
//!   `ESRCH`, else alive. Unsure is alive: taking over a live holder would
//!   break mutual exclusion (and repairing a live owner's ring position
//!   would lose items). Without a readable procfs a dead holder whose pid
//!   was reused is not recognized (below): it waits for the reuser to end.
//!   Processes sharing a queue must share a pid namespace;
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
//! The dead word is replaced by one CAS `dead -> me`, so exactly one
//! waiter wins; it learns so through [`Acquired::recovered`] and repairs
//! the protected state (see src/strq/) before using it.
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
//! Everything takes a plain `&Lock`, so the lock also works on the heap
//! (tests, the loom model).
//!
//! # Words no locker wrote
//!
//! The word may also hold what no locker wrote: the file scribbled on by
//! a bug or another program. A waiter without a deadline must not wait
//! for ever on such a word, so it is taken over as a dead holder's is
//! (the state it guards is whole: nobody was changing it):
//!
//! * a word whose pid bits are 0 or whose high bit is set, at the first
//!   check (a locker stores a pid in `1..=PID_MASK`);
//! * a word naming a live process, once the waiter has watched it for
//!   [`IMPOSTOR_NS`] and the tag still names another process, unless
//!   that process is stopped or traced (`T`, `t`). Every holder stores
//!   its tag a few instructions after its CAS, on the same cache line, so
//!   a process that runs and has not done so in a second never took the
//!   lock (pid 1 written over the word, say); a stopped one may have
//!   stopped right there, and counts as the holder;
//! * a word naming the waiting process itself, once watched as long,
//!   when the process has one thread: that thread is waiting, so it does
//!   not hold the lock (its own leftover tag proves nothing).
//!
//! The residue: a live holder descheduled (not stopped) for a whole
//! second between its CAS and its tag store would be taken over, and
//! mutual exclusion broken; a scribbled word naming a live queue user
//! whose tag is still next to it (its last hold), or a stopped process,
//! is waited for as a live holder: only timeouts end those waits.
//!
//! # Where things live
//!
//! * this file: the lock word, [`LockGuard`] and the plain (not robust)
//!   lock and unlock paths;
//! * `sleepers.rs`: the sleepers word (count, fruitless-wake tally, epoch)
//!   and a locker's life as a counted sleeper;
//! * `barrier.rs`: the asymmetric barrier (`membarrier`) between an unlock
//!   and a sleeper;
//! * `identity.rs`: this process's pid and owner tag, cached, and the
//!   `pthread_atfork` handler that forgets them in a forked child;
//! * `liveness.rs`: whether a holder still lives (`kill`, `/proc`), whether
//!   a word names no possible holder, and the loom models' stand-in for
//!   process death;
//! * `robust.rs`: the robust acquisition: watching a stuck holder and the
//!   crash takeover;
//! * `tests.rs`: the unit tests (the loom models are in src/models/).
//!
//! [`RESET_AFTER`]: crate::layout::RESET_AFTER

use crate::futex::{self, Deadline};
use crate::sync::{spin_hint, spin_rounds, AtomicU32, Ordering};

pub(crate) mod barrier;
mod identity;
mod liveness;
mod robust;
mod sleepers;

pub use identity::{current_pid, current_tag};
#[cfg(loom)]
pub(crate) use liveness::model_deaths;
pub use liveness::{owner_is_dead, IMPOSTOR_NS};
pub use sleepers::{sleeper_count, FALLBACK_NS};
use sleepers::{tally, Sleeper};

/// The owner-pid bits of the lock word (its high bit is never set).
pub(crate) const PID_MASK: u32 = 0x7FFF_FFFF;

pub use crate::layout::Lock;

/// Spin rounds before sleeping. Under loom each round is a scheduling point,
/// so the model spins once to keep the state space small.
const SPIN: u32 = spin_rounds(100);

/// How long a sleeper waits on an unchanged lock word before it checks
/// whether the owner still lives (and how often it checks afterwards). The
/// takeover latency after a holder dies is at most about this, plus one
/// `/proc` read.
pub const POLL_SECS: f64 = POLL_NS as f64 / 1e9;

/// [`POLL_SECS`] in nanoseconds.
pub const POLL_NS: u64 = 10_000_000;

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

/// Proof that the lock is held; unlocks when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LockGuard<'a> {
    lock: &'a Lock,
}

impl<'a> LockGuard<'a> {
    /// Take the lock as this process ([`current_pid`]). Returns the guard
    /// and whether the lock was found held (contended).
    #[inline]
    pub fn acquire(lock: &'a Lock) -> (Self, bool) {
        Self::acquire_as(lock, current_pid())
    }

    /// Take the lock recording `pid` as the owner (its low 31 bits; 0 is
    /// recorded as 1, since 0 means free). Returns the guard and whether
    /// the lock was found held.
    #[inline]
    pub fn acquire_as(lock: &'a Lock, pid: u32) -> (Self, bool) {
        let me = (pid & PID_MASK).max(1);
        let contended = !try_take(&lock.word, me);
        if contended {
            lock_slow(lock, me);
        }
        (LockGuard { lock }, contended)
    }

    /// Unlock, as dropping the guard does, but leave the wake-up to the
    /// caller: `true` when somebody may sleep on the lock word, who must
    /// then be woken with [`LockGuard::wake_one`]. A hot path that keeps
    /// every call out of line uses this.
    #[inline(always)]
    #[must_use = "a sleeper on the lock word must be woken with wake_one"]
    pub fn unlock(self) -> bool {
        let me = std::mem::ManuallyDrop::new(self);
        release(me.lock)
    }

    /// Wake one sleeper on `lock`, after [`LockGuard::unlock`] returned
    /// `true`.
    #[cold]
    #[inline(never)]
    pub fn wake_one(lock: &Lock) {
        tally(lock, futex::wake(&lock.word, 1));
    }
}

/// Take the lock in `word` as `me` if it is free: one CAS.
#[inline(always)]
fn try_take(word: &AtomicU32, me: u32) -> bool {
    // SYNC POINT: the SeqCst CAS that takes the lock acquires what the
    // previous holder released with its unlocking store (the protected
    // header fields, slots and arena bytes). Being SeqCst it also sits in
    // the single total order with the waiters' SeqCst announcement (see
    // wait.rs and src/strq/).
    word.compare_exchange(0, me, Ordering::SeqCst, Ordering::Relaxed)
        .is_ok()
}

/// Free `lock`; whether a sleeper must be woken.
#[inline(always)]
fn release(lock: &Lock) -> bool {
    // SYNC POINT: Release publishes everything written under the lock to
    // the next holder's acquiring CAS. Then the unlock half of the barrier
    // and the read of the count: the Dekker pair with `Sleeper::count`
    // (see the module docs).
    lock.word.store(0, Ordering::Release);
    barrier::light();
    sleeper_count(lock.sleepers.load(Ordering::Relaxed)) != 0
}

/// Spin a while for the lock held in `word`; whether it was taken.
fn spin(word: &AtomicU32, me: u32) -> bool {
    for _ in 0..SPIN {
        spin_hint();
        if word.load(Ordering::Relaxed) == 0 && try_take(word, me) {
            return true;
        }
    }
    false
}

#[cold]
#[inline(never)]
fn lock_slow(lock: &Lock, me: u32) {
    let word = &lock.word;
    if spin(word, me) {
        return;
    }
    let mut sleeper = Sleeper::announce(&lock.sleepers);
    loop {
        let cur = word.load(Ordering::Relaxed);
        if cur == 0 {
            if try_take(word, me) {
                return;
            }
            continue;
        }
        if sleeper.recount() {
            continue;
        }
        // Sleep while the word still reads `cur`, at most a poll interval
        // (a reset may have forgotten this sleeper; under loom, where a
        // lost wake-up must block for ever, without end). EINTR and
        // spurious wake-ups just look again: the holder's critical section
        // is short and contains no blocking call.
        let nap = if cfg!(loom) {
            Deadline::FOREVER
        } else {
            Deadline::after_secs(POLL_SECS)
        };
        futex::wait(word, cur, &sleeper.until(nap));
    }
}

impl Drop for LockGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        if release(self.lock) {
            LockGuard::wake_one(self.lock);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
