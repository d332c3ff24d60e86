//! Where a queue's memory comes from: a file (create or attach), an
//! anonymous shared mapping, or a memfd. The header check done once at
//! attach lives beside it, in `validate.rs`.
//!
//! A file is created with `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`, sized,
//! its blocks reserved with `posix_fallocate` (so a full filesystem gives
//! ENOSPC now instead of SIGBUS later), initialised under `flock`, and its
//! magic number written last. Attaching validates every header field against
//! the file size with checked arithmetic and copies the geometry into the
//! private handle; nothing read from the mapping afterwards is trusted to
//! size or index anything without masking.
//!
//! Queues create and attach their regions themselves; what is public here
//! is the [`Region`] a queue hands out for inspection, the header check
//! ([`validate_header`]) and [`unlink`].

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use crate::error::{Error, Result};
use crate::layout::{
    normalize_capacity, Geometry, Header, Variant, DEFAULT_ARENA_PER_SLOT, FORMAT_VERSION,
    HEADER_SIZE, LEASE_HEAD_MAX_DELIVERIES, MAGIC, MAX_ARENA, MAX_CAPACITY, MIN_ARENA,
};
use crate::testpoint::{self, Point};

mod validate;

pub use validate::{c_impl_format, validate_header, C_IMPL_MAGIC};
pub(crate) use validate::{incompatible, small_file_error};
use validate::{read_header_bytes, u64_at};

/// What the caller asks for when creating (ignored fields are read back from
/// an existing file's header instead).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    /// Variant to create or expect.
    pub variant: Variant,
    /// Requested capacity (rounded up to a power of two).
    pub capacity: u64,
    /// Requested arena bytes for Str (0 = default); ignored otherwise.
    pub arena: u64,
    /// File mode for a newly created file.
    pub mode: u32,
}

impl Request {
    /// Validate and normalise into the geometry to create.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a capacity outside `1 ..= 2^30`, a
    /// Str arena above 4 GiB, or a size that overflows.
    pub fn geometry(&self) -> Result<Geometry> {
        let cap = normalize_capacity(self.capacity).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "capacity {} is out of range (1 .. {})",
                self.capacity, MAX_CAPACITY
            ))
        })?;
        let arena = if self.variant == Variant::Str {
            let a = if self.arena == 0 {
                cap.saturating_mul(DEFAULT_ARENA_PER_SLOT)
            } else {
                self.arena
            };
            let a = a.max(MIN_ARENA);
            if a > MAX_ARENA {
                return Err(Error::InvalidArgument(format!(
                    "arena size {a} exceeds the maximum of {MAX_ARENA} bytes"
                )));
            }
            a
        } else {
            0
        };
        // HOOK(lease): the lease table's size comes from this thread's
        // create options (see `create_opts`).
        let (_, dead) = crate::create_opts::work_sizes()?;
        let (leases, lease_bytes) =
            crate::create_opts::create_sizes(self.variant, cap, arena, dead)?;
        let dead = if leases == 0 { 0 } else { dead };
        Geometry::compute_full(self.variant, cap, arena, leases, lease_bytes, dead).ok_or_else(
            || Error::InvalidArgument(format!("capacity {cap} with arena {arena} is too large")),
        )
    }
}

/// How the region is backed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// A named file.
    File,
    /// `MAP_SHARED|MAP_ANONYMOUS`: shared with forked children only.
    Anonymous,
    /// A memfd (created here, or received as an fd).
    Fd,
}

enum Map {
    Raw(memmap2::MmapRaw),
    Anon { ptr: *mut u8, len: usize },
}

/// A mapped, validated queue region: the memory of one queue handle.
///
/// The queues create and attach their regions; [`IntQueue::region`],
/// [`StrQueue::region`] and [`AnyQueue::region`](crate::AnyQueue::region)
/// hand it out to inspect the geometry and the backing, or (tools, tests)
/// to read the raw header.
///
/// [`IntQueue::region`]: crate::IntQueue::region
/// [`StrQueue::region`]: crate::StrQueue::region
pub struct Region {
    base: *mut u8,
    map: Map,
    geo: Geometry,
    backing: Backing,
    path: Option<CString>,
    fd: libc::c_int,
    /// `(st_dev, st_ino)` of `fd` when it was opened: Perl code may close
    /// the fd and the number be reused for another file, which drop must
    /// then leave alone.
    fd_ident: (u64, u64),
}

