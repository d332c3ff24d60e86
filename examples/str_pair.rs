//! A fixed amount of queue work for instruction counting under callgrind
//! (criterion's time-based loops make counts vary from run to run):
//!
//! ```text
//! cargo build --release --example str_pair
//! valgrind --tool=callgrind target/release/examples/str_pair str 50 1000000
//! ```
//!
//! Run it twice with different iteration counts and divide the difference
//! in `Ir` by the difference in iterations: that is the exact instruction
//! count of one push+pop pair, without the start-up.
//!
//! Modes: `str LEN N [BACKLOG]` (Str push+pop pairs of LEN bytes, with
//! BACKLOG items queued throughout, default none), `int N [BITS]` (Int
//! push+pop pairs; BITS 64, 32 or 16 for Int, Int32, Int16; default 64),
//! `strwait LEN N` (Str push_wait+pop_wait pairs, which never wait here), `strempty N` (Str pops of an empty queue, as a
//! consumer that polls makes them), `strmulti LEN N` (Str push_multi of
//! 100 + pop_multi).

use std::hint::black_box;

use data_queue_shared::{Element, IntQueue, StrQueue};

fn arg(a: &[String], i: usize, what: &str) -> usize {
    a.get(i)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("argument {i} ({what}) missing or not a number"))
}

fn int_pairs<T: Element>(n: usize) {
    let q = IntQueue::<T>::anonymous(1024).unwrap();
    for i in 0..n {
        q.push(black_box(T::from_i64(i as i64)));
        black_box(q.pop());
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    match a.get(1).map(String::as_str) {
        Some("str") => {
            let (len, n) = (arg(&a, 2, "LEN"), arg(&a, 3, "N"));
            let q = StrQueue::anonymous(1024, 0).unwrap();
            let msg = vec![b'x'; len];
            let mut out = Vec::with_capacity(2048);
            // Optional BACKLOG: items left queued, so that every pair works
            // on a queue that is neither empty nor full.
            for _ in 0..a.get(4).map_or(0, |_| arg(&a, 4, "BACKLOG")) {
                q.push(&msg, false).unwrap();
            }
            for _ in 0..n {
                q.push(black_box(&msg), false).unwrap();
                black_box(q.pop(false, &mut out));
            }
        }
        Some("strempty") => {
            let n = arg(&a, 2, "N");
            let q = StrQueue::anonymous(1024, 0).unwrap();
            let mut out = Vec::with_capacity(2048);
            for _ in 0..n {
                black_box(q.pop(false, &mut out));
            }
        }
        Some("strwait") => {
            let (len, n) = (arg(&a, 2, "LEN"), arg(&a, 3, "N"));
            let q = StrQueue::anonymous(1024, 0).unwrap();
            let msg = vec![b'x'; len];
            let mut out = Vec::with_capacity(2048);
            let d = data_queue_shared::Deadline::FOREVER;
            for _ in 0..n {
                black_box(q.push_wait(black_box(&msg), false, false, &d).unwrap());
                black_box(q.pop_wait(false, &mut out, &d));
            }
        }
        Some("strmulti") => {
            let (len, n) = (arg(&a, 2, "LEN"), arg(&a, 3, "N"));
            let q = StrQueue::anonymous(1024, 0).unwrap();
            let msg = vec![b'x'; len];
            let batch: Vec<(&[u8], bool)> = (0..100).map(|_| (&msg[..], false)).collect();
            let mut out = Vec::with_capacity(200 * len);
            let mut items = Vec::with_capacity(100);
            for _ in 0..n {
                black_box(q.push_multi(black_box(&batch)).unwrap());
                out.clear();
                items.clear();
                black_box(q.pop_multi(100, None, &mut out, &mut items));
            }
        }
        Some("int") => {
            let n = arg(&a, 2, "N");
            match a.get(3).map_or(64, |_| arg(&a, 3, "BITS")) {
                64 => int_pairs::<i64>(n),
                32 => int_pairs::<i32>(n),
                16 => int_pairs::<i16>(n),
                b => panic!("BITS is 64, 32 or 16, not {b}"),
            }
        }
        _ => panic!("usage: str_pair str LEN N [BACKLOG] | strwait LEN N | strempty N | strmulti LEN N | int N [BITS]"),
    }
}
