//! Bounded MPMC ring of integers: Dmitry Vyukov's bounded MPMC queue
//! (1024cores.net, "Bounded MPMC queue"), as crossbeam's `ArrayQueue` does it,
//! laid out in shared memory.
//!
//! Every slot carries a sequence number. A slot at position `p` is free for
//! the producer of lap `p` when `seq == p`, and holds that producer's value
//! for the consumer when `seq == p + 1`; the consumer frees it for the next
//! lap with `seq = p + capacity`. Producers and consumers claim positions by
//! CAS on `tail` and `head`; nobody ever waits on another thread to make
//! progress except for the short window between a claim and its publish.
//!
//! Int32 and Int16 slots keep a 32-bit sequence: the difference `seq - pos`
//! is taken in wrapping 32-bit arithmetic and read as signed, which is exact
//! while capacity stays below 2^31 (we cap it at 2^30).
//!
//! Batches use one claim for many items ([`Ring::try_push_batch`],
//! [`Ring::try_pop_batch`]): the lever of the LCRQ-on-LIFO deques, one
//! counter step for N items instead of N CAS, kept safe for Vyukov's ring by
//! checking the N slots before the step.
//!
//! The waiting side (futex sleep when full or empty) lives in `wait.rs`
//! and `intq.rs`; the ring only offers non-blocking operations plus what the
//! waiters need.

