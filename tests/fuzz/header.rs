//! `header_fuzz`: damaged queue files of every variant, attached by path
//! and by fd, as the right or a wrong variant; and the header validator
//! on the damaged bytes.

use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::Ordering;

use data_queue_shared::layout::{Geometry, HEADER_SIZE};
use data_queue_shared::region::validate_header;
use data_queue_shared::{IntQueue, StrQueue, Variant};

use crate::harness::{assert_clean, child_dir, drive, pick_variant, Status, VARIANTS};
use crate::ops::{int_ops, str_ops};
use crate::rng::Rng;

fn create(v: Variant, path: &Path, rng: &mut Rng, st: &Status) {
    let cap = if rng.chance(50) {
        1 << rng.below(7)
    } else {
        1 + rng.below(100)
    };
    let items = rng.below(cap + 1);
    match v {
        Variant::Int64 => {
            let q = IntQueue::<i64>::open(path, cap, 0o600).unwrap();
            int_ops(&q, rng, st, items);
        }
        Variant::Int32 => {
            let q = IntQueue::<i32>::open(path, cap, 0o600).unwrap();
            int_ops(&q, rng, st, items);
        }
        Variant::Int16 => {
            let q = IntQueue::<i16>::open(path, cap, 0o600).unwrap();
            int_ops(&q, rng, st, items);
        }
        Variant::Str => {
            let arena = if rng.chance(50) {
                0
            } else {
                4096 + rng.below(20000)
            };
            let q = StrQueue::open(path, cap, arena, 0o600).unwrap();
            q.set_lock_timeout(Some(0.001));
            str_ops(&q, rng, st, items);
        }
    }
}

/// Header field offsets (see layout.rs) and their widths: line 0, then
/// the lease geometry (format 6) and `max_dead` (format 8).
const FIELDS: [(usize, usize); 14] = [
    (0, 8),
    (8, 4),
    (12, 4),
    (16, 8),
    (24, 4),
    (28, 4),
    (32, 8),
    (40, 8),
    (48, 8),
    (56, 8),
    (280, 8),
    (288, 8),
    (296, 8),
    (312, 8),
];

fn put(b: &mut [u8], off: usize, width: usize, v: u64) {
    if off + width <= b.len() {
        b[off..off + width].copy_from_slice(&v.to_le_bytes()[..width]);
    }
}

fn get(b: &[u8], off: usize, width: usize) -> u64 {
    let mut w = [0u8; 8];
    if off + width <= b.len() {
        w[..width].copy_from_slice(&b[off..off + width]);
    }
    u64::from_le_bytes(w)
}

fn mutate(b: &mut Vec<u8>, rng: &mut Rng) {
    let len = b.len() as u64;
    match rng.below(10) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(HEADER_SIZE as u64) as usize;
                if i < b.len() {
                    b[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 | 2 => {
            let (off, w) = FIELDS[rng.below(FIELDS.len() as u64) as usize];
            let hints = [len, HEADER_SIZE as u64, get(b, off, w), 16, 8, 1 << 30];
            put(b, off, w, rng.interesting(&hints));
        }
        3 => {
            // Consistent geometry for another capacity or arena: passes
            // the field checks, so the size check must catch a mismatch.
            let variant = Variant::from_u32(get(b, 12, 4) as u32).unwrap_or(Variant::Int64);
            let cap = 1u64 << rng.below(31);
            let arena = if variant == Variant::Str {
                4096u64 << rng.below(21)
            } else {
                0
            };
            if let Some(g) = Geometry::compute(variant, cap, arena) {
                put(b, 16, 8, g.capacity);
                put(b, 40, 8, g.arena_off);
                put(b, 48, 8, g.arena_cap);
                put(b, 56, 8, g.total_size);
            }
        }
        4 => {
            let n = match rng.below(4) {
                0 => HEADER_SIZE as u64 - 1 - rng.below(8),
                1 => len.saturating_sub(1 + rng.below(16)),
                _ => rng.below(len + 1),
            };
            b.truncate(n as usize);
        }
        5 => {
            let extra = rng.below(8192) as usize;
            let zero = rng.chance(50);
            b.extend((0..extra).map(|_| if zero { 0 } else { rng.next() as u8 }));
        }
        6 => {
            // Slots and arena: shared-memory state read at run time.
            for _ in 0..1 + rng.below(16) {
                if b.len() > HEADER_SIZE {
                    let i = HEADER_SIZE + rng.below((b.len() - HEADER_SIZE) as u64) as usize;
                    b[i] = rng.next() as u8;
                }
            }
            // and the run-time header words
            let off = 64 + 8 * rng.below(24) as usize;
            let hints = [len, get(b, 16, 8), get(b, off, 8)];
            put(b, off, 8, rng.interesting(&hints));
        }
        7 => {
            let keep = if rng.chance(50) { 16 } else { 0 };
            let top = if rng.chance(50) { 512 } else { 70000 };
            let n = rng.below(top) as usize;
            b.truncate(keep.min(b.len()));
            while b.len() < n {
                b.push(rng.next() as u8);
            }
        }
        8 => {
            // An interrupted create: magic zero, perhaps more of the header.
            put(b, 0, 8, 0);
            if rng.chance(50) {
                let upto = rng.below(HEADER_SIZE as u64) as usize;
                for x in b.iter_mut().take(upto) {
                    *x = 0;
                }
            }
            if rng.chance(30) {
                b.iter_mut().for_each(|x| *x = 0);
            }
        }
        _ => {
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(b.len().max(1) as u64) as usize;
                if i < b.len() {
                    b[i] = rng.next() as u8;
                }
            }
        }
    }
}