// SAFETY: the region is plain shared memory accessed only through atomics
// (header, slots) or under the Str lock (arena); the raw pointer is valid for
// the life of `map`, which the region owns.
unsafe impl Send for Region {}
// SAFETY: as above; no method hands out non-atomic mutable access.
unsafe impl Sync for Region {}

impl Drop for Region {
    fn drop(&mut self) {
        if let Map::Anon { ptr, len } = self.map {
            // SAFETY: `ptr`/`len` are exactly what mmap returned; nothing
            // borrows the region any more.
            unsafe { libc::munmap(ptr.cast(), len) };
        }
        // The user may have closed it from Perl already (then it is not
        // ours any more, whatever now has that number).
        if self.fd >= 0 && ident(self.fd) == Some(self.fd_ident) {
            // SAFETY: closing an integer fd has no memory-safety effect.
            unsafe { libc::close(self.fd) };
        }
    }
}

struct Fd(libc::c_int);
impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this fd.
        unsafe { libc::close(self.0) };
    }
}

/// An exclusive `flock` held while a file is created or validated.
///
/// It must be released explicitly: the mapping keeps the open file
/// description alive after the fd is closed, and with it the lock, which
/// would block every later open of the same path.
struct FlockGuard(libc::c_int);

impl FlockGuard {
    fn lock(fd: libc::c_int, who: &str) -> Result<Self> {
        // SAFETY: plain syscall on an fd the caller owns.
        while unsafe { libc::flock(fd, libc::LOCK_EX) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(Error::io(format!("{who}: flock"), e));
            }
        }
        Ok(FlockGuard(fd))
    }
}

impl Drop for FlockGuard {
    fn drop(&mut self) {
        // SAFETY: plain syscall; the fd outlives the guard (declared after it).
        unsafe { libc::flock(self.0, libc::LOCK_UN) };
    }
}

fn cpath(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        Error::InvalidArgument(format!("path {:?} contains a NUL byte", path.display()))
    })
}

fn fstat(fd: libc::c_int, who: &str) -> Result<libc::stat> {
    // SAFETY: zeroed stat is a valid out-buffer; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid pointer for the duration of the call.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(Error::last_os(format!("{who}: fstat")));
    }
    Ok(st)
}

