//! Failures and signals: why a command ends, and the thread that turns a
//! SIGINT, SIGTERM or SIGHUP into a clean stop.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use data_queue_shared::Error;

/// Why a command did not finish with status 0.
#[derive(Debug)]
pub(crate) enum Fail {
    /// Exit 1: empty, full, timed out.
    Soft(String),
    /// Exit 2: usage, missing or bad file, I/O.
    Hard(String),
    /// A terminating signal arrived: die of it.
    Signal(i32),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Hard(e.to_string())
    }
}

impl From<io::Error> for Fail {
    /// A failed write to standard output. A reader that went away
    /// (`dqs pop q -n 100 | head -1`) ends the command as SIGPIPE would,
    /// silently.
    fn from(e: io::Error) -> Fail {
        match SIGNALLED.load(Ordering::Relaxed) {
            0 if e.kind() == io::ErrorKind::BrokenPipe => Fail::Signal(libc::SIGPIPE),
            0 => Fail::Hard(format!("write to standard output: {e}")),
            s => Fail::Signal(s),
        }
    }
}

/// The terminating signal that arrived (0: none yet).
pub(crate) static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// The signals that end a command.
const TERM_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Sent to the main thread to interrupt whatever it is blocked in.
const KICK: libc::c_int = libc::SIGUSR2;

extern "C" fn on_kick(_: libc::c_int) {}

fn term_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set; sigaddset adds valid signals.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in TERM_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Route SIGINT, SIGTERM and SIGHUP to a thread of their own. When one
/// comes, it records it and then keeps interrupting the main thread (a
/// KICK signal whose handler does nothing and is installed without
/// SA_RESTART, so a futex wait, sleep or read returns EINTR) every 20 ms
/// until the main thread has cleaned up and died of the signal. Kicking
/// again closes the window where the signal lands just before a wait
/// starts. A second terminating signal ends the process at once.
pub(crate) fn install_signal_handlers() {
    let set = term_set();
    // SAFETY: plain libc calls with valid arguments; the KICK handler does
    // nothing, which is async-signal-safe.
    let main = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_kick as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = 0;
        libc::sigaction(KICK, &sa, std::ptr::null_mut());
        // Blocked here before the thread starts, so blocked in every thread
        // (the new one inherits the mask) and left to its sigwait.
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::pthread_self()
    };
    std::thread::spawn(move || signal_thread(set, main));
}

fn signal_thread(set: libc::sigset_t, main: libc::pthread_t) {
    let mut sig: libc::c_int = 0;
    // SAFETY: `set` and `sig` are valid for the call.
    while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
    SIGNALLED.store(sig, Ordering::SeqCst);
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 20_000_000,
    };
    loop {
        // SAFETY: `main` is the main thread, alive as long as the process.
        unsafe { libc::pthread_kill(main, KICK) };
        // SAFETY: valid set and timeout; no siginfo wanted.
        let again = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &pause) };
        if again > 0 {
            die_now(again);
        }
    }
}

/// Die of `sig` from the calling thread: default action, unblocked, raised.
fn die_now(sig: libc::c_int) -> ! {
    // SAFETY: plain libc calls; the default action of the terminating
    // signals (and SIGPIPE) ends the process.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::raise(sig);
    }
    std::process::exit(128 + sig);
}

pub(crate) fn check_signal() -> Result<(), Fail> {
    match SIGNALLED.load(Ordering::Relaxed) {
        0 => Ok(()),
        s => Err(Fail::Signal(s)),
    }
}

pub(crate) fn die_of(sig: i32) -> ! {
    if sig != libc::SIGPIPE {
        let _ = io::stdout().flush();
    }
    die_now(sig)
}

/// Sleep `secs`, cut short by a terminating signal.
pub(crate) fn sleep_secs(secs: f64) -> Result<(), Fail> {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    loop {
        check_signal()?;
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        let left = end - now;
        let ts = libc::timespec {
            tv_sec: left.as_secs() as libc::time_t,
            tv_nsec: left.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `ts` is valid; the remainder is not needed.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
    }
}

/// Standard input, read directly (fd 0) so that a terminating signal ends
/// a blocked read instead of being retried away.
pub(crate) struct SigStdin;

impl Read for SigStdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
            if SIGNALLED.load(Ordering::Relaxed) != 0 {
                return Err(io::Error::other("interrupted"));
            }
        }
    }
}