fn attach_and_use(want: Variant, path: &Path, by_fd: bool, rng: &mut Rng, st: &Status) {
    let cap = 1 + rng.below(64);
    let file = if by_fd {
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        {
            Ok(f) => Some(f),
            Err(_) => return,
        }
    } else {
        None
    };
    let fd = file.as_ref().map_or(-1, |f| f.as_raw_fd());
    let ops = 5 + rng.below(40);
    st.enter(16);
    let outcome: Result<(), String> = match want {
        Variant::Int64 => {
            let q = if by_fd {
                IntQueue::<i64>::from_fd(fd)
            } else {
                IntQueue::<i64>::open(path, cap, 0o600)
            };
            q.map(|q| int_ops(&q, rng, st, ops))
                .map_err(|e| e.to_string())
        }
        Variant::Int32 => {
            let q = if by_fd {
                IntQueue::<i32>::from_fd(fd)
            } else {
                IntQueue::<i32>::open(path, cap, 0o600)
            };
            q.map(|q| int_ops(&q, rng, st, ops))
                .map_err(|e| e.to_string())
        }
        Variant::Int16 => {
            let q = if by_fd {
                IntQueue::<i16>::from_fd(fd)
            } else {
                IntQueue::<i16>::open(path, cap, 0o600)
            };
            q.map(|q| int_ops(&q, rng, st, ops))
                .map_err(|e| e.to_string())
        }
        Variant::Str => {
            let q = if by_fd {
                StrQueue::from_fd(fd)
            } else {
                StrQueue::open(path, cap, 0, 0o600)
            };
            q.map(|q| {
                q.set_lock_timeout(Some(0.001));
                str_ops(&q, rng, st, ops)
            })
            .map_err(|e| e.to_string())
        }
    };
    match outcome {
        Ok(()) => st.attach_ok.fetch_add(1, Ordering::Relaxed),
        Err(e) => {
            assert!(!e.is_empty(), "an empty error message");
            st.attach_err.fetch_add(1, Ordering::Relaxed)
        }
    };
}

fn header_case(seed: u64, st: &Status) {
    let mut rng = Rng::new(seed);
    let dir = child_dir(std::process::id());
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.q");
    let _ = std::fs::remove_file(&path);
    st.enter(0);
    let v = pick_variant(&mut rng, st);
    create(v, &path, &mut rng, st);
    let mut bytes = std::fs::read(&path).unwrap();
    for _ in 0..1 + rng.below(3) {
        mutate(&mut bytes, &mut rng);
    }
    std::fs::write(&path, &bytes).unwrap();
    let want = if rng.chance(80) {
        v
    } else {
        VARIANTS[rng.below(4) as usize]
    };
    attach_and_use(want, &path, rng.chance(40), &mut rng, st);
    // Property check of the validator itself, on the same bytes and on
    // sizes around them.
    let mut hdr = [0u8; HEADER_SIZE];
    let n = bytes.len().min(HEADER_SIZE);
    hdr[..n].copy_from_slice(&bytes[..n]);
    for _ in 0..8 {
        let size = rng.interesting(&[bytes.len() as u64, get(&hdr, 56, 8)]);
        let want = VARIANTS[rng.below(4) as usize];
        if let Ok(g) = validate_header(&hdr, want, size, "fuzz") {
            assert_eq!(g.variant, want);
            assert!(g.total_size <= size, "accepted {g:?} for {size} bytes");
            assert!(g.capacity.is_power_of_two() && g.capacity >= 2);
            assert_eq!(
                Some(g),
                Geometry::compute_full(
                    want,
                    g.capacity,
                    g.arena_cap,
                    g.max_leases,
                    g.lease_bytes,
                    g.max_dead
                ),
                "inconsistent geometry"
            );
        }
    }
}

#[test]
fn header_fuzz() {
    assert_clean(drive("header_fuzz", header_case));
}
