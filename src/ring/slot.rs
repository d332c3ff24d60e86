//! The slots: what the ring needs from one ([`SlotOps`]), the two-word
//! Int64 slot and the one-word Int32 and Int16 slots. The slot protocol
//! is in the ring's module docs: a slot is written only by the one
//! process that took its position on a counter, with plain stores, and
//! changed by a CAS only in a repair.

use super::Element;
use crate::sync::{AtomicU64, Ordering};

/// What the ring needs from a slot.
pub trait SlotOps<T>: Sync {
    /// The slot's stored sequence (the sequence less the slot's index,
    /// see the module docs), widened. Acquire: a consumer that finds its
    /// position published reads the value after it; a producer that
    /// finds its position free writes the value after the consumer of
    /// the last lap read it.
    fn seq(&self) -> u64;
    /// `seq - pos` as a signed distance, in the slot's own width.
    fn diff(&self, seq: u64, pos: u64) -> i64;
    /// Store `v`, then mark the slot published for the position whose
    /// stored free value is `lap` (Release). Only the producer that
    /// reserved the position calls it.
    fn put(&self, lap: u64, v: T);
    /// The value (after an Acquire [`seq`](Self::seq) that found it
    /// published).
    fn get(&self) -> T;
    /// Mark the slot free for `next`, the next lap's stored free value
    /// (Release, after the value `v` was read; a one-word slot keeps `v`
    /// in its value bits, as the Int64 slot keeps its value word, so a
    /// late reader of the value, as a lease's intent, reads the item).
    /// Only the consumer that claimed the position calls it.
    fn free(&self, next: u64, v: T);
    /// Move the sequence from `from` to `to` if it is `from` (repairs,
    /// tests); the value is left alone.
    fn skip(&self, from: u64, to: u64) -> bool;
    /// Initialise (tests; a new mapping is zero, which is every slot free
    /// for lap 0).
    fn init(&self, s: u64);
}

/// Int64 slot: 16 bytes, 16-byte aligned: the sequence then the value.
/// Format 7 writes the two words with two plain stores (the value first,
/// then the sequence with Release); no 16-byte CAS.
#[repr(C, align(16))]
pub struct Slot64 {
    seq: AtomicU64,
    val: AtomicU64,
}

/// Int32 slot: one 8-byte word, the sequence in the low 32 bits and the
/// value in the high 32 (little-endian: `u32 seq` then `i32 value`).
#[repr(C)]
pub struct Slot32 {
    pub(super) word: AtomicU64,
}

/// Int16 slot: one 8-byte word, the sequence in the low 32 bits, the value
/// in bits 32..48, zero above (`u32 seq`, `i16 value`, 2 bytes padding).
#[repr(C)]
pub struct Slot16 {
    pub(super) word: AtomicU64,
}

#[cfg(not(loom))]
const _: () = {
    assert!(std::mem::size_of::<Slot64>() == 16);
    assert!(std::mem::align_of::<Slot64>() == 16);
    assert!(std::mem::size_of::<Slot32>() == 8);
    assert!(std::mem::size_of::<Slot16>() == 8);
};

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
            #[inline(always)]
            fn seq(&self) -> u64 {
                self.word.load(Ordering::Acquire) as u32 as u64
            }
            #[inline(always)]
            fn diff(&self, seq: u64, pos: u64) -> i64 {
                (seq as u32).wrapping_sub(pos as u32) as i32 as i64
            }
            #[inline(always)]
            fn put(&self, lap: u64, v: $t) {
                // SYNC POINT: one Release store publishes value and
                // sequence together.
                self.word
                    .store(Self::pack(lap.wrapping_add(1), v), Ordering::Release);
            }
            #[inline(always)]
            fn get(&self) -> $t {
                Self::unpack(self.word.load(Ordering::Relaxed))
            }
            #[inline(always)]
            fn free(&self, next: u64, v: $t) {
                // SYNC POINT: Release after the value was read.
                self.word.store(Self::pack(next, v), Ordering::Release);
            }
            fn skip(&self, from: u64, to: u64) -> bool {
                let w = self.word.load(Ordering::Acquire);
                w as u32 == from as u32
                    && self
                        .word
                        .compare_exchange(
                            w,
                            (w & !0xffff_ffff) | (to as u32 as u64),
                            Ordering::AcqRel,
                            Ordering::Relaxed,
                        )
                        .is_ok()
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

impl SlotOps<i64> for Slot64 {
    #[inline(always)]
    fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }
    #[inline(always)]
    fn diff(&self, seq: u64, pos: u64) -> i64 {
        seq.wrapping_sub(pos) as i64
    }
    #[inline(always)]
    fn put(&self, lap: u64, v: i64) {
        self.val.store(v as u64, Ordering::Relaxed);
        // SYNC POINT: the Release store of the sequence publishes the
        // value stored before it.
        self.seq.store(lap.wrapping_add(1), Ordering::Release);
    }
    #[inline(always)]
    fn get(&self) -> i64 {
        self.val.load(Ordering::Relaxed) as i64
    }
    #[inline(always)]
    fn free(&self, next: u64, _v: i64) {
        // SYNC POINT: Release after the value was read.
        self.seq.store(next, Ordering::Release);
    }
    fn skip(&self, from: u64, to: u64) -> bool {
        self.seq
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
    fn init(&self, s: u64) {
        self.seq.store(s, Ordering::Relaxed);
        self.val.store(0, Ordering::Relaxed);
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
            val: AtomicU64::new(0),
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
