//! Hand-rolled, seedable, time-bounded fuzzing (cargo-fuzz needs a nightly
//! toolchain and an extra crate; this needs neither).
//!
//! * `header_fuzz`: valid queue files of every variant are damaged (header
//!   bytes flipped, fields set to edge values, geometry rewritten
//!   consistently, truncated, extended, replaced by random bytes, zeroed)
//!   and attached by path and by fd, as the right or a wrong variant.
//!   Attaching must fail with an error or give a handle on which a few
//!   operations run without crashing or hanging. `validate_header` is also
//!   fuzzed directly: whatever geometry it accepts fits the backing size.
//! * `scribble_fuzz`: one or two threads run random operations (single,
//!   batch, blocking with a 1 ms deadline, peek, clear, stats, size) on a
//!   queue while another thread writes edge and random values into its
//!   header words (state copies, counters, lock, copy switch), its slots
//!   and its arena, through a raw pointer into the mapping. Then the
//!   scribbler stops and the operations go on for a while. Nothing may
//!   crash or hang.
//!
//! Every case runs in a forked child (a batch of cases per child), so a
//! crash (any signal) or a hang (no operation finished for
//! `DQS_FUZZ_HANG_SECS`, default 3 s) is caught, reported with the seed of
//! the exact case and the operation it was in, and the run goes on.
//!
//! ```text
//! cargo test --release --test fuzz                      # ~1 s per target
//! DQS_FUZZ_SECS=600 cargo test --release --test fuzz -- --nocapture
//! DQS_FUZZ_SEED=1234 ...                                # repeat a run
//! DQS_FUZZ_CASE=0x1f2e... cargo test --test fuzz scribble -- --nocapture
//!                                                       # one case, in-process
//! ```

use std::ffi::CString;
use std::os::unix::io::AsRawFd;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use data_queue_shared::layout::{Geometry, HEADER_SIZE};
use data_queue_shared::region::validate_header;
use data_queue_shared::ring::Element;
use data_queue_shared::LeaseError;
use data_queue_shared::{Deadline, Error, IntQueue, StrQueue, Variant};

// ---------------------------------------------------------------- RNG ----

/// xorshift64* (Vigna): small, fast, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so that nearby seeds diverge at once.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 1 } else { z })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// An edge value, a value near one of `hints`, or a random one.
    fn interesting(&mut self, hints: &[u64]) -> u64 {
        const EDGES: [u64; 14] = [
            0,
            1,
            2,
            7,
            8,
            255,
            4096,
            u32::MAX as u64,
            1 << 31,
            1 << 32,
            1 << 62,
            1 << 63,
            u64::MAX,
            u64::MAX - 1,
        ];
        match self.below(4) {
            0 => EDGES[self.below(EDGES.len() as u64) as usize],
            1 | 2 if !hints.is_empty() => {
                let h = hints[self.below(hints.len() as u64) as usize];
                h.wrapping_add(self.below(7)).wrapping_sub(3)
            }
            _ => self.next() >> self.below(64),
        }
    }
}

// ------------------------------------------------------------ harness ----

/// Per-child progress, in an anonymous shared page the parent reads.
#[repr(C)]
struct Status {
    /// Seed of the case being run.
    case: AtomicU64,
    /// Operations started (the hang detector watches it move).
    ops: AtomicU64,
    /// Code of the operation in progress (see `OPS`).
    op: AtomicU64,
    /// Cases finished.
    cases: AtomicU64,
    attach_ok: AtomicU64,
    attach_err: AtomicU64,
    /// Variant of the case (`Variant as u32`), once known.
    variant: AtomicU64,
}

const OPS: [&str; 24] = [
    "setup",
    "push",
    "pop",
    "push_wait",
    "pop_wait",
    "push_multi",
    "push_slice",
    "pop_multi",
    "peek",
    "len",
    "stats",
    "clear",
    "is_full",
    "push_front",
    "pop_back",
    "pop_multi_budget",
    "attach",
    "set_lock_timeout",
    "drop",
    "is_empty",
    "pop_checked",
    "set_compress",
    "pop_lease",
    "ack/release",
];

