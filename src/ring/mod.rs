//! Bounded MPMC ring of integers in shared memory, built so that a process
//! killed at any instruction cannot wedge it, with one locked instruction
//! per operation and per batch (format 7).
//!
//! # Slots
//!
//! Every slot carries a sequence number. Slot `i` serves the positions
//! `p` with `p & (capacity - 1) == i`; the slot of position `p` is
//!
//! * free for the producer of `p` when `seq == p`,
//! * holding that producer's value when `seq == p + 1`,
//! * taken (or given up by a repair) when `seq == p + capacity`, which is
//!   "free" for the producer of the next lap, `p + capacity`.
//!
//! A slot **stores `seq - i`**, its sequence less its own index (since
//! format 5). The stored value for position `p` is then
//! `p & !(capacity - 1)`, the position of its lap's slot 0, plus 0, 1 or
//! `capacity` (`Ring::lap` computes it). Slot `i` starts free for
//! position `i`, which stores 0, so zeroed memory is an empty ring: a new
//! queue writes its header and nothing else, and costs resident memory
//! only for the slots it has used. Differences between a stored value and
//! a position's are the same as between the sequence and the position,
//! so everything below reads as if slots stored `seq`.
//!
//! # Counters are authoritative
//!
//! This is Dmitry Vyukov's bounded MPMC queue (as crossbeam's
//! `ArrayQueue`), with runs: `tail` counts the positions producers have
//! reserved, `head` the positions consumers have claimed, both only ever
//! moved forward by a CAS. A push of a run of `m` values (a single push
//! is a run of 1):
//!
//! 1. loads `tail == t` and checks that the slots of `t .. t + m` are
//!    free for those positions (Acquire loads of their sequences);
//! 2. writes its intent record: producer range `[t, t + m)` (see
//!    "Repair");
//! 3. CASes `tail` from `t` to `t + m` (the one locked instruction);
//! 4. stores each value and then, with a Release store, the slot's
//!    sequence `p + 1`. An Int64 slot is two plain stores (value word,
//!    then sequence word), an Int32 or Int16 slot one.
//!
//! A pop of up to `m` items loads `head == h`, checks that the slots of
//! `h .. h + m` are published, writes its consumer range `[h, h + m)`,
//! CASes `head` from `h` to `h + m`, reads the values and frees each slot
//! with a Release store of `p + capacity`. Whoever wins a counter CAS
//! owns its positions: nobody else writes their slots, so the stores need
//! no CAS. The check before the CAS is exact because the counters never
//! go back: if `tail` is still `t` at the CAS, no position from `t` on
//! is reserved, and a free slot stays free until its reserver publishes.
//!
//! A producer that finds the slot at `tail` still holding last lap's item
//! reads `head`: at most `t - capacity`, the ring is full
//! ([`Miss::Settled`]); past it, a consumer has claimed that item and
//! not yet freed the slot ([`Miss::InFlight`]: wait, or repair). A
//! consumer that finds the slot at `head` unpublished reads `tail`: not
//! past `h`, the ring is empty; past it, a producer has reserved `h` and
//! not yet published it ([`Miss::InFlight`]).
//!
//! The counters are exact, so the sizes are too: `tail - head` items are
//! in the ring (or on their way in or out), [`Ring::pushed`] is `tail`,
//! [`Ring::popped`] is `head`; given-up positions are counted apart.
//!
//! # Repair
//!
//! A process killed between its counter CAS and its last slot store leaves
//! positions that are owned but never finished: a producer's hole (its
//! consumers wait at it) or a consumer's unfreed slots (the producers of
//! the next lap wait at them). These are repaired only when their owner
//! is **dead**, never by time: that is what makes the plain stores safe,
//! as a live owner's store can never land on a slot that was repaired
//! under it.
//!
//! Owners are known from the intent records (`records.rs`): a table of
//! records in the mapping, one per participant (a thread of a process,
//! for one handle), each on its own cache line, holding the owner's tag
//! (`pid << 32 | start time`, as the lock's) and its current producer and
//! consumer ranges. A participant writes its range before its counter CAS
//! (whose Release publishes it); a repairer reads the counter that shows
//! the position taken (Acquire), then the records, so the owner's record
//! is visible to it. A record goes on covering its last range after the
//! operation (harmless: those positions are finished); after a failed CAS
//! it is rewritten or emptied, so a live record only ever covers positions
//! its owner took or is about to try for.
//!
//! A consumer at position `p` that finds `p` reserved but unpublished
//! spins briefly, then asks whether a record of a *live* owner (the lock's
//! test: `kill(pid, 0)`, `/proc/<pid>/stat` state and start time; a stat
//! it cannot read, as without procfs or under `hidepid`, is alive unless
//! `kill` then says ESRCH) covers `p` on the producer side. If one does, it reports [`Miss::InFlight`]
//! (waiters wait). If none does, the reserver is dead: the consumer claims
//! `p` like an item (its own record, a `head` CAS) and gives it up with a
//! CAS of the sequence from `p` to `p + capacity`, counted in `recoveries`
//! and `skipped` (a given-up position holds no item: it counts neither as
//! a push nor as a pop). Symmetrically, a producer that finds last lap's
//! item claimed but not freed, and no live consumer record covering it,
//! frees the slot by CAS (the item went with the dead consumer, as any
//! item a process pops and then dies with; counted in `recoveries`). That
//! CAS also accepts a slot still unpublished (a repairer that died between
//! its `head` CAS and its give-up), and then counts it as skipped.
//!
//! A stopped (SIGSTOP) or merely slow owner is alive: its positions wait
//! for it, as a held lock would. A record written by a process stopped
//! between its record and its CAS covers positions it never got; a dead
//! reserver's hole under such a record waits for that process too. A
//! record whose tag changes while a repairer reads it (a claim of a dead
//! owner's record) counts as live: the repairer asks again later. All
//! participants must share one pid namespace (and, to repair at all, see
//! each other in `/proc`). A repair that frees a slot wakes a producer
//! (`RepairSource::freed_slot`): a producer asleep on a ring full of holes
//! is woken by no pop.
//!
//! Claiming records, the overflow record for when the table is full of
//! live owners, and fork are in `records.rs` (the shared table) and
//! `intq/record_cache.rs` (each thread's cache of its records).
//!
//! # Waiters
//!
//! The waiters of `wait.rs` need the classic pairing: a producer's publish
//! followed by its read of the consumers' waiter count, against a
//! sleeper's announcement followed by its re-check of the ring. A plain
//! Release store does not order a later load, and a fence per operation
//! would cost about as much as the CAS saved. So the barrier is the
//! lock's asymmetric one (`lock/barrier.rs`): after its stores the
//! finishing side needs only a compiler barrier (a real fence in a process
//! not registered for `membarrier`), and a sleeper, after announcing
//! itself, calls `membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)`, which
//! runs a full barrier on every CPU running a registered process. Either
//! the publisher's read of the count comes after that barrier on its CPU
//! and sees the announcement, or its store came before it and the
//! sleeper's re-check sees the slot. A sleeper whose `membarrier` failed
//! sleeps at most [`FALLBACK_NS`](crate::lock::FALLBACK_NS) at a time.
//!
//! # Narrow slots
//!
//! Int32 and Int16 slots keep a 32-bit sequence: `seq - pos` is taken in
//! wrapping 32-bit arithmetic and read as signed, which is exact while the
//! capacity stays below 2^31 (capped at 2^30). The counters are 64-bit
//! and every check is followed by a CAS of one, so a process stopped
//! across 2^32 operations fails its CAS instead of misreading a slot. The
//! one slot CAS that follows no counter CAS, a producer's freeing of a
//! dead consumer's slot, re-reads `tail` just before it (`repair.rs`);
//! only a producer stopped for 2^32 operations between that load and its
//! CAS, a few instructions, could still free a later lap's item.
//!
//! # Hostile memory
//!
//! Every index is masked and every loop bounded ([`MAX_TRIES`]): garbage
//! counters, sequences or records make a call report full or empty (or
//! in flight), never read out of bounds or spin for ever.
//!
//! The waiting side (futex sleep when full or empty) lives in `wait.rs`
//! and `intq/`; the ring only offers non-blocking operations plus what
//! the waiters need.

