//! The blocking protocol shared by every queue: announce, re-check, sleep.
//!
//! A blocked consumer increments `pop_waiters` (SeqCst), reads the futex
//! word, then tries once more. A producer, after its SeqCst claim of a
//! position, reads `pop_waiters` (SeqCst) and only when it is non-zero bumps
//! the futex word and calls `FUTEX_WAKE`. The SeqCst total order guarantees
//! that either the producer sees the waiter or the waiter's re-check sees
//! the producer's claim, so no wake-up is lost and the common case (nobody
//! waiting) costs one plain load and no syscall. Producers blocked on a full
//! queue use the mirror-image pair `push_waiters` / `push_futex`.
//!
//! A position owned but not yet finished ([`Miss::InFlight`]) is not a
//! state to sleep in (its owner's wake check may already be behind it),
//! so the waiter spins, then yields, then naps briefly until it settles
//! (the ring repairs such a position once its owner is dead). A stopped
//! owner keeps it in flight for as long as it is stopped, so between naps
//! the waiter looks at the embedder's signal flag (see `futex`) and
//! returns [`Waited::Interrupted`] when a handler is due.
//!
//! The Int ring finishes its operations with plain stores, not a CAS, so
//! its waits use [`block_on_fenced`]: the sleeper issues the heavy half of
//! the lock's asymmetric barrier (`membarrier`) after announcing itself,
//! the waker the light half after its stores (see "Waiters" in the ring's
//! module docs).
//!
//! # Waiters that die
//!
//! A waiter killed while asleep cannot take its count back, which would
//! leave every later push paying a `FUTEX_WAKE` for nobody. So the waiter
//! word holds an epoch (high 8 bits) beside the count (low 24 bits), and a
//! waiter takes its count back only if the epoch is still the one it
//! announced in. When wake calls on one side of a queue have found nobody
//! asleep [`RESET_AFTER`] times in a row, whichever process makes the last
//! of them resets the count to zero under a new epoch and wakes every
//! sleeper on that side; the live ones go round their loop and announce
//! themselves again, the dead ones are forgotten. The reset is safe even
//! when nobody is dead: a waiter looks at the epoch once more after it
//! has sampled the futex word and re-checked the queue, and sleeps only if
//! its announcement still stands. If the reset came before that look, the
//! waiter sees the new epoch and goes round again (announcing itself
//! anew); if after, the waiter sampled the futex word before the reset
//! bumped it, so its sleep ends at once or is ended by the reset's wake.
//! So no wake-up is lost, and a waiter whose count was reset does not take
//! it back twice. A killed waiter's count is thus gone within
//! [`RESET_AFTER`] operations of the other side, whichever processes make
//! them.
//!
//! The tally of fruitless wakes lives in the side's futex word, which
//! waking already changes: the low 24 bits count wake-ups (wrapping; a
//! carry into the tally only advances it), the high 8 bits are the tally.
//! A waker adds 1 as before, then adds `1 << 24` when its `FUTEX_WAKE`
//! found nobody, or clears the tally when it woke somebody. Sleepers only
//! compare the whole word for a change, so the tally never hides a
//! wake-up; a change of the tally between a sleeper's look at the word and
//! its sleep costs it one more round. A wrong tally in shared memory (a
//! hostile or foreign writer) can only bring a reset forward or put it
//! off, and a reset is always safe.
//!
//! A settled miss is retried a little before sleeping, too: a sleeper costs
//! the other side a `FUTEX_WAKE` for every item it moves until the sleeper
//! is back (a few microseconds), while in a stream the next item usually
//! comes within a microsecond. Retrying is safe here because the waiter
//! has not announced itself yet; the announce-and-recheck below is
//! unchanged.
//!
//! # Spinning only while it pays
//!
//! Retrying costs CPU for nothing when the other side is idle: with the
//! full budget (64 spin hints and 64 yields) a consumer fed one item per
//! millisecond used about 8% of a core. So the budget adapts, per waiting
//! thread and per side (a small thread-local table keyed by the futex
//! word's address; private memory, nothing shared). Every wait whose
//! retries ran out is judged once, at its first announcement: when the
//! item came before the sleep or within [`PAYS_NS`] of it, a longer spin
//! would have caught it, and the budget doubles (up to the full
//! [`SPIN_MAX`]); when the sleep was longer, ended at the deadline or
//! by a signal, spinning did not pay and the budget halves (down to
//! [`SPIN_MIN`] spin hints, a few hundred nanoseconds). A wait whose
//! retries caught the item doubles it too. So a worker waiting on an idle
//! queue settles within a few items to sleeping almost at once (then its
//! CPU is the kernel's sleep and wake-up, see bench/RESULTS.pod), and one
//! in a stream where the item comes within microseconds keeps the full
//! budget. The budget only decides how often a waiter looks before it
//! announces itself; the protocol after that is the same whatever it is.
//! Under loom it is the full budget always (the models count the looks).

