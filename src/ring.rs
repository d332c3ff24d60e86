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

/// What the ring needs from a slot. Every mutation is a compare-and-swap
/// that checks the sequence number, so a slot can never be changed by a
/// process whose view of it is out of date.
pub trait SlotOps<T> {
    /// The longest stride of a leap's doubling search (`Ring::leap`):
    /// 2^62 for 64-bit sequences; 2^29 for 32-bit ones, so that with a
    /// capacity of at most 2^30 no look is 2^31 or more from the sequence
    /// it reads, which 32 bits could not place.
    const STRIDE: u64;
    /// The slot's stored sequence (the sequence less the slot's index,
    /// see the module docs), widened. SeqCst: the waiters' re-check pairs
    /// it with their announcement (see `wait.rs`). The `pos`, `next`,
    /// `from` and `to` of the methods below are stored values too.
    fn seq(&self) -> u64;
    /// `seq - pos` as a signed distance, in the slot's own width.
    fn diff(&self, seq: u64, pos: u64) -> i64;
    /// If the slot is free for `pos`, store `v` and mark it published for
    /// `pos`, atomically. False if the slot is not (or no longer) free for
    /// `pos`.
    fn publish(&self, pos: u64, v: T) -> bool;
    /// If the slot holds the value of `pos`, take it and set the sequence
    /// to `next`, atomically; the value taken.
    fn take(&self, pos: u64, next: u64) -> Option<T>;
    /// Move the sequence from `from` to `to` if it is `from` (repair and
    /// tests); the value is left alone.
    fn skip(&self, from: u64, to: u64) -> bool;
    /// Read the value (racy; callers validate with the sequence).
    fn value(&self) -> T;
    /// Initialise (create time only).
    fn init(&self, s: u64);
}

/// Int64 slot: 16 bytes, 16-byte aligned: the sequence then the value.
/// Published with a 16-byte CAS of both.
#[cfg(not(loom))]
#[repr(C, align(16))]
pub struct Slot64 {
    seq: AtomicU64,
    val: crate::sync::AtomicI64,
}

/// Int32 slot: one 8-byte word, the sequence in the low 32 bits and the
/// value in the high 32 (little-endian: `u32 seq` then `i32 value`).
#[repr(C)]
pub struct Slot32 {
    word: AtomicU64,
}

/// Int16 slot: one 8-byte word, the sequence in the low 32 bits, the value
/// in bits 32..48, zero above (`u32 seq`, `i16 value`, 2 bytes padding).
#[repr(C)]
pub struct Slot16 {
    word: AtomicU64,
}

#[cfg(not(loom))]
const _: () = {
    assert!(std::mem::size_of::<Slot64>() == 16);
    assert!(std::mem::align_of::<Slot64>() == 16);
    assert!(std::mem::size_of::<Slot32>() == 8);
    assert!(std::mem::size_of::<Slot16>() == 8);
};

/// Bounded retries of a word CAS that failed only because the value half
/// changed under an unchanged sequence: impossible unless somebody
/// scribbles on the mapping.
const CAS_RETRIES: u32 = 64;

macro_rules! word_slot_impl {
    ($slot:ty, $t:ty, $bits:ty, $variant:expr) => {
        impl $slot {
            #[inline(always)]
            fn pack(seq: u64, v: $t) -> u64 {
                (seq as u32 as u64) | ((v as $bits as u64) << 32)
            }
            #[inline(always)]
            fn unpack(w: u64) -> $t {
                (w >> 32) as $bits as $t
            }
        }
        impl SlotOps<$t> for $slot {
            const STRIDE: u64 = 1 << 29;
            #[inline(always)]
            fn seq(&self) -> u64 {
                self.word.load(Ordering::SeqCst) as u32 as u64
            }
            #[inline(always)]
            fn diff(&self, seq: u64, pos: u64) -> i64 {
                (seq as u32).wrapping_sub(pos as u32) as i32 as i64
            }
            #[inline(always)]
            fn publish(&self, pos: u64, v: $t) -> bool {
                // Expect the slot free for `pos` with whatever value it
                // holds: no separate check of the sequence, the CAS is it.
                let mut w = self.word.load(Ordering::Relaxed);
                let new = Self::pack(pos.wrapping_add(1), v);
                let mut tries = 0u32;
                loop {
                    let expected = (w & !0xffff_ffff) | u64::from(pos as u32);
                    // SYNC POINT: the SeqCst CAS publishes the value with
                    // its sequence and pairs with the waiters' SeqCst
                    // announcement (wait.rs): either our wake check sees a
                    // waiter or its re-check sees this slot.
                    match self.word.compare_exchange(
                        expected,
                        new,
                        Ordering::SeqCst,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return true,
                        Err(cur) if cur as u32 == pos as u32 => w = cur,
                        Err(_) => return false,
                    }
                    tries += 1;
                    if tries >= CAS_RETRIES {
                        return false;
                    }
                }
            }
            #[inline(always)]
            fn take(&self, pos: u64, next: u64) -> Option<$t> {
                let w = self.word.load(Ordering::Acquire);
                if w as u32 != pos.wrapping_add(1) as u32 {
                    return None;
                }
                // SYNC POINT: one CAS takes the value and frees the slot
                // for the producer of `next`; pairs with producers'
                // announcement as above.
                self.word
                    .compare_exchange(
                        w,
                        (w & !0xffff_ffff) | (next as u32 as u64),
                        Ordering::SeqCst,
                        Ordering::Relaxed,
                    )
                    .ok()
                    .map(|_| Self::unpack(w))
            }
            fn skip(&self, from: u64, to: u64) -> bool {
                let w = self.word.load(Ordering::Acquire);
                w as u32 == from as u32
                    && self
                        .word
                        .compare_exchange(
                            w,
                            (w & !0xffff_ffff) | (to as u32 as u64),
                            Ordering::SeqCst,
                            Ordering::Relaxed,
                        )
                        .is_ok()
            }
            #[inline(always)]
            fn value(&self) -> $t {
                Self::unpack(self.word.load(Ordering::Acquire))
            }
            fn init(&self, s: u64) {
                self.word.store(s as u32 as u64, Ordering::Relaxed);
            }
        }
        impl Element for $t {
            type Slot = $slot;
            const VARIANT: crate::layout::Variant = $variant;
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
        }
    };
}

word_slot_impl!(Slot32, i32, u32, crate::layout::Variant::Int32);
word_slot_impl!(Slot16, i16, u16, crate::layout::Variant::Int16);

/// 16-byte compare-and-swap of `(lo, hi)` at `dst` (SeqCst): `Ok` on
/// success, else the current contents.
///
/// # Safety
/// `dst` must be 16-byte aligned, valid for reads and writes, and only
/// accessed atomically by everybody else.
#[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
#[inline(always)]
unsafe fn cas128(dst: *mut u64, old: (u64, u64), new: (u64, u64)) -> Result<(), (u64, u64)> {
    let (lo, hi): (u64, u64);
    // SAFETY: the caller guarantees an aligned, valid 16-byte location;
    // `supported()` checked the CPU has CMPXCHG16B. rbx may not be named
    // as an operand (LLVM may use it), so the new low word goes through a
    // scratch register swapped in and out around the instruction (if the
    // allocator picks rbx itself for the scratch, both swaps are no-ops);
    // the address is pinned to rdi so it can never be rbx. The locked
    // instruction is a full barrier (SeqCst).
    unsafe {
        core::arch::asm!(
            "xchg {tmp}, rbx",
            "lock cmpxchg16b xmmword ptr [rdi]",
            "mov rbx, {tmp}",
            tmp = inout(reg) new.0 => _,
            in("rdi") dst,
            inout("rax") old.0 => lo,
            inout("rdx") old.1 => hi,
            in("rcx") new.1,
            options(nostack),
        );
    }
    // rdx:rax keep the expected value on success and receive the current,
    // different, contents on failure. (Not `sete` after the instruction:
    // the allocator may give its output byte to rbx, which the restore
    // then overwrites; a bug this project had.)
    if (lo, hi) == old {
        Ok(())
    } else {
        Err((lo, hi))
    }
}

