//! `StrQueue`: a bounded MPMC deque of byte strings in shared memory,
//! with a slot ring for the items and a circular byte arena for their
//! bytes, in two halves: the back, where `push` adds items, and the front,
//! where `pop` takes them, each with its own futex mutex.
//!
//! Design: a two-lock queue (Michael and Scott's two-lock idea, on a ring
//! and a circular "bip-buffer" style byte arena whose every item is
//! contiguous). Variable-length items rule out a per-slot lock-free
//! protocol like the Int queues' Vyukov ring, so every operation takes a
//! lock in `src/lock/`, works on plain loads and stores, copies the bytes
//! in or out, and unlocks; but a producer at the back and a consumer at
//! the front take different locks and write different cache lines, so
//! they never wait for each other. No user code runs while a lock is held
//! (the Perl side converts its arguments before calling in and builds its
//! scalars after the call returns).
//!
//! # Shared state (see `layout.rs` for the header itself)
//!
//! Each side is one header line ([`StrSide`](crate::layout::StrSide)):
//!
//! ```text
//! back  (line 2)  word = tail | charged | copy; the back lock and its
//!                 owner tag; per copy: wr, push_ok, pop_back count
//! front (line 1)  word = head | released | copy; the front lock and its
//!                 owner tag; per copy: pop_ok, push_front count; the
//!                 front lock's acquisition count
//! ```
//!
//! `tail` and `head` are positions counted modulo 2^32 (slot = position
//! mod capacity): the items are those of positions `head .. tail`.
//! `charged` counts the arena bytes ever charged to items and `released`
//! those ever given back, in 8-byte units modulo 2^31, so the bytes in use
//! are `charged - released`; `wr` is where the back item's charge ends,
//! and the charged span starts `used` bytes before it (`rd` is derived,
//! not stored). Each side's `word` is its commit (see "Crash safety"):
//! the position and the byte count in it move in one store, and it names
//! the side's current copy of the other fields.
//!
//! Who takes what:
//!
//! ```text
//! push (back), push_multi          the back lock
//! pop (front), pop_multi, peek     the front lock
//! push_front, pop_back, clear,     both, the back first
//! leases, a blocked push at the front
//! ```
//!
//! An operation that needs both takes the back lock and then only
//! *tries* the front lock; when that is held it lets the back lock go,
//! waits for the front lock alone (taking it over from a dead holder)
//! and lets it go, and starts again (`lock_both` in locking.rs). So a
//! consumer stopped (SIGSTOP, a debugger) or descheduled while it holds
//! the front lock holds up the other consumers and every call that needs
//! both locks, but not the producers at the back. The coupling that
//! remains: after 4 such rounds (the front lock taken by somebody else
//! each time the call got to try it) the call waits for the front lock
//! holding the back one, as the lock order allows, and a front holder
//! stopped just then stalls the producers too; and a holder of the back
//! lock that is stopped holds up every producer and every call that needs
//! both. No lock is waited for while the front one is held.
//!
//! A holder reads its own side whole and the other side's `word` only,
//! without the other lock. That read may be old, and old is safe: while a
//! producer holds the back lock, the front changes only by pops (both-lock
//! operations exclude it), which move `head` and `released` forward, so
//! an old front word shows more items and more bytes in use than there
//! are, never fewer: the producer may see too little room, never too much.
//! A consumer holding the front lock sees the back only grow by pushes: an
//! old back word shows fewer items, never one that is not there. The
//! orders that make the data follow the words are in `StrQueue::word` (state.rs):
//! a push writes the bytes and the slot, then its word (Release), and a
//! consumer that reads that word (Acquire) sees them; a pop copies the
//! bytes out, then stores its word (Release), and a producer that reads
//! it (Acquire) may reuse the space. When a producer finds the queue
//! empty (which no pop can change while it holds the back lock) every
//! charge has been given back: it starts the arena over at 0 (and sets
//! `charged` to `released`, which also heals hostile counts).
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
//! A process may die (SIGKILL, OOM) anywhere while holding a lock, or both.
//! The next process that needs a lock takes it over (src/lock/: the kernel
//! is asked whether the owner pid still lives, guarded against pid reuse)
//! and counts it in `recoveries` (once per lock: a process that died
//! holding both is taken over twice, by whoever needs each lock next; the
//! other side goes on meanwhile). What it finds is consistent because of
//! how an operation changes its side:
//!
//! 1. A push copies its bytes into arena space no item owns and writes
//!    the slot of position `tail`, outside the live range. Until step 3
//!    these are invisible; a death here loses nothing (the item is absent
//!    and its space is still free). A pop copies the item's bytes out;
//!    they stay charged until step 3.
//! 2. The side's other fields are written to the copy that is *not*
//!    current. Nobody reads that copy, so a death here leaves the current
//!    copy, the state before the operation, intact.
//! 3. One store (Release) of the side's word makes the new copy current,
//!    moves the position and the byte count; then the lock is released.
//!
//! So whoever takes a lock over finds one committed state of that side,
//! with nothing to repair: every operation happened wholly or not at all,
//! and the exact counters match. Every operation commits one side only,
//! the side of the end it changes: a push at the front commits the front
//! (its charge is taken back from `released`) and counts itself there; a
//! pop at the back commits the back (its charge comes off `charged`) and
//! counts itself there; `clear` commits the front (`head = tail`,
//! `released = charged`). The one exception is a front push into an arena
//! holding no bytes: it first commits the back with `wr` moved to 0, which
//! is what the next back push would do anyway and changes nothing anybody
//! could tell, then the front. So the stats' `push_ok` and `pop_ok` are
//! sums of both sides' counters. The `lock_acquired`, `lock_contended`,
//! `cleared`, `push_full` and `pop_empty` statistics are outside the state
//! and may miss one count. A push's commit costs four stores (three
//! fields and the word), a pop's three.
//!
//! (Format version 6 had one lock and one state of seven words, in two
//! copies on two lines that every operation wrote; version 2 a journal.)
//!
//! Deterministic crash points for tests: `DQS_TEST_KILL_POINT` (read when a
//! handle is opened) set to `str_lock_held` (once the operation holds
//! every lock it takes), `str_after_bytes`, `str_mid_commit` (part of the
//! new copy written) or `str_after_commit` (the new word stored, the lock
//! still held) or `str_after_reset` (a front push into an arena holding
//! no bytes has committed the back's `wr` moved to 0, not yet itself)
//! makes the handle's process SIGKILL itself there;
//! `str_lock_stop` makes it SIGSTOP itself holding its locks. Handles
//! without a crash point run code with the hooks compiled out.
//!
//! # Hot paths
//!
//! `push` at the back and `pop` at the front of short strings, the
//! operations most programs make all the time, are written out flat with
//! no call in them; every other case jumps to the general code. How and
//! what it gains: `fast.rs`.
//!
//! # What the split gains
//!
//! With one lock (format 6), a producer and a consumer that really ran at
//! once (2 cores, both under SCHED_FIFO, non-blocking calls) found the
//! lock held in 55-80% of their acquisitions, and every critical section
//! missed on the lock's line and on both state copies' lines, which the
//! other side had written last. With a lock and a line per end, a producer's CAS and
//! a consumer's CAS hit lines nobody else writes, each side writes only
//! its own line and reads the other's word, and nothing waits. Strings
//! across processes moved at a fifth of the integer rate with one lock and
//! at about two thirds with two, and a single process pays nothing for it
//! (bench/RESULTS.pod, "Measurements behind design choices").
//!
//! # Looking without the lock
//!
//! A consumer that polls an empty queue, and a producer that polls a full
//! one, are what a cross-process pipeline does most while the other side
//! works. So `pop` (either end) first loads both side words (Relaxed) and
//! reports "empty" when `tail == head`, without a lock; `push` (either
//! end) reports "full" when `tail - head >= capacity`. The positions are
//! in the words that commit, so they are always committed states'; the
//! loads are Relaxed because the answer depends on nothing else read, and
//! coherence keeps each no older than any commit that happens-before the
//! call, so "empty" means the queue was empty at some moment during the
//! call, *as long as only pushes at the back and pops at the front run*:
//! those move `tail` and `head` only forward. `push_front`, `pop_back` and
//! a lease's return move them backward, and when such calls run between
//! the two loads the look may report "empty" (or "full") although the
//! queue never was (a `push_front` and two `pop_back`s between the loads
//! of a look at a queue of two items leave `tail` where `head` was read):
//! a spurious miss, counted as one. A blocking call never believes a look
//! without settling (see "Waiting"). Making it exact would need a change
//! counter in the words, which have no room for one. Any other value
//! sends the call to its lock, which decides under it. The misses are counted in `pop_empty` and `push_full`, on header
//! line 3 (see [`Header::str_pop_empty`]). A hostile word only
//! misreports "empty" or "full" until the next commit rewrites it.
//!
//! # Waiting
//!
//! Blocking calls use [`block_on_looking`](crate::wait::block_on_looking)
//! with an attempt that takes the locks the call needs, tries once and
//! unlocks; the retries before a waiter announces itself only look
//! without the lock (`looks_empty`, `looks_full`), and `pop_wait`'s
//! attempt looks first too, taking its locks only when the look shows an
//! item (an "empty" it believes only after settling, as below), so a
//! blocked consumer takes about one lock per item it receives, however
//! long it waits. A successful push wakes one
//! consumer (one item can satisfy one consumer). A pop frees a slot *and a
//! variable number of arena bytes*, which may let several blocked
//! producers in, or none of the first one woken (a big string) while a
//! smaller one behind it would fit; waking just one producer could then
//! leave a producer asleep next to free space. So every pop wakes all
//! blocked producers (one `FUTEX_WAKE`, and only when somebody waits); the
//! ones that still do not fit go back to sleep. `clear` wakes everybody
//! on both sides.
//!
//! No wake-up is lost. A producer pushes under the back lock, unlocks,
//! then reads `pop_waiters` (SeqCst); a blocked consumer announces itself
//! in `pop_waiters` (a SeqCst RMW), then tries under the front lock. With
//! one lock (format 6) the consumer's SeqCst lock CAS came after the
//! producer's unlock or before its lock in the single SeqCst order, and
//! either way one saw the other. With two locks nothing orders the
//! consumer's look at the back word against the producer's store of it:
//! on x86 that store may still sit in the producer's store buffer while
//! its load of `pop_waiters` misses the announcement (the unlock has no
//! fence, see the lock module), and the consumer would sleep next to an
//! item. So an attempt that finds nothing *settles* with the other side
//! before it reports a settled miss (`settle_with` in locking.rs): it reads
//! the back lock word (SeqCst); if it is held it takes the back lock and
//! releases it; then it tries once more. If the producer's lock CAS (SeqCst)
//! came after that read in the SeqCst order, so did its read of
//! `pop_waiters`, which then sees the announcement (made before the read);
//! otherwise the read found the lock held (and waiting for it acquires the
//! producer's unlock) or found it free from that unlock or later, which it
//! then acquires: either way the second try sees the item. A blocked
//! producer settles with the front the same way, after it has let the
//! back lock go (so that it never waits for the front lock holding the
//! back one), then takes the back lock again for its second try. Calls
//! at the other ends hold both locks and need no settling. A blocked
//! `pop_wait` (either end) answers "empty" from the look without the
//! locks, and so does `pop_lease_wait` while its last lease scan is
//! recent; each settles with the back before it believes that look, and
//! looks again (the loom model
//! `loom_str_split_blocked_lease_look_settles_with_the_back`; its twin
//! that believes the look at once loses the wake-up). The loom model
//! `loom_str_split_blocked_consumer_settles_with_the_back` checks this as
//! x86 runs it, and its twin without the settle step finds the lost
//! wake-up. The settling costs a blocked call one load (or a lock) per
//! settled miss; the non-blocking calls never settle.
//!
//! # Where things are
//!
//! ```text
//! mod.rs         the StrQueue handle: create and attach, geometry, the
//!                lock timeout, len/capacity/clear/stats and the region
//! items.rs       an item's slot and bytes: slot layout, read and store,
//!                the inline copy of short strings, the length check
//! state.rs       the two sides: their states, loading and committing
//!                them, and Locked (one lock or both held, change, commit)
//! locking.rs     taking the locks (timeout, takeover, counting), settling
//!                with the other side, the wake sides and the miss counters
//! fast.rs        the flat fast paths of a back push and a front pop
//! general.rs     push/push_front/pop/pop_back/peek: dispatch and the
//!                general code every other case runs
//! blocking.rs    push_wait and pop_wait
//! batch.rs       push_multi, push_multi_iter (back lock) and pop_multi
//!                (front lock)
//! compressed.rs  the compression setting and its hooks (HOOK(compress))
//! lease.rs       pop_lease, ack, release (both locks) and the lease
//!                table's repair under the front lock (HOOK(lease); the
//!                table: `lease`)
//! tests.rs       white-box unit tests; oracle.rs: the model-based test
//!                oracle; black-box tests are in tests/strq.rs
//! ```

