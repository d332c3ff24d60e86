//! Unit tests of the lease table (one process; the crash cases are in
//! t/7x-lease-*.t, which kill real processes).

use crate::lease::{with_create_options, LeaseError, HELD, RETURNED};
use crate::{IntQueue, StrQueue};

#[test]
fn int_lease_ack_release_and_order() {
    let q = IntQueue::<i64>::anonymous(8).unwrap();
    for v in 1..=4 {
        assert!(q.push(v));
    }
    let (a, la) = q.pop_lease(None).unwrap().unwrap();
    let (b, lb) = q.pop_lease(None).unwrap().unwrap();
    assert_eq!((a, b), (1, 2));
    assert_eq!(q.len(), 2);
    assert_eq!(q.lease_stats().open, 2);
    // Released in the other order, they come back in pop order; they wait
    // beside the ring, counted in len.
    assert!(q.release(lb).unwrap());
    assert!(q.release(la).unwrap());
    assert_eq!(q.len(), 4);
    assert_eq!(q.lease_stats().waiting, 2);
    let s = q.stats();
    assert_eq!((s.size, s.push_ok, s.pop_ok), (4, 4, 0));
    let (v, l) = q.pop_lease(None).unwrap().unwrap();
    assert_eq!(v, 1);
    assert!(q.release(l).unwrap());
    // Plain pops take the returned ones first too, then the ring's.
    assert_eq!(q.peek(), Some(1));
    let mut out = [0i64; 3];
    assert_eq!(q.pop_multi(&mut out), 3);
    assert_eq!(out, [1, 2, 3]);
    assert_eq!(q.peek(), Some(4));
    let (v, l) = q.pop_lease(None).unwrap().unwrap();
    assert_eq!(v, 4);
    assert!(q.ack(l).unwrap());
    assert!(!q.ack(l).unwrap(), "a lease ends once");
    assert!(!q.release(l).unwrap());
    assert_eq!(q.pop(), None);
    let s = q.lease_stats();
    assert_eq!((s.open, s.waiting, s.acked, s.released), (0, 0, 1, 3));
}

#[test]
fn clear_removes_the_items_leases_gave_back() {
    let q = IntQueue::<i32>::anonymous(8).unwrap();
    for v in 1..=3 {
        assert!(q.push(v));
    }
    let (_, la) = q.pop_lease(None).unwrap().unwrap();
    let (_, lb) = q.pop_lease(None).unwrap().unwrap();
    assert!(q.release(la).unwrap());
    assert_eq!(q.lease_stats().waiting, 1);
    // One in the ring, one given back, one still held.
    assert_eq!(q.clear(), 2);
    assert_eq!(q.lease_stats().waiting, 0);
    assert_eq!(q.pop(), None);
    assert!(q.pop_lease(None).unwrap().is_none());
    // The held lease is not in the queue: it still ends as usual.
    assert!(q.release(lb).unwrap());
    assert_eq!(q.pop(), Some(2));
}

#[test]
fn a_full_table_refuses_leases_and_plain_pops_go_on() {
    let q = with_create_options(Some(1), None, || IntQueue::<i32>::anonymous(4)).unwrap();
    q.push(1);
    q.push(2);
    let (_, l) = q.pop_lease(None).unwrap().unwrap();
    assert!(matches!(q.pop_lease(None), Err(LeaseError::Full(1))));
    assert_eq!(q.pop(), Some(2));
    assert!(q.ack(l).unwrap());
    assert!(q.pop_lease(None).unwrap().is_none());
}

#[test]
fn no_table_no_leases() {
    let q = with_create_options(Some(0), None, || IntQueue::<i16>::anonymous(4)).unwrap();
    q.push(1);
    assert!(matches!(q.pop_lease(None), Err(LeaseError::NoLeases)));
    // Header, slots, the ring's 32 intent records (format 7).
    assert_eq!(q.stats().mmap_size, 384 + 32 * 64); // 352, rounded up to 64
    let s = with_create_options(Some(0), None, || StrQueue::anonymous(4, 0)).unwrap();
    let mut b = Vec::new();
    assert!(matches!(
        s.pop_lease(None, &mut b),
        Err(LeaseError::NoLeases)
    ));
}