mod batch;
#[cfg(test)]
pub(crate) mod fixture;
mod lease_pop;
pub mod records;
mod repair;
mod slot;
#[cfg(all(test, not(loom)))]
mod tests;

pub use records::Record;
pub use repair::{Repair, RepairSource};
#[cfg(test)]
pub(crate) use slot::heap_slots;
pub use slot::{Slot16, Slot32, Slot64, SlotOps};

use crate::sync::{AtomicU64, Ordering};
use records::Side;

/// Attempts after which a call gives up on a ring whose shared state makes
/// no sense (hostile or corrupted memory), or that peers keep moving
/// under it: far more than any real contention causes.
pub const MAX_TRIES: u32 = 1 << 16;

/// One element type with its slot layout. Implemented for `i64`, `i32`,
/// `i16`; sealed.
///
/// Name it to write code for all three integer queues (it is exported at
/// the crate root).
///
/// # Examples
///
/// ```
/// use data_queue_shared::{Element, IntQueue};
/// fn drain<T: Element>(q: &IntQueue<T>) -> Vec<i64> {
///     std::iter::from_fn(|| q.pop()).map(T::to_i64).collect()
/// }
/// let q = IntQueue::<i16>::anonymous(4)?;
/// q.push(i16::from_i64(70_000)); // truncates as a C cast: 4464
/// q.push(-1);
/// assert_eq!(drain(&q), [4464, -1]);
/// # Ok::<(), data_queue_shared::Error>(())
/// ```
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The `#[repr(C)]` slot holding one value and its sequence number.
    type Slot: SlotOps<Self>;
    /// The header variant of this element.
    const VARIANT: crate::layout::Variant;
    /// C-cast conversion from i64 (truncating, as C would).
    fn from_i64(v: i64) -> Self;
    /// Widening conversion to i64.
    fn to_i64(self) -> i64;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i64 {}
    impl Sealed for i32 {}
    impl Sealed for i16 {}
}

