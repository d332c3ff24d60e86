//! White-box unit tests of `StrQueue`: what needs the slots, the state
//! copies or the lock word. Tests that need only the public API are in
//! `tests/strq.rs`; the model-based oracle is in `oracle.rs`.

use super::items::{copy_bytes, never_fits, LEN_PACKED, META_WASTE};
use super::*;
use crate::arena::align8;
use crate::futex::Deadline;
use crate::lock::LockGuard;
use crate::wait::Waited;

/// xorshift64*: deterministic, no crates.
pub(super) struct Rng(pub(super) u64);
impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub(super) fn pop_item(q: &StrQueue, back: bool) -> Option<(Vec<u8>, bool)> {
    let mut out = vec![0xAA; 3]; // must be cleared by pop
    q.pop(back, &mut out).map(|u| (out, u))
}

pub(super) fn pattern(id: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (id.wrapping_mul(131).wrapping_add(i as u64 * 7) % 251) as u8)
        .collect()
}

/// Sum of the charges (aligned length + waste) recorded in the slots of
/// the items present.
pub(super) fn slot_charges(q: &StrQueue) -> u64 {
    let (head, count, _) = q.view();
    (0..count)
        .map(|i| {
            let s = q.slot(head + i);
            align8(u64::from(s.len.load(Ordering::Relaxed)))
                + u64::from(s.meta.load(Ordering::Relaxed) & META_WASTE)
        })
        .sum()
}

pub(super) fn end_slot(q: &StrQueue, back: bool) -> (u64, u64) {
    let (head, count, _) = q.view();
    let s = q.slot(if back { head + count - 1 } else { head });
    (
        u64::from(s.off.load(Ordering::Relaxed)),
        u64::from(s.meta.load(Ordering::Relaxed) & META_WASTE),
    )
}

#[test]
fn copy_bytes_copies_exactly_n_bytes_at_every_length() {
    let src: Vec<u8> = (0..200u8)
        .map(|i| i.wrapping_mul(37).wrapping_add(1))
        .collect();
    for n in 0..=140 {
        for skew in 0..3 {
            let mut dst = vec![0xEEu8; 160];
            // SAFETY: `skew + n <= 142 < 200` and `1 + n < 160`.
            unsafe { copy_bytes(src.as_ptr().add(skew), dst.as_mut_ptr().add(1), n) };
            assert_eq!(dst[1..1 + n], src[skew..skew + n], "n {n} skew {skew}");
            assert_eq!(dst[0], 0xEE, "n {n}: byte before");
            assert!(
                dst[1 + n..].iter().all(|&b| b == 0xEE),
                "n {n}: bytes after"
            );
        }
    }
}

#[test]
fn wrap_waste_is_charged_and_given_back_by_pop_and_pop_back() {
    for back in [false, true] {
        let q = StrQueue::anonymous(16, 4096).unwrap();
        for (i, n) in [1000usize, 2000, 1000].iter().enumerate() {
            assert!(q.push(&pattern(i as u64, *n), false).unwrap());
        }
        assert_eq!(pop_item(&q, false).unwrap().0, pattern(0, 1000));
        // 96 bytes are left at the end: an 800-byte item wraps to 0.
        assert!(q.push(&pattern(9, 800), false).unwrap());
        assert_eq!(end_slot(&q, true), (0, 96));
        assert_eq!(q.stats().arena_used, 2000 + 1000 + 96 + 800);
        if back {
            assert_eq!(pop_item(&q, true).unwrap().0, pattern(9, 800));
            assert_eq!(q.stats().arena_used, 3000);
            // The waste came back: the end of the arena is usable again.
            assert!(q.push(&pattern(10, 96), false).unwrap());
            assert_eq!(end_slot(&q, true), (4000, 0));
        } else {
            pop_item(&q, false).unwrap();
            pop_item(&q, false).unwrap();
            assert_eq!(q.stats().arena_used, 96 + 800);
            assert_eq!(pop_item(&q, false).unwrap().0, pattern(9, 800));
            assert_eq!(q.stats().arena_used, 0);
        }
    }
}

#[test]
fn push_front_wraps_toward_the_end_and_frees_what_it_took() {
    let q = StrQueue::anonymous(16, 4096).unwrap();
    assert!(q.push(&pattern(1, 16), false).unwrap());
    assert!(q.push(&pattern(2, 16), false).unwrap());
    pop_item(&q, false).unwrap(); // the front item now starts at 16
    assert!(q.push_front(&pattern(3, 100), true).unwrap());
    assert_eq!(end_slot(&q, false), (4096 - 104, 16));
    assert_eq!(q.stats().arena_used, 16 + 104 + 16);
    let mut out = Vec::new();
    assert_eq!(q.peek(&mut out), Some(true));
    assert_eq!(out, pattern(3, 100));
    assert_eq!(pop_item(&q, true).unwrap().0, pattern(2, 16));
    assert_eq!(pop_item(&q, true).unwrap(), (pattern(3, 100), true));
    assert_eq!(q.stats().arena_used, 0);
}

