//! Bounded MPMC ring of integers in shared memory, built so that a process
//! killed at any instruction cannot wedge it.
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
//! A slot **stores `seq - i`**, its sequence less its own index (format
//! 5; earlier formats stored `seq`). The stored value for position `p` is
//! then `p & !(capacity - 1)`, the position of its lap's slot 0, plus 0,
//! 1 or `capacity` (`Ring::lap` computes it; every comparison
//! with and every write of a sequence goes through it). The point is
//! creation: slot `i` starts free for position `i`, which stores 0, so
//! zeroed memory is an empty ring. New anonymous, memfd and file pages
//! are zero, so a new queue writes its header and nothing else (a 2^20
//! slot Int queue: no 16 MiB initialisation pass), and a queue costs
//! resident memory only for the slots it has used. Differences between a
//! stored value and a position's are the same as between the sequence
//! and the position, so everything below reads as if slots stored `seq`.
//!
//! This is the slot protocol of Dmitry Vyukov's bounded MPMC queue (as in
//! crossbeam's `ArrayQueue`), with one change that makes it crash-safe: a
//! position is claimed on the **slot**, not on a counter. A producer
//! publishes with one compare-and-swap of the whole slot from
//! `(seq = p, old value)` to `(seq = p + 1, value)` (a 16-byte CAS for
//! Int64 slots, an 8-byte CAS of the one word of Int32 and Int16 slots); a
//! consumer takes with one CAS of the sequence from `p + 1` to
//! `p + capacity`, after reading the value it guards. So no state exists
//! in which a position is owned by a process but not yet filled or not yet
//! released: a process killed anywhere leaves every slot either free,
//! published or taken, and everybody else goes on.
//!
//! # Counters are hints
//!
//! `head` and `tail` only say where to start looking. After a successful
//! CAS the winner stores `p + 1` into the counter (a plain store); anybody
//! who finds the slot at the counter already published (producers) or
//! taken (consumers) steps forward. A process killed between its slot CAS
//! and its counter store leaves the counter one behind, which the next
//! caller steps over. A process *preempted* there moves the counter back
//! when it runs again, by as far as its peers got meanwhile: millions of
//! positions on a busy ring. So a walk that has stepped a few times
//! leaps: a doubling search, then a bisection, finds the end of the run of
//! finished slots in about `2 log2(lag)` looks (`Ring::leap`), and
//! writes it back. The walk only ever passes slots that were finished for
//! their position, so positions are still filled and emptied in order:
//! FIFO holds. [`Ring::pushed`] and [`Ring::popped`] settle the hint by
//! the same walk. (On narrow slots a counter that lags by more than 2^31
//! positions reads as ahead of the ring; the slot it points at shows that,
//! and the walk starts again from the slot's own position: see
//! `Ring::rebase`.)
//!
//! # Batches
//!
//! [`Ring::try_push_batch`] reserves a run with one CAS of `tail` (the
//! lever of the LCRQ-style deques: one contended step for N items), after
//! checking that the run's slots are free, then publishes each slot with
//! its own, uncontended, CAS. That reservation is the one state a killed
//! process can leave behind: reserved positions that will never be
//! published. A consumer that finds the position it needs reserved but
//! unpublished ([`Miss::InFlight`]) waits; when the same position has been
//! stuck for [`REPAIR_AFTER_NS`] it gives the position up with a CAS of the
//! sequence from `p` to `p + capacity` (counted in `recoveries`), and hands
//! the clock on to `p + 1`: the rest of a dead run has been stuck as long,
//! so each further unpublished position is given up at once rather than
//! after another wait (a live producer's fresh reservation right behind a
//! dead run may be given up too; it then places its items again). Because
//! publishing is a CAS from `seq == p`, a producer that was only slow can
//! never overwrite a given-up slot: its CAS fails and it publishes that
//! item at its next reserved position, or in a new run, so nothing is lost
//! or duplicated and each producer's items keep their order. The bound is
//! therefore a speed trade-off, never a correctness one: 50 ms after
//! consumers first find a dead batch producer's hole, they pass all of it.
//!
//! Batch pops take slot by slot (one CAS per item, no counter
//! reservation): a consumer that reserved a run with a counter step and
//! died would strand items no one could hand out again without risking a
//! duplicate.
//!
//! # Narrow slots
//!
//! Int32 and Int16 slots keep a 32-bit sequence: `seq - pos` is taken in
//! wrapping 32-bit arithmetic and read as signed, which is exact while the
//! capacity stays below 2^31 (capped at 2^30). A producer stopped for
//! exactly a multiple of 2^32 operations between reading a slot and its
//! CAS could mistake a later lap's free slot for its own; it would still
//! publish into a free slot, only out of turn.
//!
//! The waiting side (futex sleep when full or empty) lives in `wait.rs`
//! and `intq.rs`; the ring only offers non-blocking operations plus what
//! the waiters need.

