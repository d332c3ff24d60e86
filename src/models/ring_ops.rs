//! Loom models of the ring (format 7): the real ring code under every
//! interleaving (within a preemption bound) of producers, consumers and
//! batches, each thread a model "process" with its own intent record and
//! repair on; the repair of dead owners' positions (process death is the
//! lock's model, `model_deaths`), and live owners never repaired. Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release --lib loom`.

use crate::lock::model_deaths::mark_dead;
use crate::ring::fixture::Repaired;
use crate::ring::records::Side;
use crate::ring::{Miss, SlotOps};
use crate::sync::Ordering;
use loom::sync::Arc;

/// The models below run the real ring code over Int32 slots (one word,
/// all loom atomics; values are small, so i32 is no restriction), with a
/// record table of 6 (model pids 1..=5; the main thread is pid 1).
type Shared = Repaired<i32>;

fn shared(cap: usize) -> Arc<Shared> {
    Arc::new(Shared::new(cap, 6))
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

fn push_all(s: &Shared, pid: u32, vals: &[i32]) {
    for &v in vals {
        while s.as_pid(pid).try_push(v).is_err() {
            loom::thread::yield_now();
        }
    }
}

fn pop_n(s: &Shared, pid: u32, n: usize) -> Vec<i32> {
    let mut got = Vec::new();
    while got.len() < n {
        match s.as_pid(pid).try_pop() {
            Ok(v) => got.push(v),
            Err(_) => loom::thread::yield_now(),
        }
    }
    got
}

/// Try each value once (no spinning: loom explores every interleaving
/// of the single attempt); returns the ones that went in.
fn try_push_each(s: &Shared, pid: u32, vals: &[i32]) -> Vec<i32> {
    vals.iter()
        .copied()
        .filter(|&v| s.as_pid(pid).try_push(v).is_ok())
        .collect()
}

/// Pop until the ring says empty (a live peer's position in flight is
/// waited for: every peer has finished when this runs).
fn drain(s: &Shared) -> Vec<i32> {
    let mut got = Vec::new();
    loop {
        match s.as_pid(1).try_pop() {
            Ok(v) => got.push(v),
            Err(Miss::InFlight) => loom::thread::yield_now(),
            Err(Miss::Settled) => return got,
        }
    }
}

fn from(got: &[i32], tens: i32) -> Vec<i32> {
    got.iter().copied().filter(|v| v / 10 == tens).collect()
}

/// One producer, one consumer, capacity 2, three items (so the ring
/// laps): FIFO, nothing lost, nothing duplicated.
#[test]
fn loom_spsc_fifo_across_a_lap() {
    model(|| {
        let s = shared(2);
        let p = {
            let s = s.clone();
            loom::thread::spawn(move || push_all(&s, 2, &[1, 2, 3]))
        };
        assert_eq!(pop_n(&s, 1, 3), vec![1, 2, 3]);
        p.join().unwrap();
        assert_eq!(s.ring().len(), 0);
        assert_eq!(s.recoveries.load(Ordering::Relaxed), 0);
    });
}

/// Two producers race for the two slots while the main thread pops
/// once: whatever was accepted arrives exactly once, each producer's
/// items in order, and nothing rejected appears.
#[test]
fn loom_two_producers_one_consumer_at_capacity_two() {
    model(|| {
        let s = shared(2);
        let a = {
            let s = s.clone();
            loom::thread::spawn(move || try_push_each(&s, 2, &[10, 11]))
        };
        let b = {
            let s = s.clone();
            loom::thread::spawn(move || try_push_each(&s, 3, &[20, 21]))
        };
        let mut got: Vec<i32> = s.as_pid(1).try_pop().into_iter().collect();
        let pushed_a = a.join().unwrap();
        let pushed_b = b.join().unwrap();
        got.extend(drain(&s));
        assert_eq!(from(&got, 1), pushed_a);
        assert_eq!(from(&got, 2), pushed_b);
        assert_eq!(got.len(), pushed_a.len() + pushed_b.len());
        assert!(got.len() <= 3, "capacity 2 plus one pop: {got:?}");
        assert_eq!(s.recoveries.load(Ordering::Relaxed), 0);
    });
}

/// Two consumers race for two items: each item is taken exactly once.
#[test]
fn loom_two_consumers_never_duplicate() {
    model(|| {
        let s = shared(2);
        assert_eq!(try_push_each(&s, 1, &[1, 2]), vec![1, 2]);
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || s.as_pid(2).try_pop().ok())
        };
        let mine = s.as_pid(1).try_pop().ok();
        let theirs = c.join().unwrap();
        let mut all: Vec<i32> = mine.into_iter().chain(theirs).chain(drain(&s)).collect();
        all.sort_unstable();
        assert_eq!(all, vec![1, 2]);
    });
}

