//! Unit tests of `Notifier`: eventfds created, lent, closed and refused.

use super::*;
use std::sync::{Mutex, MutexGuard};

// The test harness runs tests on parallel threads, and a closed fd
// number is soon reused. So: these tests run one at a time (no other
// test in the crate makes eventfds, so "an eventfd is open at N" then
// means one of ours), and an fd that is closed on purpose lives at a
// high number, where the lowest-free rule never reuses it.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_eventfd(fd: RawFd) -> bool {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.to_string_lossy().contains("eventfd"))
        .unwrap_or(false)
}

fn new_eventfd() -> RawFd {
    // SAFETY: plain system call.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    assert!(fd >= 0);
    fd
}

/// An eventfd at a number of 700 or more (see above).
fn high_eventfd() -> RawFd {
    let low = new_eventfd();
    // SAFETY: duplicates an open fd.
    let high = unsafe { libc::fcntl(low, libc::F_DUPFD_CLOEXEC, 700) };
    close_quietly(low);
    assert!(high >= 700);
    high
}

#[test]
fn eventfd_is_created_once_nonblocking_and_cloexec() {
    let _g = serial();
    let n = Notifier::new();
    let fd = n.eventfd().unwrap();
    assert_eq!(n.eventfd().unwrap(), fd);
    assert_eq!(n.fd(), Some(fd));
    assert!(is_eventfd(fd));
    // SAFETY: flag queries on an open fd.
    let (fl, fdfl) = unsafe {
        (
            libc::fcntl(fd, libc::F_GETFL),
            libc::fcntl(fd, libc::F_GETFD),
        )
    };
    assert_ne!(fl & libc::O_NONBLOCK, 0);
    assert_ne!(fdfl & libc::FD_CLOEXEC, 0);
}

#[test]
fn notify_without_eventfd_is_a_no_op() {
    let n = Notifier::new();
    assert!(!n.notify().unwrap());
    assert_eq!(n.consume().unwrap(), None);
    assert_eq!(n.fd(), None);
}

#[test]
fn consume_returns_the_count_then_zero() {
    let _g = serial();
    let n = Notifier::new();
    n.eventfd().unwrap();
    for _ in 0..5 {
        assert!(n.notify().unwrap());
    }
    assert_eq!(n.consume().unwrap(), Some(5));
    assert_eq!(n.consume().unwrap(), Some(0));
}

#[test]
fn drop_closes_only_an_eventfd_it_created() {
    let _g = serial();
    let n = Notifier::new();
    let created = n.eventfd().unwrap();
    drop(n);
    assert!(!is_eventfd(created));

    let lent = new_eventfd();
    let n = Notifier::new();
    n.set_fd(lent).unwrap();
    assert_eq!(n.eventfd().unwrap(), lent);
    drop(n);
    assert!(is_eventfd(lent));
    close_quietly(lent);
}

#[test]
fn set_fd_replaces_and_closes_the_created_one() {
    let _g = serial();
    let n = Notifier::new();
    let created = n.eventfd().unwrap();
    let lent = high_eventfd();
    n.set_fd(lent).unwrap();
    assert_eq!(n.fd(), Some(lent));
    assert!(!is_eventfd(created));
    assert!(n.notify().unwrap());
    let other = Notifier::new();
    other.set_fd(lent).unwrap();
    assert_eq!(other.consume().unwrap(), Some(1), "both see one counter");
    drop((n, other));
    assert!(is_eventfd(lent));
    close_quietly(lent);
}

#[test]
fn set_fd_to_its_own_eventfd_keeps_it() {
    let _g = serial();
    let n = Notifier::new();
    let fd = n.eventfd().unwrap();
    n.set_fd(fd).unwrap();
    assert!(is_eventfd(fd));
    drop(n);
    assert!(!is_eventfd(fd), "still owned, so closed on drop");
}

#[test]
fn set_fd_refuses_bad_fds() {
    let _g = serial();
    let n = Notifier::new();
    assert!(matches!(n.set_fd(-2), Err(Error::InvalidArgument(_))));
    let fd = high_eventfd();
    close_quietly(fd);
    let e = n.set_fd(fd).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EBADF));
    assert_eq!(n.fd(), None);
}

#[test]
fn set_fd_minus_one_turns_notification_off() {
    let _g = serial();
    let n = Notifier::new();
    n.set_fd(-1).unwrap(); // nothing to turn off: fine
    assert_eq!(n.fd(), None);
    let fd = n.eventfd().unwrap();
    n.set_fd(-1).unwrap();
    assert_eq!(n.fd(), None);
    assert!(!is_eventfd(fd), "an eventfd it created is closed");
    assert!(!n.notify().unwrap());
    let lent = high_eventfd();
    n.set_fd(lent).unwrap();
    n.set_fd(-1).unwrap();
    assert!(is_eventfd(lent), "a lent one is left open");
    close_quietly(lent);
}

#[test]
fn a_closed_fd_gives_ebadf_not_a_crash() {
    let _g = serial();
    let n = Notifier::new();
    let fd = high_eventfd();
    n.set_fd(fd).unwrap();
    close_quietly(fd);
    assert_eq!(n.notify().unwrap_err().raw_os_error(), Some(libc::EBADF));
    assert_eq!(n.consume().unwrap_err().raw_os_error(), Some(libc::EBADF));

    let owned = Notifier::new();
    let fd = owned.eventfd().unwrap();
    close_quietly(fd);
    drop(owned); // closing it again: EBADF, ignored
}

#[test]
fn a_non_eventfd_short_read_is_an_error() {
    let mut p = [0; 2];
    // SAFETY: pipe2 writes two fds into the array.
    let rc = unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
    assert_eq!(rc, 0);
    // SAFETY: writes one byte from a static.
    assert_eq!(unsafe { libc::write(p[1], b"x".as_ptr().cast(), 1) }, 1);
    let n = Notifier::new();
    n.set_fd(p[0]).unwrap();
    let e = n.consume().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    assert_eq!(n.consume().unwrap(), Some(0), "empty pipe: nothing pending");
    drop(n);
    close_quietly(p[0]);
    close_quietly(p[1]);
}
