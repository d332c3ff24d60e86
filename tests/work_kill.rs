//! Kill points inside the work-queue calls (format 8; see the `lease`
//! module's "Work queue" docs): a child process SIGKILLs itself at each
//! point (`DQS_TEST_KILL_POINT`) of a count, a move to the dead-letter
//! area, a kick, a delay, an item made due and a dead drain, and the
//! parent checks that the item is never lost (at worst it appears twice)
//! and that a holder's death sends a spent item to the dead-letter area
//! with the reason "holder died". One test: it forks, so it has the
//! process to itself.

use std::path::{Path, PathBuf};

use data_queue_shared::lease::{with_work_options, DEAD_HOLDER_DIED, DEAD_RELEASED};
use data_queue_shared::{IntQueue, StrQueue};

fn path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("dqs-work-kill-{tag}-{}.shm", std::process::id()))
}

/// Run `f` in a child that arms `point` (None: no point, the child just
/// exits after `f`, holding what it holds); assert how it ended.
fn child(point: Option<&str>, f: impl FnOnce()) {
    // SAFETY: the child runs `f` (queue calls) and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        if let Some(p) = point {
            std::env::set_var("DQS_TEST_KILL_POINT", p);
        }
        f();
        // SAFETY: leave without the parent's exit code.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    if let Some(p) = point {
        assert!(
            libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL,
            "the child reached {p} and died there (status {status})"
        );
    } else {
        assert!(libc::WIFEXITED(status), "status {status}");
    }
}

fn int_q(p: &Path, md: u64) -> IntQueue<i64> {
    let _ = std::fs::remove_file(p);
    with_work_options(Some(md), Some(4), || {
        IntQueue::<i64>::open(p, 8, 0o600).unwrap()
    })
}

fn str_q(p: &Path, md: u64) -> StrQueue {
    let _ = std::fs::remove_file(p);
    with_work_options(Some(md), Some(4), || {
        StrQueue::open(p, 8, 4096, 0o600).unwrap()
    })
}

/// Every item left in an Int queue (live, then dead), by plain pops and
/// dead_take.
fn int_all(q: &IntQueue<i64>) -> (Vec<i64>, Vec<i64>) {
    let _ = q.lease_stats(); // a look: returns what a dead holder held
    let mut live = Vec::new();
    while let Some(v) = q.pop() {
        live.push(v);
    }
    let mut dead = Vec::new();
    while let Some(d) = q.dead_take().unwrap() {
        dead.push(d.value);
    }
    (live, dead)
}

fn str_all(q: &StrQueue) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let _ = q.lease_stats();
    let mut b = Vec::new();
    let mut live = Vec::new();
    while q.pop(false, &mut b).is_some() {
        live.push(b.clone());
    }
    let mut dead = Vec::new();
    while q.dead_take(&mut b).unwrap().is_some() {
        dead.push(b.clone());
    }
    (live, dead)
}