/// Fill a fresh ring with `pre`, pop `skip` of them (so later pushes
/// cross the lap boundary), and return it.
fn primed(cap: usize, pre: &[i32], skip: usize) -> Arc<Shared> {
    let s = shared(cap);
    assert_eq!(try_push_each(&s, 1, pre), pre);
    for &want in &pre[..skip] {
        assert_eq!(s.as_pid(1).try_pop(), Ok(want));
    }
    s
}

/// A producer pushes a batch (two attempts) while a consumer pops a batch
/// of two and then one item: whatever the producer counted as pushed comes
/// out once, in order, after what was there before; nothing else comes
/// out, and nothing is repaired (everybody lives).
fn batch_push_vs_pop(cap: usize, pre: &'static [i32], skip: usize, batch: &'static [i32]) {
    model(move || {
        let s = primed(cap, pre, skip);
        let p = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let r = s.as_pid(2);
                let n1 = r.try_push_batch(batch).unwrap_or(0);
                let n2 = r.try_push_batch(&batch[n1..]).unwrap_or(0);
                batch[..n1 + n2].to_vec()
            })
        };
        let mut buf = [0i32; 2];
        let n = s.as_pid(1).try_pop_batch(&mut buf).unwrap_or(0);
        let mut got = buf[..n].to_vec();
        got.extend(s.as_pid(1).try_pop().ok());
        let pushed = p.join().unwrap();
        got.extend(drain(&s));
        let mut want = pre[skip..].to_vec();
        want.extend(&pushed);
        assert_eq!(got, want);
        assert_eq!(s.recoveries.load(Ordering::Relaxed), 0);
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
            loom::thread::spawn(move || try_push_each(&s, 2, pushes))
        };
        let mut got = Vec::new();
        for _ in 0..2 {
            let mut buf = [0i32; 4];
            let n = s.as_pid(1).try_pop_batch(&mut buf[..run]).unwrap_or(0);
            got.extend(&buf[..n]);
        }
        let pushed = p.join().unwrap();
        got.extend(drain(&s));
        let mut want = pre[skip..].to_vec();
        want.extend(&pushed);
        assert_eq!(got, want);
        assert_eq!(s.recoveries.load(Ordering::Relaxed), 0);
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
        let spawn = |pid: u32, vals: &'static [i32]| {
            let s = s.clone();
            loom::thread::spawn(move || {
                let n = s.as_pid(pid).try_push_batch(vals).unwrap_or(0);
                vals[..n].to_vec()
            })
        };
        let a = spawn(2, &[10, 11, 12]);
        let b = spawn(3, &[20, 21]);
        let mut buf = [0i32; 4];
        let n = s.as_pid(1).try_pop_batch(&mut buf).unwrap_or(0);
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
                let n = s.as_pid(2).try_pop_batch(&mut buf).unwrap_or(0);
                buf[..n].to_vec()
            })
        };
        let mut buf = [0i32; 2];
        let n = s.as_pid(1).try_pop_batch(&mut buf).unwrap_or(0);
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

/// A batch run against single pushers and poppers: a batch producer and
/// a single producer race, while a single consumer pops twice and a batch
/// consumer takes what is left: each producer's items once and in order.
#[test]
fn loom_batch_run_vs_single_pushers_and_poppers() {
    model(|| {
        let s = shared(4);
        let a = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let n = s.as_pid(2).try_push_batch(&[10, 11]).unwrap_or(0);
                [10, 11][..n].to_vec()
            })
        };
        let b = {
            let s = s.clone();
            loom::thread::spawn(move || try_push_each(&s, 3, &[20]))
        };
        let mut got: Vec<i32> = (0..2).filter_map(|_| s.as_pid(1).try_pop().ok()).collect();
        let (pa, pb) = (a.join().unwrap(), b.join().unwrap());
        let mut buf = [0i32; 4];
        while let Ok(n) = s.as_pid(1).try_pop_batch(&mut buf) {
            got.extend(&buf[..n]);
        }
        assert_eq!(from(&got, 1), pa);
        assert_eq!(from(&got, 2), pb);
        assert_eq!(got.len(), pa.len() + pb.len());
        assert_eq!(s.recoveries.load(Ordering::Relaxed), 0);
    });
}