mod batch;
#[cfg(test)]
pub(crate) mod fixture;
#[cfg(all(test, loom))]
mod loom;
mod noted;
mod repair;
mod slot;
#[cfg(all(test, not(loom)))]
mod tests;

pub use repair::{Repair, RepairSource};
#[cfg(test)]
pub(crate) use slot::heap_slots;
pub use slot::{Slot16, Slot32, Slot64, SlotOps};

use crate::sync::{spin_hint, AtomicU64, Ordering};

/// A reserved position stuck unpublished this long (same position, seen
/// by consumers) is given up. See the module docs.
pub const REPAIR_AFTER_NS: u64 = 50_000_000;

/// Walk steps after which a call gives up on a ring whose shared state
/// makes no sense (hostile or corrupted memory): far more than any number
/// of real concurrent peers can cause.
const MAX_WALK: u32 = 1 << 16;

/// Walk steps over done positions after which a walk stops stepping one
/// position at a time and searches for the end of the done run
/// ([`Ring::leap`]). Real contention rarely passes a few positions; a
/// hint written back late by a preempted process can lag by millions.
/// Loom models leap at once, to check the search under every schedule.
const LEAP_AFTER: u32 = if cfg!(loom) { 0 } else { 16 };

/// Leaps one walk may take (each about a hundred looks at most; one finds
/// a real frontier, a few more follow one that peers move meanwhile);
/// later steps go one at a time again, so hostile memory that makes every
/// position look done costs a walk little more than [`MAX_WALK`] looks.
const MAX_LEAPS: u32 = 8;

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
    /// Whether this CPU can run the slot's atomic operations (the Int64
    /// slot needs a 16-byte compare-and-swap).
    fn supported() -> bool {
        true
    }
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

/// The ring: views of the head and tail hints and the slot array.
///
/// The counters and slots usually live in a shared mapping; the ring only
/// borrows them.
pub struct Ring<'a, T: Element> {
    head: &'a AtomicU64,
    tail: &'a AtomicU64,
    slots: &'a [T::Slot],
    mask: u64,
    repair: Option<&'a dyn RepairSource>,
    hook: Hook,
}

/// [`Ring`]'s fields but the mask (see `Ring::parts`).
type Parts<'a, T> = (
    &'a AtomicU64,
    &'a AtomicU64,
    &'a [<T as Element>::Slot],
    Option<&'a dyn RepairSource>,
    Hook,
);

impl<'a, T: Element> Ring<'a, T> {
    /// A ring over `slots` (whose length is a power of two), without
    /// repair of stuck reservations (a stuck position stays
    /// [`Miss::InFlight`]).
    pub fn new(head: &'a AtomicU64, tail: &'a AtomicU64, slots: &'a [T::Slot]) -> Self {
        debug_assert!(slots.len().is_power_of_two());
        Ring {
            head,
            tail,
            slots,
            mask: slots.len() as u64 - 1,
            repair: None,
            hook: Hook::None,
        }
    }

    /// The same ring, giving up stuck reservations as `repair` says.
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
    /// docs), so a new queue touches no slot page.
    pub fn init(&self) {
        self.head.store(0, Ordering::Relaxed);
        self.tail.store(0, Ordering::Relaxed);
    }

