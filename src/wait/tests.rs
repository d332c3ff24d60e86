//! Unit tests of the waiter words' fruitless-wake tally and its reset, and of
//! the adaptive retry budget.

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

/// A wait on `side` whose item comes 1 ms after the waiter announced
/// itself (a lower bound, so the sleep is always longer than
/// [`PAYS_NS`]), or at the `at`-th attempt if that comes first. Returns
/// how many attempts it made.
fn counted_wait(side: Side<'_>, at: Option<u32>) -> u32 {
    let item = std::sync::atomic::AtomicBool::new(false);
    let mut attempts = 0u32;
    std::thread::scope(|s| {
        let provider = s.spawn(|| {
            if at.is_some() {
                return;
            }
            while waiter_count(side.waiters) == 0 {
                std::thread::yield_now();
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
            item.store(true, Ordering::SeqCst);
            side.wake(1);
        });
        let r = block_on(side, &Deadline::after_secs(60.0), || {
            attempts += 1;
            if item.swap(false, Ordering::SeqCst) || Some(attempts) == at {
                Ok(())
            } else {
                Err(Miss::Settled)
            }
        });
        assert_eq!(r, Waited::Done(()));
        provider.join().unwrap();
    });
    attempts
}

#[test]
fn an_idle_waiter_spins_less_each_wait_and_one_that_catches_its_item_spins_more() {
    let words: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
    let side = Side {
        waiters: &words[0],
        futex: &words[1],
    };
    // Each idle wait: the first attempt, one per retry of the budget, the
    // re-check after the announcement, the one after the wake-up; the
    // budget halves after each.
    let mut budget = SPIN_MAX;
    for _ in 0..7 {
        assert_eq!(spin_budget(side), budget);
        assert_eq!(counted_wait(side, None), budget + 3);
        budget = (budget / 2).max(SPIN_MIN);
    }
    assert_eq!(budget, SPIN_MIN, "an idle waiter barely spins");
    // Retries that catch the item double the budget.
    assert_eq!(counted_wait(side, Some(3)), 3);
    assert_eq!(spin_budget(side), 2 * SPIN_MIN);
    // A wait that finds the item at its first attempt says nothing.
    assert_eq!(counted_wait(side, Some(1)), 1);
    assert_eq!(spin_budget(side), 2 * SPIN_MIN);
    // Each side has its own budget.
    let other = Side {
        waiters: &words[2],
        futex: &words[3],
    };
    assert_eq!(spin_budget(other), SPIN_MAX);
}
