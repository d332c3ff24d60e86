//! `StrQueue`: a bounded MPMC deque of byte strings in shared memory,
//! guarded by one futex mutex, with a slot ring for the items and a
//! circular byte arena for their bytes.
//!
//! Design: a mutex-protected ring buffer plus a circular ("bip-buffer"
//! style) byte arena whose every item is contiguous. Variable-length items
//! rule out a per-slot lock-free protocol like the Int queues' Vyukov ring,
//! so every operation takes the lock in `lock.rs`, works on plain loads and
//! stores, copies the bytes in or out, and unlocks. No user code runs while
//! the lock is held (the Perl side converts its arguments before calling
//! in and builds its scalars after the call returns).
//!
//! # Shared state (see `layout.rs` for the header itself)
//!
//! The queue state lives twice in the header, as two [`StrCopy`]s (header
//! lines 1 and 2); `header.current` says which copy is current:
//!
//! ```text
//! head       slot index of the front item (kept < capacity)
//! count      number of items in the queue (0 ..= capacity)
//! rd         arena offset where the front item's charge starts
//! wr         arena offset where the back item's charge ends
//! used       bytes charged to the items present
//! push_ok / pop_ok   exact counters
//! header.lock        the lock (lock.rs): word 0 or owner pid, sleeper count
//! ```
//!
//! Items occupy slots `head, head+1, .., head+count-1` (mod capacity).
//! `push_front` steps `head` back by one, `pop` steps it forward; `push`
//! and `pop_back` only change `count`.
//!
//! # Slot layout (16 bytes, `#[repr(C)]`, little-endian u32 fields)
//!
//! ```text
//! offset  field   meaning
//!      0  off     byte offset of the item's bytes in the arena; a multiple
//!                 of 8 below the arena size (<= 2^32), so it fits in u32
//!      4  len     bits 0-30: the item's length in bytes (<= MAX_ITEM <
//!                 2^31); bit 31: the bytes are one zstd frame, the item
//!                 compressed (see `compress.rs`). The flag lives here, not
//!                 in `meta`, so that the pop hot path needs no test for it:
//!                 its length check (`len <= MAX_ITEM`) already sends a
//!                 compressed item to the general path, which decodes it.
//!      8  meta    bit 0: the UTF-8 flag; bits 1-2: zero; bits 3-31: the
//!                 wrap waste charged to this item. The waste is a multiple
//!                 of 8 below the arena size, so it needs no shift: meta is
//!                 simply `waste | flags`.
//!     12  spare   zero; reserved (for the crash-recovery work)
//! ```
//!
//! # Arena
//!
//! `arena_cap` bytes follow the slots (reported exactly by `stats`); the
//! usable part is that rounded down to a multiple of 8. Items are 8-byte
//! aligned with no header of their own, so two 2000-byte strings fill a
//! 4096-byte arena. A wrap (an item that does not fit before the end of the
//! arena, or for `push_front` before the front item) leaves a gap that is
//! charged to the item that wrapped and given back when that item leaves by
//! either end; an exactly full arena is valid; when the queue becomes empty
//! the arena starts over at offset 0. The arithmetic and its invariants are
//! in `arena.rs`.
//!
//! # Hostile shared memory
//!
//! The geometry (capacity, arena size and offset) comes from the private
//! copy validated at attach, never from the live header. At run time every
//! slot index is masked with `capacity - 1`, the item count is clamped to
//! the capacity, an arena state that is not self-consistent is treated as
//! full (pushes fail; pops still drain, and the queue heals when it empties),
//! and an item whose bytes would fall outside the arena is treated as "no
//! item" (pop reports empty). No shared-memory value can cause a panic or an
//! out-of-bounds access.
//!
//! # Crash safety
//!
//! A process may die (SIGKILL, OOM) anywhere while holding the lock. The
//! next process that needs the lock takes it over (lock.rs: the kernel is
//! asked whether the owner pid still lives, guarded against pid reuse) and
//! counts it in `recoveries`. What it finds is consistent because of how an
//! operation changes the queue:
//!
//! 1. A push copies its bytes into arena space no item owns and writes
//!    the slot just outside the live range. Until step 3 these are
//!    invisible; a death here loses nothing (the item is absent and its
//!    space is still free).
//! 2. The whole new state (the seven words of a [`StrCopy`]) is written
//!    to the copy that is *not* current. Nobody reads that copy, so a
//!    death here leaves the current copy, the state before the operation,
//!    intact.
//! 3. One store (Release) makes the new copy current; then the lock is
//!    released.
//!
//! Steps 1 and 2 write nothing anybody reads, so their order is free: the
//! hot paths write the state copy first (see "Hot paths").
//!
//! So whoever takes the lock (taker-over or not) finds one committed state
//! in the current copy, with nothing to repair, and anything a dead holder
//! wrote in steps 1 and 2 lies in free space or in the copy nobody reads:
//! every operation happened wholly or not at all, the arena accounting
//! matches the items, and the exact counters match too. (Pops write
//! nothing but the state: the bytes handed out are copied before the
//! commit. An item a consumer popped and then died with is gone, as with
//! any consumer that dies after a pop.) The `lock_acquired`,
//! `lock_contended`, `cleared`, `push_full` and `pop_empty` statistics are
//! outside the state and may miss one count. A commit costs eight stores:
//! the seven words and the switch.
//!
//! (Format version 2 kept one live state and a journal that the next
//! holder replayed: sixteen stores per operation, and a load on every
//! lock.)
//!
//! Deterministic crash points for tests: `DQS_TEST_KILL_POINT` (read when a
//! handle is opened) set to `str_lock_held`, `str_after_bytes`,
//! `str_mid_commit` (three of the seven words of the new copy written) or
//! `str_after_commit` (the new copy current, the lock still held) makes
//! the handle's process SIGKILL itself there; `str_lock_stop` makes it
//! SIGSTOP itself holding the lock. Handles without a crash point run code
//! with the hooks compiled out.
//!
//! # Hot paths
//!
//! `push` (at the back) and `pop` (at the front) of strings up to
//! [`SHORT`] bytes are the operations most programs make all the time, so
//! their usual case is written out flat: the lock free (one CAS), a slot
//! and room right after the back item for a push, an item that fits the
//! caller's buffer for a pop. That code makes no call at all (the bytes
//! are copied inline, the wake-ups are checked inline and made out of
//! line), so the compiler keeps the queue state in registers instead of
//! saving it around calls; every other case, from a held lock to a
//! wrapping placement or a long string, jumps to functions of its own
//! (`push_general`, `push_locked`, `pop_general`, `pop_locked`, `*_long`)
//! that run the general code (a pop that finds the queue empty just
//! unlocks and jumps to `found_empty`). Both run the same commit, and the
//! test hooks are compiled into both for handles that have a crash point.
//! Measured with callgrind (`examples/str_pair.rs`, instructions): a
//! 50-byte push+pop pair went from 310 to 235, with 100 items queued from
//! 337 to 288, and a pop of an empty queue from 68 to 73.
//!
//! # Looking without the lock
//!
//! A consumer that polls an empty queue, and a producer that polls a full
//! one, are what a cross-process pipeline does most while the other side
//! works; taking the lock for each look would fight that other side for the
//! lock's cache line and the lock itself. So the commit stores the new item
//! count together with the copy number, in the one word `current` (`count
//! << 1 | copy`, see [`str_current`]): `pop` (either end) first loads that
//! word and, when it says 0 items, reports "empty" without the lock; `push`
//! (either end) reports "full" when it says `capacity` items. The word is
//! the commit itself, so the count is always the committed state's, and no
//! crash can leave it disagreeing with the current copy (it changes with
//! the one store that makes a copy current). The load is Relaxed: the
//! answer depends on nothing else, and coherence keeps it no older than any
//! commit that happens-before the call (the caller's own operations and any
//! it synchronised with), so "empty" means the queue was empty at some
//! moment during the call. Any other value sends the call to the lock,
//! which decides under it as before. The misses are counted in `pop_empty`
//! and `push_full`, which for Str sit on header line 3 (see
//! [`Header::str_pop_empty`]): a polling loop touches that line only, which
//! every operation writes anyway (the lock's). The loom models
//! `loom_str_look_*` check the look against pushes it must see. A hostile
//! count only misreports "empty" or "full" until the next commit rewrites
//! it. Measured with callgrind (`examples/str_pair.rs`, instructions): a
//! pop of an empty queue went from 79 to 50; the look costs a 50-byte
//! push+pop pair 10 (243 to 253; with 100 items queued, 296 to 305).
//! Across processes it helps where one side waits for the other, but it
//! did not raise the rate of a producer and a consumer that really run at
//! once (2 cores, both under SCHED_FIFO, non-blocking calls: 4.5M strings
//! a second before and after, against 20M integers): there the queue is
//! rarely empty or full, 55-80% of lock acquisitions find the lock held,
//! and every critical section misses on the lock's line and on both
//! state copies' lines, which the other side touched last. Prefetching
//! the copy to be written (PREFETCHW) and testing the lock word before
//! each CAS each gained about 3%, within the noise, and were left out.
//!
//! # Waiting
//!
//! Blocking calls use [`block_on`] with an attempt that takes the lock,
//! tries once and unlocks. A successful push wakes one consumer (one item
//! can satisfy one consumer). A pop frees a slot *and a variable number of
//! arena bytes*, which may let several blocked producers in, or none of the
//! first one woken (a big string) while a smaller one behind it would fit;
//! waking just one producer could then leave a producer asleep next to free
//! space. So every pop wakes all blocked producers (one `FUTEX_WAKE`, and
//! only when somebody waits); the ones that still do not fit go back to
//! sleep. `clear` wakes everybody on both sides.

use std::ffi::CStr;
use std::path::Path;
use std::sync::atomic::AtomicU64 as StdAtomicU64;

use crate::arena::{align8, Arena};
use crate::compress;
use crate::error::{Error, Result};
use crate::futex::Deadline;
use crate::layout::{
    str_current, str_current_count, Header, StrCopy, Variant, HEADER_SIZE, MAX_ITEM,
};
use crate::lock::{LockFail, LockGuard};
use crate::region::{Region, Request};
use crate::stats::Stats;
use crate::sync::{AtomicU32, Ordering};
use crate::testpoint::KillPoint;
use crate::wait::{block_on, Miss, Side, Waited};

mod batch;

/// One item's slot. See the module documentation for the field layout.
#[repr(C)]
struct StrSlot {
    off: AtomicU32,
    len: AtomicU32,
    meta: AtomicU32,
    spare: AtomicU32,
}

#[cfg(not(loom))]
const _: () = {
    assert!(std::mem::size_of::<StrSlot>() as u64 == Variant::Str.slot_size());
    assert!(std::mem::align_of::<StrSlot>() <= 8);
};

/// `meta` bit 0: the item's bytes are UTF-8 (Perl's SvUTF8).
const META_UTF8: u32 = 1;
/// `meta` bits 3..: the wrap waste charged to the item.
const META_WASTE: u32 = !7;
/// `len` bit 31: the item is compressed (a zstd frame).
const LEN_PACKED: u32 = 1 << 31;

/// The error for an item that can never fit, or `None` when it can.
fn never_fits(len: u64, usable: u64) -> Option<Error> {
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

/// A bounded MPMC deque of byte strings in shared memory.
///
/// Each item keeps its bytes and a UTF-8 flag. Operations at both ends
/// (`push`/`push_front`, `pop`/`pop_back`) and batches take one
/// cross-process lock; `peek` is exact. Handles are `Sync`; other processes
/// open the same path, inherit the handle across `fork`, or attach to the
/// memfd.
///
/// # Examples
///
/// ```
/// use data_queue_shared::StrQueue;
/// let q = StrQueue::anonymous(4, 0).unwrap();
/// assert!(q.push(b"hello", false).unwrap());
/// assert!(q.push_front("h\u{e9}".as_bytes(), true).unwrap());
/// let mut out = Vec::new();
/// assert_eq!(q.pop(false, &mut out), Some(true));
/// assert_eq!(out, "h\u{e9}".as_bytes());
/// assert_eq!(q.pop(true, &mut out), Some(false));
/// assert_eq!(out, b"hello");
/// assert_eq!(q.pop(false, &mut out), None);
/// ```
pub struct StrQueue {
    region: Region,
    /// `capacity - 1`, from the validated geometry.
    mask: u64,
    /// Usable arena bytes: `arena_cap` rounded down to a multiple of 8.
    usable: u64,
    /// The longest string that can ever fit: `usable`, or [`MAX_ITEM`] if
    /// that is smaller (one compare on the hot path).
    max_len: u64,
    /// The smallest `current` word that says every slot is taken,
    /// `str_current(0, capacity)`: the look of a push is one compare.
    full_word: u32,
    /// How long a non-blocking call waits for a held lock, in nanoseconds;
    /// `u64::MAX` waits as long as the holder lives. Per handle. Boxed, so
    /// that `StrQueue` itself holds no interior mutability: then the
    /// compiler knows a `&StrQueue` cannot change under the hot paths and
    /// need not reload its fields after every store to shared memory.
    lock_timeout_ns: Box<StdAtomicU64>,
    /// Which strings this handle compresses (per handle; see
    /// [`StrQueue::set_compress`]). Boxed for the reason above.
    compress: Box<compress::Setting>,
    /// Test hook: where this handle kills its own process (see
    /// [`KillPoint`]).
    kill_point: KillPoint,
}

/// The longest string the hot paths copy inline ([`copy_short`]); longer
/// ones go through `memcpy`, in functions of their own.
const SHORT: u64 = 64;

/// Copy `n` bytes from `src` to `dst`: [`copy_short`] up to [`SHORT`]
/// bytes, `memcpy` beyond.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`]: `src` readable and `dst` writable
/// for `n` bytes, not overlapping.
#[inline(always)]
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
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
unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
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

/// Set `errno` (how a non-blocking call whose lock wait timed out says so
/// through the C ABI and to Perl's `$!`).
fn set_errno(e: i32) {
    // SAFETY: __errno_location returns this thread's errno.
    unsafe { *libc::__errno_location() = e };
}

/// A wait result whose attempt may have failed to take the lock.
fn flatten<R>(w: Waited<std::result::Result<R, LockFail>>) -> Waited<R> {
    match w {
        Waited::Done(Ok(r)) => Waited::Done(r),
        Waited::Done(Err(LockFail::TimedOut)) | Waited::TimedOut => Waited::TimedOut,
        Waited::Done(Err(LockFail::Interrupted)) | Waited::Interrupted => Waited::Interrupted,
    }
}

/// The lock held, with the queue state loaded from the current copy in the
/// header. Changes are committed to the other copy when it is dropped, and
/// only then is the lock released (the guard is the last field, dropped
/// after `Drop::drop` ran). With `H` false the test hooks ([`KillPoint`])
/// are compiled out: the hot paths use that when the handle has none.
struct Locked<'q, const H: bool> {
    q: &'q StrQueue,
    /// Which state copy is current (0 or 1, see "Crash safety").
    copy: u32,
    head: u64,
    count: u64,
    arena: Arena,
    push_ok: u64,
    pop_ok: u64,
    dirty: bool,
    _guard: LockGuard<'q>,
}

impl<const H: bool> Drop for Locked<'_, H> {
    fn drop(&mut self) {
        self.commit();
    }
}

impl<const H: bool> Locked<'_, H> {
    /// Commit and unlock, as dropping does, but inlined into the caller
    /// (the drop glue is an out-of-line call on the hot path).
    #[inline(always)]
    fn release(self) {
        let mut me = std::mem::ManuallyDrop::new(self);
        me.commit();
        // SAFETY: `me` is never dropped nor used again; the guard is moved
        // out exactly once and dropped here, which unlocks. The other
        // fields own nothing.
        drop(unsafe { std::ptr::read(&me._guard) });
    }

    /// Commit the changes made under the lock, if any (see "Crash safety"
    /// in the module docs): write the whole new state to the copy that is
    /// not current, then make it current with one store.
    #[inline(always)]
    fn commit(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let next = self.copy ^ 1;
        write_state::<H>(
            self.q,
            next,
            (self.head, self.count),
            &self.arena,
            (self.push_ok, self.pop_ok),
        );
        self.copy = next;
    }
}