#[test]
fn bad_ids_are_refused() {
    let q = IntQueue::<i64>::anonymous(4).unwrap();
    assert!(matches!(q.ack(5), Err(LeaseError::BadLease(5))));
    assert!(matches!(
        q.ack(1 << 16 | 9999),
        Err(LeaseError::BadLease(_))
    ));
    assert!(!q.ack(7 << 16 | 3).unwrap(), "a well-formed id of no lease");
}

#[test]
fn a_late_ack_returns_false_and_the_item_comes_back() {
    let q = IntQueue::<i64>::anonymous(4).unwrap();
    q.push(9);
    let (_, l) = q.pop_lease(Some(0.0)).unwrap().unwrap();
    assert!(!q.ack(l).unwrap());
    assert_eq!(q.pop(), Some(9));
    assert_eq!(q.lease_stats().returned_timeout, 1);
    let s = StrQueue::anonymous(4, 0).unwrap();
    s.push(b"x", false).unwrap();
    let mut b = Vec::new();
    let (_, l) = s.pop_lease(Some(0.0), &mut b).unwrap().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3));
    let st = s.lease_stats();
    assert_eq!(st.returned_timeout, 1);
    assert!(!s.ack(l).unwrap());
    assert_eq!(s.pop(false, &mut b), Some(false));
    assert_eq!(b, b"x");
}

#[test]
fn str_lease_release_and_order() {
    let q = StrQueue::anonymous(8, 0).unwrap();
    for w in ["a", "bb", "ccc", "dddd"] {
        q.push(w.as_bytes(), false).unwrap();
    }
    let mut b = Vec::new();
    let (_, la) = q.pop_lease(None, &mut b).unwrap().unwrap();
    assert_eq!(b, b"a");
    let (u, lb) = q.pop_lease(None, &mut b).unwrap().unwrap();
    assert!(!u);
    assert_eq!(b, b"bb");
    assert_eq!(q.leases().len(), 2);
    assert_eq!(q.leases()[0].state, HELD);
    assert!(q.release(lb).unwrap());
    assert!(q.release(la).unwrap());
    assert_eq!(q.len(), 4);
    for w in ["a", "bb"] {
        let (_, l) = q.pop_lease(None, &mut b).unwrap().unwrap();
        assert_eq!(b, w.as_bytes());
        assert!(q.ack(l).unwrap());
    }
    assert_eq!(q.pop(false, &mut b), Some(false));
    assert_eq!(b, b"ccc");
    let s = q.lease_stats();
    assert_eq!((s.open, s.acked, s.released), (0, 2, 2));
}

#[test]
fn str_lease_area_limits() {
    let q = with_create_options(Some(4), Some(16), || StrQueue::anonymous(8, 0)).unwrap();
    q.push(&[7u8; 40], false).unwrap();
    q.push(&[8u8; 10], false).unwrap();
    let mut b = Vec::new();
    assert!(matches!(
        q.pop_lease(None, &mut b),
        Err(LeaseError::TooBig { need: 40, area: 16 })
    ));
    assert_eq!(q.len(), 2, "the item stays queued");
    assert_eq!(q.pop(false, &mut b), Some(false));
    let (_, l) = q.pop_lease(None, &mut b).unwrap().unwrap();
    q.push(&[9u8; 10], false).unwrap();
    assert!(matches!(
        q.pop_lease(None, &mut b),
        Err(LeaseError::AreaFull { .. })
    ));
    assert!(q.ack(l).unwrap());
    let (_, _l) = q.pop_lease(None, &mut b).unwrap().unwrap();
    assert_eq!(b, [9u8; 10]);
}

