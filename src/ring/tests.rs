//! White-box tests of the ring: slots, walks, repair and batches, single-
//! threaded and with threads (the loom models are in `loom.rs`).

use super::fixture::{RepairState, Repaired};
use super::*;

/// Loop counts for the single-threaded tests: a fiftieth under Miri,
/// which interprets every step (the full counts take it half an hour).
const fn rounds(n: i64) -> i64 {
    if cfg!(miri) {
        n / 50
    } else {
        n
    }
}

fn with_ring<T: Element, R>(cap: usize, f: impl FnOnce(&Ring<T>) -> R) -> R
where
    T::Slot: Default,
{
    with_ring_at::<T, R>(cap, 0, |r, _, _| f(r))
}

/// A ring of `cap` slots whose counters and slots start at position
/// `start`, with its counters.
fn with_ring_at<T: Element, R>(
    cap: usize,
    start: u64,
    f: impl FnOnce(&Ring<T>, &AtomicU64, &AtomicU64) -> R,
) -> R
where
    T::Slot: Default,
{
    let head = AtomicU64::new(start);
    let tail = AtomicU64::new(start);
    let slots = heap_slots::<T>(cap);
    let r = Ring::<T>::new(&head, &tail, &slots);
    // Each slot free for its position from `start` on (what it
    // stores: the position less the slot's index).
    for p in start..start + cap as u64 {
        slots[(p % cap as u64) as usize].init(p - p % cap as u64);
    }
    f(&r, &head, &tail)
}

#[test]
fn cas128_swaps_both_words_or_reports_them() {
    let s = Slot64::default();
    s.init(5);
    assert!(!s.publish(4, 1), "not free for position 4");
    assert!(s.publish(5, -7));
    assert_eq!((s.seq(), s.value()), (6, -7));
    assert!(!s.publish(5, 8), "a second publish for 5 must fail");
    assert_eq!(s.take(4, 9), None, "wrong position");
    assert_eq!(s.take(5, 9), Some(-7));
    assert_eq!(s.take(5, 9), None, "taken once");
    assert!(s.publish(9, i64::MIN));
    assert_eq!(s.value(), i64::MIN);
    assert!(i64::supported());
}

#[test]
fn word_slots_keep_sequence_and_value_apart() {
    let s = Slot16::default();
    s.init(u32::MAX as u64);
    assert!(s.publish(u32::MAX as u64, -2));
    assert_eq!(s.seq(), 0, "32-bit sequence wraps");
    assert_eq!(s.value(), -2);
    assert_eq!(s.word.load(Ordering::Relaxed) >> 48, 0, "padding stays 0");
    assert_eq!(s.take(u32::MAX as u64, 7), Some(-2));
    let s = Slot32::default();
    s.init(3);
    assert!(s.publish(3, i32::MIN));
    assert_eq!(s.take(3, 11), Some(i32::MIN));
    assert!(s.skip(11, 19));
    assert!(!s.skip(11, 19));
    assert_eq!(s.seq(), 19);
}

/// The format-5 encoding, word by word: a zeroed ring is empty, and a
/// slot stores its sequence less its index.
#[test]
fn slots_store_their_sequence_less_their_index() {
    let head = AtomicU64::new(0);
    let tail = AtomicU64::new(0);
    let slots = heap_slots::<i32>(4);
    let r = Ring::<i32>::new(&head, &tail, &slots);
    // All zero, as a new mapping: empty, with room for four.
    assert_eq!((r.len(), r.try_pop()), (0, Err(Miss::Settled)));
    let stored = || -> Vec<u32> {
        slots
            .iter()
            .map(|s| s.word.load(Ordering::Relaxed) as u32)
            .collect()
    };
    assert_eq!(r.try_push_batch(&[10, 11, 12, 13, 14]), Ok(4));
    // Published for positions 0..4: sequence p + 1, stored p + 1 - i.
    assert_eq!(stored(), [1, 1, 1, 1]);
    assert_eq!(r.try_pop(), Ok(10));
    assert_eq!(r.try_pop(), Ok(11));
    // Taken: sequence p + 4, stored 4 (free for positions 4 and 5).
    assert_eq!(stored(), [4, 4, 1, 1]);
    r.try_push(14).unwrap();
    // Position 4 in slot 0: sequence 5, stored 5.
    assert_eq!(stored(), [5, 4, 1, 1]);
    assert_eq!(slots[0].value(), 14);
    let mut out = [0; 4];
    assert_eq!(r.try_pop_batch(&mut out), Ok(3));
    assert_eq!(out[..3], [12, 13, 14]);
    // Positions 2, 3 and 4 taken: stored 4, 4 and 8.
    assert_eq!(stored(), [8, 4, 4, 4]);
}

