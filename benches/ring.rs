//! Single-process costs of the queues, with crossbeam's `ArrayQueue` (the
//! same Vyukov algorithm on the heap) as the in-process reference: of
//! `i64` for the integer pairs, of `Vec<u8>` for the string pair.
//!
//! `cargo bench --bench ring` prints the time per iteration: one push+pop
//! pair in `pair`, `str_pair`; a batch of 100 items pushed and popped in
//! `batch100` (divide by 100 for the cost per item, or read the
//! elements/second line); creating a queue of 2^20 slots in `create`.
//!
//! `floor` measures what the machine charges for the locked instructions
//! a pair cannot do without, with no queue around them: one
//! compare-and-swap per side, as every MPMC push+pop makes (crossbeam's
//! too), and for Int64 slots a 16-byte CAS on the push side. The cost of
//! a locked instruction differs between hosts by more than the queues
//! differ between versions (10 ns each on one of our development hosts,
//! 5 on another), so read the pairs against this row of the same run.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use crossbeam_queue::ArrayQueue;
use data_queue_shared::{IntQueue, StrQueue};

const CAP: u64 = 1024;

fn int_pair<T: data_queue_shared::Element>(c: &mut Criterion, name: &str) {
    let q = IntQueue::<T>::anonymous(CAP).unwrap();
    let v = T::from_i64(42);
    c.benchmark_group("pair").bench_function(name, |b| {
        b.iter(|| {
            q.push(black_box(v));
            // black_box of a plain value: an Option is stored in two halves
            // and reloaded whole, a store-forwarding stall (about 2.5 ns on
            // this machine) that would be charged to the queue.
            black_box(q.pop().unwrap_or(v))
        })
    });
}

fn pair(c: &mut Criterion) {
    int_pair::<i64>(c, "Int");
    int_pair::<i32>(c, "Int32");
    int_pair::<i16>(c, "Int16");
    let q = ArrayQueue::<i64>::new(CAP as usize);
    c.benchmark_group("pair")
        .bench_function("crossbeam ArrayQueue<i64>", |b| {
            b.iter(|| {
                let _ = q.push(black_box(42));
                black_box(q.pop().unwrap_or(0))
            })
        });
}

fn batch(c: &mut Criterion) {
    let mut g = c.benchmark_group("batch100");
    g.throughput(Throughput::Elements(100));
    let vals: Vec<i64> = (0..100).collect();
    let mut out = [0i64; 100];

    let q = IntQueue::<i64>::anonymous(CAP).unwrap();
    g.bench_function("Int push_multi+pop_multi", |b| {
        b.iter(|| {
            // As the C ABI calls it: an iterator over the caller's values.
            black_box(q.push_multi(black_box(&vals).iter().copied()));
            black_box(q.pop_multi(&mut out))
        })
    });
    g.bench_function("Int 100x push, 100x pop", |b| {
        b.iter(|| {
            for &v in black_box(&vals) {
                q.push(v);
            }
            for o in out.iter_mut() {
                *o = q.pop().unwrap_or(0);
            }
            black_box(&out);
        })
    });
    let q16 = IntQueue::<i16>::anonymous(CAP).unwrap();
    let vals16: Vec<i16> = (0..100).collect();
    let mut out16 = [0i16; 100];
    g.bench_function("Int16 push_slice+pop_multi", |b| {
        b.iter(|| {
            black_box(q16.push_slice(black_box(&vals16)));
            black_box(q16.pop_multi(&mut out16))
        })
    });
    let cq = ArrayQueue::<i64>::new(CAP as usize);
    g.bench_function("crossbeam ArrayQueue 100x push, 100x pop", |b| {
        b.iter(|| {
            for &v in black_box(&vals) {
                let _ = cq.push(v);
            }
            for o in out.iter_mut() {
                *o = cq.pop().unwrap_or(0);
            }
            black_box(&out);
        })
    });
    g.finish();
}

fn str_pair(c: &mut Criterion) {
    let mut g = c.benchmark_group("str_pair");
    let q = StrQueue::anonymous(CAP, 0).unwrap();
    let mut out = Vec::with_capacity(2048);
    for len in [8usize, 50, 1024] {
        let msg = vec![b'x'; len];
        g.bench_function(format!("Str {len}B"), |b| {
            b.iter(|| {
                q.push(black_box(&msg), false).unwrap();
                black_box(q.pop(false, &mut out).unwrap_or(false))
            })
        });
    }
    // The in-process reference: what a program that keeps its strings on
    // the heap pays for the same pair (an allocation and a copy on push,
    // the string handed back and freed on pop).
    let aq = ArrayQueue::<Vec<u8>>::new(CAP as usize);
    let msg = [b'x'; 50];
    g.bench_function("crossbeam ArrayQueue<Vec<u8>> 50B", |b| {
        b.iter(|| {
            let _ = aq.push(black_box(&msg[..]).to_vec());
            black_box(aq.pop().map_or(0, |v| v.len()))
        })
    });
    g.finish();
}