use crate::futex::{self, Deadline, WaitResult};
use crate::sync::{sleep_micros, spin_hint, yield_now, AtomicU32, Ordering};

/// How a blocking operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited<R> {
    /// It happened; here is the result.
    Done(R),
    /// The deadline passed first.
    TimedOut,
    /// A signal arrived. Nothing was done and the waiter registration was
    /// undone; run the signal handlers, then call again with the same deadline.
    Interrupted,
}

impl<R> Waited<R> {
    /// Transform the result of a completed wait.
    pub fn map<S>(self, f: impl FnOnce(R) -> S) -> Waited<S> {
        match self {
            Waited::Done(r) => Waited::Done(f(r)),
            Waited::TimedOut => Waited::TimedOut,
            Waited::Interrupted => Waited::Interrupted,
        }
    }
}

/// One direction's waiter word and futex word.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    /// Processes blocked on this side: count in the low 24 bits, epoch in
    /// the high 8 (see the module docs; [`waiter_count`] reads it).
    pub waiters: &'a AtomicU32,
    /// The word they sleep on.
    pub futex: &'a AtomicU32,
}

const COUNT_BITS: u32 = 24;
const COUNT_MASK: u32 = (1 << COUNT_BITS) - 1;

pub use crate::layout::RESET_AFTER;

/// Outcome of a non-blocking attempt that found no room or no item, telling
/// a waiter whether sleeping is safe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// Really full (push) or really empty (pop): a sleeper will be woken by
    /// the next change.
    Settled,
    /// The next position is owned by a peer that has not finished it yet
    /// (Int: a producer that reserved it and has not published it, or a
    /// consumer that claimed last lap's item and has not freed the slot).
    /// Spin and retry; the ring repairs it once its owner is dead.
    InFlight,
}

/// Where the fruitless-wake tally sits in the futex word (see the module
/// docs); the bits below it count wake-ups.
const TALLY_SHIFT: u32 = 24;
const TALLY_ONE: u32 = 1 << TALLY_SHIFT;
const WAKES_MASK: u32 = TALLY_ONE - 1;

/// The fruitless-wake tally in a futex word.
pub fn fruitless_wakes(futex: &AtomicU32) -> u32 {
    futex.load(Ordering::Relaxed) >> TALLY_SHIFT
}

/// The number of waiters in a waiter word.
pub fn waiter_count(word: &AtomicU32) -> u64 {
    u64::from(word.load(Ordering::Relaxed) & COUNT_MASK)
}