#[test]
fn a_child_is_another_holder_and_its_death_returns_its_leases() {
    let q = IntQueue::<i64>::anonymous(8).unwrap();
    q.push(1);
    q.push(2);
    let (_, mine) = q.pop_lease(None).unwrap().unwrap();
    // SAFETY: the child only uses the queue and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let ok = matches!(q.ack(mine), Err(LeaseError::NotHolder(..)))
            && q.pop_lease(None).unwrap().unwrap().0 == 2;
        // SAFETY: _exit in the child.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut st = 0;
    // SAFETY: our child.
    unsafe { libc::waitpid(pid, &mut st, 0) };
    assert_eq!(st, 0);
    // The child died holding 2: the next look returns it.
    let leases = q.leases();
    assert_eq!(leases.len(), 2);
    assert_eq!(leases[1].state, RETURNED);
    assert_eq!(q.lease_stats().returned_dead, 1);
    assert_eq!(q.pop(), Some(2));
    assert!(q.ack(mine).unwrap());
}

/// A leaser stopped (alive) between its `head` CAS and its free of the
/// slot: a producer that wraps to that slot must not repair it under the
/// leaser (`pop_lease` pops with this thread's intent record). Without
/// the record: `push(3)` "repairs" the slot, then the leaser's free
/// overwrites item 3 (review of i21ring, finding 1).
#[test]
fn a_stopped_lease_pop_is_not_repaired() {
    let path = std::env::temp_dir().join(format!("dqs-lease-stop-{}.q", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let q = IntQueue::<i64>::open(&path, 2, 0o600).unwrap();
    assert!(q.push(1) && q.push(2));
    // SAFETY: the child opens its own handle, pops with a lease, _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // SAFETY: a watchdog for the child alone.
        unsafe { libc::alarm(20) };
        std::env::set_var("DQS_TEST_KILL_POINT", "int_pop_claimed:stop");
        let c = IntQueue::<i64>::open(&path, 2, 0o600).unwrap();
        let ok = matches!(c.pop_lease(None), Ok(Some((1, _))));
        // SAFETY: ends the child without the parent's destructors.
        unsafe { libc::_exit(if ok { 0 } else { 3 }) };
    }
    let mut st = 0;
    // SAFETY: waitpid on our child; WUNTRACED: until it stops.
    assert_eq!(unsafe { libc::waitpid(pid, &mut st, libc::WUNTRACED) }, pid);
    assert!(libc::WIFSTOPPED(st), "child stopped after its head CAS");
    // The child is alive and owns position 0's slot: the ring is full.
    let pushed = q.push(3);
    let rec = q.stats().recoveries;
    // SAFETY: resume and reap our child.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
    let rest = (q.pop(), q.pop(), q.pop());
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        rec, 0,
        "a live leaser's slot was repaired (push of 3: {pushed}; then pops {rest:?}, child status {st})"
    );
    assert!(!pushed, "push into a slot a live consumer still owns");
    // The child exited holding its lease: plain pops find it dead and
    // take item 1 too (before or after 2, as their look falls).
    let mut got: Vec<i64> = [rest.0, rest.1].into_iter().flatten().collect();
    got.sort_unstable();
    assert_eq!((got, rest.2), (vec![1, 2], None), "pops {rest:?}");
    assert_eq!(st, 0, "the child got item 1");
}

/// `pop_lease_wait` sleeps with the heavy half of the waiters' barrier,
/// as every Int wait must: Int pushes end with a plain store and only the
/// light half (ring docs, "Waiters"; review of i21ring, finding 6).
#[test]
fn pop_lease_wait_sleeps_fenced() {
    use crate::futex::Deadline;
    use crate::lock::barrier::HEAVY_CALLS;
    let q = IntQueue::<i64>::anonymous(4).unwrap();
    let before = HEAVY_CALLS.with(|c| c.get());
    // Long enough that the spins and yields before the sleep end first
    // even on a loaded machine (0.02 s was not, once).
    let w = q.pop_lease_wait(&Deadline::after_secs(2.0), None).unwrap();
    assert_eq!(w, crate::wait::Waited::TimedOut);
    assert!(
        HEAVY_CALLS.with(|c| c.get()) > before,
        "slept without the heavy barrier"
    );
}