/// `(st_dev, st_ino)` of an open fd, or `None` when it is not open.
fn ident(fd: libc::c_int) -> Option<(u64, u64)> {
    // SAFETY: zeroed stat is a valid out-buffer; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid pointer for the duration of the call.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

impl Region {
    fn map_fd(fd: libc::c_int, len: u64, who: &str) -> Result<(Map, *mut u8)> {
        let len = usize::try_from(len)
            .map_err(|_| Error::InvalidArgument(format!("{who}: size {len} does not fit")))?;
        let raw = memmap2::MmapOptions::new()
            .len(len)
            .map_raw(fd)
            .map_err(|e| Error::io(format!("{who}: mmap"), e))?;
        let p = raw.as_mut_ptr();
        Ok((Map::Raw(raw), p))
    }

    fn map_anon(len: u64) -> Result<(Map, *mut u8)> {
        let len = usize::try_from(len)
            .map_err(|_| Error::InvalidArgument(format!("size {len} does not fit")))?;
        // memmap2's anonymous maps are MAP_PRIVATE; a queue shared with
        // forked children needs MAP_SHARED, so this one is mapped directly.
        // SAFETY: a fresh anonymous mapping aliases nothing.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::last_os("mmap anonymous"));
        }
        Ok((Map::Anon { ptr: p.cast(), len }, p.cast()))
    }

    /// The header.
    #[inline(always)]
    pub fn header(&self) -> &Header {
        // SAFETY: the mapping is at least HEADER_SIZE bytes (validated) and
        // page aligned; Header is repr(C) of atomics and plain integers.
        unsafe { &*(self.base as *const Header) }
    }

    /// Pointer to byte `off` of the region.
    ///
    /// # Safety
    /// `off` must be within the validated `total_size`.
    #[inline(always)]
    pub unsafe fn at(&self, off: u64) -> *mut u8 {
        // SAFETY: the caller keeps `off` inside the mapping.
        unsafe { self.base.add(off as usize) }
    }

    /// The geometry copied at attach.
    #[inline(always)]
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// How the region is backed.
    pub fn backing(&self) -> Backing {
        self.backing
    }

    /// The file path, for file-backed regions.
    pub fn path(&self) -> Option<&CStr> {
        self.path.as_deref()
    }

    /// The backing fd for memfd / fd-attached regions, else -1.
    pub fn fd(&self) -> libc::c_int {
        self.fd
    }

    /// Remove the backing file.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for anonymous and memfd regions; the unlink
    /// error otherwise.
    pub fn unlink(&self) -> Result<()> {
        match (self.backing, self.path.as_deref()) {
            (Backing::File, Some(p)) => unlink(&path_buf(p)),
            _ => Err(Error::Unsupported("cannot unlink anonymous or memfd queue")),
        }
    }

    /// Bytes mapped.
    pub fn mapped_len(&self) -> u64 {
        self.geo.total_size
    }

    /// `msync(MS_SYNC)` the whole mapping (nothing to do for an anonymous
    /// one).
    ///
    /// # Errors
    /// [`Error::Io`] when msync fails.
    pub fn sync(&self) -> Result<()> {
        match &self.map {
            Map::Raw(m) => m.flush().map_err(|e| Error::io("msync", e)),
            Map::Anon { .. } => Ok(()),
        }
    }

    fn finish(
        map: Map,
        base: *mut u8,
        geo: Geometry,
        backing: Backing,
        path: Option<CString>,
        fd: libc::c_int,
    ) -> Region {
        let fd_ident = if fd >= 0 {
            ident(fd).unwrap_or((0, 0))
        } else {
            (0, 0)
        };
        Region {
            base,
            map,
            geo,
            backing,
            path,
            fd,
            fd_ident,
        }
    }

    /// Write a fresh header; `init_body` sets the variant's own header
    /// fields (the rest of a new mapping is zero already); then commit
    /// the magic number (Release) so attachers see a complete queue.
    fn initialise(&self, init_body: &dyn Fn(&Region)) {
        let g = self.geo;
        // SAFETY: nobody else uses the region yet (we hold the flock, or it
        // is brand new); plain writes to the geometry line are fine.
        unsafe {
            let h = self.base as *mut Header;
            (*h).version = FORMAT_VERSION;
            (*h).variant = g.variant as u32;
            (*h).capacity = g.capacity;
            (*h).slot_size = g.variant.slot_size() as u32;
            (*h).header_size = HEADER_SIZE as u32;
            (*h).slots_off = HEADER_SIZE as u64;
            (*h).arena_off = g.arena_off;
            (*h).arena_cap = g.arena_cap;
            (*h).total_size = g.total_size;
            (*h).max_leases = g.max_leases;
            (*h).lease_off = g.lease_off;
            (*h).lease_bytes = g.lease_bytes;
            (*h).max_dead = g.max_dead;
        }
        // HOOK(work): the create option `max_deliveries`, a word of the
        // lease table's head (validated by `geometry`; new memory is zero,
        // so a 0 is not written and the page stays untouched).
        let d = crate::create_opts::work_sizes().map_or(0, |w| w.0);
        if g.max_leases != 0 && d != 0 {
            // SAFETY: the head lies inside the mapping at `lease_off`
            // (the geometry), 8-aligned; nobody else uses the region yet.
            unsafe {
                (self
                    .base
                    .add((g.lease_off + LEASE_HEAD_MAX_DELIVERIES) as usize)
                    as *mut u64)
                    .write(d);
            }
        }
        init_body(self);
        if self.backing == Backing::File {
            testpoint::at(Point::CreateBeforeMagic);
        }
        // SYNC POINT: attachers acquire the magic and then see the whole
        // initialised header and body.
        self.header().magic.store(MAGIC, Ordering::Release);
    }

    /// Create the file at `path`, or attach to the queue already there.
    ///
    /// An existing empty or interrupted-create file is initialised only
    /// when the effective uid owns it, and gets `req.mode` first.
    ///
    /// # Errors
    /// As [`Request::geometry`]; [`Error::Io`] when the file cannot be
    /// opened (a symlink is refused), locked, sized, reserved or mapped,
    /// and (`EPERM`) for an empty or interrupted-create file another uid
    /// owns; [`Error::InvalidArgument`] for a path with a NUL byte;
    /// [`Error::Incompatible`] for something that is not a regular file,
    /// another variant, format version, a file of the C implementation, or
    /// a damaged or truncated header; [`Error::TooSmall`] for a file
    /// shorter than a header; [`Error::IncompleteCreate`] for a file an
    /// interrupted create left that is not all zero or not of the size to
    /// create.
    pub(crate) fn open_path(
        path: &Path,
        req: &Request,
        init_body: &dyn Fn(&Region),
    ) -> Result<Region> {
        let who = path.display().to_string();
        let c = cpath(path)?;
        let want = req.geometry()?;
        let base_flags = libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        let mode = (req.mode & 0o7777) as libc::c_uint;
        // SAFETY: `c` is a valid NUL-terminated path.
        let mut raw =
            unsafe { libc::open(c.as_ptr(), base_flags | libc::O_CREAT | libc::O_EXCL, mode) };
        let created = raw >= 0;
        if !created {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(open_error(&who, e));
            }
            // SAFETY: as above.
            raw = unsafe { libc::open(c.as_ptr(), base_flags) };
            if raw < 0 {
                let e = std::io::Error::last_os_error();
                let refused = matches!(
                    e.raw_os_error(),
                    Some(libc::EACCES | libc::EPERM | libc::EROFS | libc::ETXTBSY)
                );
                if refused {
                    if let Some(not_queue) = not_a_queue_read_only(&c, req.variant, &who) {
                        return Err(not_queue);
                    }
                }
                return Err(open_error(&who, e));
            }
        }
        let fd = Fd(raw);
        if created {
            // The mode is applied exactly, whatever the umask.
            set_mode(fd.0, mode, &who)?;
        }
        let _init_lock = FlockGuard::lock(fd.0, &who)?;
        let st = fstat(fd.0, &who)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(incompatible(&who, "not a regular file"));
        }
        let size = st.st_size as u64;
        if size == 0 {
            // New, or an empty file somebody made for us: initialise it,
            // but only if it is ours (see `check_owner`).
            if !created {
                if has_content(fd.0) {
                    return Err(incompatible(&who, SIZE_0_WITH_CONTENT));
                }
                check_owner(&st, &who)?;
                set_mode(fd.0, mode, &who)?;
            }
            reserve(fd.0, want.total_size, &who)?;
            testpoint::at(Point::CreateAfterReserve);
            let (map, base) = Self::map_fd(fd.0, want.total_size, &who)?;
            let r = Self::finish(map, base, want, Backing::File, Some(c), -1);
            r.initialise(init_body);
            return Ok(r);
        }
        if size < HEADER_SIZE as u64 {
            return Err(small_file_error(fd.0, size, &who));
        }
        let hdr = read_header_bytes(fd.0, &who)?;
        if u64_at(&hdr, 0) == 0 {
            // Never committed: an interrupted create (see CRASH SAFETY).
            // Only a file of exactly the size to create, owned by us and
            // entirely zero is taken over; its size is checked before it is
            // scanned, so a huge file is not. The scan reads with pread, not
            // through a mapping: a read fault on a hole of a full tmpfs is a
            // SIGBUS. The owner is checked before anything is written (the
            // block reserve included).
            if size == want.total_size && all_zero(fd.0, size, &who)? {
                check_owner(&st, &who)?;
                reserve_existing(fd.0, size, &who)?;
                set_mode(fd.0, mode, &who)?;
                let (map, base) = Self::map_fd(fd.0, size, &who)?;
                let r = Self::finish(map, base, want, Backing::File, Some(c), -1);
                r.initialise(init_body);
                return Ok(r);
            }
            return Err(Error::IncompleteCreate(who));
        }
        let geo = validate_header(&hdr, req.variant, size, &who)?;
        reserve_existing(fd.0, geo.total_size, &who)?;
        let (map, base) = Self::map_fd(fd.0, geo.total_size, &who)?;
        Ok(Self::finish(map, base, geo, Backing::File, Some(c), -1))
    }

    /// A queue in anonymous shared memory, inherited by forked children.
    ///
    /// # Errors
    /// As [`Request::geometry`]; [`Error::Io`] when mmap fails.
    pub(crate) fn anonymous(req: &Request, init_body: &dyn Fn(&Region)) -> Result<Region> {
        let geo = req.geometry()?;
        let (map, base) = Self::map_anon(geo.total_size)?;
        let r = Self::finish(map, base, geo, Backing::Anonymous, None, -1);
        r.initialise(init_body);
        Ok(r)
    }

    /// A queue in a new memfd (close-on-exec, sealed against resizing).
    ///
    /// # Errors
    /// As [`Request::geometry`]; [`Error::Io`] when memfd_create, sizing,
    /// sealing or mmap fails.
    pub(crate) fn memfd(name: &CStr, req: &Request, init_body: &dyn Fn(&Region)) -> Result<Region> {
        let geo = req.geometry()?;
        let who = format!("memfd {}", name.to_string_lossy());
        // SAFETY: `name` is NUL-terminated.
        let raw = unsafe {
            libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING)
        };
        if raw < 0 {
            return Err(Error::last_os(format!("{who}: memfd_create")));
        }
        let fd = Fd(raw);
        reserve(fd.0, geo.total_size, &who)?;
        // SAFETY: plain fcntl on our fd.
        if unsafe {
            libc::fcntl(
                fd.0,
                libc::F_ADD_SEALS,
                libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL,
            )
        } != 0
        {
            return Err(Error::last_os(format!("{who}: seal")));
        }
        let (map, base) = Self::map_fd(fd.0, geo.total_size, &who)?;
        let raw = fd.0;
        std::mem::forget(fd);
        let r = Self::finish(map, base, geo, Backing::Fd, None, raw);
        r.initialise(init_body);
        Ok(r)
    }

    /// Attach to the queue behind `fd` (a memfd or a queue file). The fd is
    /// duplicated (`F_DUPFD_CLOEXEC`); the caller keeps its own.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a negative fd; [`Error::Incompatible`]
    /// for one that is not a memfd or regular file; [`Error::Io`] for a
    /// closed fd (or when dup,
    /// fstat or mmap fail); [`Error::TooSmall`] when it cannot hold a
    /// header; [`Error::Incompatible`] as for [`Region::open_path`].
    pub(crate) fn from_fd(fd: libc::c_int, want: Variant) -> Result<Region> {
        let who = format!("fd {fd}");
        if fd < 0 {
            return Err(Error::InvalidArgument(format!(
                "{who}: not a valid file descriptor"
            )));
        }
        // SAFETY: F_DUPFD_CLOEXEC on any integer is memory-safe; EBADF is
        // reported, not undefined.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return Err(Error::last_os(format!("{who}: dup")));
        }
        let own = Fd(dup);
        let st = fstat(own.0, &who)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(incompatible(&who, &not_a_file(&st)));
        }
        let size = st.st_size as u64;
        if size < HEADER_SIZE as u64 {
            return Err(small_file_error(own.0, size, &who));
        }
        let hdr = read_header_bytes(own.0, &who)?;
        let geo = validate_header(&hdr, want, size, &who)?;
        reserve_existing(own.0, geo.total_size, &who)?;
        let (map, base) = Self::map_fd(own.0, geo.total_size, &who)?;
        std::mem::forget(own);
        Ok(Self::finish(map, base, geo, Backing::Fd, None, dup))
    }
}

