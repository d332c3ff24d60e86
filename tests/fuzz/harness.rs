//! The harness: each batch of cases runs in a forked child that reports
//! its progress in a shared page, so that the parent catches a crash or a
//! hang, names the case's seed, and goes on.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use data_queue_shared::Variant;

use crate::rng::Rng;

/// Per-child progress, in an anonymous shared page the parent reads.
#[repr(C)]
pub(crate) struct Status {
    /// Seed of the case being run.
    case: AtomicU64,
    /// Operations started (the hang detector watches it move).
    ops: AtomicU64,
    /// Code of the operation in progress (see `OPS`).
    op: AtomicU64,
    /// Cases finished.
    cases: AtomicU64,
    pub(crate) attach_ok: AtomicU64,
    pub(crate) attach_err: AtomicU64,
    /// Variant of the case (`Variant as u32`), once known.
    variant: AtomicU64,
}

pub(crate) const OPS: [&str; 26] = [
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
    "release_after/bury/touch",
    "push_delayed/kick/dead",
];

impl Status {
    pub(crate) fn enter(&self, op: usize) {
        self.op.store(op as u64, Ordering::Relaxed);
        self.ops.fetch_add(1, Ordering::Relaxed);
    }
}

pub(crate) fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub(crate) fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

#[derive(Default)]
pub(crate) struct Report {
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
pub(crate) fn drive(name: &str, case: fn(u64, &Status)) -> Report {
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

pub(crate) struct SharedPage(*mut u8);

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

pub(crate) fn child_dir(pid: u32) -> PathBuf {
    std::env::temp_dir().join(format!("dqs-fuzz-{pid}"))
}

pub(crate) fn assert_clean(r: Report) {
    assert!(r.cases > 0, "no case ran");
    assert!(
        r.failures.is_empty(),
        "{} failing cases (first 20):\n{}",
        r.failures.len(),
        r.failures[..r.failures.len().min(20)].join("\n")
    );
}

pub(crate) const VARIANTS: [Variant; 4] =
    [Variant::Int64, Variant::Int32, Variant::Int16, Variant::Str];

/// The variant of a new case: one of `DQS_FUZZ_VARIANTS` (comma-separated
/// names: Int, Int32, Int16, Str; default all).
pub(crate) fn pick_variant(rng: &mut Rng, st: &Status) -> Variant {
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