    /// What the slot of `pos` stores for it: `pos` less the slot's index,
    /// the position of the lap's slot 0 (see "Slots" in the module docs).
    /// Compare and set slot sequences against this, never against `pos`.
    #[inline(always)]
    fn lap(&self, pos: u64) -> u64 {
        // As `pos & !mask`, but from the index the slot lookup computes
        // anyway: no second mask to keep in a register (9 -> 5 more
        // instructions per push+pop pair than format 4, callgrind).
        pos.wrapping_sub(pos & self.mask)
    }

    #[inline(always)]
    fn slot(&self, pos: u64) -> &T::Slot {
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
            crate::testpoint::kill_self();
        }
    }

    /// Where to look after finding `pos` already done (published for a
    /// producer, `lag == 0`; taken for a consumer, `lag == 1`) on the
    /// `walked`th step: the next position, or, for [`MAX_LEAPS`] steps
    /// once the walk is long, the end of the done run found by
    /// [`leap`](Self::leap). (Not the hint, even if it moved ahead: a hint
    /// can come from another 2^32 lap of a narrow ring, see `rebase`.)
    #[inline(always)]
    fn step(&self, hint: &AtomicU64, pos: u64, lag: u64, walked: u32) -> u64 {
        if walked.wrapping_sub(LEAP_AFTER) < MAX_LEAPS {
            Self::leap(self.slots, hint, pos, lag)
        } else {
            pos.wrapping_add(1)
        }
    }

    /// The first position after `pos` (done) that is not done, found with
    /// a doubling search and then a bisection instead of a step at a time.
    ///
    /// A hint can lag far behind: a process preempted between its slot
    /// CAS and its plain hint store writes back a position peers passed
    /// long ago. Taken positions form a prefix (a consumer never passes a
    /// published slot), and so do published ones apart from reserved
    /// slots of batches in flight, which a producer may pass: their
    /// reserver fills them or a consumer gives them up. So `done` is true
    /// below the frontier and false from it, and the search finds it in
    /// about `2 log2(distance)` looks. The frontier only moves forward, so
    /// the answer is never past the real frontier: a consumer cannot skip
    /// an item. The answer is written back to the hint (if still ahead of
    /// it) for the peers. Strides stop doubling at the slot's
    /// [`STRIDE`](SlotOps::STRIDE).
    ///
    /// Takes the slots, not `self`, so the fast paths that may call it
    /// never have to lay the ring out in memory (see `unpublished_at`).
    #[cold]
    #[inline(never)]
    fn leap(slots: &[T::Slot], hint: &AtomicU64, pos: u64, lag: u64) -> u64 {
        let mask = slots.len() as u64 - 1;
        let slot = |q: u64| &slots[(q & mask) as usize];
        // Whether position `q` is done: its slot has moved past `q + lag`.
        let done = |q: u64| {
            let s = slot(q);
            s.diff(s.seq(), (q & !mask).wrapping_add(lag)) > 0
        };
        let mut lo = pos;
        let mut gap = 1u64;
        let mut hi = None;
        // 64 doublings and capped strides: far beyond any real lag, and a
        // bound for hostile memory where every position looks done.
        for _ in 0..64 {
            let q = lo.wrapping_add(gap);
            if !done(q) {
                hi = Some(q);
                break;
            }
            lo = q;
            gap = (gap * 2).min(T::Slot::STRIDE);
        }
        let Some(mut hi) = hi else {
            return lo.wrapping_add(1);
        };
        // Invariant: `lo` done, `hi` not; `hi - lo` fits the cap.
        while hi.wrapping_sub(lo) > 1 {
            let mid = lo.wrapping_add(hi.wrapping_sub(lo) / 2);
            if done(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let h = hint.load(Ordering::Relaxed);
        if slot(h).diff(hi, h) > 0 {
            hint.store(hi, Ordering::Relaxed);
        }
        hi
    }

    /// Whether a slot found `d` from the position of one side (`lag` as
    /// in [`step`](Self::step)) is further behind it than any real
    /// schedule leaves one: a consumer's slot is always free for its
    /// position or later (`d >= -1`), a producer's holds at least last
    /// lap's position (`d >= -capacity`). Then [`rebase`](Self::rebase).
    #[inline(always)]
    fn behind(&self, d: i64, lag: u64) -> bool {
        d < if lag == 0 {
            -(self.capacity() as i64)
        } else {
            -1
        }
    }

    /// Where to look again when position `pos` of one side found its slot
    /// `d` [`behind`](Self::behind) it.
    ///
    /// Only a hint from another lap of the slots' sequences does that
    /// (or scribbled memory). Positions are 64 bits, the sequences of
    /// Int32 and Int16 slots 32: a process stopped between its slot CAS
    /// and its hint store for more than 2^31 operations writes back a
    /// position that the sequences read as ahead of the ring. The slot
    /// itself says where the ring is: its sequence is within a capacity
    /// of both frontiers, so a capacity before it is never past either,
    /// and the walk (leaping) goes on from there. A narrow ring's
    /// positions then continue on the hint's 2^32 lap, which the slots
    /// cannot tell from the true one: every comparison of positions is
    /// made in the slots' width.
    ///
    /// `None` once the walk has `walked` past its leaping part: a real
    /// hint needs one new start, early; later ones only come from
    /// scribbled memory, where going on would walk to [`MAX_WALK`].
    #[inline(always)]
    fn rebase(&self, pos: u64, lag: u64, d: i64, walked: u32) -> Option<u64> {
        (walked < LEAP_AFTER + MAX_LEAPS).then(|| {
            pos.wrapping_add(lag)
                .wrapping_add_signed(d)
                .wrapping_sub(self.capacity())
        })
    }

    /// Push `v` if there is room.
    ///
    /// # Errors
    /// [`Miss::Settled`] when the ring is full (or its shared state makes
    /// no sense: a walk longer than any real contention gives up). A push
    /// never returns [`Miss::InFlight`].
    #[inline]
    pub fn try_push(&self, v: T) -> Result<(), Miss> {
        let pos = self.tail.load(Ordering::Relaxed);
        let slot = self.slot(pos);
        let lap = self.lap(pos);
        if slot.diff(slot.seq(), lap) == 0 && slot.publish(lap, v) {
            self.hit(Hook::PushClaimed);
            self.tail.store(pos.wrapping_add(1), Ordering::Relaxed);
            return Ok(());
        }
        Self::push_walk(self.parts(), pos, v)
    }

    /// The ring's fields, for the cold walks: passed as arguments, they
    /// are only gathered in the cold branch, where a `&self` would make
    /// the fast path lay the whole ring out in memory first (as would a
    /// copy of it).
    #[inline(always)]
    fn parts(&self) -> Parts<'a, T> {
        (self.head, self.tail, self.slots, self.repair, self.hook)
    }

    /// A ring from [`parts`](Self::parts).
    #[inline(always)]
    fn from_parts((head, tail, slots, repair, hook): Parts<'a, T>) -> Self {
        Ring {
            head,
            tail,
            slots,
            mask: slots.len() as u64 - 1,
            repair,
            hook,
        }
    }

    /// The rest of [`try_push`](Self::try_push) when its first try at
    /// `pos` failed: the walk.
    #[cold]
    #[inline(never)]
    fn push_walk(parts: Parts<'a, T>, mut pos: u64, v: T) -> Result<(), Miss> {
        let r = Self::from_parts(parts);
        let mut walked = 0u32;
        loop {
            let slot = r.slot(pos);
            let lap = r.lap(pos);
            let d = slot.diff(slot.seq(), lap);
            if d == 0 {
                if slot.publish(lap, v) {
                    r.hit(Hook::PushClaimed);
                    r.tail.store(pos.wrapping_add(1), Ordering::Relaxed);
                    return Ok(());
                }
                // Somebody else filled it: look again.
            } else if d > 0 {
                pos = r.step(r.tail, pos, 0, walked);
            } else if !r.behind(d, 0) {
                // The slot still holds last lap's value: full.
                return Err(Miss::Settled);
            } else {
                pos = r.rebase(pos, 0, d, walked).ok_or(Miss::Settled)?;
            }
            walked += 1;
            if walked >= MAX_WALK {
                return Err(Miss::Settled);
            }
        }
    }

    /// Pop the oldest value if there is one.
    ///
    /// # Errors
    /// [`Miss::Settled`] when the ring is empty (or its shared state makes
    /// no sense); [`Miss::InFlight`] when the next position is reserved by
    /// a batch producer that has not published it yet (retry soon; with
    /// [`Ring::with_repair`], a position stuck long enough is given up).
    #[inline]
    pub fn try_pop(&self) -> Result<T, Miss> {
        let pos = self.head.load(Ordering::Relaxed);
        let slot = self.slot(pos);
        let lap = self.lap(pos);
        if slot.diff(slot.seq(), lap.wrapping_add(1)) == 0 {
            if let Some(v) = slot.take(lap, lap.wrapping_add(self.capacity())) {
                self.hit(Hook::PopClaimed);
                self.head.store(pos.wrapping_add(1), Ordering::Relaxed);
                return Ok(v);
            }
        }
        Self::pop_walk(self.parts(), pos)
    }

    /// The rest of [`try_pop`](Self::try_pop) when its first try at `pos`
    /// failed: the walk.
    #[cold]
    #[inline(never)]
    fn pop_walk(parts: Parts<'a, T>, mut pos: u64) -> Result<T, Miss> {
        let r = Self::from_parts(parts);
        let mut walked = 0u32;
        loop {
            let slot = r.slot(pos);
            let lap = r.lap(pos);
            let d = slot.diff(slot.seq(), lap.wrapping_add(1));
            if d == 0 {
                if let Some(v) = slot.take(lap, lap.wrapping_add(r.capacity())) {
                    r.hit(Hook::PopClaimed);
                    r.head.store(pos.wrapping_add(1), Ordering::Relaxed);
                    return Ok(v);
                }
            } else if d > 0 {
                pos = r.step(r.head, pos, 1, walked);
            } else if r.behind(d, 1) {
                pos = r.rebase(pos, 1, d, walked).ok_or(Miss::Settled)?;
            } else if let Some(m) = r.unpublished_at(pos) {
                return Err(m);
            }
            walked += 1;
            if walked >= MAX_WALK {
                return Err(Miss::Settled);
            }
        }
    }

    /// Best-effort look at the oldest value without taking it.
    pub fn peek(&self) -> Option<T> {
        let mut pos = self.head.load(Ordering::Acquire);
        for walked in 0..MAX_WALK {
            let slot = self.slot(pos);
            let seq = slot.seq();
            let d = slot.diff(seq, self.lap(pos).wrapping_add(1));
            if self.behind(d, 1) {
                pos = self.rebase(pos, 1, d, walked)?;
                continue;
            }
            if d < 0 {
                return None;
            }
            if d > 0 {
                pos = self.step(self.head, pos, 1, walked);
                continue;
            }
            let v = slot.value();
            // The value is the one published for `pos` only if nobody took
            // it (and a producer refilled the slot) meanwhile.
            if slot.seq() == seq {
                return Some(v);
            }
            spin_hint();
        }
        None
    }

    /// The first position at or after `hint`'s value not yet finished
    /// from one side: published (`lag == 0`) or taken (`lag == 1`).
    fn settle(&self, hint: &AtomicU64, lag: u64) -> u64 {
        let mut p = hint.load(Ordering::Acquire);
        for walked in 0..MAX_WALK {
            let s = self.slot(p);
            let d = s.diff(s.seq(), self.lap(p).wrapping_add(lag));
            if d > 0 {
                p = self.step(hint, p, lag, walked);
            } else if self.behind(d, lag) {
                match self.rebase(p, lag, d, walked) {
                    Some(q) => p = q,
                    None => break,
                }
            } else {
                break;
            }
        }
        p
    }

    /// Items in the ring, clamped to `0..=capacity`.
    pub fn len(&self) -> u64 {
        let head = self.popped();
        let tail = self.pushed();
        // In the slots' width: the two may stand on different 2^32 laps
        // of a narrow ring's positions (see `rebase`).
        let n = self.slot(head).diff(tail, head);
        n.clamp(0, self.capacity() as i64) as u64
    }

    /// Whether the ring is empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Positions published so far (successful pushes plus given-up
    /// positions), exact when nobody is mid-operation.
    pub fn pushed(&self) -> u64 {
        self.settle(self.tail, 0)
    }

    /// Positions taken so far (successful pops plus given-up positions).
    pub fn popped(&self) -> u64 {
        self.settle(self.head, 1)
    }
}
