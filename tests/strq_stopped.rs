//! A consumer stopped (SIGSTOP) holding the front lock of a `StrQueue`,
//! met by a call that needs both locks. The one test of this binary forks,
//! so it has the process to itself (no other test threads at the fork).

use data_queue_shared::{Deadline, StrQueue, Waited};

/// A consumer SIGSTOPped holding the front lock: producers at the back go
/// on (the point of the split), and they still go on while calls that
/// need the front lock too wait for it: a `push_front` (both locks) and a
/// `push_wait` that found no room in the arena (it settles with the front
/// before it sleeps). Both let the back lock go while they wait for the
/// front one (waiting while holding it, as they once did, made every
/// producer behind them time out).
#[test]
fn a_stopped_front_holder_stalls_no_producer_through_a_both_lock_call() {
    // SAFETY: plain alarm; its default action ends the test process if
    // anything below hangs.
    unsafe { libc::alarm(60) };
    let path = std::env::temp_dir().join(format!("dqs-stopped-front-{}.shm", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let q = StrQueue::open(&path, 8, 4096, 0o600).unwrap();
    q.push(b"a", false).unwrap();
    // 3000 of the 4096 arena bytes: no room for a 2000-byte push.
    q.push(&[b'B'; 3000], false).unwrap();
    // SAFETY: the child only opens the queue, pops (stopping itself while
    // it holds the front lock) and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        std::env::set_var("DQS_TEST_KILL_POINT", "str_lock_stop");
        let c = StrQueue::open(&path, 8, 4096, 0o600).unwrap();
        let mut out = Vec::new();
        c.pop(false, &mut out);
        // SAFETY: leave the child without running the parent's exit code.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: our own child; WUNTRACED returns once it has stopped.
    let waited = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
    assert_eq!(waited, pid);
    assert!(
        libc::WIFSTOPPED(status),
        "the child stopped holding the front lock"
    );
    q.set_lock_timeout(Some(0.3));
    let before = q.push(b"b", false).unwrap();
    let front = {
        let path = path.clone();
        std::thread::spawn(move || {
            let q2 = StrQueue::open(&path, 8, 4096, 0o600).unwrap();
            q2.set_lock_timeout(Some(2.0));
            q2.push_front(b"x", false)
        })
    };
    let waiting = {
        let path = path.clone();
        std::thread::spawn(move || {
            let q3 = StrQueue::open(&path, 8, 4096, 0o600).unwrap();
            let d = Deadline::after_secs(2.0);
            q3.push_wait(&[b'C'; 2000], false, false, &d)
        })
    };
    // Let both start waiting for the front lock (if one waits holding the
    // back lock, the push below times out whenever it comes).
    std::thread::sleep(std::time::Duration::from_millis(300));
    let during = q.push(b"c", false).unwrap();
    let front_pushed = front.join().unwrap().unwrap();
    let waited = waiting.join().unwrap().unwrap();
    // SAFETY: our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, &mut status, 0);
    }
    let _ = std::fs::remove_file(&path);
    assert!(before, "the back goes on while the front holder is stopped");
    assert!(
        !front_pushed,
        "the push_front timed out waiting for the stopped front holder"
    );
    assert_ne!(waited, Waited::Done(()), "the push_wait found no room");
    assert!(
        during,
        "a push at the back went on while a push_front and a push_wait waited for the stopped front holder"
    );
}