/// The commit proper: write the new state to copy `next`, which is not
/// current, then make it current.
#[inline(always)]
fn write_state<const H: bool>(
    q: &StrQueue,
    next: u32,
    (head, count): (u64, u64),
    arena: &Arena,
    (push_ok, pop_ok): (u64, u64),
) {
    write_copy::<H>(q, next, (head, count), arena, (push_ok, pop_ok));
    switch_to::<H>(q, next, count);
}

/// The first half of [`write_state`]: write the new state to copy `next`,
/// which is not current (nobody reads it, so this may come before or after
/// the other writes of the operation).
#[inline(always)]
fn write_copy<const H: bool>(
    q: &StrQueue,
    next: u32,
    (head, count): (u64, u64),
    arena: &Arena,
    (push_ok, pop_ok): (u64, u64),
) {
    let kp = q.kill_point;
    let c = q.header().str_copy(next);
    let Arena { rd, wr, used, .. } = *arena;
    // Plain Relaxed stores: every reader and writer of these words holds
    // the lock, whose release (the guard, dropped next) publishes them.
    // `len` and `stats` also read them without the lock, wanting only
    // recent values.
    c.head.store(head, Ordering::Relaxed);
    c.count.store(count, Ordering::Relaxed);
    c.rd.store(rd, Ordering::Relaxed);
    if H {
        kp.hit(KillPoint::MidCommit);
    }
    c.wr.store(wr, Ordering::Relaxed);
    c.used.store(used, Ordering::Relaxed);
    c.push_ok.store(push_ok, Ordering::Relaxed);
    c.pop_ok.store(pop_ok, Ordering::Relaxed);
}

/// The second half of [`write_state`]: make copy `next`, written by
/// [`write_copy`] with `count` items, current. After this store the
/// operation has happened.
#[inline(always)]
fn switch_to<const H: bool>(q: &StrQueue, next: u32, count: u64) {
    let h = q.header();
    // SYNC POINT: Release orders the copy before the switch for a
    // taker-over, which reads `current` with Acquire in `current_state`
    // (a dead holder released no lock it could synchronise with).
    // The item count rides along (`count <= capacity <= 2^30`, so the
    // shift cannot overflow): one load of this word tells a pop that
    // finds the queue empty, or a push that finds every slot taken, so
    // without the lock (see "Looking without the lock").
    h.current.store(str_current(next, count), Ordering::Release);
    if H {
        q.kill_point.hit(KillPoint::AfterCommit);
    }
}

/// What a successful take found: where its bytes went in `out`, and flags.
struct Taken {
    start: usize,
    len: usize,
    utf8: bool,
    /// The bytes in `out` are a zstd frame, to decode after unlocking.
    packed: bool,
}

impl<'q, const H: bool> Locked<'q, H> {
    fn capacity(&self) -> u64 {
        self.q.mask + 1
    }

    fn slot_of(&self, back: bool) -> &'q StrSlot {
        let i = if back {
            self.head.wrapping_add(self.count).wrapping_sub(1)
        } else {
            self.head
        };
        self.q.slot(i)
    }

    /// The end item's (offset, stored length, waste, utf8, compressed),
    /// if there is an item and its bytes lie inside the arena.
    #[inline(always)]
    fn read_end(&self, back: bool) -> Option<(u64, u64, u64, bool, bool)> {
        if self.count == 0 {
            return None;
        }
        read_item_any(self.slot_of(back), self.q.usable)
    }

    /// Append the end item's bytes to `out`; optionally remove the item.
    #[inline(always)]
    fn copy_end(&mut self, back: bool, remove: bool, out: &mut Vec<u8>) -> Option<Taken> {
        let (off, len, waste, utf8, packed) = self.read_end(back)?;
        let start = copy_out(self.q, off, len, out)?;
        let n = len as usize;
        if remove {
            let charge = align8(len) + waste;
            (self.head, self.arena) = self
                .q
                .after_removal(back, self.head, self.count, self.arena, charge);
            self.count -= 1;
            self.pop_ok = self.pop_ok.wrapping_add(1);
            self.dirty = true;
        }
        Some(Taken {
            start,
            len: n,
            utf8,
            packed,
        })
    }

    /// Push `bytes` at one end if there is a free slot and arena room.
    /// The caller has checked that the item can ever fit.
    #[inline(always)]
    fn put(&mut self, bytes: &[u8], utf8: bool, front: bool) -> bool {
        self.put_any(bytes, utf8, front, None)
    }

    /// [`Locked::put`]; with `packed` (the original length) `bytes` is its
    /// zstd frame: the item is flagged compressed and counted.
    #[inline(always)]
    fn put_any(&mut self, bytes: &[u8], utf8: bool, front: bool, packed: Option<u64>) -> bool {
        if self.count >= self.capacity() {
            return false;
        }
        let mut arena = self.arena;
        let Some(head) = store_item::<H>(
            self.q, self.head, self.count, &mut arena, bytes, utf8, front,
        ) else {
            return false;
        };
        // HOOK(compress): flag the slot just written, count the saving.
        if let Some(orig) = packed {
            let idx = if front {
                head
            } else {
                head.wrapping_add(self.count)
            };
            self.q.mark_packed(idx, bytes.len() as u64, orig);
        }
        self.head = head;
        self.arena = arena;
        self.count += 1;
        self.push_ok = self.push_ok.wrapping_add(1);
        self.dirty = true;
        true
    }
}

/// The item in slot `s`, compressed or not, as (offset, stored length,
/// waste, utf8, compressed), if its bytes lie inside the `usable` bytes of
/// the arena.
#[inline(always)]
fn read_item_any(s: &StrSlot, usable: u64) -> Option<(u64, u64, u64, bool, bool)> {
    let len = s.len.load(Ordering::Relaxed);
    if len & LEN_PACKED == 0 {
        let (off, len, waste, utf8) = read_item(s, usable)?;
        return Some((off, len, waste, utf8, false));
    }
    let off = u64::from(s.off.load(Ordering::Relaxed));
    let len = u64::from(len & !LEN_PACKED);
    let meta = s.meta.load(Ordering::Relaxed);
    if off + len > usable {
        return None;
    }
    Some((
        off,
        len,
        u64::from(meta & META_WASTE),
        meta & META_UTF8 != 0,
        true,
    ))
}

