//! Unit tests of the work-queue calls (delivery counts, dead letters,
//! delays, touch), Int and Str, in one process.

use crate::futex::Deadline;
use crate::lease::{
    with_create_options, with_work_options, LeaseError, DEAD_BURIED, DEAD_DEADLINE, DEAD_RELEASED,
    DELAYED,
};
use crate::wait::Waited;
use crate::{IntQueue, StrQueue};

fn int_q(max_deliveries: u64, max_dead: Option<u64>) -> IntQueue<i64> {
    with_work_options(Some(max_deliveries), max_dead, || {
        IntQueue::<i64>::anonymous(16).unwrap()
    })
}

fn str_q(max_deliveries: u64, max_dead: Option<u64>) -> StrQueue {
    with_work_options(Some(max_deliveries), max_dead, || {
        StrQueue::anonymous(16, 0).unwrap()
    })
}

#[test]
fn int_counts_follow_the_item() {
    let q = int_q(0, None);
    q.push(7);
    q.push(8);
    for want in 1..=3 {
        let (v, l, n) = q.pop_lease_counted(None).unwrap().unwrap();
        assert_eq!((v, n), (7, want));
        assert_eq!(q.deliveries(l).unwrap(), Some(want));
        assert!(q.release(l).unwrap());
        assert_eq!(q.deliveries(l).unwrap(), None, "ended");
    }
    // A plain pop of a returned item is not a delivery and removes it.
    assert_eq!(q.pop(), Some(7));
    let (v, l, n) = q.pop_lease_counted(None).unwrap().unwrap();
    assert_eq!((v, n), (8, 1));
    assert!(q.ack(l).unwrap());
    let s = q.lease_stats();
    assert_eq!((s.delivered, s.max_deliveries, s.max_dead), (4, 0, 64));
}

#[test]
fn int_max_deliveries_moves_to_dead_area() {
    let q = int_q(2, None);
    q.push(5);
    q.push(6);
    let (_, l, _) = q.pop_lease_counted(None).unwrap().unwrap();
    assert!(q.release(l).unwrap());
    let (v, l, n) = q.pop_lease_counted(None).unwrap().unwrap();
    assert_eq!((v, n), (5, 2));
    assert!(q.release(l).unwrap());
    assert_eq!(q.dead_count(), 1);
    let d = q.dead_nth(0).unwrap();
    assert_eq!((d.value, d.deliveries, d.reason), (5, 2, DEAD_RELEASED));
    assert!(d.when_ns > 1_600_000_000 * 1_000_000_000);
    assert_eq!(q.len(), 1, "the dead item is not in the live queue");
    assert_eq!(q.pop(), Some(6));
    // Kick: back at the front with a fresh count.
    q.push(9);
    assert_eq!(q.kick(10).unwrap(), 1, "clamped to what there is");
    assert_eq!(q.dead_count(), 0);
    let (v, l, n) = q.pop_lease_counted(None).unwrap().unwrap();
    assert_eq!((v, n), (5, 1));
    // Deadline passed: reason "deadline" once spent.
    assert!(q.release(l).unwrap());
    let (_, l, n) = q.pop_lease_counted(Some(0.0)).unwrap().unwrap();
    assert_eq!(n, 2);
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert!(!q.ack(l).unwrap(), "late");
    let d = q.dead_take().unwrap().unwrap();
    assert_eq!((d.value, d.reason), (5, DEAD_DEADLINE));
    assert!(q.dead_take().unwrap().is_none());
    let s = q.lease_stats();
    assert_eq!((s.dead, s.kicked, s.drained, s.dead_items), (2, 1, 1, 0));
    assert_eq!(q.pop(), Some(9));
}

