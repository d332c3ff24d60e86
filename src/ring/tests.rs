//! White-box tests of the ring: slots, counters, repair and batches,
//! single-threaded and with threads (the loom models are in src/models/).

use super::fixture::{dead_tag, live_tag, Repaired};
use super::records::{self, Record, Side};
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
    assert_eq!(slots[0].get(), 14);
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
fn batch_push_takes_the_free_prefix_and_batch_pop_the_claimed_run() {
    with_ring::<i64, _>(4, |r| {
        assert_eq!(r.try_push_batch(&[1, 2]), Ok(2));
        assert_eq!(r.try_push_batch(&[3, 4, 5, 6]), Ok(2));
        assert_eq!(r.try_push_batch(&[7]), Err(Miss::Settled));
        let mut out = [0; 3];
        assert_eq!(r.try_pop_batch(&mut out), Ok(3));
        assert_eq!(out, [1, 2, 3]);
        assert_eq!(r.try_push_batch(&[5, 6, 7, 8]), Ok(3));
        let mut out = [0; 8];
        assert_eq!(r.try_pop_batch(&mut out), Ok(4));
        assert_eq!(out[..4], [4, 5, 6, 7]);
        assert_eq!(r.try_pop_batch(&mut out), Err(Miss::Settled));
        assert_eq!((r.pushed(), r.popped()), (7, 7));
    });
}

/// A ring of 4 with two records: record 1 owned by `owner`, which has
/// reserved position 2 (after items 1 and 2 at 0 and 1) and not
/// published it.
fn with_hole(owner: u64) -> Repaired<i64> {
    let s = Repaired::<i64>::new(4, 3);
    let r = s.ring_as(1, owner);
    r.try_push(1).unwrap();
    r.try_push(2).unwrap();
    // What a push does up to its kill point `int_push_claimed`.
    s.table[1].note(Side::Push, 2, 1);
    s.tail.store(3, Ordering::SeqCst);
    s
}

#[test]
fn a_dead_producers_hole_is_given_up() {
    let s = with_hole(dead_tag());
    let r = s.ring_as(2, live_tag());
    r.try_push(3).unwrap();
    assert_eq!(r.try_pop(), Ok(1));
    assert_eq!(r.try_pop(), Ok(2));
    assert_eq!(r.try_pop(), Ok(3), "the hole is given up and passed");
    assert_eq!(r.try_pop(), Err(Miss::Settled));
    assert_eq!(s.recoveries.load(Ordering::Relaxed), 1);
    assert_eq!(s.skipped.load(Ordering::Relaxed), 1);
    assert_eq!((r.pushed(), r.popped()), (4, 4));
}

#[test]
fn a_live_producers_hole_is_never_given_up() {
    let s = with_hole(live_tag());
    let r = s.ring_as(2, live_tag());
    assert_eq!(r.try_pop(), Ok(1));
    assert_eq!(r.try_pop(), Ok(2));
    for _ in 0..100 {
        assert_eq!(r.try_pop(), Err(Miss::InFlight), "waits for its producer");
    }
    assert_eq!(s.recoveries.load(Ordering::Relaxed), 0);
    // The producer goes on: its store lands, and the item comes out.
    s.slots[2].put(0, 30);
    assert_eq!(r.try_pop(), Ok(30));
    assert_eq!(s.recoveries.load(Ordering::Relaxed), 0);
}

#[test]
fn a_hole_no_record_covers_is_given_up() {
    // The reserver died and its record was claimed by somebody else (or
    // it died before... no: a reserver always has a record; a reclaimed
    // one no longer covers its positions).
    let s = with_hole(dead_tag());
    s.table[1].tag.store(live_tag(), Ordering::SeqCst);
    s.table[1].clear(Side::Push);
    let r = s.repairing();
    assert_eq!(r.try_pop(), Ok(1));
    assert_eq!(r.try_pop(), Ok(2));
    assert_eq!(r.try_pop(), Err(Miss::Settled), "given up: empty");
    assert_eq!(s.recoveries.load(Ordering::Relaxed), 1);
}

/// A ring of 4, full, whose first item (position 0) a consumer of record 1
/// owned by `owner` has claimed and not freed.
fn with_unfreed(owner: u64) -> Repaired<i64> {
    let s = Repaired::<i64>::new(4, 3);
    let r = s.ring_as(2, live_tag());
    for v in 1..=4 {
        r.try_push(v).unwrap();
    }
    // What a pop does up to its kill point `int_pop_claimed`.
    s.ring_as(1, owner);
    s.table[1].note(Side::Pop, 0, 1);
    s.head.store(1, Ordering::SeqCst);
    s
}

#[test]
fn a_dead_consumers_unfreed_slot_is_freed_by_a_producer() {
    let s = with_unfreed(dead_tag());
    let r = s.ring_as(2, live_tag());
    assert_eq!(r.try_push(5), Ok(()), "freed, and filled");
    assert_eq!(s.recoveries.load(Ordering::Relaxed), 1);
    assert_eq!(s.skipped.load(Ordering::Relaxed), 0, "its item was popped");
    let mut out = [0; 8];
    assert_eq!(r.try_pop_batch(&mut out), Ok(4));
    assert_eq!(out[..4], [2, 3, 4, 5]);
}

#[test]
fn a_live_consumers_unfreed_slot_is_never_freed() {
    let s = with_unfreed(live_tag());
    let r = s.ring_as(2, live_tag());
    for _ in 0..100 {
        assert_eq!(r.try_push(5), Err(Miss::InFlight), "waits for its consumer");
    }
    assert_eq!(r.try_push_batch(&[5, 6]), Err(Miss::InFlight));
    assert_eq!(s.recoveries.load(Ordering::Relaxed), 0);
    s.slots[0].free(4, 1);
    assert_eq!(r.try_push(5), Ok(()));
}

