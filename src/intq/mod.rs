//! `IntQueue<T>`: the lock-free integer queues (Int, Int32, Int16) over a
//! shared region: the Vyukov ring of `ring/` plus the futex waits of
//! `wait.rs` and the statistics the Perl `stats` method reports.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::path::Path;

use crate::error::Result;
use crate::futex::Deadline;
use crate::layout::HEADER_SIZE;
use crate::region::{Region, Request};
use crate::ring::{Element, Hook, Repair, RepairSource, Ring};
use crate::stats::Stats;
use crate::sync::Ordering;
use crate::wait::{block_on_fenced, Side, Waited};

mod lease;
mod record_cache;
mod work;

/// A bounded lock-free MPMC queue of `T` (`i64`, `i32` or `i16`) in shared
/// memory.
///
/// Handles are cheap to share between threads (`&IntQueue` is `Sync`); for
/// other processes, open the same path, inherit the handle across `fork`, or
/// pass the memfd.
///
/// # Examples
///
/// ```
/// use data_queue_shared::IntQueue;
/// let q = IntQueue::<i64>::anonymous(4).unwrap();
/// assert!(q.push(7));
/// assert_eq!(q.pop(), Some(7));
/// assert_eq!(q.pop(), None);
/// ```
pub struct IntQueue<T: Element> {
    region: Region,
    /// Test hook (`DQS_TEST_KILL_POINT`), read when the handle is made.
    hook: Hook,
    /// This handle's id in this process (the key of its intent records,
    /// see `intq/record_cache.rs`).
    id: u64,
    _t: PhantomData<T>,
}

impl<T: Element> IntQueue<T> {
    fn request(capacity: u64, mode: u32) -> Request {
        Request {
            variant: T::VARIANT,
            capacity,
            arena: 0,
            mode,
        }
    }

    fn init_body(r: &Region) {
        Self::ring_of(r).init();
    }

    fn wrap(region: Region) -> Self {
        IntQueue {
            region,
            hook: Hook::from_env(),
            id: record_cache::new_id(),
            _t: PhantomData,
        }
    }

    /// Create the queue file at `path` with room for `capacity` items
    /// (rounded up to a power of two, at least 2), or attach to the queue
    /// already there (whose stored capacity then wins). New files get `mode`.
    ///
    /// # Errors
    /// Out-of-range capacity, a path that cannot be opened (a symlink is
    /// refused), a file holding another variant or a corrupt header, or no
    /// space to reserve the file.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let path = std::env::temp_dir().join(format!("dqs-doc-{}.q", std::process::id()));
    /// let a = IntQueue::<i64>::open(&path, 100, 0o600).unwrap();
    /// let b = IntQueue::<i64>::open(&path, 1, 0o600).unwrap(); // attaches
    /// assert_eq!(b.capacity(), 128);
    /// assert!(a.push(5));
    /// assert_eq!(b.pop(), Some(5));
    /// a.unlink().unwrap();
    /// ```
    pub fn open(path: impl AsRef<Path>, capacity: u64, mode: u32) -> Result<Self> {
        Region::open_path(
            path.as_ref(),
            &Self::request(capacity, mode),
            &Self::init_body,
        )
        .map(Self::wrap)
    }

    /// A queue in anonymous shared memory: shared with children forked
    /// after this call, invisible to everyone else.
    ///
    /// # Errors
    /// Out-of-range capacity or mmap failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let q = IntQueue::<i64>::anonymous(16)?;
    /// assert_eq!((q.path(), q.fd()), (None, -1)); // no file, no fd
    /// // SAFETY: the child only pushes and then calls _exit.
    /// let pid = unsafe { libc::fork() };
    /// assert!(pid >= 0, "fork failed");
    /// if pid == 0 {
    ///     let ok = (1..=3).all(|i| q.push(i * 10));
    ///     unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    /// }
    /// let mut status = 0;
    /// // SAFETY: plain waitpid on our own child.
    /// assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    /// assert_eq!(status, 0);
    /// assert_eq!([q.pop(), q.pop(), q.pop()], [Some(10), Some(20), Some(30)]);
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn anonymous(capacity: u64) -> Result<Self> {
        Region::anonymous(&Self::request(capacity, 0), &Self::init_body).map(Self::wrap)
    }

