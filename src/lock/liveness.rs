//! Whether the process a lock word names still lives: `kill(pid, 0)`, then
//! its `/proc/<pid>/stat` (state, and start time against the owner tag);
//! under loom, the models' declared deaths instead (see the lock's module
//! docs, "Crash takeover"); and whether a word names no possible holder
//! (see "Words no locker wrote").

use super::PID_MASK;

/// The fields of `/proc/<pid>/stat` the liveness check uses.
pub(super) struct ProcStat {
    pub(super) state: u8,
    pub(super) start: u64,
    /// Field 20: the process's thread count (unused by the loom models).
    #[cfg_attr(loom, allow(dead_code))]
    pub(super) threads: u64,
}

/// `Err(true)` when the process does not exist, `Err(false)` when procfs
/// cannot tell.
pub(super) fn proc_stat(pid: u32) -> Result<ProcStat, bool> {
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
    let threads = f.nth(16).and_then(|s| s.parse().ok()).ok_or(false)?;
    let start = f.nth(1).and_then(|s| s.parse().ok()).ok_or(false)?;
    Ok(ProcStat {
        state,
        start,
        threads,
    })
}

/// Clock ticks since boot now (the unit of `starttime`).
pub(super) fn boot_ticks() -> u64 {
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
/// when this waiter first saw the word. See the lock's module docs.
pub fn owner_is_dead(pid: u32, tag: u64, since: u64) -> bool {
    if pid == 0 {
        return false;
    }
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return true;
    };
    let gone = || {
        // SAFETY: signal 0 only checks for existence; nothing is sent.
        let r = unsafe { libc::kill(p, 0) };
        r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    };
    if gone() {
        return true;
    }
    dead_by_stat(proc_stat(pid), gone, pid, tag, since)
}

/// The rest of [`owner_is_dead`], once `kill(pid, 0)` said the process
/// exists (0 or EPERM): decide from its `/proc/<pid>/stat` (`stat`, as
/// [`proc_stat`] read it). `gone` asks `kill` again.
///
/// A stat that cannot be read (no procfs mounted, `hidepid`, another pid
/// namespace's procfs) is **not** death: the process is dead only if
/// `kill` now says ESRCH (it vanished between the two looks), else it
/// counts as alive. Unsure means alive, for the lock (taking over a live
/// holder breaks mutual exclusion) as for the ring (repairing a live
/// owner's position loses items). The price: without a readable procfs,
/// a dead owner whose pid was reused is not recognized, and waits for the
/// reuser to end.
pub(super) fn dead_by_stat(
    stat: Result<ProcStat, bool>,
    gone: impl FnOnce() -> bool,
    pid: u32,
    tag: u64,
    since: u64,
) -> bool {
    let st = match stat {
        Ok(st) => st,
        // Not found: vanished between the two looks, or no procfs to
        // show it. Other errors: procfs cannot tell. Either way only kill
        // can say dead.
        Err(_) => return gone(),
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

/// Whether a lock word can only have been written by something other
/// than a locker: a holder stores its pid, 1 to 2^31 - 1 (see
/// [`LockGuard::acquire_as`](super::LockGuard::acquire_as)), so a word
/// whose pid bits are 0 or whose high bit is set is a scribble.
pub(super) const fn impossible_word(word: u32) -> bool {
    word != 0 && (word & !PID_MASK != 0 || word & PID_MASK == 0)
}

/// Whether the live process `pid` that a lock word has named for at
/// least [`IMPOSTOR_NS`] cannot be the lock's holder: no locker ever
/// wrote that word (see the lock's module docs, "Words no locker
/// wrote"). `tag` is the owner tag read from shared memory.
///
/// * This very process with one thread: the caller is that thread, and
///   it is waiting, not holding.
/// * The tag names another process: every holder stores its tag right
///   after its CAS, a few instructions on the same cache line, so a
///   holder that has not done so after [`IMPOSTOR_NS`] is not running
///   those instructions, unless it is stopped or traced (state `T`, `t`)
///   right there, which counts as a holder. Unsure (no readable procfs)
///   is a holder.
#[cfg(not(loom))]
pub(super) fn not_a_holder(pid: u32, tag: u64) -> bool {
    let Ok(st) = proc_stat(pid) else {
        return false;
    };
    if pid == super::current_pid() && st.threads == 1 {
        return true;
    }
    tag >> 32 != u64::from(pid) && !matches!(st.state, b'T' | b't')
}

/// Under loom, where "processes" are threads of one, only the word
/// itself can tell.
#[cfg(loom)]
pub(super) fn not_a_holder(_pid: u32, _tag: u64) -> bool {
    false
}

/// How long a waiter watches a live process named by a lock word whose
/// tag names another before it decides that process is no holder (see
/// `not_a_holder`): far longer than the few instructions between a
/// holder's CAS and its tag store on any machine that is not stopping
/// the holder.
pub const IMPOSTOR_NS: u64 = 1_000_000_000;

/// The liveness check the takeover uses: the kernel's word, or under loom
/// the model's (see `model_deaths`, compiled only under loom).
#[cfg(not(loom))]
#[inline]
pub(super) fn holder_is_dead(pid: u32, tag: u64, since: u64) -> bool {
    owner_is_dead(pid, tag, since)
}

#[cfg(loom)]
pub(super) fn holder_is_dead(pid: u32, _tag: u64, _since: u64) -> bool {
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

    /// Declare model pid `pid` (1..=31) dead, and let every robust
    /// sleeper watching it look again (see `robust_sleep`).
    pub(crate) fn mark_dead(pid: u32) {
        assert!((1..32).contains(&pid), "model pids are 1..=31");
        crate::futex::change_and_notify(|| {
            DEAD.fetch_or(1 << pid, Ordering::SeqCst);
        });
    }

    /// Whether model pid `pid` has been declared dead.
    pub(crate) fn is_dead(pid: u32) -> bool {
        (1..32).contains(&pid) && DEAD.load(Ordering::SeqCst) & (1 << pid) != 0
    }
}