#[test]
fn arena_resets_to_its_start_when_the_queue_empties() {
    let q = StrQueue::anonymous(16, 4096).unwrap();
    q.push(&[1; 1000], false).unwrap();
    q.push(&[2; 1000], false).unwrap();
    pop_item(&q, false).unwrap();
    pop_item(&q, true).unwrap();
    let (_, count, a) = q.view();
    assert_eq!((count, a.used), (0, 0));
    // The whole arena in one piece is available again.
    assert!(q.push(&[3; 4096], false).unwrap());
    assert_eq!(end_slot(&q, false), (0, 0));
}

#[test]
fn strings_that_can_never_fit_are_errors_naming_the_sizes() {
    let q = StrQueue::anonymous(4, 4096).unwrap();
    let e = q.push(&[0; 4097], false).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)));
    assert_eq!(
        e.to_string(),
        "string of 4097 bytes exceeds the arena of 4096 bytes"
    );
    assert!(q.push_front(&[0; 5000], false).is_err());
    assert!(q
        .push_wait(&[0; 5000], false, false, &Deadline::FOREVER)
        .is_err());
    assert!(q.push(&[0; 4096], false).unwrap());
    assert_eq!(q.stats().push_full, 0, "errors are not push_full");

    // Usable bytes are the arena rounded down to a multiple of 8; stats
    // reports the arena as requested.
    let q = StrQueue::anonymous(4, 4100).unwrap();
    assert_eq!(q.stats().arena_cap, 4100);
    let e = q.push(&[0; 4100], false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "string of 4100 bytes exceeds the arena of 4096 bytes"
    );
    assert!(q.push(&[0; 4096], false).unwrap());

    // The hard limit (an arena that large is not mapped in a test).
    let e = never_fits(MAX_ITEM + 1, 1 << 32).unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "string of {} bytes exceeds the maximum item size of {MAX_ITEM} bytes",
            MAX_ITEM + 1
        )
    );
    assert!(never_fits(MAX_ITEM, 1 << 32).is_none());
}

#[test]
fn every_push_and_pop_takes_the_lock_once_whichever_path_serves_it() {
    // The hot paths hand odd cases to the general code with the lock
    // still held: that must neither take it again nor count it twice,
    // and the outcome must be the general code's.
    let q = StrQueue::anonymous(4, 4096).unwrap();
    let mut roomy = Vec::with_capacity(4096);
    let mut locks = |what: &str, n: u64, op: &mut dyn FnMut(&mut Vec<u8>) -> bool| {
        let before = q.stats().lock_acquired;
        assert!(op(&mut roomy), "{what}");
        assert_eq!(q.stats().lock_acquired - before, n, "{what}: locks taken");
    };
    locks("short push", 1, &mut |_| q.push(b"abc", true).unwrap());
    locks("long push", 1, &mut |_| q.push(&[7; 2000], false).unwrap());
    locks("push after the back item", 1, &mut |_| {
        q.push(&[1; 1000], false).unwrap()
    });
    // 3008 bytes taken from 0: 1100 more fit neither after them nor
    // before them.
    locks("push that does not fit", 1, &mut |_| {
        !q.push(&[8; 1100], false).unwrap()
    });
    locks("pop into a buffer without room", 1, &mut |_| {
        let mut small = Vec::new();
        q.pop(false, &mut small) == Some(true) && small == b"abc"
    });
    locks("long pop", 1, &mut |o| {
        q.pop(false, o) == Some(false) && o[..] == [7; 2000]
    });
    // Now 2008 .. 3008 is taken: 1500 bytes wrap to the start.
    locks("wrapping push", 1, &mut |_| {
        q.push(&[2; 1500], false).unwrap()
    });
    assert_eq!(end_slot(&q, true), (0, 4096 - 3008));
    locks("pop", 1, &mut |o| {
        q.pop(false, o) == Some(false) && o[..] == [1; 1000]
    });
    locks("pop of the wrapped item", 1, &mut |o| {
        q.pop(false, o) == Some(false) && o[..] == [2; 1500]
    });
    // An empty queue, or one with every slot taken, is seen from
    // `current` without the lock.
    locks("pop when empty", 0, &mut |o| {
        q.pop(false, o).is_none() && o.is_empty()
    });
    locks("pop_back when empty", 0, &mut |o| {
        q.pop(true, o).is_none() && o.is_empty()
    });
    for _ in 0..4 {
        locks("short push", 1, &mut |_| q.push(b"x", false).unwrap());
    }
    locks("push with every slot taken", 0, &mut |_| {
        !q.push(b"y", false).unwrap()
    });
    locks("push_front with every slot taken", 0, &mut |_| {
        !q.push_front(b"y", false).unwrap()
    });
    assert_eq!(q.clear(), 4);
    let s = q.stats();
    assert_eq!(
        (s.push_ok, s.pop_ok, s.push_full, s.pop_empty),
        (8, 4, 3, 2)
    );
    // `clear` takes both locks: counted twice.
    assert_eq!((s.lock_acquired, s.lock_contended), (15, 0));
    assert_eq!((s.arena_used, q.len()), (0, 0));
}

