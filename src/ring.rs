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
//! The waiting side (futex sleep when full or empty) lives in `queue.rs`;
//! the ring only offers non-blocking operations plus what the waiters need.

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
                // waiter announcement + tail load in `queue.rs`: either this
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
}
