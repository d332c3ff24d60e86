//! Loom models of the ring: the real ring code under every interleaving
//! (within a preemption bound) of producers, consumers, batches, the
//! repair of dead reservations and stale hints. Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release --lib loom`.

use super::fixture::Repaired;
use super::SlotOps;
use crate::sync::Ordering;
use loom::sync::Arc;

/// The models below run the real ring code over Int32 slots (one-word
/// CAS, all loom atomics; values are small, so i32 is no restriction),
/// made with `Shared::new(cap, 0)`: repair with a zero bound, so a
/// consumer gives up any reservation it meets at once, the harshest
/// schedule for the producers.
type Shared = Repaired<i32>;

fn push_all(s: &Shared, vals: &[i32]) {
    for &v in vals {
        while s.ring().try_push(v).is_err() {
            loom::thread::yield_now();
        }
    }
}

/// Spin loops multiply loom's schedules; a preemption bound of 3 keeps
/// the search finite while still covering every interleaving that
/// needs fewer than four forced switches (all the classic ring bugs
/// need one or two).
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

fn pop_n(s: &Shared, n: usize) -> Vec<i32> {
    let mut got = Vec::new();
    while got.len() < n {
        match s.ring().try_pop() {
            Ok(v) => got.push(v),
            Err(_) => loom::thread::yield_now(),
        }
    }
    got
}

/// One producer, one consumer, capacity 2, three items (so the ring
/// laps): FIFO, nothing lost, nothing duplicated.
#[test]
fn loom_spsc_fifo_across_a_lap() {
    model(|| {
        let s = Arc::new(Shared::new(2, 0));
        let p = {
            let s = s.clone();
            loom::thread::spawn(move || push_all(&s, &[1, 2, 3]))
        };
        assert_eq!(pop_n(&s, 3), vec![1, 2, 3]);
        p.join().unwrap();
        assert_eq!(s.ring().len(), 0);
    });
}

/// Try each value once (no spinning: loom explores every interleaving
/// of the single attempt); returns the ones that went in.
fn try_push_each(s: &Shared, vals: &[i32]) -> Vec<i32> {
    vals.iter()
        .copied()
        .filter(|&v| s.ring().try_push(v).is_ok())
        .collect()
}

fn drain(s: &Shared) -> Vec<i32> {
    let mut got = Vec::new();
    while let Ok(v) = s.ring().try_pop() {
        got.push(v);
    }
    got
}

fn from(got: &[i32], tens: i32) -> Vec<i32> {
    got.iter().copied().filter(|v| v / 10 == tens).collect()
}

/// Two producers race for the two slots while the main thread pops
/// once: whatever was accepted arrives exactly once, each producer's
/// items in order, and nothing rejected appears.
#[test]
fn loom_two_producers_one_consumer_at_capacity_two() {
    model(|| {
        let s = Arc::new(Shared::new(2, 0));
        let a = {
            let s = s.clone();
            loom::thread::spawn(move || try_push_each(&s, &[10, 11]))
        };
        let b = {
            let s = s.clone();
            loom::thread::spawn(move || try_push_each(&s, &[20, 21]))
        };
        let mut got: Vec<i32> = s.ring().try_pop().into_iter().collect();
        let pushed_a = a.join().unwrap();
        let pushed_b = b.join().unwrap();
        got.extend(drain(&s));
        assert_eq!(from(&got, 1), pushed_a);
        assert_eq!(from(&got, 2), pushed_b);
        assert_eq!(got.len(), pushed_a.len() + pushed_b.len());
        assert!(got.len() <= 3, "capacity 2 plus one pop: {got:?}");
    });
}

/// Two consumers race for two items: each item is taken exactly once.
#[test]
fn loom_two_consumers_never_duplicate() {
    model(|| {
        let s = Arc::new(Shared::new(2, 0));
        assert_eq!(try_push_each(&s, &[1, 2]), vec![1, 2]);
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_pop().ok())
        };
        let mine = s.ring().try_pop().ok();
        let theirs = c.join().unwrap();
        let mut all: Vec<i32> = mine.into_iter().chain(theirs).chain(drain(&s)).collect();
        all.sort_unstable();
        assert_eq!(all, vec![1, 2]);
    });
}