/// The item in slot `s` as (offset, length, waste, utf8), if its bytes lie
/// inside the `usable` bytes of the arena and it is not compressed (a
/// compressed item's `len` has bit 31 set, beyond [`MAX_ITEM`]).
#[inline(always)]
fn read_item(s: &StrSlot, usable: u64) -> Option<(u64, u64, u64, bool)> {
    let off = u64::from(s.off.load(Ordering::Relaxed));
    let len = u64::from(s.len.load(Ordering::Relaxed));
    let meta = s.meta.load(Ordering::Relaxed);
    // Both are below 2^32, so the sum cannot overflow.
    if len > MAX_ITEM || off + len > usable {
        return None;
    }
    Some((
        off,
        len,
        u64::from(meta & META_WASTE),
        meta & META_UTF8 != 0,
    ))
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
fn copy_out(q: &StrQueue, off: u64, len: u64, out: &mut Vec<u8>) -> Option<usize> {
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

/// Place `bytes` at one end of the `count` items from slot `head`: copy
/// them into the arena and fill the slot outside the live range. Returns
/// the new `head` (changed by a front push) with `arena` updated, or
/// `None` with nothing written when there is no room. The caller holds
/// the lock, has checked that a slot is free and that the item can ever
/// fit, and commits afterwards.
#[inline(always)]
fn store_item<const H: bool>(
    q: &StrQueue,
    head: u64,
    count: u64,
    arena: &mut Arena,
    bytes: &[u8],
    utf8: bool,
    front: bool,
) -> Option<u64> {
    let len = bytes.len() as u64;
    let mut a = *arena;
    let p = if front {
        a.place_front(len)
    } else {
        a.place_back(len)
    }?;
    // The arena arithmetic guarantees these; checking them here keeps the
    // copy below obviously in bounds.
    let (Ok(off32), Ok(waste32)) = (u32::try_from(p.off), u32::try_from(p.waste)) else {
        return None;
    };
    if p.off.saturating_add(len) > q.usable || waste32 & !META_WASTE != 0 {
        return None;
    }
    let (head, idx) = if front {
        let h = head.wrapping_sub(1) & q.mask;
        (h, h)
    } else {
        (head, head.wrapping_add(count))
    };
    write_item::<H, true>(q, idx, off32, waste32, bytes, utf8);
    *arena = a;
    Some(head)
}

/// Copy `bytes` to arena offset `off` and fill slot `idx` (masked) with
/// the item: both lie outside the live range, invisible until the commit.
/// The caller holds the lock, and has placed the item so that `off + len
/// <= usable` and `waste` (a multiple of 8) is charged for it. Without
/// `LONG` the item is at most [`SHORT`] bytes.
#[inline(always)]
fn write_item<const H: bool, const LONG: bool>(
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
    fn request(capacity: u64, arena: u64, mode: u32) -> Request {
        Request {
            variant: Variant::Str,
            capacity,
            arena,
            mode,
        }
    }

    fn init_body(r: &Region) {
        // A fresh mapping is zero already; say so explicitly anyway.
        let h = r.header();
        for c in [h.str_copy(0), h.str_copy(1)] {
            for w in [
                &c.head, &c.count, &c.rd, &c.wr, &c.used, &c.push_ok, &c.pop_ok,
            ] {
                w.store(0, Ordering::Relaxed);
            }
        }
        h.current.store(0, Ordering::Relaxed);
        h.lock.word.store(0, Ordering::Relaxed);
        h.lock.sleepers.store(0, Ordering::Relaxed);
    }

    fn wrap(region: Region) -> Self {
        let g = *region.geometry();
        StrQueue {
            mask: g.capacity - 1,
            usable: g.arena_cap & !7,
            max_len: (g.arena_cap & !7).min(MAX_ITEM),
            full_word: str_current(0, g.capacity),
            region,
            lock_timeout_ns: Box::new(StdAtomicU64::new(u64::MAX)),
            compress: Box::new(compress::Setting::off()),
            kill_point: KillPoint::from_env(),
        }
    }

    /// Create the queue file at `path` with `capacity` slots (rounded up to
    /// a power of two, at least 2) and an arena of `arena` bytes (0 means
    /// `capacity * 256`; raised to at least 4096), or attach to the queue
    /// already there, whose stored geometry then wins. New files get `mode`.
    ///
    /// # Errors
    /// Out-of-range capacity or arena (over 4 GiB), a path that cannot be
    /// opened (a symlink is refused), a file holding another variant, a
    /// truncated or corrupt file ([`Error::Incompatible`]), or no space.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let path = std::env::temp_dir().join(format!("dqs-str-open-{}.shm", std::process::id()));
    /// let q = StrQueue::open(&path, 100, 0, 0o600)?; // 128 slots, 32 KiB arena
    /// assert_eq!(q.capacity(), 128);
    /// assert_eq!(q.stats().arena_cap, 128 * 256);
    /// // A second open attaches; the stored geometry wins.
    /// let other = StrQueue::open(&path, 2, 4096, 0o600)?;
    /// assert_eq!(other.capacity(), 128);
    /// assert!(q.push(b"job", false)?);
    /// let mut buf = Vec::new();
    /// assert_eq!(other.pop(false, &mut buf), Some(false));
    /// assert_eq!(buf, b"job");
    /// q.unlink()?;
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn open(path: impl AsRef<Path>, capacity: u64, arena: u64, mode: u32) -> Result<Self> {
        Region::open_path(
            path.as_ref(),
            &Self::request(capacity, arena, mode),
            &Self::init_body,
        )
        .map(Self::wrap)
    }

    /// A queue in anonymous shared memory, shared with children forked
    /// after this call. `arena` as for [`StrQueue::open`].
    ///
    /// # Errors
    /// Out-of-range capacity or arena, or mmap failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(8, 0)?;
    /// // SAFETY: the child only pushes and then calls _exit.
    /// let pid = unsafe { libc::fork() };
    /// assert!(pid >= 0, "fork failed");
    /// if pid == 0 {
    ///     // The child takes the queue lock under its own pid.
    ///     let ok = q.push(b"from the child", false).unwrap_or(false);
    ///     unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    /// }
    /// let mut status = 0;
    /// // SAFETY: plain waitpid on our own child.
    /// assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    /// assert_eq!(status, 0);
    /// let mut buf = Vec::new();
    /// assert_eq!(q.pop(false, &mut buf), Some(false));
    /// assert_eq!(buf, b"from the child");
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn anonymous(capacity: u64, arena: u64) -> Result<Self> {
        Region::anonymous(&Self::request(capacity, arena, 0), &Self::init_body).map(Self::wrap)
    }

    /// A queue in a new memfd named `name` (only a label).
    ///
    /// # Errors
    /// Out-of-range capacity or arena, memfd_create or sealing failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let name = std::ffi::CString::new("jobs").unwrap();
    /// let q = StrQueue::memfd(&name, 8, 0)?;
    /// // Another handle (in practice: another process that received the fd).
    /// let other = StrQueue::from_fd(q.fd())?;
    /// assert!(q.push(b"hi", false)?);
    /// let mut buf = Vec::new();
    /// assert_eq!(other.pop(false, &mut buf), Some(false));
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn memfd(name: &CStr, capacity: u64, arena: u64) -> Result<Self> {
        Region::memfd(name, &Self::request(capacity, arena, 0), &Self::init_body).map(Self::wrap)
    }

    /// Attach to the Str queue behind `fd` (duplicated; the caller keeps
    /// its own fd).
    ///
    /// # Errors
    /// A bad fd, one too small for a header, or one holding another variant
    /// or a truncated queue ([`Error::Incompatible`]).
    ///
    /// # Examples
    ///
    /// The example of [`StrQueue::memfd`] attaches a second handle with
    /// `from_fd`; a queue file's fd works the same way.
    pub fn from_fd(fd: i32) -> Result<Self> {
        Region::from_fd(fd, Variant::Str).map(Self::wrap)
    }

    #[inline(always)]
    fn header(&self) -> &Header {
        self.region.header()
    }

    #[inline(always)]
    fn slot(&self, i: u64) -> &StrSlot {
        let i = i & self.mask;
        // SAFETY: `i < capacity`, and the validated geometry puts
        // `capacity` 16-byte slots right after the header; StrSlot is
        // repr(C) atomics (align 4), which may alias shared memory.
        unsafe { &*(self.region.at(HEADER_SIZE as u64 + i * 16) as *const StrSlot) }
    }

    /// Pointer to arena byte `off`.
    ///
    /// # Safety
    /// `off <= usable` (one past the end only for zero-length access).
    #[inline(always)]
    unsafe fn arena_ptr(&self, off: u64) -> *mut u8 {
        // SAFETY: the arena spans `arena_off .. arena_off + arena_cap` of
        // the mapping, and the caller keeps `off <= usable <= arena_cap`.
        unsafe { self.region.at(self.region.geometry().arena_off + off) }
    }

    /// How long non-blocking calls wait for a held lock: `None` (the
    /// default) waits as long as the holder lives.
    pub fn lock_timeout(&self) -> Option<f64> {
        match self.lock_timeout_ns.load(Ordering::Relaxed) {
            u64::MAX => None,
            ns => Some(ns as f64 / 1e9),
        }
    }

    /// Set how long non-blocking calls (`push`, `pop`, `peek`, the batch
    /// calls, `clear`) wait for a lock held by a live process before they
    /// give up: they then return false / `None` / 0 with `errno` set to
    /// `ETIMEDOUT`. `None`, a negative, infinite or NaN value waits as
    /// long as the holder lives. This handle only (not shared).
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(8, 0)?;
    /// assert_eq!(q.lock_timeout(), None);
    /// q.set_lock_timeout(Some(0.5));
    /// assert_eq!(q.lock_timeout(), Some(0.5));
    /// q.set_lock_timeout(Some(-1.0)); // back to waiting for the holder
    /// assert_eq!(q.lock_timeout(), None);
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn set_lock_timeout(&self, secs: Option<f64>) {
        let ns = match secs {
            Some(t) if (0.0..1.0e9).contains(&t) => (t * 1e9) as u64,
            _ => u64::MAX,
        };
        self.lock_timeout_ns.store(ns, Ordering::Relaxed);
    }

    /// Take the lock for a non-blocking call, waiting at most the
    /// handle's lock timeout. `None` (and `errno` = `ETIMEDOUT`) when that
    /// passed with the lock still held by a live process.
    #[inline(always)]
    fn locked<const H: bool>(&self) -> Option<Locked<'_, H>> {
        Some(self.load_state(self.guard_now::<H>()?))
    }

    /// When a non-blocking call that found the lock held gives up.
    fn lock_deadline(&self) -> Deadline {
        match self.lock_timeout_ns.load(Ordering::Relaxed) {
            u64::MAX => Deadline::FOREVER,
            ns => Deadline::after_secs(ns as f64 / 1e9),
        }
    }

    /// After a non-blocking call found the queue full or empty: with a
    /// lock timeout set, `errno` 0 tells this apart from a lock timeout.
    #[inline]
    fn missed(&self) {
        if self.lock_timeout_ns.load(Ordering::Relaxed) != u64::MAX {
            set_errno(0);
        }
    }

    /// Take the lock (taking it over from a dead holder), waiting until
    /// the deadline `deadline()` computes (only when the lock is found
    /// held), and load the state, sanitised (see the module docs).
    #[inline(always)]
    fn lock_until<const H: bool>(
        &self,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> std::result::Result<Locked<'_, H>, LockFail> {
        Ok(self.load_state(self.lock_guard::<H>(deadline, interruptible)?))
    }

    /// The lock `guard` with the state loaded from the current copy.
    #[inline(always)]
    fn load_state<'q, const H: bool>(&'q self, guard: LockGuard<'q>) -> Locked<'q, H> {
        let (copy, c, head, count) = self.current_state();
        let arena = self.arena_of(c, count);
        Locked {
            q: self,
            copy,
            head,
            count,
            arena,
            push_ok: c.push_ok.load(Ordering::Relaxed),
            pop_ok: c.pop_ok.load(Ordering::Relaxed),
            dirty: false,
            _guard: guard,
        }
    }

    /// The item count of the committed state, from `current`, read
    /// without the lock: a snapshot (see "Looking without the lock").
    #[inline(always)]
    fn committed_count(&self) -> u32 {
        str_current_count(self.committed_word())
    }

    /// The `current` word, read without the lock: a snapshot of the
    /// committed item count and copy.
    #[inline(always)]
    fn committed_word(&self) -> u32 {
        // Relaxed: a caller acts on this value only to answer "empty" or
        // "full" with nothing else read. Coherence makes the value no
        // older than any commit that happens-before this load (the
        // caller's own pushes, or ones it synchronised with), so an
        // "empty" answer means the queue was empty at some point during
        // the call. Any other value sends the caller to the lock, which
        // reloads `current` (Acquire) under it.
        self.header().current.load(Ordering::Relaxed)
    }

    /// The current copy's number, the copy, its front index and its item
    /// count, sanitised (masked and clamped). Without the lock (`len`,
    /// `stats`) a snapshot.
    #[inline(always)]
    fn current_state(&self) -> (u32, &StrCopy, u64, u64) {
        let h = self.header();
        // SYNC POINT: Acquire pairs with the Release that made the copy
        // current: after a takeover the lock CAS synchronised with nothing
        // the dead holder wrote, and a reader without the lock did not get
        // it from the writer.
        let copy = h.current.load(Ordering::Acquire) & 1;
        let c = h.str_copy(copy);
        let head = c.head.load(Ordering::Relaxed) & self.mask;
        let count = c.count.load(Ordering::Relaxed).min(self.mask + 1);
        (copy, c, head, count)
    }

    /// The arena words of copy `c` holding `count` items (an empty arena
    /// when there are none).
    #[inline(always)]
    fn arena_of(&self, c: &StrCopy, count: u64) -> Arena {
        if count == 0 {
            return Arena::empty(self.usable);
        }
        Arena {
            size: self.usable,
            rd: c.rd.load(Ordering::Relaxed),
            wr: c.wr.load(Ordering::Relaxed),
            used: c.used.load(Ordering::Relaxed),
        }
    }

    /// The front index and arena once the end item (at the back with
    /// `back`), charged `charge`, has left the `count` items from `head`:
    /// a queue that empties starts over at slot 0 and arena offset 0.
    #[inline(always)]
    fn after_removal(
        &self,
        back: bool,
        head: u64,
        count: u64,
        mut arena: Arena,
        charge: u64,
    ) -> (u64, Arena) {
        if count <= 1 {
            return (0, Arena::empty(self.usable));
        }
        if back {
            arena.release_back(charge);
            (head, arena)
        } else {
            arena.release_front(charge);
            (head.wrapping_add(1) & self.mask, arena)
        }
    }

    /// Take the lock (taking it over from a dead holder), waiting until
    /// the deadline `deadline()` computes (only when the lock is found
    /// held); count it.
    #[inline(always)]
    fn lock_guard<const H: bool>(
        &self,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> std::result::Result<LockGuard<'_>, LockFail> {
        let h = self.header();
        let guard = match LockGuard::try_acquire_robust(&h.lock, &h.lock_owner) {
            Some(g) => g,
            None => self.lock_held(deadline(), interruptible)?,
        };
        self.took_lock::<H>();
        Ok(guard)
    }

    /// The lock if it is free now (one CAS), counted; `None` when it is
    /// held (or this process has not cached its owner tag yet), for the
    /// general path to wait for it.
    #[inline(always)]
    fn try_lock<const H: bool>(&self) -> Option<LockGuard<'_>> {
        let h = self.header();
        let guard = LockGuard::try_acquire_robust(&h.lock, &h.lock_owner)?;
        self.took_lock::<H>();
        Some(guard)
    }

    /// Right after taking the lock: the test hooks, and the count.
    #[inline(always)]
    fn took_lock<const H: bool>(&self) {
        if H {
            self.kill_point.hit(KillPoint::LockHeld);
            self.kill_point.hit(KillPoint::LockStop);
        }
        // Counters only written under the lock: load + store is exact.
        let h = self.header();
        let v = h.lock_acquired.load(Ordering::Relaxed);
        h.lock_acquired.store(v.wrapping_add(1), Ordering::Relaxed);
    }

    /// The lock for a non-blocking call, waiting at most the handle's lock
    /// timeout. `None` (and `errno` = `ETIMEDOUT`) when that passed with
    /// the lock still held by a live process.
    #[inline(always)]
    fn guard_now<const H: bool>(&self) -> Option<LockGuard<'_>> {
        match self.lock_guard::<H>(|| self.lock_deadline(), false) {
            Ok(g) => Some(g),
            Err(_) => {
                set_errno(libc::ETIMEDOUT);
                None
            }
        }
    }

    /// [`StrQueue::lock_until`] when the lock was found held: wait for it
    /// (taking it over from a dead holder) and count how it was taken.
    #[cold]
    #[inline(never)]
    fn lock_held(
        &self,
        deadline: Deadline,
        interruptible: bool,
    ) -> std::result::Result<LockGuard<'_>, LockFail> {
        let h = self.header();
        let (guard, got) =
            LockGuard::acquire_robust(&h.lock, &h.lock_owner, || deadline, interruptible)?;
        // Only written under the lock: load + store is exact.
        if got.contended {
            let v = h.lock_contended.load(Ordering::Relaxed);
            h.lock_contended.store(v.wrapping_add(1), Ordering::Relaxed);
        }
        if got.recovered {
            h.str_recoveries().fetch_add(1, Ordering::Relaxed);
            // HOOK(lease): settle a dead holder's lease records first.
            self.lease_recover();
        }
        Ok(guard)
    }

    #[inline(always)]
    fn consumers(&self) -> Side<'_> {
        let h = self.header();
        Side {
            waiters: &h.pop_waiters,
            futex: &h.pop_futex,
        }
    }

    #[inline(always)]
    fn producers(&self) -> Side<'_> {
        let h = self.header();
        Side {
            waiters: &h.push_waiters,
            futex: &h.push_futex,
        }
    }

    /// After items left: wake every blocked producer (see "Waiting" in the
    /// module docs for why not just one). Costs one load when nobody waits.
    #[inline]
    fn wake_producers(&self) {
        self.producers().wake(u32::MAX);
    }

    fn check(&self, len: usize) -> Result<()> {
        match never_fits(len as u64, self.usable) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn count_full(&self) {
        self.header()
            .str_push_full()
            .fetch_add(1, Ordering::Relaxed);
    }

    fn count_empty(&self) {
        self.header()
            .str_pop_empty()
            .fetch_add(1, Ordering::Relaxed);
    }

    /// `push` and `push_front` for a handle with a crash point: the same
    /// code with the hooks compiled in.
    #[cold]
    #[inline(never)]
    fn push_hooked(&self, bytes: &[u8], utf8: bool, front: bool) -> Result<bool> {
        if front {
            self.push_general::<true>(bytes, utf8, true)
        } else {
            self.push_back::<true>(bytes, utf8)
        }
    }

    /// A push at either end, every case: the length check, a lock that may
    /// have to be waited for, any placement.
    #[inline(never)]
    fn push_general<const H: bool>(&self, bytes: &[u8], utf8: bool, front: bool) -> Result<bool> {
        self.check(bytes.len())?;
        if self.committed_word() >= self.full_word {
            return self.found_full();
        }
        let Some(guard) = self.guard_now::<H>() else {
            return Ok(false);
        };
        if front {
            self.push_locked::<H, true>(guard, bytes, utf8)
        } else {
            self.push_locked::<H, false>(guard, bytes, utf8)
        }
    }

    /// [`StrQueue::push_general`] once the lock is held (`guard`) and the
    /// length checked. (`FRONT` a parameter of the type, not of the call:
    /// with six arguments in registers the hot path can jump here.) Cold
    /// for the layout of the hot path that falls back to it (14 fewer
    /// instructions per 50-byte pair), although every `push_front` ends
    /// here too.
    #[cold]
    #[inline(never)]
    fn push_locked<const H: bool, const FRONT: bool>(
        &self,
        guard: LockGuard<'_>,
        bytes: &[u8],
        utf8: bool,
    ) -> Result<bool> {
        let mut l = self.load_state::<H>(guard);
        let ok = l.put(bytes, utf8, FRONT);
        l.release();
        self.after_put(ok)
    }

    /// A back push. The usual case (a free lock, a free slot, and room
    /// right after the back item) is written out flat with no call in it,
    /// so the compiler keeps its state in registers rather than saving it
    /// around calls; every other case is handed whole, by a jump, to the
    /// general code ([`StrQueue::push_general`] before the lock is taken,
    /// [`StrQueue::push_locked`] after).
    #[inline(always)]
    fn push_back<const H: bool>(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        if bytes.len() as u64 > SHORT {
            return self.push_back_long::<H>(bytes, utf8);
        }
        self.push_back_with::<H, false>(bytes, utf8)
    }

    /// [`StrQueue::push_back`] of a string longer than [`SHORT`]: the same
    /// code with a `memcpy` (and the frame a call needs) in a function of
    /// its own.
    #[inline(never)]
    fn push_back_long<const H: bool>(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        self.push_back_with::<H, true>(bytes, utf8)
    }

    /// [`StrQueue::push_back`]; without `LONG` for strings of at most
    /// [`SHORT`] bytes.
    #[inline(always)]
    fn push_back_with<const H: bool, const LONG: bool>(
        &self,
        bytes: &[u8],
        utf8: bool,
    ) -> Result<bool> {
        let len = bytes.len() as u64;
        if len > self.max_len {
            return self.push_general::<H>(bytes, utf8, false);
        }
        if self.committed_word() >= self.full_word {
            // Every slot taken: answered without the lock.
            return self.found_full();
        }
        let Some(guard) = self.try_lock::<H>() else {
            return self.push_general::<H>(bytes, utf8, false);
        };
        let (copy, c, head, count) = self.current_state();
        // An empty queue (its arena starts over, see arena_of) is placed
        // apart: with nothing loaded the placement folds to two compares.
        let placed = if count == 0 {
            let mut a = Arena::empty(self.usable);
            a.place_back_usual(len).map(|off| (off, a))
        } else {
            let mut a = self.arena_of(c, count);
            match a.place_back_usual(len) {
                Some(off) if count <= self.mask => Some((off, a)),
                _ => None,
            }
        };
        let Some((off, arena)) = placed else {
            return self.push_locked::<H, false>(guard, bytes, utf8);
        };
        // The new state first, while it is in registers (so fewer values
        // stay live across the copy); nothing is visible before the switch.
        let pushed = c.push_ok.load(Ordering::Relaxed).wrapping_add(1);
        let popped = c.pop_ok.load(Ordering::Relaxed);
        write_copy::<H>(self, copy ^ 1, (head, count + 1), &arena, (pushed, popped));
        // `off < usable <= 2^32` (place_back_usual).
        write_item::<H, LONG>(self, head.wrapping_add(count), off as u32, 0, bytes, utf8);
        switch_to::<H>(self, copy ^ 1, count + 1);
        let wake_lock = guard.unlock();
        if wake_lock || self.consumers().waiting() {
            return self.wake_after_push(wake_lock);
        }
        Ok(true)
    }

    /// After a push found every slot taken (without the lock): count the
    /// miss; no room.
    #[inline(never)]
    fn found_full(&self) -> Result<bool> {
        self.count_full();
        self.missed();
        Ok(false)
    }

    /// After a locked push of one item released the lock: wake a consumer
    /// if it went in, else count the miss.
    fn after_put(&self, ok: bool) -> Result<bool> {
        if ok {
            self.consumers().wake(1);
            Ok(true)
        } else {
            self.found_full()
        }
    }

    /// The wake-ups after a push that found a sleeper on the lock word
    /// (`wake_lock`) or a consumer waiting.
    #[cold]
    #[inline(never)]
    fn wake_after_push(&self, wake_lock: bool) -> Result<bool> {
        if wake_lock {
            LockGuard::wake_one(&self.header().lock);
        }
        self.consumers().wake(1);
        Ok(true)
    }

    /// Push a copy of `bytes` (with its UTF-8 flag) at the back.
    ///
    /// Returns `Ok(false)` when there is no room now: every slot is taken,
    /// or the arena has no contiguous space for it (counted in `push_full`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the string could never fit: longer
    /// than the usable arena, or than [`MAX_ITEM`] bytes. The message names
    /// both sizes.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{Error, StrQueue};
    /// let q = StrQueue::anonymous(2, 4096)?;
    /// assert!(q.push(b"", false)?); // empty strings are items too
    /// assert!(q.push(&[0, 255], false)?);
    /// assert!(!q.push(b"x", false)?); // every slot taken: try later
    /// let err = q.push(&[0; 5000], false).unwrap_err(); // can never fit
    /// assert!(matches!(err, Error::InvalidArgument(_)));
    /// assert_eq!(err.to_string(), "string of 5000 bytes exceeds the arena of 4096 bytes");
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        // HOOK(compress): one load and one compare when compression is off.
        if self.packs(bytes) {
            return self.push_packed(bytes, utf8, false);
        }
        self.push_plain(bytes, utf8)
    }

    /// [`StrQueue::push`] storing `bytes` as they are.
    #[inline(always)]
    fn push_plain(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        match self.kill_point {
            KillPoint::None => self.push_back::<false>(bytes, utf8),
            _ => self.push_hooked(bytes, utf8, false),
        }
    }

    /// Push a copy of `bytes` at the front (it becomes the next item
    /// popped). As [`StrQueue::push`] otherwise.
    ///
    /// # Errors
    /// As [`StrQueue::push`].
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// q.push(b"second", false)?;
    /// q.push(b"third", false)?;
    /// q.push_front(b"urgent", false)?; // jumps the queue
    /// let mut buf = Vec::new();
    /// q.pop(false, &mut buf); // the front
    /// assert_eq!(buf, b"urgent");
    /// q.pop(true, &mut buf); // the back: a stack at that end
    /// assert_eq!(buf, b"third");
    /// q.pop(true, &mut buf);
    /// assert_eq!(buf, b"second");
    /// assert_eq!(q.pop(true, &mut buf), None);
    /// assert!(buf.is_empty());
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_front(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        // HOOK(compress)
        if self.packs(bytes) {
            return self.push_packed(bytes, utf8, true);
        }
        self.push_front_plain(bytes, utf8)
    }

    /// [`StrQueue::push_front`] storing `bytes` as they are.
    fn push_front_plain(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        match self.kill_point {
            KillPoint::None => self.push_general::<false>(bytes, utf8, true),
            _ => self.push_hooked(bytes, utf8, true),
        }
    }

    /// Push at the back (or the front), sleeping while there is no room,
    /// until `deadline`. A timeout counts in `push_full`.
    ///
    /// # Errors
    /// As [`StrQueue::push`], checked before waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{Deadline, StrQueue, Waited};
    /// let q = StrQueue::anonymous(2, 0)?;
    /// let d = Deadline::after_secs(0.01);
    /// assert_eq!(q.push_wait(b"a", false, false, &d)?, Waited::Done(()));
    /// assert_eq!(q.push_wait(b"b", false, true, &d)?, Waited::Done(())); // at the front
    /// // Full: waits until the deadline (retry on Interrupted).
    /// let w = loop {
    ///     match q.push_wait(b"c", false, false, &d)? {
    ///         Waited::Interrupted => continue,
    ///         w => break w,
    ///     }
    /// };
    /// assert_eq!(w, Waited::TimedOut);
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_wait(
        &self,
        bytes: &[u8],
        utf8: bool,
        front: bool,
        deadline: &Deadline,
    ) -> Result<Waited<()>> {
        // HOOK(compress): compress once, before waiting.
        if self.packs(bytes) {
            let level = self.compress.level.load(Ordering::Relaxed);
            return compress::with_packed(bytes, level, |stored, packed| {
                let orig = packed.then_some(bytes.len() as u64);
                self.check_stored(stored.len(), orig)?;
                self.push_wait_stored(stored, utf8, front, deadline, orig)
            });
        }
        self.check(bytes.len())?;
        self.push_wait_stored(bytes, utf8, front, deadline, None)
    }

    /// [`StrQueue::push_wait`] of the bytes to store, checked; `packed` as
    /// for [`Locked::put_any`].
    fn push_wait_stored(
        &self,
        bytes: &[u8],
        utf8: bool,
        front: bool,
        deadline: &Deadline,
        packed: Option<u64>,
    ) -> Result<Waited<()>> {
        // SYNC POINT: the attempt's lock CAS is SeqCst, and so are the
        // waiter announcement in block_on and the waiter check in
        // Side::wake. A consumer frees room under the lock and then checks
        // `push_waiters`; this producer announces itself and then locks.
        // In the single SeqCst order either the consumer's check comes
        // after our announcement (it wakes us), or our lock CAS comes after
        // its lock CAS, reads a value from its unlock or later, and so
        // sees the room it made. No wake-up is lost.
        let r = flatten(block_on(self.producers(), deadline, || {
            match self.lock_until::<true>(|| *deadline, true) {
                Err(f) => Ok(Err(f)),
                Ok(mut l) => {
                    if l.put_any(bytes, utf8, front, packed) {
                        Ok(Ok(()))
                    } else {
                        Err(Miss::Settled)
                    }
                }
            }
        }));
        match r {
            Waited::Done(()) => self.consumers().wake(1),
            Waited::TimedOut => self.count_full(),
            Waited::Interrupted => {}
        }
        Ok(r)
    }

    /// Remove the front (or, with `back`, the back) item, copying its bytes
    /// into `out` (cleared first). Returns its UTF-8 flag, or `None` when
    /// the queue is empty (counted in `pop_empty`; `out` is then empty).
    ///
    /// A compressed item is decoded, after the lock is released. One that
    /// cannot be decoded (see [`StrQueue::pop_checked`]) is removed and
    /// reported as no item, with `errno` set to `EBADMSG` (corrupt) or
    /// `ENOTSUP` (a build without the `zstd` feature).
    ///
    /// # Examples
    ///
    /// See [`StrQueue::push_front`] (both ends) and [`StrQueue`] (the
    /// UTF-8 flag).
    pub fn pop(&self, back: bool, out: &mut Vec<u8>) -> Option<bool> {
        let r = self.pop_raw(back, out);
        // HOOK(compress): a failed decode reads as no item; one load when
        // the queue was simply empty.
        if r.is_none() {
            if let Some(e) = compress::take_failure() {
                set_errno(failure_errno(&e));
            }
        }
        r
    }

    /// [`StrQueue::pop`], with a compressed item that cannot be decoded
    /// reported as an error: [`Error::Corrupt`] for one whose bytes were
    /// scribbled over, [`Error::Unsupported`] when this build lacks the
    /// `zstd` feature. Either way the item has been removed and the queue
    /// goes on.
    ///
    /// # Errors
    /// As above.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// q.push(b"job", false)?;
    /// let mut buf = Vec::new();
    /// assert_eq!(q.pop_checked(false, &mut buf)?, Some(false));
    /// assert_eq!(q.pop_checked(false, &mut buf)?, None);
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    #[inline(always)]
    pub fn pop_checked(&self, back: bool, out: &mut Vec<u8>) -> Result<Option<bool>> {
        let r = self.pop_raw(back, out);
        if r.is_none() {
            if let Some(e) = compress::take_failure() {
                return Err(e);
            }
        }
        Ok(r)
    }

    /// [`StrQueue::pop`] before a failed decode is picked up (see
    /// `pop_locked`).
    #[inline(always)]
    fn pop_raw(&self, back: bool, out: &mut Vec<u8>) -> Option<bool> {
        match (self.kill_point, back) {
            (KillPoint::None, false) => self.pop_front::<false>(out),
            (KillPoint::None, true) => self.pop_general::<false>(true, out),
            _ => self.pop_hooked(back, out),
        }
    }

    /// `pop` for a handle with a crash point: the same code with the hooks
    /// compiled in.
    #[cold]
    #[inline(never)]
    fn pop_hooked(&self, back: bool, out: &mut Vec<u8>) -> Option<bool> {
        if back {
            self.pop_general::<true>(true, out)
        } else {
            self.pop_front::<true>(out)
        }
    }

    /// A pop at either end, every case: a lock that may have to be waited
    /// for, an empty queue, an item that does not fit in `out` yet.
    #[inline(never)]
    fn pop_general<const H: bool>(&self, back: bool, out: &mut Vec<u8>) -> Option<bool> {
        out.clear();
        if self.committed_count() == 0 {
            return self.found_empty(false);
        }
        let guard = self.guard_now::<H>()?;
        self.pop_locked::<H>(guard, back, out)
    }

    /// [`StrQueue::pop_general`] once the lock is held (`guard`), with
    /// `out` empty. Cold as [`StrQueue::push_locked`] is.
    #[cold]
    #[inline(never)]
    fn pop_locked<const H: bool>(
        &self,
        guard: LockGuard<'_>,
        back: bool,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        let mut l = self.load_state::<H>(guard);
        let t = l.copy_end(back, true, out);
        l.release();
        match t {
            Some(t) => {
                self.wake_producers();
                // HOOK(compress): decode, the lock released; a failure is
                // kept for the public call (`pop`, `pop_checked`).
                if t.packed {
                    if let Err(e) = compress::unpack(out) {
                        compress::fail(e);
                        return None;
                    }
                }
                Some(t.utf8)
            }
            None => {
                self.count_empty();
                self.missed();
                None
            }
        }
    }

    /// A front pop. The usual case (a free lock, an item, and room for it
    /// in `out`) is written out flat with no call in it, as
    /// [`StrQueue::push_back`]; an empty queue is answered at once, and
    /// everything else jumps to the general code
    /// ([`StrQueue::pop_general`] before the lock is taken,
    /// [`StrQueue::pop_locked`] after).
    #[inline(always)]
    fn pop_front<const H: bool>(&self, out: &mut Vec<u8>) -> Option<bool> {
        out.clear();
        if self.committed_count() == 0 {
            // Empty: common for a consumer that polls, so answered here,
            // without the lock.
            return self.found_empty(false);
        }
        let Some(guard) = self.try_lock::<H>() else {
            return self.pop_general::<H>(false, out);
        };
        self.pop_front_held::<H, false>(guard, out)
    }

    /// [`StrQueue::pop_front`] of an item longer than [`SHORT`], with the
    /// lock held: the same code with a `memcpy`, as
    /// [`StrQueue::push_back_long`].
    #[inline(never)]
    fn pop_front_long<const H: bool>(
        &self,
        guard: LockGuard<'_>,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        self.pop_front_held::<H, true>(guard, out)
    }

    /// [`StrQueue::pop_front`] once the lock is held, with `out` empty;
    /// without `LONG`, items longer than [`SHORT`] go to
    /// [`StrQueue::pop_front_long`].
    #[inline(always)]
    fn pop_front_held<const H: bool, const LONG: bool>(
        &self,
        guard: LockGuard<'_>,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        let (copy, c, head, count) = self.current_state();
        if count == 0 {
            // Empty: common for a consumer that polls, so answered here.
            return self.found_empty(guard.unlock());
        }
        let (off, len, waste, utf8) = match read_item(self.slot(head), self.usable) {
            // `out` is empty: room for `len` bytes without growing it.
            Some(i) if i.1 as usize <= out.capacity() => i,
            _ => return self.pop_locked::<H>(guard, false, out),
        };
        if !LONG && len > SHORT {
            return self.pop_front_long::<H>(guard, out);
        }
        // The new state first, as in push_back.
        // `count - 1`: no arena word is loaded when the queue empties.
        let arena = self.arena_of(c, count - 1);
        let (head, arena) = self.after_removal(false, head, count, arena, align8(len) + waste);
        let pushed = c.push_ok.load(Ordering::Relaxed);
        let popped = c.pop_ok.load(Ordering::Relaxed).wrapping_add(1);
        write_copy::<H>(self, copy ^ 1, (head, count - 1), &arena, (pushed, popped));
        // SAFETY: `off + len <= usable` (read_item), so the source lies in
        // the mapped arena; `out` has room for `len` bytes (checked above)
        // and never overlaps the mapping; under the lock nobody else
        // writes this item. Without LONG, `len <= SHORT` (checked above).
        unsafe {
            let src = self.arena_ptr(off);
            if LONG {
                copy_bytes(src, out.as_mut_ptr(), len as usize);
            } else {
                copy_short(src, out.as_mut_ptr(), len as usize);
            }
            out.set_len(len as usize);
        }
        switch_to::<H>(self, copy ^ 1, count - 1);
        let wake_lock = guard.unlock();
        if wake_lock || self.producers().waiting() {
            return self.wake_after_pop(wake_lock, utf8);
        }
        Some(utf8)
    }

    /// After a front pop found the queue empty and unlocked: wake a sleeper
    /// on the lock word (`wake_lock`), count the miss; no item.
    #[inline(never)]
    fn found_empty(&self, wake_lock: bool) -> Option<bool> {
        if wake_lock {
            LockGuard::wake_one(&self.header().lock);
        }
        self.count_empty();
        self.missed();
        None
    }

    /// The wake-ups after a pop that found a sleeper on the lock word
    /// (`wake_lock`) or a producer waiting; returns the item's `utf8`.
    #[cold]
    #[inline(never)]
    fn wake_after_pop(&self, wake_lock: bool, utf8: bool) -> Option<bool> {
        if wake_lock {
            LockGuard::wake_one(&self.header().lock);
        }
        self.wake_producers();
        Some(utf8)
    }

    /// [`StrQueue::pop`], sleeping while the queue is empty, until
    /// `deadline`. A timeout counts in `pop_empty`. `Interrupted` (a
    /// signal) means nothing was popped: call again with the same deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{Deadline, StrQueue, Waited};
    /// let q = StrQueue::anonymous(8, 0)?;
    /// let mut buf = Vec::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| q.push("\u{263a}".as_bytes(), true));
    ///     let d = Deadline::after_secs(10.0);
    ///     let w = loop {
    ///         match q.pop_wait(false, &mut buf, &d) {
    ///             Waited::Interrupted => continue,
    ///             w => break w,
    ///         }
    ///     };
    ///     assert_eq!(w, Waited::Done(true));
    /// });
    /// assert_eq!(buf, "\u{263a}".as_bytes());
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn pop_wait(&self, back: bool, out: &mut Vec<u8>, deadline: &Deadline) -> Waited<bool> {
        self.pop_wait_checked(back, out, deadline)
            .unwrap_or_else(|e| {
                set_errno(failure_errno(&e));
                Waited::TimedOut
            })
    }

    /// [`StrQueue::pop_wait`], with an item that cannot be decoded
    /// reported as [`StrQueue::pop_checked`] does (the unchecked form
    /// reports it as `TimedOut` with `errno` set as [`StrQueue::pop`]
    /// does).
    ///
    /// # Errors
    /// As [`StrQueue::pop_checked`].
    pub fn pop_wait_checked(
        &self,
        back: bool,
        out: &mut Vec<u8>,
        deadline: &Deadline,
    ) -> Result<Waited<bool>> {
        // SYNC POINT: as in push_wait, with the roles swapped: a producer
        // publishes under the lock and then checks `pop_waiters` (SeqCst).
        let r = flatten(block_on(self.consumers(), deadline, || {
            out.clear();
            match self.lock_until::<true>(|| *deadline, true) {
                Err(f) => Ok(Err(f)),
                Ok(mut l) => match l.copy_end(back, true, out) {
                    Some(t) => Ok(Ok((t.utf8, t.packed))),
                    None => Err(Miss::Settled),
                },
            }
        }));
        match r {
            Waited::Done((utf8, packed)) => {
                self.wake_producers();
                // HOOK(compress): decode, the lock released.
                if packed {
                    compress::unpack(out)?;
                }
                Ok(Waited::Done(utf8))
            }
            Waited::TimedOut => {
                self.count_empty();
                Ok(Waited::TimedOut)
            }
            Waited::Interrupted => Ok(Waited::Interrupted),
        }
    }

    /// Copy the front item's bytes into `out` (cleared first) without
    /// removing it; exact (under the lock). Returns its UTF-8 flag, or
    /// `None` when the queue is empty.
    ///
    /// # Examples
    ///
    /// See [`StrQueue::clear`].
    pub fn peek(&self, out: &mut Vec<u8>) -> Option<bool> {
        self.peek_checked(out).unwrap_or_else(|e| {
            set_errno(failure_errno(&e));
            None
        })
    }

    /// [`StrQueue::peek`], with a front item that cannot be decoded
    /// reported as [`StrQueue::pop_checked`] does (it stays in the queue;
    /// the unchecked form reports no item, `errno` set as by
    /// [`StrQueue::pop`]).
    ///
    /// # Errors
    /// As [`StrQueue::pop_checked`].
    pub fn peek_checked(&self, out: &mut Vec<u8>) -> Result<Option<bool>> {
        out.clear();
        let Some(mut l) = self.locked::<true>() else {
            return Ok(None);
        };
        let t = l.copy_end(false, false, out);
        l.release();
        match t {
            // HOOK(compress): decode, the lock released.
            Some(t) if t.packed => compress::unpack(out).map(|()| Some(t.utf8)),
            Some(t) => Ok(Some(t.utf8)),
            None => {
                self.missed();
                Ok(None)
            }
        }
    }

    /// Push `items` at the back, in order, under one lock, until one does
    /// not fit now (a full queue or arena); returns how many were pushed.
    /// Stopping early counts once in `push_full`. Wakes one consumer per
    /// item pushed.
    ///
    /// # Errors
    /// As [`StrQueue::push`] when any item could never fit; then nothing is
    /// pushed (all items are checked before the lock is taken).
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// let batch: [(&[u8], bool); 5] =
    ///     [(b"a", false), (b"b", false), ("\u{e9}".as_bytes(), true), (b"d", false), (b"e", false)];
    /// assert_eq!(q.push_multi(&batch)?, 4); // the fifth did not fit
    /// let (mut bytes, mut items) = (Vec::new(), Vec::new());
    /// assert_eq!(q.pop_multi(10, Some(2), &mut bytes, &mut items), 2); // at most 2 bytes
    /// assert_eq!(items, [(0, 1, false), (1, 1, false)]);
    /// assert_eq!(bytes, b"ab");
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_multi(&self, items: &[(&[u8], bool)]) -> Result<usize> {
        // HOOK(compress): compress what this handle compresses, first (no
        // look at the items when it is off).
        let min = self.compress.min.load(Ordering::Relaxed);
        if min != u64::MAX && items.iter().any(|(b, _)| b.len() as u64 >= min) {
            let level = self.compress.level.load(Ordering::Relaxed);
            let wants = |len: usize| len as u64 >= self.compress.min.load(Ordering::Relaxed);
            return compress::with_packed_batch(items, wants, level, |stored| {
                for &(b, _, packed, orig) in stored {
                    self.check_stored(b.len(), packed.then_some(orig))?;
                }
                Ok(self.push_multi_stored(
                    stored.len(),
                    stored
                        .iter()
                        .map(|&(b, utf8, packed, orig)| (b, utf8, packed.then_some(orig))),
                ))
            });
        }
        for (b, _) in items {
            self.check(b.len())?;
        }
        Ok(self.push_multi_stored(items.len(), items.iter().map(|&(b, utf8)| (b, utf8, None))))
    }

    /// [`StrQueue::push_multi`] of `len` checked items to store, each
    /// with `packed` as for [`Locked::put_any`].
    fn push_multi_stored<'b>(
        &self,
        len: usize,
        items: impl Iterator<Item = (&'b [u8], bool, Option<u64>)>,
    ) -> usize {
        let mut n = 0usize;
        {
            let Some(mut l) = self.locked::<true>() else {
                return 0;
            };
            for (b, utf8, packed) in items {
                if !l.put_any(b, utf8, false, packed) {
                    break;
                }
                n += 1;
            }
        }
        if n < len {
            self.count_full();
            self.missed();
        }
        self.consumers().wake(u32::try_from(n).unwrap_or(u32::MAX));
        n
    }

    /// Pop up to `n` items from the front under one lock, appending their
    /// bytes to `out` and `(start, len, utf8)` for each to `items` (`start`
    /// indexes `out`). With `max_bytes`, stop before the total length of
    /// the items taken would exceed it, but always take the first item if
    /// there is one. Returns how many were taken; none (with `n > 0`)
    /// counts in `pop_empty`.
    ///
    /// # Examples
    ///
    /// See [`StrQueue::push_multi`].
    pub fn pop_multi(
        &self,
        n: usize,
        max_bytes: Option<u64>,
        out: &mut Vec<u8>,
        items: &mut Vec<(usize, usize, bool)>,
    ) -> usize {
        self.pop_multi_budget(n, max_bytes, true, out, items)
    }

    /// [`StrQueue::pop_multi`], where `first_exempt = false` makes the
    /// budget apply to the first item too (for a batch that continues one
    /// already started, as `pop_wait_multi` does after its blocking pop).
    /// A batch that meets an item it cannot decode returns 0 with `errno`
    /// set as [`StrQueue::pop`] does (see [`StrQueue::pop_multi_checked`]).
    pub fn pop_multi_budget(
        &self,
        n: usize,
        max_bytes: Option<u64>,
        first_exempt: bool,
        out: &mut Vec<u8>,
        items: &mut Vec<(usize, usize, bool)>,
    ) -> usize {
        self.pop_multi_checked(n, max_bytes, first_exempt, out, items)
            .unwrap_or_else(|e| {
                set_errno(failure_errno(&e));
                0
            })
    }

    /// [`StrQueue::pop_multi_budget`], with a compressed item that cannot
    /// be decoded reported as [`StrQueue::pop_checked`] does. The budget
    /// counts compressed items at their decoded length. Items are decoded
    /// after the lock is released, so the whole batch has been removed by
    /// then: the items taken with a bad one are lost with it (the error
    /// says how many), and `out` and `items` are left as they were.
    ///
    /// # Errors
    /// As [`StrQueue::pop_checked`].
    pub fn pop_multi_checked(
        &self,
        n: usize,
        max_bytes: Option<u64>,
        first_exempt: bool,
        out: &mut Vec<u8>,
        items: &mut Vec<(usize, usize, bool)>,
    ) -> Result<usize> {
        let mut got = 0usize;
        let mut over_budget = false;
        let (out0, items0) = (out.len(), items.len());
        // HOOK(compress): which of the items taken are compressed.
        let mut packed = Vec::new();
        {
            let Some(mut l) = self.locked::<true>() else {
                return Ok(0);
            };
            let mut total = 0u64;
            while got < n {
                if let (Some(budget), true) = (max_bytes, got > 0 || !first_exempt) {
                    match l.read_end(false) {
                        Some(i) if total.saturating_add(self.item_len(i)) <= budget => {}
                        Some(_) => {
                            over_budget = true;
                            break;
                        }
                        None => break,
                    }
                }
                let Some(t) = l.copy_end(false, true, out) else {
                    break;
                };
                let len = if t.packed {
                    packed.push(items.len());
                    self.packed_len(&out[t.start..t.start + t.len], t.len as u64)
                } else {
                    t.len as u64
                };
                total = total.saturating_add(len);
                items.push((t.start, t.len, t.utf8));
                got += 1;
            }
        }
        if got > 0 {
            self.wake_producers();
        } else if n > 0 && !over_budget {
            self.count_empty();
            self.missed();
        }
        if !packed.is_empty() {
            // HOOK(compress): decode, the lock released.
            compress::unpack_batch(out, items, items0, out0, &packed).map_err(|e| match e {
                Error::Corrupt(m) if got > 1 => Error::Corrupt(format!(
                    "{m}; the {} other items taken with it are lost",
                    got - 1
                )),
                e => e,
            })?;
        }
        Ok(got)
    }

    /// Items in the queue (a snapshot, read without the lock).
    ///
    /// # Examples
    ///
    /// See [`StrQueue::clear`].
    pub fn len(&self) -> u64 {
        self.current_state().3
    }

    /// Whether the queue is empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every slot is taken (a snapshot; the arena may fill first).
    pub fn is_full(&self) -> bool {
        self.len() >= self.capacity()
    }

    /// Slot count.
    pub fn capacity(&self) -> u64 {
        self.mask + 1
    }

    /// Remove every item (they are not counted as pops) and reset the
    /// arena; returns how many were removed. Wakes every blocked producer
    /// and consumer.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 0)?;
    /// let items: [(&[u8], bool); 2] = [(b"a", false), (b"b", false)];
    /// q.push_multi(&items)?;
    /// assert_eq!((q.len(), q.capacity()), (2, 4));
    /// let mut buf = Vec::new();
    /// assert_eq!(q.peek(&mut buf), Some(false)); // a copy; the item stays
    /// assert_eq!(buf, b"a");
    /// assert_eq!(q.clear(), 2);
    /// assert!(q.is_empty());
    /// assert_eq!(q.peek(&mut buf), None);
    /// assert_eq!(q.stats().arena_used, 0); // the arena is reset too
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn clear(&self) -> u64 {
        let n = {
            let Some(mut l) = self.locked::<true>() else {
                return 0;
            };
            let n = l.count;
            l.count = 0;
            l.head = 0;
            l.arena = Arena::empty(self.usable);
            l.dirty = true;
            let h = self.header();
            let c = h.str_cleared().load(Ordering::Relaxed);
            h.str_cleared().store(c.wrapping_add(n), Ordering::Relaxed);
            n
        };
        self.producers().wake_all();
        self.consumers().wake_all();
        n
    }

    /// Flush the mapping to its file (`msync`); nothing to do for an
    /// anonymous queue.
    ///
    /// # Errors
    /// msync failure.
    ///
    /// # Examples
    ///
    /// See [`StrQueue::unlink`].
    pub fn sync(&self) -> Result<()> {
        self.region.sync()
    }

    /// Counters and gauges (read without the lock, so approximate while
    /// others work; exact when quiescent). `arena_cap` is the arena size as
    /// created; `arena_used` includes wrap waste.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 8192)?;
    /// q.push(b"hello", false)?; // charged 8 bytes: lengths round up to 8
    /// let mut buf = Vec::new();
    /// q.pop(false, &mut buf);
    /// q.pop(false, &mut buf); // empty
    /// let s = q.stats();
    /// assert_eq!((s.size, s.push_ok, s.pop_ok, s.pop_empty), (0, 1, 1, 1));
    /// assert_eq!((s.arena_cap, s.arena_used), (8192, 0));
    /// // header, slots, arena; the lease table and its data area
    /// assert_eq!(s.mmap_size, 320 + 4 * 16 + 8192 + 65 * 64 + 8192);
    /// // The push and the first pop took the lock; the empty pop looked
    /// // without it.
    /// assert_eq!((s.lock_acquired, s.lock_contended), (2, 0));
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let h = self.header();
        let (_, c, _, size) = self.current_state();
        Stats {
            size,
            capacity: self.capacity(),
            mmap_size: self.region.mapped_len(),
            push_ok: c.push_ok.load(Ordering::Relaxed),
            pop_ok: c.pop_ok.load(Ordering::Relaxed),
            push_full: h.str_push_full().load(Ordering::Relaxed),
            pop_empty: h.str_pop_empty().load(Ordering::Relaxed),
            recoveries: h.str_recoveries().load(Ordering::Relaxed),
            push_waiters: crate::wait::waiter_count(&h.push_waiters),
            pop_waiters: crate::wait::waiter_count(&h.pop_waiters),
            arena_cap: self.region.geometry().arena_cap,
            arena_used: c.used.load(Ordering::Relaxed).min(self.usable),
            lock_acquired: h.lock_acquired.load(Ordering::Relaxed),
            lock_contended: h.lock_contended.load(Ordering::Relaxed).into(),
            compressed: h.compressed.load(Ordering::Relaxed),
            compressed_saved: h.compressed_saved.load(Ordering::Relaxed),
        }
    }

    /// The file path of a file-backed queue.
    pub fn path(&self) -> Option<&CStr> {
        self.region.path()
    }

    /// The memfd (or attached fd), or -1.
    pub fn fd(&self) -> i32 {
        self.region.fd()
    }

    /// Remove the backing file. This handle, and every other one already
    /// open, keeps working; opening the path again creates a new queue.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for anonymous and memfd queues; the unlink
    /// error otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{Error, StrQueue};
    /// let path = std::env::temp_dir().join(format!("dqs-doc-str-unlink-{}.q", std::process::id()));
    /// let q = StrQueue::open(&path, 8, 0, 0o600)?;
    /// q.push(b"kept", false)?;
    /// q.sync()?; // on disk now, not only in the page cache
    /// q.unlink()?;
    /// assert!(!path.exists());
    /// let mut buf = Vec::new();
    /// assert_eq!(q.pop(false, &mut buf), Some(false)); // still works
    /// let anon = StrQueue::anonymous(2, 0)?;
    /// assert!(matches!(anon.unlink(), Err(Error::Unsupported(_))));
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn unlink(&self) -> Result<()> {
        self.region.unlink()
    }

    /// The region (path, fd, backing, geometry).
    pub fn region(&self) -> &Region {
        &self.region
    }
}

