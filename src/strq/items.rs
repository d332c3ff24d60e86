//! An item of `StrQueue`: its 16-byte slot (see "Slot layout" in the
//! module docs) and its bytes in the arena. Storing an item copies its
//! bytes and fills the slot outside the live range; reading one checks that
//! its bytes lie inside the arena. Short strings are copied inline
//! ([`copy_short`]): a call to `memcpy` costs the hot paths more than the
//! copy.

use super::StrQueue;
use crate::error::{Error, Result};
use crate::layout::{Variant, MAX_ITEM};
use crate::sync::{AtomicU32, Ordering, LOOM};
use crate::testpoint::KillPoint;

/// One item's slot. See the module documentation for the field layout.
#[repr(C)]
pub(super) struct StrSlot {
    pub(super) off: AtomicU32,
    pub(super) len: AtomicU32,
    pub(super) meta: AtomicU32,
    spare: AtomicU32,
}

// Loom's atomics are larger than the words they model: the layout is
// checked in the real build only.
const _: () = {
    assert!(LOOM || std::mem::size_of::<StrSlot>() as u64 == Variant::Str.slot_size());
    assert!(LOOM || std::mem::align_of::<StrSlot>() <= 8);
};

/// `meta` bit 0: the item's bytes are UTF-8 (Perl's SvUTF8).
const META_UTF8: u32 = 1;
/// `meta` bits 3..: the wrap waste charged to the item.
pub(super) const META_WASTE: u32 = !7;
/// `len` bit 31: the item is compressed (a zstd frame).
pub(super) const LEN_PACKED: u32 = 1 << 31;

/// The error for an item that can never fit, or `None` when it can.
pub(super) fn never_fits(len: u64, usable: u64) -> Option<Error> {
    if len > usable {
        return Some(Error::InvalidArgument(format!(
            "string of {len} bytes exceeds the arena of {usable} bytes"
        )));
    }
    if len > MAX_ITEM {
        return Some(Error::InvalidArgument(format!(
            "string of {len} bytes exceeds the maximum item size of {MAX_ITEM} bytes"
        )));
    }
    None
}

/// The longest string the hot paths copy inline ([`copy_short`]); longer
/// ones go through `memcpy`, in functions of their own.
pub(super) const SHORT: u64 = 64;

/// Copy `n` bytes from `src` to `dst`: [`copy_short`] up to [`SHORT`]
/// bytes, `memcpy` beyond.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`]: `src` readable and `dst` writable
/// for `n` bytes, not overlapping.
#[inline(always)]
pub(super) unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: as the caller's.
    unsafe {
        if n as u64 > SHORT {
            std::ptr::copy_nonoverlapping(src, dst, n);
        } else {
            copy_short(src, dst, n);
        }
    }
}

/// Copy `n <= SHORT` bytes from `src` to `dst` inline, with a few
/// overlapping unaligned loads and stores: a call to `memcpy` would make
/// the hot paths save and reload the queue state they hold in registers,
/// which costs more than a short copy.
///
/// # Safety
/// As [`copy_bytes`], and `n <= SHORT`.
#[inline(always)]
pub(super) unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    /// Copy `W` bytes at `at` (an unaligned `[u8; W]` load and store).
    ///
    /// # Safety
    /// `at + W <= n` for the buffers of the enclosing call.
    #[inline(always)]
    unsafe fn block<const W: usize>(src: *const u8, dst: *mut u8, at: usize) {
        // SAFETY: the caller keeps `at + W` within both buffers.
        unsafe {
            let v = src.add(at).cast::<[u8; W]>().read_unaligned();
            dst.add(at).cast::<[u8; W]>().write_unaligned(v);
        }
    }
    // SAFETY: every block lies inside `0..n` (the overlapping second
    // block starts at `n - W >= 0` because `n >= W` in its branch), and
    // `n <= 64` covers the widest branch.
    unsafe {
        if n > 32 {
            block::<16>(src, dst, 0);
            block::<16>(src, dst, 16);
            block::<16>(src, dst, n - 32);
            block::<16>(src, dst, n - 16);
        } else if n > 16 {
            block::<16>(src, dst, 0);
            block::<16>(src, dst, n - 16);
        } else if n >= 8 {
            block::<8>(src, dst, 0);
            block::<8>(src, dst, n - 8);
        } else if n >= 4 {
            block::<4>(src, dst, 0);
            block::<4>(src, dst, n - 4);
        } else if n > 0 {
            block::<1>(src, dst, 0);
            block::<1>(src, dst, n / 2);
            block::<1>(src, dst, n - 1);
        }
    }
}

