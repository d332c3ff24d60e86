//! Unit tests of `Deadline` (zero, negative, NaN, infinite) and of a futex
//! wait that times out or returns at once.

use super::*;

#[test]
fn zero_timeout_is_already_expired() {
    assert!(Deadline::after_secs(0.0).expired());
}

#[test]
fn negative_nan_and_inf_wait_forever() {
    for t in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300] {
        assert_eq!(Deadline::after_secs(t).forever, 1, "{t}");
    }
}

#[test]
fn wait_times_out_when_nobody_wakes() {
    let w = AtomicU32::new(7);
    let d = Deadline::after_secs(0.05);
    let t0 = std::time::Instant::now();
    let mut r = wait(&w, 7, &d);
    while r == WaitResult::Woken && !d.expired() {
        r = wait(&w, 7, &d);
    }
    assert!(t0.elapsed().as_millis() >= 45);
}

#[test]
fn wait_returns_at_once_when_word_differs() {
    let w = AtomicU32::new(1);
    assert_eq!(wait(&w, 2, &Deadline::FOREVER), WaitResult::Woken);
}
