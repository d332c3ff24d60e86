//! Wake-ups checked by count and by waits without end, not by time.
//!
//! Waiter threads block with `Deadline::FOREVER`, so a lost wake-up is a
//! hang, which the watchdog turns into a failure of the whole binary. Before
//! each waking operation every waiter is asleep in the kernel on a futex
//! (its `/proc/self/task/<tid>/wchan` names a futex function), so the
//! process's count of sleepers woken by `FUTEX_WAKE` (`dqs_futex_woken`)
//! must move by at least as many as the operation had to wake. The count is
//! process-wide, and tests of this binary run in parallel, so it is only
//! ever checked as "at least".

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use data_queue_shared::{ffi, Deadline, IntQueue, StrQueue, Waited};

/// Run `f` and exit the whole test binary, failing, if it has not
/// returned after 60 s (it waits without end for wake-ups).
fn watchdog<R>(what: &str, f: impl FnOnce() -> R) -> R {
    let (done, rx) = mpsc::channel::<()>();
    let what = what.to_string();
    let dog = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            eprintln!("WATCHDOG: {what}: still blocked after 60 s (a lost wake-up?)");
            std::process::exit(101);
        }
    });
    let r = f();
    done.send(()).unwrap();
    dog.join().unwrap();
    r
}

fn gettid() -> i64 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// Whether thread `tid` of this process sleeps on a futex.
fn asleep(tid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/wchan"))
        .is_ok_and(|w| w.contains("futex"))
}

/// Start `n` threads that each run `f` (a blocking call that must
/// succeed); return once every one of them is asleep on a futex.
fn sleepers<F>(n: usize, f: F) -> Vec<std::thread::JoinHandle<()>>
where
    F: Fn() + Send + Sync + 'static,
{
    let f = Arc::new(f);
    let (tids, rx) = mpsc::channel();
    let hs = (0..n)
        .map(|_| {
            let (f, tids) = (f.clone(), tids.clone());
            std::thread::spawn(move || {
                tids.send(gettid()).unwrap();
                f();
            })
        })
        .collect();
    let tids: Vec<i64> = (0..n).map(|_| rx.recv().unwrap()).collect();
    let t0 = Instant::now();
    while !tids.iter().all(|&t| asleep(t)) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the waiters never went to sleep"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    hs
}

/// Run `op`, which must wake at least `want` sleepers (by count), then join
/// every waiter (each blocked without end: a missed one hangs).
fn wakes(what: &str, want: u64, hs: Vec<std::thread::JoinHandle<()>>, op: impl FnOnce()) {
    watchdog(what, || {
        let w0 = ffi::dqs_futex_woken();
        op();
        let woken = ffi::dqs_futex_woken() - w0;
        assert!(woken >= want, "{what}: woke {woken} sleepers, want {want}");
        for h in hs {
            h.join().unwrap();
        }
    });
}

#[test]
fn int_push_batch_and_clear_wake_every_sleeper_they_must() {
    let q = Arc::new(IntQueue::<i64>::anonymous(4).unwrap());
    let consumer = {
        let q = q.clone();
        move || assert!(matches!(q.pop_wait(&Deadline::FOREVER), Waited::Done(_)))
    };
    let producer = {
        let q = q.clone();
        move || assert_eq!(q.push_wait(9, &Deadline::FOREVER), Waited::Done(()))
    };

    let hs = sleepers(1, consumer.clone());
    wakes("int push", 1, hs, || assert!(q.push(1)));

    let hs = sleepers(3, consumer);
    wakes("int push_multi of 3", 3, hs, || {
        assert_eq!(q.push_multi([1, 2, 3]), 3)
    });
    assert!(q.is_empty());

    assert_eq!(q.push_multi([1, 2, 3, 4]), 4);
    let hs = sleepers(3, producer.clone());
    wakes("int pop_multi of 3", 3, hs, || {
        assert_eq!(q.pop_multi(&mut [0; 3]), 3)
    });
    assert_eq!(q.len(), 4);

    let hs = sleepers(3, producer);
    wakes("int clear", 3, hs, || {
        q.clear();
    });
    assert_eq!(q.len(), 3);
}

#[test]
fn str_push_batch_pop_and_clear_wake_every_sleeper_they_must() {
    let q = Arc::new(StrQueue::anonymous(4, 4096).unwrap());
    let consumer = {
        let q = q.clone();
        move || {
            let mut out = Vec::new();
            assert!(matches!(
                q.pop_wait(false, &mut out, &Deadline::FOREVER),
                Waited::Done(_)
            ));
        }
    };
    let producer = {
        let q = q.clone();
        move || {
            let w = q.push_wait(b"p", false, false, &Deadline::FOREVER);
            assert_eq!(w.unwrap(), Waited::Done(()));
        }
    };

    let hs = sleepers(1, consumer.clone());
    wakes("str push", 1, hs, || assert!(q.push(b"a", false).unwrap()));

    let hs = sleepers(3, consumer);
    let items: [(&[u8], bool); 3] = [(b"x1", false), (b"x2", false), (b"x3", false)];
    wakes("str push_multi of 3", 3, hs, || {
        assert_eq!(q.push_multi(&items).unwrap(), 3)
    });
    assert!(q.is_empty());

    let four: [(&[u8], bool); 4] = [(b"1", false), (b"2", false), (b"3", false), (b"4", false)];
    assert_eq!(q.push_multi(&four).unwrap(), 4);
    let hs = sleepers(1, producer.clone());
    wakes("str pop", 1, hs, || {
        assert!(q.pop(false, &mut Vec::new()).is_some())
    });

    let hs = sleepers(3, producer.clone());
    wakes("str pop_multi of 3", 3, hs, || {
        let (mut out, mut its) = (Vec::new(), Vec::new());
        assert_eq!(q.pop_multi(3, None, &mut out, &mut its), 3);
    });
    assert_eq!(q.len(), 4);

    let hs = sleepers(3, producer);
    wakes("str clear", 3, hs, || {
        q.clear();
    });
    assert_eq!(q.len(), 3);
}