pub use crate::wait::Miss;

/// Test hook: where a process kills itself inside the ring (see
/// `DQS_TEST_KILL_POINT` in the test-point module).
pub use crate::testpoint::Hook;

/// The ring: views of the `head` and `tail` counters, the slot array and
/// this participant's intent record.
///
/// The counters, slots and records usually live in a shared mapping; the
/// ring only borrows them. `Copy`, so that the cold paths take it by value:
/// a `&self` call would make the fast paths lay the ring out in memory
/// before their first load.
pub struct Ring<'a, T: Element> {
    head: &'a AtomicU64,
    tail: &'a AtomicU64,
    slots: &'a [T::Slot],
    mask: u64,
    rec: Option<&'a Record>,
    repair: Option<&'a dyn RepairSource>,
    hook: Hook,
}

impl<T: Element> Clone for Ring<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Element> Copy for Ring<'_, T> {}

/// What a consumer does after finding its position not published.
pub(super) enum Step {
    /// Look again (the ring moved, or a hole was repaired).
    Retry,
    /// Report this.
    Miss(Miss),
    /// A repairer's claim found the position published after all: it owns
    /// this item (position) now and must take it.
    Claimed(u64),
}

impl<'a, T: Element> Ring<'a, T> {
    /// A ring over `slots` (whose length is a power of two), with no
    /// intent record and no repair (a stuck position stays
    /// [`Miss::InFlight`]).
    pub fn new(head: &'a AtomicU64, tail: &'a AtomicU64, slots: &'a [T::Slot]) -> Self {
        debug_assert!(slots.len().is_power_of_two());
        Ring {
            head,
            tail,
            slots,
            mask: slots.len() as u64 - 1,
            rec: None,
            repair: None,
            hook: Hook::None,
        }
    }

