//! Models of the Str queue's state (src/strq/): the commit of a holder
//! that dies part way, and the look at `current` without the lock.

use super::lock::robust;
use super::model;
use crate::layout::{str_current, str_current_count};
use crate::lock::{model_deaths, Lock};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use loom::sync::Arc;

/// One of the two state copies of the Str commit model (three words, as
/// src/strq/ has seven).
type Copy3 = [AtomicU64; 3];

/// The words of the current copy, read as `lock_until` reads them.
fn read_current(copies: &[Copy3; 2], current: &AtomicU32) -> (u32, [u64; 3]) {
    // Acquire, as in `lock_until`.
    let c = current.load(Ordering::Acquire) & 1;
    let words = &copies[c as usize];
    (c, std::array::from_fn(|i| words[i].load(Ordering::Relaxed)))
}

/// The Str commit (src/strq/mod.rs, "Crash safety"): a state in two copies and a
/// `current` switch. Model pid 1 takes the lock, reads the current copy,
/// writes the new state into the other copy and switches `current` to it,
/// but stops for good after `stores` of those four stores (the guard is
/// leaked, then the pid is declared dead). Pid 2 races it for the lock and
/// must find one whole state; when it takes the lock over, the holder's
/// commit counts exactly when the switch was stored. Whichever went first,
/// the state in the end is whole and holds every commit that finished.
#[test]
fn loom_str_commit_survives_a_dead_holder() {
    for stores in 0..=4usize {
        model(2, move || {
            let w = Arc::new(Lock::new());
            let tag = Arc::new(AtomicU64::new(0));
            // Copy 0 current with state 5; copy 1 left over from state 4.
            let copies: Arc<[Copy3; 2]> = Arc::new([
                std::array::from_fn(|_| AtomicU64::new(5)),
                std::array::from_fn(|_| AtomicU64::new(4)),
            ]);
            let current = Arc::new(AtomicU32::new(0));
            let holder = {
                let (w, tag, copies, current) =
                    (w.clone(), tag.clone(), copies.clone(), current.clone());
                loom::thread::spawn(move || {
                    let (g, _) = robust(&w, &tag, 1);
                    let (c, [v, ..]) = read_current(&copies, &current);
                    let next = c ^ 1;
                    for (i, word) in copies[next as usize].iter().enumerate() {
                        if i < stores {
                            word.store(v + 1, Ordering::Relaxed);
                        }
                    }
                    if stores == 4 {
                        // Release, as in `Locked::commit`.
                        current.store(next, Ordering::Release);
                    }
                    std::mem::forget(g);
                    model_deaths::mark_dead(1);
                })
            };
            let (g, got) = robust(&w, &tag, 2);
            let (c, found) = read_current(&copies, &current);
            assert!(
                found == [5; 3] || found == [6; 3],
                "{stores} stores: a mixed state {found:?}"
            );
            if got.recovered {
                // Took the lock from the dead holder: its commit counts
                // exactly when its switch was stored.
                assert_eq!(found[0] == 6, stores == 4, "{stores} stores: {found:?}");
            }
            let next = c ^ 1;
            for word in &copies[next as usize] {
                word.store(found[0] + 10, Ordering::Relaxed);
            }
            current.store(next, Ordering::Release);
            drop(g);
            holder.join().unwrap();
            // Pid 2 either took the lock over (the holder went first) or
            // went first itself; then the holder committed on top of it
            // exactly when its switch was stored.
            let ours = found[0] + 10;
            let want = if !got.recovered && stores == 4 {
                ours + 1
            } else {
                ours
            };
            let (_, end) = read_current(&copies, &current);
            assert_eq!(
                end, [want; 3],
                "{stores} stores, recovered {}",
                got.recovered
            );
        });
    }
}
/// The Str state reduced to an item count per copy, and `current` holding
/// the committed count above the copy bit, as `switch_to` stores it
/// (src/strq/, "Looking without the lock").
struct Looked {
    lock: Lock,
    tag: AtomicU64,
    counts: [AtomicU64; 2],
    current: AtomicU32,
}

