//! A queue file of any variant: [`AnyQueue`] reads the variant from the
//! file's header instead of being told it.
//!
//! This is what tools that work on "whatever queue is at this path" need
//! (the `dqs` command-line tool is one). Unlike the `open` constructors of
//! the typed queues, [`AnyQueue::attach`] never creates a file: a missing
//! path is an error. [`AnyQueue::create`] creates, and refuses an existing
//! file whose variant or geometry differs from the request.
//!
//! ```
//! use data_queue_shared::any::AnyQueue;
//! use data_queue_shared::Variant;
//! let dir = std::env::temp_dir().join(format!("dqs-any-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("q");
//! AnyQueue::create(&path, Variant::Int16, 8, 0, 0o600).unwrap();
//! let q = AnyQueue::attach(&path).unwrap();
//! assert_eq!(q.variant(), Variant::Int16);
//! if let AnyQueue::Int16(q) = &q {
//!     assert!(q.push(-5));
//! }
//! assert_eq!(q.stats().size, 1);
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::ffi::CStr;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

use crate::error::{Error, Result};
use crate::layout::{Geometry, Variant, HEADER_SIZE};
use crate::lease::{DeadItem, LeaseError, LeaseInfo, LeaseStats, Table};
use crate::region::{incompatible, small_file_error, validate_header, Region, Request};
use crate::stats::Stats;
use crate::{IntQueue, StrQueue};

/// A handle on a queue of any of the four variants.
pub enum AnyQueue {
    /// A queue of 64-bit integers (Perl's `Data::Queue::Shared::Int`).
    Int(IntQueue<i64>),
    /// A queue of 32-bit integers.
    Int32(IntQueue<i32>),
    /// A queue of 16-bit integers.
    Int16(IntQueue<i16>),
    /// A queue of byte strings.
    Str(StrQueue),
}

/// The variant named by a word, as the Perl classes or the `dqs` tool spell
/// it (case-insensitive): `int`/`int64`, `int32`, `int16`, `str`.
pub fn variant_from_name(name: &str) -> Option<Variant> {
    match name.to_ascii_lowercase().as_str() {
        "int" | "int64" => Some(Variant::Int64),
        "int32" => Some(Variant::Int32),
        "int16" => Some(Variant::Int16),
        "str" => Some(Variant::Str),
        _ => None,
    }
}

/// The smallest and largest value an integer variant holds (`None` for
/// [`Variant::Str`]).
pub fn int_range(variant: Variant) -> Option<(i64, i64)> {
    match variant {
        Variant::Int64 => Some((i64::MIN, i64::MAX)),
        Variant::Int32 => Some((i32::MIN.into(), i32::MAX.into())),
        Variant::Int16 => Some((i16::MIN.into(), i16::MAX.into())),
        Variant::Str => None,
    }
}

/// An open queue file, shared-locked (`flock`) while its header is read
/// so that a create in progress (which holds the lock exclusively) is
/// waited for rather than seen half-written.
struct Probed {
    file: File,
    geo: Geometry,
}

fn open_existing(path: &Path) -> Result<Probed> {
    let who = path.display().to_string();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOENT) => Error::io(format!("{who}: no such queue file"), e),
            Some(libc::ELOOP) => Error::io(format!("{who}: refusing to follow a symlink"), e),
            Some(libc::EISDIR) => incompatible(&who, "a directory, not a regular file"),
            _ => Error::io(format!("{who}: open"), e),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| Error::io(format!("{who}: fstat"), e))?;
    if !meta.file_type().is_file() {
        return Err(incompatible(&who, "not a regular file"));
    }
    let fd = file.as_raw_fd();
    // SAFETY: plain syscall on an fd `file` owns.
    while unsafe { libc::flock(fd, libc::LOCK_SH) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(Error::io(format!("{who}: flock"), e));
        }
    }
    let r = read_geometry(&file, &who);
    // The lock is released explicitly: a mapping made from a dup of this
    // fd would otherwise keep it held (see src/region/, FlockGuard).
    // SAFETY: as above.
    unsafe { libc::flock(fd, libc::LOCK_UN) };
    r.map(|geo| Probed { file, geo })
}

