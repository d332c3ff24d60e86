//! `Notifier`: an optional Linux eventfd (eventfd(2)) through which a
//! producer wakes an event loop (EV, AnyEvent, a `select` loop) that waits
//! for items.
//!
//! The eventfd belongs to one process's handle, never to the shared queue:
//! each process either creates its own or adopts one it inherited across
//! `fork` (or received over a socket). Notification is explicit: pushing
//! never writes to the eventfd, so a producer can push a batch and notify
//! once, and a queue nobody watches pays nothing.
//!
//! The fd is kept raw (DESIGN rule 7): Perl code may close it behind our
//! back, so closing ignores `EBADF` and no `OwnedFd` ever asserts
//! ownership. The state is one atomic word so that a handle shared between
//! threads cannot tear it; see [`Notifier`].

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI64, Ordering};

use crate::error::{Error, Result};

/// `state` when no eventfd is set.
const NONE: i64 = -1;
/// Bit of `state` marking an fd this notifier created (and so closes).
const OWNED: i64 = 1 << 32;

/// The eventfd of one handle: none, one it created (closed on drop), or
/// one the caller lent it (never closed).
///
/// # Examples
///
/// ```
/// use data_queue_shared::Notifier;
/// let n = Notifier::new();
/// assert_eq!(n.fd(), None);
/// assert!(!n.notify().unwrap()); // no eventfd: nothing to signal
/// let fd = n.eventfd().unwrap();
/// assert_eq!(n.eventfd().unwrap(), fd); // created once
/// assert!(n.notify().unwrap());
/// assert!(n.notify().unwrap());
/// assert_eq!(n.consume().unwrap(), Some(2));
/// assert_eq!(n.consume().unwrap(), Some(0)); // nothing pending
/// ```
#[derive(Debug)]
pub struct Notifier {
    /// `NONE`, or the fd in the low 32 bits plus `OWNED` when we created
    /// it. One word, so the fd and its ownership always change together.
    state: AtomicI64,
}

impl Default for Notifier {
    fn default() -> Self {
        Self::new()
    }
}

fn fd_of(state: i64) -> Option<RawFd> {
    (state >= 0).then_some((state & 0xffff_ffff) as RawFd)
}

fn close_quietly(fd: RawFd) {
    // SAFETY: closing a raw fd has no memory-safety requirements; EBADF
    // (the user closed it from Perl already) is ignored on purpose.
    unsafe { libc::close(fd) };
}

impl Notifier {
    /// A notifier without an eventfd.
    pub const fn new() -> Self {
        Notifier {
            state: AtomicI64::new(NONE),
        }
    }

    /// The eventfd, if one is set.
    pub fn fd(&self) -> Option<RawFd> {
        fd_of(self.state.load(Ordering::Acquire))
    }