impl Looked {
    fn new() -> Arc<Self> {
        Arc::new(Looked {
            lock: Lock::new(),
            tag: AtomicU64::new(0),
            counts: [AtomicU64::new(0), AtomicU64::new(0)],
            current: AtomicU32::new(0),
        })
    }

    /// A locked operation that adds `d` items (a pop, `d = -1`, only when
    /// there is one), committed as src/strq/ commits: the other copy, then
    /// `current` (Release). Whether it happened.
    fn locked(&self, pid: u32, d: i64) -> bool {
        let (g, _) = robust(&self.lock, &self.tag, pid);
        // Acquire, as `current_state`.
        let c = self.current.load(Ordering::Acquire) & 1;
        let n = self.counts[c as usize].load(Ordering::Relaxed);
        assert_eq!(
            u64::from(str_current_count(self.current.load(Ordering::Relaxed))),
            n,
            "`current` holds the current copy's count"
        );
        let ok = d > 0 || n > 0;
        if ok {
            let next = c ^ 1;
            let m = n.wrapping_add_signed(d);
            self.counts[next as usize].store(m, Ordering::Relaxed);
            self.current.store(str_current(next, m), Ordering::Release);
        }
        drop(g);
        ok
    }

    /// A non-blocking pop as `pop_front`: the look at `current` (Relaxed)
    /// without the lock answers "empty"; otherwise the locked pop.
    fn try_pop(&self, pid: u32) -> bool {
        if str_current_count(self.current.load(Ordering::Relaxed)) == 0 {
            return false;
        }
        self.locked(pid, -1)
    }

    /// A non-blocking push into `cap` slots as `push_back_with`: the look
    /// answers "full"; otherwise the locked push (which rechecks).
    fn try_push(&self, pid: u32, cap: u64) -> bool {
        if u64::from(str_current_count(self.current.load(Ordering::Relaxed))) >= cap {
            return false;
        }
        let (g, _) = robust(&self.lock, &self.tag, pid);
        let c = self.current.load(Ordering::Acquire) & 1;
        let full = self.counts[c as usize].load(Ordering::Relaxed) >= cap;
        drop(g);
        !full && self.locked(pid, 1)
    }
}

/// A pop that looks without the lock misses no item it must see: the
/// producer pushes, then raises a flag (Release); a consumer that sees the
/// flag (Acquire) must not be told "empty" by the look, and gets the item.
/// (Coherence on `current`: the push's commit happens-before the look.)
#[test]
fn loom_str_look_misses_no_item_after_a_push_it_saw() {
    model(2, || {
        let q = Looked::new();
        let flag = Arc::new(AtomicU32::new(0));
        let producer = {
            let (q, flag) = (q.clone(), flag.clone());
            loom::thread::spawn(move || {
                assert!(q.try_push(1, 2));
                flag.store(1, Ordering::Release);
            })
        };
        let saw = flag.load(Ordering::Acquire) == 1;
        let got = q.try_pop(2);
        if saw {
            assert!(got, "the look said empty after the push was seen");
        }
        producer.join().unwrap();
        // Whatever the look said, the item is there or was taken: no loss.
        let left = str_current_count(q.current.load(Ordering::Relaxed));
        assert_eq!(u64::from(left) + u64::from(got), 1);
    });
}

/// A producer pushes two items into two slots with non-blocking pushes,
/// retrying when full, while a consumer pops non-blocking until it has
/// both (the benchmark pattern of issue 21): each side's look without the
/// lock ends every retry loop, nothing is lost or counted twice, and at the
/// end the committed count in `current` and the copy agree on 0.
#[test]
fn loom_str_look_poll_until_all_arrive() {
    model(2, || {
        let q = Looked::new();
        let producer = {
            let q = q.clone();
            loom::thread::spawn(move || {
                for _ in 0..2 {
                    while !q.try_push(1, 1) {
                        loom::thread::yield_now();
                    }
                }
            })
        };
        let mut got = 0;
        while got < 2 {
            if q.try_pop(2) {
                got += 1;
            } else {
                loom::thread::yield_now();
            }
        }
        producer.join().unwrap();
        let w = q.current.load(Ordering::Relaxed);
        assert_eq!(str_current_count(w), 0);
        assert_eq!(q.counts[(w & 1) as usize].load(Ordering::Relaxed), 0);
    });
}