#[test]
fn push_fails_when_full_and_pop_when_empty() {
    with_ring::<i64, _>(4, |r| {
        assert_eq!(r.try_pop(), Err(Miss::Settled));
        for i in 0..4 {
            r.try_push(i).unwrap();
        }
        assert_eq!(r.try_push(9), Err(Miss::Settled));
        assert_eq!(r.len(), 4);
        for i in 0..4 {
            assert_eq!(r.try_pop(), Ok(i));
        }
        assert_eq!(r.try_pop(), Err(Miss::Settled));
    });
}

#[test]
fn fifo_across_many_laps_for_every_width() {
    fn run<T: Element + PartialEq + std::fmt::Debug>()
    where
        T::Slot: Default,
    {
        with_ring::<T, _>(8, |r| {
            for lap in 0..rounds(1000) {
                for k in 0..5 {
                    r.try_push(T::from_i64(lap * 5 + k)).unwrap();
                }
                for k in 0..5 {
                    assert_eq!(r.try_pop().unwrap(), T::from_i64(lap * 5 + k));
                }
            }
            assert_eq!(r.pushed(), 5 * rounds(1000) as u64);
            assert_eq!(r.popped(), 5 * rounds(1000) as u64);
        });
    }
    run::<i64>();
    run::<i32>();
    run::<i16>();
}

#[test]
fn narrow_types_truncate_like_c() {
    assert_eq!(i32::from_i64(1 << 32 | 5), 5);
    assert_eq!(i16::from_i64(70000), 70000i64 as i16);
    assert_eq!(i16::from_i64(-1).to_i64(), -1);
}

#[test]
fn sequence_wraps_in_32_bits() {
    // Start the counters just below 2^32 so Int32 sequences wrap.
    let head = AtomicU64::new(0);
    let tail = AtomicU64::new(0);
    let slots = heap_slots::<i32>(4);
    let r = Ring::<i32>::new(&head, &tail, &slots);
    let start = (1u64 << 32) - 6;
    // Seed so that slot (p & 3) expects lap position p for p >= start.
    for p in start..start + 4 {
        slots[(p & 3) as usize].init(p & !3);
    }
    head.store(start, Ordering::Relaxed);
    tail.store(start, Ordering::Relaxed);
    for n in 0..100 {
        r.try_push(n).unwrap();
        r.try_push(n + 1000).unwrap();
        assert_eq!(r.try_pop(), Ok(n));
        assert_eq!(r.try_pop(), Ok(n + 1000));
    }
}

#[test]
fn peek_sees_front_without_taking_it() {
    with_ring::<i16, _>(2, |r| {
        assert_eq!(r.peek(), None);
        r.try_push(3).unwrap();
        r.try_push(4).unwrap();
        assert_eq!(r.peek(), Some(3));
        assert_eq!(r.len(), 2);
    });
}

#[test]
fn hints_left_behind_by_a_killed_process_are_stepped_over() {
    let head = AtomicU64::new(0);
    let tail = AtomicU64::new(0);
    let slots = heap_slots::<i64>(4);
    let r = Ring::<i64>::new(&head, &tail, &slots);
    r.init();
    // A producer published position 0 and died before moving `tail`.
    assert!(slots[0].publish(0, 10));
    assert_eq!(tail.load(Ordering::Relaxed), 0);
    assert_eq!((r.pushed(), r.len()), (1, 1));
    r.try_push(11).unwrap();
    assert_eq!(tail.load(Ordering::Relaxed), 2);
    // A consumer took position 0 and died before moving `head`.
    assert_eq!(slots[0].take(0, 4), Some(10));
    assert_eq!((r.popped(), r.len()), (1, 1));
    assert_eq!(r.peek(), Some(11));
    assert_eq!(r.try_pop(), Ok(11));
    assert_eq!(head.load(Ordering::Relaxed), 2);
    // Hints moved backwards by a slow peer's late store: still right.
    r.try_push_batch(&[12, 13, 14]).unwrap();
    tail.store(1, Ordering::Relaxed);
    head.store(0, Ordering::Relaxed);
    assert_eq!((r.pushed(), r.popped(), r.len()), (5, 2, 3));
    r.try_push(15).unwrap();
    assert_eq!(r.try_push(16), Err(Miss::Settled));
    let mut out = [0; 8];
    assert_eq!(r.try_pop_batch(&mut out), Ok(4));
    assert_eq!(out[..4], [12, 13, 14, 15]);
}

