//! Random operations on a queue (single, batch, blocking with a short
//! deadline, peek, clear, stats, size, settings), each announced in the
//! child's status so that a hang names the operation it was in.

use data_queue_shared::ring::Element;
use data_queue_shared::{Deadline, Error, IntQueue, StrQueue};

use crate::harness::Status;
use crate::lease::lease_op;
use crate::rng::Rng;

/// The element types, as far as the fuzzer needs them.
pub(crate) trait Val: Element + std::fmt::Debug {
    fn from_u64(u: u64) -> Self;
}
impl Val for i64 {
    fn from_u64(u: u64) -> Self {
        u as i64
    }
}
impl Val for i32 {
    fn from_u64(u: u64) -> Self {
        u as i32
    }
}
impl Val for i16 {
    fn from_u64(u: u64) -> Self {
        u as i16
    }
}

pub(crate) fn short() -> Deadline {
    Deadline::after_secs(0.001)
}

pub(crate) fn int_ops<T: Val>(q: &IntQueue<T>, rng: &mut Rng, st: &Status, n: u64) {
    let cap = q.capacity();
    let mut out = [T::from_u64(0); 40];
    let mut leases: Vec<u64> = Vec::new();
    for _ in 0..n {
        // Leases (format 6): whatever the table holds, a lease call
        // returns or fails with a `LeaseError`, never panics or hangs.
        if rng.chance(15) {
            lease_op(rng, st, &mut leases, q);
            continue;
        }
        match rng.below(13) {
            0 | 1 => {
                st.enter(1);
                q.push(T::from_u64(rng.next()));
            }
            2 | 3 => {
                st.enter(2);
                q.pop();
            }
            4 => {
                st.enter(3);
                let _ = q.push_wait(T::from_u64(rng.next()), &short());
            }
            5 => {
                st.enter(4);
                let _ = q.pop_wait(&short());
            }
            6 => {
                st.enter(5);
                let k = rng.below(40);
                let vals: Vec<T> = (0..k).map(|i| T::from_u64(i)).collect();
                let got = q.push_multi(vals.iter().copied());
                assert!(got as u64 <= k, "push_multi pushed {got} of {k}");
            }
            7 => {
                st.enter(6);
                let k = rng.below(40) as usize;
                let vals: Vec<T> = (0..k).map(|i| T::from_u64(i as u64)).collect();
                let got = q.push_slice(&vals);
                assert!(got <= k, "push_slice pushed {got} of {k}");
            }
            8 => {
                st.enter(7);
                let k = rng.below(41) as usize;
                let got = q.pop_multi(&mut out[..k]);
                assert!(got <= k, "pop_multi popped {got} into {k}");
            }
            9 => {
                st.enter(8);
                q.peek();
            }
            10 => {
                st.enter(9);
                // Items back from leases wait beside the ring (format 6):
                // up to `max_leases` more than the capacity.
                let n = q.len();
                let most = cap + q.region().geometry().max_leases;
                assert!(n <= most, "len {n} above capacity {cap} + leases");
                st.enter(12);
                q.is_full();
                st.enter(19);
                q.is_empty();
            }
            11 => {
                st.enter(10);
                let s = q.stats();
                let most = cap + q.region().geometry().max_leases;
                assert!(
                    s.size <= most,
                    "stats size {} above capacity {cap} + leases",
                    s.size
                );
                assert_eq!(s.capacity, cap);
            }
            _ => {
                if rng.chance(30) {
                    st.enter(11);
                    q.clear();
                }
            }
        }
    }
}

