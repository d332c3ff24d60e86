//! Test points: deterministic crashes for the crash-safety tests.
//!
//! The environment variable `DQS_TEST_KILL_POINT` names one point; a
//! process that reaches it sends itself SIGKILL there (or SIGSTOP, for
//! `str_lock_stop`), leaving what a crash at that instruction leaves. The
//! points are:
//!
//! * `create_after_reserve`, `create_before_magic`: creating a file (read
//!   when reached; see [`at`]).
//! * `int_push_recorded`, `int_push_claimed`, `int_push_mid_run`,
//!   `int_pop_recorded`, `int_pop_claimed`, `int_pop_mid_run`: inside the
//!   integer ring ([`Hook`], read when an `IntQueue` handle is made).
//! * `str_lock_held`, `str_lock_stop`, `str_after_bytes`, `str_mid_commit`,
//!   `str_after_commit`, `str_after_reset`: inside a Str operation ([`KillPoint`], read when a
//!   `StrQueue` handle is opened).
//! * `lease_int_intent`, `lease_int_taken`, `lease_int_returned`,
//!   `lease_int_ack`, `lease_str_pending`, `lease_str_committed`,
//!   `lease_str_ack`, `lease_str_returning`, `lease_str_returned`: inside a
//!   lease operation ([`lease_at`], read once per process).
//! * `work_counted` (a delivery count written, the lease not yet held),
//!   `work_dead_moved` (a dead-letter record written, the lease record
//!   not yet freed), `work_kicked` (a dead item back in the live queue,
//!   its dead-letter record not yet freed), `work_delayed` (a record made
//!   delayed, the due hint not yet written), `work_made_due` (a delayed
//!   item made returned, not yet counted), `work_dead_drain` (a dead item
//!   copied out, its record not yet freed): inside the work-queue calls
//!   (as the lease points).
//!
//! An unknown name arms nothing. Handles without a point carry `None`, and
//! the hot paths pay one compare of a field for each point they pass.

/// Every point `DQS_TEST_KILL_POINT` can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Point {
    CreateAfterReserve,
    CreateBeforeMagic,
    IntPushRecorded,
    IntPushClaimed,
    IntPushMidRun,
    IntPopRecorded,
    IntPopClaimed,
    IntPopMidRun,
    StrLockHeld,
    StrLockStop,
    StrAfterBytes,
    StrMidCommit,
    StrAfterCommit,
    StrAfterReset,
    LeaseIntIntent,
    LeaseIntTaken,
    LeaseIntReturned,
    LeaseIntAck,
    LeaseStrPending,
    LeaseStrCommitted,
    LeaseStrAck,
    LeaseStrReturning,
    LeaseStrReturned,
    WorkCounted,
    WorkDeadMoved,
    WorkKicked,
    WorkDelayed,
    WorkMadeDue,
    WorkDeadDrain,
}

/// The names of [`Point`]s, as the variable spells them.
const NAMES: [(&[u8], Point); 29] = [
    (b"create_after_reserve", Point::CreateAfterReserve),
    (b"create_before_magic", Point::CreateBeforeMagic),
    (b"int_push_recorded", Point::IntPushRecorded),
    (b"int_push_claimed", Point::IntPushClaimed),
    (b"int_push_mid_run", Point::IntPushMidRun),
    (b"int_pop_recorded", Point::IntPopRecorded),
    (b"int_pop_claimed", Point::IntPopClaimed),
    (b"int_pop_mid_run", Point::IntPopMidRun),
    (b"str_lock_held", Point::StrLockHeld),
    (b"str_lock_stop", Point::StrLockStop),
    (b"str_after_bytes", Point::StrAfterBytes),
    (b"str_mid_commit", Point::StrMidCommit),
    (b"str_after_commit", Point::StrAfterCommit),
    (b"str_after_reset", Point::StrAfterReset),
    (b"lease_int_intent", Point::LeaseIntIntent),
    (b"lease_int_taken", Point::LeaseIntTaken),
    (b"lease_int_returned", Point::LeaseIntReturned),
    (b"lease_int_ack", Point::LeaseIntAck),
    (b"lease_str_pending", Point::LeaseStrPending),
    (b"lease_str_committed", Point::LeaseStrCommitted),
    (b"lease_str_ack", Point::LeaseStrAck),
    (b"lease_str_returning", Point::LeaseStrReturning),
    (b"lease_str_returned", Point::LeaseStrReturned),
    (b"work_counted", Point::WorkCounted),
    (b"work_dead_moved", Point::WorkDeadMoved),
    (b"work_kicked", Point::WorkKicked),
    (b"work_delayed", Point::WorkDelayed),
    (b"work_made_due", Point::WorkMadeDue),
    (b"work_dead_drain", Point::WorkDeadDrain),
];

/// The point `DQS_TEST_KILL_POINT` names now, if any.
pub(crate) fn armed() -> Option<Point> {
    let v = std::env::var_os("DQS_TEST_KILL_POINT")?;
    let v = v.as_encoded_bytes();
    NAMES.iter().find(|(n, _)| *n == v).map(|&(_, p)| p)
}

/// Kill the process here if `DQS_TEST_KILL_POINT` names `p` (read now:
/// for the create points, reached once per file made).
pub(crate) fn at(p: Point) {
    if armed() == Some(p) {
        kill_self();
    }
}

