//! Every loom model of the crate, one file per subject (the stand-ins loom
//! runs them on, the futex model in futex.rs and process death in the lock
//! module, stay beside the code they replace).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --lib loom`. Under
//! loom the futex is the model in futex.rs, where a waiter without a
//! deadline really blocks until a wake picks it: a lost wake-up leaves the
//! sleeper blocked for ever and loom reports the deadlock (or, for a
//! thread that keeps polling, an exceeded branch budget). Process death for
//! the lock takeover is the model in the lock module (`model_deaths`).
//!
//! * `ring_ops.rs`, the real ring on its own: producers, consumers and
//!   batches, each thread a model process with its own intent record, and
//!   the repair of positions a dead owner held (live owners never
//!   repaired).
//! * `lease.rs`, the Int lease protocol: the ring's pop for `pop_lease`
//!   against plain pops and pushes, with a leaser that dies before or after
//!   its take (the lease record reduced to three words, see the file).
//! * `lock_plain.rs`, the plain lock: two lockers never overlap.
//! * `wake.rs`, wait/wake ([`block_on`](crate::wait::block_on) and
//!   [`Side::wake`](crate::wait::Side::wake)): a consumer blocks on an
//!   empty queue and a producer pushes; two consumers block and are served
//!   by two pushes. Every waiter must finish. The reset that forgets a
//!   killed waiter's count never loses a live waiter's wake-up.
//! * `lock.rs`, the lock: mutual exclusion and no lost wake-up with three
//!   threads (the unlock's store and read of the sleeper count against the
//!   sleeper's count and read of the word: both barrier halves are SeqCst
//!   fences here, see the lock module);
//!   takeover from a holder that stopped inside its critical section (it
//!   takes the lock, half-updates the protected state and never unlocks):
//!   exactly one waiter recovers, sees the half update, repairs it, and
//!   every waiter gets the lock; a live holder is never taken over.
//!   The robust acquisition sleeps without deadline under loom until it is
//!   woken or its lock names a dead holder (`robust_sleep`), so
//!   the robust models fail on a lost wake-up too; the lock and unlock
//!   exactly as the Str hot paths make them (`try_acquire_robust`,
//!   `unlock`, `wake_one`) are modelled on their own.
//! * `ring.rs`, the real ring with its neighbours: a producer blocks on a
//!   full ring and a consumer on an empty one, both finish, with the
//!   ring's plain publish and free stores and the asymmetric barrier's two
//!   halves as the code has them (format 7); the Int64 slot's two stores
//!   against two producers.
//! * `strq.rs`, the Str queue's two sides (format 7): a producer and a
//!   consumer on their own locks, each reading only the other side's word,
//!   move every item once and in order, and loom finds no slot or arena
//!   cell access the words leave unordered; a back pop taking both locks
//!   against a front pop and a push; a blocked consumer that settles with
//!   the back before it sleeps never misses a push (modelled as x86 runs
//!   it), and its twin without the settle step loses the wake-up
//!   (`should_panic`); a side's commit (copies, then its word) with a
//!   holder that dies after each of its stores.

mod lease;
mod lock;
mod lock_plain;
mod ring;
mod ring_ops;
mod strq;
mod wake;
mod work;

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