impl Side<'_> {
    /// Wake up to `n` waiters if anybody waits. The SeqCst load pairs with
    /// the SeqCst announcement in [`block_on`].
    #[inline(always)]
    pub fn wake(&self, n: u32) {
        if n > 0 && self.waiting() {
            self.wake_slow(n);
        }
    }

    /// Whether anybody announced a wait on this side (the check
    /// [`Side::wake`] makes, for callers that wake out of line). SeqCst,
    /// as in `wake`.
    #[inline(always)]
    pub fn waiting(&self) -> bool {
        self.waiters.load(Ordering::SeqCst) & COUNT_MASK != 0
    }

    #[cold]
    #[inline(never)]
    // By value: two pointers in registers, so callers never lay a `Side`
    // out in memory just to skip this call.
    fn wake_slow(self, n: u32) {
        self.futex.fetch_add(1, Ordering::SeqCst);
        self.woke(futex::wake(self.futex, n));
    }

    /// Count wake calls that found nobody asleep in this side's tally;
    /// reset the waiter count after too many in a row. Relaxed: the tally
    /// is a hint (any value is safe, see the module docs), and what a
    /// sleeper must see is the waker's SeqCst increment before its wake.
    fn woke(&self, woken: u32) {
        if woken > 0 {
            if self.futex.load(Ordering::Relaxed) >> TALLY_SHIFT != 0 {
                self.futex.fetch_and(WAKES_MASK, Ordering::Relaxed);
            }
        } else if (self.futex.fetch_add(TALLY_ONE, Ordering::Relaxed) >> TALLY_SHIFT) + 1
            >= RESET_AFTER
            && self.reset()
        {
            // Only once the count is clear: while the reset's CAS keeps
            // losing, the tally stays high and the next fruitless wake
            // tries again.
            self.futex.fetch_and(WAKES_MASK, Ordering::Relaxed);
        }
    }

    /// Forget every announced waiter (new epoch, count 0) and wake all
    /// sleepers so the live ones announce themselves again. False when the
    /// word moved under the reset (somebody announced or left), which
    /// then did nothing.
    #[cold]
    pub fn reset(&self) -> bool {
        let cur = self.waiters.load(Ordering::SeqCst);
        if cur & COUNT_MASK == 0 {
            return true;
        }
        let next = ((cur >> COUNT_BITS).wrapping_add(1)) << COUNT_BITS;
        // RECOVERY: a failed CAS means the word moved: the caller tries
        // again on its next fruitless wake.
        if self
            .waiters
            .compare_exchange(cur, next, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return false;
        }
        self.futex.fetch_add(1, Ordering::SeqCst);
        futex::wake(self.futex, u32::MAX);
        true
    }

    /// Announce a waiter; returns the epoch to hand to [`Side::withdraw`].
    #[inline]
    fn announce(&self) -> u32 {
        // SYNC POINT: announce before sampling; pairs with Side::wake.
        self.waiters.fetch_add(1, Ordering::SeqCst) >> COUNT_BITS
    }

    /// Whether the waiter word is still in `epoch` (no reset since a
    /// waiter announced itself in it). SYNC POINT: SeqCst after the
    /// waiter's SeqCst sample of the futex word; a reset CASes the waiter
    /// word before it bumps the futex word, so a waiter that sampled the
    /// bumped word sees the new epoch here.
    #[inline]
    fn announced_in(&self, epoch: u32) -> bool {
        self.waiters.load(Ordering::SeqCst) >> COUNT_BITS == epoch
    }

    /// Take back a count announced in `epoch`, unless a reset already did.
    #[inline]
    fn withdraw(&self, epoch: u32) {
        let mut cur = self.waiters.load(Ordering::SeqCst);
        while cur >> COUNT_BITS == epoch && cur & COUNT_MASK != 0 {
            match self.waiters.compare_exchange_weak(
                cur,
                cur - 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return,
                Err(c) => cur = c,
            }
        }
    }

    /// Wake everybody on this side (clear).
    pub fn wake_all(&self) {
        self.futex.fetch_add(1, Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) & COUNT_MASK != 0 {
            self.woke(futex::wake(self.futex, u32::MAX));
        }
    }
}

/// Settled misses retried with a spin hint (about 25 ns each on the 2-vCPU
/// AMD EPYC development machine), then with a yield (which lets a peer
/// sharing our CPU run), before announcing and sleeping: at most a few tens
/// of microseconds of CPU per wait. Measured with bench/vs.pl on that
/// machine, quiet, medians of three: cross-process SPSC integers went from
/// about 3M/s to 6M/s and ~50-byte strings from 2.8M/s to 5M/s. This is
/// the full budget; the budget in force adapts between [`SPIN_MIN`] and
/// [`SPIN_MAX`] (see "Spinning only while it pays" in the module docs).
const SETTLED_SPINS: u32 = 64;
const SETTLED_YIELDS: u32 = 64;

/// The full retry budget: every spin hint and every yield.
pub const SPIN_MAX: u32 = SETTLED_SPINS + SETTLED_YIELDS;

/// The least retry budget: a few spin hints (about 100 ns), so that a
/// waiter whose budget fell can still catch an item that is a moment
/// away, and grow its budget again.
pub const SPIN_MIN: u32 = 4;

/// A sleep shorter than this (from the announcement to the wake-up) means
/// spinning would have paid: about what the full budget's 64 yields take
/// on the development machine, and several times what a sleep and a
/// wake-up cost the two sides.
pub const PAYS_NS: u64 = 50_000;