#[test]
fn a_repairer_killed_after_its_claim_is_finished_by_a_producer() {
    let s = with_hole(dead_tag());
    let r = s.ring_as(2, live_tag());
    assert_eq!(r.try_pop(), Ok(1));
    assert_eq!(r.try_pop(), Ok(2));
    // A repairer (record 0, dead) claimed position 2 and died before
    // giving it up.
    s.table[0].tag.store(dead_tag(), Ordering::SeqCst);
    s.table[0].note(Side::Pop, 2, 1);
    s.head.store(3, Ordering::SeqCst);
    for v in [3, 4, 5, 6] {
        assert_eq!(r.try_push(v), Ok(()), "push {v}");
    }
    assert_eq!(s.recoveries.load(Ordering::Relaxed), 1);
    assert_eq!(
        s.skipped.load(Ordering::Relaxed),
        1,
        "the hole held no item"
    );
    let mut out = [0; 8];
    assert_eq!(r.try_pop_batch(&mut out), Ok(4));
    assert_eq!(out[..4], [3, 4, 5, 6]);
}

#[test]
fn claims_take_free_or_dead_records_never_live_ones() {
    let t: Vec<Record> = (0..4).map(|_| Record::new()).collect();
    let me = live_tag();
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u64;
    assert_eq!(records::claim(&t, me, 7, tid, false), Some(1));
    assert_eq!(records::claim(&t, me, 8, tid, false), Some(2));
    assert_eq!(records::find_own(&t, me, 8, tid), Some(2));
    assert_eq!(records::find_own(&t, me, 8, tid + 1), None);
    t[3].tag.store(dead_tag(), Ordering::SeqCst);
    assert_eq!(records::claim(&t, me, 9, tid, false), None, "no free one");
    assert_eq!(
        records::claim(&t, me, 9, tid, true),
        Some(3),
        "a dead owner's"
    );
    assert_eq!(
        records::claim(&t, me, 10, tid, true),
        None,
        "all live: none"
    );
    assert_eq!(
        t[0].tag.load(Ordering::Relaxed),
        0,
        "overflow never claimed"
    );
    records::release_all(&t, me, 8);
    assert_eq!(t[2].tag.load(Ordering::Relaxed), 0);
    assert_eq!(t[1].tag.load(Ordering::Relaxed), me);
    let o = records::overflow_take(&t, me).unwrap();
    assert_eq!(t[0].tag.load(Ordering::Relaxed), me);
    records::overflow_give(o);
    // A dead holder's overflow record is taken over.
    t[0].tag.store(dead_tag(), Ordering::SeqCst);
    let o = records::overflow_take(&t, me).unwrap();
    records::overflow_give(o);
}

/// A live holder that does not let go of the overflow record (stopped,
/// or memory naming a live process): `overflow_take` gives up after its
/// bound instead of spinning for ever, and an operation that needed it
/// reports in flight.
#[test]
fn the_overflow_wait_is_bounded() {
    let t: Vec<Record> = (0..2).map(|_| Record::new()).collect();
    t[0].tag.store(live_tag(), Ordering::SeqCst);
    assert!(records::overflow_take(&t, live_tag()).is_none());
    assert_eq!(t[0].tag.load(Ordering::SeqCst), live_tag(), "not taken");
}

#[test]
fn hostile_counters_sequences_and_records_never_hang_or_panic() {
    let s = Repaired::<i32>::new(4, 2);
    let r = s.ring_as(1, live_tag());
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let t0 = std::time::Instant::now();
    for _ in 0..if cfg!(miri) { 10 } else { 3_000 } {
        match rnd() % 6 {
            0 => s.head.store(rnd(), Ordering::Relaxed),
            1 => s.tail.store(rnd(), Ordering::Relaxed),
            2 => s.table[0].push_lo.store(rnd() & 7, Ordering::Relaxed),
            3 => s.table[0]
                .tag
                .store(rnd() & 0xFFFF_FFFF_0000_0000, Ordering::Relaxed),
            _ => s.slots[(rnd() & 3) as usize]
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
    // Not a timing assertion: a report of how long the bounded loops took.
    eprintln!("hostile rounds took {:?}", t0.elapsed());
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
/// consumers (batches or single pops) on a ring of 16, each thread with
/// its own record, all alive: nothing lost, nothing duplicated, each
/// producer's items in order at each consumer, and nothing repaired.
fn threads_mixed(batches: bool) {
    use std::sync::Arc;
    let s = Arc::new(Repaired::<i64>::new(16, 5));
    const PER: i64 = 20_000;
    let mut producers = vec![];
    for p in 0..2i64 {
        let s = s.clone();
        producers.push(std::thread::spawn(move || {
            let r = s.ring_as(1 + p as usize, live_tag());
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
            let r = s.ring_as(3 + c, live_tag());
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
    assert_eq!(s.recoveries.load(Ordering::Relaxed), 0, "nobody died");
    assert_eq!(r.pushed(), 2 * PER as u64);
    assert_eq!(r.popped(), 2 * PER as u64);
}

#[test]
#[cfg_attr(miri, ignore = "concurrency is loom's")]
fn threads_lose_and_duplicate_nothing() {
    threads_mixed(false);
}

#[test]
#[cfg_attr(miri, ignore = "concurrency is loom's")]
fn threads_with_batches_lose_and_duplicate_nothing_and_keep_order() {
    threads_mixed(true);
}