    /// A queue in a new memfd named `name` (the name is only a label).
    ///
    /// # Errors
    /// Out-of-range capacity, memfd_create or sealing failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let name = std::ffi::CStr::from_bytes_with_nul(b"jobs\0").unwrap();
    /// let q = IntQueue::<i16>::memfd(name, 8).unwrap();
    /// let same = IntQueue::<i16>::from_fd(q.fd()).unwrap();
    /// assert!(q.push(-3));
    /// assert_eq!(same.pop(), Some(-3));
    /// ```
    pub fn memfd(name: &CStr, capacity: u64) -> Result<Self> {
        Region::memfd(name, &Self::request(capacity, 0), &Self::init_body).map(Self::wrap)
    }

    /// Attach to the queue behind `fd`, a memfd or an open queue file
    /// (duplicated; the caller's fd stays the caller's).
    ///
    /// # Errors
    /// A bad fd, one too small for a header, or one holding another variant.
    ///
    /// # Examples
    ///
    /// The example of [`IntQueue::memfd`] attaches a second handle with
    /// `from_fd`.
    pub fn from_fd(fd: i32) -> Result<Self> {
        Region::from_fd(fd, T::VARIANT).map(Self::wrap)
    }

    /// The ring without an intent record (creation, and the looks that
    /// change nothing: size, peek, stats).
    fn ring_of(r: &Region) -> Ring<'_, T> {
        let h = r.header();
        // SAFETY: the region was validated to hold `capacity` slots of this
        // variant right after the header, and the slot types are repr(C)
        // atomics that may alias shared memory.
        let slots = unsafe {
            std::slice::from_raw_parts(
                r.at(HEADER_SIZE as u64) as *const T::Slot,
                r.geometry().capacity as usize,
            )
        };
        Ring::new(&h.head, &h.tail, slots).with_repair(r)
    }

    /// The ring for looks that change nothing (no intent record).
    #[inline(always)]
    fn ring(&self) -> Ring<'_, T> {
        Self::ring_of(&self.region).with_hook(self.hook)
    }

    #[inline(always)]
    fn consumers(&self) -> Side<'_> {
        let h = self.region.header();
        Side {
            waiters: &h.pop_waiters,
            futex: &h.pop_futex,
        }
    }

    #[inline(always)]
    fn producers(&self) -> Side<'_> {
        let h = self.region.header();
        Side {
            waiters: &h.push_waiters,
            futex: &h.push_futex,
        }
    }

    /// Push `v` if there is room; `false` when full (counted in
    /// `push_full`). Wakes one blocked consumer, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let q = IntQueue::<i32>::anonymous(2)?;
    /// assert!(q.push(1) && q.push(2));
    /// assert!(q.is_full());
    /// assert!(!q.push(3)); // full: try later, or use push_wait
    /// assert_eq!(q.pop(), Some(1)); // oldest first
    /// assert_eq!(q.pop(), Some(2));
    /// assert_eq!(q.pop(), None); // empty
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    #[inline]
    pub fn push(&self, v: T) -> bool {
        match self.try_push_ring(v) {
            Ok(()) => {
                crate::lock::barrier::light();
                self.consumers().wake(1);
                true
            }
            Err(_) => {
                self.region
                    .header()
                    .push_full
                    .fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Pop the oldest item; `None` when empty (counted in `pop_empty`).
    /// Wakes one blocked producer, if any.
    ///
    /// # Examples
    ///
    /// See [`IntQueue::push`].
    #[inline]
    pub fn pop(&self) -> Option<T> {
        // HOOK(lease): one load of a word on the line the wake reads
        // anyway; while leases are open or items wait, the lease path.
        if self.leases_busy() {
            return self.pop_busy();
        }
        self.popped(self.try_pop_ring())
    }

    /// `pop` while lease records are in use: returned items first (oldest
    /// pop first, after a look for dead holders if one is due), then the
    /// ring, then, the ring empty, a sooner look.
    #[cold]
    #[inline(never)]
    fn pop_busy(&self) -> Option<T> {
        self.popped(self.try_pop_any())
    }

    /// The end of a `pop`: wake a producer for the slot, or count the miss.
    #[inline(always)]
    fn popped(&self, r: std::result::Result<T, crate::ring::Miss>) -> Option<T> {
        match r {
            Ok(v) => {
                crate::lock::barrier::light();
                self.producers().wake(1);
                Some(v)
            }
            Err(_) => {
                self.region
                    .header()
                    .pop_empty
                    .fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// One pop of any kind of item: returned items first, then the ring.
    fn try_pop_any(&self) -> std::result::Result<T, crate::ring::Miss> {
        if self.leases_busy() {
            if let Some(v) = self.pop_returned(false) {
                return Ok(v);
            }
        }
        match self.try_pop_ring() {
            Err(crate::ring::Miss::Settled) if self.leases_busy() || self.any_returned() => {
                self.pop_returned(true).ok_or(crate::ring::Miss::Settled)
            }
            r => r,
        }
    }

    /// Push `v`, sleeping while the queue is full, until `deadline`.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{Deadline, IntQueue, Waited};
    /// let q = IntQueue::<i32>::anonymous(2).unwrap();
    /// assert_eq!(q.push_wait(1, &Deadline::after_secs(1.0)), Waited::Done(()));
    /// assert!(q.push(2));
    /// // Full: nobody pops, so the wait ends at its deadline.
    /// assert_eq!(q.push_wait(3, &Deadline::after_secs(0.01)), Waited::TimedOut);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| q.pop_wait(&Deadline::FOREVER));
    ///     assert_eq!(q.push_wait(3, &Deadline::FOREVER), Waited::Done(()));
    /// });
    /// assert_eq!(q.stats().push_full, 1);
    /// ```
    pub fn push_wait(&self, v: T, deadline: &Deadline) -> Waited<()> {
        let r = block_on_fenced(self.producers(), deadline, || self.try_push_ring(v));
        match r {
            Waited::Done(()) => {
                crate::lock::barrier::light();
                self.consumers().wake(1)
            }
            Waited::TimedOut => {
                self.region
                    .header()
                    .push_full
                    .fetch_add(1, Ordering::Relaxed);
            }
            Waited::Interrupted => {}
        }
        r
    }

    /// Pop, sleeping while the queue is empty, until `deadline`.
    /// `Interrupted` (a signal) means nothing was popped: call again with
    /// the same deadline. While leases are open it wakes every 50 ms to
    /// look for dead holders, as `pop_lease_wait` does.
    ///
    /// # Examples
    ///
    /// See [`IntQueue::push_wait`], whose helper thread pops with
    /// `pop_wait`.
    pub fn pop_wait(&self, deadline: &Deadline) -> Waited<T> {
        let r = loop {
            // HOOK(lease): as in `pop` (the re-check before a sleep too).
            // A new due time of a delayed item ends the slice (`None`).
            let (slice, hint) = if self.leases_busy() {
                (
                    self.busy_slice(deadline),
                    crate::lease::due_hint(self.region()),
                )
            } else {
                (*deadline, 0)
            };
            let attempt = || match self.try_pop_any() {
                Ok(v) => Ok(Some(v)),
                Err(_) if self.due_changed(hint) => Ok(None),
                Err(m) => Err(m),
            };
            match block_on_fenced(self.consumers(), &slice, attempt) {
                Waited::TimedOut if !deadline.expired() => {}
                Waited::Done(None) => {}
                Waited::Done(Some(v)) => break Waited::Done(v),
                Waited::TimedOut => break Waited::TimedOut,
                Waited::Interrupted => break Waited::Interrupted,
            }
        };
        match r {
            Waited::Done(_) => {
                crate::lock::barrier::light();
                self.producers().wake(1)
            }
            Waited::TimedOut => {
                self.region
                    .header()
                    .pop_empty
                    .fetch_add(1, Ordering::Relaxed);
            }
            Waited::Interrupted => {}
        }
        r
    }

    /// `Ring::try_push` with this thread's record: the first attempt
    /// inline, the rest out of line, where the ring is built again (so
    /// the fast path keeps nothing but `self` across it).
    #[inline(always)]
    fn try_push_ring(&self, v: T) -> std::result::Result<(), crate::ring::Miss> {
        if self.with_ring(|r| r.push_fast(v)) {
            Ok(())
        } else {
            self.push_cold(v)
        }
    }

    #[cold]
    #[inline(never)]
    fn push_cold(&self, v: T) -> std::result::Result<(), crate::ring::Miss> {
        self.with_ring(|r| r.push_slow(v))
    }

    /// `Ring::try_pop` with this thread's record, as `try_push_ring`.
    #[inline(always)]
    fn try_pop_ring(&self) -> std::result::Result<T, crate::ring::Miss> {
        match self.with_ring(|r| r.pop_fast()) {
            Some(v) => Ok(v),
            None => self.pop_cold(),
        }
    }

    #[cold]
    #[inline(never)]
    fn pop_cold(&self) -> std::result::Result<T, crate::ring::Miss> {
        self.with_ring(|r| r.pop_slow())
    }

    /// Push items from `vals` in order until one does not fit; returns how
    /// many were pushed. Wakes as many consumers as items pushed.
    ///
    /// Items are claimed in runs with one atomic step per run (see
    /// [`Ring::try_push_batch`]); they are gathered from the iterator in
    /// chunks of up to 256, so items the queue has no room for may have been
    /// taken from the iterator without being pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let q = IntQueue::<i64>::anonymous(8)?;
    /// assert_eq!(q.push_multi((1..=5).map(|i| i * i)), 5);
    /// assert_eq!(q.push_multi(100..), 3); // stops when full
    /// let mut out = [0; 4];
    /// assert_eq!(q.pop_multi(&mut out), 4);
    /// assert_eq!(out, [1, 4, 9, 16]);
    /// assert_eq!(q.pop_multi(&mut out), 4);
    /// assert_eq!(out, [25, 100, 101, 102]);
    /// assert_eq!(q.pop_multi(&mut out), 0); // empty
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn push_multi(&self, vals: impl IntoIterator<Item = T>) -> usize {
        const CHUNK: usize = 256;
        let mut it = vals.into_iter();
        // Uninitialised: zeroing 2 KiB per call cost about 20 ns, a fifth of
        // a 100-item batch.
        let mut buf = [MaybeUninit::<T>::uninit(); CHUNK];
        let mut total = 0usize;
        loop {
            let mut k = 0;
            // `buf` first: zip stops without taking an item it cannot store.
            for (b, v) in buf.iter_mut().zip(&mut it) {
                b.write(v);
                k += 1;
            }
            if k == 0 {
                break;
            }
            // SAFETY: the loop above initialised `buf[..k]`; T is Copy.
            let chunk = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<T>(), k) };
            let n = self.push_run(chunk);
            total += n;
            if n < k {
                self.region
                    .header()
                    .push_full
                    .fetch_add(1, Ordering::Relaxed);
                break;
            }
            if k < CHUNK {
                break;
            }
        }
        crate::lock::barrier::light();
        self.consumers().wake(total.min(u32::MAX as usize) as u32);
        total
    }

    /// Push `vals` in order until one does not fit; returns how many were
    /// pushed. Wakes as many consumers as items pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let q = IntQueue::<i32>::anonymous(4).unwrap();
    /// assert_eq!(q.push_slice(&[1, 2, 3, 4, 5]), 4);
    /// let mut out = [0; 8];
    /// assert_eq!(q.pop_multi(&mut out), 4);
    /// assert_eq!(out[..4], [1, 2, 3, 4]);
    /// ```
    pub fn push_slice(&self, vals: &[T]) -> usize {
        let n = self.push_run(vals);
        if n < vals.len() {
            self.region
                .header()
                .push_full
                .fetch_add(1, Ordering::Relaxed);
        }
        crate::lock::barrier::light();
        self.consumers().wake(n.min(u32::MAX as usize) as u32);
        n
    }

    /// Claim runs until `vals` is in or the ring is full; no wake, no stats.
    #[inline]
    fn push_run(&self, vals: &[T]) -> usize {
        self.with_ring(|ring| {
            let mut n = 0usize;
            while n < vals.len() {
                match ring.try_push_batch(&vals[n..]) {
                    Ok(m) => n += m,
                    Err(_) => break,
                }
            }
            n
        })
    }

    /// Pop up to `out.len()` items into `out`; returns how many. Wakes as
    /// many producers as slots freed.
    ///
    /// Items are claimed in runs with one atomic step per run (see
    /// [`Ring::try_pop_batch`]).
    ///
    /// # Examples
    ///
    /// See [`IntQueue::push_multi`] and [`IntQueue::push_slice`].
    pub fn pop_multi(&self, out: &mut [T]) -> usize {
        // HOOK(lease): items back from leases first, then the ring, then
        // (the ring empty) a sooner look for dead holders.
        let mut n = 0;
        if self.leases_busy() {
            n = self.take_returned(out, false);
        }
        n += self.pop_run(&mut out[n..]);
        if n < out.len() && (self.leases_busy() || self.any_returned()) {
            n += self.take_returned(&mut out[n..], true);
        }
        if n == 0 && !out.is_empty() {
            self.region
                .header()
                .pop_empty
                .fetch_add(1, Ordering::Relaxed);
        }
        crate::lock::barrier::light();
        self.producers().wake(n.min(u32::MAX as usize) as u32);
        n
    }

    /// Claim runs until `out` is full or the ring is empty; no wake, no stats.
    #[inline]
    fn pop_run(&self, out: &mut [T]) -> usize {
        self.with_ring(|ring| {
            let mut n = 0usize;
            while n < out.len() {
                match ring.try_pop_batch(&mut out[n..]) {
                    Ok(m) => n += m,
                    Err(_) => break,
                }
            }
            n
        })
    }

    /// Best-effort look at the oldest item (racy under concurrent pops).
    ///
    /// # Examples
    ///
    /// See [`IntQueue::clear`].
    pub fn peek(&self) -> Option<T> {
        // HOOK(lease): returned items are at the front.
        if self.leases_busy() {
            return self.peek_busy();
        }
        self.ring().peek()
    }

    /// `peek` while lease records are in use: the oldest returned item,
    /// else the ring's front.
    #[cold]
    #[inline(never)]
    fn peek_busy(&self) -> Option<T> {
        if self.any_returned() {
            if let Some(v) = self.peek_returned() {
                return Some(v);
            }
        }
        self.ring().peek()
    }

    /// Items in the queue (a snapshot): the ring's, and the items back
    /// from leases waiting to be served (so it can exceed the capacity
    /// by those).
    ///
    /// # Examples
    ///
    /// See [`IntQueue::clear`].
    pub fn len(&self) -> u64 {
        // HOOK(lease): one load of the word `pop` reads.
        if self.leases_busy() {
            return self.len_busy();
        }
        self.ring().len()
    }

    /// `len` while lease records are in use.
    #[cold]
    #[inline(never)]
    fn len_busy(&self) -> u64 {
        self.ring().len().saturating_add(self.returned_waiting())
    }

    /// Whether the queue is empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the ring is full (a snapshot): a push would fail.
    pub fn is_full(&self) -> bool {
        self.ring().len() >= self.capacity()
    }

    /// Slot count.
    pub fn capacity(&self) -> u64 {
        self.region.geometry().capacity
    }

    /// Remove every item; returns how many. Wakes every blocked producer.
    ///
    /// Items popped with a lease and given back (released, or returned
    /// after their holder died or their deadline passed) are removed too,
    /// and counted.
    ///
    /// Items are popped in runs (the ring stays lock-free), so a
    /// concurrent push may survive the clear. At most one lap
    /// (`capacity` items) is removed: every item present when the call
    /// began has gone by then, being older, and a peer that pushes as
    /// fast as we pop (or memory scribbled to look full) cannot keep the
    /// call going for ever.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let q = IntQueue::<i16>::anonymous(3)?; // rounded up to 4 slots
    /// assert_eq!(q.capacity(), 4);
    /// assert!(q.is_empty() && q.peek().is_none());
    /// q.push_slice(&[7, 8, 9]);
    /// assert_eq!(q.len(), 3);
    /// assert_eq!(q.peek(), Some(7)); // still there
    /// assert_eq!(q.clear(), 3);
    /// assert!(q.is_empty());
    /// assert_eq!(q.stats().pop_ok, 3); // cleared items count as pops
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn clear(&self) -> u64 {
        let mut buf = [T::from_i64(0); 256];
        let cap = self.capacity();
        let mut n = 0u64;
        loop {
            let want = (cap - n).min(buf.len() as u64) as usize;
            let m = self.pop_run(&mut buf[..want]);
            n += m as u64;
            if m < want || n >= cap {
                break;
            }
        }
        // HOOK(lease): items back from leases are in the queue too.
        while self.any_returned() {
            match self.pop_returned(true) {
                Some(_) => n += 1,
                None => break,
            }
        }
        self.region.header().cleared.fetch_add(n, Ordering::Relaxed);
        self.producers().wake_all();
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
    /// See [`IntQueue::unlink`].
    pub fn sync(&self) -> Result<()> {
        self.region.sync()
    }

    /// Counters and gauges; exact once all users are quiescent. The Str
    /// fields (`arena_*`, `lock_*`) are 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let q = IntQueue::<i64>::anonymous(2)?;
    /// q.push_slice(&[1, 2, 3]); // the third does not fit
    /// q.pop();
    /// let s = q.stats();
    /// assert_eq!((s.size, s.capacity), (1, 2));
    /// assert_eq!((s.push_ok, s.pop_ok, s.push_full, s.pop_empty), (2, 1, 1, 0));
    /// assert_eq!((s.push_waiters, s.pop_waiters), (0, 0));
    /// // header + two 16-byte slots, then (on a 64-byte boundary) the
    /// // ring's 32 intent records, then the default lease table: a
    /// // 192-byte head, 64 records of 128 bytes and 64 dead-letter
    /// // records of 64 bytes
    /// assert_eq!(s.mmap_size, 384 + 32 * 64 + 192 + 64 * 128 + 64 * 64);
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let h = self.region.header();
        let ring = self.ring();
        // Given-up positions (slot repair) hold no item: they are neither
        // pushes nor pops.
        let skipped = h.int_skipped().load(Ordering::Relaxed);
        // Items back from leases are in the queue again: in the size, and
        // their pop no longer counted until they are taken again, so each
        // item counts one push and at most one pop.
        let waiting = self.returned_waiting();
        Stats {
            size: ring.len().saturating_add(waiting),
            capacity: self.capacity(),
            mmap_size: self.region.mapped_len(),
            push_ok: ring.pushed().wrapping_sub(skipped),
            // Cleared items count as pops, as in the C implementation, so
            // push_ok - pop_ok stays the size (the header's `cleared` word
            // still counts them apart).
            pop_ok: ring.popped().wrapping_sub(skipped).wrapping_sub(waiting),
            push_full: h.push_full.load(Ordering::Relaxed),
            pop_empty: h.pop_empty.load(Ordering::Relaxed),
            recoveries: h.recoveries.load(Ordering::Relaxed),
            push_waiters: crate::wait::waiter_count(&h.push_waiters),
            pop_waiters: crate::wait::waiter_count(&h.pop_waiters),
            ..Stats::default()
        }
    }

    /// The region (path, fd, backing).
    pub fn region(&self) -> &Region {
        &self.region
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
    /// [`Error::Unsupported`](crate::Error::Unsupported) for anonymous and memfd queues; the unlink
    /// error otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::IntQueue;
    /// let path = std::env::temp_dir().join(format!("dqs-doc-unlink-{}.q", std::process::id()));
    /// let q = IntQueue::<i32>::open(&path, 8, 0o600)?;
    /// assert_eq!(q.path().unwrap().to_bytes(), path.as_os_str().as_encoded_bytes());
    /// assert!(q.push(1));
    /// q.sync()?; // on disk now, not only in the page cache
    /// q.unlink()?;
    /// assert!(!path.exists());
    /// assert_eq!(q.pop(), Some(1)); // the handle still works
    /// assert!(q.unlink().is_err()); // already gone
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn unlink(&self) -> Result<()> {
        self.region.unlink()
    }
}

/// The Int repair state: the header's counters and the mapping's intent
/// records (see `layout.rs`).
impl RepairSource for Region {
    #[inline]
    fn repair(&self) -> Repair<'_> {
        let h = self.header();
        Repair {
            table: record_cache::table(self),
            skipped: h.int_skipped(),
            recoveries: &h.recoveries,
        }
    }

    /// Wake a producer for a slot a repair freed (the slot store was a
    /// plain one: the light barrier first, as after a pop).
    #[cold]
    fn freed_slot(&self) {
        let h = self.header();
        crate::lock::barrier::light();
        Side {
            waiters: &h.push_waiters,
            futex: &h.push_futex,
        }
        .wake(1);
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