/// `errno` for a pop whose item could not be decoded, in the forms that
/// report it as no item.
fn failure_errno(e: &Error) -> i32 {
    match e {
        Error::Unsupported(_) => libc::ENOTSUP,
        _ => libc::EBADMSG,
    }
}

/// Compression: the producer setting and the hooks marked `HOOK(compress)`
/// above. The codec itself is in `compress.rs`.
impl StrQueue {
    /// Store the strings of at least `min_bytes` bytes that this handle
    /// pushes (by every push call) compressed with zstd at `level`, when
    /// that makes them shorter; `min_bytes` 0 turns it off. Returns the
    /// previous `min_bytes` (0: it was off). This handle only (not
    /// shared): readers need no setting, every pop decodes.
    ///
    /// A compressed item takes its compressed length in the arena, so an
    /// item longer than the arena may fit; it is compressed before the
    /// lock is taken, and decoded by the reader after the lock is
    /// released.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a level zstd does not have (0 is
    /// refused; negative levels are zstd's fast ones), and
    /// [`Error::Unsupported`] to turn it on in a build without the `zstd`
    /// feature.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::StrQueue;
    /// let q = StrQueue::anonymous(4, 4096)?;
    /// assert_eq!(q.set_compress(512, 3)?, 0);
    /// let doc = "{\"id\":1,\"tags\":[\"a\",\"b\"]} ".repeat(300); // 9.6 KB
    /// assert!(q.push(doc.as_bytes(), true)?); // fits a 4 KB arena compressed
    /// let s = q.stats();
    /// assert_eq!(s.compressed, 1);
    /// assert!(s.arena_used < 1000);
    /// let mut buf = Vec::new();
    /// assert_eq!(q.pop(false, &mut buf), Some(true));
    /// assert_eq!(buf, doc.as_bytes());
    /// assert_eq!(q.set_compress(0, 3)?, 512); // off again
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    #[cfg_attr(not(feature = "zstd"), allow(unused_variables))]
    pub fn set_compress(&self, min_bytes: u64, level: i32) -> Result<u64> {
        let min = compress::check_setting(min_bytes, level)?;
        self.compress.level.store(level, Ordering::Relaxed);
        Ok(match self.compress.min.swap(min, Ordering::Relaxed) {
            u64::MAX => 0,
            m => m,
        })
    }