    /// The same ring, announcing this participant's ranges in `rec`
    /// (which no other thread may use meanwhile).
    #[inline(always)]
    pub fn with_record(mut self, rec: &'a Record) -> Self {
        self.rec = Some(rec);
        self
    }

    /// The same ring, repairing dead owners' positions as `repair` says.
    #[inline(always)]
    pub fn with_repair(mut self, repair: &'a dyn RepairSource) -> Self {
        self.repair = Some(repair);
        self
    }

    /// The same ring with a test kill hook.
    #[inline(always)]
    pub fn with_hook(mut self, hook: Hook) -> Self {
        self.hook = hook;
        self
    }

    /// Set both counters to 0. Create only: the slots need nothing, zeroed
    /// memory is every slot free for lap 0 (see "Slots" in the module
    /// docs).
    pub fn init(&self) {
        self.head.store(0, Ordering::Relaxed);
        self.tail.store(0, Ordering::Relaxed);
    }

    /// What the slot of `pos` stores when free for it: `pos` less the
    /// slot's index (see "Slots" in the module docs). Crate-visible, as
    /// `slot` and `published`, for the loom models (src/models/).
    #[inline(always)]
    pub(crate) fn lap(&self, pos: u64) -> u64 {
        pos.wrapping_sub(pos & self.mask)
    }

    /// The slot of position `pos`.
    #[inline(always)]
    pub(crate) fn slot(&self, pos: u64) -> &T::Slot {
        // SAFETY: `pos & mask` is below `slots.len()` because the length is
        // `mask + 1`; masking makes any counter value from shared memory safe.
        unsafe { self.slots.get_unchecked((pos & self.mask) as usize) }
    }

    /// Capacity (slot count).
    #[inline]
    pub fn capacity(&self) -> u64 {
        self.mask + 1
    }

    #[inline(always)]
    fn hit(&self, here: Hook) {
        // `here` is never `None`: one compare.
        if self.hook == here {
            crate::testpoint::ring_hook_reached();
        }
    }

    /// Write this participant's range on `side` (see "Repair").
    #[inline(always)]
    fn note(&self, side: Side, lo: u64, n: u64) {
        if let Some(r) = self.rec {
            r.note(side, lo, n);
        }
    }

    /// Empty this participant's range on `side` (leaving after a failed
    /// CAS).
    #[inline(always)]
    fn unnote(&self, side: Side) {
        if let Some(r) = self.rec {
            r.clear(side);
        }
    }

    /// Whether position `p`'s slot is free for its producer.
    #[inline(always)]
    fn free_for(&self, p: u64) -> bool {
        let s = self.slot(p);
        s.diff(s.seq(), self.lap(p)) == 0
    }

    /// Whether position `p`'s slot holds its producer's value.
    #[inline(always)]
    pub(crate) fn published(&self, p: u64) -> bool {
        let s = self.slot(p);
        s.diff(s.seq(), self.lap(p).wrapping_add(1)) == 0
    }

    /// Push `v` if there is room.
    ///
    /// # Errors
    /// [`Miss::Settled`] when the ring is full (or its shared state makes
    /// no sense); [`Miss::InFlight`] when the slot still waits for a live
    /// consumer to free it (retry soon).
    #[inline]
    pub fn try_push(&self, v: T) -> Result<(), Miss> {
        if self.push_fast(v) {
            return Ok(());
        }
        self.push_slow(v)
    }

    /// [`try_push`](Self::try_push)'s first attempt alone: true when it
    /// pushed; false means nothing was done and the caller goes on with
    /// [`push_slow`](Self::push_slow), which may rebuild the ring (so a
    /// caller whose handle can rebuild it never has to keep the ring in
    /// memory across the fast path).
    #[inline(always)]
    pub fn push_fast(&self, v: T) -> bool {
        let t = self.tail.load(Ordering::Relaxed);
        let slot = self.slot(t);
        let lap = self.lap(t);
        // A ring with a kill hook takes the slow path, which has them all.
        if slot.diff(slot.seq(), lap) == 0 && self.hook == Hook::None {
            self.note(Side::Push, t, 1);
            // SYNC POINT: the reservation (AcqRel: publishes the record to
            // repairers that read `tail`).
            if self
                .tail
                .compare_exchange(t, t.wrapping_add(1), Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                slot.put(lap, v);
                return true;
            }
        }
        false
    }