impl Status {
    fn enter(&self, op: usize) {
        self.op.store(op as u64, Ordering::Relaxed);
        self.ops.fetch_add(1, Ordering::Relaxed);
    }
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

#[derive(Default)]
struct Report {
    children: u64,
    cases: u64,
    ops: u64,
    attach_ok: u64,
    attach_err: u64,
    failures: Vec<String>,
    /// "variant: verdict, in op" of each failure, for the summary.
    kinds: Vec<String>,
}

/// Run `case` on fresh seeds for the time budget, a batch per forked
/// child, and collect what went wrong.
fn drive(name: &str, case: fn(u64, &Status)) -> Report {
    let mut report = Report::default();
    let status_page = SharedPage::new();
    let st = status_page.status();
    if let Some(one) = env_u64("DQS_FUZZ_CASE") {
        eprintln!("{name}: replaying case {one:#x} in-process");
        case(one, st);
        report.cases = 1;
        return report;
    }
    let budget = Duration::from_secs_f64(env_f64("DQS_FUZZ_SECS", 1.0));
    let hang = Duration::from_secs_f64(env_f64("DQS_FUZZ_HANG_SECS", 3.0));
    let seed = env_u64("DQS_FUZZ_SEED").unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        t.as_nanos() as u64 ^ u64::from(std::process::id())
    });
    eprintln!("{name}: seed {seed:#x} (DQS_FUZZ_SEED repeats the run), budget {budget:?}");
    let mut master = Rng::new(seed);
    let start = Instant::now();
    while start.elapsed() < budget {
        let child_seed = master.next();
        let slice = (budget.saturating_sub(start.elapsed())).min(Duration::from_millis(500));
        for w in [
            &st.case,
            &st.ops,
            &st.op,
            &st.cases,
            &st.attach_ok,
            &st.attach_err,
            &st.variant,
        ] {
            w.store(0, Ordering::Relaxed);
        }
        // SAFETY: the child only runs the case code and then _exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
        if pid == 0 {
            // A hung child must not outlive an interrupted run.
            // SAFETY: plain syscall.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            let mut rng = Rng::new(child_seed);
            let t0 = Instant::now();
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                while t0.elapsed() < slice {
                    let c = rng.next();
                    st.case.store(c, Ordering::Relaxed);
                    case(c, st);
                    st.cases.fetch_add(1, Ordering::Relaxed);
                }
            }));
            // SAFETY: leave without running the parent's atexit handlers.
            unsafe { libc::_exit(if r.is_ok() { 0 } else { 3 }) };
        }
        report.children += 1;
        let mut last_ops = u64::MAX;
        let mut last_move = Instant::now();
        let mut wstatus = 0;
        let verdict = loop {
            // SAFETY: plain syscall.
            let r = unsafe { libc::waitpid(pid, &mut wstatus, libc::WNOHANG) };
            if r == pid {
                break None;
            }
            let ops = st.ops.load(Ordering::Relaxed);
            if ops != last_ops {
                last_ops = ops;
                last_move = Instant::now();
            } else if last_move.elapsed() > hang {
                // SAFETY: our own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut wstatus, 0);
                }
                break Some(format!("hang (no operation finished in {hang:?})"));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let _ = std::fs::remove_dir_all(child_dir(pid as u32));
        let verdict = verdict.or_else(|| {
            if libc::WIFSIGNALED(wstatus) {
                Some(format!("killed by signal {}", libc::WTERMSIG(wstatus)))
            } else if libc::WEXITSTATUS(wstatus) != 0 {
                Some(format!("panicked (exit {})", libc::WEXITSTATUS(wstatus)))
            } else {
                None
            }
        });
        report.cases += st.cases.load(Ordering::Relaxed);
        report.ops += st.ops.load(Ordering::Relaxed);
        report.attach_ok += st.attach_ok.load(Ordering::Relaxed);
        report.attach_err += st.attach_err.load(Ordering::Relaxed);
        if let Some(v) = verdict {
            let op = OPS
                .get(st.op.load(Ordering::Relaxed) as usize)
                .copied()
                .unwrap_or("?");
            let variant = Variant::from_u32(st.variant.load(Ordering::Relaxed) as u32)
                .map_or("?", Variant::name);
            let case = st.case.load(Ordering::Relaxed);
            report.kinds.push(format!(
                "{variant}: {}, in {op}",
                v.split(" (").next().unwrap_or(&v)
            ));
            report.failures.push(format!(
                "{name}: {variant} case {case:#x}: {v}, in {op} (DQS_FUZZ_CASE={case:#x} replays it)"
            ));
            report.cases += 1;
        }
    }
    eprintln!(
        "{name}: {} cases, {} operations, {} attached, {} refused, {} children, {:.1} s, \
         {} failures",
        report.cases,
        report.ops,
        report.attach_ok,
        report.attach_err,
        report.children,
        start.elapsed().as_secs_f64(),
        report.failures.len()
    );
    let mut kinds: Vec<&str> = report.kinds.iter().map(String::as_str).collect();
    kinds.sort();
    kinds.dedup();
    for k in &kinds {
        eprintln!("  kind: {k}");
    }
    for f in report.failures.iter().take(20) {
        eprintln!("  {f}");
    }
    report
}