/// Whether the first `len` bytes of the file are all zero (read with
/// pread; a file shorter than `len` is not).
fn all_zero(fd: libc::c_int, len: u64, who: &str) -> Result<bool> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut off = 0u64;
    while off < len {
        let want = (len - off).min(buf.len() as u64) as usize;
        // SAFETY: reads at most `want <= buf.len()` bytes into `buf`.
        let n = unsafe { libc::pread(fd, buf.as_mut_ptr().cast(), want, off as libc::off_t) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(Error::io(format!("{who}: read"), e));
        }
        if n == 0 {
            return Ok(false);
        }
        if buf[..n as usize].iter().any(|&b| b != 0) {
            return Ok(false);
        }
        off += n as u64;
    }
    Ok(true)
}

/// Why a file that reports a size of 0 yet reads back bytes is not taken
/// as an empty file to initialise.
const SIZE_0_WITH_CONTENT: &str =
    "its size is 0 bytes, yet reading it gives content: a /proc or /sys file, not a queue";

/// Whether reading `fd` at offset 0 gives at least one byte (a file whose
/// size says 0 but whose content is made when read, as in /proc and /sys).
fn has_content(fd: libc::c_int) -> bool {
    let mut b = [0u8; 1];
    loop {
        // SAFETY: reads at most 1 byte into `b`.
        let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), 1, 0) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return n > 0;
    }
}

