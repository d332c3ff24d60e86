//! The ring's intent records (format 7): who is between its counter CAS
//! and the stores that finish the positions it reserved or claimed, so
//! that a dead process's positions can be repaired and a live one's never
//! are (see "Repair" in the ring's module docs).
//!
//! A table of [`RING_RECORDS`](crate::layout::RING_RECORDS) records, one
//! cache line each, lies in the mapping after the slots. A record is
//! claimed once by one thread of one process for one handle (its `key`,
//! a process-local handle id, and its `tid`, the thread's id) and reused
//! by it for every operation: claiming is a CAS of `tag` from 0, from
//! the tag of an owner that is dead, or from this process's own tag when
//! the thread that claimed it has ended (`tgkill(getpid(), tid, 0)`:
//! ESRCH), to `tag | BUSY`; the claimer then stores its key and thread
//! id, empties both ranges and stores its plain tag (Release). A thread
//! that lost its record from its cache finds it again by (tag, key, tid)
//! ([`find_own`]) before claiming another, so a thread holds at most one
//! record per handle, and records of ended threads are taken back.
//!
//! Record 0 is never claimed for good: it is the overflow record, which a
//! participant that found every other record held by live owners claims
//! for one attempt at a time and gives back right after (`tag` back to
//! 0), waiting while another holds it (a live holder is inside one ring
//! attempt; a dead holder's tag is replaced by a CAS, as for a claim).
//! The wait is bounded ([`OVERFLOW_TRIES`]): a holder that does not let
//! go (stopped, or scribbled memory naming a live process) makes
//! [`overflow_take`] give up, and the operation reports "in flight" (a
//! non-blocking push or pop fails as on a full or empty queue; a wait
//! tries again until its deadline).

use crate::sync::{spin_hint, spin_rounds, AtomicU64, Ordering};

/// One intent record, one cache line.
#[repr(C, align(64))]
pub struct Record {
    /// 0: free; else the owner's tag (`pid << 32 | start time`, as the
    /// lock's, see `lock/identity.rs`), with [`BUSY`] while being claimed.
    pub tag: AtomicU64,
    /// The claimer's handle id (meaningful only inside its process).
    pub key: AtomicU64,
    /// Producer range `[push_lo, push_hi)`: the positions its current (or
    /// last) push reserves (empty when `push_lo == push_hi`).
    pub push_lo: AtomicU64,
    /// End of the producer range.
    pub push_hi: AtomicU64,
    /// Consumer range `[pop_lo, pop_hi)`, as for pushes.
    pub pop_lo: AtomicU64,
    /// End of the consumer range.
    pub pop_hi: AtomicU64,
    /// The claimer's thread id (`gettid`; meaningful only inside its
    /// process).
    pub tid: AtomicU64,
    _pad: [u64; 1],
}

#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<Record>() as u64 == crate::layout::RING_REC_SIZE);

/// The bit a claimer sets in `tag` until its key and ranges are written.
pub const BUSY: u64 = 1 << 63;

/// The shared overflow record's index.
pub const OVERFLOW: usize = 0;

/// Which side's range of a record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// The producer range.
    Push,
    /// The consumer range.
    Pop,
}

impl Record {
    /// A free record (tests and loom models; the mapping's are zero).
    pub fn new() -> Self {
        Record {
            tag: AtomicU64::new(0),
            key: AtomicU64::new(0),
            push_lo: AtomicU64::new(0),
            push_hi: AtomicU64::new(0),
            pop_lo: AtomicU64::new(0),
            pop_hi: AtomicU64::new(0),
            tid: AtomicU64::new(0),
            _pad: [0; 1],
        }
    }

    #[inline(always)]
    fn range(&self, side: Side) -> (&AtomicU64, &AtomicU64) {
        match side {
            Side::Push => (&self.push_lo, &self.push_hi),
            Side::Pop => (&self.pop_lo, &self.pop_hi),
        }
    }

    /// Announce `[lo, lo + n)` on `side`, before the counter CAS that
    /// takes it (whose Release publishes these stores to a repairer that
    /// reads the counter with Acquire). A reader may see one word of this
    /// range and one of a later one; every later store comes after the
    /// positions of this range were finished (or, after a failed CAS,
    /// were never taken), and is a Release store, so such a reader also
    /// sees the slots finished and its repair CAS fails harmlessly.
    #[inline(always)]
    pub fn note(&self, side: Side, lo: u64, n: u64) {
        let (l, h) = self.range(side);
        l.store(lo, Ordering::Release);
        h.store(lo.wrapping_add(n), Ordering::Release);
    }

    /// Empty the range of `side` (after a failed or abandoned attempt:
    /// a live owner's record must never go on covering positions it did
    /// not take).
    #[inline(always)]
    pub fn clear(&self, side: Side) {
        let (l, h) = self.range(side);
        h.store(l.load(Ordering::Relaxed), Ordering::Release);
    }

    /// Whether this record's `side` range covers `p` (read with Acquire).
    /// A range longer than `cap` covers nothing (scribbled memory).
    fn covers(&self, side: Side, p: u64, cap: u64) -> bool {
        let (l, h) = self.range(side);
        let lo = l.load(Ordering::Acquire);
        let hi = h.load(Ordering::Acquire);
        let len = hi.wrapping_sub(lo);
        len <= cap && p.wrapping_sub(lo) < len
    }
}

