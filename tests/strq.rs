//! Black-box tests of `StrQueue`: only its public API, from threads and
//! files. The white-box unit tests (slots, state copies, the lock word,
//! forks that check it) and the model-based oracle are in `src/strq/`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use data_queue_shared::{Deadline, Error, IntQueue, StrQueue, Waited};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

fn pop_item(q: &StrQueue, back: bool) -> Option<(Vec<u8>, bool)> {
    let mut out = vec![0xAA; 3]; // must be cleared by pop
    q.pop(back, &mut out).map(|u| (out, u))
}

fn pattern(id: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (id.wrapping_mul(131).wrapping_add(i as u64 * 7) % 251) as u8)
        .collect()
}

fn temp_path(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "dqs-strq-{tag}-{}-{}.shm",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

#[test]
fn two_2000_byte_strings_fill_a_4096_arena_exactly() {
    let q = StrQueue::anonymous(16, 4096).unwrap();
    let a = vec![b'a'; 2000];
    let b = vec![b'b'; 2000];
    assert!(q.push(&a, false).unwrap());
    assert!(q.push(&b, false).unwrap());
    assert!(q.push(&[b'c'; 96], false).unwrap());
    assert_eq!(q.stats().arena_used, 4096);
    // Exactly full: nothing more fits, except an empty string.
    assert!(!q.push(b"x", false).unwrap());
    assert!(!q.push_front(b"x", false).unwrap());
    assert_eq!(q.stats().push_full, 2);
    assert!(q.push(b"", false).unwrap());
    assert_eq!(pop_item(&q, false).unwrap().0, a);
    assert_eq!(pop_item(&q, false).unwrap().0, b);
    assert_eq!(pop_item(&q, false).unwrap().0, vec![b'c'; 96]);
    assert_eq!(pop_item(&q, false).unwrap().0, b"");
    assert_eq!(pop_item(&q, false), None);
    assert_eq!(q.stats().arena_used, 0);
}

#[test]
fn push_front_items_stack_lifo_at_the_head() {
    let q = StrQueue::anonymous(8, 0).unwrap();
    q.push(b"tail", false).unwrap();
    for s in [&b"one"[..], b"two", b"three"] {
        assert!(q.push_front(s, false).unwrap());
    }
    let got: Vec<_> = std::iter::from_fn(|| pop_item(&q, false).map(|x| x.0)).collect();
    assert_eq!(
        got,
        vec![
            b"three".to_vec(),
            b"two".to_vec(),
            b"one".to_vec(),
            b"tail".to_vec()
        ]
    );
}

#[test]
fn arena_sizes_default_minimum_and_exact() {
    assert_eq!(
        StrQueue::anonymous(1024, 0).unwrap().stats().arena_cap,
        1024 * 256
    );
    assert_eq!(StrQueue::anonymous(2, 0).unwrap().stats().arena_cap, 4096);
    assert_eq!(StrQueue::anonymous(2, 100).unwrap().stats().arena_cap, 4096);
    let q = StrQueue::anonymous(2, 10_000).unwrap();
    let s = q.stats();
    assert_eq!(s.arena_cap, 10_000);
    // Then the default lease table (format 6) on a 64-byte boundary
    // (format 8: a 192-byte head, 64 records of 128 bytes, 64 dead-letter
    // records of 64 bytes), and a lease data area as large as the arena
    // (128 items of 5000 bytes would be more).
    let lease_off = (320 + 2 * 16 + 10_000 + 63) & !63;
    assert_eq!(s.mmap_size, lease_off + 192 + 64 * 128 + 64 * 64 + 10_000);
    assert!(StrQueue::anonymous(2, (1 << 32) + 1).is_err());
}

#[test]
fn push_multi_stops_at_the_first_item_that_does_not_fit() {
    let q = StrQueue::anonymous(16, 4096).unwrap();
    let (a, b, c, d) = (
        vec![1u8; 2000],
        vec![2u8; 2000],
        vec![3u8; 100],
        vec![4u8; 8],
    );
    let items: Vec<(&[u8], bool)> = vec![(&a, false), (&b, true), (&c, false), (&d, false)];
    // 96 bytes are left after two 2000s: 100 does not fit, and the 8
    // after it is not tried.
    assert_eq!(q.push_multi(&items).unwrap(), 2);
    assert_eq!(q.len(), 2);
    assert_eq!(q.stats().push_full, 1);
    assert_eq!(pop_item(&q, false).unwrap(), (a.clone(), false));
    assert_eq!(pop_item(&q, false).unwrap(), (b.clone(), true));

    // The slot count stops it too.
    let q = StrQueue::anonymous(2, 0).unwrap();
    let items: Vec<(&[u8], bool)> = vec![(b"x", false), (b"y", false), (b"z", false)];
    assert_eq!(q.push_multi(&items).unwrap(), 2);

    // An item that can never fit: an error, and nothing is pushed.
    let q = StrQueue::anonymous(16, 4096).unwrap();
    let big = vec![0u8; 5000];
    let items: Vec<(&[u8], bool)> = vec![(b"ok", false), (&big, false)];
    let e = q.push_multi(&items).unwrap_err();
    assert!(e.to_string().contains("5000"), "{e}");
    assert_eq!(q.len(), 0);
    assert_eq!(q.stats().push_ok, 0);
}

#[test]
fn pop_multi_respects_count_and_byte_budget() {
    let q = StrQueue::anonymous(16, 0).unwrap();
    for i in 0..5u64 {
        q.push(&pattern(i, 100), i % 2 == 1).unwrap();
    }
    let mut out = Vec::new();
    let mut items = Vec::new();
    // 100 + 100 <= 250, a third would make 300.
    assert_eq!(q.pop_multi(10, Some(250), &mut out, &mut items), 2);
    assert_eq!(items, vec![(0, 100, false), (100, 100, true)]);
    assert_eq!(&out[..100], &pattern(0, 100)[..]);
    assert_eq!(&out[100..], &pattern(1, 100)[..]);
    // A budget below the first item still returns that one item; the
    // output is appended to.
    assert_eq!(q.pop_multi(10, Some(10), &mut out, &mut items), 1);
    assert_eq!(items[2], (200, 100, false));
    assert_eq!(q.pop_multi(10, Some(0), &mut out, &mut items), 1);
    // The count limit.
    q.push(b"", false).unwrap();
    assert_eq!(q.pop_multi(1, None, &mut out, &mut items), 1);
    assert_eq!(q.pop_multi(10, None, &mut out, &mut items), 1);
    assert_eq!(items.last(), Some(&(500, 0, false)));
    assert_eq!(q.pop_multi(10, None, &mut out, &mut items), 0);
    assert_eq!(q.pop_multi(0, None, &mut out, &mut items), 0);
    let s = q.stats();
    assert_eq!((s.pop_ok, s.pop_empty, s.arena_used), (6, 1, 0));
}

#[test]
fn utf8_flag_round_trips_through_pop_peek_and_pop_back() {
    let q = StrQueue::anonymous(8, 0).unwrap();
    let s = "caf\u{e9} \u{263a}".as_bytes();
    q.push(s, true).unwrap();
    q.push(s, false).unwrap();
    q.push_front(b"plain", false).unwrap();
    q.push(b"", true).unwrap();
    let mut out = Vec::new();
    assert_eq!(q.peek(&mut out), Some(false));
    assert_eq!(out, b"plain");
    assert_eq!(q.pop(true, &mut out), Some(true));
    assert!(out.is_empty());
    assert_eq!(pop_item(&q, false).unwrap(), (b"plain".to_vec(), false));
    assert_eq!(q.peek(&mut out), Some(true));
    assert_eq!(pop_item(&q, false).unwrap(), (s.to_vec(), true));
    assert_eq!(pop_item(&q, true).unwrap(), (s.to_vec(), false));
    assert_eq!(q.peek(&mut out), None);
    assert!(out.is_empty());
}

#[test]
fn empty_string_is_an_item() {
    let q = StrQueue::anonymous(2, 0).unwrap();
    assert!(q.push(b"", false).unwrap());
    assert!(q.push_front(b"", true).unwrap());
    assert!(!q.push(b"", false).unwrap(), "two slots only");
    assert_eq!(q.len(), 2);
    assert_eq!(q.stats().arena_used, 0);
    assert_eq!(pop_item(&q, false), Some((vec![], true)));
    assert_eq!(pop_item(&q, false), Some((vec![], false)));
    assert_eq!(pop_item(&q, false), None);
}

#[test]
fn every_byte_value_round_trips() {
    let q = StrQueue::anonymous(8, 16384).unwrap();
    let all: Vec<u8> = (0..=255u8).collect();
    let nuls = vec![0u8; 77];
    let ffs = vec![0xFFu8; 1001];
    let rev: Vec<u8> = (0..=255u8).rev().cycle().take(3333).collect();
    for s in [&all, &nuls, &ffs, &rev] {
        q.push(s, false).unwrap();
    }
    q.push_front(&all, false).unwrap();
    assert_eq!(pop_item(&q, false).unwrap().0, all);
    for s in [&all, &nuls, &ffs, &rev] {
        assert_eq!(&pop_item(&q, false).unwrap().0, s);
    }
}

#[test]
fn waits_time_out_and_count() {
    let q = StrQueue::anonymous(2, 0).unwrap();
    let mut out = Vec::new();
    let d = Deadline::after_secs(0.02);
    assert_eq!(q.pop_wait(false, &mut out, &d), Waited::TimedOut);
    assert_eq!(q.stats().pop_empty, 1);
    q.push(b"a", false).unwrap();
    q.push(b"b", false).unwrap();
    let d = Deadline::after_secs(0.02);
    assert_eq!(
        q.push_wait(b"c", false, true, &d).unwrap(),
        Waited::TimedOut
    );
    assert_eq!(q.stats().push_full, 1);
    // Zero timeout: one try.
    let d = Deadline::after_secs(0.0);
    assert_eq!(q.pop_wait(true, &mut out, &d), Waited::Done(false));
    assert_eq!(out, b"b");
    assert_eq!(q.push_wait(b"c", true, true, &d).unwrap(), Waited::Done(()));
    assert_eq!(pop_item(&q, false).unwrap(), (b"c".to_vec(), true));
}

#[test]
fn blocked_pop_wakes_on_push_and_push_on_pop() {
    let q = Arc::new(StrQueue::anonymous(2, 4096).unwrap());
    let q2 = q.clone();
    let t = std::thread::spawn(move || {
        let mut out = Vec::new();
        let r = q2.pop_wait(true, &mut out, &Deadline::after_secs(30.0));
        (r, out)
    });
    wait_until(|| q.stats().pop_waiters == 1);
    q.push(b"wake", true).unwrap();
    assert_eq!(t.join().unwrap(), (Waited::Done(true), b"wake".to_vec()));

    // Arena full (one 4000-byte item): two producers of small strings
    // block; one pop must let *both* in.
    q.push(&[7; 4000], false).unwrap();
    let hs: Vec<_> = (0..2)
        .map(|i| {
            let q = q.clone();
            std::thread::spawn(move || {
                q.push_wait(&[i; 100], false, false, &Deadline::after_secs(30.0))
                    .unwrap()
            })
        })
        .collect();
    wait_until(|| q.stats().push_waiters == 2);
    assert_eq!(pop_item(&q, false).unwrap().0, vec![7; 4000]);
    for h in hs {
        assert_eq!(h.join().unwrap(), Waited::Done(()));
    }
    assert_eq!(q.len(), 2);
}

#[test]
fn clear_wakes_every_blocked_producer() {
    let q = Arc::new(StrQueue::anonymous(4, 0).unwrap());
    for i in 0..4u64 {
        q.push(&pattern(i, 10), false).unwrap();
    }
    let hs: Vec<_> = (0..3u64)
        .map(|i| {
            let q = q.clone();
            std::thread::spawn(move || {
                q.push_wait(&pattern(i, 5), false, i == 1, &Deadline::after_secs(30.0))
                    .unwrap()
            })
        })
        .collect();
    wait_until(|| q.stats().push_waiters == 3);
    assert_eq!(q.clear(), 4);
    for h in hs {
        assert_eq!(h.join().unwrap(), Waited::Done(()));
    }
    let s = q.stats();
    assert_eq!(
        (s.size, s.push_ok, s.pop_ok),
        (3, 7, 0),
        "cleared items are not pops"
    );
}

/// Poll `cond` until true; a 20 s watchdog instead of a timing assertion.
fn wait_until(cond: impl Fn() -> bool) {
    let t0 = std::time::Instant::now();
    while !cond() {
        assert!(
            t0.elapsed().as_secs() < 20,
            "watchdog: condition never held"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[test]
fn threads_two_producers_two_consumers_lose_and_duplicate_nothing() {
    const PER: u64 = 5_000;
    let q = Arc::new(StrQueue::anonymous(8, 4096).unwrap());
    let taken = Arc::new(AtomicUsize::new(0));
    let mut producers = vec![];
    for p in 0..2u64 {
        let q = q.clone();
        producers.push(std::thread::spawn(move || {
            let mut rng = Rng(0x9E37_79B9 + p);
            for i in 0..PER {
                let mut s = format!("{p}:{i}:").into_bytes();
                s.extend(pattern(i, rng.below(300) as usize));
                let r = q.push_wait(&s, p == 1, false, &Deadline::after_secs(30.0));
                assert_eq!(r.unwrap(), Waited::Done(()), "watchdog");
            }
        }));
    }
    let mut consumers = vec![];
    for c in 0..2 {
        let (q, taken) = (q.clone(), taken.clone());
        consumers.push(std::thread::spawn(move || {
            let mut got = vec![];
            let mut out = Vec::new();
            let mut items = Vec::new();
            let t0 = std::time::Instant::now();
            while taken.load(Ordering::Relaxed) < 2 * PER as usize {
                assert!(t0.elapsed().as_secs() < 60, "watchdog");
                if c == 0 {
                    let d = Deadline::after_secs(0.05);
                    if let Waited::Done(u) = q.pop_wait(false, &mut out, &d) {
                        got.push((out.clone(), u));
                        taken.fetch_add(1, Ordering::Relaxed);
                    }
                } else {
                    out.clear();
                    items.clear();
                    let n = q.pop_multi(3, Some(400), &mut out, &mut items);
                    for &(s, l, u) in &items {
                        got.push((out[s..s + l].to_vec(), u));
                    }
                    taken.fetch_add(n, Ordering::Relaxed);
                    if n == 0 {
                        std::thread::yield_now();
                    }
                }
            }
            got
        }));
    }
    for h in producers {
        h.join().unwrap();
    }
    let mut seen = std::collections::HashSet::new();
    for h in consumers {
        let got = h.join().unwrap();
        // Each consumer sees each producer's items in push order.
        let mut last = [None::<u64>; 2];
        for (s, u) in got {
            let text = String::from_utf8_lossy(&s);
            let mut parts = text.splitn(3, ':');
            let p: u64 = parts.next().unwrap().parse().unwrap();
            let i: u64 = parts.next().unwrap().parse().unwrap();
            assert_eq!(u, p == 1);
            let prefix = format!("{p}:{i}:").len();
            assert_eq!(&s[prefix..], &pattern(i, s.len() - prefix)[..]);
            assert!(
                last[p as usize].is_none_or(|l| l < i),
                "order within a producer"
            );
            last[p as usize] = Some(i);
            assert!(seen.insert((p, i)), "duplicate {p}:{i}");
        }
    }
    assert_eq!(seen.len(), 2 * PER as usize);
    let s = q.stats();
    assert_eq!(
        (s.push_ok, s.pop_ok, s.size, s.arena_used),
        (2 * PER, 2 * PER, 0, 0)
    );
    assert!(s.lock_acquired >= 4 * PER);
}

#[test]
fn file_queue_persists_and_refuses_other_variants_and_truncation() {
    let path = temp_path("file");
    let q = StrQueue::open(&path, 8, 5000, 0o600).unwrap();
    assert_eq!(
        q.path().unwrap().to_bytes(),
        path.as_os_str().as_encoded_bytes()
    );
    assert_eq!(q.fd(), -1);
    q.push(b"kept in the file", true).unwrap();
    q.sync().unwrap();
    drop(q);
    // Reopening attaches; the stored geometry wins over the request.
    let q = StrQueue::open(&path, 2, 0, 0o600).unwrap();
    assert_eq!((q.capacity(), q.stats().arena_cap), (8, 5000));
    assert_eq!(
        pop_item(&q, false).unwrap(),
        (b"kept in the file".to_vec(), true)
    );
    let len = q.stats().mmap_size;
    drop(q);

    let e = IntQueue::<i64>::open(&path, 8, 0o600).err().unwrap();
    assert!(matches!(e, Error::Incompatible { .. }), "{e}");

    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(len - 1).unwrap();
    let e = StrQueue::open(&path, 8, 5000, 0o600).err().unwrap();
    assert!(matches!(e, Error::Incompatible { .. }), "{e}");
    std::fs::remove_file(&path).unwrap();

    // And the reverse: an Int file opened as Str.
    let ipath = temp_path("int");
    let iq = IntQueue::<i64>::open(&ipath, 8, 0o600).unwrap();
    drop(iq);
    let e = StrQueue::open(&ipath, 8, 0, 0o600).err().unwrap();
    assert!(matches!(e, Error::Incompatible { .. }), "{e}");
    std::fs::remove_file(&ipath).unwrap();

    // unlink through the handle.
    let upath = temp_path("unlink");
    let q = StrQueue::open(&upath, 2, 0, 0o600).unwrap();
    q.unlink().unwrap();
    assert!(!upath.exists());
    assert!(StrQueue::anonymous(2, 0).unwrap().unlink().is_err());
}

#[test]
fn two_handles_on_one_file_at_once() {
    let path = temp_path("two");
    let q = StrQueue::open(&path, 8, 0, 0o600).unwrap();
    q.push(b"shared", false).unwrap();
    let p2 = path.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = StrQueue::open(&p2, 8, 0, 0o600).map(|q2| pop_item(&q2, false));
        tx.send(r.ok().flatten()).unwrap();
    });
    let got = rx.recv_timeout(std::time::Duration::from_secs(10));
    q.unlink().unwrap();
    drop(q); // unblocks a stuck opener either way
    assert_eq!(
        got.expect("second open blocked while the first handle maps the file"),
        Some((b"shared".to_vec(), false))
    );
}

#[test]
fn memfd_queue_attaches_by_fd() {
    let q = StrQueue::memfd(c"strq-test", 4, 0).unwrap();
    assert!(q.fd() >= 0);
    let q2 = StrQueue::from_fd(q.fd()).unwrap();
    q.push_front(b"via memfd", false).unwrap();
    assert_eq!(pop_item(&q2, true).unwrap().0, b"via memfd");
    assert!(IntQueue::<i64>::from_fd(q.fd()).is_err());
}

/// The two ends at once (format 7: a producer at the back and a consumer
/// at the front hold different locks), with the other ends mixed in: one
/// thread pushes at the back, one pushes at the front now and then, one
/// pops at the front, one pops at the back and in batches, all with
/// non-blocking calls retried, into a small arena that wraps all the
/// time. Every item comes out whole (its bytes are its id's pattern,
/// checked before anybody could have reused them), exactly once, and the
/// counters and the arena add up at the end.
#[test]
fn threads_at_both_ends_keep_every_item_whole() {
    const PER: u64 = 8_000;
    let q = Arc::new(StrQueue::anonymous(16, 4096).unwrap());
    let done = Arc::new(AtomicUsize::new(0));
    let item = |p: u64, i: u64, len: usize| {
        let mut s = format!("{p}:{i}:").into_bytes();
        s.extend(pattern(p * PER + i, len));
        s
    };
    let mut producers = vec![];
    for p in 0..2u64 {
        let q = q.clone();
        producers.push(std::thread::spawn(move || {
            let mut rng = Rng(0xB0F1 + p);
            let t0 = std::time::Instant::now();
            for i in 0..PER {
                let s = item(p, i, rng.below(700) as usize);
                let front = p == 1 && rng.below(3) == 0;
                loop {
                    assert!(t0.elapsed().as_secs() < 60, "watchdog");
                    let ok = if front {
                        q.push_front(&s, false)
                    } else {
                        q.push(&s, false)
                    };
                    if ok.unwrap() {
                        break;
                    }
                    std::thread::yield_now();
                }
            }
        }));
    }
    let mut consumers = vec![];
    for c in 0..2 {
        let (q, done) = (q.clone(), done.clone());
        consumers.push(std::thread::spawn(move || {
            let mut got = vec![];
            let (mut out, mut items) = (Vec::new(), Vec::new());
            let mut rng = Rng(0xC0 + c);
            let t0 = std::time::Instant::now();
            while done.load(Ordering::Relaxed) < 2 {
                assert!(t0.elapsed().as_secs() < 60, "watchdog");
                if c == 1 && rng.below(4) == 0 {
                    out.clear();
                    items.clear();
                    q.pop_multi(3, None, &mut out, &mut items);
                    for &(s, l, _) in &items {
                        got.push(out[s..s + l].to_vec());
                    }
                } else if q.pop(c == 1, &mut out).is_some() {
                    got.push(out.clone());
                } else {
                    std::thread::yield_now();
                }
            }
            got
        }));
    }
    for h in producers {
        h.join().unwrap();
        done.fetch_add(1, Ordering::Relaxed);
    }
    let mut all: Vec<Vec<u8>> = consumers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    while let Some((s, _)) = pop_item(&q, false) {
        all.push(s);
    }
    let mut seen = std::collections::HashSet::new();
    for s in &all {
        let text = String::from_utf8_lossy(s);
        let mut parts = text.splitn(3, ':');
        let p: u64 = parts.next().unwrap().parse().unwrap();
        let i: u64 = parts.next().unwrap().parse().unwrap();
        let prefix = format!("{p}:{i}:").len();
        assert_eq!(
            &s[prefix..],
            &pattern(p * PER + i, s.len() - prefix)[..],
            "item {p}:{i} whole"
        );
        assert!(seen.insert((p, i)), "duplicate {p}:{i}");
    }
    assert_eq!(seen.len(), 2 * PER as usize, "every item came out");
    let s = q.stats();
    assert_eq!(
        (s.push_ok, s.pop_ok, s.size, s.arena_used),
        (2 * PER, 2 * PER, 0, 0)
    );
}
