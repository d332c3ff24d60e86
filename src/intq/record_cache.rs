//! Which intent record (see `ring/records.rs`) a thread uses for a
//! handle: claimed on first use, cached per thread, given back when the
//! handle is dropped.
//!
//! A thread keeps the records it uses in a small thread-local cache of
//! (handle id, owner tag, record index). Handle ids are unique in the
//! process (a counter), so a stale entry can never name another handle's
//! record. The owner tag is this process's (`lock::current_tag`, cached,
//! and forgotten by the `pthread_atfork` child handler): in a forked
//! child every entry is stale, and the child claims records of its own
//! without a system call per operation (DESIGN.md rule 6). Two threads
//! never share a record: each claims its own, by CAS.
//!
//! A thread that uses more handles at once than the cache holds finds
//! its record again by (tag, handle id, thread id) when an evicted entry
//! is needed again (`records::find_own`), so it holds one record per
//! handle. A thread that ends leaves its records claimed; a later claimer
//! in this process takes them back once the table has no free record
//! (the thread id no longer names a thread). When no record is free and
//! no owner is dead, the thread uses the shared overflow record, one
//! attempt at a time (`records::overflow_take`, whose wait is bounded:
//! then the operation reports "in flight"), and tries again for a record
//! of its own on its next operation.
//!
//! Two live participants must never share a record (a repairer would take
//! one's positions for finished while the other rewrote its ranges). That
//! rests on two assumptions, as the lock's tag does: operations are not
//! async-signal-safe (a signal handler that used the same handle in the
//! same thread, between the interrupted operation's counter CAS and its
//! stores, would rewrite the thread's record and leave that position
//! uncovered; Perl defers signals, so this concerns Rust callers), and
//! children are made by `fork` (whose `pthread_atfork` handler forgets
//! the tag): a child made by a raw `clone` would keep its parent's tag
//! and cached records.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64 as StdAtomicU64, Ordering as StdOrdering};

use super::IntQueue;
use crate::layout::{RING_RECORDS, RING_REC_SIZE};
use crate::lock::current_tag;
use crate::region::Region;
use crate::ring::records::{self, Record, OVERFLOW};
use crate::ring::{Element, Miss, Ring};

static NEXT_ID: StdAtomicU64 = StdAtomicU64::new(1);

/// A new handle id (never 0, never reused in this process).
pub(super) fn new_id() -> u64 {
    NEXT_ID.fetch_add(1, StdOrdering::Relaxed)
}

/// Entries of the per-thread cache.
const WAYS: usize = 4;

/// "Not cached".
const NONE: u32 = u32::MAX;

thread_local! {
    /// (handle id, owner tag, record index); id 0: empty.
    static CACHE: [Cell<(u64, u64, u32)>; WAYS] =
        const { [const { Cell::new((0, 0, 0)) }; WAYS] };
}

/// The intent records of `r`'s mapping.
pub(super) fn table(r: &Region) -> &[Record] {
    let off = r.geometry().recs_off;
    // SAFETY: the geometry (validated at attach) puts RING_RECORDS
    // 64-byte records at `recs_off`, a multiple of 64 of a page-aligned
    // mapping that outlives `r`; records are atomics, which may alias
    // shared memory.
    unsafe {
        std::slice::from_raw_parts(
            r.at(off) as *const Record,
            if off == 0 { 0 } else { RING_RECORDS as usize },
        )
    }
}

impl<T: Element> IntQueue<T> {
    /// This thread's record index for this handle, `OVERFLOW` when it has
    /// none, or `NONE` when not cached.
    #[inline(always)]
    fn cached(&self, tag: u64) -> u32 {
        let id = self.id;
        CACHE.with(|c| {
            for e in c {
                let (i, t, x) = e.get();
                if i == id && t == tag {
                    return x;
                }
            }
            NONE
        })
    }