#[test]
fn int_bury_and_full_dead_area() {
    let q = int_q(1, Some(1));
    for v in 1..=3 {
        q.push(v);
    }
    let (_, l, _) = q.pop_lease_counted(None).unwrap().unwrap();
    assert!(q.bury(l).unwrap());
    assert!(!q.bury(l).unwrap(), "ended");
    let d = q.dead_nth(0).unwrap();
    assert_eq!((d.value, d.reason, d.deliveries), (1, DEAD_BURIED, 1));
    // Full: bury fails, the lease stays held.
    let (_, l, _) = q.pop_lease_counted(None).unwrap().unwrap();
    assert!(matches!(q.bury(l), Err(LeaseError::DeadFull(1))));
    assert_eq!(q.deliveries(l).unwrap(), Some(1));
    // Full: a spent item goes back to the live queue, counted.
    assert!(q.release(l).unwrap());
    assert_eq!(q.lease_stats().dead_full, 1);
    assert_eq!(q.pop(), Some(2));
    // No dead area at all.
    let q = int_q(0, Some(0));
    q.push(1);
    let (_, l, _) = q.pop_lease_counted(None).unwrap().unwrap();
    assert!(matches!(q.bury(l), Err(LeaseError::DeadFull(0))));
    assert!(q.ack(l).unwrap());
}

#[test]
fn int_touch() {
    let q = int_q(0, None);
    q.push(1);
    q.push(2);
    let (_, l, _) = q.pop_lease_counted(Some(0.2)).unwrap().unwrap();
    let before = q.leases()[0].left_ns;
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(q.touch(l, None).unwrap());
    assert!(q.leases()[0].left_ns >= before - 2_000_000);
    assert!(q.touch(l, Some(30.0)).unwrap());
    assert!(q.leases()[0].left_ns > 20_000_000_000);
    assert!(q.ack(l).unwrap());
    assert!(!q.touch(l, None).unwrap(), "ended");
    // No deadline, no new timeout: true, nothing changes.
    let (_, l, _) = q.pop_lease_counted(None).unwrap().unwrap();
    assert!(q.touch(l, None).unwrap());
    assert_eq!(q.leases()[0].left_ns, 0);
    assert_eq!(q.lease_stats().touched, 2);
    assert!(matches!(q.touch(12345, None), Err(LeaseError::BadLease(_))));
}

#[test]
fn int_delays() {
    let q = int_q(0, None);
    q.push(1);
    let (_, l, _) = q.pop_lease_counted(None).unwrap().unwrap();
    assert!(q.release_after(l, 0.05).unwrap());
    q.push_delayed(0.03, 2).unwrap();
    assert!(q.release_after(l, -1.0).is_err());
    assert!(q.push_delayed(f64::NAN, 3).is_err());
    assert_eq!(q.len(), 0);
    assert_eq!(q.pop(), None);
    assert_eq!(q.lease_stats().delayed, 2);
    assert_eq!(q.leases()[0].state, DELAYED);
    q.push(3);
    assert_eq!(q.pop(), Some(3));
    // A waiting pop wakes when the first falls due (the slice ends 1 ms
    // after it; the bounds leave room for a loaded machine, and a pop
    // that missed the due time would wake 50 ms or 2 s later).
    let t0 = std::time::Instant::now();
    assert_eq!(q.pop_wait(&Deadline::after_secs(2.0)), Waited::Done(2));
    let e = t0.elapsed().as_secs_f64();
    assert!((0.028..0.045).contains(&e), "woke after {e}");
    let w = q.pop_lease_wait_counted(&Deadline::after_secs(2.0), None);
    let Ok(Waited::Done((v, l, n))) = w else {
        panic!("{w:?}")
    };
    let e = t0.elapsed().as_secs_f64();
    assert!((0.048..0.065).contains(&e), "woke after {e}");
    assert_eq!((v, n), (1, 2), "the count survives the delay");
    assert!(q.ack(l).unwrap());
    assert_eq!(q.lease_stats().delayed, 0);
    // Due items go before items pushed after they fell due.
    q.push_delayed(0.0, 10).unwrap();
    q.push(11);
    assert_eq!(q.pop(), Some(10));
    assert_eq!(q.pop(), Some(11));
    // No free record: refused as pop_lease is.
    let q = with_create_options(Some(1), None, || IntQueue::<i64>::anonymous(4).unwrap());
    q.push_delayed(10.0, 1).unwrap();
    assert!(matches!(q.push_delayed(10.0, 2), Err(LeaseError::Full(1))));
}