/// Fill a fresh ring with `pre`, pop `skip` of them (so later pushes
/// cross the lap boundary), and return it.
fn primed(cap: usize, pre: &[i32], skip: usize) -> Arc<Shared> {
    let s = Arc::new(Shared::new(cap, 0));
    assert_eq!(try_push_each(&s, pre), pre);
    for &want in &pre[..skip] {
        assert_eq!(s.ring().try_pop(), Ok(want));
    }
    s
}

/// A producer pushes a batch (two attempts) while a consumer, giving
/// up reservations at once, pops a batch of two and then one item:
/// whatever the producer counted as pushed comes out once, in order,
/// after what was there before; nothing else comes out.
fn batch_push_vs_pop(cap: usize, pre: &'static [i32], skip: usize, batch: &'static [i32]) {
    model(move || {
        let s = primed(cap, pre, skip);
        let p = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let r = s.ring();
                let n1 = r.try_push_batch(batch).unwrap_or(0);
                let n2 = r.try_push_batch(&batch[n1..]).unwrap_or(0);
                batch[..n1 + n2].to_vec()
            })
        };
        let mut buf = [0i32; 2];
        let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
        let mut got = buf[..n].to_vec();
        got.extend(s.ring().try_pop().ok());
        let pushed = p.join().unwrap();
        got.extend(drain(&s));
        let mut want = pre[skip..].to_vec();
        want.extend(&pushed);
        assert_eq!(got, want);
    });
}

#[test]
fn loom_batch_push_vs_concurrent_pop_at_capacity_two() {
    batch_push_vs_pop(2, &[1], 0, &[2, 3, 4]);
}

#[test]
fn loom_batch_push_vs_concurrent_pop_at_capacity_four() {
    batch_push_vs_pop(4, &[1, 2, 3], 2, &[4, 5, 6, 7]);
}

/// A consumer takes two batches (single attempts) while a producer
/// pushes items one by one: FIFO, nothing lost, nothing duplicated.
fn batch_pop_vs_push(
    cap: usize,
    pre: &'static [i32],
    skip: usize,
    pushes: &'static [i32],
    run: usize,
) {
    model(move || {
        let s = primed(cap, pre, skip);
        let p = {
            let s = s.clone();
            loom::thread::spawn(move || try_push_each(&s, pushes))
        };
        let mut got = Vec::new();
        for _ in 0..2 {
            let mut buf = [0i32; 4];
            let n = s.ring().try_pop_batch(&mut buf[..run]).unwrap_or(0);
            got.extend(&buf[..n]);
        }
        let pushed = p.join().unwrap();
        got.extend(drain(&s));
        let mut want = pre[skip..].to_vec();
        want.extend(&pushed);
        assert_eq!(got, want);
    });
}

#[test]
fn loom_batch_pop_vs_concurrent_push_at_capacity_two() {
    batch_pop_vs_push(2, &[1, 2], 1, &[3, 4], 3);
}

#[test]
fn loom_batch_pop_vs_concurrent_push_at_capacity_four() {
    batch_pop_vs_push(4, &[1, 2, 3, 4], 2, &[5, 6, 7], 4);
}

/// Two batch producers race at capacity four while the main thread pops
/// a batch: each producer's accepted items arrive once and in order.
#[test]
fn loom_two_batch_producers_never_overlap() {
    model(|| {
        let s = primed(4, &[1], 1);
        let spawn = |vals: &'static [i32]| {
            let s = s.clone();
            loom::thread::spawn(move || {
                let n = s.ring().try_push_batch(vals).unwrap_or(0);
                vals[..n].to_vec()
            })
        };
        let a = spawn(&[10, 11, 12]);
        let b = spawn(&[20, 21]);
        let mut buf = [0i32; 4];
        let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
        let mut got = buf[..n].to_vec();
        let (pa, pb) = (a.join().unwrap(), b.join().unwrap());
        got.extend(drain(&s));
        assert_eq!(from(&got, 1), pa);
        assert_eq!(from(&got, 2), pb);
        assert_eq!(got.len(), pa.len() + pb.len());
    });
}

/// Two batch consumers race for three items: each is taken once, and
/// each consumer's run is in queue order.
#[test]
fn loom_two_batch_consumers_never_duplicate() {
    model(|| {
        let s = primed(4, &[1, 2, 3], 0);
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let mut buf = [0i32; 2];
                let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
                buf[..n].to_vec()
            })
        };
        let mut buf = [0i32; 2];
        let n = s.ring().try_pop_batch(&mut buf).unwrap_or(0);
        let mine = buf[..n].to_vec();
        let theirs = c.join().unwrap();
        for run in [&mine, &theirs] {
            assert!(run.windows(2).all(|w| w[0] < w[1]), "{run:?}");
        }
        let mut all: Vec<i32> = mine.into_iter().chain(theirs).chain(drain(&s)).collect();
        all.sort_unstable();
        assert_eq!(all, vec![1, 2, 3]);
    });
}