/// When an existing file cannot be opened for writing: whether a read-only
/// look shows it is no queue (of this variant), so that the error says so
/// rather than only why it could not be opened. `None` when it cannot be
/// read either, or may well be a queue; the open error stands then.
fn not_a_queue_read_only(c: &CStr, variant: Variant, who: &str) -> Option<Error> {
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    // SAFETY: `c` is a valid NUL-terminated path.
    let raw = unsafe { libc::open(c.as_ptr(), flags) };
    if raw < 0 {
        return None;
    }
    let fd = Fd(raw);
    let st = fstat(fd.0, who).ok()?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Some(incompatible(who, "not a regular file"));
    }
    let size = st.st_size as u64;
    if size == 0 {
        return has_content(fd.0).then(|| incompatible(who, SIZE_0_WITH_CONTENT));
    }
    if size < HEADER_SIZE as u64 {
        return Some(small_file_error(fd.0, size, who));
    }
    let hdr = read_header_bytes(fd.0, who).ok()?;
    if u64_at(&hdr, 0) == 0 {
        return None;
    }
    match validate_header(&hdr, variant, size, who) {
        Err(e @ (Error::Incompatible { .. } | Error::TooSmall(_))) => Some(e),
        _ => None,
    }
}

/// Why an fd that is not a regular file cannot be a queue.
fn not_a_file(st: &libc::stat) -> String {
    let what = match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => "a directory",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFIFO => "a pipe or FIFO",
        libc::S_IFSOCK => "a socket",
        _ => "a special file",
    };
    format!("{what}, not a memfd or regular file")
}

