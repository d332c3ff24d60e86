//! `scribble_fuzz`: random operations on a queue while another thread
//! writes edge and random values into its header words, slots and arena.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use data_queue_shared::layout::{
    Geometry, DEAD_REC_SIZE, HEADER_SIZE, LEASE_HEAD_SIZE, LEASE_REC_SIZE,
};
use data_queue_shared::{IntQueue, StrQueue, Variant};

use crate::harness::{assert_clean, drive, pick_variant, Status};
use crate::ops::{int_ops, str_ops};
use crate::rng::Rng;

/// Writes edge and random values into a live mapping until stopped or
/// until it has made `writes` writes.
fn scribble(base: usize, geo: Geometry, seed: u64, writes: u64, stop: &AtomicBool) {
    let mut rng = Rng::new(seed);
    let slots_end = HEADER_SIZE as u64 + geo.capacity * geo.variant.slot_size();
    let cap = geo.capacity;
    for i in 0..writes {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let lease_words = if geo.max_leases == 0 {
            0
        } else {
            (LEASE_HEAD_SIZE
                + LEASE_REC_SIZE * geo.max_leases
                + DEAD_REC_SIZE * geo.max_dead
                + geo.lease_bytes
                - 16)
                / 8
        };
        let recs = geo.lease_off + LEASE_HEAD_SIZE;
        let dead = recs + LEASE_REC_SIZE * geo.max_leases;
        let off = match rng.below(14) {
            // the dead-letter records (format 8)
            12 if geo.max_dead > 0 => dead + 8 * rng.below(geo.max_dead * DEAD_REC_SIZE / 8),
            // a lease record's work words (format 8: deliveries, length,
            // due, qpos) or its state, or the head's work line
            13 if lease_words > 0 => match rng.below(3) {
                0 => recs + LEASE_REC_SIZE * rng.below(geo.max_leases) + 64 + 8 * rng.below(4),
                1 => recs + LEASE_REC_SIZE * rng.below(geo.max_leases),
                _ => geo.lease_off + 64 + 8 * rng.below(16),
            },
            // the lease table (format 6) past the Int lease lock's two
            // words, which name a live holder as the Str lock's do (the
            // Str lock has a timeout here; the lease lock waits a second)
            10 | 11 if lease_words > 0 => geo.lease_off + 16 + 8 * rng.below(lease_words),
            // run-time header words (lines 1-4), 8-byte aligned
            0..=4 | 10..=13 => 64 + 8 * rng.below(32),
            // slot words
            5..=7 => HEADER_SIZE as u64 + 4 * rng.below((slots_end - HEADER_SIZE as u64) / 4),
            // the arena, or line 0 (copied at attach, so harmless)
            _ if geo.arena_cap >= 8 => geo.arena_off + 8 * rng.below(geo.arena_cap / 8),
            _ => 8 * rng.below(8),
        };
        let p = (base + off as usize) as *const u8;
        // SAFETY: `off` is inside the mapping and aligned for the width.
        unsafe {
            let cur = if off % 8 == 0 {
                (*(p as *const AtomicU64)).load(Ordering::Relaxed)
            } else {
                u64::from((*(p as *const AtomicU32)).load(Ordering::Relaxed))
            };
            let hints = [cur, cap, cap - 1, geo.arena_cap, geo.arena_cap / 2, i];
            let v = rng.interesting(&hints);
            if off % 8 == 0 && rng.chance(70) {
                (*(p as *const AtomicU64)).store(v, Ordering::Relaxed);
            } else {
                (*(p as *const AtomicU32)).store(v as u32, Ordering::Relaxed);
            }
        }
        if rng.chance(5) {
            std::thread::yield_now();
        }
    }
}

fn scribble_case(seed: u64, st: &Status) {
    let mut rng = Rng::new(seed);
    st.enter(0);
    let v = pick_variant(&mut rng, st);
    let cap = 1 << rng.below(7);
    let two = rng.chance(30);
    let writes = rng.below(3000);
    let ops = 20 + rng.below(300);
    let quiet_ops = 50 + rng.below(100);
    let name = CString::new("dqs-fuzz").unwrap();
    macro_rules! run {
        ($q:expr, $second:expr, $ops:ident, $setup:expr) => {{
            let q = $q;
            $setup(&q);
            // SAFETY: offset 0 (the header's first byte) is inside every
            // mapping; `scribble` writes only inside the mapping too.
            let base = unsafe { q.region().at(0) } as usize;
            let geo = *q.region().geometry();
            let stop = Arc::new(AtomicBool::new(false));
            let s2 = Arc::clone(&stop);
            let sseed = rng.next();
            let mut rng2 = Rng::new(rng.next());
            // The second handle attaches before the header can be damaged.
            let q2 = if two { Some($second(&q)) } else { None };
            std::thread::scope(|sc| {
                let scrib = sc.spawn(move || scribble(base, geo, sseed, writes, &s2));
                let other = if let Some(q2) = q2 {
                    Some(sc.spawn(move || {
                        $setup(&q2);
                        $ops(&q2, &mut rng2, st, ops);
                    }))
                } else {
                    None
                };
                $ops(&q, &mut rng, st, ops);
                stop.store(true, Ordering::Relaxed);
                scrib.join().unwrap();
                if let Some(o) = other {
                    o.join().unwrap();
                }
            });
            // No more corruption: whatever state it left must not wedge
            // anything either.
            $ops(&q, &mut rng, st, quiet_ops);
            st.enter(18);
        }};
    }
    fn nothing<Q>(_: &Q) {}
    fn str_setup(q: &StrQueue) {
        q.set_lock_timeout(Some(0.002));
        // Compress what is pushed (the fuzz's items are patterned bytes,
        // which shrink); `str_ops` turns it off and on again at random.
        q.set_compress(32, 1).unwrap();
    }
    // Work-queue options (format 8): a small delivery limit and a small
    // dead-letter area, so that moves, full areas and kicks happen.
    let md = rng.below(4);
    let nd = rng.below(4);
    data_queue_shared::lease::with_work_options(Some(md), Some(nd), || match v {
        Variant::Int64 => run!(
            IntQueue::<i64>::memfd(&name, cap).unwrap(),
            |q: &IntQueue<i64>| IntQueue::<i64>::from_fd(q.fd()).unwrap(),
            int_ops,
            nothing
        ),
        Variant::Int32 => run!(
            IntQueue::<i32>::memfd(&name, cap).unwrap(),
            |q: &IntQueue<i32>| IntQueue::<i32>::from_fd(q.fd()).unwrap(),
            int_ops,
            nothing
        ),
        Variant::Int16 => run!(
            IntQueue::<i16>::memfd(&name, cap).unwrap(),
            |q: &IntQueue<i16>| IntQueue::<i16>::from_fd(q.fd()).unwrap(),
            int_ops,
            nothing
        ),
        Variant::Str => {
            let arena = if rng.chance(50) {
                0
            } else {
                4096 + rng.below(20000)
            };
            run!(
                StrQueue::memfd(&name, cap, arena).unwrap(),
                |q: &StrQueue| StrQueue::from_fd(q.fd()).unwrap(),
                str_ops,
                str_setup
            )
        }
    })
}

#[test]
fn scribble_fuzz() {
    assert_clean(drive("scribble_fuzz", scribble_case));
}