/// A producer (pid 2) dies right after reserving two positions (record,
/// then tail CAS: the kill point `int_push_claimed`), while a live
/// producer pushes after it and a consumer pops until it has the live
/// item: the dead run is given up (two recoveries, two skipped), the live
/// item comes out once, nothing else does.
#[test]
fn loom_dead_producers_run_is_repaired() {
    model(|| {
        let s = shared(4);
        let dead = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let r = s.as_pid(2);
                let _ = r.reserve(2);
                mark_dead(2);
            })
        };
        let live = {
            let s = s.clone();
            loom::thread::spawn(move || push_all(&s, 3, &[7]))
        };
        let got = pop_n(&s, 1, 1);
        dead.join().unwrap();
        live.join().unwrap();
        assert_eq!(got, vec![7]);
        assert_eq!(drain(&s), Vec::<i32>::new());
        let skipped = s.skipped.load(Ordering::Relaxed);
        assert_eq!(
            skipped,
            s.ring().pushed() - 1,
            "every dead position given up"
        );
        assert_eq!(s.recoveries.load(Ordering::Relaxed), skipped);
    });
}

/// A live producer's batch racing a consumer that repairs: whatever the
/// consumer gets is a prefix of the run in order, the rest comes out
/// after, and nothing is repaired. (Loom lets a yielding consumer's peer
/// run, so the producer always finishes during the consumer's short wait
/// here; the liveness question itself is in the `loom_stopped_*` models.)
#[test]
fn loom_live_producer_is_never_repaired() {
    model(|| {
        let s = shared(4);
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || s.as_pid(3).try_pop().ok())
        };
        let n = s.as_pid(2).try_push_batch(&[1, 2]).unwrap_or(0);
        let mut got: Vec<i32> = c.join().unwrap().into_iter().collect();
        got.extend(drain(&s));
        assert_eq!(got, [1, 2][..n].to_vec());
        assert_eq!(
            s.recoveries.load(Ordering::Relaxed),
            0,
            "a live run repaired"
        );
    });
}

/// A consumer (pid 2) dies right after claiming a run of two (the kill
/// point `int_pop_claimed`): producers of the next lap free its slots
/// (its items went with it), two recoveries, nothing skipped; a live
/// consumer gets the rest in order.
#[test]
fn loom_dead_consumers_run_is_freed() {
    model(|| {
        let s = primed(2, &[1, 2], 0);
        let dead = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let _ = s.as_pid(2).claim(2);
                mark_dead(2);
            })
        };
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || s.as_pid(3).try_pop().ok())
        };
        dead.join().unwrap();
        let early = c.join().unwrap();
        push_all(&s, 1, &[3, 4]);
        let mut got: Vec<i32> = early.into_iter().collect();
        got.extend(drain(&s));
        let lost = 2 - got.iter().filter(|&&v| v < 3).count() as u64;
        assert!(got.ends_with(&[3, 4]), "{got:?}");
        assert_eq!(s.recoveries.load(Ordering::Relaxed), lost);
        assert_eq!(s.skipped.load(Ordering::Relaxed), 0);
    });
}

/// A live consumer's claimed run racing a producer into the full ring:
/// the producer's item comes out once, after the run, and nothing is
/// repaired (see the note on the model above).
#[test]
fn loom_live_consumer_is_never_repaired() {
    model(|| {
        let s = primed(2, &[1, 2], 0);
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let mut buf = [0i32; 2];
                let n = s.as_pid(2).try_pop_batch(&mut buf).unwrap_or(0);
                buf[..n].to_vec()
            })
        };
        let pushed = try_push_each(&s, 3, &[3]);
        let mut got = c.join().unwrap();
        got.extend(drain(&s));
        let mut want = vec![1, 2];
        want.extend(pushed);
        assert_eq!(got, want);
        assert_eq!(
            s.recoveries.load(Ordering::Relaxed),
            0,
            "a live claim freed"
        );
    });
}

