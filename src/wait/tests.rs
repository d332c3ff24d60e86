//! Unit tests of the waiter words' fruitless-wake tally and its reset.

use super::*;

#[test]
fn fruitless_wakes_are_tallied_per_side_and_reset_the_count() {
    // Two sides (two queues, or the two sides of one), each with the
    // count of a waiter killed in its sleep.
    let words: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
    let a = Side {
        waiters: &words[0],
        futex: &words[1],
    };
    let b = Side {
        waiters: &words[2],
        futex: &words[3],
    };
    a.announce();
    b.announce();
    for i in 1..RESET_AFTER {
        a.wake(1);
        assert_eq!(fruitless_wakes(a.futex), i);
    }
    assert_eq!(waiter_count(a.waiters), 1, "not yet");
    assert_eq!(fruitless_wakes(b.futex), 0, "the other side's tally");
    a.wake(1);
    assert_eq!(waiter_count(a.waiters), 0, "forgotten");
    assert_eq!(fruitless_wakes(a.futex), 0, "and the tally restarted");
    assert_eq!(
        a.waiters.load(Ordering::Relaxed) >> COUNT_BITS,
        1,
        "new epoch"
    );
    assert_eq!(waiter_count(b.waiters), 1, "the other side is untouched");
    // Nobody counted: no wake call, nothing tallied.
    a.wake(1);
    assert_eq!(fruitless_wakes(a.futex), 0);
}

#[test]
fn a_tally_from_shared_memory_is_only_a_hint() {
    let (w, f) = (AtomicU32::new(0), AtomicU32::new(0));
    let s = Side {
        waiters: &w,
        futex: &f,
    };
    // A hostile tally of 255: the next fruitless wake resets at once,
    // which is always safe.
    f.store(0xFF00_0000, Ordering::Relaxed);
    s.announce();
    s.wake(1);
    assert_eq!(waiter_count(&w), 0);
    assert_eq!(fruitless_wakes(&f), 0);
    // A waiter count of 2^24 - 1 and a tally just below the bound.
    w.store(COUNT_MASK, Ordering::Relaxed);
    f.store((RESET_AFTER - 2) << TALLY_SHIFT, Ordering::Relaxed);
    s.wake(1);
    assert_eq!(waiter_count(&w), u64::from(COUNT_MASK));
    s.wake(1);
    assert_eq!(waiter_count(&w), 0);
}

#[test]
fn a_wake_that_finds_a_sleeper_restarts_the_tally() {
    let (w, f) = (AtomicU32::new(0), AtomicU32::new(0));
    let s = Side {
        waiters: &w,
        futex: &f,
    };
    s.announce();
    s.wake(1);
    s.wake(1);
    assert_eq!(fruitless_wakes(&f), 2);
    assert_eq!(
        f.load(Ordering::Relaxed) & WAKES_MASK,
        2,
        "wake-ups counted"
    );
    s.woke(1);
    assert_eq!(fruitless_wakes(&f), 0);
    assert_eq!(f.load(Ordering::Relaxed) & WAKES_MASK, 2, "wake-ups kept");
    assert_eq!(waiter_count(&w), 1);
}