fn int_points() {
    let p = path("int");
    // The count: killed between the count and the lease: the item comes
    // back (a dead holder's, or never taken).
    let q = int_q(&p, 0);
    q.push(1);
    child(Some("work_counted"), || {
        let c = IntQueue::<i64>::open(&p, 8, 0o600).unwrap();
        let _ = c.pop_lease_counted(None);
    });
    assert_eq!(int_all(&q), (vec![1], vec![]));

    // The holder died with its last allowed delivery: dead, "holder died".
    let q = int_q(&p, 1);
    q.push(2);
    child(None, || {
        let c = IntQueue::<i64>::open(&p, 8, 0o600).unwrap();
        let _ = c.pop_lease_counted(None).unwrap().unwrap();
    });
    let _ = q.lease_stats();
    let d = q.dead_nth(0).expect("dead");
    assert_eq!((d.value, d.reason, d.deliveries), (2, DEAD_HOLDER_DIED, 1));
    assert_eq!(int_all(&q), (vec![], vec![2]));

    // The move to the dead area: exactly once (the takeover frees the
    // lease record the dead record names).
    let q = int_q(&p, 1);
    q.push(3);
    child(Some("work_dead_moved"), || {
        let c = IntQueue::<i64>::open(&p, 8, 0o600).unwrap();
        let (_, l, _) = c.pop_lease_counted(None).unwrap().unwrap();
        let _ = c.release(l);
    });
    let d = q.dead_nth(0).expect("dead");
    assert_eq!((d.value, d.reason), (3, DEAD_RELEASED));
    assert_eq!(int_all(&q), (vec![], vec![3]));

    // The kick: in the live queue, maybe also still dead (twice).
    let q = int_q(&p, 1);
    q.push(4);
    let (_, l, _) = q.pop_lease_counted(None).unwrap().unwrap();
    assert!(q.bury(l).unwrap());
    child(Some("work_kicked"), || {
        let c = IntQueue::<i64>::open(&p, 8, 0o600).unwrap();
        let _ = c.kick(1);
    });
    let (live, dead) = int_all(&q);
    assert_eq!(live, vec![4]);
    assert!(dead.len() <= 1);

    // The delay and the due item: comes back.
    for point in ["work_delayed", "work_made_due"] {
        let q = int_q(&p, 0);
        q.push(5);
        let due = point == "work_made_due";
        if due {
            q.push_delayed(0.001, 6).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
        child(Some(point), || {
            let c = IntQueue::<i64>::open(&p, 8, 0o600).unwrap();
            if due {
                let _ = c.pop();
            } else {
                let (_, l, _) = c.pop_lease_counted(None).unwrap().unwrap();
                let _ = c.release_after(l, 0.001);
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(3));
        let (mut live, _) = int_all(&q);
        live.sort_unstable();
        assert_eq!(live, if due { vec![5, 6] } else { vec![5] }, "{point}");
    }

    // The drain: still there.
    let q = int_q(&p, 1);
    q.push(7);
    let (_, l, _) = q.pop_lease_counted(None).unwrap().unwrap();
    assert!(q.bury(l).unwrap());
    child(Some("work_dead_drain"), || {
        let c = IntQueue::<i64>::open(&p, 8, 0o600).unwrap();
        let _ = c.dead_take();
    });
    assert_eq!(int_all(&q), (vec![], vec![7]));
    let _ = std::fs::remove_file(&p);
}

fn str_points() {
    let p = path("str");
    let open = |p: &Path| StrQueue::open(p, 8, 4096, 0o600).unwrap();
    let q = str_q(&p, 0);
    q.push(b"a", false).unwrap();
    child(Some("work_counted"), || {
        let _ = open(&p).pop_lease_counted(None, &mut Vec::new());
    });
    assert_eq!(str_all(&q), (vec![b"a".to_vec()], vec![]));

    let q = str_q(&p, 1);
    q.push(b"b", false).unwrap();
    child(None, || {
        let _ = open(&p)
            .pop_lease_counted(None, &mut Vec::new())
            .unwrap()
            .unwrap();
    });
    let _ = q.lease_stats();
    let (d, _) = q.dead_nth(0, &mut Vec::new()).unwrap().expect("dead");
    assert_eq!((d.reason, d.deliveries), (DEAD_HOLDER_DIED, 1));
    assert_eq!(str_all(&q), (vec![], vec![b"b".to_vec()]));

    let q = str_q(&p, 1);
    q.push(b"c", false).unwrap();
    child(Some("work_dead_moved"), || {
        let c = open(&p);
        let (_, l, _) = c.pop_lease_counted(None, &mut Vec::new()).unwrap().unwrap();
        let _ = c.release(l);
    });
    assert_eq!(str_all(&q), (vec![], vec![b"c".to_vec()]));

    let q = str_q(&p, 1);
    q.push(b"d", false).unwrap();
    let (_, l, _) = q.pop_lease_counted(None, &mut Vec::new()).unwrap().unwrap();
    assert!(q.bury(l).unwrap());
    child(Some("work_kicked"), || {
        let _ = open(&p).kick(1);
    });
    let (live, dead) = str_all(&q);
    assert_eq!(live, vec![b"d".to_vec()]);
    assert!(dead.len() <= 1);

    for point in ["work_delayed", "work_made_due"] {
        let q = str_q(&p, 0);
        q.push(b"e", false).unwrap();
        let due = point == "work_made_due";
        if due {
            q.push_delayed(0.001, b"f", false).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
        child(Some(point), || {
            let c = open(&p);
            let mut b = Vec::new();
            if due {
                let _ = c.pop_lease_counted(None, &mut b);
            } else {
                let (_, l, _) = c.pop_lease_counted(None, &mut b).unwrap().unwrap();
                let _ = c.release_after(l, 0.001);
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(3));
        let (mut live, _) = str_all(&q);
        live.sort();
        let want: Vec<Vec<u8>> = if due {
            vec![b"e".to_vec(), b"f".to_vec()]
        } else {
            vec![b"e".to_vec()]
        };
        assert_eq!(live, want, "{point}");
    }

    let q = str_q(&p, 1);
    q.push(b"g", false).unwrap();
    let (_, l, _) = q.pop_lease_counted(None, &mut Vec::new()).unwrap().unwrap();
    assert!(q.bury(l).unwrap());
    child(Some("work_dead_drain"), || {
        let _ = open(&p).dead_take(&mut Vec::new());
    });
    assert_eq!(str_all(&q), (vec![], vec![b"g".to_vec()]));
    let _ = std::fs::remove_file(&p);
}

/// A poison item whose every holder dies (a child that exits holding
/// its lease) ends in the dead-letter area after exactly
/// `max_deliveries` deliveries, reason "holder died"; the other items then
/// pass once each, in order.
fn poison() {
    let p = path("poison");
    let q = int_q(&p, 3);
    q.push(666);
    for v in 1..=7 {
        q.push(v);
    }
    let mut children = 0;
    while q.dead_count() == 0 {
        children += 1;
        assert!(children <= 3, "dead after max_deliveries holders died");
        child(None, || {
            let c = IntQueue::<i64>::open(&p, 8, 0o600).unwrap();
            let (v, _, n) = c.pop_lease_counted(None).unwrap().unwrap();
            assert_eq!(v, 666, "the poison is served first once returned");
            assert!(n <= 3);
        });
        let _ = q.lease_stats(); // a look: the dead holder's lease comes back
    }
    assert_eq!(children, 3);
    let d = q.dead_nth(0).expect("the poison is dead");
    assert_eq!(
        (d.value, d.deliveries, d.reason),
        (666, 3, DEAD_HOLDER_DIED)
    );
    let mut seen = Vec::new();
    while let Some((v, l, n)) = q.pop_lease_counted(None).unwrap() {
        assert_eq!(n, 1);
        assert!(q.ack(l).unwrap());
        seen.push(v);
    }
    assert_eq!(
        seen,
        (1..=7).collect::<Vec<_>>(),
        "the others once each, in order"
    );
    assert_eq!(q.lease_stats().delivered, 10);
    let _ = std::fs::remove_file(&p);
}

#[test]
fn work_kill_points_lose_nothing() {
    // SAFETY: plain alarm; its default action ends the process on a hang.
    unsafe { libc::alarm(60) };
    int_points();
    str_points();
    poison();
}