    /// Run `f` on the ring with this thread's intent record (or, when
    /// no record can be had, return [`Busy::busy`] without running it).
    #[inline(always)]
    pub(crate) fn with_ring<R: Busy>(&self, f: impl FnOnce(&Ring<'_, T>) -> R) -> R {
        let tag = current_tag();
        let x = self.cached(tag);
        if x != NONE && x != OVERFLOW as u32 {
            // SAFETY: `x` came from `claim` on this handle's table (the
            // cache is keyed by the handle id), so it is below
            // RING_RECORDS, and the table lies at `recs_off`.
            let rec = unsafe {
                &*(self
                    .region
                    .at(self.region.geometry().recs_off + u64::from(x) * RING_REC_SIZE)
                    as *const Record)
            };
            return f(&self.ring().with_record(rec));
        }
        self.with_ring_slow(tag, x, f)
    }

    #[cold]
    #[inline(never)]
    fn with_ring_slow<R: Busy>(&self, tag: u64, x: u32, f: impl FnOnce(&Ring<'_, T>) -> R) -> R {
        let tab = table(&self.region);
        if tab.is_empty() {
            return f(&self.ring());
        }
        // Not cached: this thread's own record, else a free record, else
        // a dead owner's or an ended thread's. Cached as overflow: a free
        // one only (no liveness checks per operation).
        let tid = gettid();
        let got = if x == NONE {
            records::find_own(tab, tag, self.id, tid)
                .or_else(|| records::claim(tab, tag, self.id, tid, true))
        } else {
            records::claim(tab, tag, self.id, tid, false)
        };
        let x = got.unwrap_or(OVERFLOW);
        remember(self.id, tag, x as u32);
        if x != OVERFLOW {
            return f(&self.ring().with_record(&tab[x]));
        }
        let Some(rec) = records::overflow_take(tab, tag) else {
            return R::busy();
        };
        let out = f(&self.ring().with_record(rec));
        records::overflow_give(rec);
        out
    }
}

/// What a ring operation returns when it could not run: no intent record
/// to be had (the overflow record held past its bound). Reads as a miss
/// of a position in flight: a non-blocking call fails, a wait tries again.
pub(crate) trait Busy {
    /// The "in flight" result.
    fn busy() -> Self;
}

impl Busy for bool {
    fn busy() -> Self {
        false
    }
}

impl Busy for usize {
    fn busy() -> Self {
        0
    }
}

impl<V> Busy for Option<V> {
    fn busy() -> Self {
        None
    }
}

impl<V> Busy for Result<V, Miss> {
    fn busy() -> Self {
        Err(Miss::InFlight)
    }
}

/// This thread's id (`gettid`), on the claim path only.
fn gettid() -> u64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
}

/// Cache (id, tag) -> x for this thread: replace its entry, else an empty
/// or stale one, else the last.
fn remember(id: u64, tag: u64, x: u32) {
    CACHE.with(|c| {
        let at = c
            .iter()
            .position(|e| e.get().0 == id && e.get().1 == tag)
            .or_else(|| c.iter().position(|e| e.get().0 == 0 || e.get().1 != tag))
            .unwrap_or(WAYS - 1);
        // Most recent first: shift the others down over the chosen entry.
        for k in (1..=at).rev() {
            c[k].set(c[k - 1].get());
        }
        c[0].set((id, tag, x));
    });
}

impl<T: Element> Drop for IntQueue<T> {
    fn drop(&mut self) {
        let tab = table(&self.region);
        if !tab.is_empty() {
            records::release_all(tab, current_tag(), self.id);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    fn tags(q: &IntQueue<i64>) -> Vec<(u64, u64)> {
        table(&q.region)
            .iter()
            .map(|r| (r.tag.load(Ordering::Relaxed), r.key.load(Ordering::Relaxed)))
            .collect()
    }

    /// Threads that use one handle at once each claim a record of their
    /// own; dropping the handle gives them back (seen through a second
    /// handle on the same file), and leaves other handles' records alone.
    #[test]
    fn threads_claim_records_of_their_own_and_drop_gives_them_back() {
        let path = std::env::temp_dir().join(format!("dqs-recs-{}.q", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let q = IntQueue::<i64>::open(&path, 64, 0o600).unwrap();
        let other = IntQueue::<i64>::open(&path, 64, 0o600).unwrap();
        assert!(other.push(-1));
        let barrier = std::sync::Barrier::new(4);
        std::thread::scope(|s| {
            for i in 0..4 {
                let (q, barrier) = (&q, &barrier);
                s.spawn(move || {
                    assert!(q.push(i));
                    // All four hold their records at once.
                    barrier.wait();
                });
            }
        });
        let held = |h: &IntQueue<i64>, id: u64| {
            tags(h)
                .iter()
                .enumerate()
                .filter(|(_, &(t, k))| t == current_tag() && k == id)
                .map(|(i, _)| i)
                .collect::<Vec<usize>>()
        };
        let mine = held(&other, q.id);
        assert_eq!(mine.len(), 4, "four threads, four records: {mine:?}");
        assert!(!mine.contains(&OVERFLOW));
        let id = q.id;
        drop(q);
        assert_eq!(held(&other, id), Vec::<usize>::new(), "given back");
        assert_eq!(held(&other, other.id).len(), 1, "the other handle's stays");
        other.unlink().unwrap();
    }

    /// A table full of live owners: a thread gets no record of its own and
    /// works through the shared overflow record, one attempt at a time,
    /// with others doing the same; nothing is lost or duplicated.
    #[test]
    fn a_full_table_falls_back_to_the_overflow_record() {
        let q = IntQueue::<i64>::anonymous(8).unwrap();
        let t = table(&q.region);
        // Every record but the overflow one held by a live owner (this
        // process) for a handle that does not exist.
        for r in &t[1..] {
            r.tag.store(current_tag(), Ordering::SeqCst);
            r.key.store(u64::MAX, Ordering::SeqCst);
        }
        const PER: i64 = 5_000;
        let got = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for p in 0..2i64 {
                let q = &q;
                s.spawn(move || {
                    for i in 0..PER {
                        while !q.push(p * PER + i) {
                            std::thread::yield_now();
                        }
                    }
                });
            }
            for _ in 0..2 {
                let (q, got) = (&q, &got);
                s.spawn(move || {
                    let mut mine = Vec::new();
                    let mut buf = [0i64; 3];
                    while got.lock().unwrap().len() + mine.len() < 2 * PER as usize {
                        let n = q.pop_multi(&mut buf);
                        mine.extend_from_slice(&buf[..n]);
                        if n == 0 {
                            got.lock().unwrap().extend(mine.drain(..));
                            std::thread::yield_now();
                        }
                    }
                    got.lock().unwrap().extend(mine);
                });
            }
        });
        let mut all = got.into_inner().unwrap();
        all.sort_unstable();
        assert_eq!(all, (0..2 * PER).collect::<Vec<_>>());
        assert_eq!(t[0].tag.load(Ordering::SeqCst), 0, "overflow given back");
        assert!(
            t[1..]
                .iter()
                .all(|r| r.key.load(Ordering::SeqCst) == u64::MAX),
            "no record taken from a live owner"
        );
        assert_eq!(q.stats().recoveries, 0);
    }

    /// A forked child claims a record of its own (its tag), not its
    /// parent's, without being told.
    #[test]
    fn a_forked_child_claims_its_own_record() {
        let q = IntQueue::<i64>::anonymous(8).unwrap();
        assert!(q.push(1));
        // SAFETY: the child only pushes, then _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let ok = q.push(2);
            // SAFETY: _exit ends the child without running the parent's
            // destructors.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut st = 0;
        // SAFETY: plain waitpid on our child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
        assert_eq!(st, 0);
        let child = (pid as u64) << 32;
        let owners: Vec<u64> = tags(&q).iter().map(|&(t, _)| t >> 32 << 32).collect();
        assert!(owners.contains(&child), "the child's record: {owners:x?}");
        assert!(owners.contains(&(current_tag() >> 32 << 32)));
        assert_eq!((q.pop(), q.pop()), (Some(1), Some(2)));
    }

    /// One thread using five queues in turn (more than the four cache
    /// ways) finds its own record again each time instead of claiming a
    /// new one (review of i21ring, finding 3): one record per handle.
    #[test]
    fn five_queues_in_turn_hold_one_record_each() {
        let qs: Vec<IntQueue<i64>> = (0..5).map(|_| IntQueue::anonymous(8).unwrap()).collect();
        for round in 0..40 {
            for q in &qs {
                assert!(q.push(round));
                assert_eq!(q.pop(), Some(round));
            }
        }
        for q in &qs {
            let held = tags(q)[1..].iter().filter(|&&(t, _)| t != 0).count();
            assert_eq!(held, 1, "one thread, one handle: {held} records held");
        }
    }

    /// Threads that end leave their records claimed; once the table has
    /// no free record, a new thread takes an ended thread's back instead
    /// of falling back to the overflow record (finding 3).
    #[test]
    fn ended_threads_records_are_taken_back() {
        let q = IntQueue::<i64>::anonymous(64).unwrap();
        for i in 0..(2 * RING_RECORDS as i64) {
            let q = &q;
            std::thread::scope(|s| {
                s.spawn(move || {
                    assert!(q.push(i));
                    assert_eq!(q.pop(), Some(i));
                    let x = q.cached(current_tag());
                    assert!(x != OVERFLOW as u32 && x != NONE, "thread {i}: record {x}");
                });
            });
        }
        assert_eq!(table(&q.region)[OVERFLOW].tag.load(Ordering::SeqCst), 0);
    }

    /// The table full of live owners and the overflow record held by one
    /// that does not let go: a non-blocking `push` still returns (here:
    /// fails, as on a full queue), and `push_wait` ends at its deadline,
    /// instead of spinning for ever in `overflow_take` (finding 4).
    #[test]
    fn push_returns_while_a_live_owner_holds_the_overflow_record() {
        use crate::futex::Deadline;
        use crate::wait::Waited;
        let q = IntQueue::<i64>::anonymous(8).unwrap();
        let t = table(&q.region);
        for r in t {
            r.tag.store(current_tag(), Ordering::SeqCst);
            r.key.store(u64::MAX, Ordering::SeqCst);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            let q = &q;
            s.spawn(move || {
                let a = q.push(1);
                let b = q.push_wait(1, &Deadline::after_secs(0.05));
                let c = q.pop();
                let _ = tx.send((a, b, c));
            });
            let got = rx.recv_timeout(std::time::Duration::from_secs(5));
            // Let the thread go whatever happened.
            t[OVERFLOW].tag.store(0, Ordering::SeqCst);
            assert_eq!(
                got,
                Ok((false, Waited::TimedOut, None)),
                "still spinning after 5 s?"
            );
        });
        assert_eq!(q.stats().size, 0);
    }

    /// Without procfs (or with `hidepid`) a live owner is still alive
    /// (finding 2). Needs procfs gone, so ignored; run as
    /// `unshare -m sh -c "umount -l /proc && $TEST_BIN without_procfs --ignored"`.
    #[test]
    #[ignore]
    fn alive_and_not_repaired_without_procfs() {
        assert!(
            !records::owner_dead(current_tag()),
            "this process reads as dead"
        );
        let path = std::env::temp_dir().join(format!("dqs-noproc-{}.q", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let q = IntQueue::<i64>::open(&path, 4, 0o600).unwrap();
        // SAFETY: the child pushes once (stopping after its tail CAS), _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: a watchdog for the child alone.
            unsafe { libc::alarm(20) };
            std::env::set_var("DQS_TEST_KILL_POINT", "int_push_claimed:stop");
            let c = IntQueue::<i64>::open(&path, 4, 0o600).unwrap();
            let ok = c.push(5);
            // SAFETY: ends the child without the parent's destructors.
            unsafe { libc::_exit(if ok { 0 } else { 3 }) };
        }
        let mut st = 0;
        // SAFETY: waitpid on our child; WUNTRACED: until it stops.
        assert_eq!(unsafe { libc::waitpid(pid, &mut st, libc::WUNTRACED) }, pid);
        assert!(libc::WIFSTOPPED(st));
        let first = q.pop();
        let rec = q.stats().recoveries;
        // SAFETY: resume and reap our child.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        // SAFETY: as above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
        assert!(q.push(6));
        let rest = (q.pop(), q.pop());
        let _ = std::fs::remove_file(&path);
        assert_eq!(
            (first, rec),
            (None, 0),
            "live producer repaired; then {rest:?}"
        );
        assert_eq!(rest, (Some(5), Some(6)));
    }
}