/// 16-byte compare-and-swap, portable version (aarch64 and others) through
/// `portable-atomic`, which is lock-free there (LDXP/STXP or CASP).
///
/// # Safety
/// As for the x86_64 version.
#[cfg(all(not(target_arch = "x86_64"), not(loom), not(miri)))]
#[inline(always)]
unsafe fn cas128(dst: *mut u64, old: (u64, u64), new: (u64, u64)) -> Result<(), (u64, u64)> {
    use portable_atomic::AtomicU128;
    const _: () = assert!(AtomicU128::is_always_lock_free());
    let join = |(lo, hi): (u64, u64)| u128::from(lo) | (u128::from(hi) << 64);
    // SAFETY: aligned, valid, atomically accessed (caller).
    let a = unsafe { AtomicU128::from_ptr(dst.cast::<u128>()) };
    a.compare_exchange(join(old), join(new), Ordering::SeqCst, Ordering::SeqCst)
        .map(|_| ())
        .map_err(|cur| (cur as u64, (cur >> 64) as u64))
}

/// Miri stand-in (Miri runs no inline assembly): the two words as 64-bit
/// atomics, compared and stored under one process-wide lock. That is
/// atomic only against other `cas128` calls, not against the slot's
/// one-word CAS in `take` and `skip`, which is all the Miri run needs: it
/// runs the single-threaded ring tests (the thread tests are ignored under
/// Miri; the loom models check the concurrency) for undefined behaviour in
/// the slot and index arithmetic.
///
/// # Safety
/// As for the x86_64 version.
#[cfg(all(miri, not(loom)))]
unsafe fn cas128(dst: *mut u64, old: (u64, u64), new: (u64, u64)) -> Result<(), (u64, u64)> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: aligned, valid, only accessed atomically (caller); the two
    // words are the slot's `seq` and `val`.
    let (seq, val) = unsafe {
        (
            std::sync::atomic::AtomicU64::from_ptr(dst),
            std::sync::atomic::AtomicU64::from_ptr(dst.add(1)),
        )
    };
    let cur = (seq.load(Ordering::SeqCst), val.load(Ordering::SeqCst));
    if cur != old {
        return Err(cur);
    }
    val.store(new.1, Ordering::SeqCst);
    seq.store(new.0, Ordering::SeqCst);
    Ok(())
}