/// The adaptive retry budget of the calling thread for one side (see
/// "Spinning only while it pays"): a table of a few sides, keyed by the
/// address of the side's futex word, the oldest entry replaced by a new
/// side at the full budget.
#[cfg(not(loom))]
mod budget {
    use std::cell::Cell;

    /// Sides remembered per thread (a thread waits on few queues).
    const SLOTS: usize = 4;

    thread_local! {
        static TABLE: Cell<[(usize, u32); SLOTS]> = const { Cell::new([(0, 0); SLOTS]) };
        static NEXT: Cell<usize> = const { Cell::new(0) };
    }

    /// Now, to time a sleep.
    pub(super) fn now() -> u64 {
        crate::clock::now_ns()
    }

    /// The budget for the side whose futex word is at `key`.
    pub(super) fn get(key: usize) -> u32 {
        TABLE.with(|t| {
            let table = t.get();
            match table.iter().find(|e| e.0 == key) {
                Some(e) => e.1,
                None => super::SPIN_MAX,
            }
        })
    }

    /// Set the budget for the side whose futex word is at `key`.
    pub(super) fn set(key: usize, budget: u32) {
        TABLE.with(|t| {
            let mut table = t.get();
            let i = match table.iter().position(|e| e.0 == key) {
                Some(i) => i,
                None => NEXT.with(|n| {
                    let i = n.get();
                    n.set((i + 1) % SLOTS);
                    i
                }),
            };
            table[i] = (key, budget);
            t.set(table);
        });
    }
}

#[cfg(loom)]
mod budget {
    // No clock reading: under loom it would be one more shared atomic in
    // every model.
    pub(super) fn now() -> u64 {
        0
    }

    pub(super) fn get(_key: usize) -> u32 {
        super::SPIN_MAX
    }

    pub(super) fn set(_key: usize, _budget: u32) {}
}

/// This thread's retry budget for `side`.
pub fn spin_budget(side: Side<'_>) -> u32 {
    budget::get(side.futex as *const AtomicU32 as usize)
}

/// Judge one wait: `paid` when spinning longer would have caught the item.
fn judge(side: Side<'_>, budget: u32, paid: bool) {
    let next = if paid {
        budget.saturating_mul(2).min(SPIN_MAX)
    } else {
        (budget / 2).max(SPIN_MIN)
    };
    if next != budget {
        budget::set(side.futex as *const AtomicU32 as usize, next);
    }
}

/// Back-off for the short claimed-but-unpublished window.
pub(crate) struct Backoff(u32);

impl Backoff {
    pub(crate) fn new() -> Self {
        Backoff(0)
    }

    pub(crate) fn snooze(&mut self) {
        self.0 = self.0.saturating_add(1);
        if self.0 < 64 {
            spin_hint();
        } else if self.0 < 1024 {
            yield_now();
        } else {
            sleep_micros(200);
        }
    }
}

/// Repeat `attempt` until it succeeds, sleeping on `side` while it reports
/// a settled miss, until `deadline`. `attempt` must be side-effect free when
/// it fails.
pub fn block_on<R>(
    side: Side<'_>,
    deadline: &Deadline,
    attempt: impl FnMut() -> Result<R, Miss>,
) -> Waited<R> {
    block_on_as(side, deadline, false, || false, attempt)
}

/// [`block_on`] with a cheap look for the retries before the waiter
/// announces itself: while `looks_missing` says the item (or the room) is
/// still missing, the retries only look, and `attempt` runs again when the
/// look says otherwise or the budget has run out. The look needs no
/// ordering (a wrong answer costs a retry or an attempt); `attempt` alone
/// decides, before and after the announcement. For the Str queue, whose
/// attempt takes a lock: a waiter then takes none while it spins.
pub fn block_on_looking<R>(
    side: Side<'_>,
    deadline: &Deadline,
    looks_missing: impl FnMut() -> bool,
    attempt: impl FnMut() -> Result<R, Miss>,
) -> Waited<R> {
    block_on_as(side, deadline, false, looks_missing, attempt)
}

