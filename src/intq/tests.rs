//! Unit tests of `IntQueue`: batches across chunks and a full ring, a dead
//! waiter's count forgotten, clear counted.

use super::*;

#[test]
fn push_multi_stops_at_full_counts_it_once_and_keeps_order() {
    let q = IntQueue::<i64>::anonymous(8).unwrap();
    assert_eq!(q.push_multi(0..20), 8);
    assert_eq!(q.push_multi([99]), 0);
    let mut out = [0i64; 5];
    assert_eq!(q.pop_multi(&mut out), 5);
    assert_eq!(out, [0, 1, 2, 3, 4]);
    assert_eq!(q.push_slice(&[8, 9, 10, 11, 12, 13]), 5);
    let mut out = [0i64; 16];
    assert_eq!(q.pop_multi(&mut out), 8);
    assert_eq!(out[..8], [5, 6, 7, 8, 9, 10, 11, 12]);
    assert_eq!(q.pop_multi(&mut out), 0);
    assert_eq!(q.pop_multi(&mut []), 0);
    let st = q.stats();
    assert_eq!((st.push_ok, st.pop_ok), (13, 13));
    assert_eq!((st.push_full, st.pop_empty), (3, 1));
}

#[test]
fn push_multi_crosses_its_chunk_size_and_pop_multi_takes_it_all() {
    let q = IntQueue::<i16>::anonymous(1024).unwrap();
    assert_eq!(q.push_multi((0..1000).map(|v| v as i16)), 1000);
    let mut out = vec![0i16; 1500];
    assert_eq!(q.pop_multi(&mut out), 1000);
    assert!(out[..1000].iter().enumerate().all(|(i, &v)| v == i as i16));
    assert_eq!(q.push_multi(std::iter::empty()), 0);
    assert_eq!(q.stats().push_full, 0);
}

#[test]
fn a_dead_waiters_count_is_forgotten_and_live_waiters_are_still_served() {
    use std::sync::Arc;
    let q = Arc::new(IntQueue::<i64>::anonymous(4).unwrap());
    let h = q.region().header();
    // A consumer announced itself and was killed in its sleep.
    h.pop_waiters.fetch_add(1, Ordering::SeqCst);
    let live = {
        let q = q.clone();
        std::thread::spawn(move || q.pop_wait(&Deadline::after_secs(10.0)))
    };
    let t0 = std::time::Instant::now();
    while q.stats().pop_waiters < 2 {
        assert!(t0.elapsed().as_secs() < 10, "live waiter never blocked");
        std::thread::yield_now();
    }
    assert!(q.push(0));
    assert_eq!(live.join().unwrap(), Waited::Done(0));
    assert_eq!(q.stats().pop_waiters, 1, "the dead one");
    // The tally is this queue's own: RESET_AFTER fruitless wakes do it.
    for i in 1..=i64::from(crate::wait::RESET_AFTER) {
        assert!(q.push(i));
        assert_eq!(q.pop(), Some(i));
    }
    assert_eq!(q.stats().pop_waiters, 0, "the dead waiter's count is gone");
    // Waiting still works after the reset.
    let again = {
        let q = q.clone();
        std::thread::spawn(move || q.pop_wait(&Deadline::after_secs(10.0)))
    };
    while q.stats().pop_waiters < 1 {
        std::thread::yield_now();
    }
    assert!(q.push(42));
    assert_eq!(again.join().unwrap(), Waited::Done(42));
}

#[test]
fn clear_removes_more_than_one_run_and_counts_it() {
    let q = IntQueue::<i32>::anonymous(1024).unwrap();
    assert_eq!(q.push_multi(0..700), 700);
    assert_eq!(q.clear(), 700);
    assert!(q.is_empty());
    let st = q.stats();
    assert_eq!(
        (st.push_ok, st.pop_ok),
        (700, 700),
        "cleared items count as pops"
    );
}

/// A ring full of a dead producer's holes reads full to a producer, which
/// sleeps; the consumer that gives the holes up must wake it (the repair
/// frees slots that no pop counts), or both sleep for ever.
#[test]
fn giving_up_holes_wakes_a_sleeping_producer() {
    use crate::wait::Waited;
    let path = std::env::temp_dir().join(format!("dqs-holes-wake-{}.q", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let q = IntQueue::<i64>::open(&path, 2, 0o600).unwrap();
    // SAFETY: the child reserves two positions and dies there.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // SAFETY: a watchdog for the child alone.
        unsafe { libc::alarm(20) };
        std::env::set_var("DQS_TEST_KILL_POINT", "int_push_claimed");
        let c = IntQueue::<i64>::open(&path, 2, 0o600).unwrap();
        c.push_slice(&[1, 2]);
        // SAFETY: ends the child (not reached: the kill point kills it).
        unsafe { libc::_exit(3) };
    }
    let mut st = 0;
    // SAFETY: waitpid on our child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
    assert!(libc::WIFSIGNALED(st));
    assert_eq!(q.len(), 2, "two holes");
    let got = std::thread::scope(|s| {
        let q = &q;
        let p = s.spawn(move || q.push_wait(7, &Deadline::after_secs(20.0)));
        // Let the producer fall asleep on "full" (it must be woken
        // whether or not it got there first).
        while q.stats().push_waiters == 0 && !p.is_finished() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // Gives the holes up; the woken producer's item may already be
        // there for the same call.
        let got = match q.pop() {
            Some(v) => Waited::Done(v),
            None => q.pop_wait(&Deadline::after_secs(3.0)),
        };
        q.clear(); // wakes the producer whatever happened
        assert_eq!(p.join().unwrap(), Waited::Done(()));
        got
    });
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        got,
        Waited::Done(7),
        "producer not woken when the holes were given up"
    );
}