/// The floor of a push+pop pair on this machine: the locked instructions
/// alone, on one cache line as a pair's are, each depending on the last.
fn floor(c: &mut Criterion) {
    let mut g = c.benchmark_group("floor");
    // The expected values come from a counter kept in a register, so
    // that nothing but the two instructions is timed.
    let w = AtomicU64::new(0);
    let mut x = 0u64;
    g.bench_function("2 CAS (any MPMC pair)", |b| {
        b.iter(|| {
            let _ = w.compare_exchange(x, x + 1, Ordering::SeqCst, Ordering::Relaxed);
            let _ = w.compare_exchange(x + 1, x + 2, Ordering::SeqCst, Ordering::Relaxed);
            x += 2;
        })
    });
    #[cfg(target_arch = "x86_64")]
    {
        #[repr(C, align(16))]
        struct Pair(AtomicU64, AtomicU64);
        let p = Pair(AtomicU64::new(0), AtomicU64::new(0));
        let mut x = 0u64;
        g.bench_function("CMPXCHG16B + CAS (Int64 pair)", |b| {
            b.iter(|| {
                cas16(&p.0, x, x + 1);
                let _ =
                    p.0.compare_exchange(x + 1, x + 2, Ordering::SeqCst, Ordering::Relaxed);
                x += 2;
            })
        });
    }
    // The batch lever alone, with no queue around it: one CAS reserves
    // 100 positions and 100 Release stores of (value, seq) publish them;
    // one CAS claims them and 100 loads and Release stores free them. The
    // Int ring's batches (format 7) work this way (see the batch100
    // group); this row is the bound they can approach (per 100 items).
    let counters = [AtomicU64::new(0), AtomicU64::new(0)];
    let slots: Vec<[AtomicU64; 2]> = (0..100)
        .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
        .collect();
    let mut at = 0u64;
    g.bench_function("batch100 lever: 2 CAS + 200 stores", |b| {
        b.iter(|| {
            let _ = counters[0].compare_exchange(at, at + 100, Ordering::SeqCst, Ordering::Relaxed);
            for (i, s) in slots.iter().enumerate() {
                s[1].store(i as u64, Ordering::Relaxed);
                s[0].store(at + i as u64 + 1, Ordering::Release);
            }
            let _ = counters[1].compare_exchange(at, at + 100, Ordering::SeqCst, Ordering::Relaxed);
            let mut sum = 0u64;
            for (i, s) in slots.iter().enumerate() {
                sum = sum.wrapping_add(s[1].load(Ordering::Acquire));
                s[0].store(at + i as u64 + 100, Ordering::Release);
            }
            at += 100;
            black_box(sum)
        })
    });
    g.finish();
}

/// `lock cmpxchg16b` of the 16 bytes at `lo` (the queue's own is private),
/// from `(seq, 0)` to `(next, 0)`, as a push publishes (the value half
/// does not change the instruction's cost).
#[cfg(target_arch = "x86_64")]
fn cas16(lo: &AtomicU64, seq: u64, next: u64) {
    // SAFETY: `lo` is the first word of a 16-byte aligned pair of
    // atomics that live as long as the call; rbx is saved around the
    // instruction as LLVM may not give it out as an operand.
    unsafe {
        std::arch::asm!(
            "xchg {t}, rbx",
            "lock cmpxchg16b xmmword ptr [rdi]",
            "mov rbx, {t}",
            t = inout(reg) next => _,
            in("rdi") lo.as_ptr(),
            inout("rax") seq => _,
            inout("rdx") 0u64 => _,
            in("rcx") 0u64,
            options(nostack),
        );
    }
}

/// Creating (and dropping) a queue of 2^20 slots, the size the original
/// implementation's benchmark creates in every timed row. Format 5 writes
/// the header only (zeroed slots are an empty ring); a memfd's and a
/// file's time is mostly the kernel reserving their pages or blocks.
fn create(c: &mut Criterion) {
    const BIG: u64 = 1 << 20;
    let mut g = c.benchmark_group("create 2^20");
    g.bench_function("Int anonymous", |b| {
        b.iter(|| black_box(IntQueue::<i64>::anonymous(black_box(BIG)).unwrap()))
    });
    g.bench_function("Int16 anonymous", |b| {
        b.iter(|| black_box(IntQueue::<i16>::anonymous(black_box(BIG)).unwrap()))
    });
    let name = c"bench";
    g.bench_function("Int memfd", |b| {
        b.iter(|| black_box(IntQueue::<i64>::memfd(name, black_box(BIG)).unwrap()))
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
}

criterion_group! {
    name = benches;
    config = config();
    targets = floor, pair, batch, str_pair, create
}
criterion_main!(benches);