/// An existing file is initialised (as a new queue) only when the
/// effective uid owns it. Whoever owns a file can read and write it and
/// change its mode whenever they like: a queue made in a file planted by
/// somebody else would be theirs to read and forge. A queue file that is
/// already initialised is attached whoever owns it (that is how users
/// share queues); see SECURITY in the manual.
fn check_owner(st: &libc::stat, who: &str) -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if st.st_uid == me {
        return Ok(());
    }
    Err(Error::io(
        format!(
            "{who}: refusing to initialize file not owned by us (owner uid {}, we are uid {me})",
            st.st_uid
        ),
        std::io::Error::from_raw_os_error(libc::EPERM),
    ))
}

/// Give a file we are about to initialise the requested mode, exactly.
fn set_mode(fd: libc::c_int, mode: libc::c_uint, who: &str) -> Result<()> {
    // SAFETY: plain syscall on an fd the caller owns.
    if unsafe { libc::fchmod(fd, mode as libc::mode_t) } != 0 {
        return Err(Error::last_os(format!("{who}: fchmod {mode:04o}")));
    }
    Ok(())
}

fn open_error(who: &str, e: std::io::Error) -> Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) => return Error::io(format!("{who}: refusing to follow a symlink"), e),
        Some(libc::EISDIR) => return incompatible(who, "a directory, not a regular file"),
        _ => {}
    }
    Error::io(format!("{who}: open"), e)
}