fn read_geometry(file: &File, who: &str) -> Result<Geometry> {
    // Sized after the lock: a creator sizes the file while holding it.
    let size = file
        .metadata()
        .map_err(|e| Error::io(format!("{who}: fstat"), e))?
        .len();
    if size < HEADER_SIZE as u64 {
        return Err(small_file_error(file.as_raw_fd(), size, who));
    }
    let mut hdr = [0u8; HEADER_SIZE];
    file.read_exact_at(&mut hdr, 0)
        .map_err(|e| Error::io(format!("{who}: read header"), e))?;
    if hdr[..8] == [0u8; 8] {
        return Err(Error::IncompleteCreate(who.to_string()));
    }
    let raw = u32::from_le_bytes(hdr[12..16].try_into().unwrap());
    // Validate against the variant the header names; an unknown one fails
    // the same checks (any want will do, the number is checked first).
    let want = Variant::from_u32(raw).unwrap_or(Variant::Int64);
    validate_header(&hdr, want, size, who)
}

/// The geometry (variant, capacity, arena, size) of the queue file at
/// `path`, read from its header without attaching.
///
/// # Errors
/// A missing path ([`Error::Io`] with `ENOENT`), a symlink, something that
/// is not a regular file, an interrupted create
/// ([`Error::IncompleteCreate`]), or a file that is not a valid queue
/// ([`Error::Incompatible`]).
///
/// # Examples
///
/// ```
/// use data_queue_shared::{any, Error, StrQueue, Variant};
/// let path = std::env::temp_dir().join(format!("dqs-doc-probe-{}.q", std::process::id()));
/// let q = StrQueue::open(&path, 10, 0, 0o600)?;
/// let g = any::probe(&path)?;
/// assert_eq!((g.variant, g.capacity, g.arena_cap), (Variant::Str, 16, 16 * 256));
/// q.unlink()?;
/// let e = any::probe(&path).unwrap_err();
/// assert!(matches!(e, Error::Io { .. }) && e.raw_os_error() == Some(libc::ENOENT));
/// # Ok::<(), data_queue_shared::Error>(())
/// ```
pub fn probe(path: impl AsRef<Path>) -> Result<Geometry> {
    open_existing(path.as_ref()).map(|p| p.geo)
}

impl AnyQueue {
    /// Attach to the queue file at `path`, whatever its variant. Never
    /// creates anything. The queue is attached through the file's fd, so
    /// the typed handle inside reports no path and cannot unlink: remove
    /// the file with [`region::unlink`](crate::region::unlink).
    ///
    /// # Errors
    /// As [`probe`].
    ///
    /// # Examples
    ///
    /// See [`AnyQueue::create`] and the example of the [module](crate::any).
    pub fn attach(path: impl AsRef<Path>) -> Result<AnyQueue> {
        let p = open_existing(path.as_ref())?;
        let fd = p.file.as_raw_fd();
        // from_fd duplicates the fd and checks the header again; the
        // geometry part of a header never changes after create.
        Ok(match p.geo.variant {
            Variant::Int64 => AnyQueue::Int(IntQueue::from_fd(fd)?),
            Variant::Int32 => AnyQueue::Int32(IntQueue::from_fd(fd)?),
            Variant::Int16 => AnyQueue::Int16(IntQueue::from_fd(fd)?),
            Variant::Str => AnyQueue::Str(StrQueue::from_fd(fd)?),
        })
    }

    /// Create the queue file at `path` (`capacity` and `arena` as for
    /// [`StrQueue::open`]; `arena` is ignored for integer variants), or
    /// attach to the queue already there when it has the same variant and
    /// the same geometry that this request would create.
    ///
    /// # Errors
    /// Out-of-range capacity or arena, a path that cannot be created, or an
    /// existing file that holds another variant or geometry
    /// ([`Error::Incompatible`], naming what the file holds).
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::{AnyQueue, Error, Variant};
    /// let path = std::env::temp_dir().join(format!("dqs-doc-create-{}.q", std::process::id()));
    /// AnyQueue::create(&path, Variant::Int32, 100, 0, 0o600)?; // 128 slots
    /// // The same request again attaches; a different one is refused.
    /// assert_eq!(AnyQueue::create(&path, Variant::Int32, 128, 0, 0o600)?.capacity(), 128);
    /// let Err(e) = AnyQueue::create(&path, Variant::Str, 128, 0, 0o600) else {
    ///     panic!("an Int32 file is no Str queue");
    /// };
    /// assert!(matches!(e, Error::Incompatible { .. }), "{e}");
    /// match AnyQueue::attach(&path)? {
    ///     AnyQueue::Int32(q) => assert!(q.push(-7)),
    ///     _ => unreachable!("the header says Int32"),
    /// }
    /// data_queue_shared::region::unlink(&path)?; // attached handles have no path
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn create(
        path: impl AsRef<Path>,
        variant: Variant,
        capacity: u64,
        arena: u64,
        mode: u32,
    ) -> Result<AnyQueue> {
        let path = path.as_ref();
        let want = Request {
            variant,
            capacity,
            arena,
            mode,
        }
        .geometry()?;
        let q = match variant {
            Variant::Int64 => AnyQueue::Int(IntQueue::open(path, capacity, mode)?),
            Variant::Int32 => AnyQueue::Int32(IntQueue::open(path, capacity, mode)?),
            Variant::Int16 => AnyQueue::Int16(IntQueue::open(path, capacity, mode)?),
            Variant::Str => AnyQueue::Str(StrQueue::open(path, capacity, arena, mode)?),
        };
        let got = *q.geometry();
        if got != want {
            let mut why = format!("it holds a queue of capacity {}", got.capacity);
            if variant == Variant::Str {
                why.push_str(&format!(" with a {}-byte arena", got.arena_cap));
            }
            why.push_str(&format!(", not {}", want.capacity));
            if variant == Variant::Str {
                why.push_str(&format!(" with {}", want.arena_cap));
            }
            return Err(Error::Incompatible {
                who: path.display().to_string(),
                why,
            });
        }
        Ok(q)
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.geometry().variant
    }