/// A zstd frame (level 1, content size and checksum) of "hello" x 6
/// joined by spaces, as another build's producer would store it.
const HELLO_FRAME: [u8; 25] = [
    0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x23, 0x65, 0x00, 0x00, 0x30, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x20,
    0x01, 0x00, 0xb9, 0x4b, 0x11, 0x2b, 0xe1, 0x68, 0xe7,
];

#[test]
fn a_compressed_item_from_another_build_reads_back_or_names_the_feature() {
    // With room in `out` a front pop takes its fast path, which reads a
    // compressed item as none (`read_item::<false>`) and so hands it to
    // the general path, which decodes it; without room it goes there
    // anyway.
    for room in [0, 4096] {
        let q = StrQueue::anonymous(4, 4096).unwrap();
        q.push(&HELLO_FRAME, true).unwrap();
        q.push(b"next", false).unwrap();
        // Flag it compressed, as a producer with compression on would.
        let s = q.slot(0);
        let len = s.len.load(Ordering::Relaxed);
        s.len.store(len | LEN_PACKED, Ordering::Relaxed);
        let mut out = Vec::with_capacity(room);
        let r = q.pop_checked(false, &mut out);
        if cfg!(feature = "zstd") {
            assert_eq!(r.unwrap(), Some(true));
            assert_eq!(out, b"hello hello hello hello hello hello");
        } else {
            let e = r.unwrap_err();
            assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
            assert!(e.to_string().contains("lacks the zstd feature"), "{e}");
            assert!(out.is_empty());
        }
        // Either way the item is gone and the queue goes on.
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop(false, &mut out), Some(false));
        assert_eq!(out, b"next");
    }
}

/// A forked test child. [`Child::exit_status`] reaps it; a test that
/// fails first drops it, which kills and reaps it, so a child stuck in
/// a wait (or, under ASan, in the allocator) never outlives its test.
struct Child(libc::pid_t);