    /// The rest of [`try_push`](Self::try_push) after
    /// [`push_fast`](Self::push_fast) failed.
    #[cold]
    #[inline(never)]
    pub fn push_slow(self, v: T) -> Result<(), Miss> {
        let (t, _) = self.reserve(1)?;
        self.slot(t).put(self.lap(t), v);
        Ok(())
    }

    /// Reserve a run of 1 to `want` (at most the capacity) positions
    /// whose slots are free: `(first, count)`. The record covers the run
    /// when this returns `Ok`, and nothing it did not take otherwise.
    pub(super) fn reserve(&self, want: u64) -> Result<(u64, u64), Miss> {
        let cap = self.capacity();
        let want = want.clamp(1, cap);
        for _ in 0..MAX_TRIES {
            let t = self.tail.load(Ordering::Relaxed);
            let slot = self.slot(t);
            let d = slot.diff(slot.seq(), self.lap(t));
            if d == 0 {
                let mut m = 1u64;
                while m < want && self.free_for(t.wrapping_add(m)) {
                    m += 1;
                }
                self.note(Side::Push, t, m);
                self.hit(Hook::PushRecorded);
                // SYNC POINT: the reservation, as in `try_push`.
                if self
                    .tail
                    .compare_exchange(t, t.wrapping_add(m), Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    self.hit(Hook::PushClaimed);
                    return Ok((t, m));
                }
                continue;
            }
            if d > 0 {
                // Published or taken for this lap: `t` is stale.
                continue;
            }
            // Last lap's position `t - cap` is not finished.
            let h = self.head.load(Ordering::Acquire);
            let used = t.wrapping_sub(h) as i64;
            if used < 0 {
                continue;
            }
            if used >= cap as i64 {
                self.unnote(Side::Push);
                return Err(Miss::Settled);
            }
            // Claimed by a consumer that has not freed it yet: the slot
            // holds last lap's item, or (a dead repairer's) no item.
            if d != 1 - cap as i64 && d != -(cap as i64) {
                self.unnote(Side::Push);
                return Err(Miss::Settled);
            }
            if let Err(m) = self.unfreed(t) {
                self.unnote(Side::Push);
                return Err(m);
            }
        }
        self.unnote(Side::Push);
        Err(Miss::Settled)
    }

    /// Pop the oldest value if there is one.
    ///
    /// # Errors
    /// [`Miss::Settled`] when the ring is empty (or its shared state makes
    /// no sense); [`Miss::InFlight`] when the next position is reserved by
    /// a live producer that has not published it yet (retry soon).
    #[inline]
    pub fn try_pop(&self) -> Result<T, Miss> {
        match self.pop_fast() {
            Some(v) => Ok(v),
            None => self.pop_slow(),
        }
    }

    /// [`try_pop`](Self::try_pop)'s first attempt alone (see
    /// [`push_fast`](Self::push_fast)): `None` means nothing was done.
    #[inline(always)]
    pub fn pop_fast(&self) -> Option<T> {
        let h = self.head.load(Ordering::Relaxed);
        let slot = self.slot(h);
        let lap = self.lap(h);
        if slot.diff(slot.seq(), lap.wrapping_add(1)) == 0 && self.hook == Hook::None {
            self.note(Side::Pop, h, 1);
            // SYNC POINT: the claim (AcqRel, as for `tail`).
            if self
                .head
                .compare_exchange(h, h.wrapping_add(1), Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                let v = slot.get();
                slot.free(lap.wrapping_add(self.capacity()), v);
                return Some(v);
            }
        }
        None
    }

