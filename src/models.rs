//! Loom models of the blocking protocol and of the Str lock.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --lib loom`. Under
//! loom the futex is the model in futex.rs, where a waiter without a
//! deadline really blocks until a wake picks it: a lost wake-up leaves the
//! sleeper blocked for ever and loom reports the deadlock (or, for a
//! thread that keeps polling, an exceeded branch budget). Process death for
//! the lock takeover is the model in lock.rs (`model_deaths`).
//!
//! * wait/wake ([`block_on`] and [`Side::wake`]): a consumer blocks on an
//!   empty queue and a producer pushes; two consumers block and are served
//!   by two pushes; a producer blocks on a full ring and a pop frees room.
//!   Every waiter must finish. The reset that forgets a killed waiter's
//!   count never loses a live waiter's wake-up.
//! * the lock: mutual exclusion and no lost wake-up with three threads
//!   (the unlock's store and read of the sleeper count against the
//!   sleeper's count and read of the word: both barrier halves are SeqCst
//!   fences here, see lock.rs);
//!   takeover from a holder that stopped inside its critical section (it
//!   takes the lock, half-updates the protected state and never unlocks):
//!   exactly one waiter recovers, sees the half update, repairs it, and
//!   every waiter gets the lock; a live holder is never taken over.
//!   The robust acquisition sleeps without deadline under loom until it is
//!   woken or its lock names a dead holder (lock.rs, `robust_sleep`), so
//!   the robust models fail on a lost wake-up too; the lock and unlock
//!   exactly as the Str hot paths make them (`try_acquire_robust`,
//!   `unlock`, `wake_one`) are modelled on their own.
//! * the Int64 slot (its 16-byte CAS emulated on one loom word, ring.rs)
//!   against producers and the give-up CAS; the repair of a dead batch
//!   reservation after a real stuck interval (the loom clock ticks once
//!   per reading), not only the give-up-at-once form.
//! * the Str look without the lock (the item count stored in `current`
//!   by each commit): a pop that saw a push happen is never told "empty",
//!   and a producer and a consumer polling with non-blocking calls move
//!   every item, with the count in `current` and in the copy agreeing.

use crate::futex::Deadline;
use crate::layout::{str_current, str_current_count};
use crate::lock::{model_deaths, Acquired, Lock, LockGuard};
use crate::ring::{heap_slots, Miss, Ring, Slot64};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::wait::{block_on, Side, Waited};
use loom::cell::UnsafeCell;
use loom::sync::Arc;

/// Spin loops multiply loom's schedules; a preemption bound keeps the
/// search finite while covering every interleaving that needs at most that
/// many forced switches (lost wake-ups need one or two). The waits retry
/// a settled miss 128 times before sleeping (wait.rs), and every retry is a
/// few loom branches: hence the branch budget above loom's default 1000.
fn model(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(bound);
    b.max_branches = std::env::var("DQS_LOOM_BRANCHES").map_or(20_000, |v| v.parse().unwrap());
    b.check(f);
}

// ---- wait / wake ---------------------------------------------------------

/// The protocol is a store-buffering (Dekker) pair: the waiter's SeqCst
/// announcement then SeqCst look at the queue, the other side's SeqCst claim
/// then SeqCst look at the waiter count. C++ forbids both looks missing the
/// other side's write; loom does not model that, treating SeqCst accesses as
/// AcqRel (a documented loom limitation, tokio-rs/loom#180), so it would
/// report lost wake-ups that cannot happen. Loom does model SeqCst fences
/// fully, so the models put one where each side has its SeqCst write-then-
/// read pair: in the attempt closure (after the announcement) and between a
/// push or pop and its wake. That restores exactly the C++ guarantee, and
/// every other ordering in wait.rs and ring.rs is checked as written.
fn sc_fence() {
    loom::sync::atomic::fence(Ordering::SeqCst);
}