    /// The region (geometry, backing).
    pub fn region(&self) -> &Region {
        match self {
            AnyQueue::Int(q) => q.region(),
            AnyQueue::Int32(q) => q.region(),
            AnyQueue::Int16(q) => q.region(),
            AnyQueue::Str(q) => q.region(),
        }
    }

    /// The geometry read from the header at attach.
    pub fn geometry(&self) -> &Geometry {
        self.region().geometry()
    }

    /// Counters and gauges.
    pub fn stats(&self) -> Stats {
        match self {
            AnyQueue::Int(q) => q.stats(),
            AnyQueue::Int32(q) => q.stats(),
            AnyQueue::Int16(q) => q.stats(),
            AnyQueue::Str(q) => q.stats(),
        }
    }

    /// Items in the queue (a snapshot).
    pub fn len(&self) -> u64 {
        match self {
            AnyQueue::Int(q) => q.len(),
            AnyQueue::Int32(q) => q.len(),
            AnyQueue::Int16(q) => q.len(),
            AnyQueue::Str(q) => q.len(),
        }
    }

    /// Whether the queue is empty (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every slot is taken (a snapshot): a push would fail. Items
    /// back from leases that wait outside the slots count in `len` but
    /// take no slot.
    pub fn is_full(&self) -> bool {
        match self {
            AnyQueue::Int(q) => q.is_full(),
            AnyQueue::Int32(q) => q.is_full(),
            AnyQueue::Int16(q) => q.is_full(),
            AnyQueue::Str(q) => q.is_full(),
        }
    }

    /// Slot count.
    pub fn capacity(&self) -> u64 {
        self.geometry().capacity
    }

    /// Remove every item; returns how many.
    pub fn clear(&self) -> u64 {
        match self {
            AnyQueue::Int(q) => q.clear(),
            AnyQueue::Int32(q) => q.clear(),
            AnyQueue::Int16(q) => q.clear(),
            AnyQueue::Str(q) => q.clear(),
        }
    }

    /// Create or attach to the queue file `path` of `variant`, as the typed
    /// queues' `open` do ([`IntQueue::open`], [`StrQueue::open`]; `arena`
    /// is ignored for integer variants). An existing file's geometry wins.
    ///
    /// # Errors
    /// As the typed constructors.
    pub fn open(
        path: impl AsRef<Path>,
        variant: Variant,
        capacity: u64,
        arena: u64,
        mode: u32,
    ) -> Result<AnyQueue> {
        let p = path.as_ref();
        Ok(match variant {
            Variant::Int64 => AnyQueue::Int(IntQueue::open(p, capacity, mode)?),
            Variant::Int32 => AnyQueue::Int32(IntQueue::open(p, capacity, mode)?),
            Variant::Int16 => AnyQueue::Int16(IntQueue::open(p, capacity, mode)?),
            Variant::Str => AnyQueue::Str(StrQueue::open(p, capacity, arena, mode)?),
        })
    }

    /// A queue of `variant` in anonymous shared memory, as
    /// [`IntQueue::anonymous`] and [`StrQueue::anonymous`].
    ///
    /// # Errors
    /// As the typed constructors.
    pub fn anonymous(variant: Variant, capacity: u64, arena: u64) -> Result<AnyQueue> {
        Ok(match variant {
            Variant::Int64 => AnyQueue::Int(IntQueue::anonymous(capacity)?),
            Variant::Int32 => AnyQueue::Int32(IntQueue::anonymous(capacity)?),
            Variant::Int16 => AnyQueue::Int16(IntQueue::anonymous(capacity)?),
            Variant::Str => AnyQueue::Str(StrQueue::anonymous(capacity, arena)?),
        })
    }