    /// The rest of [`try_pop`](Self::try_pop) after
    /// [`pop_fast`](Self::pop_fast) failed.
    #[cold]
    #[inline(never)]
    pub fn pop_slow(self) -> Result<T, Miss> {
        let (h, _) = self.claim(1)?;
        let slot = self.slot(h);
        let v = slot.get();
        slot.free(self.lap(h).wrapping_add(self.capacity()), v);
        Ok(v)
    }

    /// Claim a run of 1 to `want` published positions: `(first, count)`.
    /// The record covers the run when this returns `Ok`.
    pub(super) fn claim(&self, want: u64) -> Result<(u64, u64), Miss> {
        let want = want.clamp(1, self.capacity());
        for _ in 0..MAX_TRIES {
            let h = self.head.load(Ordering::Relaxed);
            let slot = self.slot(h);
            let d = slot.diff(slot.seq(), self.lap(h).wrapping_add(1));
            if d == 0 {
                let mut m = 1u64;
                while m < want && self.published(h.wrapping_add(m)) {
                    m += 1;
                }
                self.note(Side::Pop, h, m);
                self.hit(Hook::PopRecorded);
                // SYNC POINT: the claim, as in `try_pop`.
                if self
                    .head
                    .compare_exchange(h, h.wrapping_add(m), Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    self.hit(Hook::PopClaimed);
                    return Ok((h, m));
                }
                continue;
            }
            match self.pop_miss(h, d) {
                Step::Retry => {}
                Step::Miss(m) => {
                    self.unnote(Side::Pop);
                    return Err(m);
                }
                Step::Claimed(p) => return Ok((p, 1)),
            }
        }
        self.unnote(Side::Pop);
        Err(Miss::Settled)
    }

    /// A consumer found position `h` not published (`d`: its slot's
    /// distance from published): empty, stale, or a reservation in flight.
    pub(super) fn pop_miss(&self, h: u64, d: i64) -> Step {
        if d > 0 {
            // Taken for this lap already: `h` is stale.
            return Step::Retry;
        }
        let t = self.tail.load(Ordering::Acquire);
        let ahead = t.wrapping_sub(h) as i64;
        if ahead <= 0 {
            return Step::Miss(Miss::Settled);
        }
        if ahead > self.capacity() as i64 {
            // `h` is stale (or the counters are garbage: bounded retries).
            return Step::Retry;
        }
        if d != -1 {
            // Not free-for-`h` either: only scribbled memory does that.
            return Step::Miss(Miss::Settled);
        }
        self.hole(h)
    }

    /// Best-effort look at the oldest value without taking it.
    pub fn peek(&self) -> Option<T> {
        for _ in 0..MAX_TRIES {
            let h = self.head.load(Ordering::Acquire);
            let slot = self.slot(h);
            let seq = slot.seq();
            let d = slot.diff(seq, self.lap(h).wrapping_add(1));
            if d > 0 {
                continue;
            }
            if d < 0 {
                return None;
            }
            let v = slot.get();
            // The value is the one published for `h` only if nobody took
            // it (and a producer refilled the slot) meanwhile. The fence
            // keeps the (Relaxed) value load before the re-checks, as a
            // seqlock reader's must be. (In the language's model the
            // pairing also wants a release fence before a producer's
            // value store; not on the push path: peek is best-effort.)
            crate::sync::fence(Ordering::Acquire);
            if slot.seq() == seq && self.head.load(Ordering::Acquire) == h {
                return Some(v);
            }
        }
        None
    }

    /// Items in the ring (reserved or claimed ones included), clamped to
    /// `0..=capacity`.
    pub fn len(&self) -> u64 {
        let h = self.head.load(Ordering::Acquire);
        let t = self.tail.load(Ordering::Acquire);
        (t.wrapping_sub(h) as i64).clamp(0, self.capacity() as i64) as u64
    }

    /// Whether the ring is empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Positions reserved so far (pushes plus given-up positions): `tail`.
    pub fn pushed(&self) -> u64 {
        self.tail.load(Ordering::Acquire)
    }

    /// Positions claimed so far (pops plus given-up positions): `head`.
    pub fn popped(&self) -> u64 {
        self.head.load(Ordering::Acquire)
    }
}