/// A queue reduced to an item count: the SeqCst claim of the real rings
/// (a successful CAS or fetch_add) and the two waiter sides.
#[derive(Default)]
struct Counted {
    items: AtomicU32,
    pop_waiters: AtomicU32,
    pop_futex: AtomicU32,
}

impl Counted {
    fn consumers(&self) -> Side<'_> {
        Side {
            waiters: &self.pop_waiters,
            futex: &self.pop_futex,
        }
    }

    /// A non-blocking pop: take one item if there is one. The first look
    /// is SeqCst, like the rings' final `tail` (or `head`) load on a miss.
    fn try_pop(&self) -> Result<(), Miss> {
        sc_fence();
        let mut n = self.items.load(Ordering::SeqCst);
        while n > 0 {
            match self
                .items
                .compare_exchange(n, n - 1, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(cur) => n = cur,
            }
        }
        Err(Miss::Settled)
    }

    /// A push: claim (SeqCst), then wake one waiter if anybody waits.
    fn push(&self) {
        self.items.fetch_add(1, Ordering::SeqCst);
        sc_fence();
        self.consumers().wake(1);
    }

    fn pop_wait(&self) {
        let r = block_on(self.consumers(), &Deadline::FOREVER, || self.try_pop());
        assert_eq!(r, Waited::Done(()));
    }

    /// `pop_wait` that opens `gate` when it enters the race window: its
    /// last look before announcing (or, should the retry count change, the
    /// first look after announcing). The looks before it report a settled
    /// miss without touching the queue, which a real run can do as well
    /// (nothing has been pushed yet when the producer waits for the gate).
    fn pop_wait_gated(&self, gate: &AtomicU32) {
        let mut calls = 0u32;
        let mut open = false;
        let r = block_on(self.consumers(), &Deadline::FOREVER, || {
            calls += 1;
            if !open {
                if calls < PRE_ANNOUNCE_LOOKS && self.pop_waiters.load(Ordering::Relaxed) == 0 {
                    return Err(Miss::Settled);
                }
                open = true;
                // Relaxed: the gate orders nothing, it only holds the
                // producer back until the window.
                gate.fetch_add(1, Ordering::Relaxed);
            }
            self.try_pop()
        });
        assert_eq!(r, Waited::Done(()));
    }
}

/// How many times `block_on` looks at a settled miss before announcing
/// itself: once, then `SETTLED_SPINS + SETTLED_YIELDS` (64 + 64) retries.
/// Each retry yields, and a loom yield runs the other threads first, so
/// without a gate the producer would always push during the retries and the
/// announce-and-recheck window would never meet a concurrent push.
const PRE_ANNOUNCE_LOOKS: u32 = 1 + 64 + 64;

/// Wait (yielding) until `n` waiters have opened `gate`.
fn wait_gate(gate: &AtomicU32, n: u32) {
    while gate.load(Ordering::Relaxed) < n {
        loom::thread::yield_now();
    }
}

/// One consumer in the window (its last look before announcing, the
/// announcement, the futex sample, the re-check and the sleep) while one
/// producer pushes: the consumer always gets the item.
#[test]
fn loom_wake_window_one_consumer() {
    model(3, || {
        let q = Arc::new(Counted::default());
        let gate = Arc::new(AtomicU32::new(0));
        let c = {
            let (q, gate) = (q.clone(), gate.clone());
            loom::thread::spawn(move || q.pop_wait_gated(&gate))
        };
        wait_gate(&gate, 1);
        q.push();
        c.join().unwrap();
        assert_eq!(q.items.load(Ordering::Relaxed), 0);
        assert_eq!(q.pop_waiters.load(Ordering::Relaxed), 0);
    });
}