/// A repairer that dies between its claim of a hole and its give-up
/// (the hole stays unpublished behind `head`) is finished by a producer
/// of the next lap, counted as skipped.
#[test]
fn loom_dead_repairer_is_finished() {
    model(|| {
        let s = shared(2);
        // Pid 2 reserved position 0 and died; pid 3 claimed it as a
        // repairer and died too.
        s.as_pid(2);
        s.table[2].note(Side::Push, 0, 1);
        s.tail.store(1, Ordering::SeqCst);
        mark_dead(2);
        s.as_pid(3);
        s.table[3].note(Side::Pop, 0, 1);
        s.head.store(1, Ordering::SeqCst);
        mark_dead(3);
        let p = {
            let s = s.clone();
            loom::thread::spawn(move || push_all(&s, 4, &[5, 6]))
        };
        assert_eq!(pop_n(&s, 1, 2), vec![5, 6]);
        p.join().unwrap();
        assert_eq!(s.skipped.load(Ordering::Relaxed), 1);
        assert_eq!(s.recoveries.load(Ordering::Relaxed), 1);
        assert_eq!(s.slots[0].seq() as u64 & 1, 0, "slot 0 free again");
    });
}

/// A stopped (or merely slow) producer is alive: it reserves a run of two,
/// says so, and then waits (as under SIGSTOP) until the consumer has tried
/// to pop, and only then publishes. The consumer's try finds the reservation
/// unpublished, waits its short while, asks the records, finds a live
/// owner and reports `InFlight`: nothing is given up, and both items come
/// out afterwards in order. (Loom's yields let a running owner finish, so
/// only an owner that really waits shows the repair's liveness question.)
#[test]
fn loom_stopped_producer_is_never_repaired() {
    model(|| {
        let s = shared(4);
        let go = Arc::new(crate::sync::AtomicU64::new(0));
        let p = {
            let (s, go) = (s.clone(), go.clone());
            loom::thread::spawn(move || {
                let r = s.as_pid(2);
                let (t, m) = r.reserve(2).unwrap();
                go.store(1, Ordering::SeqCst);
                while go.load(Ordering::SeqCst) != 2 {
                    loom::thread::yield_now();
                }
                r.publish_run(t, &[1, 2][..m as usize]);
            })
        };
        while go.load(Ordering::SeqCst) == 0 {
            loom::thread::yield_now();
        }
        let first = s.as_pid(1).try_pop();
        assert_eq!(first, Err(Miss::InFlight), "reserved, not published");
        go.store(2, Ordering::SeqCst);
        p.join().unwrap();
        assert_eq!(drain(&s), vec![1, 2]);
        assert_eq!(
            s.recoveries.load(Ordering::Relaxed),
            0,
            "a live run repaired"
        );
    });
}

/// A stopped consumer is alive: it claims a run of two, says so, and then
/// waits until a producer has tried to push into the slot it has not freed; the
/// producer is told `InFlight`, never frees the slot under it, and the
/// consumer gets both items.
#[test]
fn loom_stopped_consumer_is_never_repaired() {
    model(|| {
        let s = primed(2, &[1, 2], 0);
        let go = Arc::new(crate::sync::AtomicU64::new(0));
        let c = {
            let (s, go) = (s.clone(), go.clone());
            loom::thread::spawn(move || {
                let r = s.as_pid(2);
                let (h, m) = r.claim(2).unwrap();
                go.store(1, Ordering::SeqCst);
                while go.load(Ordering::SeqCst) != 2 {
                    loom::thread::yield_now();
                }
                (0..m)
                    .map(|i| {
                        let p = h + i;
                        let v = r.slot(p).get();
                        r.slot(p).free(r.lap(p) + r.capacity(), v);
                        v
                    })
                    .collect::<Vec<i32>>()
            })
        };
        while go.load(Ordering::SeqCst) == 0 {
            loom::thread::yield_now();
        }
        let pushed = s.as_pid(1).try_push(3);
        assert_eq!(pushed, Err(Miss::InFlight), "claimed, not freed");
        go.store(2, Ordering::SeqCst);
        assert_eq!(c.join().unwrap(), vec![1, 2]);
        assert_eq!(drain(&s), Vec::<i32>::new());
        assert_eq!(
            s.recoveries.load(Ordering::Relaxed),
            0,
            "a live claim freed"
        );
    });
}
