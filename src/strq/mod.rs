//! `StrQueue`: a bounded MPMC deque of byte strings in shared memory,
//! guarded by one futex mutex, with a slot ring for the items and a
//! circular byte arena for their bytes.
//!
//! Design: a mutex-protected ring buffer plus a circular ("bip-buffer"
//! style) byte arena whose every item is contiguous. Variable-length items
//! rule out a per-slot lock-free protocol like the Int queues' Vyukov ring,
//! so every operation takes the lock in `src/lock/`, works on plain loads and
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
//! header.lock        the lock (src/lock/): word 0 or owner pid, sleeper count
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
//! next process that needs the lock takes it over (src/lock/: the kernel is
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
//! `push` at the back and `pop` at the front of short strings, the
//! operations most programs make all the time, are written out flat with
//! no call in them; every other case jumps to the general code. How and
//! what it gains: `fast.rs`.
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
//!
//! # Where things are
//!
//! ```text
//! mod.rs         the StrQueue handle: create and attach, geometry, the
//!                lock timeout, len/capacity/clear/stats and the region
//! items.rs       an item's slot and bytes: slot layout, read and store,
//!                the inline copy of short strings, the length check
//! state.rs       the two state copies: Locked (load, change, commit), and
//!                the committed state read without the lock
//! locking.rs     taking the lock (timeout, takeover, counting), the wake
//!                sides and the miss counters
//! fast.rs        the flat fast paths of a back push and a front pop
//! general.rs     push/push_front/pop/pop_back/peek: dispatch and the
//!                general code every other case runs
//! blocking.rs    push_wait and pop_wait
//! batch.rs       push_multi, push_multi_iter and pop_multi, under one lock each
//! compressed.rs  the compression setting and its hooks (HOOK(compress))
//! lease.rs       pop_lease, ack, release and the lease table's repair
//!                under the queue lock (HOOK(lease); the table: `lease`)
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

use std::ffi::CStr;
use std::path::Path;
use std::sync::atomic::AtomicU64 as StdAtomicU64;

use crate::compress;
use crate::error::{Error, Result};
use crate::layout::{Header, Variant, HEADER_SIZE, MAX_ITEM};
use crate::region::{Region, Request};
use crate::stats::Stats;
use crate::sync::Ordering;
use crate::testpoint::KillPoint;
use crate::layout::str_word_pos;
use items::StrSlot;
use locking::Ends;

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
    pub fn len(&self) -> u64 {
        let (b, f) = (self.word(true), self.word(false));
        state::span(str_word_pos(b), str_word_pos(f)).min(self.capacity())
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
    /// assert_eq!(s.mmap_size, 320 + 4 * 16 + 8192 + 65 * 64 + 8192);
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
        Stats {
            size: state::span(b.tail, f.head).min(self.capacity()),
            capacity: self.capacity(),
            mmap_size: self.region.mapped_len(),
            push_ok: b.push_ok.wrapping_add(f.pushes),
            pop_ok: f.pop_ok.wrapping_add(b.pops),
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

    /// Both sides' committed state, read without the locks: each side's
    /// copy read again until its word did not change around the read (a
    /// few tries; then whatever was read last), so that a quiescent queue
    /// reads exactly. The front is read first: a snapshot errs towards
    /// more items, never a negative count.
    fn snapshot(&self) -> (state::Back, state::Front) {
        let mut f = self.load_front();
        for _ in 0..8 {
            let again = self.load_front();
            if again == f {
                break;
            }
            f = again;
        }
        let mut b = self.load_back();
        for _ in 0..8 {
            let again = self.load_back();
            if again == b {
                break;
            }
            b = again;
        }
        (b, f)
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
