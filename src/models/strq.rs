//! Models of the Str queue's two sides (src/strq/, format 7): the commit
//! of a side whose holder dies part way; a producer and a consumer on
//! their own locks, each reading only the other side's word; an operation
//! at the other end taking both locks; and a blocked consumer that
//! settles with the back before it sleeps.
//!
//! A hand-written reduction, not the real code: the Str queue lives in a
//! mapped region whose atomics loom cannot own, so these models copy its
//! steps, and a change to src/strq/ does not reach them. Keep them in step
//! with what they mirror:
//!
//! * `Split::push_locked` and `try_push`: the fast push,
//!   `StrQueue::push_back_with` and `looks_full` (src/strq/fast.rs): the
//!   look, the back lock, both words, the room check, the bytes and the
//!   slot, then the back word;
//! * `Split::take`, `try_pop`, `pop_back`: `StrQueue::pop_front_held` and
//!   `looks_empty` (src/strq/fast.rs), and a back pop taking the back lock
//!   then the front lock (`Ends`, src/strq/locking.rs);
//! * the side words, each a new copy and a switch: `StrQueue::commit_back`,
//!   `commit_front` and `switch` (src/strq/state.rs);
//! * `wait_model_any`: `StrQueue::pop_wait_checked` (src/strq/blocking.rs)
//!   with its settle with the back (`settle_with`, src/strq/locking.rs),
//!   and `str_pop_lease_once`'s look with `pop_lease_wait`
//!   (src/strq/lease.rs);
//! * `loom_str_side_commit_survives_a_dead_holder`: the two state copies
//!   and the word of `StrQueue::commit_back` / `commit_front`
//!   (src/strq/state.rs) with a holder that dies after each store.
//!
//! The reduction keeps what the protocol needs: item values in slots and
//! one 8-byte arena cell per item, both in loom `UnsafeCell`s, so that
//! loom reports any access to them that the side words do not order (a
//! producer reusing a cell the consumer still reads, a consumer reading a
//! slot before it was published). What is real: the side words' encoding
//! (`str_word` and its readers, src/layout.rs), the robust lock
//! (src/lock/) and the wait/wake of src/wait.rs.

use super::lock::robust;
use super::model;
use crate::futex::Deadline;
use crate::layout::{str_word, str_word_copy, str_word_pos, str_word_units};
use crate::lock::{model_deaths, Lock};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::wait::{block_on, Miss, Side, Waited};
use loom::cell::UnsafeCell;
use loom::sync::Arc;

/// Slots of the model queue.
const CAP: u32 = 2;
/// Arena cells (one per item).
const CELLS: u32 = 2;

/// The Str queue reduced to its two sides.
struct Split {
    back_lock: Lock,
    back_tag: AtomicU64,
    front_lock: Lock,
    front_tag: AtomicU64,
    /// `str_word(tail, charged, copy)`; one unit charged per item.
    back: AtomicU64,
    /// `str_word(head, released, copy)`.
    front: AtomicU64,
    /// Per slot: the item's value and its arena cell.
    slots: [UnsafeCell<(u64, u32)>; CAP as usize],
    /// The arena: one cell per item, holding its value.
    cells: [UnsafeCell<u64>; CELLS as usize],
    pop_waiters: AtomicU32,
    pop_futex: AtomicU32,
}

fn span(tail: u32, head: u32) -> u32 {
    tail.wrapping_sub(head)
}

impl Split {
    fn new() -> Arc<Self> {
        Arc::new(Split {
            back_lock: Lock::new(),
            back_tag: AtomicU64::new(0),
            front_lock: Lock::new(),
            front_tag: AtomicU64::new(0),
            back: AtomicU64::new(0),
            front: AtomicU64::new(0),
            slots: std::array::from_fn(|_| UnsafeCell::new((0, 0))),
            cells: std::array::from_fn(|_| UnsafeCell::new(0)),
            pop_waiters: AtomicU32::new(0),
            pop_futex: AtomicU32::new(0),
        })
    }