/// [`block_on`] for a side whose wakers finish with plain stores and the
/// light half of the lock's asymmetric barrier (the Int ring, format 7):
/// the sleeper issues the heavy half after announcing itself, and when
/// that fails sleeps at most [`FALLBACK_NS`](crate::lock::FALLBACK_NS) at
/// a time (see "Waiters" in the ring's module docs).
pub fn block_on_fenced<R>(
    side: Side<'_>,
    deadline: &Deadline,
    attempt: impl FnMut() -> Result<R, Miss>,
) -> Waited<R> {
    block_on_as(side, deadline, true, || false, attempt)
}

fn block_on_as<R>(
    side: Side<'_>,
    deadline: &Deadline,
    heavy: bool,
    mut looks_missing: impl FnMut() -> bool,
    mut attempt: impl FnMut() -> Result<R, Miss>,
) -> Waited<R> {
    let mut backoff = Backoff::new();
    let mut settled = 0u32;
    // Read at the first settled miss; judged once, when the retries ran
    // out (`since` is then when this wait announced itself first) or
    // caught the item.
    let mut budget = None;
    let mut since = None;
    loop {
        match attempt() {
            Ok(r) => {
                if let (Some(b), None) = (budget, since) {
                    if settled > 0 {
                        judge(side, b, true);
                    }
                }
                return Waited::Done(r);
            }
            Err(Miss::InFlight) => {
                if deadline.expired() {
                    return Waited::TimedOut;
                }
                // A position a stopped owner holds stays in flight until it
                // runs again, so the embedder's signal handlers (Perl's,
                // through its flag) run now, not at the deadline. Nothing
                // is registered yet: nothing to undo.
                if futex::signal_pending() {
                    return Waited::Interrupted;
                }
                backoff.snooze();
                continue;
            }
            Err(Miss::Settled) => {}
        }
        if deadline.expired() {
            return Waited::TimedOut;
        }
        let b = *budget.get_or_insert_with(|| spin_budget(side));
        if settled < b {
            loop {
                if settled < SETTLED_SPINS {
                    spin_hint();
                } else {
                    yield_now();
                }
                settled += 1;
                if settled >= b || !looks_missing() {
                    break;
                }
            }
            continue;
        }
        let first = since.is_none();
        if first {
            since = Some(budget::now());
        }
        let epoch = side.announce();
        // SYNC POINT (fenced sides): the heavy half of the barrier after
        // the announcement, before the re-check.
        let fenced = !heavy || crate::lock::barrier::heavy();
        let seen = side.futex.load(Ordering::SeqCst);
        let r = match attempt() {
            Ok(r) => Some(Ok(r)),
            Err(Miss::InFlight) => Some(Err(())),
            Err(Miss::Settled) => None,
        };
        // Sleep only if no reset has erased our announcement: a reset
        // after our sample of the futex word finds us still counted (and
        // its bump of the word stops our sleep, or its wake ends it); one
        // before our look here has dropped our count, and then nobody
        // would wake us for the next item.
        let slept = if r.is_none() && side.announced_in(epoch) {
            if fenced {
                futex::wait_interruptible(side.futex, seen, deadline)
            } else {
                let capped =
                    Deadline::after_secs(crate::lock::FALLBACK_NS as f64 / 1e9).earliest(*deadline);
                futex::wait_interruptible(side.futex, seen, &capped)
            }
        } else {
            WaitResult::Woken
        };
        side.withdraw(epoch);
        if first {
            // Spinning would have paid if the item came before the sleep
            // or soon after it; not if the wait slept long, ran out or
            // was interrupted.
            let paid = match (&r, slept) {
                (Some(_), _) => true,
                (None, WaitResult::Woken) => {
                    budget::now().wrapping_sub(since.unwrap_or(0)) < PAYS_NS
                }
                (None, _) => false,
            };
            judge(side, budget.unwrap_or(SPIN_MAX), paid);
        }
        match r {
            Some(Ok(v)) => return Waited::Done(v),
            Some(Err(())) => {
                if futex::signal_pending() {
                    return Waited::Interrupted;
                }
                backoff.snooze();
                continue;
            }
            None => {}
        }
        match slept {
            WaitResult::Woken => {}
            WaitResult::Interrupted => return Waited::Interrupted,
            WaitResult::TimedOut => {
                if !deadline.expired() {
                    // Only a slice (futex::wait_interruptible) ran out: sleep on.
                    continue;
                }
                // One last look: the item may have come as the clock ran out.
                return match attempt() {
                    Ok(v) => Waited::Done(v),
                    Err(_) => Waited::TimedOut,
                };
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