    /// The compression setting: `(min_bytes, level)`, `min_bytes` 0 when
    /// off.
    pub fn compress(&self) -> (u64, i32) {
        let min = match self.compress.min.load(Ordering::Relaxed) {
            u64::MAX => 0,
            m => m,
        };
        (min, self.compress.level.load(Ordering::Relaxed))
    }

    /// Whether this handle compresses `bytes` (`min` is `u64::MAX` when
    /// off, so this is one compare).
    #[inline(always)]
    fn packs(&self, bytes: &[u8]) -> bool {
        bytes.len() as u64 >= self.compress.min.load(Ordering::Relaxed)
    }

    /// A push (at the back, or the `front`) of a string this handle
    /// compresses: compressed before the lock is taken; stored as it is
    /// when compressing does not make it shorter.
    #[cold]
    #[inline(never)]
    fn push_packed(&self, bytes: &[u8], utf8: bool, front: bool) -> Result<bool> {
        let level = self.compress.level.load(Ordering::Relaxed);
        compress::with_packed(bytes, level, |stored, packed| {
            if !packed {
                return if front {
                    self.push_front_plain(bytes, utf8)
                } else {
                    self.push_plain(bytes, utf8)
                };
            }
            let orig = bytes.len() as u64;
            self.check_stored(stored.len(), Some(orig))?;
            let Some(mut l) = self.locked::<true>() else {
                return Ok(false);
            };
            let ok = l.put_any(stored, utf8, front, Some(orig));
            l.release();
            self.after_put(ok)
        })
    }

    /// [`StrQueue::check`] of `stored` bytes to store for a string of
    /// `packed` bytes (compressed) or of `stored` bytes (`None`).
    fn check_stored(&self, stored: usize, packed: Option<u64>) -> Result<()> {
        match (never_fits(stored as u64, self.usable), packed) {
            (None, _) => Ok(()),
            (Some(e), None) => Err(e),
            (Some(_), Some(orig)) => Err(Error::InvalidArgument(format!(
                "string of {orig} bytes ({stored} compressed) exceeds the arena of {} bytes",
                self.usable
            ))),
        }
    }