    /// The eventfd, creating it (non-blocking, close-on-exec, counter 0)
    /// when none is set yet. Calling it again returns the same fd; so does
    /// calling it after [`set_fd`](Self::set_fd).
    ///
    /// # Errors
    /// `Error::Io` when `eventfd(2)` fails (for example `EMFILE`).
    ///
    /// # Examples
    ///
    /// See [`Notifier`].
    pub fn eventfd(&self) -> Result<RawFd> {
        if let Some(fd) = self.fd() {
            return Ok(fd);
        }
        // SAFETY: plain system call with constant flags.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::last_os("eventfd"));
        }
        // SYNC POINT: the Release half of the install pairs with the
        // Acquire loads in `fd`, `notify` and `consume` of other threads.
        match self.state.compare_exchange(
            NONE,
            i64::from(fd) | OWNED,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(fd),
            Err(current) => {
                // Another thread installed one first: use that one.
                close_quietly(fd);
                Ok(fd_of(current).unwrap_or(fd))
            }
        }
    }

    /// Use `fd` (for example an eventfd inherited across `fork`) as given.
    /// The notifier never closes it. An eventfd this notifier created
    /// before is closed, unless `fd` is that same fd, which then stays
    /// as it was. `-1` (what [`Notifier::fd`] stands for with `None`, and
    /// the C API's `dqs_eventfd_fileno` returns) turns notification off:
    /// the notifier forgets its eventfd (closing it if it created it),
    /// as the C implementation's `eventfd_set(-1)` did.
    ///
    /// # Errors
    /// `Error::InvalidArgument` for a negative fd other than `-1`;
    /// `Error::Io` (`EBADF`) when `fd` is not open.
    ///
    /// # Examples
    ///
    /// ```
    /// use data_queue_shared::Notifier;
    /// // One eventfd shared by two notifiers, as a parent's and a forked
    /// // child's handle would share an inherited one.
    /// let owner = Notifier::new();
    /// let fd = owner.eventfd()?;
    /// let lent = Notifier::new();
    /// lent.set_fd(fd)?;
    /// assert_eq!(lent.eventfd()?, fd); // used as given, never replaced
    /// assert!(lent.notify()?);
    /// assert_eq!(owner.consume()?, Some(1));
    /// lent.set_fd(-1)?; // off: lent no longer notifies
    /// assert!(!lent.notify()?);
    /// lent.set_fd(fd)?;
    /// drop(lent); // a lent fd is not closed: the owner's still works
    /// assert!(owner.notify()?);
    /// assert_eq!(owner.consume()?, Some(1));
    /// assert!(Notifier::new().set_fd(-2).is_err());
    /// # Ok::<(), data_queue_shared::Error>(())
    /// ```
    pub fn set_fd(&self, fd: RawFd) -> Result<()> {
        if fd < -1 {
            return Err(Error::InvalidArgument(format!(
                "fd {fd} is not a valid file descriptor"
            )));
        }
        // SAFETY: F_GETFD only reads the descriptor flags.
        if fd >= 0 && unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            return Err(Error::last_os(format!("fd {fd}")));
        }
        let new = if fd < 0 { NONE } else { i64::from(fd) };
        let mut old = self.state.load(Ordering::Acquire);
        loop {
            if fd_of(old) == fd_of(new) {
                return Ok(());
            }
            match self
                .state
                .compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => old = now,
            }
        }
        if old & OWNED != 0 {
            if let Some(prev) = fd_of(old) {
                close_quietly(prev);
            }
        }
        Ok(())
    }

    /// Add 1 to the eventfd's counter, making it readable for every
    /// process watching it. Returns `false` when no eventfd is set.
    ///
    /// # Errors
    /// `Error::Io` when the write fails: `EBADF` when the fd was closed
    /// behind the notifier's back, `EAGAIN` only when the counter is at
    /// its maximum (it is then readable anyway).
    ///
    /// # Examples
    ///
    /// See [`Notifier`] and [`Notifier::set_fd`].
    pub fn notify(&self) -> Result<bool> {
        let Some(fd) = self.fd() else {
            return Ok(false);
        };
        let one: u64 = 1;
        loop {
            // SAFETY: writes 8 bytes from a live local.
            let n = unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
            if n == 8 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            if n < 0 && e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(short_or(n, e, fd, "write"));
        }
    }

    /// Read and reset the eventfd's counter: `Some(n)` with the number of
    /// notifications since the last call, `Some(0)` when none is pending,
    /// `None` when no eventfd is set. An fd lent with
    /// [`set_fd`](Self::set_fd) that is in blocking mode makes this wait
    /// for a notification; the eventfds [`eventfd`](Self::eventfd) creates
    /// never block.
    ///
    /// # Errors
    /// `Error::Io` when the read fails (`EBADF`: the fd was closed behind
    /// the notifier's back).
    ///
    /// # Examples
    ///
    /// See [`Notifier`] and [`Notifier::set_fd`].
    pub fn consume(&self) -> Result<Option<u64>> {
        let Some(fd) = self.fd() else {
            return Ok(None);
        };
        let mut count: u64 = 0;
        loop {
            // SAFETY: reads at most 8 bytes into a live local.
            let n = unsafe { libc::read(fd, (&mut count as *mut u64).cast(), 8) };
            if n == 8 {
                return Ok(Some(count));
            }
            let e = io::Error::last_os_error();
            if n < 0 {
                match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => return Ok(Some(0)),
                    _ => {}
                }
            }
            return Err(short_or(n, e, fd, "read"));
        }
    }
}

/// The error for a failed (n < 0) or short eventfd transfer: an eventfd
/// moves exactly 8 bytes, so a short one means `fd` is something else.
fn short_or(n: isize, e: io::Error, fd: RawFd, what: &str) -> Error {
    let e = if n < 0 {
        e
    } else {
        io::Error::from_raw_os_error(libc::EINVAL)
    };
    Error::io(format!("eventfd {what} on fd {fd}"), e)
}

impl Drop for Notifier {
    fn drop(&mut self) {
        let s = *self.state.get_mut();
        if s & OWNED != 0 {
            if let Some(fd) = fd_of(s) {
                if still_an_eventfd(fd) {
                    close_quietly(fd);
                }
            }
        }
    }
}

/// Whether `fd` is (still) an eventfd. Perl code may have closed ours and
/// the number been reused for another file, which must then stay open.
/// Where `/proc` is not mounted, any open fd counts.
fn still_an_eventfd(fd: RawFd) -> bool {
    // SAFETY: F_GETFD only reads the descriptor flags.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
        return false;
    }
    match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
        Ok(target) => target.as_os_str() == "anon_inode:[eventfd]",
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests;