/// An item as its slot describes it.
#[derive(Clone, Copy)]
pub(super) struct Item {
    /// Arena offset of its bytes.
    pub(super) off: u64,
    /// Bytes stored (the zstd frame's length for a compressed item).
    pub(super) len: u64,
    /// Wrap waste charged to it.
    pub(super) waste: u64,
    /// The bytes are UTF-8 (Perl's SvUTF8).
    pub(super) utf8: bool,
    /// The bytes are one zstd frame, to decode.
    pub(super) packed: bool,
}

/// The item in slot `s`, if its bytes lie inside the `usable` bytes of
/// the arena. With `PACKED` a compressed item is read too (`packed` set);
/// without it, as on the front pop's fast path, a compressed item reads as
/// none: its `len` has bit 31 ([`LEN_PACKED`]) set, beyond [`MAX_ITEM`], so
/// the one length check that every item needs sends it to the general
/// path, with no test of the flag of its own.
#[inline(always)]
pub(super) fn read_item<const PACKED: bool>(s: &StrSlot, usable: u64) -> Option<Item> {
    let off = u64::from(s.off.load(Ordering::Relaxed));
    let raw = s.len.load(Ordering::Relaxed);
    let meta = s.meta.load(Ordering::Relaxed);
    let len = u64::from(if PACKED { raw & !LEN_PACKED } else { raw });
    // Both are below 2^32, so the sum cannot overflow. (With `PACKED`,
    // `len <= MAX_ITEM` always.)
    if len > MAX_ITEM || off + len > usable {
        return None;
    }
    Some(Item {
        off,
        len,
        waste: u64::from(meta & META_WASTE),
        utf8: meta & META_UTF8 != 0,
        packed: PACKED && raw & LEN_PACKED != 0,
    })
}

/// Append the `len` arena bytes at `off` (checked by [`read_item`]) to
/// `out`; where they start in `out`, or `None` if `out` cannot grow.
///
/// `try_reserve`, not `reserve`: nothing between taking the lock and
/// releasing it may unwind. (A `reserve` that could panic makes the
/// compiler keep the whole locked state in memory for the unwinding path,
/// in every build that unwinds.) If `out` cannot grow, the caller leaves
/// the item where it is and reports no item.
#[inline(always)]
pub(super) fn copy_out(q: &StrQueue, off: u64, len: u64, out: &mut Vec<u8>) -> Option<usize> {
    let start = out.len();
    let n = len as usize;
    out.try_reserve(n).ok()?;
    // SAFETY: `off + len <= usable <= arena_cap` (checked in read_item),
    // so the source lies inside the mapped arena; `out` has room for `n`
    // more bytes after `try_reserve`, and a Vec never overlaps the
    // mapping. We hold the lock, so no other process writes this item.
    unsafe {
        copy_bytes(q.arena_ptr(off), out.as_mut_ptr().add(start), n);
        out.set_len(start + n);
    }
    Some(start)
}

/// Copy `bytes` to arena offset `off` and fill slot `idx` (masked) with
/// the item: both lie outside the live range, invisible until the commit.
/// The caller holds the lock, and has placed the item so that `off + len
/// <= usable` and `waste` (a multiple of 8) is charged for it. Without
/// `LONG` the item is at most [`SHORT`] bytes.
#[inline(always)]
pub(super) fn write_item<const H: bool, const LONG: bool>(
    q: &StrQueue,
    idx: u64,
    off: u32,
    waste: u32,
    bytes: &[u8],
    utf8: bool,
) {
    // SAFETY: `off + len <= usable`, so the destination lies inside the
    // mapped arena, and the arena accounting reserves it for this item
    // alone; we hold the lock; `bytes` is private memory.
    // Without LONG, `len <= SHORT` (the caller's promise).
    unsafe {
        let dst = q.arena_ptr(u64::from(off));
        if LONG {
            copy_bytes(bytes.as_ptr(), dst, bytes.len());
        } else {
            copy_short(bytes.as_ptr(), dst, bytes.len());
        }
    }
    let s = q.slot(idx);
    s.off.store(off, Ordering::Relaxed);
    // `len <= MAX_ITEM < 2^31` was checked by the caller.
    s.len.store(bytes.len() as u32, Ordering::Relaxed);
    s.meta
        .store(waste | if utf8 { META_UTF8 } else { 0 }, Ordering::Relaxed);
    s.spare.store(0, Ordering::Relaxed);
    if H {
        q.kill_point.hit(KillPoint::AfterBytes);
    }
}

impl StrQueue {
    pub(super) fn check(&self, len: usize) -> Result<()> {
        match never_fits(len as u64, self.usable) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