#[cfg(not(loom))]
impl SlotOps<i64> for Slot64 {
    const STRIDE: u64 = 1 << 62;
    #[inline(always)]
    fn seq(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }
    #[inline(always)]
    fn diff(&self, seq: u64, pos: u64) -> i64 {
        seq.wrapping_sub(pos) as i64
    }
    #[inline(always)]
    fn publish(&self, pos: u64, v: i64) -> bool {
        // No early look at the sequence: the CAS compares it (callers
        // have just read it anyway).
        // Nobody writes the value while the sequence says "free for pos"
        // (every write is this same CAS), so it is the one the consumer of
        // the last lap left; a stale read only costs a retry.
        let mut old = self.val.load(Ordering::Relaxed) as u64;
        let mut tries = 0u32;
        loop {
            // SYNC POINT: as in the word slots: publish value and sequence
            // together, SeqCst (pairs with the waiters' announcement).
            // SAFETY: the slot is 16-byte aligned (repr align and the
            // region's layout), lives in a mapping that outlives `self`,
            // and its two words are only ever accessed atomically. The
            // pointer comes from the whole slot, not from `seq`: it must
            // be valid for both words (Miri's Stacked Borrows caught a
            // `seq.as_ptr()` here, whose provenance is the first 8 bytes).
            match unsafe {
                cas128(
                    std::ptr::from_ref(self).cast_mut().cast::<u64>(),
                    (pos, old),
                    (pos.wrapping_add(1), v as u64),
                )
            } {
                Ok(()) => return true,
                Err((s, cur)) if s == pos => old = cur,
                Err(_) => return false,
            }
            tries += 1;
            if tries >= CAS_RETRIES {
                return false;
            }
        }
    }
    #[inline(always)]
    fn take(&self, pos: u64, next: u64) -> Option<i64> {
        let want = pos.wrapping_add(1);
        // Callers have just read the sequence (SeqCst, so acquiring) and
        // found `want`; the CAS below checks it again. The value is
        // stable while the sequence stays `want`: the next write to it
        // needs the sequence at `next` first, and 64-bit sequences never
        // come back. If the sequence moved, the value read here is
        // discarded with the failed CAS.
        let v = self.val.load(Ordering::Acquire);
        // SYNC POINT: taking is this CAS (SeqCst; see the word slots).
        self.seq
            .compare_exchange(want, next, Ordering::SeqCst, Ordering::Relaxed)
            .ok()
            .map(|_| v)
    }
    fn skip(&self, from: u64, to: u64) -> bool {
        self.seq
            .compare_exchange(from, to, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
    }
    #[inline(always)]
    fn value(&self) -> i64 {
        self.val.load(Ordering::Acquire)
    }
    fn init(&self, s: u64) {
        self.seq.store(s, Ordering::Relaxed);
        self.val.store(0, Ordering::Relaxed);
    }
}

/// Loom stand-in for the Int64 slot. Loom has no 16-byte atomics, so the
/// slot is one loom word with the sequence in the low 32 bits and the
/// value in the high 32 (the models use positions below 2^32 and values
/// that fit in an `i32`; both are checked), and every access of the real
/// slot is emulated on that word with the same semantics: the 16-byte CAS
/// of `publish` is one CAS of the whole word, including its retry after a
/// stale value read; the 8-byte CAS of the sequence in `take` and `skip`
/// compares the sequence half only (a change of the value half alone is
/// retried, as the hardware would ignore it); the value load reads the
/// high half. No lock: loom explores the interleavings of the CAS itself.
#[cfg(loom)]
pub struct Slot64 {
    word: AtomicU64,
}

#[cfg(loom)]
impl Slot64 {
    fn pack(seq: u64, val: i64) -> u64 {
        assert!(seq >> 32 == 0, "loom Slot64: position {seq:#x} above 2^32");
        let v = i32::try_from(val).expect("loom Slot64: value beyond i32");
        seq | (u64::from(v as u32) << 32)
    }
    fn seq_of(w: u64) -> u64 {
        w & 0xFFFF_FFFF
    }
    fn val_of(w: u64) -> i64 {
        i64::from((w >> 32) as u32 as i32)
    }
    /// The 8-byte CAS of the sequence word alone.
    fn cas_seq(&self, from: u64, to: u64) -> bool {
        let mut cur = self.word.load(Ordering::SeqCst);
        loop {
            if Self::seq_of(cur) != from {
                return false;
            }
            let next = Self::pack(to, Self::val_of(cur));
            match self
                .word
                .compare_exchange(cur, next, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }
}

#[cfg(loom)]
impl SlotOps<i64> for Slot64 {
    const STRIDE: u64 = 1 << 62;
    fn seq(&self) -> u64 {
        Self::seq_of(self.word.load(Ordering::SeqCst))
    }
    fn diff(&self, seq: u64, pos: u64) -> i64 {
        seq.wrapping_sub(pos) as i64
    }
    fn publish(&self, pos: u64, v: i64) -> bool {
        // As the real slot: a relaxed read of the value, then the 16-byte
        // CAS from (pos, old), retried with the value it found while the
        // sequence still says pos.
        let mut old = Self::val_of(self.word.load(Ordering::Relaxed));
        let mut tries = 0u32;
        loop {
            match self.word.compare_exchange(
                Self::pack(pos, old),
                Self::pack(pos.wrapping_add(1), v),
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return true,
                Err(w) if Self::seq_of(w) == pos => old = Self::val_of(w),
                Err(_) => return false,
            }
            tries += 1;
            if tries >= CAS_RETRIES {
                return false;
            }
        }
    }
    fn take(&self, pos: u64, next: u64) -> Option<i64> {
        // As the real slot: read the value, then CAS the sequence alone;
        // the value is stable while the sequence stays pos + 1.
        let v = Self::val_of(self.word.load(Ordering::Acquire));
        self.cas_seq(pos.wrapping_add(1), next).then_some(v)
    }
    fn skip(&self, from: u64, to: u64) -> bool {
        self.cas_seq(from, to)
    }
    fn value(&self) -> i64 {
        Self::val_of(self.word.load(Ordering::Acquire))
    }
    fn init(&self, s: u64) {
        self.word.store(Self::pack(s, 0), Ordering::Relaxed);
    }
}

impl Element for i64 {
    type Slot = Slot64;
    const VARIANT: crate::layout::Variant = crate::layout::Variant::Int64;
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self
    }
    fn supported() -> bool {
        #[cfg(all(target_arch = "x86_64", not(loom), not(miri)))]
        {
            std::arch::is_x86_feature_detected!("cmpxchg16b")
        }
        #[cfg(not(all(target_arch = "x86_64", not(loom), not(miri))))]
        {
            true
        }
    }
}

pub use crate::wait::Miss;

/// Test hook: where a process kills itself inside the ring (see
/// `DQS_TEST_KILL_POINT` in the test-point module).
pub use crate::testpoint::Hook;

/// Shared state for giving up stuck reservations (see the module docs).
#[derive(Clone, Copy)]
pub struct Repair<'a> {
    /// Position + 1 of the reservation last seen stuck (0: none).
    pub stuck_pos: &'a AtomicU64,
    /// CLOCK_MONOTONIC ns when it was first seen stuck.
    pub stuck_since: &'a AtomicU64,
    /// Positions given up (no item): subtracted from the push and pop
    /// counts.
    pub skipped: &'a AtomicU64,
    /// Recoveries of any kind (stats).
    pub recoveries: &'a AtomicU64,
    /// How long a position must stay stuck before it is given up.
    pub after_ns: u64,
}

/// Where a ring finds its [`Repair`] state. Looked up only when a consumer
/// meets an unpublished position, so the fast paths carry one pointer (the
/// queue header implements it) instead of the whole set.
pub trait RepairSource: Sync {
    /// The repair cells and bound.
    fn repair(&self) -> Repair<'_>;
}

impl RepairSource for Repair<'_> {
    fn repair(&self) -> Repair<'_> {
        *self
    }
}

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

    /// [`unpublished`](Self::unpublished) for this ring. Passes the parts
    /// it needs, not `self`, so the fast paths never have to lay the ring
    /// out in memory for the call (nor compute the repair fields).
    #[inline(always)]
    fn unpublished_at(&self, pos: u64) -> Option<Miss> {
        Self::unpublished(self.tail, self.slot(pos), pos, self.capacity(), self.repair)
    }

    /// A consumer found position `pos` (slot `slot`) not published. Empty,
    /// unless a batch reservation covers it; a reservation stuck long
    /// enough is given up (then `None`: look again).
    #[cold]
    #[inline(never)]
    fn unpublished(
        tail: &AtomicU64,
        slot: &T::Slot,
        pos: u64,
        cap: u64,
        repair: Option<&dyn RepairSource>,
    ) -> Option<Miss> {
        // `tail` in (pos, pos + capacity]: reserved, not yet published.
        // Compared in the slot's width, like the sequences: a hint may
        // come from another 2^32 lap of a narrow ring's positions.
        let ahead = slot.diff(tail.load(Ordering::SeqCst), pos);
        if ahead < 1 || ahead > cap as i64 {
            return Some(Miss::Settled);
        }
        let Some(r) = repair.map(RepairSource::repair) else {
            return Some(Miss::InFlight);
        };
        if r.after_ns > 0 {
            let now = crate::clock::now_ns();
            let key = pos.wrapping_add(1);
            if r.stuck_pos.load(Ordering::Relaxed) != key {
                // First sighting: start the clock (racy between consumers;
                // a lost update only moves the repair a little).
                r.stuck_since.store(now, Ordering::Relaxed);
                r.stuck_pos.store(key, Ordering::Relaxed);
                return Some(Miss::InFlight);
            }
            if now.wrapping_sub(r.stuck_since.load(Ordering::Relaxed)) < r.after_ns {
                return Some(Miss::InFlight);
            }
        }
        // RECOVERY: give the position up. Its producer, if alive, fails its
        // publish CAS and places the item elsewhere.
        let lap = pos & !(cap - 1);
        if slot.skip(lap, lap.wrapping_add(cap)) {
            r.skipped.fetch_add(1, Ordering::Relaxed);
            r.recoveries.fetch_add(1, Ordering::Relaxed);
            // The next position of a dead run has waited as long: hand the
            // clock on (`stuck_since` stays), so it goes without a new wait.
            r.stuck_pos.store(pos.wrapping_add(2), Ordering::Relaxed);
        }
        None
    }

    /// Push the longest prefix of `vals` that fits; returns how many went
    /// in (possibly 0 when peers took the room first: call again).
    ///
    /// Checks that the slots of `tail .. tail + m` are free, reserves them
    /// with one CAS of `tail`, then publishes value after value, each into
    /// the next reserved slot that is still free for its position. A slot
    /// a peer filled (its `tail` hint was behind) or a consumer gave up is
    /// passed over with the same value, so the values go in order into
    /// increasing positions and none is lost; at most the tail of `vals`
    /// is left for the caller's next call.
    ///
    /// # Errors
    /// [`Miss::Settled`] when the ring is full at `tail` (nothing was
    /// pushed), as for [`Ring::try_push`]. An empty `vals` is `Ok(0)`.
    #[inline]
    pub fn try_push_batch(&self, vals: &[T]) -> Result<usize, Miss> {
        if vals.is_empty() {
            return Ok(0);
        }
        let want = (vals.len() as u64).min(self.capacity());
        let mut pos = self.tail.load(Ordering::Relaxed);
        for walked in 0..MAX_WALK {
            let slot = self.slot(pos);
            let d = slot.diff(slot.seq(), self.lap(pos));
            if d == 0 {
                let mut m = 1u64;
                while m < want {
                    let p = pos.wrapping_add(m);
                    let s = self.slot(p);
                    if s.diff(s.seq(), self.lap(p)) != 0 {
                        break;
                    }
                    m += 1;
                }
                if m == 1 {
                    // No run to reserve: a plain push.
                    if slot.publish(self.lap(pos), vals[0]) {
                        self.tail.store(pos.wrapping_add(1), Ordering::Relaxed);
                        return Ok(1);
                    }
                    continue;
                }
                // SYNC POINT: the reservation. Producers that read `tail`
                // after it start past the run; one that read it before may
                // still fill a slot of it, which the publish CAS settles.
                match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(m),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Ok(self.publish_run(pos, m, vals)),
                    Err(cur) => pos = cur,
                }
            } else if d > 0 {
                pos = self.step(self.tail, pos, 0, walked);
            } else if !self.behind(d, 0) {
                return Err(Miss::Settled);
            } else {
                pos = self.rebase(pos, 0, d, walked).ok_or(Miss::Settled)?;
            }
        }
        Err(Miss::Settled)
    }

    /// Publish `vals` in order into the reserved positions `pos .. pos + m`
    /// (`m <= vals.len()`), passing over a slot a peer filled or a
    /// consumer gave up; how many went in. Out of line: with only the run's
    /// own state live, the 16-byte CAS of each slot leaves the loop enough
    /// registers (inlined into the reservation walk it spilled and reloaded
    /// five of them per item).
    #[inline(never)]
    fn publish_run(&self, pos: u64, m: u64, vals: &[T]) -> usize {
        debug_assert!(m <= vals.len() as u64);
        let mut n = 0usize;
        for i in 0..m {
            let p = pos.wrapping_add(i);
            // SAFETY: n <= i < m <= vals.len() (one item per position at
            // most), so `n` indexes `vals`.
            let v = unsafe { *vals.get_unchecked(n) };
            if self.slot(p).publish(self.lap(p), v) {
                n += 1;
                if n == 1 {
                    self.hit(Hook::PushReserved);
                }
            }
        }
        n
    }

    /// Pop up to `out.len()` items in queue order, slot by slot; returns
    /// how many were written to `out` (at least one unless `out` is empty).
    ///
    /// # Errors
    /// As [`Ring::try_pop`], when not even the first item could be taken
    /// (nothing was written to `out`). An empty `out` is `Ok(0)`.
    #[inline]
    pub fn try_pop_batch(&self, out: &mut [T]) -> Result<usize, Miss> {
        if out.is_empty() {
            return Ok(0);
        }
        let cap = self.capacity();
        let mut pos = self.head.load(Ordering::Relaxed);
        let mut n = 0usize;
        let mut walked = 0u32;
        while n < out.len() {
            let slot = self.slot(pos);
            let lap = self.lap(pos);
            let d = slot.diff(slot.seq(), lap.wrapping_add(1));
            if d == 0 {
                if let Some(v) = slot.take(lap, lap.wrapping_add(cap)) {
                    // SAFETY of the index: n < out.len() (loop condition).
                    out[n] = v;
                    n += 1;
                    pos = pos.wrapping_add(1);
                    continue;
                }
            } else if d < 0 {
                if n > 0 {
                    break;
                }
                if self.behind(d, 1) {
                    match self.rebase(pos, 1, d, walked) {
                        Some(p) => pos = p,
                        None => break,
                    }
                } else if let Some(m) = self.unpublished_at(pos) {
                    return Err(m);
                }
                // Else repaired, or the slot moved: look again, but count
                // the step (a slot a repair cannot move, as hostile memory
                // can leave one, would otherwise spin here forever).
            } else if n == 0 {
                pos = self.step(self.head, pos, 1, walked);
            } else {
                // A peer took this one; our run continues after it.
                pos = pos.wrapping_add(1);
            }
            walked += 1;
            if walked >= MAX_WALK {
                break;
            }
        }
        if n == 0 {
            return Err(Miss::Settled);
        }
        self.head.store(pos, Ordering::Relaxed);
        Ok(n)
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

// HOOK(lease): the noted take of `pop_lease` (src/lease/ring_take.rs).
#[path = "lease/ring_take.rs"]
mod lease_take;

/// Heap-allocated slots for tests and loom models.
#[cfg(test)]
pub(crate) fn heap_slots<T: Element>(n: usize) -> Vec<T::Slot>
where
    T::Slot: Default,
{
    (0..n).map(|_| T::Slot::default()).collect()
}

#[cfg(all(test, not(loom)))]
impl Default for Slot64 {
    fn default() -> Self {
        Slot64 {
            seq: AtomicU64::new(0),
            val: crate::sync::AtomicI64::new(0),
        }
    }
}

#[cfg(all(test, loom))]
impl Default for Slot64 {
    fn default() -> Self {
        Slot64 {
            word: AtomicU64::new(0),
        }
    }
}

#[cfg(test)]
impl Default for Slot32 {
    fn default() -> Self {
        Slot32 {
            word: AtomicU64::new(0),
        }
    }
}

#[cfg(test)]
impl Default for Slot16 {
    fn default() -> Self {
        Slot16 {
            word: AtomicU64::new(0),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Loop counts for the single-threaded tests: a fiftieth under Miri,
    /// which interprets every step (the full counts take it half an hour).
    const fn rounds(n: i64) -> i64 {
        if cfg!(miri) {
            n / 50
        } else {
            n
        }
    }

    fn with_ring<T: Element, R>(cap: usize, f: impl FnOnce(&Ring<T>) -> R) -> R
    where
        T::Slot: Default,
    {
        with_ring_at::<T, R>(cap, 0, |r, _, _| f(r))
    }

    /// A ring of `cap` slots whose counters and slots start at position
    /// `start`, with its counters.
    fn with_ring_at<T: Element, R>(
        cap: usize,
        start: u64,
        f: impl FnOnce(&Ring<T>, &AtomicU64, &AtomicU64) -> R,
    ) -> R
    where
        T::Slot: Default,
    {
        let head = AtomicU64::new(start);
        let tail = AtomicU64::new(start);
        let slots = heap_slots::<T>(cap);
        let r = Ring::<T>::new(&head, &tail, &slots);
        // Each slot free for its position from `start` on (what it
        // stores: the position less the slot's index).
        for p in start..start + cap as u64 {
            slots[(p % cap as u64) as usize].init(p - p % cap as u64);
        }
        f(&r, &head, &tail)
    }

    struct RepairState {
        stuck_pos: AtomicU64,
        stuck_since: AtomicU64,
        skipped: AtomicU64,
        recoveries: AtomicU64,
        after_ns: u64,
    }

    impl RepairState {
        fn new(after_ns: u64) -> Self {
            RepairState {
                stuck_pos: AtomicU64::new(0),
                stuck_since: AtomicU64::new(0),
                skipped: AtomicU64::new(0),
                recoveries: AtomicU64::new(0),
                after_ns,
            }
        }
    }

    impl RepairSource for RepairState {
        fn repair(&self) -> Repair<'_> {
            Repair {
                stuck_pos: &self.stuck_pos,
                stuck_since: &self.stuck_since,
                skipped: &self.skipped,
                recoveries: &self.recoveries,
                after_ns: self.after_ns,
            }
        }
    }

    #[test]
    fn cas128_swaps_both_words_or_reports_them() {
        let s = Slot64::default();
        s.init(5);
        assert!(!s.publish(4, 1), "not free for position 4");
        assert!(s.publish(5, -7));
        assert_eq!((s.seq(), s.value()), (6, -7));
        assert!(!s.publish(5, 8), "a second publish for 5 must fail");
        assert_eq!(s.take(4, 9), None, "wrong position");
        assert_eq!(s.take(5, 9), Some(-7));
        assert_eq!(s.take(5, 9), None, "taken once");
        assert!(s.publish(9, i64::MIN));
        assert_eq!(s.value(), i64::MIN);
        assert!(i64::supported());
    }

    #[test]
    fn word_slots_keep_sequence_and_value_apart() {
        let s = Slot16::default();
        s.init(u32::MAX as u64);
        assert!(s.publish(u32::MAX as u64, -2));
        assert_eq!(s.seq(), 0, "32-bit sequence wraps");
        assert_eq!(s.value(), -2);
        assert_eq!(s.word.load(Ordering::Relaxed) >> 48, 0, "padding stays 0");
        assert_eq!(s.take(u32::MAX as u64, 7), Some(-2));
        let s = Slot32::default();
        s.init(3);
        assert!(s.publish(3, i32::MIN));
        assert_eq!(s.take(3, 11), Some(i32::MIN));
        assert!(s.skip(11, 19));
        assert!(!s.skip(11, 19));
        assert_eq!(s.seq(), 19);
    }

    /// The format-5 encoding, word by word: a zeroed ring is empty, and a
    /// slot stores its sequence less its index.
    #[test]
    fn slots_store_their_sequence_less_their_index() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i32>(4);
        let r = Ring::<i32>::new(&head, &tail, &slots);
        // All zero, as a new mapping: empty, with room for four.
        assert_eq!((r.len(), r.try_pop()), (0, Err(Miss::Settled)));
        let stored = || -> Vec<u32> {
            slots
                .iter()
                .map(|s| s.word.load(Ordering::Relaxed) as u32)
                .collect()
        };
        assert_eq!(r.try_push_batch(&[10, 11, 12, 13, 14]), Ok(4));
        // Published for positions 0..4: sequence p + 1, stored p + 1 - i.
        assert_eq!(stored(), [1, 1, 1, 1]);
        assert_eq!(r.try_pop(), Ok(10));
        assert_eq!(r.try_pop(), Ok(11));
        // Taken: sequence p + 4, stored 4 (free for positions 4 and 5).
        assert_eq!(stored(), [4, 4, 1, 1]);
        r.try_push(14).unwrap();
        // Position 4 in slot 0: sequence 5, stored 5.
        assert_eq!(stored(), [5, 4, 1, 1]);
        assert_eq!(slots[0].value(), 14);
        let mut out = [0; 4];
        assert_eq!(r.try_pop_batch(&mut out), Ok(3));
        assert_eq!(out[..3], [12, 13, 14]);
        // Positions 2, 3 and 4 taken: stored 4, 4 and 8.
        assert_eq!(stored(), [8, 4, 4, 4]);
    }

    #[test]
    fn push_fails_when_full_and_pop_when_empty() {
        with_ring::<i64, _>(4, |r| {
            assert_eq!(r.try_pop(), Err(Miss::Settled));
            for i in 0..4 {
                r.try_push(i).unwrap();
            }
            assert_eq!(r.try_push(9), Err(Miss::Settled));
            assert_eq!(r.len(), 4);
            for i in 0..4 {
                assert_eq!(r.try_pop(), Ok(i));
            }
            assert_eq!(r.try_pop(), Err(Miss::Settled));
        });
    }

    #[test]
    fn fifo_across_many_laps_for_every_width() {
        fn run<T: Element + PartialEq + std::fmt::Debug>()
        where
            T::Slot: Default,
        {
            with_ring::<T, _>(8, |r| {
                for lap in 0..rounds(1000) {
                    for k in 0..5 {
                        r.try_push(T::from_i64(lap * 5 + k)).unwrap();
                    }
                    for k in 0..5 {
                        assert_eq!(r.try_pop().unwrap(), T::from_i64(lap * 5 + k));
                    }
                }
                assert_eq!(r.pushed(), 5 * rounds(1000) as u64);
                assert_eq!(r.popped(), 5 * rounds(1000) as u64);
            });
        }
        run::<i64>();
        run::<i32>();
        run::<i16>();
    }

    #[test]
    fn narrow_types_truncate_like_c() {
        assert_eq!(i32::from_i64(1 << 32 | 5), 5);
        assert_eq!(i16::from_i64(70000), 70000i64 as i16);
        assert_eq!(i16::from_i64(-1).to_i64(), -1);
    }

    #[test]
    fn sequence_wraps_in_32_bits() {
        // Start the counters just below 2^32 so Int32 sequences wrap.
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i32>(4);
        let r = Ring::<i32>::new(&head, &tail, &slots);
        let start = (1u64 << 32) - 6;
        // Seed so that slot (p & 3) expects lap position p for p >= start.
        for p in start..start + 4 {
            slots[(p & 3) as usize].init(p & !3);
        }
        head.store(start, Ordering::Relaxed);
        tail.store(start, Ordering::Relaxed);
        for n in 0..100 {
            r.try_push(n).unwrap();
            r.try_push(n + 1000).unwrap();
            assert_eq!(r.try_pop(), Ok(n));
            assert_eq!(r.try_pop(), Ok(n + 1000));
        }
    }

    #[test]
    fn peek_sees_front_without_taking_it() {
        with_ring::<i16, _>(2, |r| {
            assert_eq!(r.peek(), None);
            r.try_push(3).unwrap();
            r.try_push(4).unwrap();
            assert_eq!(r.peek(), Some(3));
            assert_eq!(r.len(), 2);
        });
    }

    #[test]
    fn hints_left_behind_by_a_killed_process_are_stepped_over() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i64>(4);
        let r = Ring::<i64>::new(&head, &tail, &slots);
        r.init();
        // A producer published position 0 and died before moving `tail`.
        assert!(slots[0].publish(0, 10));
        assert_eq!(tail.load(Ordering::Relaxed), 0);
        assert_eq!((r.pushed(), r.len()), (1, 1));
        r.try_push(11).unwrap();
        assert_eq!(tail.load(Ordering::Relaxed), 2);
        // A consumer took position 0 and died before moving `head`.
        assert_eq!(slots[0].take(0, 4), Some(10));
        assert_eq!((r.popped(), r.len()), (1, 1));
        assert_eq!(r.peek(), Some(11));
        assert_eq!(r.try_pop(), Ok(11));
        assert_eq!(head.load(Ordering::Relaxed), 2);
        // Hints moved backwards by a slow peer's late store: still right.
        r.try_push_batch(&[12, 13, 14]).unwrap();
        tail.store(1, Ordering::Relaxed);
        head.store(0, Ordering::Relaxed);
        assert_eq!((r.pushed(), r.popped(), r.len()), (5, 2, 3));
        r.try_push(15).unwrap();
        assert_eq!(r.try_push(16), Err(Miss::Settled));
        let mut out = [0; 8];
        assert_eq!(r.try_pop_batch(&mut out), Ok(4));
        assert_eq!(out[..4], [12, 13, 14, 15]);
    }

    /// A hint written back late by a process preempted between its slot
    /// CAS and its store lags by as many positions as its peers moved
    /// meanwhile: far more than `MAX_WALK` (this left a full 2P2C ring
    /// looking empty to every consumer, and all four processes asleep).
    /// Every operation and count still finds the frontier, in every width,
    /// even when the lag passes the narrow slots' 32-bit sequences.
    #[test]
    fn hints_far_behind_are_leapt_over() {
        fn run<T: Element + PartialEq + std::fmt::Debug>(lag: u64)
        where
            T::Slot: Default,
        {
            let start = 1u64 << 41;
            with_ring_at::<T, _>(16, start, |r, head, tail| {
                leap_over(r, head, tail, start, lag)
            });
        }
        fn leap_over<T: Element + PartialEq + std::fmt::Debug>(
            r: &Ring<T>,
            head: &AtomicU64,
            tail: &AtomicU64,
            start: u64,
            lag: u64,
        ) {
            let v = |i: i64| T::from_i64(i);
            let ctx = format!("{} lag {lag:#x}", std::any::type_name::<T>());
            // Hints `lag` behind wherever they are now.
            let back = |c: &AtomicU64| {
                c.store(
                    c.load(Ordering::Relaxed).wrapping_sub(lag),
                    Ordering::Relaxed,
                )
            };
            for i in 0..10 {
                back(tail);
                assert_eq!(r.try_push(v(i)), Ok(()), "{ctx} item {i}");
            }
            back(head);
            assert_eq!(r.peek(), Some(v(0)), "{ctx}");
            for i in 0..4 {
                back(head);
                assert_eq!(r.try_pop(), Ok(v(i)), "{ctx}");
            }
            back(head);
            back(tail);
            assert_eq!(r.len(), 6, "{ctx}");
            back(head);
            assert_eq!(r.peek(), Some(v(4)), "{ctx}");
            back(head);
            let mut out = [v(0); 3];
            assert_eq!(r.try_pop_batch(&mut out), Ok(3), "{ctx}");
            assert_eq!(out, [v(4), v(5), v(6)], "{ctx}");
            back(tail);
            assert_eq!(r.try_push_batch(&[v(10), v(11)]), Ok(2), "{ctx}");
            // Fill it up, then one more: full, not lost.
            for i in 12..23 {
                back(tail);
                assert_eq!(r.try_push(v(i)), Ok(()), "{ctx} item {i}");
            }
            back(tail);
            assert_eq!(r.try_push(v(99)), Err(Miss::Settled), "{ctx}");
            back(tail);
            assert_eq!(r.try_push_batch(&[v(99)]), Err(Miss::Settled), "{ctx}");
            back(head);
            back(tail);
            assert_eq!(r.len(), 16, "{ctx}");
            for i in 7..23 {
                back(head);
                assert_eq!(r.try_pop(), Ok(v(i)), "{ctx} item {i}");
            }
            back(head);
            assert_eq!(r.try_pop(), Err(Miss::Settled), "{ctx}");
            back(head);
            back(tail);
            assert_eq!(r.len(), 0, "{ctx}");
            // The searches wrote the frontier back to the hints, within
            // the slots' width (a narrow ring may stay on another lap).
            let width = if std::mem::size_of::<T>() == 8 {
                u64::MAX
            } else {
                u32::MAX as u64
            };
            assert_eq!(r.pushed() & width, (start + 23) & width, "{ctx}");
            assert_eq!(r.popped() & width, (start + 23) & width, "{ctx}");
        }
        let lags = [
            100_000,
            (1 << 31) + 7,
            (1 << 32) + 3,
            3 << 31,
            (1 << 40) + 1,
        ];
        for lag in lags {
            run::<i64>(lag);
            run::<i32>(lag);
            run::<i16>(lag);
        }
    }

    #[test]
    fn batch_push_takes_the_free_prefix_and_batch_pop_the_published_run() {
        with_ring::<i64, _>(4, |r| {
            assert_eq!(r.try_push_batch(&[]), Ok(0));
            assert_eq!(r.try_pop_batch(&mut []), Ok(0));
            assert_eq!(r.try_pop_batch(&mut [0; 4]), Err(Miss::Settled));
            assert_eq!(r.try_push_batch(&[1, 2, 3, 4, 5, 6]), Ok(4));
            assert_eq!(r.tail.load(Ordering::Relaxed), 4, "one reservation");
            assert_eq!(r.try_push_batch(&[9]), Err(Miss::Settled));
            let mut out = [0; 3];
            assert_eq!(r.try_pop_batch(&mut out), Ok(3));
            assert_eq!(out, [1, 2, 3]);
            // Three slots are free again, across the lap boundary.
            assert_eq!(r.try_push_batch(&[5, 6, 7, 8]), Ok(3));
            let mut out = [0; 10];
            assert_eq!(r.try_pop_batch(&mut out), Ok(4));
            assert_eq!(out[..4], [4, 5, 6, 7]);
            assert_eq!(r.try_pop_batch(&mut out), Err(Miss::Settled));
            assert_eq!((r.pushed(), r.popped()), (7, 7));
        });
    }

    /// Reserve `n` positions from the current tail the way a batch
    /// producer does, without publishing anything (a producer that stops
    /// or dies right after its reservation).
    fn reserve(tail: &AtomicU64, n: u64) -> u64 {
        tail.fetch_add(n, Ordering::SeqCst)
    }

    #[test]
    fn an_unpublished_reservation_is_in_flight_until_published() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i64>(4);
        let r = Ring::<i64>::new(&head, &tail, &slots);
        r.init();
        assert_eq!(r.try_push_batch(&[1, 2]), Ok(2));
        let at = reserve(&tail, 1);
        let mut out = [0; 4];
        assert_eq!(r.try_pop_batch(&mut out), Ok(2));
        assert_eq!(out[..2], [1, 2]);
        assert_eq!(r.try_pop_batch(&mut out), Err(Miss::InFlight));
        assert_eq!(r.try_pop(), Err(Miss::InFlight));
        assert!(slots[(at & 3) as usize].publish(at & !3, 3));
        assert_eq!(r.try_pop_batch(&mut out), Ok(1));
        assert_eq!(out[0], 3);
        assert_eq!(r.try_pop_batch(&mut out), Err(Miss::Settled));
    }

    #[test]
    fn a_stuck_reservation_is_given_up_after_the_bound_and_the_slow_producer_goes_on() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i32>(4);
        let st = RepairState::new(20_000_000);
        let r = Ring::<i32>::new(&head, &tail, &slots).with_repair(&st);
        r.init();
        let at = reserve(&tail, 2);
        r.try_push(7).unwrap(); // after the reservation
        let t0 = std::time::Instant::now();
        let got = loop {
            match r.try_pop() {
                Ok(v) => break v,
                Err(Miss::InFlight) => std::thread::yield_now(),
                Err(Miss::Settled) => panic!("a reservation is not empty"),
            }
        };
        let waited = t0.elapsed();
        assert_eq!(got, 7);
        assert!(waited.as_millis() >= 19, "given up after {waited:?}");
        assert_eq!(st.skipped.load(Ordering::Relaxed), 2);
        assert_eq!(st.recoveries.load(Ordering::Relaxed), 2);
        // The reserving producer wakes up: its publishes fail, nothing is
        // overwritten, and it pushes its items again.
        assert!(!slots[at as usize].publish(at & !3, 100));
        assert!(!slots[at as usize + 1].publish((at + 1) & !3, 101));
        assert_eq!(r.try_push_batch(&[100, 101]), Ok(2));
        let mut out = [0; 4];
        assert_eq!(r.try_pop_batch(&mut out), Ok(2));
        assert_eq!(out[..2], [100, 101]);
        assert_eq!((r.pushed(), r.popped()), (5, 5), "skips count as positions");
    }

    #[test]
    fn a_dead_run_costs_one_wait_not_one_per_position() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i64>(8);
        let st = RepairState::new(20_000_000);
        let r = Ring::<i64>::new(&head, &tail, &slots).with_repair(&st);
        r.init();
        reserve(&tail, 4); // a batch producer reserved 4 and died
        r.try_push(7).unwrap();
        assert_eq!(r.try_pop(), Err(Miss::InFlight));
        let started = st.stuck_since.load(Ordering::Relaxed);
        let got = loop {
            match r.try_pop() {
                Ok(v) => break v,
                Err(Miss::InFlight) => std::thread::yield_now(),
                Err(Miss::Settled) => panic!("a reservation is not empty"),
            }
        };
        assert_eq!(got, 7);
        assert_eq!(st.skipped.load(Ordering::Relaxed), 4);
        // The clock started once, at the first position, and was handed on.
        assert_eq!(st.stuck_since.load(Ordering::Relaxed), started);
    }

    #[test]
    #[cfg_attr(miri, ignore = "walks the whole MAX_WALK, which takes Miri hours")]
    fn a_scribbled_sequence_under_a_reservation_does_not_hang_a_batch_pop() {
        // Slot 0's sequence neither free (0) nor published (1) for
        // position 0, with `tail` saying position 0 is reserved: the
        // repair's CAS from `seq == 0` can never succeed. Both pops must
        // return (found by scribble_fuzz, where clear spun for ever).
        for bad in [u64::MAX, u64::MAX - 4, 1 << 63 | 1] {
            let head = AtomicU64::new(0);
            let tail = AtomicU64::new(0);
            let slots = heap_slots::<i64>(4);
            let st = RepairState::new(0);
            let r = Ring::<i64>::new(&head, &tail, &slots).with_repair(&st);
            r.init();
            tail.store(3, Ordering::Relaxed);
            slots[0].init(bad);
            let mut out = [0; 4];
            assert!(r.try_pop_batch(&mut out).is_err(), "seq {bad}");
            assert!(r.try_pop().is_err(), "seq {bad}");
            assert_eq!(st.recoveries.load(Ordering::Relaxed), 0, "seq {bad}");
        }
    }

    #[test]
    fn a_batch_whose_slots_were_taken_by_peers_keeps_its_order() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i64>(8);
        let r = Ring::<i64>::new(&head, &tail, &slots);
        r.init();
        // A peer with a stale tail hint fills position 1 inside what the
        // batch is about to reserve: reserve first, as the batch would...
        let p = reserve(&tail, 3);
        assert!(slots[1].publish(0, 50));
        // ...and publish as try_push_batch does after its CAS.
        let vals = [1, 2, 3];
        let n = r.publish_run(p, 3, &vals);
        assert_eq!(n, 2, "one value left for the next call");
        assert_eq!(r.try_push_batch(&vals[n..]), Ok(1));
        let mut out = [0; 8];
        assert_eq!(r.try_pop_batch(&mut out), Ok(4));
        assert_eq!(out[..4], [1, 50, 2, 3]);
    }

    #[test]
    fn hostile_counters_and_sequences_never_hang_or_panic() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i32>(4);
        let st = RepairState::new(0);
        let r = Ring::<i32>::new(&head, &tail, &slots).with_repair(&st);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Under Miri a few rounds: a scribbled counter can send an op on its
        // full MAX_WALK, which Miri interprets step by step.
        for _ in 0..if cfg!(miri) { 10 } else { 20_000 } {
            match rnd() % 4 {
                0 => head.store(rnd(), Ordering::Relaxed),
                1 => tail.store(rnd(), Ordering::Relaxed),
                _ => slots[(rnd() & 3) as usize]
                    .word
                    .store(rnd(), Ordering::Relaxed),
            }
            let _ = r.try_push(1);
            let _ = r.try_pop();
            let _ = r.try_push_batch(&[1, 2, 3]);
            let _ = r.try_pop_batch(&mut [0; 3]);
            let _ = r.peek();
            assert!(r.len() <= 4);
        }
    }

    #[test]
    fn batches_stay_fifo_across_laps_and_32_bit_wrap_for_every_width() {
        fn run<T: Element + PartialEq + std::fmt::Debug>(start: u64)
        where
            T::Slot: Default,
        {
            with_ring_at::<T, _>(8, start, |r, _, _| wrap_batches(r, start));
        }
        fn wrap_batches<T: Element + PartialEq + std::fmt::Debug>(r: &Ring<T>, start: u64) {
            let mut next_in = 0i64;
            let mut next_out = 0i64;
            for round in 0..rounds(2000) {
                let k = (round % 11 + 1) as usize;
                let vals: Vec<T> = (0..k as i64).map(|i| T::from_i64(next_in + i)).collect();
                let n = r.try_push_batch(&vals).unwrap_or(0);
                next_in += n as i64;
                let mut out = vec![T::from_i64(0); (round % 7 + 1) as usize];
                let m = r.try_pop_batch(&mut out).unwrap_or(0);
                for v in &out[..m] {
                    assert_eq!(
                        *v,
                        T::from_i64(next_out),
                        "{} start {start} round {round}",
                        std::any::type_name::<T>()
                    );
                    next_out += 1;
                }
                assert!(r.len() <= 8);
            }
            assert!(next_in > 2 * rounds(2000), "batches moved {next_in} items");
            assert_eq!(r.pushed() - start, next_in as u64);
        }
        for start in [0, (1u64 << 32) - 13] {
            run::<i64>(start);
            run::<i32>(start);
            run::<i16>(start);
        }
    }

    /// Two producers (batches of varying size, or single pushes) and two
    /// consumers (batches or single pops) on a ring of 16, with the
    /// repair bound at 0 so reservations are given up as soon as a
    /// consumer meets one: nothing lost, nothing duplicated, each
    /// producer's items in order at each consumer.
    fn threads_mixed(batches: bool, after_ns: u64) {
        use std::sync::Arc;
        struct S {
            head: AtomicU64,
            tail: AtomicU64,
            slots: Vec<Slot64>,
            st: RepairState,
        }
        let s = Arc::new(S {
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            slots: heap_slots::<i64>(16),
            st: RepairState::new(after_ns),
        });
        fn ring(s: &S) -> Ring<'_, i64> {
            Ring::<i64>::new(&s.head, &s.tail, &s.slots).with_repair(&s.st)
        }
        ring(&s).init();
        const PER: i64 = 20_000;
        let mut producers = vec![];
        for p in 0..2i64 {
            let s = s.clone();
            producers.push(std::thread::spawn(move || {
                let r = ring(&s);
                let vals: Vec<i64> = (0..PER).map(|i| p * PER + i).collect();
                let mut i = 0usize;
                let mut k = 1usize;
                while i < vals.len() {
                    let end = (i + k).min(vals.len());
                    let res = if batches && p == 0 {
                        r.try_push_batch(&vals[i..end])
                    } else {
                        r.try_push(vals[i]).map(|()| 1)
                    };
                    match res {
                        Ok(n) => i += n,
                        Err(_) => std::thread::yield_now(),
                    }
                    k = k % 9 + 1;
                }
            }));
        }
        let taken = Arc::new(AtomicU64::new(0));
        let mut consumers = vec![];
        for c in 0..2usize {
            let (s, taken) = (s.clone(), taken.clone());
            consumers.push(std::thread::spawn(move || {
                let r = ring(&s);
                let mut got = vec![];
                let mut buf = [0i64; 12];
                let mut k = c + 1;
                while taken.load(Ordering::Relaxed) < 2 * PER as u64 {
                    let res = if batches && c == 0 {
                        r.try_pop_batch(&mut buf[..k])
                    } else {
                        r.try_pop().map(|v| {
                            buf[0] = v;
                            1
                        })
                    };
                    match res {
                        Ok(n) => {
                            got.extend_from_slice(&buf[..n]);
                            taken.fetch_add(n as u64, Ordering::Relaxed);
                        }
                        Err(_) => std::thread::yield_now(),
                    }
                    k = k % 12 + 1;
                }
                got
            }));
        }
        for p in producers {
            p.join().unwrap();
        }
        let mut all = vec![];
        for c in consumers {
            let got = c.join().unwrap();
            for p in 0..2 {
                let mine: Vec<i64> = got.iter().copied().filter(|v| v / PER == p).collect();
                assert!(
                    mine.windows(2).all(|w| w[0] < w[1]),
                    "producer {p} reordered"
                );
            }
            all.extend(got);
        }
        all.sort_unstable();
        assert_eq!(all, (0..2 * PER).collect::<Vec<_>>());
        let r = ring(&s);
        let skipped = s.st.skipped.load(Ordering::Relaxed);
        assert_eq!(r.pushed() - skipped, 2 * PER as u64);
        assert_eq!(r.popped() - skipped, 2 * PER as u64);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "concurrency is loom's (the Miri cas128 is not atomic against take)"
    )]
    fn threads_lose_and_duplicate_nothing() {
        threads_mixed(false, REPAIR_AFTER_NS);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "concurrency is loom's (the Miri cas128 is not atomic against take)"
    )]
    fn threads_with_batches_lose_and_duplicate_nothing_and_keep_order() {
        threads_mixed(true, REPAIR_AFTER_NS);
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "concurrency is loom's (the Miri cas128 is not atomic against take)"
    )]
    fn threads_with_instant_repairs_lose_and_duplicate_nothing() {
        threads_mixed(true, 0);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// The models run the real ring code over Int32 slots (one-word CAS,
    /// all loom atomics). Values are small, so i32 is no restriction.
    struct Shared {
        head: AtomicU64,
        tail: AtomicU64,
        slots: Vec<Slot32>,
        stuck_pos: AtomicU64,
        stuck_since: AtomicU64,
        skipped: AtomicU64,
        recoveries: AtomicU64,
    }

    impl Shared {
        fn new(cap: usize) -> Arc<Self> {
            let s = Arc::new(Shared {
                head: AtomicU64::new(0),
                tail: AtomicU64::new(0),
                slots: heap_slots::<i32>(cap),
                stuck_pos: AtomicU64::new(0),
                stuck_since: AtomicU64::new(0),
                skipped: AtomicU64::new(0),
                recoveries: AtomicU64::new(0),
            });
            s.ring().init();
            s
        }
        /// Repair with a zero bound: a consumer gives up any reservation
        /// it meets at once, the harshest schedule for the producers.
        fn ring(&self) -> Ring<'_, i32> {
            Ring::new(&self.head, &self.tail, &self.slots).with_repair(self)
        }
    }

    impl RepairSource for Shared {
        fn repair(&self) -> Repair<'_> {
            Repair {
                stuck_pos: &self.stuck_pos,
                stuck_since: &self.stuck_since,
                skipped: &self.skipped,
                recoveries: &self.recoveries,
                after_ns: 0,
            }
        }
    }

    fn push_all(s: &Shared, vals: &[i32]) {
        for &v in vals {
            while s.ring().try_push(v).is_err() {
                loom::thread::yield_now();
            }
        }
    }

    /// Spin loops multiply loom's schedules; a preemption bound of 3 keeps
    /// the search finite while still covering every interleaving that
    /// needs fewer than four forced switches (all the classic ring bugs
    /// need one or two).
    fn model(f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(f);
    }

    fn pop_n(s: &Shared, n: usize) -> Vec<i32> {
        let mut got = Vec::new();
        while got.len() < n {
            match s.ring().try_pop() {
                Ok(v) => got.push(v),
                Err(_) => loom::thread::yield_now(),
            }
        }
        got
    }

    /// One producer, one consumer, capacity 2, three items (so the ring
    /// laps): FIFO, nothing lost, nothing duplicated.
    #[test]
    fn loom_spsc_fifo_across_a_lap() {
        model(|| {
            let s = Shared::new(2);
            let p = {
                let s = s.clone();
                loom::thread::spawn(move || push_all(&s, &[1, 2, 3]))
            };
            assert_eq!(pop_n(&s, 3), vec![1, 2, 3]);
            p.join().unwrap();
            assert_eq!(s.ring().len(), 0);
        });
    }

    /// Try each value once (no spinning: loom explores every interleaving
    /// of the single attempt); returns the ones that went in.
    fn try_push_each(s: &Shared, vals: &[i32]) -> Vec<i32> {
        vals.iter()
            .copied()
            .filter(|&v| s.ring().try_push(v).is_ok())
            .collect()
    }

    fn drain(s: &Shared) -> Vec<i32> {
        let mut got = Vec::new();
        while let Ok(v) = s.ring().try_pop() {
            got.push(v);
        }
        got
    }

    fn from(got: &[i32], tens: i32) -> Vec<i32> {
        got.iter().copied().filter(|v| v / 10 == tens).collect()
    }

    /// Two producers race for the two slots while the main thread pops
    /// once: whatever was accepted arrives exactly once, each producer's
    /// items in order, and nothing rejected appears.
    #[test]
    fn loom_two_producers_one_consumer_at_capacity_two() {
        model(|| {
            let s = Shared::new(2);
            let a = {
                let s = s.clone();
                loom::thread::spawn(move || try_push_each(&s, &[10, 11]))
            };
            let b = {
                let s = s.clone();
                loom::thread::spawn(move || try_push_each(&s, &[20, 21]))
            };
            let mut got: Vec<i32> = s.ring().try_pop().into_iter().collect();
            let pushed_a = a.join().unwrap();
            let pushed_b = b.join().unwrap();
            got.extend(drain(&s));
            assert_eq!(from(&got, 1), pushed_a);
            assert_eq!(from(&got, 2), pushed_b);
            assert_eq!(got.len(), pushed_a.len() + pushed_b.len());
            assert!(got.len() <= 3, "capacity 2 plus one pop: {got:?}");
        });
    }

    /// Two consumers race for two items: each item is taken exactly once.
    #[test]
    fn loom_two_consumers_never_duplicate() {
        model(|| {
            let s = Shared::new(2);
            assert_eq!(try_push_each(&s, &[1, 2]), vec![1, 2]);
            let c = {
                let s = s.clone();
                loom::thread::spawn(move || s.ring().try_pop().ok())
            };
            let mine = s.ring().try_pop().ok();
            let theirs = c.join().unwrap();
            let mut all: Vec<i32> = mine.into_iter().chain(theirs).chain(drain(&s)).collect();
            all.sort_unstable();
            assert_eq!(all, vec![1, 2]);
        });
    }

    /// Fill a fresh ring with `pre`, pop `skip` of them (so later pushes
    /// cross the lap boundary), and return it.
    fn primed(cap: usize, pre: &[i32], skip: usize) -> Arc<Shared> {
        let s = Shared::new(cap);
        assert_eq!(try_push_each(&s, pre), pre);
        for &want in &pre[..skip] {
            assert_eq!(s.ring().try_pop(), Ok(want));
        }
        s
    }

    /// A producer pushes a batch (two attempts) while a consumer, giving
    /// up reservations at once, pops a batch of two and then one item:
    /// whatever the producer counted as pushed comes out once, in order,
    /// after what was there before; nothing else comes out.
    fn batch_push_vs_pop(cap: usize, pre: &'static [i32], skip: usize, batch: &'static [i32]) {
        model(move || {
            let s = primed(cap, pre, skip);
            let p = {
                let s = s.clone();
                loom::thread::spawn(move || {
                    let r = s.ring();
                    let n1 = r.try_push_batch(batch).unwrap_or(0);
                    let n2 = r.try_push_batch(&batch[n1..]).unwrap_or(0);
                    batch[..n1 + n2].to_vec()
                })
            };
            let mut buf = [0i32; 2];
            let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
            let mut got = buf[..n].to_vec();
            got.extend(s.ring().try_pop().ok());
            let pushed = p.join().unwrap();
            got.extend(drain(&s));
            let mut want = pre[skip..].to_vec();
            want.extend(&pushed);
            assert_eq!(got, want);
        });
    }

    #[test]
    fn loom_batch_push_vs_concurrent_pop_at_capacity_two() {
        batch_push_vs_pop(2, &[1], 0, &[2, 3, 4]);
    }

    #[test]
    fn loom_batch_push_vs_concurrent_pop_at_capacity_four() {
        batch_push_vs_pop(4, &[1, 2, 3], 2, &[4, 5, 6, 7]);
    }

    /// A consumer takes two batches (single attempts) while a producer
    /// pushes items one by one: FIFO, nothing lost, nothing duplicated.
    fn batch_pop_vs_push(
        cap: usize,
        pre: &'static [i32],
        skip: usize,
        pushes: &'static [i32],
        run: usize,
    ) {
        model(move || {
            let s = primed(cap, pre, skip);
            let p = {
                let s = s.clone();
                loom::thread::spawn(move || try_push_each(&s, pushes))
            };
            let mut got = Vec::new();
            for _ in 0..2 {
                let mut buf = [0i32; 4];
                let n = s.ring().try_pop_batch(&mut buf[..run]).unwrap_or(0);
                got.extend(&buf[..n]);
            }
            let pushed = p.join().unwrap();
            got.extend(drain(&s));
            let mut want = pre[skip..].to_vec();
            want.extend(&pushed);
            assert_eq!(got, want);
        });
    }

    #[test]
    fn loom_batch_pop_vs_concurrent_push_at_capacity_two() {
        batch_pop_vs_push(2, &[1, 2], 1, &[3, 4], 3);
    }

    #[test]
    fn loom_batch_pop_vs_concurrent_push_at_capacity_four() {
        batch_pop_vs_push(4, &[1, 2, 3, 4], 2, &[5, 6, 7], 4);
    }

    /// Two batch producers race at capacity four while the main thread pops
    /// a batch: each producer's accepted items arrive once and in order.
    #[test]
    fn loom_two_batch_producers_never_overlap() {
        model(|| {
            let s = primed(4, &[1], 1);
            let spawn = |vals: &'static [i32]| {
                let s = s.clone();
                loom::thread::spawn(move || {
                    let n = s.ring().try_push_batch(vals).unwrap_or(0);
                    vals[..n].to_vec()
                })
            };
            let a = spawn(&[10, 11, 12]);
            let b = spawn(&[20, 21]);
            let mut buf = [0i32; 4];
            let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
            let mut got = buf[..n].to_vec();
            let (pa, pb) = (a.join().unwrap(), b.join().unwrap());
            got.extend(drain(&s));
            assert_eq!(from(&got, 1), pa);
            assert_eq!(from(&got, 2), pb);
            assert_eq!(got.len(), pa.len() + pb.len());
        });
    }

    /// Two batch consumers race for three items: each is taken once, and
    /// each consumer's run is in queue order.
    #[test]
    fn loom_two_batch_consumers_never_duplicate() {
        model(|| {
            let s = primed(4, &[1, 2, 3], 0);
            let c = {
                let s = s.clone();
                loom::thread::spawn(move || {
                    let mut buf = [0i32; 2];
                    let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
                    buf[..n].to_vec()
                })
            };
            let mut buf = [0i32; 2];
            let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
            let mine = buf[..n].to_vec();
            let theirs = c.join().unwrap();
            for run in [&mine, &theirs] {
                assert!(run.windows(2).all(|w| w[0] < w[1]), "{run:?}");
            }
            let mut all: Vec<i32> = mine.into_iter().chain(theirs).chain(drain(&s)).collect();
            all.sort_unstable();
            assert_eq!(all, vec![1, 2, 3]);
        });
    }

    /// Slot repair: a producer "dies" right after reserving two positions
    /// (it never publishes). A live producer pushes after it and a
    /// consumer, repairing at once, must get the live item: the dead
    /// reservation never wedges the ring, and nothing appears twice.
    #[test]
    fn loom_dead_reservation_is_passed() {
        model(|| {
            let s = Shared::new(4);
            let dead = {
                let s = s.clone();
                loom::thread::spawn(move || {
                    let _ = s
                        .tail
                        .compare_exchange(0, 2, Ordering::SeqCst, Ordering::Relaxed);
                })
            };
            let live = {
                let s = s.clone();
                loom::thread::spawn(move || try_push_each(&s, &[7]))
            };
            let pushed = live.join().unwrap();
            dead.join().unwrap();
            let got = drain(&s);
            assert_eq!(got, pushed, "the live item, once; nothing from the hole");
            let skipped = s.skipped.load(Ordering::Relaxed);
            assert_eq!(s.ring().pushed() - skipped, pushed.len() as u64);
            assert_eq!(s.ring().popped() - skipped, pushed.len() as u64);
        });
    }

    /// Slot repair against a live but slow producer: it reserved two
    /// positions and publishes them while a consumer gives up whatever it
    /// finds unpublished. The producer's publish CAS and the consumer's
    /// give-up CAS race on each slot; whatever the producer counts as
    /// pushed arrives once and in order, the rest it still holds.
    #[test]
    fn loom_slow_reservation_races_the_repair() {
        model(|| {
            let s = Shared::new(4);
            let c = {
                let s = s.clone();
                loom::thread::spawn(move || s.ring().try_pop().ok())
            };
            let n = s.ring().try_push_batch(&[1, 2]).unwrap_or(0);
            let pushed = [1, 2][..n].to_vec();
            let mut got: Vec<i32> = c.join().unwrap().into_iter().collect();
            got.extend(drain(&s));
            assert_eq!(got, pushed);
        });
    }

    /// A producer killed between its slot CAS and its tail store, and a
    /// consumer killed between its slot CAS and its head store, leave only
    /// stale hints: a later producer and consumer carry on in order.
    #[test]
    fn loom_stale_hints_after_a_kill() {
        model(|| {
            let s = Shared::new(2);
            // "Killed" producer: published position 0, tail still 0.
            assert!(s.slots[0].publish(0, 1));
            let p = {
                let s = s.clone();
                loom::thread::spawn(move || try_push_each(&s, &[2, 3]))
            };
            // "Killed" consumer: takes position 0, head stays 0.
            let first = s.slots[0].take(0, 2);
            let pushed = p.join().unwrap();
            let rest = drain(&s);
            assert_eq!(first, Some(1));
            assert_eq!(rest, pushed);
        });
    }

    /// Hints three laps behind the slots, as a process preempted before
    /// its hint store leaves them (and under loom every walk over done
    /// slots leaps at once), then on another 2^32 lap of the narrow
    /// sequences: a producer and two consumers racing from there lose and
    /// duplicate nothing, and each consumer takes in order.
    #[test]
    fn loom_hints_far_behind() {
        for lag in [6u64, (1 << 31) + 6] {
            model(move || {
                let s = Shared::new(2);
                let start = 1u64 << 33;
                for p in start..start + 2 {
                    s.slots[(p & 1) as usize].init(p & !1);
                }
                s.head.store(start - lag, Ordering::Relaxed);
                s.tail.store(start - lag, Ordering::Relaxed);
                let p = {
                    let s = s.clone();
                    loom::thread::spawn(move || try_push_each(&s, &[1, 2]))
                };
                let c = {
                    let s = s.clone();
                    loom::thread::spawn(move || s.ring().try_pop().ok())
                };
                let mine = s.ring().try_pop().ok();
                let pushed = p.join().unwrap();
                assert_eq!(pushed, [1, 2], "room for both, lag {lag:#x}");
                let theirs = c.join().unwrap();
                let rest = drain(&s);
                let mut all: Vec<i32> = mine.into_iter().chain(theirs).chain(rest).collect();
                all.sort_unstable();
                assert_eq!(all, pushed, "lag {lag:#x}");
            });
        }
    }
}