#[test]
fn str_counts_survive_the_return_into_the_queue() {
    let q = str_q(0, None);
    let mut b = Vec::new();
    q.push(b"a", false).unwrap();
    q.push(b"b", true).unwrap();
    for want in 1..=3 {
        let (_, l, n) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
        assert_eq!((&b[..], n), (&b"a"[..], want));
        assert_eq!(q.deliveries(l).unwrap(), Some(want));
        assert!(q.release(l).unwrap());
    }
    assert_eq!(q.len(), 2);
    assert_eq!(q.pop(false, &mut b), Some(false));
    assert_eq!(b, b"a");
    let (u, l, n) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
    assert_eq!(
        (&b[..], u, n),
        (&b"b"[..], true, 1),
        "a fresh item after a plain pop"
    );
    assert!(q.ack(l).unwrap());
}

#[test]
fn str_dead_letters_delays_touch() {
    let q = str_q(2, Some(2));
    let mut b = Vec::new();
    q.push(b"poison", true).unwrap();
    q.push(b"ok", false).unwrap();
    for _ in 0..2 {
        let (_, l, _) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
        assert_eq!(b, b"poison");
        assert!(q.release(l).unwrap());
    }
    assert_eq!(q.dead_count(), 1);
    assert_eq!(q.len(), 1);
    let (d, utf8) = q.dead_nth(0, &mut b).unwrap().unwrap();
    assert_eq!(
        (&b[..], utf8, d.deliveries, d.reason),
        (&b"poison"[..], true, 2, DEAD_RELEASED)
    );
    assert_eq!(d.value, 6);
    // bury, touch
    let (_, l, _) = q.pop_lease_counted(Some(5.0), &mut b).unwrap().unwrap();
    assert!(q.touch(l, Some(60.0)).unwrap());
    assert!(q.bury(l).unwrap());
    assert_eq!(q.dead_count(), 2);
    // kick both back; the oldest ends in front
    q.push(b"later", false).unwrap();
    assert_eq!(q.kick(u64::MAX).unwrap(), 2);
    let (_, l, n) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
    assert_eq!((&b[..], n), (&b"poison"[..], 1));
    assert!(q.ack(l).unwrap());
    assert_eq!(q.pop(false, &mut b), Some(false));
    assert_eq!(b, b"ok");
    assert_eq!(q.pop(false, &mut b), Some(false));
    assert_eq!(b, b"later");
    // delays
    q.push_delayed(0.03, b"soon", false).unwrap();
    assert_eq!(q.len(), 0);
    assert_eq!(q.pop(false, &mut b), None);
    let t0 = std::time::Instant::now();
    assert_eq!(
        q.pop_wait(false, &mut b, &Deadline::after_secs(2.0)),
        Waited::Done(false)
    );
    let e = t0.elapsed().as_secs_f64();
    assert_eq!(b, b"soon");
    assert!((0.025..0.045).contains(&e), "woke after {e}");
    // drain
    q.push(b"x", false).unwrap();
    for _ in 0..2 {
        let (_, l, _) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
        assert!(q.release_after(l, 0.001).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    assert_eq!(q.dead_count(), 1);
    let (d, _) = q.dead_take(&mut b).unwrap().unwrap();
    assert_eq!((&b[..], d.reason), (&b"x"[..], DEAD_RELEASED));
    assert_eq!(q.dead_count(), 0);
    let s = q.lease_stats();
    assert_eq!((s.dead, s.buried, s.kicked, s.drained), (2, 1, 2, 1));
}

#[test]
fn a_sleeping_pop_wakes_for_a_delay_made_after_it_slept() {
    let q = int_q(0, None);
    let s = str_q(0, None);
    std::thread::scope(|sc| {
        let a = sc.spawn(|| {
            let t0 = std::time::Instant::now();
            let r = q.pop_wait(&Deadline::after_secs(3.0));
            (r, t0.elapsed().as_secs_f64())
        });
        let b = sc.spawn(|| {
            let t0 = std::time::Instant::now();
            let r = q.pop_lease_wait_counted(&Deadline::after_secs(3.0), None);
            (r.unwrap().map(|x| x.0), t0.elapsed().as_secs_f64())
        });
        let c = sc.spawn(|| {
            let mut b = Vec::new();
            let t0 = std::time::Instant::now();
            let r = s.pop_wait(false, &mut b, &Deadline::after_secs(3.0));
            (r, b, t0.elapsed().as_secs_f64())
        });
        let d = sc.spawn(|| {
            let mut b = Vec::new();
            let t0 = std::time::Instant::now();
            let r = s.pop_lease_wait_counted(&Deadline::after_secs(3.0), None, &mut b);
            (r.unwrap().map(|x| x.0), b, t0.elapsed().as_secs_f64())
        });
        // All four asleep on queues with no lease record in use.
        std::thread::sleep(std::time::Duration::from_millis(30));
        q.push_delayed(0.03, 1).unwrap();
        q.push_delayed(0.03, 2).unwrap();
        s.push_delayed(0.03, b"x", false).unwrap();
        s.push_delayed(0.03, b"y", false).unwrap();
        for (r, e) in [a.join().unwrap(), b.join().unwrap()] {
            assert!(matches!(r, Waited::Done(1 | 2)), "{r:?}");
            assert!((0.058..0.075).contains(&e), "Int woke after {e}");
        }
        for (r, b, e) in [c.join().unwrap(), d.join().unwrap()] {
            assert!(matches!(r, Waited::Done(_)), "{r:?}");
            assert!(b == b"x" || b == b"y");
            assert!((0.058..0.075).contains(&e), "Str woke after {e}");
        }
    });
}

// Needs a handle that compresses: the zstd feature.
#[cfg(feature = "zstd")]
#[test]
fn str_delayed_and_dead_items_keep_compression() {
    let q = str_q(1, None);
    q.set_compress(32, 1).unwrap();
    let big = vec![b'z'; 3000];
    q.push_delayed(0.0, &big, true).unwrap();
    assert_eq!(q.stats().compressed, 1, "counted once, at the delayed push");
    let mut b = Vec::new();
    let (u, l, n) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
    assert_eq!((b.len(), u, n), (3000, true, 1));
    assert!(q.release(l).unwrap()); // spent: dead
    let (d, u) = q.dead_nth(0, &mut b).unwrap().unwrap();
    assert_eq!((b.len(), u, d.value), (3000, true, 3000));
    assert!(d.stored < 3000, "stored compressed");
    assert_eq!(q.kick(1).unwrap(), 1);
    assert_eq!(q.pop(false, &mut b), Some(true));
    assert_eq!(b, big);
    assert_eq!(q.stats().compressed, 1);
}

#[test]
fn str_a_new_front_item_takes_no_stale_count() {
    let q = str_q(2, Some(2));
    let mut b = Vec::new();
    q.push(b"a", false).unwrap();
    let (_, l, _) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
    assert!(q.release(l).unwrap()); // back in the queue, count 1 kept
    assert_eq!(q.pop(false, &mut b), Some(false)); // a plain pop ends it
    q.push_front(b"b", false).unwrap(); // same place, same size
    let (_, l, n) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
    assert_eq!((&b[..], n), (&b"b"[..], 1));
    // Kicked to the front after a plain pop of a returned item: reset.
    assert!(q.release(l).unwrap());
    let (_, l, _) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
    assert!(q.release(l).unwrap()); // its 2nd delivery: dead
    assert_eq!(q.dead_count(), 1);
    q.push(b"c", false).unwrap();
    let (_, l, _) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
    assert!(q.release(l).unwrap());
    assert_eq!(q.pop(false, &mut b), Some(false));
    assert_eq!(b, b"c");
    assert_eq!(q.kick(1).unwrap(), 1);
    let (_, l, n) = q.pop_lease_counted(None, &mut b).unwrap().unwrap();
    assert_eq!((&b[..], n), (&b"b"[..], 1), "kicked: count reset");
    assert!(q.ack(l).unwrap());
}