/// A hint written back late by a process preempted between its slot
/// CAS and its store lags by as many positions as its peers moved
/// meanwhile: far more than `MAX_WALK` (this left a full 2P2C ring
/// looking empty to every consumer, and all four processes asleep).
/// Every operation and count still finds the frontier, in every width,
/// even when the lag passes the narrow slots' 32-bit sequences.
#[test]
fn hints_far_behind_are_leapt_over() {
    fn run<T: Element + PartialEq + std::fmt::Debug>(lag: u64)
    where
        T::Slot: Default,
    {
        let start = 1u64 << 41;
        with_ring_at::<T, _>(16, start, |r, head, tail| {
            leap_over(r, head, tail, start, lag)
        });
    }
    fn leap_over<T: Element + PartialEq + std::fmt::Debug>(
        r: &Ring<T>,
        head: &AtomicU64,
        tail: &AtomicU64,
        start: u64,
        lag: u64,
    ) {
        let v = |i: i64| T::from_i64(i);
        let ctx = format!("{} lag {lag:#x}", std::any::type_name::<T>());
        // Hints `lag` behind wherever they are now.
        let back = |c: &AtomicU64| {
            c.store(
                c.load(Ordering::Relaxed).wrapping_sub(lag),
                Ordering::Relaxed,
            )
        };
        for i in 0..10 {
            back(tail);
            assert_eq!(r.try_push(v(i)), Ok(()), "{ctx} item {i}");
        }
        back(head);
        assert_eq!(r.peek(), Some(v(0)), "{ctx}");
        for i in 0..4 {
            back(head);
            assert_eq!(r.try_pop(), Ok(v(i)), "{ctx}");
        }
        back(head);
        back(tail);
        assert_eq!(r.len(), 6, "{ctx}");
        back(head);
        assert_eq!(r.peek(), Some(v(4)), "{ctx}");
        back(head);
        let mut out = [v(0); 3];
        assert_eq!(r.try_pop_batch(&mut out), Ok(3), "{ctx}");
        assert_eq!(out, [v(4), v(5), v(6)], "{ctx}");
        back(tail);
        assert_eq!(r.try_push_batch(&[v(10), v(11)]), Ok(2), "{ctx}");
        // Fill it up, then one more: full, not lost.
        for i in 12..23 {
            back(tail);
            assert_eq!(r.try_push(v(i)), Ok(()), "{ctx} item {i}");
        }
        back(tail);
        assert_eq!(r.try_push(v(99)), Err(Miss::Settled), "{ctx}");
        back(tail);
        assert_eq!(r.try_push_batch(&[v(99)]), Err(Miss::Settled), "{ctx}");
        back(head);
        back(tail);
        assert_eq!(r.len(), 16, "{ctx}");
        for i in 7..23 {
            back(head);
            assert_eq!(r.try_pop(), Ok(v(i)), "{ctx} item {i}");
        }
        back(head);
        assert_eq!(r.try_pop(), Err(Miss::Settled), "{ctx}");
        back(head);
        back(tail);
        assert_eq!(r.len(), 0, "{ctx}");
        // The searches wrote the frontier back to the hints, within
        // the slots' width (a narrow ring may stay on another lap).
        let width = if std::mem::size_of::<T>() == 8 {
            u64::MAX
        } else {
            u32::MAX as u64
        };
        assert_eq!(r.pushed() & width, (start + 23) & width, "{ctx}");
        assert_eq!(r.popped() & width, (start + 23) & width, "{ctx}");
    }
    let lags = [
        100_000,
        (1 << 31) + 7,
        (1 << 32) + 3,
        3 << 31,
        (1 << 40) + 1,
    ];
    for lag in lags {
        run::<i64>(lag);
        run::<i32>(lag);
        run::<i16>(lag);
    }
}

