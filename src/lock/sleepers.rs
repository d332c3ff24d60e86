//! The sleepers word of a lock: the number of lockers counted to sleep on
//! the lock word, the tally of wakes in a row that found nobody asleep, and
//! the epoch a reset starts (see the lock's module docs); and a locker's
//! life as a counted [`Sleeper`].

use super::barrier;
use super::Lock;
use crate::futex::{self, Deadline};
use crate::sync::{AtomicU32, Ordering};
// The same bound as the queue waiters' reset: wakes in a row that found
// nobody asleep before the sleeper count is forgotten.
use crate::layout::RESET_AFTER;

/// The sleepers word: count in the low bits, then the tally, then the epoch.
pub(super) const COUNT_MASK: u32 = 0xFFFF;
pub(super) const TALLY_SHIFT: u32 = 16;
const TALLY_ONE: u32 = 1 << TALLY_SHIFT;
const TALLY_MASK: u32 = 0xFF << TALLY_SHIFT;
pub(super) const EPOCH_SHIFT: u32 = 24;

/// The number of lockers counted in a sleepers word.
#[inline]
pub const fn sleeper_count(sleepers: u32) -> u32 {
    sleepers & COUNT_MASK
}

/// The longest sleep of a locker whose `membarrier` call failed, which may
/// miss a wake-up (see the lock's module docs).
pub const FALLBACK_NS: u64 = 1_000_000;

/// A locker counted in a lock's `sleepers` word, from the end of its spin
/// until it has the lock or gives up (when it is dropped and takes its
/// count back, if no reset forgot it meanwhile).
pub(super) struct Sleeper<'a> {
    sleepers: &'a AtomicU32,
    /// The epoch it is counted in; `None` while uncounted (the count is
    /// full: 65535 sleepers), when it sleeps [`FALLBACK_NS`] at most.
    epoch: Option<u32>,
    /// Whether every holder is known to see the count (see `barrier`).
    fenced: bool,
}

impl<'a> Sleeper<'a> {
    pub(super) fn announce(sleepers: &'a AtomicU32) -> Self {
        let mut s = Sleeper {
            sleepers,
            epoch: None,
            fenced: false,
        };
        s.count();
        s
    }

    /// Count this locker in the current epoch, then the barrier.
    fn count(&mut self) {
        let mut cur = self.sleepers.load(Ordering::Relaxed);
        self.epoch = loop {
            if sleeper_count(cur) == COUNT_MASK {
                break None;
            }
            // SYNC POINT: raise the count, then `barrier::heavy`, then read
            // the word (the caller's next look); pairs with the unlock's
            // store, `barrier::light`, read of the count.
            match self
                .sleepers
                .compare_exchange(cur, cur + 1, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => break Some(cur >> EPOCH_SHIFT),
                Err(now) => cur = now,
            }
        };
        self.fenced = self.epoch.is_some() && barrier::heavy();
    }

    /// Before a sleep: count this locker again if a reset forgot it (or it
    /// was not counted). True when it is newly counted: the caller must
    /// look at the word again before it sleeps. (Still uncounted, the
    /// count being full, it sleeps anyway, briefly: see `until`.)
    pub(super) fn recount(&mut self) -> bool {
        let now = self.sleepers.load(Ordering::Relaxed) >> EPOCH_SHIFT;
        if self.epoch == Some(now) {
            return false;
        }
        self.count();
        self.epoch.is_some()
    }

    /// The end of the next sleep: `d` (which callers cap at [`POLL_NS`]
    /// from now, as a reset wakes only those asleep), or sooner when a
    /// wake-up may be missed (uncounted, or unfenced).
    pub(super) fn until(&self, d: Deadline) -> Deadline {
        if self.fenced {
            d
        } else {
            Deadline::after_secs(FALLBACK_NS as f64 / 1e9).earliest(d)
        }
    }
}

impl Drop for Sleeper<'_> {
    fn drop(&mut self) {
        let Some(epoch) = self.epoch else { return };
        let mut cur = self.sleepers.load(Ordering::Relaxed);
        // Relaxed: a stale count costs a holder one wake call, no more.
        while cur >> EPOCH_SHIFT == epoch && sleeper_count(cur) != 0 {
            match self
                .sleepers
                .compare_exchange(cur, cur - 1, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }
}

/// After a wake call on `lock` that woke `woken` sleepers: clear the
/// fruitless-wake tally, or add to it and, at [`RESET_AFTER`], forget the
/// count under a new epoch and wake every sleeper (see the lock's
/// module docs).
pub(super) fn tally(lock: &Lock, woken: u32) {
    let s = &lock.sleepers;
    let mut cur = s.load(Ordering::Relaxed);
    loop {
        let next = if woken > 0 {
            cur & !TALLY_MASK
        } else if sleeper_count(cur) == 0 {
            return;
        } else if (cur & TALLY_MASK) >> TALLY_SHIFT >= RESET_AFTER - 1 {
            ((cur >> EPOCH_SHIFT).wrapping_add(1)) << EPOCH_SHIFT
        } else {
            cur + TALLY_ONE
        };
        if next == cur {
            return;
        }
        // RECOVERY: the tally is a hint; the CAS only keeps its bits from
        // spilling into the epoch. A reset forgets live sleepers too: the
        // wake below (or their capped sleep) makes them count again.
        match s.compare_exchange(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) if woken == 0 && next >> EPOCH_SHIFT != cur >> EPOCH_SHIFT => {
                futex::wake(&lock.word, u32::MAX);
                return;
            }
            Ok(_) => return,
            Err(now) => cur = now,
        }
    }
}
