//! The one monotonic clock: `CLOCK_MONOTONIC`, read through the vDSO (a few
//! ns). Deadlines ([`Deadline`](crate::Deadline)), the Str lock's watch on
//! a stuck holder and the integer ring's repair of stuck reservations all
//! read it here.

/// `CLOCK_MONOTONIC` as (seconds, nanoseconds).
pub(crate) fn now() -> (i64, i64) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec, ts.tv_nsec)
}

/// `CLOCK_MONOTONIC` in nanoseconds.
///
/// Under loom time is not modelled: each reading is one tick after the
/// last, so a consumer that keeps looking at a stuck position sees time
/// pass, the same way in every schedule (the models set `after_ns` in
/// ticks).
pub(crate) fn now_ns() -> u64 {
    #[cfg(not(loom))]
    {
        let (s, n) = now();
        (s as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(n as u64)
    }
    #[cfg(loom)]
    {
        use crate::sync::{AtomicU64, Ordering};
        loom::lazy_static! {
            static ref NOW: AtomicU64 = AtomicU64::new(1);
        }
        NOW.fetch_add(1, Ordering::Relaxed)
    }
}

/// `CLOCK_REALTIME` in nanoseconds since the epoch (the time a dead
/// letter was moved, for people; never used to order anything).
pub(crate) fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    (ts.tv_sec.max(0) as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec.max(0) as u64)
}