struct SharedPage(*mut u8);

impl SharedPage {
    fn new() -> SharedPage {
        // SAFETY: a fresh anonymous shared mapping.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        SharedPage(p.cast())
    }

    fn status(&self) -> &Status {
        // SAFETY: a zeroed page is a valid Status of atomics.
        unsafe { &*(self.0 as *const Status) }
    }
}

impl Drop for SharedPage {
    fn drop(&mut self) {
        // SAFETY: what mmap returned.
        unsafe { libc::munmap(self.0.cast(), 4096) };
    }
}

fn child_dir(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("dqs-fuzz-{pid}"))
}

fn assert_clean(r: Report) {
    assert!(r.cases > 0, "no case ran");
    assert!(
        r.failures.is_empty(),
        "{} failing cases (first 20):\n{}",
        r.failures.len(),
        r.failures[..r.failures.len().min(20)].join("\n")
    );
}

// ---------------------------------------------------------- operations ----

/// The element types, as far as the fuzzer needs them.
trait Val: Element + std::fmt::Debug {
    fn from_u64(u: u64) -> Self;
}
impl Val for i64 {
    fn from_u64(u: u64) -> Self {
        u as i64
    }
}
impl Val for i32 {
    fn from_u64(u: u64) -> Self {
        u as i32
    }
}
impl Val for i16 {
    fn from_u64(u: u64) -> Self {
        u as i16
    }
}

fn short() -> Deadline {
    Deadline::after_secs(0.001)
}

fn int_ops<T: Val>(q: &IntQueue<T>, rng: &mut Rng, st: &Status, n: u64) {
    let cap = q.capacity();
    let mut out = [T::from_u64(0); 40];
    let mut leases: Vec<u64> = Vec::new();
    for _ in 0..n {
        // Leases (format 6): whatever the table holds, a lease call
        // returns or fails with a `LeaseError`, never panics or hangs.
        if rng.chance(15) {
            lease_op(
                rng,
                st,
                &mut leases,
                |t| q.pop_lease(t).map(|o| o.map(|x| x.1)),
                |l, back| if back { q.release(l) } else { q.ack(l) },
                || q.lease_stats().open + q.leases().len() as u64,
            );
            continue;
        }
        match rng.below(13) {
            0 | 1 => {
                st.enter(1);
                q.push(T::from_u64(rng.next()));
            }
            2 | 3 => {
                st.enter(2);
                q.pop();
            }
            4 => {
                st.enter(3);
                let _ = q.push_wait(T::from_u64(rng.next()), &short());
            }
            5 => {
                st.enter(4);
                let _ = q.pop_wait(&short());
            }
            6 => {
                st.enter(5);
                let k = rng.below(40);
                let vals: Vec<T> = (0..k).map(|i| T::from_u64(i)).collect();
                let got = q.push_multi(vals.iter().copied());
                assert!(got as u64 <= k, "push_multi pushed {got} of {k}");
            }
            7 => {
                st.enter(6);
                let k = rng.below(40) as usize;
                let vals: Vec<T> = (0..k).map(|i| T::from_u64(i as u64)).collect();
                let got = q.push_slice(&vals);
                assert!(got <= k, "push_slice pushed {got} of {k}");
            }
            8 => {
                st.enter(7);
                let k = rng.below(41) as usize;
                let got = q.pop_multi(&mut out[..k]);
                assert!(got <= k, "pop_multi popped {got} into {k}");
            }
            9 => {
                st.enter(8);
                q.peek();
            }
            10 => {
                st.enter(9);
                // Items back from leases wait beside the ring (format 6):
                // up to `max_leases` more than the capacity.
                let n = q.len();
                let most = cap + q.region().geometry().max_leases;
                assert!(n <= most, "len {n} above capacity {cap} + leases");
                st.enter(12);
                q.is_full();
                st.enter(19);
                q.is_empty();
            }
            11 => {
                st.enter(10);
                let s = q.stats();
                let most = cap + q.region().geometry().max_leases;
                assert!(
                    s.size <= most,
                    "stats size {} above capacity {cap} + leases",
                    s.size
                );
                assert_eq!(s.capacity, cap);
            }
            _ => {
                if rng.chance(30) {
                    st.enter(11);
                    q.clear();
                }
            }
        }
    }
}