    fn consumers(&self) -> Side<'_> {
        Side {
            waiters: &self.pop_waiters,
            futex: &self.pop_futex,
        }
    }

    /// A push at the back under the back lock as the fast path makes it:
    /// the look (Relaxed), the lock, both words (Acquire), the room check
    /// on the count and on the bytes charged but not given back, then the
    /// bytes and the slot, then the back word (Release). The arena cell is
    /// the back's `wr` (charged modulo the cells, one per item).
    fn push_locked(&self, v: u64, g: crate::lock::LockGuard<'_>) -> bool {
        let bw = self.back.load(Ordering::Acquire);
        let fw = self.front.load(Ordering::Acquire);
        let (tail, charged) = (str_word_pos(bw), str_word_units(bw));
        let (head, released) = (str_word_pos(fw), str_word_units(fw));
        if span(tail, head) >= CAP || charged.wrapping_sub(released) >= CELLS {
            drop(g);
            return false;
        }
        let cell = charged % CELLS;
        // SAFETY: loom checks that no other access to the cell or the slot
        // races this write (the consumer's reads are ordered before by the
        // front word the room check read).
        self.cells[cell as usize].with_mut(|p| unsafe { *p = v });
        self.slots[(tail % CAP) as usize].with_mut(|p| unsafe { *p = (v, cell) });
        let c = str_word_copy(bw) ^ 1;
        self.back.store(
            str_word(tail.wrapping_add(1), charged.wrapping_add(1), c),
            Ordering::Release,
        );
        drop(g);
        true
    }

    /// A non-blocking push at the back by `pid`.
    fn try_push(&self, pid: u32, v: u64) -> bool {
        let (b, f) = (
            self.back.load(Ordering::Relaxed),
            self.front.load(Ordering::Relaxed),
        );
        if span(str_word_pos(b), str_word_pos(f)) >= CAP {
            return false;
        }
        let (g, _) = robust(&self.back_lock, &self.back_tag, pid);
        let ok = self.push_locked(v, g);
        if ok {
            self.consumers().wake(1);
        }
        ok
    }

    /// Take the end item with the locks held (the back one with `back`):
    /// read its slot and its cell, check they agree, commit the side that
    /// owns that end.
    fn take(&self, back: bool) -> Option<u64> {
        let bw = self.back.load(Ordering::Acquire);
        let fw = self.front.load(Ordering::Acquire);
        let (tail, head) = (str_word_pos(bw), str_word_pos(fw));
        if tail == head {
            return None;
        }
        let i = if back { tail.wrapping_sub(1) } else { head };
        // SAFETY: the slot and cell were published by the word read above
        // (loom checks the order).
        let (v, cell) = self.slots[(i % CAP) as usize].with(|p| unsafe { *p });
        let bytes = self.cells[cell as usize].with(|p| unsafe { *p });
        assert_eq!(bytes, v, "the item's bytes were overwritten");
        if back {
            let c = str_word_copy(bw) ^ 1;
            let units = str_word_units(bw).wrapping_sub(1);
            self.back
                .store(str_word(tail.wrapping_sub(1), units, c), Ordering::Release);
        } else {
            let c = str_word_copy(fw) ^ 1;
            let units = str_word_units(fw).wrapping_add(1);
            self.front
                .store(str_word(head.wrapping_add(1), units, c), Ordering::Release);
        }
        Some(v)
    }

    /// A non-blocking front pop by `pid`: the look, the front lock, take.
    fn try_pop(&self, pid: u32) -> Option<u64> {
        let (f, b) = (
            self.front.load(Ordering::Relaxed),
            self.back.load(Ordering::Relaxed),
        );
        if str_word_pos(b) == str_word_pos(f) {
            return None;
        }
        let (g, _) = robust(&self.front_lock, &self.front_tag, pid);
        let v = self.take(false);
        drop(g);
        v
    }

    /// A back pop by `pid`: both locks, the back first.
    fn pop_back(&self, pid: u32) -> Option<u64> {
        let (gb, _) = robust(&self.back_lock, &self.back_tag, pid);
        let (gf, _) = robust(&self.front_lock, &self.front_tag, pid);
        let v = self.take(true);
        drop(gf);
        drop(gb);
        v
    }
}

/// A producer pushes 1, 2, 3 into two slots and two cells with
/// non-blocking pushes, retrying when full, while a consumer pops
/// non-blocking until it has all three (the benchmark's pattern), each
/// under its own lock: every item arrives once and in order,
/// and loom finds no access to a slot or cell that the side words leave
/// unordered (a cell reused before its item was copied out, a slot read
/// before it was published).
#[test]
fn loom_str_split_producer_and_consumer_on_their_own_locks() {
    model(2, || {
        let q = Split::new();
        let producer = {
            let q = q.clone();
            loom::thread::spawn(move || {
                for v in 1..=3 {
                    while !q.try_push(1, v) {
                        loom::thread::yield_now();
                    }
                }
            })
        };
        let mut got = Vec::new();
        while got.len() < 3 {
            match q.try_pop(2) {
                Some(v) => got.push(v),
                None => loom::thread::yield_now(),
            }
        }
        producer.join().unwrap();
        assert_eq!(got, [1, 2, 3]);
        let (b, f) = (
            q.back.load(Ordering::Relaxed),
            q.front.load(Ordering::Relaxed),
        );
        assert_eq!((str_word_pos(b), str_word_units(b)), (3, 3));
        assert_eq!((str_word_pos(f), str_word_units(f)), (3, 3));
    });
}