use crate::sync::{spin_hint, AtomicI16, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

/// One element type with its slot layout. Implemented for `i64`, `i32`,
/// `i16`; sealed.
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

/// What the ring needs from a slot.
pub trait SlotOps<T> {
    /// The slot's sequence number, widened. Acquire.
    fn seq(&self) -> u64;
    /// Publish a new sequence number. Release.
    fn set_seq(&self, s: u64);
    /// Read the value (Relaxed: ordered by the sequence number).
    fn value(&self) -> T;
    /// Write the value (Relaxed: ordered by the sequence number).
    fn set_value(&self, v: T);
    /// `seq - pos` as a signed distance, in the slot's own width.
    fn diff(&self, seq: u64, pos: u64) -> i64;
    /// Initialise the sequence number (create time only).
    fn init(&self, s: u64);
}

/// Int64 slot: 16 bytes.
#[repr(C)]
pub struct Slot64 {
    seq: AtomicU64,
    val: AtomicI64,
}

/// Int32 slot: 8 bytes.
#[repr(C)]
pub struct Slot32 {
    seq: AtomicU32,
    val: AtomicI32,
}

/// Int16 slot: 8 bytes (2 bytes of padding keep the sequence aligned).
#[repr(C)]
pub struct Slot16 {
    seq: AtomicU32,
    val: AtomicI16,
    _pad: u16,
}

#[cfg(not(loom))]
const _: () = {
    assert!(std::mem::size_of::<Slot64>() == 16);
    assert!(std::mem::size_of::<Slot32>() == 8);
    assert!(std::mem::size_of::<Slot16>() == 8);
};

macro_rules! slot_impl {
    ($slot:ty, $t:ty, $seq:ty, $sseq:ty, $variant:expr) => {
        impl SlotOps<$t> for $slot {
            #[inline(always)]
            fn seq(&self) -> u64 {
                self.seq.load(Ordering::Acquire) as u64
            }
            #[inline(always)]
            fn set_seq(&self, s: u64) {
                self.seq.store(s as $seq, Ordering::Release)
            }
            #[inline(always)]
            fn value(&self) -> $t {
                self.val.load(Ordering::Relaxed)
            }
            #[inline(always)]
            fn set_value(&self, v: $t) {
                self.val.store(v, Ordering::Relaxed)
            }
            #[inline(always)]
            fn diff(&self, seq: u64, pos: u64) -> i64 {
                (seq as $seq).wrapping_sub(pos as $seq) as $sseq as i64
            }
            fn init(&self, s: u64) {
                self.seq.store(s as $seq, Ordering::Relaxed);
                self.val.store(0, Ordering::Relaxed);
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

slot_impl!(Slot64, i64, u64, i64, crate::layout::Variant::Int64);
slot_impl!(Slot32, i32, u32, i32, crate::layout::Variant::Int32);
slot_impl!(Slot16, i16, u32, i32, crate::layout::Variant::Int16);

/// Outcome of a non-blocking attempt that found no room or no item, telling
/// a waiter whether sleeping is safe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// Really full (push) or really empty (pop): every claimed position is
    /// published, so a sleeper will be woken by the next change.
    Settled,
    /// A peer has claimed a position but not yet published it; sleeping now
    /// could miss its wake-up, so the caller should spin and retry.
    InFlight,
}

/// The ring: views of the head and tail counters and the slot array.
///
/// The counters and slots usually live in a shared mapping; the ring only
/// borrows them.
pub struct Ring<'a, T: Element> {
    head: &'a AtomicU64,
    tail: &'a AtomicU64,
    slots: &'a [T::Slot],
    mask: u64,
}

impl<'a, T: Element> Ring<'a, T> {
    /// A ring over `slots` (whose length is a power of two).
    pub fn new(head: &'a AtomicU64, tail: &'a AtomicU64, slots: &'a [T::Slot]) -> Self {
        debug_assert!(slots.len().is_power_of_two());
        Ring {
            head,
            tail,
            slots,
            mask: slots.len() as u64 - 1,
        }
    }

    /// Set every slot free for lap 0 and both counters to 0. Create only.
    pub fn init(&self) {
        for (i, s) in self.slots.iter().enumerate() {
            s.init(i as u64);
        }
        self.head.store(0, Ordering::Relaxed);
        self.tail.store(0, Ordering::Relaxed);
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

    /// Push `v` if there is room.
    #[inline]
    pub fn try_push(&self, v: T) -> Result<(), Miss> {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(pos);
            let seq = slot.seq();
            let d = slot.diff(seq, pos);
            if d == 0 {
                // SYNC POINT: the SeqCst CAS on tail pairs with the SeqCst
                // waiter announcement + tail load in `wait.rs`: either this
                // producer's later waiter check sees the consumer waiting, or
                // the consumer sees this claim and does not sleep.
                match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        slot.set_value(v);
                        // SYNC POINT: release the value to the consumer
                        // that acquires `seq == pos + 1`.
                        slot.set_seq(pos.wrapping_add(1));
                        return Ok(());
                    }
                    Err(cur) => pos = cur,
                }
            } else if d < 0 {
                // The slot still holds last lap's value. Full, unless a
                // consumer has claimed it and is about to release it.
                let head = self.head.load(Ordering::SeqCst);
                return Err(if pos.wrapping_sub(head) < self.capacity() {
                    Miss::InFlight
                } else {
                    Miss::Settled
                });
            } else {
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Pop the oldest value if there is one.
    #[inline]
    pub fn try_pop(&self) -> Result<T, Miss> {
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(pos);
            let seq = slot.seq();
            let d = slot.diff(seq, pos.wrapping_add(1));
            if d == 0 {
                // SYNC POINT: as in try_push, with the roles swapped.
                match self.head.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        let v = slot.value();
                        // SYNC POINT: free the slot for the producer of the
                        // next lap, which acquires `seq == pos + capacity`.
                        slot.set_seq(pos.wrapping_add(self.capacity()));
                        return Ok(v);
                    }
                    Err(cur) => pos = cur,
                }
            } else if d < 0 {
                // Not yet published. Empty, unless a producer has claimed
                // this position and is about to publish it.
                let tail = self.tail.load(Ordering::SeqCst);
                return Err(if tail != pos {
                    Miss::InFlight
                } else {
                    Miss::Settled
                });
            } else {
                pos = self.head.load(Ordering::Relaxed);
            }
        }
    }

    /// Push the longest prefix of `vals` that fits, claiming it with one
    /// CAS; returns how many went in (at least one unless `vals` is empty).
    ///
    /// Batch reservation: the producer checks that the slots of positions
    /// `tail .. tail + m` are all free for this lap (`seq == pos + i`),
    /// claims them all with one CAS of `tail` from `pos` to `pos + m`, then
    /// fills and publishes each. A batch of `k` costs one contended atomic
    /// instead of `k`. `m` is the free prefix (at most `vals.len()`): a slot
    /// still holding last lap's value ends it, and the caller pushes the
    /// rest with another call. A blind `fetch_add(k)` (as LCRQ-style rings
    /// do) could claim positions whose slots are not free and leave them
    /// unpublished for an unbounded time, which would break the promise
    /// that a claimed position is published promptly; checking first and
    /// claiming with a CAS keeps it.
    ///
    /// The prefix check is stable until the CAS: slot `pos + i` leaves
    /// `seq == pos + i` only when the producer that claimed position
    /// `pos + i` publishes it, and nobody has claimed it while `tail` is
    /// still `pos` (the counters only grow).
    #[inline]
    pub fn try_push_batch(&self, vals: &[T]) -> Result<usize, Miss> {
        if vals.is_empty() {
            return Ok(0);
        }
        let want = (vals.len() as u64).min(self.capacity());
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(pos);
            let d = slot.diff(slot.seq(), pos);
            if d == 0 {
                let mut m = 1u64;
                while m < want {
                    let p = pos.wrapping_add(m);
                    let s = self.slot(p);
                    // Acquire (in `seq`): the consumer of last lap has read
                    // the old value before it released the slot to us.
                    if s.diff(s.seq(), p) != 0 {
                        break;
                    }
                    m += 1;
                }
                // SYNC POINT: the same SeqCst claim as in try_push, for all
                // `m` positions at once; a consumer about to sleep on an
                // empty ring either sees `tail` move or is seen waiting by
                // our wake call, which the caller makes for `m` items.
                match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(m),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        for (i, &v) in vals[..m as usize].iter().enumerate() {
                            let p = pos.wrapping_add(i as u64);
                            let s = self.slot(p);
                            s.set_value(v);
                            // SYNC POINT: release each value to the consumer
                            // that acquires `seq == p + 1`; earlier items
                            // are consumable while later ones are filled.
                            s.set_seq(p.wrapping_add(1));
                        }
                        return Ok(m as usize);
                    }
                    Err(cur) => pos = cur,
                }
            } else if d < 0 {
                let head = self.head.load(Ordering::SeqCst);
                return Err(if pos.wrapping_sub(head) < self.capacity() {
                    Miss::InFlight
                } else {
                    Miss::Settled
                });
            } else {
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Pop the longest published run at the front, up to `out.len()` items,
    /// with one CAS; returns how many were written to `out` (at least one
    /// unless `out` is empty).
    ///
    /// The mirror image of [`Ring::try_push_batch`]: check that positions
    /// `head .. head + m` are published for this lap (`seq == pos + i + 1`),
    /// claim them with one CAS of `head` by `m`, then read each value and
    /// free its slot for the next lap. A position claimed by a producer but
    /// not yet published ends the run.
    #[inline]
    pub fn try_pop_batch(&self, out: &mut [T]) -> Result<usize, Miss> {
        if out.is_empty() {
            return Ok(0);
        }
        let want = (out.len() as u64).min(self.capacity());
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(pos);
            let d = slot.diff(slot.seq(), pos.wrapping_add(1));
            if d == 0 {
                let mut m = 1u64;
                while m < want {
                    let p = pos.wrapping_add(m);
                    let s = self.slot(p);
                    // Acquire (in `seq`): pairs with the producer's
                    // publishing store, so its value is visible below.
                    if s.diff(s.seq(), p.wrapping_add(1)) != 0 {
                        break;
                    }
                    m += 1;
                }
                // SYNC POINT: as in try_push_batch, with the roles swapped.
                match self.head.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(m),
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        for (i, o) in out[..m as usize].iter_mut().enumerate() {
                            let p = pos.wrapping_add(i as u64);
                            let s = self.slot(p);
                            *o = s.value();
                            // SYNC POINT: free the slot for the producer of
                            // the next lap (acquires `seq == p + capacity`).
                            s.set_seq(p.wrapping_add(self.capacity()));
                        }
                        return Ok(m as usize);
                    }
                    Err(cur) => pos = cur,
                }
            } else if d < 0 {
                let tail = self.tail.load(Ordering::SeqCst);
                return Err(if tail != pos {
                    Miss::InFlight
                } else {
                    Miss::Settled
                });
            } else {
                pos = self.head.load(Ordering::Relaxed);
            }
        }
    }

    /// Best-effort look at the oldest value without taking it.
    pub fn peek(&self) -> Option<T> {
        for _ in 0..64 {
            let pos = self.head.load(Ordering::Acquire);
            let slot = self.slot(pos);
            let seq = slot.seq();
            if slot.diff(seq, pos.wrapping_add(1)) != 0 {
                if self.head.load(Ordering::Acquire) == pos {
                    return None;
                }
                continue;
            }
            let v = slot.value();
            // The value is the one published for `pos` only if nobody popped
            // it (and a producer refilled the slot) meanwhile.
            if slot.seq() == seq && self.head.load(Ordering::Acquire) == pos {
                return Some(v);
            }
            spin_hint();
        }
        None
    }

    /// Items in the ring, clamped to `0..=capacity`.
    pub fn len(&self) -> u64 {
        let head = self.head.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Acquire);
        let n = tail.wrapping_sub(head);
        if n > (1 << 62) {
            0
        } else {
            n.min(self.capacity())
        }
    }

    /// Whether the ring is empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Positions claimed so far by producers (== successful pushes).
    pub fn pushed(&self) -> u64 {
        self.tail.load(Ordering::Relaxed)
    }

    /// Positions claimed so far by consumers (== successful pops).
    pub fn popped(&self) -> u64 {
        self.head.load(Ordering::Relaxed)
    }
}

