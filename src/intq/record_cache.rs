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
mod tests;