impl Child {
    /// Wait for the child to exit; its exit status.
    fn exit_status(mut self) -> i32 {
        let pid = std::mem::replace(&mut self.0, 0);
        let mut st = 0;
        // SAFETY: `pid` is our child; `st` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut st, 0) };
        assert_eq!(r, pid);
        assert!(libc::WIFEXITED(st), "child died: status {st}");
        libc::WEXITSTATUS(st)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.0 > 0 {
            // SAFETY: our own child, not reaped yet.
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
                libc::waitpid(self.0, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// Run `child` in a forked process. The child only touches the queue
/// and then `_exit`s (no unwinding, no atexit).
fn in_child(child: impl FnOnce() -> i32) -> Child {
    // SAFETY: the child runs only `child` (queue operations on a shared
    // mapping, allocation, which glibc keeps fork-safe) and then
    // `_exit`, never returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(99);
        // SAFETY: terminating the child without running Rust or libc
        // exit handlers is exactly what a forked test child must do.
        unsafe { libc::_exit(code) };
    }
    Child(pid)
}

#[test]
fn fork_producer_and_consumer_exchange_strings_both_ways() {
    const N: u64 = 2_000;
    let q = StrQueue::anonymous(4, 4096).unwrap();
    // Fill the pid cache before forking: the child must not inherit it.
    q.push(b"warm", false).unwrap();
    pop_item(&q, false).unwrap();

    // Child produces at the back; parent consumes from the front.
    let child = in_child(|| {
        for i in 0..N {
            let s = pattern(i, (i * 37 % 600) as usize);
            let d = Deadline::after_secs(30.0);
            if q.push_wait(&s, i % 3 == 0, false, &d).unwrap() != Waited::Done(()) {
                return 2;
            }
        }
        0
    });
    let mut out = Vec::new();
    for i in 0..N {
        let r = q.pop_wait(false, &mut out, &Deadline::after_secs(30.0));
        assert_eq!(r, Waited::Done(i % 3 == 0), "item {i}");
        assert_eq!(out, pattern(i, (i * 37 % 600) as usize));
    }
    assert_eq!(child.exit_status(), 0);

    // Parent pushes at the front; the child takes from the back, so it
    // sees them in push order. The child also checks the lock word
    // names it, not its parent.
    let child = in_child(|| {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() } as u32;
        if crate::lock::current_pid() != me {
            return 3;
        }
        {
            for back in [false, true] {
                let lock = &q.side(back).lock;
                let (_g, _) = LockGuard::acquire(lock);
                if crate::lock::owner_pid(lock.word.load(Ordering::Relaxed)) != me {
                    return 4;
                }
            }
        }
        let mut out = Vec::new();
        for i in 0..N {
            let d = Deadline::after_secs(30.0);
            if q.pop_wait(true, &mut out, &d) != Waited::Done(i % 2 == 0) {
                return 5;
            }
            if out != pattern(i, (i * 53 % 700) as usize) {
                return 6;
            }
        }
        0
    });
    for i in 0..N {
        let s = pattern(i, (i * 53 % 700) as usize);
        let d = Deadline::after_secs(30.0);
        assert_eq!(
            q.push_wait(&s, i % 2 == 0, true, &d).unwrap(),
            Waited::Done(())
        );
    }
    assert_eq!(child.exit_status(), 0);
    let s = q.stats();
    assert_eq!(
        (s.push_ok, s.pop_ok, s.size, s.arena_used),
        (2 * N + 1, 2 * N + 1, 0, 0)
    );
}

#[test]
fn corrupt_shared_state_never_panics_and_heals_when_cleared() {
    let q = StrQueue::anonymous(8, 4096).unwrap();
    let mut rng = Rng(0xC0FF_EE11);
    let mut out = Vec::new();
    let mut items = Vec::new();
    for round in 0..2_000 {
        let h = q.header();
        let (f, b) = (h.str_side(false), h.str_side(true));
        for w in [&f.word, &b.word, &b.aux, &f.ok[0], &b.ends[1]] {
            let v = match rng.below(4) {
                0 => rng.next(),
                1 => rng.below(5000),
                2 => rng.below(5000) & !7,
                _ => continue,
            };
            w.store(v, Ordering::Relaxed);
        }
        let s = q.slot(rng.next());
        s.off.store(
            rng.next() as u32 & if round % 2 == 0 { 0xFFF8 } else { !0 },
            Ordering::Relaxed,
        );
        s.len.store(
            rng.next() as u32 & if round % 3 == 0 { 0x3FF } else { !0 },
            Ordering::Relaxed,
        );
        s.meta.store(rng.next() as u32, Ordering::Relaxed);
        for _ in 0..8 {
            match rng.below(6) {
                0 => drop(q.push(&pattern(round, rng.below(600) as usize), false)),
                1 => drop(q.push_front(&pattern(round, rng.below(600) as usize), true)),
                2 => drop(q.pop(false, &mut out)),
                3 => drop(q.pop(true, &mut out)),
                4 => drop(q.peek(&mut out)),
                _ => {
                    items.clear();
                    out.clear();
                    q.pop_multi(4, Some(rng.below(2000)), &mut out, &mut items);
                    for &(st, l, _) in &items {
                        assert!(st + l <= out.len());
                    }
                }
            }
            assert!(q.len() <= 8);
            assert!(q.stats().arena_used <= 4096);
        }
    }
    q.clear();
    assert!(q.push(&[5; 4096], false).unwrap());
    assert_eq!(pop_item(&q, false).unwrap().0, vec![5; 4096]);
}

/// A hostile back word whose `tail` is 2^31 past `head`: one `pop_multi`
/// (Perl's `drain` asks for SIZE_MAX items) takes at most the capacity.
/// `count()` is clamped to the capacity each time it is read, but every
/// item taken moves `head`, so a loop bounded only by it would go round
/// the same slots ~2^31 times under the front lock.
#[test]
fn hostile_tail_bounds_one_pop_multi_by_the_capacity() {
    let q = StrQueue::anonymous(8, 4096).unwrap();
    for _ in 0..8 {
        q.push(b"", false).unwrap(); // zero-length items: `out` never grows
    }
    let b = q.side(true);
    let w = b.word.load(Ordering::Relaxed);
    let tail = crate::layout::str_word_pos(w);
    b.word.store(
        crate::layout::str_word(
            tail.wrapping_add(1 << 31),
            crate::layout::str_word_units(w),
            crate::layout::str_word_copy(w),
        ),
        Ordering::Relaxed,
    );
    let (mut out, mut items) = (Vec::new(), Vec::new());
    let got = q.pop_multi(100_000, None, &mut out, &mut items);
    assert!(
        got <= 8,
        "one pop_multi took {got} items from a queue of 8 slots"
    );
}