/// Size the file and reserve its blocks, so a full filesystem fails here
/// (ENOSPC) rather than with SIGBUS on first touch.
fn reserve(fd: libc::c_int, len: u64, who: &str) -> Result<()> {
    let off = libc::off_t::try_from(len)
        .map_err(|_| Error::InvalidArgument(format!("{who}: size {len} is too large")))?;
    // SAFETY: plain syscalls on our fd.
    if unsafe { libc::ftruncate(fd, off) } != 0 {
        return Err(Error::last_os(format!("{who}: resize to {len} bytes")));
    }
    // SAFETY: as above.
    let rc = unsafe { libc::posix_fallocate(fd, 0, off) };
    if rc != 0 && rc != libc::EOPNOTSUPP && rc != libc::EINVAL {
        // Leave no half-made queue behind: back to zero length so that a
        // later attempt starts over.
        // SAFETY: as above.
        unsafe { libc::ftruncate(fd, 0) };
        return Err(Error::io(
            format!("{who}: reserve {len} bytes"),
            std::io::Error::from_raw_os_error(rc),
        ));
    }
    Ok(())
}

/// Reserve the blocks of a file that already holds (or is becoming) a
/// queue, so that a sparse one (copied with holes, or sized with truncate)
/// on a full filesystem fails here with ENOSPC rather than with SIGBUS on
/// first touch. This calls fallocate(2) itself: glibc's posix_fallocate
/// emulation, where the filesystem lacks fallocate, writes into the file,
/// which is not safe on a queue others may be using; such filesystems are
/// left as they are, and so is an fd fallocate refuses for any reason but
/// a lack of space (mmap reports what matters).
fn reserve_existing(fd: libc::c_int, len: u64, who: &str) -> Result<()> {
    let Ok(off) = libc::off_t::try_from(len) else {
        return Ok(());
    };
    loop {
        // SAFETY: plain syscall; mode 0 within the file's size allocates
        // blocks for holes and changes no byte and not the size.
        if unsafe { libc::fallocate(fd, 0, 0, off) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ENOSPC) | Some(libc::EDQUOT) | Some(libc::EFBIG) => {
                return Err(Error::io(format!("{who}: reserve {len} bytes"), e));
            }
            _ => return Ok(()),
        }
    }
}

/// Remove a queue file. It is not opened or checked first: any file at
/// `path` is removed (`dqs unlink` probes it first). Handles already open keep
/// working; an `open` of the path afterwards creates a new, separate queue.
///
/// # Errors
/// [`Error::Io`] when unlink fails (e.g. `ENOENT`);
/// [`Error::InvalidArgument`] for a path with a NUL byte.
pub fn unlink(path: &Path) -> Result<()> {
    let c = cpath(path)?;
    // SAFETY: `c` is NUL-terminated.
    if unsafe { libc::unlink(c.as_ptr()) } != 0 {
        return Err(Error::last_os(format!("{}: unlink", path.display())));
    }
    Ok(())
}

/// Path as a `PathBuf` (for the safe API).
fn path_buf(c: &CStr) -> PathBuf {
    PathBuf::from(std::ffi::OsStr::from_bytes(c.to_bytes()))
}