    /// Under the lock: the item just written to slot `idx` is the zstd
    /// frame (`stored` bytes) of a string of `orig` bytes. Flag it, and
    /// count it in the header (load + store: only written under the lock).
    #[cold]
    #[inline(never)]
    fn mark_packed(&self, idx: u64, stored: u64, orig: u64) {
        // `stored <= MAX_ITEM < 2^31` was checked by the caller.
        self.slot(idx)
            .len
            .store(stored as u32 | LEN_PACKED, Ordering::Relaxed);
        let h = self.header();
        let n = h.compressed.load(Ordering::Relaxed);
        h.compressed.store(n.wrapping_add(1), Ordering::Relaxed);
        let saved = align8(orig).saturating_sub(align8(stored));
        let v = h.compressed_saved.load(Ordering::Relaxed);
        h.compressed_saved
            .store(v.wrapping_add(saved), Ordering::Relaxed);
    }

    /// Under the lock: the length a batch budget counts for the item
    /// `read_end` described (decoded, for a compressed one).
    fn item_len(&self, (off, len, _, _, packed): (u64, u64, u64, bool, bool)) -> u64 {
        if !packed {
            return len;
        }
        // A frame header is at most 18 bytes.
        let n = len.min(18) as usize;
        // SAFETY: `off + len <= usable` (read_item_any), so these `n <=
        // len` bytes lie in the mapped arena; we hold the lock, so nobody
        // writes them; they are only read.
        let head = unsafe { std::slice::from_raw_parts(self.arena_ptr(off), n) };
        self.packed_len(head, len)
    }

    /// The decoded length of the compressed item of `stored` bytes whose
    /// first bytes are `frame` (`stored` if its header says none: it will
    /// fail to decode anyway).
    fn packed_len(&self, frame: &[u8], stored: u64) -> u64 {
        compress::content_size(frame).unwrap_or(stored)
    }
}