/// A back pop (both locks) against a front pop (the front lock) and a
/// push (the back lock), on a queue holding one item: no item is taken
/// twice or lost, and both words stay consistent with what was taken.
#[test]
fn loom_str_split_pop_back_against_both_ends() {
    model(2, || {
        let q = Split::new();
        assert!(q.try_push(9, 1));
        let back = {
            let q = q.clone();
            loom::thread::spawn(move || q.pop_back(3))
        };
        let pusher = {
            let q = q.clone();
            loom::thread::spawn(move || q.try_push(1, 2))
        };
        let front = q.try_pop(2);
        let b = back.join().unwrap();
        let pushed = pusher.join().unwrap();
        assert!(pushed, "a slot was free for the push");
        let mut all: Vec<u64> = [front, b].into_iter().flatten().collect();
        while let Some(v) = q.try_pop(2) {
            all.push(v);
        }
        all.sort_unstable();
        assert_eq!(all, [1, 2], "every item taken exactly once");
    });
}

/// A consumer blocked in `pop_wait` (the real `block_on`) while a
/// producer pushes under the back lock: the consumer's attempt settles
/// with the back before it reports a settled miss, so it never sleeps
/// through the push.
///
/// Modelled as x86 runs it (TSO): the locked instructions (the lock CAS,
/// the waiter announcement) are SeqCst fences here, a plain store or load
/// is Release or Acquire, and the producer's unlock has no fence (a
/// process registered for the lock's asymmetric barrier). Without the
/// settle step (`SETTLE` false) loom finds the lost wake-up: the
/// producer's word store still buffered when the consumer looks, the
/// consumer's announcement not yet seen by the producer's waiter check.
fn wait_model<const SETTLE: bool>() {
    wait_model_any::<SETTLE, false, false>();
}

/// `wait_model`; with `LOOK` the attempt first answers "empty" from the
/// two side words (Relaxed, no lock), as `str_pop_lease_once` and
/// `pop_wait_checked` do, and
/// with `LOOK_SETTLES` it settles with the back before it believes the
/// look (as `pop_lease_wait` does).
fn wait_model_any<const SETTLE: bool, const LOOK: bool, const LOOK_SETTLES: bool>() {
    /// A lock of the TSO model: a CAS that is a full barrier, a plain
    /// Release store to unlock.
    fn lock(w: &AtomicU32) {
        while w
            .compare_exchange(0, 1, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            loom::thread::yield_now();
        }
        loom::sync::atomic::fence(Ordering::SeqCst);
    }
    model(3, || {
        let back_lock = Arc::new(AtomicU32::new(0));
        let gate = Arc::new(AtomicU32::new(0));
        let q = Split::new();
        let producer = {
            let (q, back_lock, gate) = (q.clone(), back_lock.clone(), gate.clone());
            loom::thread::spawn(move || {
                // Held back until the consumer is in its window (as the
                // wake models do: loom's yields in the consumer's retries
                // would otherwise always let the push in first).
                while gate.load(Ordering::Relaxed) == 0 {
                    loom::thread::yield_now();
                }
                lock(&back_lock);
                let bw = q.back.load(Ordering::Acquire);
                let c = str_word_copy(bw) ^ 1;
                // SAFETY: the cell and slot are written before the word
                // publishes them.
                q.cells[0].with_mut(|p| unsafe { *p = 7 });
                q.slots[0].with_mut(|p| unsafe { *p = (7, 0) });
                q.back.store(str_word(1, 1, c), Ordering::Release);
                back_lock.store(0, Ordering::Release);
                // The waiter check (SeqCst load: a plain load on x86).
                q.consumers().wake(1);
            })
        };
        let attempt = || {
            let (g, _) = robust(&q.front_lock, &q.front_tag, 2);
            let v = q.take(false);
            drop(g);
            v
        };
        let mut calls = 0u32;
        let r = block_on(q.consumers(), &Deadline::FOREVER, || {
            calls += 1;
            if calls < PRE_ANNOUNCE_LOOKS {
                return Err(Miss::Settled);
            }
            if calls == PRE_ANNOUNCE_LOOKS {
                gate.store(1, Ordering::Relaxed);
            } else {
                // After the announcement, a locked instruction: a full
                // barrier.
                loom::sync::atomic::fence(Ordering::SeqCst);
            }
            // settle_with: the back lock seen free, or waited for.
            let settle = || {
                if back_lock.load(Ordering::SeqCst) != 0 {
                    lock(&back_lock);
                    back_lock.store(0, Ordering::Release);
                }
            };
            let looks_empty = || {
                let f = q.front.load(Ordering::Relaxed);
                let b = q.back.load(Ordering::Relaxed);
                str_word_pos(b) == str_word_pos(f)
            };
            if LOOK && looks_empty() {
                if !LOOK_SETTLES {
                    return Err(Miss::Settled);
                }
                settle();
                if looks_empty() {
                    return Err(Miss::Settled);
                }
            }
            if let Some(v) = attempt() {
                return Ok(v);
            }
            if SETTLE {
                settle();
                if let Some(v) = attempt() {
                    return Ok(v);
                }
            }
            Err(Miss::Settled)
        });
        producer.join().unwrap();
        assert_eq!(r, Waited::Done(7));
    });
}