/// One lease call: a `pop_lease` (with or without a deadline), an ack or
/// a release of a lease taken before (or of a made-up id), or a look at
/// the table.
fn lease_op(
    rng: &mut Rng,
    st: &Status,
    leases: &mut Vec<u64>,
    pop: impl Fn(Option<f64>) -> Result<Option<u64>, LeaseError>,
    end: impl Fn(u64, bool) -> Result<bool, LeaseError>,
    look: impl Fn() -> u64,
) {
    match rng.below(4) {
        0 | 1 => {
            st.enter(22);
            let t = rng.chance(30).then(|| 0.001 * rng.below(3) as f64);
            if let Ok(Some(l)) = pop(t) {
                leases.push(l);
            }
        }
        2 => {
            st.enter(23);
            let l = if !leases.is_empty() && rng.chance(80) {
                leases.swap_remove(rng.below(leases.len() as u64) as usize)
            } else {
                rng.next()
            };
            let _ = end(l, rng.chance(50));
        }
        _ => {
            st.enter(10);
            look();
        }
    }
}

fn str_ops(q: &StrQueue, rng: &mut Rng, st: &Status, n: u64) {
    let cap = q.capacity();
    let arena = q.stats().arena_cap;
    let mut buf = Vec::new();
    let mut items = Vec::new();
    let bytes: Vec<u8> = (0..6000u32).map(|i| (i * 7) as u8).collect();
    let len = |rng: &mut Rng| -> usize {
        match rng.below(10) {
            0 => 0,
            1 => rng.below(6000) as usize,
            _ => rng.below(300) as usize,
        }
    };
    let mut leases: Vec<u64> = Vec::new();
    for _ in 0..n {
        if rng.chance(15) {
            lease_op(
                rng,
                st,
                &mut leases,
                |t| {
                    let mut b = Vec::new();
                    q.pop_lease(t, &mut b).map(|o| o.map(|x| x.1))
                },
                |l, back| if back { q.release(l) } else { q.ack(l) },
                || q.lease_stats().open + q.leases().len() as u64,
            );
            continue;
        }
        let op = rng.below(17);
        match op {
            0 | 1 => {
                st.enter(1);
                let _ = q.push(&bytes[..len(rng)], rng.chance(50));
            }
            15 => {
                // Compressed items (their slot flag, their frames) are
                // scribbled over too: a checked pop either gives an item or
                // says it could not decode one, nothing else.
                st.enter(20);
                buf.clear();
                let r = if rng.chance(50) {
                    q.pop_checked(rng.chance(50), &mut buf)
                } else {
                    q.peek_checked(&mut buf)
                };
                match r {
                    Ok(_) | Err(Error::Corrupt(_)) => {}
                    Err(e) => panic!("a checked pop failed with {e}"),
                }
            }
            16 => {
                st.enter(21);
                let min = [0, 1, 64, 500][rng.below(4) as usize];
                q.set_compress(min, [1, 3, -1][rng.below(3) as usize])
                    .unwrap();
            }
            2 => {
                st.enter(13);
                let _ = q.push_front(&bytes[..len(rng)], false);
            }
            3 | 4 => {
                st.enter(if op == 3 { 2 } else { 14 });
                buf.clear();
                if q.pop(op == 4, &mut buf).is_some() {
                    // A compressed item may be longer than the arena, never
                    // longer than the longest item pushed (its checksum
                    // holds).
                    assert!(
                        buf.len() as u64 <= arena.max(bytes.len() as u64),
                        "popped {} bytes from a {arena}-byte arena",
                        buf.len()
                    );
                }
            }
            5 => {
                st.enter(3);
                let _ = q.push_wait(&bytes[..len(rng)], false, false, &short());
            }
            6 => {
                st.enter(4);
                buf.clear();
                let _ = q.pop_wait(rng.chance(50), &mut buf, &short());
            }
            7 => {
                st.enter(5);
                let k = rng.below(20) as usize;
                let v: Vec<(&[u8], bool)> = (0..k).map(|_| (&bytes[..len(rng)], false)).collect();
                if let Ok(got) = q.push_multi(&v) {
                    assert!(got <= k, "push_multi pushed {got} of {k}");
                }
            }
            8 => {
                st.enter(7);
                buf.clear();
                items.clear();
                let k = rng.below(30) as usize;
                let budget = if rng.chance(50) {
                    Some(rng.below(5000))
                } else {
                    None
                };
                let got = q.pop_multi(k, budget, &mut buf, &mut items);
                assert!(got <= k, "pop_multi popped {got} of {k}");
                for &(off, l, _) in &items {
                    assert!(off + l <= buf.len(), "item {off}+{l} outside {}", buf.len());
                }
            }
            9 => {
                st.enter(15);
                buf.clear();
                items.clear();
                let k = rng.below(30) as usize;
                let got = q.pop_multi_budget(k, Some(rng.below(3000)), true, &mut buf, &mut items);
                assert!(got <= k, "pop_multi_budget popped {got} of {k}");
            }
            10 => {
                st.enter(8);
                buf.clear();
                q.peek(&mut buf);
            }
            11 => {
                st.enter(9);
                let n = q.len();
                assert!(n <= cap, "len {n} above capacity {cap}");
                st.enter(12);
                q.is_full();
            }
            12 => {
                st.enter(10);
                let s = q.stats();
                assert!(s.size <= cap, "stats size {} above capacity {cap}", s.size);
            }
            13 => {
                if rng.chance(30) {
                    st.enter(11);
                    q.clear();
                }
            }
            _ => {
                st.enter(17);
                // Mostly shorter than the takeover poll interval (10 ms); now
                // and then long enough to take a dead-looking lock over and
                // start from whatever state copy the scribbler left current.
                let t = if rng.chance(10) {
                    0.03
                } else {
                    0.0005 * rng.below(4) as f64
                };
                q.set_lock_timeout(Some(t));
            }
        }
    }
}

