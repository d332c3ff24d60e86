//! The embedder's signal flag (`dqs_set_signal_flag`, Perl's
//! `PL_sig_pending`): a blocking call that finds it set before a sleep
//! returns `Interrupted` instead of sleeping through the handler's turn,
//! and with a flag registered, waits sleep in slices yet still end at their
//! deadline or on a wake-up. A test binary of its own: the flag is
//! process-wide.

use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use data_queue_shared::lock::{Lock, LockFail, LockGuard};
use data_queue_shared::{ffi, Deadline, IntQueue, StrQueue, Waited};

static FLAG: AtomicI32 = AtomicI32::new(0);

fn register() {
    // SAFETY: FLAG is a static: valid for the whole process.
    unsafe { ffi::dqs_set_signal_flag(FLAG.as_ptr() as *const c_int) };
}

/// Run `f` on a thread and fail if it takes more than 60 s (a wait that
/// slept through the flag would sleep for its whole 600 s deadline).
fn within_a_minute<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()).unwrap());
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the wait did not end")
}

#[test]
fn a_pending_signal_ends_every_kind_of_wait_and_slices_change_nothing_else() {
    register();
    let long = || Deadline::after_secs(600.0);

    // A flag already set: the waits give up at once instead of sleeping.
    FLAG.store(1, Ordering::SeqCst);
    let r = within_a_minute(move || {
        let q = IntQueue::<i64>::anonymous(2).unwrap();
        let empty = q.pop_wait(&long());
        q.push(1);
        q.push(2);
        let full = q.push_wait(3, &long());
        let s = StrQueue::anonymous(2, 0).unwrap();
        let mut out = Vec::new();
        let str_empty = s.pop_wait(false, &mut out, &long());
        // The Str lock held by a live process (this one, on a word of our
        // own), waited for interruptibly.
        let word = Lock::new();
        let tag = AtomicU64::new(0);
        let (_held, _) = LockGuard::acquire(&word);
        let lock = LockGuard::acquire_robust(&word, &tag, long, true).map(|_| ());
        (empty, full, str_empty, lock)
    });
    assert_eq!(r.0, Waited::Interrupted, "Int pop_wait");
    assert_eq!(r.1, Waited::Interrupted, "Int push_wait");
    assert_eq!(r.2, Waited::Interrupted, "Str pop_wait");
    assert_eq!(r.3, Err(LockFail::Interrupted), "Str lock wait");

    // The flag clear: a wait longer than a slice still runs to its
    // deadline, and one woken after several slices gets its item.
    FLAG.store(0, Ordering::SeqCst);
    let (timed_out, waited) = within_a_minute(|| {
        let q = IntQueue::<i32>::anonymous(2).unwrap();
        let t = Instant::now();
        let r = q.pop_wait(&Deadline::after_secs(0.7));
        (r, t.elapsed())
    });
    assert_eq!(timed_out, Waited::TimedOut);
    assert!(
        waited >= Duration::from_millis(690),
        "ended early: {waited:?}"
    );

    let got = within_a_minute(move || {
        let q = IntQueue::<i16>::anonymous(2).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(700));
                q.push(7);
            });
            q.pop_wait(&long())
        })
    });
    assert_eq!(got, Waited::Done(7));
}