mod batch;
mod blocking;
mod compressed;
mod fast;
mod general;
mod items;
mod lease;
mod locking;
#[cfg(all(test, not(loom)))]
mod oracle;
mod state;
#[cfg(all(test, not(loom)))]
mod tests;
mod work;

use std::ffi::CStr;
use std::path::Path;
use std::sync::atomic::AtomicU64 as StdAtomicU64;

use crate::compress;
use crate::error::{Error, Result};
use crate::layout::str_word_pos;
use crate::layout::{Header, Variant, HEADER_SIZE, MAX_ITEM};
use crate::region::{Region, Request};
use crate::stats::Stats;
use crate::sync::Ordering;
use crate::testpoint::KillPoint;
use items::StrSlot;
use locking::Ends;

/// A bounded MPMC deque of byte strings in shared memory.
///
/// Each item keeps its bytes and a UTF-8 flag. `push` and `push_multi`
/// take the back lock, `pop`, `pop_multi` and `peek` the front lock, and
/// `push_front`, `pop_back` and `clear` both (cross-process locks); `peek`
/// is exact. Handles are `Sync`; other processes
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

/// Set `errno` (how a non-blocking call whose lock wait timed out says so
/// through the C ABI and to Perl's `$!`).
fn set_errno(e: i32) {
    // SAFETY: __errno_location returns this thread's errno.
    unsafe { *libc::__errno_location() = e };
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
        for back in [false, true] {
            let s = h.str_side(back);
            for w in [&s.word, &s.owner, &s.ok[0], &s.ok[1]] {
                w.store(0, Ordering::Relaxed);
            }
            for w in [&s.ends[0], &s.ends[1], &s.aux] {
                w.store(0, Ordering::Relaxed);
            }
            s.lock.word.store(0, Ordering::Relaxed);
            s.lock.sleepers.store(0, Ordering::Relaxed);
        }
    }

    fn wrap(region: Region) -> Self {
        let g = *region.geometry();
        StrQueue {
            mask: g.capacity - 1,
            usable: g.arena_cap & !7,
            max_len: (g.arena_cap & !7).min(MAX_ITEM),
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

    /// Items in the queue (a snapshot, read without the lock).
    ///
    /// # Examples
    ///
    /// See [`StrQueue::clear`].
    #[inline(never)]
    pub fn len(&self) -> u64 {
        let (b, f) = self.words();
        // HOOK(lease): items back from leases waiting for room count too.
        state::span(str_word_pos(b), f.head).min(self.capacity()) + self.returned_in_table()
    }

    /// The back word and the front state, read without the locks as a
    /// pair: the front state read again after the back word until it did
    /// not change (a few tries). A front read before the back can only be
    /// older, which errs towards more items; but the ends (`push_front`,
    /// `pop_back`) could move both in between, and then the two would not
    /// make a count. The front's word alone can come back to the same
    /// value (a `push_front`, then a pop of an item with the same charge,
    /// restores head, released and the copy bit), so its counters
    /// (`pop_ok`, `pushes`), which only grow, are compared too, as
    /// `snapshot` does: every front commit moves one of them, except a
    /// `clear`, which moves `head` only forward (back again only by
    /// counted front pushes). So an unchanged front state means the front
    /// did not move while the back word was read.
    fn words(&self) -> (u64, state::Front) {
        let mut f = self.load_front();
        let mut b = self.word(true);
        for _ in 0..8 {
            let again = self.load_front();
            if again == f {
                break;
            }
            f = again;
            b = self.word(true);
        }
        (b, f)
    }

    /// Whether the queue is empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every slot is taken (a snapshot; the arena may fill first).
    pub fn is_full(&self) -> bool {
        let (b, f) = self.words();
        state::span(str_word_pos(b), f.head) >= self.capacity()
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
            let Some(mut l) = self.locked::<true>(Ends::Both) else {
                return 0;
            };
            // One front commit: the front catches up with the back (every
            // item and every charge gone); the back's `wr` starts over at
            // the next push, which finds the queue empty.
            let n = l.count();
            l.front.head = l.back.tail;
            l.front.released = l.back.charged;
            l.front_changed();
            let c = &self.header().str_cleared;
            c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
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
    /// assert_eq!(s.mmap_size, 320 + 4 * 16 + 8192 + 192 + 64 * 128 + 64 * 64 + 8192);
    /// // The push and the first pop took the lock; the empty pop looked
    /// // without it.
    /// assert_eq!((s.lock_acquired, s.lock_contended), (2, 0));
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let h = self.header();
        let (b, f) = self.snapshot();
        let (fa, fc) = h.str_lock_counters(false);
        let (ba, bc) = h.str_lock_counters(true);
        // Items back from leases: pushed again at the front (the commit
        // counts that push), or waiting in the table for room. Each item
        // counts one push, and its pop no longer counts until it is taken
        // again: so push_ok - pop_ok is the size.
        let (back, waiting) = match crate::lease::Table::of(&self.region) {
            Some(t) => {
                let s = t.stats();
                let ended = s
                    .released
                    .wrapping_add(s.returned_dead)
                    .wrapping_add(s.returned_timeout);
                (ended.wrapping_sub(s.waiting), s.waiting)
            }
            None => (0, 0),
        };
        Stats {
            size: state::span(b.tail, f.head).min(self.capacity()) + waiting,
            capacity: self.capacity(),
            mmap_size: self.region.mapped_len(),
            push_ok: b.push_ok.wrapping_add(f.pushes).wrapping_sub(back),
            pop_ok: f
                .pop_ok
                .wrapping_add(b.pops)
                .wrapping_sub(back)
                .wrapping_sub(waiting),
            push_full: h.str_push_full().load(Ordering::Relaxed),
            pop_empty: h.str_pop_empty().load(Ordering::Relaxed),
            recoveries: h.str_recoveries.load(Ordering::Relaxed),
            push_waiters: crate::wait::waiter_count(&h.push_waiters),
            pop_waiters: crate::wait::waiter_count(&h.pop_waiters),
            arena_cap: self.region.geometry().arena_cap,
            arena_used: state::used_bytes(b.charged, f.released).min(self.usable),
            lock_acquired: fa
                .load(Ordering::Relaxed)
                .wrapping_add(ba.load(Ordering::Relaxed)),
            lock_contended: u64::from(fc.load(Ordering::Relaxed))
                + u64::from(bc.load(Ordering::Relaxed)),
            compressed: h.compressed.load(Ordering::Relaxed),
            compressed_saved: h.compressed_saved.load(Ordering::Relaxed),
        }
    }

    /// Both sides' committed state, read without the locks: read again
    /// until two reads in a row agree (a few tries; then whatever was read
    /// last), so that a quiescent queue reads exactly and a busy one gives
    /// a pair that held at one instant. That relies on loads not being
    /// reordered (x86): a copy is rewritten two commits after it was
    /// current, with no seqlock around it, and on a weaker machine two
    /// reads torn the same way could agree (the stats are documented as
    /// approximate while others work). The queue's operations never read
    /// another side's copies, only its word, one 64-bit load.
    fn snapshot(&self) -> (state::Back, state::Front) {
        let mut pair = (self.load_back(), self.load_front());
        for _ in 0..8 {
            let again = (self.load_back(), self.load_front());
            if again == pair {
                break;
            }
            pair = again;
        }
        pair
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
