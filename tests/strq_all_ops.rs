//! Every operation of `StrQueue` at once from four threads: push,
//! push_front, push_multi and push_wait at both ends; pop, pop_back,
//! pop_multi with a byte budget, peek, pop_wait at both ends, pop_lease
//! with ack or release, and clear. Every item comes out whole and at most
//! once, and the counts add up (from the review of the two-lock split).

use data_queue_shared::{Deadline, StrQueue, Waited};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;
fn pattern(id: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (id.wrapping_mul(131).wrapping_add(i as u64 * 7) % 251) as u8)
        .collect()
}
fn item(id: u64, len: usize) -> Vec<u8> {
    let mut s = format!("{id}:").into_bytes();
    s.extend(pattern(id, len));
    s
}
fn parse(s: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(s);
    let id: u64 = text.split(':').next().unwrap().parse().expect("id");
    let prefix = format!("{id}:").len();
    assert_eq!(
        &s[prefix..],
        &pattern(id, s.len() - prefix)[..],
        "item {id} whole"
    );
    id
}

#[test]
fn every_operation_at_once_with_clear_and_leases() {
    const PER: u64 = 6_000;
    const PRODUCERS: u64 = 2;
    let q = Arc::new(StrQueue::anonymous(8, 4096).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let cleared = Arc::new(AtomicU64::new(0));
    let received = Arc::new(Mutex::new(Vec::<u64>::new()));
    let mut hs = vec![];
    for p in 0..PRODUCERS {
        let q = q.clone();
        hs.push(std::thread::spawn(move || {
            let mut rng = Rng(0x1234 + p);
            let t0 = std::time::Instant::now();
            let mut i = 0;
            while i < PER {
                assert!(t0.elapsed().as_secs() < 120, "watchdog");
                let id = p * PER + i;
                let len = match rng.below(10) {
                    0 => 0,
                    1 => 2040 - format!("{id}:").len(), // half the arena
                    _ => rng.below(600) as usize,
                };
                let s = item(id, len);
                let ok = match rng.below(6) {
                    0 => q.push_front(&s, false).unwrap(),
                    1 if i + 1 < PER => {
                        let s2 = item(id + 1, rng.below(100) as usize);
                        let batch: [(&[u8], bool); 2] = [(&s, false), (&s2, false)];
                        let n = q.push_multi(&batch).unwrap();
                        i += n as u64;
                        if n > 0 {
                            continue;
                        }
                        false
                    }
                    2 => {
                        let d = Deadline::after_secs(0.001);
                        q.push_wait(&s, false, rng.below(2) == 0, &d).unwrap() == Waited::Done(())
                    }
                    _ => q.push(&s, false).unwrap(),
                };
                if ok {
                    i += 1;
                } else {
                    std::thread::yield_now();
                }
            }
        }));
    }
    let mut cs = vec![];
    for c in 0..2u64 {
        let (q, stop, cleared, received) =
            (q.clone(), stop.clone(), cleared.clone(), received.clone());
        cs.push(std::thread::spawn(move || {
            let mut rng = Rng(0xC0FFEE + c);
            let mut got = vec![];
            let (mut out, mut items) = (Vec::new(), Vec::new());
            let t0 = std::time::Instant::now();
            while !stop.load(Ordering::Relaxed) {
                assert!(t0.elapsed().as_secs() < 120, "watchdog");
                match rng.below(40) {
                    0 if c == 0 => {
                        cleared.fetch_add(q.clear(), Ordering::Relaxed);
                    }
                    1..=4 => {
                        out.clear();
                        items.clear();
                        q.pop_multi(3, Some(1500), &mut out, &mut items);
                        for &(s, l, _) in &items {
                            got.push(parse(&out[s..s + l]));
                        }
                    }
                    5..=8 => match q.pop_lease(Some(10.0), &mut out) {
                        Ok(Some((_, lease))) => {
                            let id = parse(&out);
                            if rng.below(2) == 0 {
                                assert!(q.ack(lease).unwrap());
                                got.push(id);
                            } else {
                                assert!(q.release(lease).unwrap());
                            }
                        }
                        Ok(None) => std::thread::yield_now(),
                        // Returned items keep their bytes in the area until they fit back.
                        Err(data_queue_shared::LeaseError::AreaFull { .. }) => {
                            std::thread::yield_now()
                        }
                        Err(e) => panic!("pop_lease: {e:?}"),
                    },
                    9 => {
                        if q.peek(&mut out).is_some() {
                            parse(&out);
                        }
                    }
                    10..=12 => {
                        let d = Deadline::after_secs(0.001);
                        if let Waited::Done(_) = q.pop_wait(rng.below(2) == 0, &mut out, &d) {
                            got.push(parse(&out));
                        }
                    }
                    n => {
                        if q.pop(n % 3 == 0, &mut out).is_some() {
                            got.push(parse(&out));
                        } else {
                            std::thread::yield_now();
                        }
                    }
                }
                let s = q.stats();
                // The size counts items back from leases that wait in
                // the lease table (64 records) for room.
                assert!(s.size <= 8 + 64 && s.arena_used <= 4096, "{s:?}");
            }
            received.lock().unwrap().extend(got);
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for h in cs {
        h.join().unwrap();
    }
    let mut all = received.lock().unwrap().clone();
    let mut out = Vec::new();
    while q.pop(false, &mut out).is_some() {
        all.push(parse(&out));
    }
    let mut seen = HashSet::new();
    for id in &all {
        assert!(seen.insert(*id), "duplicate {id}");
    }
    let s = q.stats();
    let cl = cleared.load(Ordering::Relaxed);
    assert_eq!((s.size, s.arena_used), (0, 0), "{s:?}");
    assert_eq!(
        seen.len() as u64 + cl,
        PRODUCERS * PER,
        "every item received once or cleared"
    );
    // A release re-pushes at the front (push_ok), its lease pop counted in pop_ok.
    assert_eq!(s.push_ok, s.pop_ok + cl, "{s:?}");
}
