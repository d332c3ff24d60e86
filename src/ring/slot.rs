//! The slots: what the ring needs from one ([`SlotOps`]), the one-word
//! Int32 and Int16 slots, and the Int64 slot with its 16-byte
//! compare-and-swap (and that CAS's stand-ins under Miri and loom).
//! The slot protocol is in the ring's module docs.

use super::Element;
use crate::sync::{AtomicU64, Ordering};

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
