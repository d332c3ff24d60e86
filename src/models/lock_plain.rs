//! The loom model of the plain lock: two lockers never overlap.

use crate::lock::{Lock, LockGuard};
use crate::sync::Ordering;
use loom::cell::UnsafeCell;
use loom::sync::Arc;

#[test]
fn loom_lock_excludes() {
    loom::model(|| {
        let w = Arc::new(Lock::new());
        let data = Arc::new(UnsafeCell::new(0u32));
        let hs: Vec<_> = (1..=2u32)
            .map(|pid| {
                let (w, data) = (w.clone(), data.clone());
                loom::thread::spawn(move || {
                    let (_g, _) = LockGuard::acquire_as(&w, pid);
                    // SAFETY: only touched under the lock; loom checks
                    // that the accesses never overlap.
                    data.with_mut(|p| unsafe { *p += 1 });
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY: both threads have been joined.
        assert_eq!(data.with(|p| unsafe { *p }), 2);
        assert_eq!(w.word.load(Ordering::Relaxed), 0);
    });
}