#[test]
fn batch_push_takes_the_free_prefix_and_batch_pop_the_published_run() {
    with_ring::<i64, _>(4, |r| {
        assert_eq!(r.try_push_batch(&[]), Ok(0));
        assert_eq!(r.try_pop_batch(&mut []), Ok(0));
        assert_eq!(r.try_pop_batch(&mut [0; 4]), Err(Miss::Settled));
        assert_eq!(r.try_push_batch(&[1, 2, 3, 4, 5, 6]), Ok(4));
        assert_eq!(r.tail.load(Ordering::Relaxed), 4, "one reservation");
        assert_eq!(r.try_push_batch(&[9]), Err(Miss::Settled));
        let mut out = [0; 3];
        assert_eq!(r.try_pop_batch(&mut out), Ok(3));
        assert_eq!(out, [1, 2, 3]);
        // Three slots are free again, across the lap boundary.
        assert_eq!(r.try_push_batch(&[5, 6, 7, 8]), Ok(3));
        let mut out = [0; 10];
        assert_eq!(r.try_pop_batch(&mut out), Ok(4));
        assert_eq!(out[..4], [4, 5, 6, 7]);
        assert_eq!(r.try_pop_batch(&mut out), Err(Miss::Settled));
        assert_eq!((r.pushed(), r.popped()), (7, 7));
    });
}

/// Reserve `n` positions from the current tail the way a batch
/// producer does, without publishing anything (a producer that stops
/// or dies right after its reservation).
fn reserve(tail: &AtomicU64, n: u64) -> u64 {
    tail.fetch_add(n, Ordering::SeqCst)
}

#[test]
fn an_unpublished_reservation_is_in_flight_until_published() {
    let head = AtomicU64::new(0);
    let tail = AtomicU64::new(0);
    let slots = heap_slots::<i64>(4);
    let r = Ring::<i64>::new(&head, &tail, &slots);
    r.init();
    assert_eq!(r.try_push_batch(&[1, 2]), Ok(2));
    let at = reserve(&tail, 1);
    let mut out = [0; 4];
    assert_eq!(r.try_pop_batch(&mut out), Ok(2));
    assert_eq!(out[..2], [1, 2]);
    assert_eq!(r.try_pop_batch(&mut out), Err(Miss::InFlight));
    assert_eq!(r.try_pop(), Err(Miss::InFlight));
    assert!(slots[(at & 3) as usize].publish(at & !3, 3));
    assert_eq!(r.try_pop_batch(&mut out), Ok(1));
    assert_eq!(out[0], 3);
    assert_eq!(r.try_pop_batch(&mut out), Err(Miss::Settled));
}

#[test]
fn a_stuck_reservation_is_given_up_after_the_bound_and_the_slow_producer_goes_on() {
    let head = AtomicU64::new(0);
    let tail = AtomicU64::new(0);
    let slots = heap_slots::<i32>(4);
    let st = RepairState::new(20_000_000);
    let r = Ring::<i32>::new(&head, &tail, &slots).with_repair(&st);
    r.init();
    let at = reserve(&tail, 2);
    r.try_push(7).unwrap(); // after the reservation
    let t0 = std::time::Instant::now();
    let got = loop {
        match r.try_pop() {
            Ok(v) => break v,
            Err(Miss::InFlight) => std::thread::yield_now(),
            Err(Miss::Settled) => panic!("a reservation is not empty"),
        }
    };
    let waited = t0.elapsed();
    assert_eq!(got, 7);
    assert!(waited.as_millis() >= 19, "given up after {waited:?}");
    assert_eq!(st.skipped.load(Ordering::Relaxed), 2);
    assert_eq!(st.recoveries.load(Ordering::Relaxed), 2);
    // The reserving producer wakes up: its publishes fail, nothing is
    // overwritten, and it pushes its items again.
    assert!(!slots[at as usize].publish(at & !3, 100));
    assert!(!slots[at as usize + 1].publish((at + 1) & !3, 101));
    assert_eq!(r.try_push_batch(&[100, 101]), Ok(2));
    let mut out = [0; 4];
    assert_eq!(r.try_pop_batch(&mut out), Ok(2));
    assert_eq!(out[..2], [100, 101]);
    assert_eq!((r.pushed(), r.popped()), (5, 5), "skips count as positions");
}