/// Two consumers blocked (ungated: they may also be served during their
/// retries), two pushes each waking one: both consumers are served,
/// whichever of them a wake picks and whichever takes the item.
#[test]
fn loom_wake_two_consumers_two_pushes() {
    model(2, || {
        let q = Arc::new(Counted::default());
        let cs: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                loom::thread::spawn(move || q.pop_wait())
            })
            .collect();
        q.push();
        q.push();
        for c in cs {
            c.join().unwrap();
        }
        assert_eq!(q.items.load(Ordering::Relaxed), 0);
        assert_eq!(q.pop_waiters.load(Ordering::Relaxed), 0);
    });
}

/// The count reset that a run of fruitless wakes makes (a dead waiter's
/// count, then a new epoch with count 0 and a wake of everybody), racing a
/// live consumer in its window (announcement, futex sample, re-check,
/// sleep): the consumer still gets the item pushed after the reset, and no
/// count is left but possibly the dead one's, if the reset lost its CAS.
#[test]
fn loom_reset_keeps_a_live_waiter() {
    model(2, || {
        let q = Arc::new(Counted::default());
        let gate = Arc::new(AtomicU32::new(0));
        let c = {
            let (q, gate) = (q.clone(), gate.clone());
            loom::thread::spawn(move || q.pop_wait_gated(&gate))
        };
        wait_gate(&gate, 1);
        // A waiter that announced itself and was killed.
        q.pop_waiters.fetch_add(1, Ordering::SeqCst);
        let reset = q.consumers().reset();
        q.push();
        c.join().unwrap();
        assert_eq!(q.items.load(Ordering::Relaxed), 0);
        let left = crate::wait::waiter_count(&q.pop_waiters);
        assert_eq!(left, if reset { 0 } else { 1 }, "reset {reset}");
    });
}

/// The real ring (capacity 2, the smallest the queues make) with both
/// sides: consumer and producer block in turn on the ring's `Miss` reports
/// (`InFlight` included).
struct RingQ {
    head: AtomicU64,
    tail: AtomicU64,
    slots: Vec<Slot64>,
    waiters: [AtomicU32; 2],
    futex: [AtomicU32; 2],
}

impl RingQ {
    fn new(cap: usize) -> Arc<Self> {
        let q = Arc::new(RingQ {
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            slots: heap_slots::<i64>(cap),
            waiters: [AtomicU32::new(0), AtomicU32::new(0)],
            futex: [AtomicU32::new(0), AtomicU32::new(0)],
        });
        q.ring().init();
        q
    }

    fn ring(&self) -> Ring<'_, i64> {
        Ring::new(&self.head, &self.tail, &self.slots)
    }

    /// Side 0: consumers; side 1: producers.
    fn side(&self, i: usize) -> Side<'_> {
        Side {
            waiters: &self.waiters[i],
            futex: &self.futex[i],
        }
    }

    fn push_wait(&self, v: i64) {
        let r = block_on(self.side(1), &Deadline::FOREVER, || {
            sc_fence();
            self.ring().try_push(v)
        });
        assert_eq!(r, Waited::Done(()));
        sc_fence();
        self.side(0).wake(1);
    }

    fn pop_wait(&self) -> i64 {
        let r = block_on(self.side(0), &Deadline::FOREVER, || {
            sc_fence();
            self.ring().try_pop()
        });
        sc_fence();
        self.side(1).wake(1);
        match r {
            Waited::Done(v) => v,
            other => panic!("pop_wait ended with {other:?}"),
        }
    }
}

/// Producer pushes 1, 2, 3 into a ring of two slots (so it blocks on full
/// unless the consumer is quick), the consumer pops three times (blocking
/// on empty): both finish, FIFO.
#[test]
fn loom_wake_both_sides_on_the_ring() {
    model(2, || {
        let q = RingQ::new(2);
        let p = {
            let q = q.clone();
            loom::thread::spawn(move || {
                for v in 1..=3 {
                    q.push_wait(v);
                }
            })
        };
        let got: Vec<i64> = (0..3).map(|_| q.pop_wait()).collect();
        p.join().unwrap();
        assert_eq!(got, [1, 2, 3]);
        assert_eq!(q.waiters[0].load(Ordering::Relaxed), 0);
        assert_eq!(q.waiters[1].load(Ordering::Relaxed), 0);
    });
}