/// Slot repair: a producer "dies" right after reserving two positions
/// (it never publishes). A live producer pushes after it and a
/// consumer, repairing at once, must get the live item: the dead
/// reservation never wedges the ring, and nothing appears twice.
#[test]
fn loom_dead_reservation_is_passed() {
    model(|| {
        let s = Arc::new(Shared::new(4, 0));
        let dead = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let _ = s
                    .tail
                    .compare_exchange(0, 2, Ordering::SeqCst, Ordering::Relaxed);
            })
        };
        let live = {
            let s = s.clone();
            loom::thread::spawn(move || try_push_each(&s, &[7]))
        };
        let pushed = live.join().unwrap();
        dead.join().unwrap();
        let got = drain(&s);
        assert_eq!(got, pushed, "the live item, once; nothing from the hole");
        let skipped = s.st.skipped.load(Ordering::Relaxed);
        assert_eq!(s.ring().pushed() - skipped, pushed.len() as u64);
        assert_eq!(s.ring().popped() - skipped, pushed.len() as u64);
    });
}

/// Slot repair against a live but slow producer: it reserved two
/// positions and publishes them while a consumer gives up whatever it
/// finds unpublished. The producer's publish CAS and the consumer's
/// give-up CAS race on each slot; whatever the producer counts as
/// pushed arrives once and in order, the rest it still holds.
#[test]
fn loom_slow_reservation_races_the_repair() {
    model(|| {
        let s = Arc::new(Shared::new(4, 0));
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_pop().ok())
        };
        let n = s.ring().try_push_batch(&[1, 2]).unwrap_or(0);
        let pushed = [1, 2][..n].to_vec();
        let mut got: Vec<i32> = c.join().unwrap().into_iter().collect();
        got.extend(drain(&s));
        assert_eq!(got, pushed);
    });
}

/// A producer killed between its slot CAS and its tail store, and a
/// consumer killed between its slot CAS and its head store, leave only
/// stale hints: a later producer and consumer carry on in order.
#[test]
fn loom_stale_hints_after_a_kill() {
    model(|| {
        let s = Arc::new(Shared::new(2, 0));
        // "Killed" producer: published position 0, tail still 0.
        assert!(s.slots[0].publish(0, 1));
        let p = {
            let s = s.clone();
            loom::thread::spawn(move || try_push_each(&s, &[2, 3]))
        };
        // "Killed" consumer: takes position 0, head stays 0.
        let first = s.slots[0].take(0, 2);
        let pushed = p.join().unwrap();
        let rest = drain(&s);
        assert_eq!(first, Some(1));
        assert_eq!(rest, pushed);
    });
}

/// Hints three laps behind the slots, as a process preempted before
/// its hint store leaves them (and under loom every walk over done
/// slots leaps at once), then on another 2^32 lap of the narrow
/// sequences: a producer and two consumers racing from there lose and
/// duplicate nothing, and each consumer takes in order.
#[test]
fn loom_hints_far_behind() {
    for lag in [6u64, (1 << 31) + 6] {
        model(move || {
            let s = Arc::new(Shared::new(2, 0));
            let start = 1u64 << 33;
            for p in start..start + 2 {
                s.slots[(p & 1) as usize].init(p & !1);
            }
            s.head.store(start - lag, Ordering::Relaxed);
            s.tail.store(start - lag, Ordering::Relaxed);
            let p = {
                let s = s.clone();
                loom::thread::spawn(move || try_push_each(&s, &[1, 2]))
            };
            let c = {
                let s = s.clone();
                loom::thread::spawn(move || s.ring().try_pop().ok())
            };
            let mine = s.ring().try_pop().ok();
            let pushed = p.join().unwrap();
            assert_eq!(pushed, [1, 2], "room for both, lag {lag:#x}");
            let theirs = c.join().unwrap();
            let rest = drain(&s);
            let mut all: Vec<i32> = mine.into_iter().chain(theirs).chain(rest).collect();
            all.sort_unstable();
            assert_eq!(all, pushed, "lag {lag:#x}");
        });
    }
}