#[test]
fn a_dead_run_costs_one_wait_not_one_per_position() {
    let head = AtomicU64::new(0);
    let tail = AtomicU64::new(0);
    let slots = heap_slots::<i64>(8);
    let st = RepairState::new(20_000_000);
    let r = Ring::<i64>::new(&head, &tail, &slots).with_repair(&st);
    r.init();
    reserve(&tail, 4); // a batch producer reserved 4 and died
    r.try_push(7).unwrap();
    assert_eq!(r.try_pop(), Err(Miss::InFlight));
    let started = st.stuck_since.load(Ordering::Relaxed);
    let got = loop {
        match r.try_pop() {
            Ok(v) => break v,
            Err(Miss::InFlight) => std::thread::yield_now(),
            Err(Miss::Settled) => panic!("a reservation is not empty"),
        }
    };
    assert_eq!(got, 7);
    assert_eq!(st.skipped.load(Ordering::Relaxed), 4);
    // The clock started once, at the first position, and was handed on.
    assert_eq!(st.stuck_since.load(Ordering::Relaxed), started);
}

#[test]
#[cfg_attr(miri, ignore = "walks the whole MAX_WALK, which takes Miri hours")]
fn a_scribbled_sequence_under_a_reservation_does_not_hang_a_batch_pop() {
    // Slot 0's sequence neither free (0) nor published (1) for
    // position 0, with `tail` saying position 0 is reserved: the
    // repair's CAS from `seq == 0` can never succeed. Both pops must
    // return (found by scribble_fuzz, where clear spun for ever).
    for bad in [u64::MAX, u64::MAX - 4, 1 << 63 | 1] {
        let head = AtomicU64::new(0);
        let tail = AtomicU64::new(0);
        let slots = heap_slots::<i64>(4);
        let st = RepairState::new(0);
        let r = Ring::<i64>::new(&head, &tail, &slots).with_repair(&st);
        r.init();
        tail.store(3, Ordering::Relaxed);
        slots[0].init(bad);
        let mut out = [0; 4];
        assert!(r.try_pop_batch(&mut out).is_err(), "seq {bad}");
        assert!(r.try_pop().is_err(), "seq {bad}");
        assert_eq!(st.recoveries.load(Ordering::Relaxed), 0, "seq {bad}");
    }
}

#[test]
fn a_batch_whose_slots_were_taken_by_peers_keeps_its_order() {
    let head = AtomicU64::new(0);
    let tail = AtomicU64::new(0);
    let slots = heap_slots::<i64>(8);
    let r = Ring::<i64>::new(&head, &tail, &slots);
    r.init();
    // A peer with a stale tail hint fills position 1 inside what the
    // batch is about to reserve: reserve first, as the batch would...
    let p = reserve(&tail, 3);
    assert!(slots[1].publish(0, 50));
    // ...and publish as try_push_batch does after its CAS.
    let vals = [1, 2, 3];
    let n = r.publish_run(p, 3, &vals);
    assert_eq!(n, 2, "one value left for the next call");
    assert_eq!(r.try_push_batch(&vals[n..]), Ok(1));
    let mut out = [0; 8];
    assert_eq!(r.try_pop_batch(&mut out), Ok(4));
    assert_eq!(out[..4], [1, 50, 2, 3]);
}

#[test]
fn hostile_counters_and_sequences_never_hang_or_panic() {
    let head = AtomicU64::new(0);
    let tail = AtomicU64::new(0);
    let slots = heap_slots::<i32>(4);
    let st = RepairState::new(0);
    let r = Ring::<i32>::new(&head, &tail, &slots).with_repair(&st);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // Under Miri a few rounds: a scribbled counter can send an op on its
    // full MAX_WALK, which Miri interprets step by step.
    for _ in 0..if cfg!(miri) { 10 } else { 20_000 } {
        match rnd() % 4 {
            0 => head.store(rnd(), Ordering::Relaxed),
            1 => tail.store(rnd(), Ordering::Relaxed),
            _ => slots[(rnd() & 3) as usize]
                .word
                .store(rnd(), Ordering::Relaxed),
        }
        let _ = r.try_push(1);
        let _ = r.try_pop();
        let _ = r.try_push_batch(&[1, 2, 3]);
        let _ = r.try_pop_batch(&mut [0; 3]);
        let _ = r.peek();
        assert!(r.len() <= 4);
    }
}