// ---- the Str lock --------------------------------------------------------

/// Protected state: `(value, dirty)`. A critical section sets dirty, adds
/// one, clears dirty; one that stops half way leaves dirty set.
type State = UnsafeCell<(u32, bool)>;

/// Three threads, blocking lock (acquire_as, futex waits without deadline):
/// mutual exclusion (loom checks the cell accesses never overlap) and no
/// lost wake-up (a sleeper that is never woken is a deadlock).
#[test]
fn loom_lock_three_threads_exclude_and_wake() {
    model(2, || {
        let w = Arc::new(Lock::new());
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let hs: Vec<_> = (1..=3u32)
            .map(|pid| {
                let (w, data) = (w.clone(), data.clone());
                loom::thread::spawn(move || {
                    let (_g, _) = LockGuard::acquire_as(&w, pid);
                    // SAFETY: only touched under the lock; loom checks it.
                    data.with_mut(|p| unsafe { (*p).0 += 1 });
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY: every thread has been joined.
        assert_eq!(data.with(|p| unsafe { (*p).0 }), 3);
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
    });
}

/// A robust acquisition by model pid `pid` (no deadline, not interruptible).
fn robust<'a>(w: &'a Lock, tag: &AtomicU64, pid: u32) -> (LockGuard<'a>, Acquired) {
    LockGuard::acquire_robust_as(
        w,
        tag,
        pid,
        u64::from(pid) << 32,
        || Deadline::FOREVER,
        false,
    )
    .expect("a lock wait without deadline or interruption cannot fail")
}

/// A waiter's critical section: repair when it took over (the stopped
/// holder's half update must be visible), then a full update.
fn waiter_section(data: &State, got: Acquired) {
    // SAFETY: called with the lock held; loom checks the accesses never
    // overlap and that the stopped holder's write happened before.
    data.with_mut(|p| unsafe {
        assert_eq!((*p).1, got.recovered, "dirty exactly when taken over");
        (*p).1 = true;
        (*p).0 += 1;
        (*p).1 = false;
    });
}

/// The preemption bound of the three-thread takeover model: every
/// interleaving with at most three forced switches (about 90 s of loom on
/// a busy 2-core host; bound 1, as before, left most of them unexplored).
const BOUND_TAKEOVER: usize = 3;

/// Model pid 1 takes the lock, half-updates the state and stops for good
/// (the guard is leaked, then the pid is declared dead); pids 2 and 3 take
/// the lock robustly. In every interleaving within the bound: the lock is
/// never held by two at once, every waiter gets it, at most one recovers
/// and it sees the half update; the stopped holder's lock is recovered
/// exactly when a waiter came after it (otherwise the word still names it
/// at the end).
#[test]
fn loom_lock_takeover_from_stopped_holder() {
    model(BOUND_TAKEOVER, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let recovered = Arc::new(AtomicU32::new(0));
        let holder = {
            let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
            loom::thread::spawn(move || {
                let (g, got) = robust(&w, &tag, 1);
                assert!(!got.recovered);
                // SAFETY: under the lock.
                data.with_mut(|p| unsafe { (*p).1 = true });
                std::mem::forget(g);
                model_deaths::mark_dead(1);
            })
        };
        let waiters: Vec<_> = (2..=3u32)
            .map(|pid| {
                let (w, tag, data, recovered) =
                    (w.clone(), tag.clone(), data.clone(), recovered.clone());
                loom::thread::spawn(move || {
                    let (_g, got) = robust(&w, &tag, pid);
                    waiter_section(&data, got);
                    if got.recovered {
                        recovered.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        holder.join().unwrap();
        for h in waiters {
            h.join().unwrap();
        }
        let rec = recovered.load(Ordering::Relaxed);
        let end = w.word.load(Ordering::Relaxed);
        assert!(rec <= 1, "recovered {rec} times");
        // Not recovered <=> the stopped holder still owns the word.
        assert_eq!(rec == 0, end == 1, "word {end:#x}");
        // SAFETY: every thread has been joined.
        let (v, dirty) = data.with(|p| unsafe { *p });
        assert_eq!(v, 2);
        assert_eq!(dirty, rec == 0);
    });
}

/// The takeover with one waiter (pid 2), a smaller space than the above
/// searched with more preemptions.
#[test]
fn loom_lock_takeover_one_waiter() {
    model(3, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let holder = {
            let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
            loom::thread::spawn(move || {
                let (g, _) = robust(&w, &tag, 1);
                // SAFETY: under the lock.
                data.with_mut(|p| unsafe { (*p).1 = true });
                std::mem::forget(g);
                model_deaths::mark_dead(1);
            })
        };
        let (g, got) = robust(&w, &tag, 2);
        waiter_section(&data, got);
        drop(g);
        holder.join().unwrap();
        let end = w.word.load(Ordering::Relaxed);
        assert_eq!(got.recovered, end == 0, "word {end:#x}");
    });
}

/// A live holder (pids 1 and 2 in turn, each unlocking normally after
/// dawdling) is never taken over, even when the other's polls find it
/// stuck; both sections complete.
#[test]
fn loom_lock_live_holder_not_taken_over() {
    model(3, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let hs: Vec<_> = (1..=2u32)
            .map(|pid| {
                let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
                loom::thread::spawn(move || {
                    let (_g, got) = robust(&w, &tag, pid);
                    assert!(!got.recovered, "pid {pid} took over a live holder");
                    waiter_section(&data, got);
                    // Hold on for a while: a loom yield runs the other
                    // thread, which polls, finds us stuck and must then
                    // ask (and be told we live) before anything else.
                    for _ in 0..3 {
                        loom::thread::yield_now();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY: every thread has been joined.
        assert_eq!(data.with(|p| unsafe { *p }), (2, false));
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
    });
}

// ---- the Str commit --------------------------------------------------------

/// One of the two state copies of the Str commit model (three words, as
/// strq.rs has seven).
type Copy3 = [AtomicU64; 3];

/// The words of the current copy, read as `lock_until` reads them.
fn read_current(copies: &[Copy3; 2], current: &AtomicU32) -> (u32, [u64; 3]) {
    // Acquire, as in `lock_until`.
    let c = current.load(Ordering::Acquire) & 1;
    let words = &copies[c as usize];
    (c, std::array::from_fn(|i| words[i].load(Ordering::Relaxed)))
}

/// The Str commit (strq.rs, "Crash safety"): a state in two copies and a
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

// ---- the robust lock as the Str queue takes and frees it ------------------

/// A model "process" `pid`'s owner tag (`pid << 32`, no start time).
fn tag_of(pid: u32) -> u64 {
    u64::from(pid) << 32
}

/// The lock and unlock exactly as the Str hot paths make them: one try
/// (`try_acquire_robust`, the CAS and the tag store), else the robust
/// acquisition (`acquire_robust`, spin, count as a sleeper, sleep); then
/// `unlock` (a plain store, the light barrier, a read of the sleeper
/// count) and `wake_one` when it says somebody may sleep. Under loom the
/// robust sleep has no deadline while its holder lives (lock.rs,
/// `robust_sleep`): a lost wake-up is a deadlock.
fn pair_section(w: &Lock, tag: &AtomicU64, data: &State, pid: u32) {
    let g = match LockGuard::try_acquire_robust_tagged(w, tag, tag_of(pid)) {
        Some(g) => g,
        None => {
            let (g, got) = robust(w, tag, pid);
            assert!(!got.recovered, "pid {pid} took over a live holder");
            g
        }
    };
    // SAFETY: only touched under the lock; loom checks it.
    data.with_mut(|p| unsafe { (*p).0 += 1 });
    if g.unlock() {
        LockGuard::wake_one(w);
    }
}

/// Two threads, each taking and freeing the lock twice by the hot paths'
/// pair: mutual exclusion, no lost wake-up, the lock free and nobody
/// counted as a sleeper at the end. Bound 3: every interleaving with at
/// most three forced switches (a lost wake-up needs one or two).
#[test]
fn loom_robust_pair_two_threads() {
    model(3, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let other = {
            let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
            loom::thread::spawn(move || {
                for _ in 0..2 {
                    pair_section(&w, &tag, &data, 2);
                }
            })
        };
        for _ in 0..2 {
            pair_section(&w, &tag, &data, 1);
        }
        other.join().unwrap();
        // SAFETY: every thread has been joined.
        assert_eq!(data.with(|p| unsafe { (*p).0 }), 4);
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
        assert_eq!(
            crate::lock::sleeper_count(w.sleepers.load(Ordering::Relaxed)),
            0
        );
    });
}

/// Three threads, one pair each: two of them may sleep at once, so an
/// unlock must wake one and the next unlock the other. Bound 2.
#[test]
fn loom_robust_pair_three_threads() {
    model(2, || {
        let w = Arc::new(Lock::new());
        let tag = Arc::new(AtomicU64::new(0));
        let data: Arc<State> = Arc::new(UnsafeCell::new((0, false)));
        let hs: Vec<_> = (2..=3u32)
            .map(|pid| {
                let (w, tag, data) = (w.clone(), tag.clone(), data.clone());
                loom::thread::spawn(move || pair_section(&w, &tag, &data, pid))
            })
            .collect();
        pair_section(&w, &tag, &data, 1);
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY: every thread has been joined.
        assert_eq!(data.with(|p| unsafe { (*p).0 }), 3);
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
    });
}

// ---- the Int64 slot and the repair after a stuck interval -----------------

use crate::ring::{Element, Repair, RepairSource};

/// A ring of `T` with repair state; `after` is the repair bound in ticks of
/// the loom clock (clock.rs, `now_ns`: one tick per reading).
struct Repaired<T: Element> {
    head: AtomicU64,
    tail: AtomicU64,
    slots: Vec<T::Slot>,
    stuck_pos: AtomicU64,
    stuck_since: AtomicU64,
    skipped: AtomicU64,
    recoveries: AtomicU64,
    after: u64,
}

impl<T: Element> Repaired<T>
where
    T::Slot: Default + Send + Sync,
{
    fn new(cap: usize, after: u64) -> Arc<Self> {
        let s = Arc::new(Repaired {
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
            slots: heap_slots::<T>(cap),
            stuck_pos: AtomicU64::new(0),
            stuck_since: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
            after,
        });
        s.ring().init();
        s
    }

    fn ring(&self) -> Ring<'_, T> {
        Ring::new(&self.head, &self.tail, &self.slots).with_repair(self)
    }

    /// Pop until an item comes (yielding on a miss); also returns how many
    /// misses said `InFlight` before any position was given up.
    fn pop_one(&self) -> (T, u32) {
        let mut early = 0;
        loop {
            match self.ring().try_pop() {
                Ok(v) => return (v, early),
                Err(m) => {
                    if m == Miss::InFlight && self.skipped.load(Ordering::Relaxed) == 0 {
                        early += 1;
                    }
                    loom::thread::yield_now();
                }
            }
        }
    }
}

impl<T: Element> RepairSource for Repaired<T>
where
    T::Slot: Sync,
{
    fn repair(&self) -> Repair<'_> {
        Repair {
            stuck_pos: &self.stuck_pos,
            stuck_since: &self.stuck_since,
            skipped: &self.skipped,
            recoveries: &self.recoveries,
            after_ns: self.after,
        }
    }
}

/// The Int64 slot (its 16-byte CAS emulated on one loom word, ring.rs):
/// two producers race for the two slots of a ring while the main thread
/// pops once. Whatever was accepted arrives exactly once, each producer's
/// items in order.
#[test]
fn loom_slot64_two_producers_one_consumer() {
    model(3, || {
        let s = Repaired::<i64>::new(2, 0);
        let spawn = |vals: &'static [i64]| {
            let s = s.clone();
            loom::thread::spawn(move || {
                vals.iter()
                    .copied()
                    .filter(|&v| s.ring().try_push(v).is_ok())
                    .collect::<Vec<i64>>()
            })
        };
        let (a, b) = (spawn(&[10, 11]), spawn(&[20, 21]));
        let mut got: Vec<i64> = s.ring().try_pop().into_iter().collect();
        let (pa, pb) = (a.join().unwrap(), b.join().unwrap());
        while let Ok(v) = s.ring().try_pop() {
            got.push(v);
        }
        let from = |t: i64| {
            got.iter()
                .copied()
                .filter(|v| v / 10 == t)
                .collect::<Vec<_>>()
        };
        assert_eq!(from(1), pa);
        assert_eq!(from(2), pb);
        assert_eq!(got.len(), pa.len() + pb.len());
    });
}

/// The Int64 slot's publish (16-byte CAS) racing a consumer's give-up
/// (8-byte CAS of the sequence) on the same slots: a batch producer
/// reserves two positions and publishes them while a consumer gives up at
/// once whatever it finds unpublished. What the producer counts as pushed
/// arrives once and in order; nothing else arrives.
#[test]
fn loom_slot64_publish_races_the_repair() {
    model(3, || {
        let s = Repaired::<i64>::new(4, 0);
        let c = {
            let s = s.clone();
            loom::thread::spawn(move || s.ring().try_pop().ok())
        };
        let n = s.ring().try_push_batch(&[1, 2]).unwrap_or(0);
        let pushed = [1i64, 2][..n].to_vec();
        let mut got: Vec<i64> = c.join().unwrap().into_iter().collect();
        while let Ok(v) = s.ring().try_pop() {
            got.push(v);
        }
        assert_eq!(got, pushed);
    });
}

/// Repair after a real stuck interval (bound 3 ticks, not the give-up-at-
/// once form): a producer "dies" right after reserving two positions of an
/// Int64 ring; a live producer pushes after it; a consumer pops until it
/// gets the live item. The consumer reports the hole `InFlight` before it
/// gives anything up (the clock starts at the first sighting), then gives
/// up both dead positions (the second without a new wait), and gets the
/// live item once.
#[test]
fn loom_repair_after_a_stuck_interval() {
    model(2, || {
        let s = Repaired::<i64>::new(4, 3);
        let dead = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let _ = s
                    .tail
                    .compare_exchange(0, 2, Ordering::SeqCst, Ordering::Relaxed);
            })
        };
        dead.join().unwrap();
        let live = {
            let s = s.clone();
            loom::thread::spawn(move || {
                while s.ring().try_push(7).is_err() {
                    loom::thread::yield_now();
                }
            })
        };
        let (v, early) = s.pop_one();
        live.join().unwrap();
        assert_eq!(v, 7);
        assert!(
            early >= 3,
            "gave a position up after {early} looks, not 3 ticks"
        );
        assert_eq!(s.skipped.load(Ordering::Relaxed), 2);
        assert_eq!(s.recoveries.load(Ordering::Relaxed), 2);
        assert_eq!(s.ring().try_pop(), Err(Miss::Settled));
    });
}

// ---- the Str look without the lock ----------------------------------------

/// The Str state reduced to an item count per copy, and `current` holding
/// the committed count above the copy bit, as `switch_to` stores it
/// (strq.rs, "Looking without the lock").
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
    /// there is one), committed as strq.rs commits: the other copy, then
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