impl Default for Record {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether the owner named by `tag` (a record's tag, [`BUSY`] ignored) is
/// certainly dead: the lock's test (`kill`, `/proc` state and start time),
/// or under loom the models' declared deaths.
pub fn owner_dead(tag: u64) -> bool {
    let tag = tag & !BUSY;
    let pid = (tag >> 32) as u32;
    #[cfg(not(loom))]
    {
        crate::lock::owner_is_dead(pid, tag, u64::MAX)
    }
    #[cfg(loom)]
    {
        crate::lock::model_deaths::is_dead(pid)
    }
}

/// Whether some record of a live owner covers position `p` on `side`: the
/// repairer's question. Call it after reading the counter that shows `p`
/// taken (Acquire): the taker's record was stored before its CAS.
///
/// A record whose tag changes while it is read (a claim of a dead
/// owner's record) counts as covering: the caller waits and asks again.
pub fn live_cover(table: &[Record], side: Side, p: u64, cap: u64) -> bool {
    table.iter().any(|r| {
        let t1 = r.tag.load(Ordering::Acquire);
        if t1 == 0 {
            return false;
        }
        let c = r.covers(side, p, cap);
        let t2 = r.tag.load(Ordering::Acquire);
        if t1 != t2 {
            return true;
        }
        c && !owner_dead(t1)
    })
}

/// The record of `table` (not the overflow record) this thread (`tid`)
/// of owner `tag` claimed for handle `key`, if it holds one (a thread
/// whose cache dropped it).
pub fn find_own(table: &[Record], tag: u64, key: u64, tid: u64) -> Option<usize> {
    if tag == 0 || tag & BUSY != 0 {
        return None;
    }
    table.iter().enumerate().skip(1).find_map(|(i, r)| {
        (r.tag.load(Ordering::Acquire) == tag
            && r.key.load(Ordering::Relaxed) == key
            && r.tid.load(Ordering::Relaxed) == tid)
            .then_some(i)
    })
}

/// Whether thread `tid` of this process has ended.
#[cfg(not(loom))]
fn thread_gone(tid: u64) -> bool {
    let Ok(t) = libc::pid_t::try_from(tid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence; nothing is sent.
    let r = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), t, 0) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Threads do not end in the loom models.
#[cfg(loom)]
fn thread_gone(_tid: u64) -> bool {
    false
}

/// Claim a record of `table` (not the overflow record) for thread `tid`
/// of owner `tag` and handle `key`: a free one, else (with `dead_too`)
/// one whose owner is dead, or one of this process whose thread has
/// ended. `None` when every record is held by a live owner (or `tag` is
/// 0: unknown).
pub fn claim(table: &[Record], tag: u64, key: u64, tid: u64, dead_too: bool) -> Option<usize> {
    if tag == 0 || tag & BUSY != 0 {
        return None;
    }
    // `dead_tid`: the record is this process's, of that ended thread;
    // checked again once `BUSY` keeps other claimers out (another thread
    // of ours may have claimed it meanwhile, storing the same tag).
    let won = |r: &Record, from: u64, dead_tid: Option<u64>| {
        if r.tag
            .compare_exchange(from, tag | BUSY, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if dead_tid.is_some_and(|d| r.tid.load(Ordering::Relaxed) != d) {
            r.tag.store(from, Ordering::Release);
            return false;
        }
        r.key.store(key, Ordering::Relaxed);
        r.tid.store(tid, Ordering::Relaxed);
        r.clear(Side::Push);
        r.clear(Side::Pop);
        r.tag.store(tag, Ordering::Release);
        true
    };
    for (i, r) in table.iter().enumerate().skip(1) {
        if r.tag.load(Ordering::Relaxed) == 0 && won(r, 0, None) {
            return Some(i);
        }
    }
    if !dead_too {
        return None;
    }
    for (i, r) in table.iter().enumerate().skip(1) {
        let t = r.tag.load(Ordering::Acquire);
        if t == 0 || t & BUSY != 0 {
            continue;
        }
        if t != tag && owner_dead(t) && won(r, t, None) {
            return Some(i);
        }
        let old = r.tid.load(Ordering::Relaxed);
        if t == tag && old != tid && thread_gone(old) && won(r, t, Some(old)) {
            return Some(i);
        }
    }
    None
}

/// Give back every record claimed for (`tag`, `key`): the handle is gone.
pub fn release_all(table: &[Record], tag: u64, key: u64) {
    for r in table.iter().skip(1) {
        if r.tag.load(Ordering::Acquire) == tag && r.key.load(Ordering::Relaxed) == key {
            let _ = r
                .tag
                .compare_exchange(tag, 0, Ordering::AcqRel, Ordering::Relaxed);
        }
    }
}

/// Tries [`overflow_take`] makes (spins, then yields) before it gives up.
pub const OVERFLOW_TRIES: u32 = spin_rounds(4096);

/// Take the overflow record for one attempt (see the module docs): wait
/// while a live owner holds it, take it from a dead one. `None` after
/// [`OVERFLOW_TRIES`] tries: the caller reports its operation in flight.
pub fn overflow_take(table: &[Record], tag: u64) -> Option<&Record> {
    let r = &table[OVERFLOW];
    let mut spins = 0u32;
    while spins < OVERFLOW_TRIES {
        let cur = r.tag.load(Ordering::Acquire);
        let free = cur == 0 || (spins % 1024 == 64 && owner_dead(cur));
        if free
            && r.tag
                .compare_exchange(cur, tag, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            r.clear(Side::Push);
            r.clear(Side::Pop);
            return Some(r);
        }
        spins = spins.wrapping_add(1);
        if spins < 64 {
            spin_hint();
        } else {
            crate::sync::yield_now();
        }
    }
    None
}

/// Give the overflow record back.
pub fn overflow_give(r: &Record) {
    r.tag.store(0, Ordering::Release);
}