    /// A queue of `variant` in a new memfd labelled `name`, as
    /// [`IntQueue::memfd`] and [`StrQueue::memfd`].
    ///
    /// # Errors
    /// As the typed constructors.
    pub fn memfd(name: &CStr, variant: Variant, capacity: u64, arena: u64) -> Result<AnyQueue> {
        Ok(match variant {
            Variant::Int64 => AnyQueue::Int(IntQueue::memfd(name, capacity)?),
            Variant::Int32 => AnyQueue::Int32(IntQueue::memfd(name, capacity)?),
            Variant::Int16 => AnyQueue::Int16(IntQueue::memfd(name, capacity)?),
            Variant::Str => AnyQueue::Str(StrQueue::memfd(name, capacity, arena)?),
        })
    }

    /// Attach to the queue of `variant` behind `fd` (duplicated), as
    /// [`IntQueue::from_fd`] and [`StrQueue::from_fd`].
    ///
    /// # Errors
    /// As the typed constructors.
    pub fn from_fd(fd: i32, variant: Variant) -> Result<AnyQueue> {
        Ok(match variant {
            Variant::Int64 => AnyQueue::Int(IntQueue::from_fd(fd)?),
            Variant::Int32 => AnyQueue::Int32(IntQueue::from_fd(fd)?),
            Variant::Int16 => AnyQueue::Int16(IntQueue::from_fd(fd)?),
            Variant::Str => AnyQueue::Str(StrQueue::from_fd(fd)?),
        })
    }

    /// The Str queue, or `None` for the integer variants.
    #[inline]
    pub fn as_str(&self) -> Option<&StrQueue> {
        match self {
            AnyQueue::Str(q) => Some(q),
            _ => None,
        }
    }

    /// The file path (NUL-terminated), or `None` for anonymous, memfd and
    /// fd-attached queues.
    pub fn path(&self) -> Option<&CStr> {
        self.region().path()
    }

    /// The memfd (or attached fd), or -1.
    pub fn fd(&self) -> i32 {
        self.region().fd()
    }

    /// Flush a file-backed mapping to its file (`msync`).
    ///
    /// # Errors
    /// The `msync` failure.
    pub fn sync(&self) -> Result<()> {
        self.region().sync()
    }

    /// Remove the backing file (handles keep working).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for anonymous and memfd queues, or the
    /// `unlink` failure.
    pub fn unlink(&self) -> Result<()> {
        self.region().unlink()
    }
}

// HOOK(lease): the lease calls of a queue of any variant (src/lease/).
impl AnyQueue {
    /// The lease counters of a queue of any variant (see
    /// [`IntQueue::lease_stats`](crate::IntQueue::lease_stats)).
    pub fn lease_stats(&self) -> LeaseStats {
        match self {
            AnyQueue::Int(q) => q.lease_stats(),
            AnyQueue::Int32(q) => q.lease_stats(),
            AnyQueue::Int16(q) => q.lease_stats(),
            AnyQueue::Str(q) => q.lease_stats(),
        }
    }

    /// The open and waiting leases of a queue of any variant.
    pub fn leases(&self) -> Vec<LeaseInfo> {
        match self {
            AnyQueue::Int(q) => q.leases(),
            AnyQueue::Int32(q) => q.leases(),
            AnyQueue::Int16(q) => q.leases(),
            AnyQueue::Str(q) => q.leases(),
        }
    }

    /// The lease lines of `dqs stats`: (name, value), names of at most 14
    /// characters (`leases_nacked` counts releases, `leases_dead` leases
    /// returned after their holder died, `leases_expired` after their
    /// deadline), then the work-queue counters under their
    /// [`LeaseStats`] names.
    ///
    /// A snapshot without the lock and without a look for dead holders,
    /// so that `dqs stats` changes nothing and never waits.
    pub fn lease_fields(&self) -> Vec<(&'static str, u64)> {
        let s = Table::of(self.region()).map_or_else(LeaseStats::default, |t| t.stats());
        let mut v = vec![
            ("max_leases", s.max_leases),
            ("leases_open", s.open),
            ("leases_waiting", s.waiting),
            ("leases_acked", s.acked),
            ("leases_nacked", s.released),
            ("leases_dead", s.returned_dead),
            ("leases_expired", s.returned_timeout),
        ];
        if matches!(self, AnyQueue::Str(_)) {
            v.push(("lease_bytes", s.lease_bytes));
        }
        // HOOK(work): the work-queue counters (format 8), as lease_stats
        // names them.
        v.extend([
            ("max_deliveries", s.max_deliveries),
            ("max_dead", s.max_dead),
            ("delivered", s.delivered),
            ("dead", s.dead),
            ("buried", s.buried),
            ("kicked", s.kicked),
            ("drained", s.drained),
            ("delayed", s.delayed),
            ("touched", s.touched),
            ("dead_full", s.dead_full),
            ("dead_items", s.dead_items),
        ]);
        v
    }
}

