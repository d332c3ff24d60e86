//! Unit tests of record_cache.rs.

use super::*;
use std::sync::atomic::Ordering;

fn tags(q: &IntQueue<i64>) -> Vec<(u64, u64)> {
    table(&q.region)
        .iter()
        .map(|r| (r.tag.load(Ordering::Relaxed), r.key.load(Ordering::Relaxed)))
        .collect()
}

/// Threads that use one handle at once each claim a record of their
/// own; dropping the handle gives them back (seen through a second
/// handle on the same file), and leaves other handles' records alone.
#[test]
fn threads_claim_records_of_their_own_and_drop_gives_them_back() {
    let path = std::env::temp_dir().join(format!("dqs-recs-{}.q", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let q = IntQueue::<i64>::open(&path, 64, 0o600).unwrap();
    let other = IntQueue::<i64>::open(&path, 64, 0o600).unwrap();
    assert!(other.push(-1));
    let barrier = std::sync::Barrier::new(4);
    std::thread::scope(|s| {
        for i in 0..4 {
            let (q, barrier) = (&q, &barrier);
            s.spawn(move || {
                assert!(q.push(i));
                // All four hold their records at once.
                barrier.wait();
            });
        }
    });
    let held = |h: &IntQueue<i64>, id: u64| {
        tags(h)
            .iter()
            .enumerate()
            .filter(|(_, &(t, k))| t == current_tag() && k == id)
            .map(|(i, _)| i)
            .collect::<Vec<usize>>()
    };
    let mine = held(&other, q.id);
    assert_eq!(mine.len(), 4, "four threads, four records: {mine:?}");
    assert!(!mine.contains(&OVERFLOW));
    let id = q.id;
    drop(q);
    assert_eq!(held(&other, id), Vec::<usize>::new(), "given back");
    assert_eq!(held(&other, other.id).len(), 1, "the other handle's stays");
    other.unlink().unwrap();
}

/// A table full of live owners: a thread gets no record of its own and
/// works through the shared overflow record, one attempt at a time,
/// with others doing the same; nothing is lost or duplicated.
#[test]
fn a_full_table_falls_back_to_the_overflow_record() {
    let q = IntQueue::<i64>::anonymous(8).unwrap();
    let t = table(&q.region);
    // Every record but the overflow one held by a live owner (this
    // process) for a handle that does not exist.
    for r in &t[1..] {
        r.tag.store(current_tag(), Ordering::SeqCst);
        r.key.store(u64::MAX, Ordering::SeqCst);
    }
    const PER: i64 = 5_000;
    let got = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for p in 0..2i64 {
            let q = &q;
            s.spawn(move || {
                for i in 0..PER {
                    while !q.push(p * PER + i) {
                        std::thread::yield_now();
                    }
                }
            });
        }
        for _ in 0..2 {
            let (q, got) = (&q, &got);
            s.spawn(move || {
                let mut mine = Vec::new();
                let mut buf = [0i64; 3];
                while got.lock().unwrap().len() + mine.len() < 2 * PER as usize {
                    let n = q.pop_multi(&mut buf);
                    mine.extend_from_slice(&buf[..n]);
                    if n == 0 {
                        got.lock().unwrap().extend(mine.drain(..));
                        std::thread::yield_now();
                    }
                }
                got.lock().unwrap().extend(mine);
            });
        }
    });
    let mut all = got.into_inner().unwrap();
    all.sort_unstable();
    assert_eq!(all, (0..2 * PER).collect::<Vec<_>>());
    assert_eq!(t[0].tag.load(Ordering::SeqCst), 0, "overflow given back");
    assert!(
        t[1..]
            .iter()
            .all(|r| r.key.load(Ordering::SeqCst) == u64::MAX),
        "no record taken from a live owner"
    );
    assert_eq!(q.stats().recoveries, 0);
}

/// A forked child claims a record of its own (its tag), not its
/// parent's, without being told.
#[test]
fn a_forked_child_claims_its_own_record() {
    let q = IntQueue::<i64>::anonymous(8).unwrap();
    assert!(q.push(1));
    // SAFETY: the child only pushes, then _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let ok = q.push(2);
        // SAFETY: _exit ends the child without running the parent's
        // destructors.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut st = 0;
    // SAFETY: plain waitpid on our child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
    assert_eq!(st, 0);
    let child = (pid as u64) << 32;
    let owners: Vec<u64> = tags(&q).iter().map(|&(t, _)| t >> 32 << 32).collect();
    assert!(owners.contains(&child), "the child's record: {owners:x?}");
    assert!(owners.contains(&(current_tag() >> 32 << 32)));
    assert_eq!((q.pop(), q.pop()), (Some(1), Some(2)));
}