/// Kill the process here if `DQS_TEST_KILL_POINT` names `p`, a lease
/// point. `pid` is the caller's process id (the crate's cached one): the
/// variable is read once per process, and again in a forked child (the
/// tests set it there), so a lease operation pays a load and a compare.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) fn lease_at(p: Point, pid: u32) {
    use std::sync::atomic::{AtomicU64, Ordering};
    // pid << 8 | (the armed point + 1, or 0 for none); 0: not read yet.
    static SEEN: AtomicU64 = AtomicU64::new(0);
    let mut seen = SEEN.load(Ordering::Relaxed);
    if seen >> 8 != u64::from(pid) {
        seen = u64::from(pid) << 8 | armed().map_or(0, |a| a as u64 + 1);
        SEEN.store(seen, Ordering::Relaxed);
    }
    if seen & 0xFF == p as u64 + 1 {
        kill_self();
    }
}

/// End the process with SIGKILL, holding whatever it holds.
#[cold]
#[inline(never)]
pub(crate) fn kill_self() -> ! {
    // SAFETY: plain syscalls; SIGKILL cannot be caught, so the process
    // ends here.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
        loop {
            libc::pause();
        }
    }
}

/// Test hook: where a process kills itself inside the integer ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    /// No hook.
    None,
    /// A push (single or batch) has written its intent record, before
    /// its `tail` CAS: nothing is reserved.
    PushRecorded,
    /// A push (single or batch) has reserved its positions with the
    /// `tail` CAS, before it stores any value: a hole per position.
    PushClaimed,
    /// A batch push of two or more has published the first position of
    /// its run, not the others.
    PushMidRun,
    /// A pop has written its intent record, before its `head` CAS.
    PopRecorded,
    /// A pop (single or batch) has claimed its positions with the `head`
    /// CAS, before it frees any slot (its items die with the process, as
    /// any item a consumer has received).
    PopClaimed,
    /// A batch pop of two or more has freed the first slot of its run.
    PopMidRun,
}

/// Whether the Int point was named with `:stop` (see [`Hook::from_env`]).
static HOOK_STOPS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A ring hook was reached: SIGKILL, or with `:stop` SIGSTOP (the
/// operation goes on after SIGCONT: a live, stopped owner).
#[cold]
#[inline(never)]
pub(crate) fn ring_hook_reached() {
    if HOOK_STOPS.load(std::sync::atomic::Ordering::Relaxed) {
        // SAFETY: plain syscalls; we stop until somebody sends SIGCONT.
        unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
        return;
    }
    kill_self();
}

impl Hook {
    /// The Int point `DQS_TEST_KILL_POINT` names, or `None`. An Int point
    /// name followed by `:stop` (`int_push_claimed:stop`) stops the
    /// process there instead of killing it.
    pub(crate) fn from_env() -> Self {
        let stop = std::env::var_os("DQS_TEST_KILL_POINT").and_then(|v| {
            let b = v.as_encoded_bytes();
            let name = b.strip_suffix(b":stop")?;
            NAMES.iter().find(|(n, _)| *n == name).map(|&(_, p)| p)
        });
        if stop.is_some() {
            HOOK_STOPS.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        match stop.or_else(armed) {
            Some(Point::IntPushRecorded) => Hook::PushRecorded,
            Some(Point::IntPushClaimed) => Hook::PushClaimed,
            Some(Point::IntPushMidRun) => Hook::PushMidRun,
            Some(Point::IntPopRecorded) => Hook::PopRecorded,
            Some(Point::IntPopClaimed) => Hook::PopClaimed,
            Some(Point::IntPopMidRun) => Hook::PopMidRun,
            _ => Hook::None,
        }
    }
}

/// Test hook: where a Str handle's process crashes inside an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KillPoint {
    /// No hook (always, unless the variable is set).
    None,
    /// `str_lock_held`: right after taking the lock.
    LockHeld,
    /// `str_lock_stop`: right after taking the lock, SIGSTOP instead (the
    /// operation goes on after SIGCONT).
    LockStop,
    /// `str_after_bytes`: a push has written its bytes and slot.
    AfterBytes,
    /// `str_mid_commit`: part of the new state copy of a side is
    /// written; the old copy is still current.
    MidCommit,
    /// `str_after_commit`: the new state copy is current; the lock is
    /// still held.
    AfterCommit,
    /// `str_after_reset`: a front push into an arena holding no bytes has
    /// committed the back's `wr` moved to 0, not yet the push itself
    /// (format 7).
    AfterReset,
}

impl KillPoint {
    /// The Str point `DQS_TEST_KILL_POINT` names, or `None`.
    pub(crate) fn from_env() -> Self {
        match armed() {
            Some(Point::StrLockHeld) => KillPoint::LockHeld,
            Some(Point::StrLockStop) => KillPoint::LockStop,
            Some(Point::StrAfterBytes) => KillPoint::AfterBytes,
            Some(Point::StrMidCommit) => KillPoint::MidCommit,
            Some(Point::StrAfterCommit) => KillPoint::AfterCommit,
            Some(Point::StrAfterReset) => KillPoint::AfterReset,
            _ => KillPoint::None,
        }
    }

    /// Crash here if this handle's point is `here`.
    #[inline]
    pub(crate) fn hit(self, here: KillPoint) {
        if self != KillPoint::None && self == here {
            self.fire();
        }
    }

    #[cold]
    #[inline(never)]
    fn fire(self) {
        if self == KillPoint::LockStop {
            // SAFETY: plain syscalls; we stop until somebody sends SIGCONT.
            unsafe { libc::kill(libc::getpid(), libc::SIGSTOP) };
            return;
        }
        kill_self();
    }
}