/// How many times `block_on` looks at a settled miss before announcing
/// itself (as in the wake models): once, then 64 + 64 retries.
const PRE_ANNOUNCE_LOOKS: u32 = 1 + 64 + 64;

#[test]
fn loom_str_split_blocked_consumer_settles_with_the_back() {
    wait_model::<true>();
}

/// The same model without the settle step fails: the step is needed.
#[test]
#[should_panic]
fn loom_str_split_blocked_consumer_without_settling_loses_the_wake_up() {
    wait_model::<false>();
}

/// A blocked `pop_lease_wait`, whose attempt answers "empty" from the
/// look without the locks while the last lease scan is recent, or a
/// blocked `pop_wait`, whose attempt looks first always: the look
/// settles with the back before it is believed, so the wake-up is not
/// lost.
#[test]
fn loom_str_split_blocked_lease_look_settles_with_the_back() {
    wait_model_any::<true, true, true>();
}

/// The same with a look that is believed at once (without the settle):
/// the wake-up is lost, whatever a locked miss does.
#[test]
#[should_panic]
fn loom_str_split_blocked_lease_look_without_settling_loses_the_wake_up() {
    wait_model_any::<true, true, false>();
}

/// The commit of one side: its copies and its word. Model pid 1 takes
/// the side's lock, writes the new counters into the copy that is not
/// current and stores the word that makes it current (the position and
/// byte count move with it), but stops for good after `stores` of those
/// three stores (the guard is leaked, then the pid is declared dead).
/// Pid 2 races it for the lock and must find one whole state; when it
/// takes the lock over, the holder's commit counts exactly when the word
/// was stored.
#[test]
fn loom_str_side_commit_survives_a_dead_holder() {
    for stores in 0..=3usize {
        model(2, move || {
            let lock = Arc::new(Lock::new());
            let tag = Arc::new(AtomicU64::new(0));
            // Copy 0 current: position 5, 5 units, counters 5; copy 1
            // left over from state 4.
            let copies: Arc<[[AtomicU64; 2]; 2]> = Arc::new([
                [AtomicU64::new(5), AtomicU64::new(5)],
                [AtomicU64::new(4), AtomicU64::new(4)],
            ]);
            let word = Arc::new(AtomicU64::new(str_word(5, 5, 0)));
            let read = |copies: &[[AtomicU64; 2]; 2], word: &AtomicU64| {
                let w = word.load(Ordering::Acquire);
                let c = &copies[str_word_copy(w) as usize];
                (
                    w,
                    [
                        u64::from(str_word_pos(w)),
                        u64::from(str_word_units(w)),
                        c[0].load(Ordering::Relaxed),
                        c[1].load(Ordering::Relaxed),
                    ],
                )
            };
            let holder = {
                let (lock, tag, copies, word) =
                    (lock.clone(), tag.clone(), copies.clone(), word.clone());
                loom::thread::spawn(move || {
                    let (g, _) = robust(&lock, &tag, 1);
                    let (w, [v, ..]) = read(&copies, &word);
                    let next = str_word_copy(w) ^ 1;
                    for (i, cw) in copies[next as usize].iter().enumerate() {
                        if i < stores {
                            cw.store(v + 1, Ordering::Relaxed);
                        }
                    }
                    if stores == 3 {
                        let n = v as u32 + 1;
                        word.store(str_word(n, n, next), Ordering::Release);
                    }
                    std::mem::forget(g);
                    model_deaths::mark_dead(1);
                })
            };
            let (g, got) = robust(&lock, &tag, 2);
            let (w, found) = read(&copies, &word);
            assert!(
                found == [5; 4] || found == [6; 4],
                "{stores} stores: a mixed state {found:?}"
            );
            if got.recovered {
                assert_eq!(found[0] == 6, stores == 3, "{stores} stores: {found:?}");
            }
            let next = str_word_copy(w) ^ 1;
            let ours = found[0] + 10;
            for cw in &copies[next as usize] {
                cw.store(ours, Ordering::Relaxed);
            }
            word.store(str_word(ours as u32, ours as u32, next), Ordering::Release);
            drop(g);
            holder.join().unwrap();
            let want = if !got.recovered && stores == 3 {
                ours + 1
            } else {
                ours
            };
            let (_, end) = read(&copies, &word);
            assert_eq!(
                end, [want; 4],
                "{stores} stores, recovered {}",
                got.recovered
            );
        });
    }
}