pub(crate) fn str_ops(q: &StrQueue, rng: &mut Rng, st: &Status, n: u64) {
    let cap = q.capacity();
    // The size counts the slots' items and those back from leases that
    // wait in the lease table for room (at most one per record).
    let most = cap.saturating_add(q.lease_stats().max_leases);
    let arena = q.stats().arena_cap;
    let mut buf = Vec::new();
    let mut items = Vec::new();
    let bytes: Vec<u8> = (0..6000u32).map(|i| (i * 7) as u8).collect();
    let len = |rng: &mut Rng| -> usize {
        match rng.below(10) {
            0 => 0,
            1 => rng.below(6000) as usize,
            _ => rng.below(300) as usize,
        }
    };
    let mut leases: Vec<u64> = Vec::new();
    for _ in 0..n {
        if rng.chance(15) {
            lease_op(rng, st, &mut leases, q);
            continue;
        }
        let op = rng.below(17);
        match op {
            0 | 1 => {
                st.enter(1);
                let _ = q.push(&bytes[..len(rng)], rng.chance(50));
            }
            15 => {
                // Compressed items (their slot flag, their frames) are
                // scribbled over too: a checked pop either gives an item or
                // says it could not decode one, nothing else.
                st.enter(20);
                buf.clear();
                let r = if rng.chance(50) {
                    q.pop_checked(rng.chance(50), &mut buf)
                } else {
                    q.peek_checked(&mut buf)
                };
                match r {
                    Ok(_) | Err(Error::Corrupt(_)) => {}
                    Err(e) => panic!("a checked pop failed with {e}"),
                }
            }
            16 => {
                st.enter(21);
                let min = [0, 1, 64, 500][rng.below(4) as usize];
                q.set_compress(min, [1, 3, -1][rng.below(3) as usize])
                    .unwrap();
            }
            2 => {
                st.enter(13);
                let _ = q.push_front(&bytes[..len(rng)], false);
            }
            3 | 4 => {
                st.enter(if op == 3 { 2 } else { 14 });
                buf.clear();
                if q.pop(op == 4, &mut buf).is_some() {
                    // A compressed item may be longer than the arena, never
                    // longer than the longest item pushed (its checksum
                    // holds).
                    assert!(
                        buf.len() as u64 <= arena.max(bytes.len() as u64),
                        "popped {} bytes from a {arena}-byte arena",
                        buf.len()
                    );
                }
            }
            5 => {
                st.enter(3);
                let _ = q.push_wait(&bytes[..len(rng)], false, false, &short());
            }
            6 => {
                st.enter(4);
                buf.clear();
                let _ = q.pop_wait(rng.chance(50), &mut buf, &short());
            }
            7 => {
                st.enter(5);
                let k = rng.below(20) as usize;
                let v: Vec<(&[u8], bool)> = (0..k).map(|_| (&bytes[..len(rng)], false)).collect();
                if let Ok(got) = q.push_multi(&v) {
                    assert!(got <= k, "push_multi pushed {got} of {k}");
                }
            }
            8 => {
                st.enter(7);
                buf.clear();
                items.clear();
                let k = rng.below(30) as usize;
                let budget = if rng.chance(50) {
                    Some(rng.below(5000))
                } else {
                    None
                };
                let got = q.pop_multi(k, budget, &mut buf, &mut items);
                assert!(got <= k, "pop_multi popped {got} of {k}");
                for &(off, l, _) in &items {
                    assert!(off + l <= buf.len(), "item {off}+{l} outside {}", buf.len());
                }
            }
            9 => {
                st.enter(15);
                buf.clear();
                items.clear();
                let k = rng.below(30) as usize;
                let got = q.pop_multi_budget(k, Some(rng.below(3000)), true, &mut buf, &mut items);
                assert!(got <= k, "pop_multi_budget popped {got} of {k}");
            }
            10 => {
                st.enter(8);
                buf.clear();
                q.peek(&mut buf);
            }
            11 => {
                st.enter(9);
                let n = q.len();
                assert!(
                    n <= most,
                    "len {n} above capacity {cap} and the lease records"
                );
                st.enter(12);
                q.is_full();
            }
            12 => {
                st.enter(10);
                let s = q.stats();
                assert!(
                    s.size <= most,
                    "stats size {} above capacity {cap} and the lease records",
                    s.size
                );
            }
            13 => {
                if rng.chance(30) {
                    st.enter(11);
                    q.clear();
                }
            }
            _ => {
                st.enter(17);
                // Mostly shorter than the takeover poll interval (10 ms); now
                // and then long enough to take a dead-looking lock over and
                // start from whatever state copy the scribbler left current.
                let t = if rng.chance(10) {
                    0.03
                } else {
                    0.0005 * rng.below(4) as f64
                };
                q.set_lock_timeout(Some(t));
            }
        }
    }
}