// HOOK(work): the work-queue calls of a queue of any variant (see the
// `lease` module's "Work queue" docs).
macro_rules! each {
    ($self:expr, $q:ident => $body:expr) => {
        match $self {
            AnyQueue::Int($q) => $body,
            AnyQueue::Int32($q) => $body,
            AnyQueue::Int16($q) => $body,
            AnyQueue::Str($q) => $body,
        }
    };
}

impl AnyQueue {
    /// The delivery count of a held lease (`None` once it ended).
    ///
    /// # Errors
    /// As [`IntQueue::ack`](crate::IntQueue::ack).
    pub fn deliveries(&self, lease: u64) -> std::result::Result<Option<u64>, LeaseError> {
        each!(self, q => q.deliveries(lease))
    }

    /// Push a held lease's deadline forward (see
    /// [`IntQueue::touch`](crate::IntQueue::touch)).
    ///
    /// # Errors
    /// As [`IntQueue::ack`](crate::IntQueue::ack).
    pub fn touch(&self, lease: u64, timeout: Option<f64>) -> std::result::Result<bool, LeaseError> {
        each!(self, q => q.touch(lease, timeout))
    }

    /// Release a lease, its item coming back after `delay` seconds.
    ///
    /// # Errors
    /// As [`IntQueue::ack`](crate::IntQueue::ack).
    pub fn release_after(&self, lease: u64, delay: f64) -> std::result::Result<bool, LeaseError> {
        each!(self, q => q.release_after(lease, delay))
    }

    /// Move a held lease's item to the dead-letter area.
    ///
    /// # Errors
    /// As [`IntQueue::bury`](crate::IntQueue::bury).
    pub fn bury(&self, lease: u64) -> std::result::Result<bool, LeaseError> {
        each!(self, q => q.bury(lease))
    }

    /// Items in the dead-letter area.
    pub fn dead_count(&self) -> u64 {
        each!(self, q => q.dead_count())
    }

    /// The `k`-th oldest dead item; for Str its bytes in `out`: (info,
    /// utf8).
    ///
    /// # Errors
    /// As [`StrQueue::dead_nth`](crate::StrQueue::dead_nth).
    pub fn dead_nth(
        &self,
        k: u64,
        out: &mut Vec<u8>,
    ) -> std::result::Result<Option<(DeadItem, bool)>, LeaseError> {
        match self {
            AnyQueue::Int(q) => Ok(q.dead_nth(k).map(|d| (d, false))),
            AnyQueue::Int32(q) => Ok(q.dead_nth(k).map(|d| (d, false))),
            AnyQueue::Int16(q) => Ok(q.dead_nth(k).map(|d| (d, false))),
            AnyQueue::Str(q) => q.dead_nth(k, out),
        }
    }

    /// Take the oldest dead item out; for Str its bytes in `out`.
    ///
    /// # Errors
    /// As [`StrQueue::dead_take`](crate::StrQueue::dead_take).
    pub fn dead_take(
        &self,
        out: &mut Vec<u8>,
    ) -> std::result::Result<Option<(DeadItem, bool)>, LeaseError> {
        match self {
            AnyQueue::Int(q) => Ok(q.dead_take()?.map(|d| (d, false))),
            AnyQueue::Int32(q) => Ok(q.dead_take()?.map(|d| (d, false))),
            AnyQueue::Int16(q) => Ok(q.dead_take()?.map(|d| (d, false))),
            AnyQueue::Str(q) => q.dead_take(out),
        }
    }

    /// Move up to `n` dead items back to the live queue's front.
    ///
    /// # Errors
    /// As [`IntQueue::kick`](crate::IntQueue::kick).
    pub fn kick(&self, n: u64) -> std::result::Result<u64, LeaseError> {
        each!(self, q => q.kick(n))
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