/// One thread using five queues in turn (more than the four cache
/// ways) finds its own record again each time instead of claiming a
/// new one: one record per handle.
#[test]
fn five_queues_in_turn_hold_one_record_each() {
    let qs: Vec<IntQueue<i64>> = (0..5).map(|_| IntQueue::anonymous(8).unwrap()).collect();
    for round in 0..40 {
        for q in &qs {
            assert!(q.push(round));
            assert_eq!(q.pop(), Some(round));
        }
    }
    for q in &qs {
        let held = tags(q)[1..].iter().filter(|&&(t, _)| t != 0).count();
        assert_eq!(held, 1, "one thread, one handle: {held} records held");
    }
}

/// Threads that end leave their records claimed; once the table has
/// no free record, a new thread takes an ended thread's back instead
/// of falling back to the overflow record.
#[test]
fn ended_threads_records_are_taken_back() {
    let q = IntQueue::<i64>::anonymous(64).unwrap();
    for i in 0..(2 * RING_RECORDS as i64) {
        let q = &q;
        std::thread::scope(|s| {
            s.spawn(move || {
                assert!(q.push(i));
                assert_eq!(q.pop(), Some(i));
                let x = q.cached(current_tag());
                assert!(x != OVERFLOW as u32 && x != NONE, "thread {i}: record {x}");
            });
        });
    }
    assert_eq!(table(&q.region)[OVERFLOW].tag.load(Ordering::SeqCst), 0);
}

/// The table full of live owners and the overflow record held by one
/// that does not let go: a non-blocking `push` still returns (here:
/// fails, as on a full queue), and `push_wait` ends at its deadline,
/// instead of spinning for ever in `overflow_take`.
#[test]
fn push_returns_while_a_live_owner_holds_the_overflow_record() {
    use crate::futex::Deadline;
    use crate::wait::Waited;
    let q = IntQueue::<i64>::anonymous(8).unwrap();
    let t = table(&q.region);
    for r in t {
        r.tag.store(current_tag(), Ordering::SeqCst);
        r.key.store(u64::MAX, Ordering::SeqCst);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let q = &q;
        s.spawn(move || {
            let a = q.push(1);
            let b = q.push_wait(1, &Deadline::after_secs(0.05));
            let c = q.pop();
            let _ = tx.send((a, b, c));
        });
        let got = rx.recv_timeout(std::time::Duration::from_secs(5));
        // Let the thread go whatever happened.
        t[OVERFLOW].tag.store(0, Ordering::SeqCst);
        assert_eq!(
            got,
            Ok((false, Waited::TimedOut, None)),
            "still spinning after 5 s?"
        );
    });
    assert_eq!(q.stats().size, 0);
}

/// Without procfs (or with `hidepid`) a live owner is still alive,
/// not repaired as dead. Needs procfs gone, so ignored; run as
/// `unshare -m sh -c "umount -l /proc && $TEST_BIN without_procfs --ignored"`.
#[test]
#[ignore]
fn alive_and_not_repaired_without_procfs() {
    assert!(
        !records::owner_dead(current_tag()),
        "this process reads as dead"
    );
    let path = std::env::temp_dir().join(format!("dqs-noproc-{}.q", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let q = IntQueue::<i64>::open(&path, 4, 0o600).unwrap();
    // SAFETY: the child pushes once (stopping after its tail CAS), _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // SAFETY: a watchdog for the child alone.
        unsafe { libc::alarm(20) };
        std::env::set_var("DQS_TEST_KILL_POINT", "int_push_claimed:stop");
        let c = IntQueue::<i64>::open(&path, 4, 0o600).unwrap();
        let ok = c.push(5);
        // SAFETY: ends the child without the parent's destructors.
        unsafe { libc::_exit(if ok { 0 } else { 3 }) };
    }
    let mut st = 0;
    // SAFETY: waitpid on our child; WUNTRACED: until it stops.
    assert_eq!(unsafe { libc::waitpid(pid, &mut st, libc::WUNTRACED) }, pid);
    assert!(libc::WIFSTOPPED(st));
    let first = q.pop();
    let rec = q.stats().recoveries;
    // SAFETY: resume and reap our child.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
    assert!(q.push(6));
    let rest = (q.pop(), q.pop());
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        (first, rec),
        (None, 0),
        "live producer repaired; then {rest:?}"
    );
    assert_eq!(rest, (Some(5), Some(6)));
}