// HOOK(lease): the Str lease methods (src/lease/strq_ops.rs).
#[path = "lease/strq_ops.rs"]
mod lease_ops;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::path::PathBuf;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// xorshift64*: deterministic, no crates.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn pop_item(q: &StrQueue, back: bool) -> Option<(Vec<u8>, bool)> {
        let mut out = vec![0xAA; 3]; // must be cleared by pop
        q.pop(back, &mut out).map(|u| (out, u))
    }

    fn pattern(id: u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (id.wrapping_mul(131).wrapping_add(i as u64 * 7) % 251) as u8)
            .collect()
    }

    fn temp_path(tag: &str) -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        std::env::temp_dir().join(format!(
            "dqs-strq-{tag}-{}-{}.shm",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Sum of the charges (aligned length + waste) recorded in the slots of
    /// the items present.
    fn slot_charges(q: &StrQueue) -> u64 {
        let c = q.current_state().1;
        let (head, count) = (
            c.head.load(Ordering::Relaxed),
            c.count.load(Ordering::Relaxed),
        );
        (0..count)
            .map(|i| {
                let s = q.slot(head + i);
                align8(u64::from(s.len.load(Ordering::Relaxed)))
                    + u64::from(s.meta.load(Ordering::Relaxed) & META_WASTE)
            })
            .sum()
    }

    fn end_slot(q: &StrQueue, back: bool) -> (u64, u64) {
        let c = q.current_state().1;
        let (head, count) = (
            c.head.load(Ordering::Relaxed),
            c.count.load(Ordering::Relaxed),
        );
        let s = q.slot(if back { head + count - 1 } else { head });
        (
            u64::from(s.off.load(Ordering::Relaxed)),
            u64::from(s.meta.load(Ordering::Relaxed) & META_WASTE),
        )
    }

    #[test]
    fn copy_bytes_copies_exactly_n_bytes_at_every_length() {
        let src: Vec<u8> = (0..200u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(1))
            .collect();
        for n in 0..=140 {
            for skew in 0..3 {
                let mut dst = vec![0xEEu8; 160];
                // SAFETY: `skew + n <= 142 < 200` and `1 + n < 160`.
                unsafe { copy_bytes(src.as_ptr().add(skew), dst.as_mut_ptr().add(1), n) };
                assert_eq!(dst[1..1 + n], src[skew..skew + n], "n {n} skew {skew}");
                assert_eq!(dst[0], 0xEE, "n {n}: byte before");
                assert!(
                    dst[1 + n..].iter().all(|&b| b == 0xEE),
                    "n {n}: bytes after"
                );
            }
        }
    }

    #[test]
    fn two_2000_byte_strings_fill_a_4096_arena_exactly() {
        let q = StrQueue::anonymous(16, 4096).unwrap();
        let a = vec![b'a'; 2000];
        let b = vec![b'b'; 2000];
        assert!(q.push(&a, false).unwrap());
        assert!(q.push(&b, false).unwrap());
        assert!(q.push(&[b'c'; 96], false).unwrap());
        assert_eq!(q.stats().arena_used, 4096);
        // Exactly full: nothing more fits, except an empty string.
        assert!(!q.push(b"x", false).unwrap());
        assert!(!q.push_front(b"x", false).unwrap());
        assert_eq!(q.stats().push_full, 2);
        assert!(q.push(b"", false).unwrap());
        assert_eq!(pop_item(&q, false).unwrap().0, a);
        assert_eq!(pop_item(&q, false).unwrap().0, b);
        assert_eq!(pop_item(&q, false).unwrap().0, vec![b'c'; 96]);
        assert_eq!(pop_item(&q, false).unwrap().0, b"");
        assert_eq!(pop_item(&q, false), None);
        assert_eq!(q.stats().arena_used, 0);
    }

    #[test]
    fn wrap_waste_is_charged_and_given_back_by_pop_and_pop_back() {
        for back in [false, true] {
            let q = StrQueue::anonymous(16, 4096).unwrap();
            for (i, n) in [1000usize, 2000, 1000].iter().enumerate() {
                assert!(q.push(&pattern(i as u64, *n), false).unwrap());
            }
            assert_eq!(pop_item(&q, false).unwrap().0, pattern(0, 1000));
            // 96 bytes are left at the end: an 800-byte item wraps to 0.
            assert!(q.push(&pattern(9, 800), false).unwrap());
            assert_eq!(end_slot(&q, true), (0, 96));
            assert_eq!(q.stats().arena_used, 2000 + 1000 + 96 + 800);
            if back {
                assert_eq!(pop_item(&q, true).unwrap().0, pattern(9, 800));
                assert_eq!(q.stats().arena_used, 3000);
                // The waste came back: the end of the arena is usable again.
                assert!(q.push(&pattern(10, 96), false).unwrap());
                assert_eq!(end_slot(&q, true), (4000, 0));
            } else {
                pop_item(&q, false).unwrap();
                pop_item(&q, false).unwrap();
                assert_eq!(q.stats().arena_used, 96 + 800);
                assert_eq!(pop_item(&q, false).unwrap().0, pattern(9, 800));
                assert_eq!(q.stats().arena_used, 0);
            }
        }
    }

    #[test]
    fn push_front_wraps_toward_the_end_and_frees_what_it_took() {
        let q = StrQueue::anonymous(16, 4096).unwrap();
        assert!(q.push(&pattern(1, 16), false).unwrap());
        assert!(q.push(&pattern(2, 16), false).unwrap());
        pop_item(&q, false).unwrap(); // the front item now starts at 16
        assert!(q.push_front(&pattern(3, 100), true).unwrap());
        assert_eq!(end_slot(&q, false), (4096 - 104, 16));
        assert_eq!(q.stats().arena_used, 16 + 104 + 16);
        let mut out = Vec::new();
        assert_eq!(q.peek(&mut out), Some(true));
        assert_eq!(out, pattern(3, 100));
        assert_eq!(pop_item(&q, true).unwrap().0, pattern(2, 16));
        assert_eq!(pop_item(&q, true).unwrap(), (pattern(3, 100), true));
        assert_eq!(q.stats().arena_used, 0);
    }

    #[test]
    fn push_front_items_stack_lifo_at_the_head() {
        let q = StrQueue::anonymous(8, 0).unwrap();
        q.push(b"tail", false).unwrap();
        for s in [&b"one"[..], b"two", b"three"] {
            assert!(q.push_front(s, false).unwrap());
        }
        let got: Vec<_> = std::iter::from_fn(|| pop_item(&q, false).map(|x| x.0)).collect();
        assert_eq!(
            got,
            vec![
                b"three".to_vec(),
                b"two".to_vec(),
                b"one".to_vec(),
                b"tail".to_vec()
            ]
        );
    }

    #[test]
    fn arena_resets_to_its_start_when_the_queue_empties() {
        let q = StrQueue::anonymous(16, 4096).unwrap();
        q.push(&[1; 1000], false).unwrap();
        q.push(&[2; 1000], false).unwrap();
        pop_item(&q, false).unwrap();
        pop_item(&q, true).unwrap();
        let c = q.current_state().1;
        let words = [&c.rd, &c.wr, &c.used].map(|w| w.load(Ordering::Relaxed));
        assert_eq!(words, [0, 0, 0]);
        // The whole arena in one piece is available again.
        assert!(q.push(&[3; 4096], false).unwrap());
        assert_eq!(end_slot(&q, false), (0, 0));
    }

    #[test]
    fn strings_that_can_never_fit_are_errors_naming_the_sizes() {
        let q = StrQueue::anonymous(4, 4096).unwrap();
        let e = q.push(&[0; 4097], false).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)));
        assert_eq!(
            e.to_string(),
            "string of 4097 bytes exceeds the arena of 4096 bytes"
        );
        assert!(q.push_front(&[0; 5000], false).is_err());
        assert!(q
            .push_wait(&[0; 5000], false, false, &Deadline::FOREVER)
            .is_err());
        assert!(q.push(&[0; 4096], false).unwrap());
        assert_eq!(q.stats().push_full, 0, "errors are not push_full");

        // Usable bytes are the arena rounded down to a multiple of 8; stats
        // reports the arena as requested.
        let q = StrQueue::anonymous(4, 4100).unwrap();
        assert_eq!(q.stats().arena_cap, 4100);
        let e = q.push(&[0; 4100], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "string of 4100 bytes exceeds the arena of 4096 bytes"
        );
        assert!(q.push(&[0; 4096], false).unwrap());

        // The hard limit (an arena that large is not mapped in a test).
        let e = never_fits(MAX_ITEM + 1, 1 << 32).unwrap();
        assert_eq!(
            e.to_string(),
            format!(
                "string of {} bytes exceeds the maximum item size of {MAX_ITEM} bytes",
                MAX_ITEM + 1
            )
        );
        assert!(never_fits(MAX_ITEM, 1 << 32).is_none());
    }

    #[test]
    fn arena_sizes_default_minimum_and_exact() {
        assert_eq!(
            StrQueue::anonymous(1024, 0).unwrap().stats().arena_cap,
            1024 * 256
        );
        assert_eq!(StrQueue::anonymous(2, 0).unwrap().stats().arena_cap, 4096);
        assert_eq!(StrQueue::anonymous(2, 100).unwrap().stats().arena_cap, 4096);
        let q = StrQueue::anonymous(2, 10_000).unwrap();
        let s = q.stats();
        assert_eq!(s.arena_cap, 10_000);
        // Then the default lease table (format 6) on a 64-byte boundary:
        // a head and 64 records, and a lease data area as large as the
        // arena (64 items of 5000 bytes would be more).
        let lease_off = (320 + 2 * 16 + 10_000 + 63) & !63;
        assert_eq!(s.mmap_size, lease_off + 65 * 64 + 10_000);
        assert!(StrQueue::anonymous(2, (1 << 32) + 1).is_err());
    }

    #[test]
    fn push_multi_stops_at_the_first_item_that_does_not_fit() {
        let q = StrQueue::anonymous(16, 4096).unwrap();
        let (a, b, c, d) = (
            vec![1u8; 2000],
            vec![2u8; 2000],
            vec![3u8; 100],
            vec![4u8; 8],
        );
        let items: Vec<(&[u8], bool)> = vec![(&a, false), (&b, true), (&c, false), (&d, false)];
        // 96 bytes are left after two 2000s: 100 does not fit, and the 8
        // after it is not tried.
        assert_eq!(q.push_multi(&items).unwrap(), 2);
        assert_eq!(q.len(), 2);
        assert_eq!(q.stats().push_full, 1);
        assert_eq!(pop_item(&q, false).unwrap(), (a.clone(), false));
        assert_eq!(pop_item(&q, false).unwrap(), (b.clone(), true));

        // The slot count stops it too.
        let q = StrQueue::anonymous(2, 0).unwrap();
        let items: Vec<(&[u8], bool)> = vec![(b"x", false), (b"y", false), (b"z", false)];
        assert_eq!(q.push_multi(&items).unwrap(), 2);

        // An item that can never fit: an error, and nothing is pushed.
        let q = StrQueue::anonymous(16, 4096).unwrap();
        let big = vec![0u8; 5000];
        let items: Vec<(&[u8], bool)> = vec![(b"ok", false), (&big, false)];
        let e = q.push_multi(&items).unwrap_err();
        assert!(e.to_string().contains("5000"), "{e}");
        assert_eq!(q.len(), 0);
        assert_eq!(q.stats().push_ok, 0);
    }

    #[test]
    fn pop_multi_respects_count_and_byte_budget() {
        let q = StrQueue::anonymous(16, 0).unwrap();
        for i in 0..5u64 {
            q.push(&pattern(i, 100), i % 2 == 1).unwrap();
        }
        let mut out = Vec::new();
        let mut items = Vec::new();
        // 100 + 100 <= 250, a third would make 300.
        assert_eq!(q.pop_multi(10, Some(250), &mut out, &mut items), 2);
        assert_eq!(items, vec![(0, 100, false), (100, 100, true)]);
        assert_eq!(&out[..100], &pattern(0, 100)[..]);
        assert_eq!(&out[100..], &pattern(1, 100)[..]);
        // A budget below the first item still returns that one item; the
        // output is appended to.
        assert_eq!(q.pop_multi(10, Some(10), &mut out, &mut items), 1);
        assert_eq!(items[2], (200, 100, false));
        assert_eq!(q.pop_multi(10, Some(0), &mut out, &mut items), 1);
        // The count limit.
        q.push(b"", false).unwrap();
        assert_eq!(q.pop_multi(1, None, &mut out, &mut items), 1);
        assert_eq!(q.pop_multi(10, None, &mut out, &mut items), 1);
        assert_eq!(items.last(), Some(&(500, 0, false)));
        assert_eq!(q.pop_multi(10, None, &mut out, &mut items), 0);
        assert_eq!(q.pop_multi(0, None, &mut out, &mut items), 0);
        let s = q.stats();
        assert_eq!((s.pop_ok, s.pop_empty, s.arena_used), (6, 1, 0));
    }

    #[test]
    fn every_push_and_pop_takes_the_lock_once_whichever_path_serves_it() {
        // The hot paths hand odd cases to the general code with the lock
        // still held: that must neither take it again nor count it twice,
        // and the outcome must be the general code's.
        let q = StrQueue::anonymous(4, 4096).unwrap();
        let mut roomy = Vec::with_capacity(4096);
        let mut locks = |what: &str, n: u64, op: &mut dyn FnMut(&mut Vec<u8>) -> bool| {
            let before = q.stats().lock_acquired;
            assert!(op(&mut roomy), "{what}");
            assert_eq!(q.stats().lock_acquired - before, n, "{what}: locks taken");
        };
        locks("short push", 1, &mut |_| q.push(b"abc", true).unwrap());
        locks("long push", 1, &mut |_| q.push(&[7; 2000], false).unwrap());
        locks("push after the back item", 1, &mut |_| {
            q.push(&[1; 1000], false).unwrap()
        });
        // 3008 bytes taken from 0: 1100 more fit neither after them nor
        // before them.
        locks("push that does not fit", 1, &mut |_| {
            !q.push(&[8; 1100], false).unwrap()
        });
        locks("pop into a buffer without room", 1, &mut |_| {
            let mut small = Vec::new();
            q.pop(false, &mut small) == Some(true) && small == b"abc"
        });
        locks("long pop", 1, &mut |o| {
            q.pop(false, o) == Some(false) && o[..] == [7; 2000]
        });
        // Now 2008 .. 3008 is taken: 1500 bytes wrap to the start.
        locks("wrapping push", 1, &mut |_| {
            q.push(&[2; 1500], false).unwrap()
        });
        assert_eq!(end_slot(&q, true), (0, 4096 - 3008));
        locks("pop", 1, &mut |o| {
            q.pop(false, o) == Some(false) && o[..] == [1; 1000]
        });
        locks("pop of the wrapped item", 1, &mut |o| {
            q.pop(false, o) == Some(false) && o[..] == [2; 1500]
        });
        // An empty queue, or one with every slot taken, is seen from
        // `current` without the lock.
        locks("pop when empty", 0, &mut |o| {
            q.pop(false, o).is_none() && o.is_empty()
        });
        locks("pop_back when empty", 0, &mut |o| {
            q.pop(true, o).is_none() && o.is_empty()
        });
        for _ in 0..4 {
            locks("short push", 1, &mut |_| q.push(b"x", false).unwrap());
        }
        locks("push with every slot taken", 0, &mut |_| {
            !q.push(b"y", false).unwrap()
        });
        locks("push_front with every slot taken", 0, &mut |_| {
            !q.push_front(b"y", false).unwrap()
        });
        assert_eq!(q.clear(), 4);
        let s = q.stats();
        assert_eq!(
            (s.push_ok, s.pop_ok, s.push_full, s.pop_empty),
            (8, 4, 3, 2)
        );
        assert_eq!((s.lock_acquired, s.lock_contended), (14, 0));
        assert_eq!((s.arena_used, q.len()), (0, 0));
    }

    #[test]
    fn utf8_flag_round_trips_through_pop_peek_and_pop_back() {
        let q = StrQueue::anonymous(8, 0).unwrap();
        let s = "caf\u{e9} \u{263a}".as_bytes();
        q.push(s, true).unwrap();
        q.push(s, false).unwrap();
        q.push_front(b"plain", false).unwrap();
        q.push(b"", true).unwrap();
        let mut out = Vec::new();
        assert_eq!(q.peek(&mut out), Some(false));
        assert_eq!(out, b"plain");
        assert_eq!(q.pop(true, &mut out), Some(true));
        assert!(out.is_empty());
        assert_eq!(pop_item(&q, false).unwrap(), (b"plain".to_vec(), false));
        assert_eq!(q.peek(&mut out), Some(true));
        assert_eq!(pop_item(&q, false).unwrap(), (s.to_vec(), true));
        assert_eq!(pop_item(&q, true).unwrap(), (s.to_vec(), false));
        assert_eq!(q.peek(&mut out), None);
        assert!(out.is_empty());
    }

    /// A zstd frame (level 1, content size and checksum) of "hello" x 6
    /// joined by spaces, as another build's producer would store it.
    const HELLO_FRAME: [u8; 25] = [
        0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x23, 0x65, 0x00, 0x00, 0x30, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
        0x20, 0x01, 0x00, 0xb9, 0x4b, 0x11, 0x2b, 0xe1, 0x68, 0xe7,
    ];

    #[test]
    fn a_compressed_item_from_another_build_reads_back_or_names_the_feature() {
        let q = StrQueue::anonymous(4, 4096).unwrap();
        q.push(&HELLO_FRAME, true).unwrap();
        q.push(b"next", false).unwrap();
        // Flag it compressed, as a producer with compression on would.
        let s = q.slot(0);
        let len = s.len.load(Ordering::Relaxed);
        s.len.store(len | LEN_PACKED, Ordering::Relaxed);
        let mut out = Vec::new();
        let r = q.pop_checked(false, &mut out);
        if cfg!(feature = "zstd") {
            assert_eq!(r.unwrap(), Some(true));
            assert_eq!(out, b"hello hello hello hello hello hello");
        } else {
            let e = r.unwrap_err();
            assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
            assert!(e.to_string().contains("lacks the zstd feature"), "{e}");
            assert!(out.is_empty());
        }
        // Either way the item is gone and the queue goes on.
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop(false, &mut out), Some(false));
        assert_eq!(out, b"next");
    }

    #[test]
    fn empty_string_is_an_item() {
        let q = StrQueue::anonymous(2, 0).unwrap();
        assert!(q.push(b"", false).unwrap());
        assert!(q.push_front(b"", true).unwrap());
        assert!(!q.push(b"", false).unwrap(), "two slots only");
        assert_eq!(q.len(), 2);
        assert_eq!(q.stats().arena_used, 0);
        assert_eq!(pop_item(&q, false), Some((vec![], true)));
        assert_eq!(pop_item(&q, false), Some((vec![], false)));
        assert_eq!(pop_item(&q, false), None);
    }

    #[test]
    fn every_byte_value_round_trips() {
        let q = StrQueue::anonymous(8, 16384).unwrap();
        let all: Vec<u8> = (0..=255u8).collect();
        let nuls = vec![0u8; 77];
        let ffs = vec![0xFFu8; 1001];
        let rev: Vec<u8> = (0..=255u8).rev().cycle().take(3333).collect();
        for s in [&all, &nuls, &ffs, &rev] {
            q.push(s, false).unwrap();
        }
        q.push_front(&all, false).unwrap();
        assert_eq!(pop_item(&q, false).unwrap().0, all);
        for s in [&all, &nuls, &ffs, &rev] {
            assert_eq!(&pop_item(&q, false).unwrap().0, s);
        }
    }

    #[test]
    fn waits_time_out_and_count() {
        let q = StrQueue::anonymous(2, 0).unwrap();
        let mut out = Vec::new();
        let d = Deadline::after_secs(0.02);
        assert_eq!(q.pop_wait(false, &mut out, &d), Waited::TimedOut);
        assert_eq!(q.stats().pop_empty, 1);
        q.push(b"a", false).unwrap();
        q.push(b"b", false).unwrap();
        let d = Deadline::after_secs(0.02);
        assert_eq!(
            q.push_wait(b"c", false, true, &d).unwrap(),
            Waited::TimedOut
        );
        assert_eq!(q.stats().push_full, 1);
        // Zero timeout: one try.
        let d = Deadline::after_secs(0.0);
        assert_eq!(q.pop_wait(true, &mut out, &d), Waited::Done(false));
        assert_eq!(out, b"b");
        assert_eq!(q.push_wait(b"c", true, true, &d).unwrap(), Waited::Done(()));
        assert_eq!(pop_item(&q, false).unwrap(), (b"c".to_vec(), true));
    }

    #[test]
    fn blocked_pop_wakes_on_push_and_push_on_pop() {
        let q = Arc::new(StrQueue::anonymous(2, 4096).unwrap());
        let q2 = q.clone();
        let t = std::thread::spawn(move || {
            let mut out = Vec::new();
            let r = q2.pop_wait(true, &mut out, &Deadline::after_secs(30.0));
            (r, out)
        });
        wait_until(|| q.stats().pop_waiters == 1);
        q.push(b"wake", true).unwrap();
        assert_eq!(t.join().unwrap(), (Waited::Done(true), b"wake".to_vec()));

        // Arena full (one 4000-byte item): two producers of small strings
        // block; one pop must let *both* in.
        q.push(&[7; 4000], false).unwrap();
        let hs: Vec<_> = (0..2)
            .map(|i| {
                let q = q.clone();
                std::thread::spawn(move || {
                    q.push_wait(&[i; 100], false, false, &Deadline::after_secs(30.0))
                        .unwrap()
                })
            })
            .collect();
        wait_until(|| q.stats().push_waiters == 2);
        assert_eq!(pop_item(&q, false).unwrap().0, vec![7; 4000]);
        for h in hs {
            assert_eq!(h.join().unwrap(), Waited::Done(()));
        }
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn clear_wakes_every_blocked_producer() {
        let q = Arc::new(StrQueue::anonymous(4, 0).unwrap());
        for i in 0..4u64 {
            q.push(&pattern(i, 10), false).unwrap();
        }
        let hs: Vec<_> = (0..3u64)
            .map(|i| {
                let q = q.clone();
                std::thread::spawn(move || {
                    q.push_wait(&pattern(i, 5), false, i == 1, &Deadline::after_secs(30.0))
                        .unwrap()
                })
            })
            .collect();
        wait_until(|| q.stats().push_waiters == 3);
        assert_eq!(q.clear(), 4);
        for h in hs {
            assert_eq!(h.join().unwrap(), Waited::Done(()));
        }
        let s = q.stats();
        assert_eq!(
            (s.size, s.push_ok, s.pop_ok),
            (3, 7, 0),
            "cleared items are not pops"
        );
    }

    /// Poll `cond` until true; a 20 s watchdog instead of a timing assertion.
    fn wait_until(cond: impl Fn() -> bool) {
        let t0 = std::time::Instant::now();
        while !cond() {
            assert!(
                t0.elapsed().as_secs() < 20,
                "watchdog: condition never held"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    #[test]
    fn threads_two_producers_two_consumers_lose_and_duplicate_nothing() {
        const PER: u64 = 5_000;
        let q = Arc::new(StrQueue::anonymous(8, 4096).unwrap());
        let taken = Arc::new(AtomicUsize::new(0));
        let mut producers = vec![];
        for p in 0..2u64 {
            let q = q.clone();
            producers.push(std::thread::spawn(move || {
                let mut rng = Rng(0x9E37_79B9 + p);
                for i in 0..PER {
                    let mut s = format!("{p}:{i}:").into_bytes();
                    s.extend(pattern(i, rng.below(300) as usize));
                    let r = q.push_wait(&s, p == 1, false, &Deadline::after_secs(30.0));
                    assert_eq!(r.unwrap(), Waited::Done(()), "watchdog");
                }
            }));
        }
        let mut consumers = vec![];
        for c in 0..2 {
            let (q, taken) = (q.clone(), taken.clone());
            consumers.push(std::thread::spawn(move || {
                let mut got = vec![];
                let mut out = Vec::new();
                let mut items = Vec::new();
                let t0 = std::time::Instant::now();
                while taken.load(Ordering::Relaxed) < 2 * PER as usize {
                    assert!(t0.elapsed().as_secs() < 60, "watchdog");
                    if c == 0 {
                        let d = Deadline::after_secs(0.05);
                        if let Waited::Done(u) = q.pop_wait(false, &mut out, &d) {
                            got.push((out.clone(), u));
                            taken.fetch_add(1, Ordering::Relaxed);
                        }
                    } else {
                        out.clear();
                        items.clear();
                        let n = q.pop_multi(3, Some(400), &mut out, &mut items);
                        for &(s, l, u) in &items {
                            got.push((out[s..s + l].to_vec(), u));
                        }
                        taken.fetch_add(n, Ordering::Relaxed);
                        if n == 0 {
                            std::thread::yield_now();
                        }
                    }
                }
                got
            }));
        }
        for h in producers {
            h.join().unwrap();
        }
        let mut seen = std::collections::HashSet::new();
        for h in consumers {
            let got = h.join().unwrap();
            // Each consumer sees each producer's items in push order.
            let mut last = [None::<u64>; 2];
            for (s, u) in got {
                let text = String::from_utf8_lossy(&s);
                let mut parts = text.splitn(3, ':');
                let p: u64 = parts.next().unwrap().parse().unwrap();
                let i: u64 = parts.next().unwrap().parse().unwrap();
                assert_eq!(u, p == 1);
                let prefix = format!("{p}:{i}:").len();
                assert_eq!(&s[prefix..], &pattern(i, s.len() - prefix)[..]);
                assert!(
                    last[p as usize].is_none_or(|l| l < i),
                    "order within a producer"
                );
                last[p as usize] = Some(i);
                assert!(seen.insert((p, i)), "duplicate {p}:{i}");
            }
        }
        assert_eq!(seen.len(), 2 * PER as usize);
        let s = q.stats();
        assert_eq!(
            (s.push_ok, s.pop_ok, s.size, s.arena_used),
            (2 * PER, 2 * PER, 0, 0)
        );
        assert!(s.lock_acquired >= 4 * PER);
    }

    /// A forked test child. [`Child::exit_status`] reaps it; a test that
    /// fails first drops it, which kills and reaps it, so a child stuck in
    /// a wait (or, under ASan, in the allocator) never outlives its test.
    struct Child(libc::pid_t);

    impl Child {
        /// Wait for the child to exit; its exit status.
        fn exit_status(mut self) -> i32 {
            let pid = std::mem::replace(&mut self.0, 0);
            let mut st = 0;
            // SAFETY: `pid` is our child; `st` is a valid out-pointer.
            let r = unsafe { libc::waitpid(pid, &mut st, 0) };
            assert_eq!(r, pid);
            assert!(libc::WIFEXITED(st), "child died: status {st}");
            libc::WEXITSTATUS(st)
        }
    }

    impl Drop for Child {
        fn drop(&mut self) {
            if self.0 > 0 {
                // SAFETY: our own child, not reaped yet.
                unsafe {
                    libc::kill(self.0, libc::SIGKILL);
                    libc::waitpid(self.0, std::ptr::null_mut(), 0);
                }
            }
        }
    }

    /// Run `child` in a forked process. The child only touches the queue
    /// and then `_exit`s (no unwinding, no atexit).
    fn in_child(child: impl FnOnce() -> i32) -> Child {
        // SAFETY: the child runs only `child` (queue operations on a shared
        // mapping, allocation, which glibc keeps fork-safe) and then
        // `_exit`, never returning into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(99);
            // SAFETY: terminating the child without running Rust or libc
            // exit handlers is exactly what a forked test child must do.
            unsafe { libc::_exit(code) };
        }
        Child(pid)
    }

    #[test]
    fn fork_producer_and_consumer_exchange_strings_both_ways() {
        const N: u64 = 2_000;
        let q = StrQueue::anonymous(4, 4096).unwrap();
        // Fill the pid cache before forking: the child must not inherit it.
        q.push(b"warm", false).unwrap();
        pop_item(&q, false).unwrap();

        // Child produces at the back; parent consumes from the front.
        let child = in_child(|| {
            for i in 0..N {
                let s = pattern(i, (i * 37 % 600) as usize);
                let d = Deadline::after_secs(30.0);
                if q.push_wait(&s, i % 3 == 0, false, &d).unwrap() != Waited::Done(()) {
                    return 2;
                }
            }
            0
        });
        let mut out = Vec::new();
        for i in 0..N {
            let r = q.pop_wait(false, &mut out, &Deadline::after_secs(30.0));
            assert_eq!(r, Waited::Done(i % 3 == 0), "item {i}");
            assert_eq!(out, pattern(i, (i * 37 % 600) as usize));
        }
        assert_eq!(child.exit_status(), 0);

        // Parent pushes at the front; the child takes from the back, so it
        // sees them in push order. The child also checks the lock word
        // names it, not its parent.
        let child = in_child(|| {
            // SAFETY: getpid has no preconditions.
            let me = unsafe { libc::getpid() } as u32;
            if crate::lock::current_pid() != me {
                return 3;
            }
            {
                let (_g, _) = LockGuard::acquire(&q.header().lock);
                if crate::lock::owner_pid(q.header().lock.word.load(Ordering::Relaxed)) != me {
                    return 4;
                }
            }
            let mut out = Vec::new();
            for i in 0..N {
                let d = Deadline::after_secs(30.0);
                if q.pop_wait(true, &mut out, &d) != Waited::Done(i % 2 == 0) {
                    return 5;
                }
                if out != pattern(i, (i * 53 % 700) as usize) {
                    return 6;
                }
            }
            0
        });
        for i in 0..N {
            let s = pattern(i, (i * 53 % 700) as usize);
            let d = Deadline::after_secs(30.0);
            assert_eq!(
                q.push_wait(&s, i % 2 == 0, true, &d).unwrap(),
                Waited::Done(())
            );
        }
        assert_eq!(child.exit_status(), 0);
        let s = q.stats();
        assert_eq!(
            (s.push_ok, s.pop_ok, s.size, s.arena_used),
            (2 * N + 1, 2 * N + 1, 0, 0)
        );
    }

    #[test]
    fn file_queue_persists_and_refuses_other_variants_and_truncation() {
        let path = temp_path("file");
        let q = StrQueue::open(&path, 8, 5000, 0o600).unwrap();
        assert_eq!(
            q.path().unwrap().to_bytes(),
            path.as_os_str().as_encoded_bytes()
        );
        assert_eq!(q.fd(), -1);
        q.push(b"kept in the file", true).unwrap();
        q.sync().unwrap();
        drop(q);
        // Reopening attaches; the stored geometry wins over the request.
        let q = StrQueue::open(&path, 2, 0, 0o600).unwrap();
        assert_eq!((q.capacity(), q.stats().arena_cap), (8, 5000));
        assert_eq!(
            pop_item(&q, false).unwrap(),
            (b"kept in the file".to_vec(), true)
        );
        let len = q.stats().mmap_size;
        drop(q);

        let e = crate::IntQueue::<i64>::open(&path, 8, 0o600).err().unwrap();
        assert!(matches!(e, Error::Incompatible { .. }), "{e}");

        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len - 1).unwrap();
        let e = StrQueue::open(&path, 8, 5000, 0o600).err().unwrap();
        assert!(matches!(e, Error::Incompatible { .. }), "{e}");
        std::fs::remove_file(&path).unwrap();

        // And the reverse: an Int file opened as Str.
        let ipath = temp_path("int");
        let iq = crate::IntQueue::<i64>::open(&ipath, 8, 0o600).unwrap();
        drop(iq);
        let e = StrQueue::open(&ipath, 8, 0, 0o600).err().unwrap();
        assert!(matches!(e, Error::Incompatible { .. }), "{e}");
        std::fs::remove_file(&ipath).unwrap();

        // unlink through the handle.
        let upath = temp_path("unlink");
        let q = StrQueue::open(&upath, 2, 0, 0o600).unwrap();
        q.unlink().unwrap();
        assert!(!upath.exists());
        assert!(StrQueue::anonymous(2, 0).unwrap().unlink().is_err());
    }

    #[test]
    fn two_handles_on_one_file_at_once() {
        let path = temp_path("two");
        let q = StrQueue::open(&path, 8, 0, 0o600).unwrap();
        q.push(b"shared", false).unwrap();
        let p2 = path.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = StrQueue::open(&p2, 8, 0, 0o600).map(|q2| pop_item(&q2, false));
            tx.send(r.ok().flatten()).unwrap();
        });
        let got = rx.recv_timeout(std::time::Duration::from_secs(10));
        q.unlink().unwrap();
        drop(q); // unblocks a stuck opener either way
        assert_eq!(
            got.expect("second open blocked while the first handle maps the file"),
            Some((b"shared".to_vec(), false))
        );
    }

    #[test]
    fn memfd_queue_attaches_by_fd() {
        let q = StrQueue::memfd(c"strq-test", 4, 0).unwrap();
        assert!(q.fd() >= 0);
        let q2 = StrQueue::from_fd(q.fd()).unwrap();
        q.push_front(b"via memfd", false).unwrap();
        assert_eq!(pop_item(&q2, true).unwrap().0, b"via memfd");
        assert!(crate::IntQueue::<i64>::from_fd(q.fd()).is_err());
    }

    #[test]
    fn corrupt_shared_state_never_panics_and_heals_when_cleared() {
        let q = StrQueue::anonymous(8, 4096).unwrap();
        let mut rng = Rng(0xC0FF_EE11);
        let mut out = Vec::new();
        let mut items = Vec::new();
        for round in 0..2_000 {
            let h = q.header();
            if rng.below(4) == 0 {
                h.current.store(rng.next() as u32, Ordering::Relaxed);
            }
            let (c0, c1) = (h.str_copy(0), h.str_copy(1));
            for w in [c0, c1]
                .into_iter()
                .flat_map(|c| [&c.head, &c.count, &c.rd, &c.wr, &c.used])
            {
                let v = match rng.below(4) {
                    0 => rng.next(),
                    1 => rng.below(5000),
                    2 => rng.below(5000) & !7,
                    _ => continue,
                };
                w.store(v, Ordering::Relaxed);
            }
            let s = q.slot(rng.next());
            s.off.store(
                rng.next() as u32 & if round % 2 == 0 { 0xFFF8 } else { !0 },
                Ordering::Relaxed,
            );
            s.len.store(
                rng.next() as u32 & if round % 3 == 0 { 0x3FF } else { !0 },
                Ordering::Relaxed,
            );
            s.meta.store(rng.next() as u32, Ordering::Relaxed);
            for _ in 0..8 {
                match rng.below(6) {
                    0 => drop(q.push(&pattern(round, rng.below(600) as usize), false)),
                    1 => drop(q.push_front(&pattern(round, rng.below(600) as usize), true)),
                    2 => drop(q.pop(false, &mut out)),
                    3 => drop(q.pop(true, &mut out)),
                    4 => drop(q.peek(&mut out)),
                    _ => {
                        items.clear();
                        out.clear();
                        q.pop_multi(4, Some(rng.below(2000)), &mut out, &mut items);
                        for &(st, l, _) in &items {
                            assert!(st + l <= out.len());
                        }
                    }
                }
                assert!(q.len() <= 8);
                assert!(q.stats().arena_used <= 4096);
            }
        }
        q.clear();
        assert!(q.push(&[5; 4096], false).unwrap());
        assert_eq!(pop_item(&q, false).unwrap().0, vec![5; 4096]);
    }

    // ---- the model-based oracle ----

    struct MItem {
        data: Vec<u8>,
        utf8: bool,
        /// First 8-byte cell of the item's charge (waste included).
        start: usize,
        /// Cells charged.
        cells: usize,
        /// First cell of its bytes, and the waste it was charged (cells).
        off: usize,
        waste: usize,
    }

    /// An independent model of the arena: an occupancy bitmap of 8-byte
    /// cells plus a VecDeque of items. Placement follows the documented
    /// policy (bytes contiguous; a back push wraps to 0, a front push to
    /// the end; the gap goes to the wrapping item; an arena holding no bytes
    /// starts over at 0) but is decided by scanning the bitmap, not by
    /// cursor arithmetic.
    struct Model {
        cells: Vec<bool>,
        cap: usize,
        items: VecDeque<MItem>,
    }

    impl Model {
        fn n(&self) -> usize {
            self.cells.len()
        }
        fn charged(&self) -> usize {
            self.items.iter().map(|i| i.cells).sum()
        }
        fn free(&self, a: usize, b: usize) -> bool {
            (a..b).all(|c| !self.cells[c])
        }
        fn mark(&mut self, start: usize, cells: usize, on: bool) {
            let n = self.n();
            for j in 0..cells {
                let c = (start + j) % n;
                assert_ne!(
                    self.cells[c], on,
                    "model: cell {c} double-booked or double-freed"
                );
                self.cells[c] = on;
            }
        }
        /// (off, waste, start) for a new item of `len` bytes, or None.
        fn predict(&self, len: usize, front: bool) -> Option<(usize, usize, usize)> {
            if self.items.len() == self.cap {
                return None;
            }
            let k = len.div_ceil(8);
            let n = self.n();
            if self.charged() == 0 {
                return Some((0, 0, 0));
            }
            if front {
                let first = self.items.iter().find(|i| i.cells > 0).unwrap();
                let s = first.start;
                if k == 0 {
                    return Some((s, 0, s));
                }
                if k <= s && self.free(s - k, s) {
                    return Some((s - k, 0, s - k));
                }
                if self.free(0, s) && self.free(n - k, n) {
                    return Some((n - k, s, n - k));
                }
            } else {
                let last = self.items.iter().rev().find(|i| i.cells > 0).unwrap();
                let e = (last.start + last.cells) % n;
                if k == 0 {
                    return Some((e, 0, e));
                }
                if e + k <= n && self.free(e, e + k) {
                    return Some((e, 0, e));
                }
                if self.free(e, n) && self.free(0, k) {
                    return Some((0, n - e, e));
                }
            }
            None
        }
        fn push(&mut self, data: Vec<u8>, utf8: bool, front: bool) -> Option<(usize, usize)> {
            let (off, waste, start) = self.predict(data.len(), front)?;
            let cells = data.len().div_ceil(8) + waste;
            self.mark(start, cells, true);
            let it = MItem {
                data,
                utf8,
                start,
                cells,
                off,
                waste,
            };
            if front {
                self.items.push_front(it);
            } else {
                self.items.push_back(it);
            }
            Some((off, waste))
        }
        fn pop(&mut self, back: bool) -> Option<MItem> {
            let it = if back {
                self.items.pop_back()
            } else {
                self.items.pop_front()
            }?;
            self.mark(it.start, it.cells, false);
            Some(it)
        }
    }

    struct Oracle {
        q: StrQueue,
        m: Model,
        rng: Rng,
        next_id: u64,
        pushes: u64,
        pops: u64,
        wraps_back: u64,
        wraps_front: u64,
        full_refusals: u64,
        /// A buffer kept from pop to pop, as the C ABI keeps its scratch
        /// buffer: with room for the item, a front pop takes the fast path
        /// (a fresh 3-byte buffer sends it to the general one).
        out: Vec<u8>,
        /// Pops into `out` that found it already large enough.
        roomy_pops: u64,
    }

    impl Oracle {
        fn new(seed: u64, cap: u64, arena: u64) -> Self {
            let q = StrQueue::anonymous(cap, arena).unwrap();
            let n = (q.usable / 8) as usize;
            Oracle {
                m: Model {
                    cells: vec![false; n],
                    cap: q.capacity() as usize,
                    items: VecDeque::new(),
                },
                q,
                rng: Rng(seed),
                next_id: 0,
                pushes: 0,
                pops: 0,
                wraps_back: 0,
                wraps_front: 0,
                full_refusals: 0,
                out: Vec::new(),
                roomy_pops: 0,
            }
        }

        fn item(&mut self) -> (Vec<u8>, bool) {
            // Empty, short (copied inline by the hot paths), or any length.
            let len = match self.rng.below(20) {
                0 => 0,
                1..=6 => self.rng.below(SHORT + 2) as usize,
                _ => self.rng.below(701) as usize,
            };
            self.next_id += 1;
            (pattern(self.next_id, len), self.rng.below(2) == 0)
        }

        fn push(&mut self, front: bool) {
            let (data, utf8) = self.item();
            let ok = if front {
                self.q.push_front(&data, utf8)
            } else {
                self.q.push(&data, utf8)
            }
            .unwrap();
            let want = self.m.push(data, utf8, front);
            assert_eq!(ok, want.is_some(), "push (front={front}) outcome");
            if let Some((off, waste)) = want {
                assert_eq!(
                    end_slot(&self.q, !front),
                    (off as u64 * 8, waste as u64 * 8)
                );
                self.pushes += 1;
                if waste > 0 {
                    if front {
                        self.wraps_front += 1;
                    } else {
                        self.wraps_back += 1;
                    }
                }
            } else {
                self.full_refusals += 1;
            }
        }

        fn pop(&mut self, back: bool) {
            let got = if self.rng.below(2) == 0 {
                pop_item(&self.q, back)
            } else {
                let mut out = std::mem::take(&mut self.out);
                out.extend_from_slice(b"stale"); // must be cleared by pop
                let roomy = out.capacity();
                let r = self.q.pop(back, &mut out).map(|u| (out.clone(), u));
                if r.as_ref().is_some_and(|(d, _)| d.len() <= roomy) {
                    self.roomy_pops += 1;
                }
                self.out = out;
                r
            };
            let want = self.m.pop(back).map(|i| (i.data, i.utf8));
            assert_eq!(got, want, "pop (back={back})");
            if got.is_some() {
                self.pops += 1;
            }
        }

        fn push_multi(&mut self) {
            let k = 1 + self.rng.below(4) as usize;
            let batch: Vec<_> = (0..k).map(|_| self.item()).collect();
            let refs: Vec<(&[u8], bool)> = batch.iter().map(|(d, u)| (&d[..], *u)).collect();
            let n = self.q.push_multi(&refs).unwrap();
            let mut want = 0;
            for (d, u) in batch {
                if self.m.push(d, u, false).is_none() {
                    break;
                }
                want += 1;
            }
            assert_eq!(n, want, "push_multi count");
            self.pushes += n as u64;
        }

        fn pop_multi(&mut self) {
            let k = 1 + self.rng.below(5) as usize;
            let budget = if self.rng.below(2) == 0 {
                None
            } else {
                Some(self.rng.below(1500))
            };
            let mut out = Vec::new();
            let mut items = Vec::new();
            let n = self.q.pop_multi(k, budget, &mut out, &mut items);
            let mut want = vec![];
            let mut total = 0u64;
            while want.len() < k {
                let Some(front) = self.m.items.front() else {
                    break;
                };
                let len = front.data.len() as u64;
                if let Some(b) = budget {
                    if !want.is_empty() && total + len > b {
                        break;
                    }
                }
                total += len;
                let it = self.m.pop(false).unwrap();
                want.push((it.data, it.utf8));
            }
            let got: Vec<_> = items
                .iter()
                .map(|&(s, l, u)| (out[s..s + l].to_vec(), u))
                .collect();
            assert_eq!(got, want, "pop_multi");
            assert_eq!(n, want.len());
            self.pops += n as u64;
        }

        fn check(&self, step: usize) {
            let s = self.q.stats();
            let model_used = self.m.charged() as u64 * 8;
            assert_eq!(
                self.q.len(),
                self.m.items.len() as u64,
                "len at step {step}"
            );
            assert_eq!(s.arena_used, model_used, "arena_used at step {step}");
            assert_eq!(
                slot_charges(&self.q),
                model_used,
                "slot charges at step {step}"
            );
            assert_eq!(
                (s.push_ok, s.pop_ok),
                (self.pushes, self.pops),
                "counters at step {step}"
            );
            let c = self.q.current_state().1;
            let a = Arena {
                size: self.q.usable,
                rd: c.rd.load(Ordering::Relaxed),
                wr: c.wr.load(Ordering::Relaxed),
                used: c.used.load(Ordering::Relaxed),
            };
            assert!(a.is_consistent(), "arena state at step {step}: {a:?}");
            // Each item's bytes lie inside its own charge.
            for it in &self.m.items {
                let k = it.data.len().div_ceil(8);
                assert!(it.off + k <= self.m.n());
                assert_eq!(it.cells, k + it.waste);
            }
        }

        fn run(&mut self, ops: usize) {
            for step in 0..ops {
                match self.rng.below(100) {
                    0..=34 => self.push(false),
                    35..=49 => self.push(true),
                    50..=74 => self.pop(false),
                    75..=89 => self.pop(true),
                    90..=92 => self.push_multi(),
                    93..=95 => self.pop_multi(),
                    96..=98 => {
                        let mut out = Vec::new();
                        let got = self.q.peek(&mut out).map(|u| (out, u));
                        let want = self.m.items.front().map(|i| (i.data.clone(), i.utf8));
                        assert_eq!(got, want, "peek at step {step}");
                    }
                    _ => {
                        if self.rng.below(10) == 0 {
                            let n = self.q.clear();
                            assert_eq!(n, self.m.items.len() as u64);
                            while self.m.pop(false).is_some() {}
                        }
                    }
                }
                self.check(step);
            }
        }
    }

    #[test]
    fn model_random_deque_ops_on_a_small_wrapping_arena() {
        let mut o = Oracle::new(0x5EED_0001, 16, 4096);
        o.run(60_000);
        // The run really exercised what it is meant to.
        assert!(o.wraps_back > 500, "back wraps: {}", o.wraps_back);
        assert!(o.wraps_front > 200, "front wraps: {}", o.wraps_front);
        assert!(o.full_refusals > 1000, "refusals: {}", o.full_refusals);
        assert!(o.pushes > 20_000 && o.pops > 20_000);
        assert!(
            o.roomy_pops > 5_000,
            "pops into a roomy buffer: {}",
            o.roomy_pops
        );
    }

    #[test]
    fn model_random_deque_ops_other_geometries() {
        // Arena sizes that are not multiples of 8, more slots than the
        // arena can use, and fewer.
        for (seed, cap, arena) in [(7, 8, 4100), (8, 16, 4999), (9, 64, 4096), (10, 2, 6000)] {
            let mut o = Oracle::new(seed, cap, arena);
            o.run(15_000);
        }
    }
}