#[test]
fn batches_stay_fifo_across_laps_and_32_bit_wrap_for_every_width() {
    fn run<T: Element + PartialEq + std::fmt::Debug>(start: u64)
    where
        T::Slot: Default,
    {
        with_ring_at::<T, _>(8, start, |r, _, _| wrap_batches(r, start));
    }
    fn wrap_batches<T: Element + PartialEq + std::fmt::Debug>(r: &Ring<T>, start: u64) {
        let mut next_in = 0i64;
        let mut next_out = 0i64;
        for round in 0..rounds(2000) {
            let k = (round % 11 + 1) as usize;
            let vals: Vec<T> = (0..k as i64).map(|i| T::from_i64(next_in + i)).collect();
            let n = r.try_push_batch(&vals).unwrap_or(0);
            next_in += n as i64;
            let mut out = vec![T::from_i64(0); (round % 7 + 1) as usize];
            let m = r.try_pop_batch(&mut out).unwrap_or(0);
            for v in &out[..m] {
                assert_eq!(
                    *v,
                    T::from_i64(next_out),
                    "{} start {start} round {round}",
                    std::any::type_name::<T>()
                );
                next_out += 1;
            }
            assert!(r.len() <= 8);
        }
        assert!(next_in > 2 * rounds(2000), "batches moved {next_in} items");
        assert_eq!(r.pushed() - start, next_in as u64);
    }
    for start in [0, (1u64 << 32) - 13] {
        run::<i64>(start);
        run::<i32>(start);
        run::<i16>(start);
    }
}

/// Two producers (batches of varying size, or single pushes) and two
/// consumers (batches or single pops) on a ring of 16, with the
/// repair bound at 0 so reservations are given up as soon as a
/// consumer meets one: nothing lost, nothing duplicated, each
/// producer's items in order at each consumer.
fn threads_mixed(batches: bool, after_ns: u64) {
    use std::sync::Arc;
    let s = Arc::new(Repaired::<i64>::new(16, after_ns));
    const PER: i64 = 20_000;
    let mut producers = vec![];
    for p in 0..2i64 {
        let s = s.clone();
        producers.push(std::thread::spawn(move || {
            let r = s.ring();
            let vals: Vec<i64> = (0..PER).map(|i| p * PER + i).collect();
            let mut i = 0usize;
            let mut k = 1usize;
            while i < vals.len() {
                let end = (i + k).min(vals.len());
                let res = if batches && p == 0 {
                    r.try_push_batch(&vals[i..end])
                } else {
                    r.try_push(vals[i]).map(|()| 1)
                };
                match res {
                    Ok(n) => i += n,
                    Err(_) => std::thread::yield_now(),
                }
                k = k % 9 + 1;
            }
        }));
    }
    let taken = Arc::new(AtomicU64::new(0));
    let mut consumers = vec![];
    for c in 0..2usize {
        let (s, taken) = (s.clone(), taken.clone());
        consumers.push(std::thread::spawn(move || {
            let r = s.ring();
            let mut got = vec![];
            let mut buf = [0i64; 12];
            let mut k = c + 1;
            while taken.load(Ordering::Relaxed) < 2 * PER as u64 {
                let res = if batches && c == 0 {
                    r.try_pop_batch(&mut buf[..k])
                } else {
                    r.try_pop().map(|v| {
                        buf[0] = v;
                        1
                    })
                };
                match res {
                    Ok(n) => {
                        got.extend_from_slice(&buf[..n]);
                        taken.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(_) => std::thread::yield_now(),
                }
                k = k % 12 + 1;
            }
            got
        }));
    }
    for p in producers {
        p.join().unwrap();
    }
    let mut all = vec![];
    for c in consumers {
        let got = c.join().unwrap();
        for p in 0..2 {
            let mine: Vec<i64> = got.iter().copied().filter(|v| v / PER == p).collect();
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "producer {p} reordered"
            );
        }
        all.extend(got);
    }
    all.sort_unstable();
    assert_eq!(all, (0..2 * PER).collect::<Vec<_>>());
    let r = s.ring();
    let skipped = s.st.skipped.load(Ordering::Relaxed);
    assert_eq!(r.pushed() - skipped, 2 * PER as u64);
    assert_eq!(r.popped() - skipped, 2 * PER as u64);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "concurrency is loom's (the Miri cas128 is not atomic against take)"
)]
fn threads_lose_and_duplicate_nothing() {
    threads_mixed(false, REPAIR_AFTER_NS);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "concurrency is loom's (the Miri cas128 is not atomic against take)"
)]
fn threads_with_batches_lose_and_duplicate_nothing_and_keep_order() {
    threads_mixed(true, REPAIR_AFTER_NS);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "concurrency is loom's (the Miri cas128 is not atomic against take)"
)]
fn threads_with_instant_repairs_lose_and_duplicate_nothing() {
    threads_mixed(true, 0);
}
