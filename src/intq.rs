//! `IntQueue<T>`: the lock-free integer queues (Int, Int32, Int16) over a
//! shared region: the Vyukov ring of `ring.rs` plus the futex waits of
//! `wait.rs` and the statistics the Perl `stats` method reports.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::path::Path;

use crate::error::Result;
use crate::futex::Deadline;
use crate::layout::HEADER_SIZE;
use crate::region::{Region, Request};
use crate::ring::{Element, Ring};
use crate::sync::Ordering;
use crate::wait::{block_on, Side, Waited};
use crate::Stats;

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
    pub fn anonymous(capacity: u64) -> Result<Self> {
        Region::anonymous(&Self::request(capacity, 0), &Self::init_body).map(Self::wrap)
    }

    /// A queue in a new memfd named `name` (the name is only a label).
    ///
    /// # Errors
    /// Out-of-range capacity, memfd_create or sealing failure.
    pub fn memfd(name: &CStr, capacity: u64) -> Result<Self> {
        Region::memfd(name, &Self::request(capacity, 0), &Self::init_body).map(Self::wrap)
    }

    /// Attach to the queue behind `fd` (duplicated; the caller's fd stays
    /// the caller's).
    ///
    /// # Errors
    /// A bad fd, one too small for a header, or one holding another variant.
    pub fn from_fd(fd: i32) -> Result<Self> {
        Region::from_fd(fd, T::VARIANT).map(Self::wrap)
    }

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
        Ring::new(&h.head, &h.tail, slots)
    }

    #[inline(always)]
    fn ring(&self) -> Ring<'_, T> {
        Self::ring_of(&self.region)
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

    /// Push `v` if there is room; `false` when full.
    #[inline]
    pub fn push(&self, v: T) -> bool {
        match self.ring().try_push(v) {
            Ok(()) => {
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

    /// Pop the oldest item; `None` when empty.
    #[inline]
    pub fn pop(&self) -> Option<T> {
        match self.ring().try_pop() {
            Ok(v) => {
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

    /// Push `v`, sleeping while the queue is full, until `deadline`.
    pub fn push_wait(&self, v: T, deadline: &Deadline) -> Waited<()> {
        let ring = self.ring();
        let r = block_on(self.producers(), deadline, || ring.try_push(v));
        match r {
            Waited::Done(()) => self.consumers().wake(1),
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
    pub fn pop_wait(&self, deadline: &Deadline) -> Waited<T> {
        let ring = self.ring();
        let r = block_on(self.consumers(), deadline, || ring.try_pop());
        match r {
            Waited::Done(_) => self.producers().wake(1),
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

    /// Push items from `vals` in order until one does not fit; returns how
    /// many were pushed. Wakes as many consumers as items pushed.
    pub fn push_multi(&self, vals: impl IntoIterator<Item = T>) -> usize {
        let ring = self.ring();
        let mut n = 0usize;
        let mut full = false;
        for v in vals {
            if ring.try_push(v).is_err() {
                full = true;
                break;
            }
            n += 1;
        }
        if full {
            self.region
                .header()
                .push_full
                .fetch_add(1, Ordering::Relaxed);
        }
        self.consumers().wake(n.min(u32::MAX as usize) as u32);
        n
    }

    /// Pop up to `out.len()` items into `out`; returns how many. Wakes as
    /// many producers as slots freed.
    pub fn pop_multi(&self, out: &mut [T]) -> usize {
        let ring = self.ring();
        let mut n = 0usize;
        while n < out.len() {
            match ring.try_pop() {
                Ok(v) => {
                    out[n] = v;
                    n += 1;
                }
                Err(_) => break,
            }
        }
        if n == 0 && !out.is_empty() {
            self.region
                .header()
                .pop_empty
                .fetch_add(1, Ordering::Relaxed);
        }
        self.producers().wake(n.min(u32::MAX as usize) as u32);
        n
    }

    /// Best-effort look at the oldest item (racy under concurrent pops).
    pub fn peek(&self) -> Option<T> {
        self.ring().peek()
    }

    /// Items in the queue (a snapshot).
    pub fn len(&self) -> u64 {
        self.ring().len()
    }

    /// Whether the queue is empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the queue is full (a snapshot).
    pub fn is_full(&self) -> bool {
        self.len() >= self.capacity()
    }

    /// Slot count.
    pub fn capacity(&self) -> u64 {
        self.region.geometry().capacity
    }

    /// Remove every item; returns how many. Wakes every blocked producer.
    ///
    /// Items are popped one by one (the ring stays lock-free), so a
    /// concurrent push may survive the clear.
    pub fn clear(&self) -> u64 {
        let ring = self.ring();
        let mut n = 0u64;
        while ring.try_pop().is_ok() {
            n += 1;
        }
        self.region.header().cleared.fetch_add(n, Ordering::Relaxed);
        self.producers().wake_all();
        n
    }

    /// Flush the mapping to its file (`msync`).
    ///
    /// # Errors
    /// msync failure.
    pub fn sync(&self) -> Result<()> {
        self.region.sync()
    }

    /// Counters and gauges; exact once all users are quiescent.
    pub fn stats(&self) -> Stats {
        let h = self.region.header();
        let ring = self.ring();
        let cleared = h.cleared.load(Ordering::Relaxed);
        Stats {
            size: ring.len(),
            capacity: self.capacity(),
            mmap_size: self.region.mapped_len(),
            push_ok: ring.pushed(),
            pop_ok: ring.popped().wrapping_sub(cleared),
            push_full: h.push_full.load(Ordering::Relaxed),
            pop_empty: h.pop_empty.load(Ordering::Relaxed),
            recoveries: h.recoveries.load(Ordering::Relaxed),
            push_waiters: h.push_waiters.load(Ordering::Relaxed) as u64,
            pop_waiters: h.pop_waiters.load(Ordering::Relaxed) as u64,
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

    /// Remove the backing file.
    ///
    /// # Errors
    /// [`crate::Error::Unsupported`] for anonymous and memfd queues; the unlink error
    /// otherwise.
    pub fn unlink(&self) -> Result<()> {
        self.region.unlink()
    }
}