// -------------------------------------------------------- header fuzz ----

const VARIANTS: [Variant; 4] = [Variant::Int64, Variant::Int32, Variant::Int16, Variant::Str];

/// The variant of a new case: one of `DQS_FUZZ_VARIANTS` (comma-separated
/// names: Int, Int32, Int16, Str; default all).
fn pick_variant(rng: &mut Rng, st: &Status) -> Variant {
    let allowed: Vec<Variant> = match std::env::var("DQS_FUZZ_VARIANTS") {
        Ok(list) => VARIANTS
            .into_iter()
            .filter(|v| list.split(',').any(|n| n.trim() == v.name()))
            .collect(),
        Err(_) => VARIANTS.to_vec(),
    };
    assert!(!allowed.is_empty(), "DQS_FUZZ_VARIANTS names no variant");
    let v = allowed[rng.below(allowed.len() as u64) as usize];
    st.variant.store(v as u64, Ordering::Relaxed);
    v
}

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

/// Header field offsets (see layout.rs) and their widths.
const FIELDS: [(usize, usize); 10] = [
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
                Geometry::compute(want, g.capacity, g.arena_cap),
                "inconsistent geometry"
            );
        }
    }
}

#[test]
fn header_fuzz() {
    assert_clean(drive("header_fuzz", header_case));
}

// ------------------------------------------------------ scribble fuzz ----

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
            (64 * geo.max_leases + geo.lease_bytes + 48) / 8
        };
        let off = match rng.below(12) {
            // the lease table (format 6) past the Int lease lock's two
            // words, which name a live holder as the Str lock's do (the
            // Str lock has a timeout here; the lease lock waits a second)
            10 | 11 if lease_words > 0 => geo.lease_off + 16 + 8 * rng.below(lease_words),
            // run-time header words (lines 1-4), 8-byte aligned
            0..=4 | 10 | 11 => 64 + 8 * rng.below(32),
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
    match v {
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
    }
}

#[test]
fn scribble_fuzz() {
    assert_clean(drive("scribble_fuzz", scribble_case));
}