/// Heap-allocated slots for tests and loom models.
#[cfg(test)]
pub(crate) fn heap_slots<T: Element>(n: usize) -> Vec<T::Slot>
where
    T::Slot: Default,
{
    (0..n).map(|_| T::Slot::default()).collect()
}

#[cfg(test)]
impl Default for Slot64 {
    fn default() -> Self {
        Slot64 {
            seq: AtomicU64::new(0),
            val: AtomicI64::new(0),
        }
    }
}

#[cfg(test)]
impl Default for Slot32 {
    fn default() -> Self {
        Slot32 {
            seq: AtomicU32::new(0),
            val: AtomicI32::new(0),
        }
    }
}

#[cfg(test)]
impl Default for Slot16 {
    fn default() -> Self {
        Slot16 {
            seq: AtomicU32::new(0),
            val: AtomicI16::new(0),
            _pad: 0,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn with_ring<T: Element, R>(cap: usize, f: impl FnOnce(&Ring<T>) -> R) -> R
    where
        T::Slot: Default,
    {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<T>(cap);
        let r = Ring::<T>::new(&head, &tail, &slots);
        r.init();
        f(&r)
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
                for lap in 0..1000i64 {
                    for k in 0..5 {
                        r.try_push(T::from_i64(lap * 5 + k)).unwrap();
                    }
                    for k in 0..5 {
                        assert_eq!(r.try_pop().unwrap(), T::from_i64(lap * 5 + k));
                    }
                }
                assert_eq!(r.pushed(), 5000);
                assert_eq!(r.popped(), 5000);
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
            slots[(p & 3) as usize].init(p);
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
    fn batch_push_takes_the_free_prefix_and_batch_pop_the_published_run() {
        with_ring::<i64, _>(4, |r| {
            assert_eq!(r.try_push_batch(&[]), Ok(0));
            assert_eq!(r.try_pop_batch(&mut []), Ok(0));
            assert_eq!(r.try_pop_batch(&mut [0; 4]), Err(Miss::Settled));
            assert_eq!(r.try_push_batch(&[1, 2, 3, 4, 5, 6]), Ok(4));
            assert_eq!(r.pushed(), 4, "one claim of four positions");
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

    #[test]
    fn batch_pop_stops_at_a_claimed_but_unpublished_position() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i64>(4);
        let r = Ring::<i64>::new(&head, &tail, &slots);
        r.init();
        assert_eq!(r.try_push_batch(&[1, 2]), Ok(2));
        // A producer claims position 2 and has not published it yet.
        tail.store(3, Ordering::SeqCst);
        let mut out = [0; 4];
        assert_eq!(r.try_pop_batch(&mut out), Ok(2));
        assert_eq!(out[..2], [1, 2]);
        assert_eq!(r.try_pop_batch(&mut out), Err(Miss::InFlight));
        slots[2].set_value(3);
        slots[2].set_seq(3);
        assert_eq!(r.try_pop_batch(&mut out), Ok(1));
        assert_eq!(out[0], 3);
        assert_eq!(r.try_pop_batch(&mut out), Err(Miss::Settled));
    }

    #[test]
    fn batch_push_stops_at_a_claimed_but_unreleased_slot() {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i64>(2);
        let r = Ring::<i64>::new(&head, &tail, &slots);
        r.init();
        assert_eq!(r.try_push_batch(&[1, 2]), Ok(2));
        assert_eq!(r.try_push_batch(&[3]), Err(Miss::Settled));
        // A consumer claims position 0 and has not released its slot yet.
        head.store(1, Ordering::SeqCst);
        assert_eq!(r.try_push_batch(&[3, 4]), Err(Miss::InFlight));
        slots[0].set_seq(2);
        assert_eq!(r.try_push_batch(&[3, 4]), Ok(1));
        assert_eq!(r.try_pop(), Ok(2));
        assert_eq!(r.try_pop(), Ok(3));
    }

    #[test]
    fn batches_stay_fifo_across_laps_and_32_bit_wrap_for_every_width() {
        fn run<T: Element + PartialEq + std::fmt::Debug>(start: u64)
        where
            T::Slot: Default,
        {
            let head = AtomicU64::new(start);
            let tail = AtomicU64::new(start);
            let slots = heap_slots::<T>(8);
            let r = Ring::<T>::new(&head, &tail, &slots);
            for p in start..start + 8 {
                slots[(p & 7) as usize].init(p);
            }
            let mut next_in = 0i64;
            let mut next_out = 0i64;
            for round in 0..2000i64 {
                let k = (round % 11 + 1) as usize;
                let vals: Vec<T> = (0..k as i64).map(|i| T::from_i64(next_in + i)).collect();
                let n = r.try_push_batch(&vals).unwrap_or(0);
                next_in += n as i64;
                let mut out = vec![T::from_i64(0); (round % 7 + 1) as usize];
                let m = r.try_pop_batch(&mut out).unwrap_or(0);
                for v in &out[..m] {
                    assert_eq!(*v, T::from_i64(next_out));
                    next_out += 1;
                }
                assert!(r.len() <= 8);
            }
            assert!(next_in > 4000, "batches moved {next_in} items");
            assert_eq!(r.pushed() - start, next_in as u64);
        }
        for start in [0, (1u64 << 32) - 13] {
            run::<i64>(start);
            run::<i32>(start);
            run::<i16>(start);
        }
    }

    #[test]
    fn threads_with_batches_lose_and_duplicate_nothing_and_keep_order() {
        use std::sync::Arc;
        let head = Arc::new(AtomicU64::new(0));
        let tail = Arc::new(AtomicU64::new(0));
        let slots: Arc<Vec<Slot64>> = Arc::new(heap_slots::<i64>(16));
        Ring::<i64>::new(&head, &tail, &slots).init();
        const PER: i64 = 20_000;
        let mut producers = vec![];
        for p in 0..2i64 {
            let (h, t, s) = (head.clone(), tail.clone(), slots.clone());
            producers.push(std::thread::spawn(move || {
                let r = Ring::<i64>::new(&h, &t, &s);
                let vals: Vec<i64> = (0..PER).map(|i| p * PER + i).collect();
                let mut i = 0usize;
                let mut k = 1usize;
                while i < vals.len() {
                    let end = (i + k).min(vals.len());
                    match r.try_push_batch(&vals[i..end]) {
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
            let (h, t, s, taken) = (head.clone(), tail.clone(), slots.clone(), taken.clone());
            consumers.push(std::thread::spawn(move || {
                let r = Ring::<i64>::new(&h, &t, &s);
                let mut got = vec![];
                let mut buf = [0i64; 12];
                let mut k = c + 1;
                while taken.load(Ordering::Relaxed) < 2 * PER as u64 {
                    match r.try_pop_batch(&mut buf[..k]) {
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
            // One consumer sees each producer's items in push order.
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
    }

    #[test]
    fn threads_lose_and_duplicate_nothing() {
        use std::sync::Arc;
        let head = Arc::new(AtomicU64::new(0));
        let tail = Arc::new(AtomicU64::new(0));
        let slots: Arc<Vec<Slot64>> = Arc::new(heap_slots::<i64>(16));
        Ring::<i64>::new(&head, &tail, &slots).init();
        const PER: i64 = 20_000;
        let mut hs = vec![];
        for p in 0..2i64 {
            let (h, t, s) = (head.clone(), tail.clone(), slots.clone());
            hs.push(std::thread::spawn(move || {
                let r = Ring::<i64>::new(&h, &t, &s);
                for i in 0..PER {
                    while r.try_push(p * PER + i).is_err() {
                        std::thread::yield_now();
                    }
                }
                Vec::new()
            }));
        }
        for _ in 0..2 {
            let (h, t, s) = (head.clone(), tail.clone(), slots.clone());
            hs.push(std::thread::spawn(move || {
                let r = Ring::<i64>::new(&h, &t, &s);
                let mut got = vec![];
                while (got.len() as i64) < PER {
                    match r.try_pop() {
                        Ok(v) => got.push(v),
                        Err(_) => std::thread::yield_now(),
                    }
                }
                got
            }));
        }
        let mut all: Vec<i64> = hs.into_iter().flat_map(|h| h.join().unwrap()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..2 * PER).collect::<Vec<_>>());
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    struct Shared {
        head: AtomicU64,
        tail: AtomicU64,
        slots: Vec<Slot64>,
    }

    impl Shared {
        fn new(cap: usize) -> Arc<Self> {
            let s = Arc::new(Shared {
                head: AtomicU64::new(0),
                tail: AtomicU64::new(0),
                slots: heap_slots::<i64>(cap),
            });
            s.ring().init();
            s
        }
        fn ring(&self) -> Ring<'_, i64> {
            Ring::new(&self.head, &self.tail, &self.slots)
        }
    }

    fn push_all(s: &Shared, vals: &[i64]) {
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

    fn pop_n(s: &Shared, n: usize) -> Vec<i64> {
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
    fn try_push_each(s: &Shared, vals: &[i64]) -> Vec<i64> {
        vals.iter()
            .copied()
            .filter(|&v| s.ring().try_push(v).is_ok())
            .collect()
    }

    fn drain(s: &Shared) -> Vec<i64> {
        let mut got = Vec::new();
        while let Ok(v) = s.ring().try_pop() {
            got.push(v);
        }
        got
    }

    /// Two producers race for the two slots of a full-able ring while the
    /// main thread pops once: whatever was accepted arrives exactly once,
    /// each producer's items in order, and nothing rejected appears.
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
            let mut got: Vec<i64> = s.ring().try_pop().into_iter().collect();
            let pushed_a = a.join().unwrap();
            let pushed_b = b.join().unwrap();
            got.extend(drain(&s));
            let from = |lo: i64| {
                got.iter()
                    .copied()
                    .filter(|v| v / 10 == lo)
                    .collect::<Vec<_>>()
            };
            assert_eq!(from(1), pushed_a);
            assert_eq!(from(2), pushed_b);
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
            let mut all: Vec<i64> = mine.into_iter().chain(theirs).chain(drain(&s)).collect();
            all.sort_unstable();
            assert_eq!(all, vec![1, 2]);
        });
    }

    /// Fill a fresh ring with `pre`, pop `skip` of them (so later pushes
    /// cross the lap boundary), and return it.
    fn primed(cap: usize, pre: &[i64], skip: usize) -> Arc<Shared> {
        let s = Shared::new(cap);
        assert_eq!(try_push_each(&s, pre), pre);
        for &want in &pre[..skip] {
            assert_eq!(s.ring().try_pop(), Ok(want));
        }
        s
    }

    /// A batch push (two single attempts, no spinning) races a consumer
    /// popping a batch of two and then one item: everything accepted comes
    /// out once, in order, after what was there before, and the batch never
    /// claims fewer slots than were free when it started.
    fn batch_push_vs_pop(cap: usize, pre: &'static [i64], skip: usize, batch: &'static [i64]) {
        model(move || {
            let s = primed(cap, pre, skip);
            let free = cap - (pre.len() - skip);
            let p = {
                let s = s.clone();
                loom::thread::spawn(move || {
                    let r = s.ring();
                    let n1 = r.try_push_batch(batch).unwrap_or(0);
                    let n2 = r.try_push_batch(&batch[n1..]).unwrap_or(0);
                    batch[..n1 + n2].to_vec()
                })
            };
            let mut buf = [0i64; 2];
            let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
            let mut got = buf[..n].to_vec();
            got.extend(s.ring().try_pop().ok());
            let pushed = p.join().unwrap();
            got.extend(drain(&s));
            assert!(pushed.len() >= free.min(batch.len()), "{pushed:?}");
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
    /// pushes items one by one: FIFO, nothing lost, nothing duplicated, and
    /// no batch ever reads a position that is claimed but not yet published
    /// (it would return a stale value).
    fn batch_pop_vs_push(
        cap: usize,
        pre: &'static [i64],
        skip: usize,
        pushes: &'static [i64],
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
                let mut buf = [0i64; 4];
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
            let spawn = |vals: &'static [i64]| {
                let s = s.clone();
                loom::thread::spawn(move || {
                    let n = s.ring().try_push_batch(vals).unwrap_or(0);
                    vals[..n].to_vec()
                })
            };
            let a = spawn(&[10, 11, 12]);
            let b = spawn(&[20, 21]);
            let mut buf = [0i64; 4];
            let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
            let mut got = buf[..n].to_vec();
            let (pa, pb) = (a.join().unwrap(), b.join().unwrap());
            got.extend(drain(&s));
            let from = |lo: i64| {
                got.iter()
                    .copied()
                    .filter(|v| v / 10 == lo)
                    .collect::<Vec<_>>()
            };
            assert_eq!(from(1), pa);
            assert_eq!(from(2), pb);
            assert_eq!(got.len(), pa.len() + pb.len());
            assert!(
                !pa.is_empty() || !pb.is_empty(),
                "four free slots, nothing pushed"
            );
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
                    let mut buf = [0i64; 2];
                    let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
                    buf[..n].to_vec()
                })
            };
            let mut buf = [0i64; 2];
            let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
            let mine = buf[..n].to_vec();
            let theirs = c.join().unwrap();
            for run in [&mine, &theirs] {
                assert!(run.windows(2).all(|w| w[0] < w[1]), "{run:?}");
            }
            let mut all: Vec<i64> = mine.into_iter().chain(theirs).chain(drain(&s)).collect();
            all.sort_unstable();
            assert_eq!(all, vec![1, 2, 3]);
        });
    }
}
