//! Cross-process throughput through an anonymous shared mapping, with
//! forked producers and consumers (what Perl programs do).
//!
//! Each sample forks the peers, moves `iters` items and waits for every
//! child; the time per iteration criterion prints is wall time per item,
//! fork and reap included (a few hundred microseconds against samples of
//! tens of milliseconds). Producers and consumers block with the queue's
//! own waits (spin, then futex), as `push_wait`/`pop_wait` do in Perl.
//!
//! On a 2-core machine the SPSC rows run one process per core; the 2P2C
//! rows oversubscribe the cores on purpose (four processes), so they
//! measure the futex path as much as the ring.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use data_queue_shared::{Deadline, IntQueue, StrQueue, Waited};

const CAP: u64 = 4096;

/// Run `f` in a forked child that exits with status 0 when `f` returns, 1
/// when it panics; never returns in the child.
fn spawn(f: impl FnOnce()) -> libc::pid_t {
    // SAFETY: the bench is single-threaded when it forks; the child only
    // touches the shared mapping and leaves with `_exit`, so no destructor
    // or atexit handler of the parent's state runs twice.
    match unsafe { libc::fork() } {
        -1 => panic!("fork: {}", std::io::Error::last_os_error()),
        0 => {
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_ok();
            // SAFETY: leaving the child without unwinding into criterion.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        pid => pid,
    }
}

fn reap(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid, "waitpid: {}", std::io::Error::last_os_error());
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child {pid} failed: status {status}"
    );
}

fn pop_int(q: &IntQueue<i64>, n: u64) -> i64 {
    let mut sum = 0i64;
    for _ in 0..n {
        match q.pop_wait(&Deadline::FOREVER) {
            Waited::Done(v) => sum = sum.wrapping_add(v),
            other => panic!("pop_wait: {other:?}"),
        }
    }
    sum
}

fn push_int(q: &IntQueue<i64>, from: u64, n: u64) {
    for i in from..from + n {
        assert_eq!(q.push_wait(i as i64, &Deadline::FOREVER), Waited::Done(()));
    }
}

/// Producer and consumer counts, items moved; returns wall time per item
/// scaled to `iters`.
fn int_run(q: &IntQueue<i64>, producers: u64, consumers: u64, iters: u64) -> Duration {
    let per_p = iters.div_ceil(producers);
    let total = per_p * producers;
    let per_c = total / consumers;
    assert_eq!(per_c * consumers, total);
    let start = Instant::now();
    let mut kids: Vec<_> = (0..producers)
        .map(|p| spawn(|| push_int(q, p * per_p, per_p)))
        .collect();
    kids.extend((1..consumers).map(|_| {
        spawn(|| {
            black_box(pop_int(q, per_c));
        })
    }));
    let sum = pop_int(q, per_c);
    for k in kids {
        reap(k);
    }
    let el = start.elapsed();
    if consumers == 1 {
        let want = (total as i128 * (total as i128 - 1) / 2) as i64;
        assert_eq!(sum, want, "lost or duplicated items");
    }
    el.mul_f64(iters as f64 / total as f64)
}

fn int_batch_run(q: &IntQueue<i64>, iters: u64) -> Duration {
    let start = Instant::now();
    let kid = spawn(|| {
        let vals: Vec<i64> = (0..100).collect();
        let mut left = iters;
        while left > 0 {
            let k = left.min(100) as usize;
            let mut done = 0;
            while done < k {
                let n = q.push_slice(&vals[done..k]);
                if n == 0 {
                    std::thread::yield_now();
                }
                done += n;
            }
            left -= k as u64;
        }
    });
    let mut out = [0i64; 256];
    let mut got = 0;
    let mut sum = 0i64;
    while got < iters {
        let n = q.pop_multi(&mut out);
        if n == 0 {
            std::thread::yield_now();
        }
        sum += out[..n].iter().sum::<i64>();
        got += n as u64;
    }
    reap(kid);
    let el = start.elapsed();
    let last = (iters % 100) as i64;
    let want = (iters / 100) as i64 * 4950 + last * (last - 1) / 2;
    assert_eq!((got, sum), (iters, want), "lost or duplicated items");
    el
}

fn str_run(q: &StrQueue, producers: u64, consumers: u64, iters: u64) -> Duration {
    let per_p = iters.div_ceil(producers);
    let total = per_p * producers;
    let per_c = total / consumers;
    let msg = [b'x'; 50];
    let consume = || {
        let mut out = Vec::with_capacity(64);
        for _ in 0..per_c {
            match q.pop_wait(false, &mut out, &Deadline::FOREVER) {
                Waited::Done(_) => assert_eq!(out.len(), 50),
                other => panic!("pop_wait: {other:?}"),
            }
        }
    };
    let start = Instant::now();
    let mut kids: Vec<_> = (0..producers)
        .map(|_| {
            spawn(|| {
                for _ in 0..per_p {
                    let r = q.push_wait(&msg, false, false, &Deadline::FOREVER);
                    assert_eq!(r.unwrap(), Waited::Done(()));
                }
            })
        })
        .collect();
    kids.extend((1..consumers).map(|_| spawn(consume)));
    consume();
    for k in kids {
        reap(k);
    }
    start.elapsed().mul_f64(iters as f64 / total as f64)
}

fn cross(c: &mut Criterion) {
    let mut g = c.benchmark_group("cross_process");
    g.throughput(Throughput::Elements(1));
    let q = IntQueue::<i64>::anonymous(CAP).unwrap();
    g.bench_function("Int SPSC", |b| b.iter_custom(|n| int_run(&q, 1, 1, n)));
    g.bench_function("Int SPSC batches of 100", |b| {
        b.iter_custom(|n| int_batch_run(&q, n))
    });
    g.bench_function("Int 2P2C", |b| b.iter_custom(|n| int_run(&q, 2, 2, n)));
    let sq = StrQueue::anonymous(CAP, 0).unwrap();
    g.bench_function("Str 50B SPSC", |b| b.iter_custom(|n| str_run(&sq, 1, 1, n)));
    g.bench_function("Str 50B 2P2C", |b| b.iter_custom(|n| str_run(&sq, 2, 2, n)));
    g.finish();
}

fn config() -> Criterion {
    // Few, long samples: fork costs and scheduler noise dominate short ones.
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = cross
}
criterion_main!(benches);
