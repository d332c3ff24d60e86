//! `dqs`: create, fill, drain and watch Data::Queue::Shared queue files
//! from the shell. Every subcommand but `create` attaches to an existing
//! file and reads its variant (Int, Int32, Int16, Str) from the header.
//!
//! Exit codes: 0 done; 1 the queue was empty or full, or a wait timed out;
//! 2 a usage error or a file that is missing or not a valid queue (always
//! with a one-line message on stderr). A SIGINT, SIGTERM or SIGHUP ends the
//! command cleanly (a blocked wait takes itself out of the waiter count)
//! and then kills it with the same signal, so the shell sees 128 + N.

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use data_queue_shared::any::{int_range, probe, AnyQueue};
use data_queue_shared::{Deadline, Error, Stats, Variant, Waited};

// ---- command line ------------------------------------------------------

const EXIT_CODES: &str = "\
Exit codes:
  0  done
  1  the queue was empty or full, or a --wait timed out
  2  usage error, or PATH is missing or not a valid queue file
  A SIGINT, SIGTERM or SIGHUP ends the command cleanly (a blocked wait
  first takes itself out of the queue's waiter count), then the process
  dies of that signal: the shell sees status 128 + N (130 for Ctrl-C).
  Output to a closed pipe ends it as SIGPIPE does (141), silently.";

const CREATE_HELP: &str = "\
Creates the queue file at PATH with room for --capacity items (rounded up
to a power of two, at least 2, at most 2**30). A Str queue also has a byte
arena for the strings: --arena BYTES (default capacity * 256, at least
4096, at most 4 GiB).

A new file gets --mode exactly (octal, default 0600; the umask does not
apply). When PATH already holds a queue of the same type and the geometry
this command would create, it is left as it is and the exit status is 0.
An empty file, or the all-zero file an interrupted create leaves, is made
into the queue with --mode, but only when your effective uid owns it. A
file holding another type, another capacity or arena, or no queue at all,
and an empty file somebody else owns, is an error (exit 2) and is not
touched.";

const PUSH_HELP: &str = "\
Pushes each VALUE, in order. A single VALUE of - reads the items from
standard input instead: one item per line (the newline is not part of the
item), or with -0 one item per NUL-terminated record; a last item without
its terminator counts too. To push a value that starts with -, put -- before
the values (dqs push q -- -x); negative numbers need no --.

Integer queues: each item is a decimal integer (surrounding blanks are
ignored). It is parsed as a 64-bit integer and must fit the queue's type:
a value outside -32768..32767 for int16, or outside the 32-bit range for
int32, is an error (exit 2, the message names the value). Values are never
truncated. Arguments are all checked before anything is pushed; from
standard input, the lines before a bad one have been pushed.

Str queues: items are bytes, pushed as they are (empty items too). The
UTF-8 flag that Perl consumers see (utf8::is_utf8) is set, by default, on
items that are valid UTF-8 and contain a non-ASCII character: Perl then
gets the characters, and pure ASCII comes out as a plain string with the
same bytes. --utf8 sets the flag on every item (one that is not valid
UTF-8 is an error, exit 2); --bytes never sets it. --compress MIN[:LEVEL]
stores the items of at least MIN bytes zstd-compressed at LEVEL (default
3; negative levels are zstd's fast ones) when that makes them shorter;
every reader (Perl, Rust, C, dqs pop) gets the original bytes back.

When the queue is full: without --wait the command stops at once (exit 1,
the message says how many items were pushed). With --wait SECS each item
waits up to SECS seconds for room (fractions allowed, inf waits forever);
a wait that times out stops the command (exit 1).";

const POP_HELP: &str = "\
Pops one item (or up to N with -n, or all there are with --all) and
prints it.

Output: by default each item on a line of its own; integers in decimal,
strings as text (bytes that are not valid UTF-8 are shown as U+FFFD, and
an item holding a newline spans lines). -0 prints the exact bytes of each
item followed by a NUL byte (integers: the decimal digits, then NUL).
--raw prints the exact bytes with nothing after them (to save one item to
a file; -0 with --raw is the same as -0). Integers ignore --raw.

Without --wait, an empty queue ends the command; with --wait SECS each
item waits up to SECS seconds (fractions allowed, inf waits forever). With
--all, only the first item waits; the rest is what is there. The exit
status is 1 when fewer items than asked for were popped (with -n N, fewer
than N; otherwise none); the items popped before that are printed.
Items popped are gone from the queue even if they could not be printed.
Compressed items are printed decoded; one that cannot be decoded (its
shared memory was scribbled over, exit 2) is removed all the same.";

const PEEK_HELP: &str = "\
Prints the item at the front of the queue without removing it (output
options as for pop). Exit 1 when the queue is empty. For integer queues the
value is a best-effort look while others pop concurrently.";

const STATS_HELP: &str = "\
Prints the queue's counters and gauges, one per line (name, value). With
--json, one JSON object on one line instead, keys: path, type, size,
capacity, mmap_size, push_ok, pop_ok, push_full, pop_empty, recoveries,
push_waiters, pop_waiters, and for Str queues also arena_cap, arena_used,
lock_acquired, lock_contended, compressed, compressed_saved. Numbers are
JSON integers.";

const WATCH_HELP: &str = "\
Shows the queue's size, push and pop rates per second (from the change of
push_ok and pop_ok since the previous refresh), the processes blocked
waiting to push and to pop, and (Str) the arena in use, refreshed every
--interval seconds. On a terminal the line is redrawn in place; otherwise
one line is printed per refresh. --count N stops after N refreshes
(default: until interrupted).";

#[derive(Parser, Debug)]
#[command(
    name = "dqs",
    version,
    about = "Create, fill, drain and watch Data::Queue::Shared queue files",
    long_about = "Create, fill, drain and watch Data::Queue::Shared queue files.\n\n\
Every subcommand but create attaches to an existing queue file (it never\n\
creates one) and reads its type (int, int32, int16 or str) from the header.\n\
See 'dqs help SUBCOMMAND' for each one.",
    after_help = EXIT_CODES,
    subcommand_required = true
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Create a queue file
    #[command(long_about = CREATE_HELP, after_help = EXIT_CODES)]
    Create(CreateArgs),
    /// Push values (or lines from standard input) onto a queue
    #[command(long_about = PUSH_HELP, after_help = EXIT_CODES, allow_negative_numbers = true)]
    Push(PushArgs),
    /// Pop items and print them
    #[command(long_about = POP_HELP, after_help = EXIT_CODES)]
    Pop(PopArgs),
    /// Print the front item without removing it
    #[command(long_about = PEEK_HELP, after_help = EXIT_CODES)]
    Peek(PeekArgs),
    /// Print the queue's counters
    #[command(long_about = STATS_HELP, after_help = EXIT_CODES)]
    Stats(StatsArgs),
    /// Show live size, rates and waiters
    #[command(long_about = WATCH_HELP, after_help = EXIT_CODES)]
    Watch(WatchArgs),
    /// List the leases open or waiting (pop_lease), oldest first
    #[command(after_help = EXIT_CODES)]
    Leases(PathArgs),
    /// Remove every item; prints how many
    #[command(after_help = EXIT_CODES)]
    Clear(PathArgs),
    /// Remove the queue file (only if it is a queue file)
    #[command(
        long_about = "Removes the file at PATH after checking that it is a queue file (or one\n\
left behind by an interrupted create). Processes attached to it keep using\n\
their mapping; new ones cannot reach it any more.",
        after_help = EXIT_CODES
    )]
    Unlink(PathArgs),
}

/// Queue types, as `--type` spells them.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum QType {
    /// 64-bit integers (Data::Queue::Shared::Int)
    #[value(alias = "int64")]
    Int,
    /// 32-bit integers
    Int32,
    /// 16-bit integers
    Int16,
    /// byte strings with a UTF-8 flag
    Str,
}

impl QType {
    fn variant(self) -> Variant {
        match self {
            QType::Int => Variant::Int64,
            QType::Int32 => Variant::Int32,
            QType::Int16 => Variant::Int16,
            QType::Str => Variant::Str,
        }
    }
}

#[derive(Args, Debug)]
struct CreateArgs {
    /// The queue file
    path: PathBuf,
    /// What the queue holds
    #[arg(long = "type", short = 't', value_name = "TYPE")]
    qtype: QType,
    /// How many items it holds (rounded up to a power of two)
    #[arg(long, short = 'c', value_name = "N")]
    capacity: u64,
    /// Str only: bytes of string storage (default capacity * 256)
    #[arg(long, value_name = "BYTES")]
    arena: Option<u64>,
    /// File mode of a new file, in octal
    #[arg(long, value_name = "MODE", default_value = "0600", value_parser = parse_mode)]
    mode: u32,
    /// Leases that can be open at once (default 64; 0: no lease table)
    #[arg(long, value_name = "N")]
    max_leases: Option<u64>,
    /// Str only: bytes of the lease data area (default: see the manual)
    #[arg(long, value_name = "BYTES")]
    lease_bytes: Option<u64>,
}

#[derive(Args, Debug)]
struct PushArgs {
    /// The queue file
    path: PathBuf,
    /// Values to push, or a single - to read them from standard input
    #[arg(required = true, value_name = "VALUE")]
    values: Vec<OsString>,
    /// Standard input holds NUL-terminated items instead of lines
    #[arg(short = '0', long = "null")]
    null: bool,
    /// Wait up to SECS seconds for room for each item
    #[arg(long, short = 'w', value_name = "SECS", value_parser = parse_secs)]
    wait: Option<f64>,
    /// Str: set the UTF-8 flag on every item (they must be valid UTF-8)
    #[arg(long, conflicts_with = "bytes")]
    utf8: bool,
    /// Str: never set the UTF-8 flag
    #[arg(long)]
    bytes: bool,
    /// Str: store items of at least MIN bytes zstd-compressed (at LEVEL,
    /// default 3)
    #[arg(long, value_name = "MIN[:LEVEL]", value_parser = parse_compress)]
    compress: Option<(u64, i32)>,
}

#[derive(Args, Debug, Clone, Copy)]
struct OutArgs {
    /// Print each item's exact bytes followed by a NUL byte
    #[arg(short = '0', long = "null")]
    null: bool,
    /// Print each item's exact bytes with nothing after them
    #[arg(long)]
    raw: bool,
}

#[derive(Args, Debug)]
struct PopArgs {
    /// The queue file
    path: PathBuf,
    /// Pop up to N items
    #[arg(
        short = 'n',
        long = "count",
        value_name = "N",
        default_value_t = 1,
        conflicts_with = "all"
    )]
    n: u64,
    /// Pop every item there is
    #[arg(long, short = 'a')]
    all: bool,
    /// Wait up to SECS seconds for each item
    #[arg(long, short = 'w', value_name = "SECS", value_parser = parse_secs)]
    wait: Option<f64>,
    #[command(flatten)]
    out: OutArgs,
}

#[derive(Args, Debug)]
struct PeekArgs {
    /// The queue file
    path: PathBuf,
    #[command(flatten)]
    out: OutArgs,
}

#[derive(Args, Debug)]
struct StatsArgs {
    /// The queue file
    path: PathBuf,
    /// Print one JSON object
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct WatchArgs {
    /// The queue file
    path: PathBuf,
    /// Seconds between refreshes
    #[arg(long, short = 'i', value_name = "SECS", default_value = "1", value_parser = parse_interval)]
    interval: f64,
    /// Stop after N refreshes
    #[arg(long, short = 'c', value_name = "N")]
    count: Option<u64>,
}

#[derive(Args, Debug)]
struct PathArgs {
    /// The queue file
    path: PathBuf,
}

/// A timeout in seconds: a non-negative number, fractions allowed, or
/// `inf` (wait forever).
fn parse_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if v.is_nan() || v < 0.0 {
        return Err(format!(
            "'{s}' is not a number of seconds (0 or more, or inf)"
        ));
    }
    Ok(v)
}

/// `--compress MIN[:LEVEL]`: MIN a positive byte count, LEVEL an integer.
fn parse_compress(s: &str) -> Result<(u64, i32), String> {
    let (min, level) = match s.split_once(':') {
        Some((m, l)) => (m, Some(l)),
        None => (s, None),
    };
    let min: u64 = match min.trim().parse() {
        Ok(m) if m > 0 => m,
        _ => return Err(format!("'{min}' is not a positive number of bytes")),
    };
    let level = match level {
        None => 3,
        Some(l) => l
            .trim()
            .parse()
            .map_err(|_| format!("'{l}' is not a compression level"))?,
    };
    Ok((min, level))
}

/// A refresh interval: a positive, finite number of seconds.
fn parse_interval(s: &str) -> Result<f64, String> {
    let v = parse_secs(s)?;
    if !(0.001..=86400.0).contains(&v) {
        return Err(format!(
            "interval '{s}' must be between 0.001 and 86400 seconds"
        ));
    }
    Ok(v)
}

/// A file mode in octal (`0660`, `660` or `0o660`), at most `07777`.
fn parse_mode(s: &str) -> Result<u32, String> {
    let digits = s.strip_prefix("0o").unwrap_or(s);
    match u32::from_str_radix(digits, 8) {
        Ok(m) if m <= 0o7777 && !digits.is_empty() => Ok(m),
        _ => Err(format!("'{s}' is not an octal file mode (0 .. 07777)")),
    }
}

/// Parse an integer item for a queue of `variant`, refusing values the
/// queue cannot hold exactly.
fn parse_int(item: &[u8], variant: Variant) -> Result<i64, String> {
    let text = String::from_utf8_lossy(item);
    let t = text.trim();
    let v: i64 = t.parse().map_err(|e: std::num::ParseIntError| {
        use std::num::IntErrorKind::*;
        match e.kind() {
            PosOverflow | NegOverflow => {
                format!("value {t} is out of range for an Int queue (64-bit)")
            }
            _ => format!("'{t}' is not an integer"),
        }
    })?;
    let (lo, hi) = int_range(variant).expect("an integer variant");
    if v < lo || v > hi {
        return Err(format!(
            "value {v} is out of range for an {} queue ({lo} .. {hi})",
            variant.name()
        ));
    }
    Ok(v)
}

/// How `push` sets the UTF-8 flag of Str items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Utf8Mode {
    Auto,
    Always,
    Never,
}

/// The UTF-8 flag for `item`, or an error for `--utf8` with invalid bytes.
fn utf8_flag(item: &[u8], mode: Utf8Mode) -> Result<bool, String> {
    match mode {
        Utf8Mode::Never => Ok(false),
        Utf8Mode::Auto => Ok(!item.is_ascii() && std::str::from_utf8(item).is_ok()),
        Utf8Mode::Always => match std::str::from_utf8(item) {
            Ok(_) => Ok(true),
            Err(e) => Err(format!(
                "item {:?} is not valid UTF-8 ({e}); --utf8 needs it",
                String::from_utf8_lossy(item)
            )),
        },
    }
}

// ---- failures and signals ----------------------------------------------

/// Why a command did not finish with status 0.
#[derive(Debug)]
enum Fail {
    /// Exit 1: empty, full, timed out.
    Soft(String),
    /// Exit 2: usage, missing or bad file, I/O.
    Hard(String),
    /// A terminating signal arrived: die of it.
    Signal(i32),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Hard(e.to_string())
    }
}

impl From<io::Error> for Fail {
    /// A failed write to standard output. A reader that went away
    /// (`dqs pop q -n 100 | head -1`) ends the command as SIGPIPE would,
    /// silently.
    fn from(e: io::Error) -> Fail {
        match SIGNALLED.load(Ordering::Relaxed) {
            0 if e.kind() == io::ErrorKind::BrokenPipe => Fail::Signal(libc::SIGPIPE),
            0 => Fail::Hard(format!("write to standard output: {e}")),
            s => Fail::Signal(s),
        }
    }
}

/// The terminating signal that arrived (0: none yet).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// The signals that end a command.
const TERM_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Sent to the main thread to interrupt whatever it is blocked in.
const KICK: libc::c_int = libc::SIGUSR2;

extern "C" fn on_kick(_: libc::c_int) {}

fn term_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set; sigaddset adds valid signals.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in TERM_SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Route SIGINT, SIGTERM and SIGHUP to a thread of their own. When one
/// comes, it records it and then keeps interrupting the main thread (a
/// KICK signal whose handler does nothing and is installed without
/// SA_RESTART, so a futex wait, sleep or read returns EINTR) every 20 ms
/// until the main thread has cleaned up and died of the signal. Kicking
/// again closes the window where the signal lands just before a wait
/// starts. A second terminating signal ends the process at once.
fn install_signal_handlers() {
    let set = term_set();
    // SAFETY: plain libc calls with valid arguments; the KICK handler does
    // nothing, which is async-signal-safe.
    let main = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_kick as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = 0;
        libc::sigaction(KICK, &sa, std::ptr::null_mut());
        // Blocked here before the thread starts, so blocked in every thread
        // (the new one inherits the mask) and left to its sigwait.
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::pthread_self()
    };
    std::thread::spawn(move || signal_thread(set, main));
}

fn signal_thread(set: libc::sigset_t, main: libc::pthread_t) {
    let mut sig: libc::c_int = 0;
    // SAFETY: `set` and `sig` are valid for the call.
    while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
    SIGNALLED.store(sig, Ordering::SeqCst);
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 20_000_000,
    };
    loop {
        // SAFETY: `main` is the main thread, alive as long as the process.
        unsafe { libc::pthread_kill(main, KICK) };
        // SAFETY: valid set and timeout; no siginfo wanted.
        let again = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &pause) };
        if again > 0 {
            die_now(again);
        }
    }
}

/// Die of `sig` from the calling thread: default action, unblocked, raised.
fn die_now(sig: libc::c_int) -> ! {
    // SAFETY: plain libc calls; the default action of the terminating
    // signals (and SIGPIPE) ends the process.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::raise(sig);
    }
    std::process::exit(128 + sig);
}

fn check_signal() -> Result<(), Fail> {
    match SIGNALLED.load(Ordering::Relaxed) {
        0 => Ok(()),
        s => Err(Fail::Signal(s)),
    }
}

fn die_of(sig: i32) -> ! {
    if sig != libc::SIGPIPE {
        let _ = io::stdout().flush();
    }
    die_now(sig)
}

/// Sleep `secs`, cut short by a terminating signal.
fn sleep_secs(secs: f64) -> Result<(), Fail> {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    loop {
        check_signal()?;
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        let left = end - now;
        let ts = libc::timespec {
            tv_sec: left.as_secs() as libc::time_t,
            tv_nsec: left.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `ts` is valid; the remainder is not needed.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
    }
}

/// Standard input, read directly (fd 0) so that a terminating signal ends
/// a blocked read instead of being retried away.
struct SigStdin;

impl Read for SigStdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid for `buf.len()` bytes.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
            if SIGNALLED.load(Ordering::Relaxed) != 0 {
                return Err(io::Error::other("interrupted"));
            }
        }
    }
}

// ---- main ----------------------------------------------------------------

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(normalize_args(std::env::args_os())) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
                _ => {
                    eprintln!("{}", usage_error_line(&e, &subcommand_in_args()));
                    return ExitCode::from(2);
                }
            }
        }
    };
    install_signal_handlers();
    let name = cli.cmd.name();
    let r = match cli.cmd {
        Cmd::Create(a) => create(a),
        Cmd::Push(a) => push(a),
        Cmd::Pop(a) => pop(a),
        Cmd::Peek(a) => peek(a),
        Cmd::Stats(a) => stats(a),
        Cmd::Watch(a) => watch(a),
        Cmd::Leases(a) => leases(a),
        Cmd::Clear(a) => clear(a),
        Cmd::Unlink(a) => unlink(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail::Soft(m)) => {
            eprintln!("dqs {name}: {m}");
            ExitCode::from(1)
        }
        Err(Fail::Hard(m)) => {
            eprintln!("dqs {name}: {m}");
            ExitCode::from(2)
        }
        Err(Fail::Signal(s)) => die_of(s),
    }
}

impl Cmd {
    fn name(&self) -> &'static str {
        match self {
            Cmd::Create(_) => "create",
            Cmd::Push(_) => "push",
            Cmd::Pop(_) => "pop",
            Cmd::Peek(_) => "peek",
            Cmd::Stats(_) => "stats",
            Cmd::Watch(_) => "watch",
            Cmd::Leases(_) => "leases",
            Cmd::Clear(_) => "clear",
            Cmd::Unlink(_) => "unlink",
        }
    }
}

/// `push` takes negative numbers as values, which would make its `-0`
/// flag the number zero: before any `--`, a `-0` becomes `--null`.
fn normalize_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut v: Vec<OsString> = args.into_iter().collect();
    if v.get(1).is_some_and(|s| s == "push") {
        for a in v.iter_mut().skip(2) {
            if a == "--" {
                break;
            }
            if a == "-0" {
                *a = OsString::from("--null");
            }
        }
    }
    v
}

/// The subcommand named on the command line, if a known one is.
fn subcommand_in_args() -> Option<String> {
    let cmd = Cli::command();
    let first = std::env::args_os().nth(1)?;
    let first = first.to_str()?;
    let known = cmd.get_subcommands().any(|s| s.get_name() == first);
    known.then(|| first.to_string())
}

/// The one line printed for a usage error (exit 2). A bare `dqs` gets a
/// short message rather than the whole help on stderr.
fn usage_error_line(e: &clap::Error, sub: &Option<String>) -> String {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            "dqs: missing subcommand (see 'dqs --help')".to_string()
        }
        _ => one_line_usage_error(&e.render().to_string(), sub),
    }
}

/// clap's error text (several lines: message, context, usage) as one line:
/// the paragraph before the first blank line, with "error: " dropped.
fn one_line_usage_error(rendered: &str, sub: &Option<String>) -> String {
    let mut parts = Vec::new();
    for line in rendered.lines() {
        let t = line.trim();
        if t.is_empty() {
            if parts.is_empty() {
                continue;
            }
            break;
        }
        parts.push(t.strip_prefix("error: ").unwrap_or(t).to_string());
    }
    let msg = parts.join(" ");
    match sub {
        Some(s) => format!("dqs {s}: {msg} (see 'dqs {s} --help')"),
        None => format!("dqs: {msg} (see 'dqs --help')"),
    }
}

// ---- subcommands ---------------------------------------------------------

fn attach(path: &Path) -> Result<AnyQueue, Fail> {
    AnyQueue::attach(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => Fail::Hard(format!(
            "{}: no such queue file (dqs create makes one)",
            path.display()
        )),
        _ => Fail::from(e),
    })
}

fn create(a: CreateArgs) -> Result<(), Fail> {
    if a.arena.is_some() && a.qtype != QType::Str {
        return Err(Fail::Hard("--arena applies to str queues only".to_string()));
    }
    data_queue_shared::lease::with_create_options(a.max_leases, a.lease_bytes, || {
        AnyQueue::create(
            &a.path,
            a.qtype.variant(),
            a.capacity,
            a.arena.unwrap_or(0),
            a.mode,
        )
    })?;
    Ok(())
}

/// One item to push, parsed for the queue's type.
enum Value<'a> {
    Int(i64),
    Str(&'a [u8], bool),
}

fn parse_value<'a>(item: &'a [u8], variant: Variant, mode: Utf8Mode) -> Result<Value<'a>, Fail> {
    if variant == Variant::Str {
        let flag = utf8_flag(item, mode).map_err(Fail::Hard)?;
        Ok(Value::Str(item, flag))
    } else {
        parse_int(item, variant).map(Value::Int).map_err(Fail::Hard)
    }
}

/// Push one value; `Ok(false)` when there was no room (in time).
fn push_value(q: &AnyQueue, v: &Value<'_>, wait: Option<f64>) -> Result<bool, Fail> {
    let deadline = match wait {
        None => {
            return Ok(match (q, v) {
                (AnyQueue::Int(q), Value::Int(i)) => q.push(*i),
                (AnyQueue::Int32(q), Value::Int(i)) => q.push(*i as i32),
                (AnyQueue::Int16(q), Value::Int(i)) => q.push(*i as i16),
                (AnyQueue::Str(q), Value::Str(b, f)) => q.push(b, *f)?,
                _ => unreachable!("values are parsed for the queue's type"),
            })
        }
        Some(secs) => Deadline::after_secs(secs),
    };
    loop {
        check_signal()?;
        let w = match (q, v) {
            (AnyQueue::Int(q), Value::Int(i)) => q.push_wait(*i, &deadline),
            (AnyQueue::Int32(q), Value::Int(i)) => q.push_wait(*i as i32, &deadline),
            (AnyQueue::Int16(q), Value::Int(i)) => q.push_wait(*i as i16, &deadline),
            (AnyQueue::Str(q), Value::Str(b, f)) => q.push_wait(b, *f, false, &deadline)?,
            _ => unreachable!("values are parsed for the queue's type"),
        };
        match w {
            Waited::Done(()) => return Ok(true),
            Waited::TimedOut => return Ok(false),
            Waited::Interrupted => continue,
        }
    }
}

fn full_message(pushed: u64, wait: Option<f64>, of: Option<usize>) -> String {
    let what = match wait {
        None => "queue is full".to_string(),
        Some(s) => format!("timed out after {s}s waiting for room"),
    };
    match of {
        Some(n) => format!("{what} (pushed {pushed} of {n} items)"),
        None => format!("{what} (pushed {pushed} items; the rest of the input was not pushed)"),
    }
}

fn push(a: PushArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let variant = q.variant();
    let mode = if a.utf8 {
        Utf8Mode::Always
    } else if a.bytes {
        Utf8Mode::Never
    } else {
        Utf8Mode::Auto
    };
    if let Some((min, level)) = a.compress {
        match &q {
            AnyQueue::Str(sq) => {
                sq.set_compress(min, level)?;
            }
            _ => {
                return Err(Fail::Hard(
                    "--compress applies to Str queues only".to_string(),
                ))
            }
        }
    }
    let stdin = a.values.len() == 1 && a.values[0] == "-";
    if !stdin {
        if a.values.iter().any(|v| v == "-") {
            return Err(Fail::Hard(
                "- (read standard input) must be the only VALUE".to_string(),
            ));
        }
        if a.null {
            return Err(Fail::Hard(
                "-0 applies to standard input (VALUE -) only".to_string(),
            ));
        }
        let items: Vec<&[u8]> = a.values.iter().map(|v| v.as_bytes()).collect();
        let values = items
            .iter()
            .map(|b| parse_value(b, variant, mode))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, v) in values.iter().enumerate() {
            check_signal()?;
            if !push_value(&q, v, a.wait)? {
                return Err(Fail::Soft(full_message(
                    i as u64,
                    a.wait,
                    Some(values.len()),
                )));
            }
        }
        return Ok(());
    }
    let sep = if a.null { 0u8 } else { b'\n' };
    let mut input = BufReader::with_capacity(1 << 16, SigStdin);
    let mut item = Vec::new();
    let mut pushed = 0u64;
    loop {
        item.clear();
        let n = input.read_until(sep, &mut item).map_err(|e| {
            match SIGNALLED.load(Ordering::Relaxed) {
                0 => Fail::Hard(format!("read standard input: {e}")),
                s => Fail::Signal(s),
            }
        })?;
        if n == 0 {
            return Ok(());
        }
        if item.last() == Some(&sep) {
            item.pop();
        }
        let v = parse_value(&item, variant, mode).map_err(|f| match f {
            Fail::Hard(m) => Fail::Hard(format!(
                "item {} of standard input: {m} ({pushed} items were pushed)",
                pushed + 1
            )),
            other => other,
        })?;
        if !push_value(&q, &v, a.wait)? {
            return Err(Fail::Soft(full_message(pushed, a.wait, None)));
        }
        pushed += 1;
    }
}

/// An item popped or peeked: an integer, or a string (bytes in the
/// caller's buffer).
enum Got {
    Int(i64),
    Str,
}

fn write_item(out: &mut impl Write, got: &Got, bytes: &[u8], fmt: OutArgs) -> io::Result<()> {
    match got {
        Got::Int(v) => {
            write!(out, "{v}")?;
            out.write_all(if fmt.null { b"\0" } else { b"\n" })
        }
        Got::Str => {
            if fmt.null {
                out.write_all(bytes)?;
                out.write_all(b"\0")
            } else if fmt.raw {
                out.write_all(bytes)
            } else {
                out.write_all(String::from_utf8_lossy(bytes).as_bytes())?;
                out.write_all(b"\n")
            }
        }
    }
}

fn try_pop(q: &AnyQueue, buf: &mut Vec<u8>) -> Result<Option<Got>, Fail> {
    Ok(match q {
        AnyQueue::Int(q) => q.pop().map(Got::Int),
        AnyQueue::Int32(q) => q.pop().map(|v| Got::Int(v.into())),
        AnyQueue::Int16(q) => q.pop().map(|v| Got::Int(v.into())),
        AnyQueue::Str(q) => q.pop_checked(false, buf)?.map(|_| Got::Str),
    })
}

/// Pop one item, waiting up to `wait` seconds when given. Output is
/// flushed before the command may block, so a reader downstream sees
/// every item popped so far.
fn pop_one(
    q: &AnyQueue,
    buf: &mut Vec<u8>,
    wait: Option<f64>,
    out: &mut impl Write,
) -> Result<Option<Got>, Fail> {
    let Some(secs) = wait else {
        return try_pop(q, buf);
    };
    if q.is_empty() {
        out.flush()?;
    }
    let deadline = Deadline::after_secs(secs);
    loop {
        check_signal()?;
        let w = match q {
            AnyQueue::Int(q) => q.pop_wait(&deadline).map(Got::Int),
            AnyQueue::Int32(q) => q.pop_wait(&deadline).map(|v| Got::Int(v.into())),
            AnyQueue::Int16(q) => q.pop_wait(&deadline).map(|v| Got::Int(v.into())),
            AnyQueue::Str(q) => q.pop_wait_checked(false, buf, &deadline)?.map(|_| Got::Str),
        };
        match w {
            Waited::Done(g) => return Ok(Some(g)),
            Waited::TimedOut => return Ok(None),
            Waited::Interrupted => continue,
        }
    }
}

fn pop(a: PopArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let want = if a.all { u64::MAX } else { a.n };
    let mut buf = Vec::new();
    let mut got = 0u64;
    while got < want {
        check_signal()?;
        let wait = if a.all && got > 0 { None } else { a.wait };
        match pop_one(&q, &mut buf, wait, &mut out)? {
            Some(g) => write_item(&mut out, &g, &buf, a.out)?,
            None => break,
        }
        got += 1;
    }
    out.flush()?;
    if got == want || (a.all && got > 0) {
        return Ok(());
    }
    let what = match a.wait {
        Some(s) => format!("timed out after {s}s with the queue empty"),
        None => "queue is empty".to_string(),
    };
    Err(Fail::Soft(if want > 1 && !a.all {
        format!("{what} (popped {got} of {want} items)")
    } else {
        what
    }))
}

fn peek(a: PeekArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let mut buf = Vec::new();
    let got = match &q {
        AnyQueue::Int(q) => q.peek().map(Got::Int),
        AnyQueue::Int32(q) => q.peek().map(|v| Got::Int(v.into())),
        AnyQueue::Int16(q) => q.peek().map(|v| Got::Int(v.into())),
        AnyQueue::Str(q) => q.peek_checked(&mut buf)?.map(|_| Got::Str),
    };
    let Some(got) = got else {
        return Err(Fail::Soft("queue is empty".to_string()));
    };
    let mut out = io::stdout().lock();
    write_item(&mut out, &got, &buf, a.out)?;
    out.flush()?;
    Ok(())
}

/// The stats fields shown for a queue of `variant`, in order.
fn stat_fields(s: &Stats, variant: Variant) -> Vec<(&'static str, u64)> {
    let mut v = vec![
        ("size", s.size),
        ("capacity", s.capacity),
        ("mmap_size", s.mmap_size),
        ("push_ok", s.push_ok),
        ("pop_ok", s.pop_ok),
        ("push_full", s.push_full),
        ("pop_empty", s.pop_empty),
        ("recoveries", s.recoveries),
        ("push_waiters", s.push_waiters),
        ("pop_waiters", s.pop_waiters),
    ];
    if variant == Variant::Str {
        v.extend([
            ("arena_cap", s.arena_cap),
            ("arena_used", s.arena_used),
            ("lock_acquired", s.lock_acquired),
            ("lock_contended", s.lock_contended),
            ("compressed", s.compressed),
            ("compressed_saved", s.compressed_saved),
        ]);
    }
    v
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn stats_json(path: &Path, variant: Variant, s: &Stats) -> String {
    let mut o = format!(
        "{{\"path\":{},\"type\":{}",
        json_string(&path.to_string_lossy()),
        json_string(variant.name())
    );
    for (k, v) in stat_fields(s, variant) {
        o.push_str(&format!(",\"{k}\":{v}"));
    }
    o.push('}');
    o
}

fn stats(a: StatsArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let s = q.stats();
    // HOOK(lease): the lease counters after the others.
    let leases = q.lease_fields();
    let mut out = io::stdout().lock();
    if a.json {
        let mut j = stats_json(&a.path, q.variant(), &s);
        j.pop();
        for (k, v) in &leases {
            j.push_str(&format!(",\"{k}\":{v}"));
        }
        writeln!(out, "{j}}}")?;
    } else {
        writeln!(out, "{:<15}{}", "path", a.path.display())?;
        writeln!(out, "{:<15}{}", "type", q.variant().name())?;
        for (k, v) in stat_fields(&s, q.variant()) {
            writeln!(out, "{k:<15}{v}")?;
        }
        for (k, v) in &leases {
            writeln!(out, "{k:<15}{v}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `dqs leases`: the open and waiting leases (after a look for dead
/// holders, which returns theirs).
fn leases(a: PathArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let mut out = io::stdout().lock();
    out.write_all(q.lease_listing().as_bytes())?;
    out.flush()?;
    Ok(())
}

/// One `watch` line from two snapshots `secs` apart.
fn watch_line(prev: &Stats, now: &Stats, secs: f64, variant: Variant) -> String {
    let rate = |a: u64, b: u64| b.saturating_sub(a) as f64 / secs.max(1e-9);
    let mut line = format!(
        "size {}/{}  push/s {:.1}  pop/s {:.1}  waiting: push {} pop {}",
        now.size,
        now.capacity,
        rate(prev.push_ok, now.push_ok),
        rate(prev.pop_ok, now.pop_ok),
        now.push_waiters,
        now.pop_waiters
    );
    if variant == Variant::Str {
        line.push_str(&format!("  arena {}/{}", now.arena_used, now.arena_cap));
    }
    line
}

fn watch(a: WatchArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let variant = q.variant();
    let tty = io::stdout().is_terminal();
    let mut out = io::stdout().lock();
    let mut prev = q.stats();
    let mut t0 = Instant::now();
    let mut n = 0u64;
    let r = (|| -> Result<(), Fail> {
        while a.count.is_none_or(|c| n < c) {
            sleep_secs(a.interval)?;
            let now = q.stats();
            let t1 = Instant::now();
            let line = watch_line(&prev, &now, (t1 - t0).as_secs_f64(), variant);
            if tty {
                write!(out, "\r\x1b[K{line}")?;
            } else {
                writeln!(out, "{line}")?;
            }
            out.flush()?;
            prev = now;
            t0 = t1;
            n += 1;
        }
        Ok(())
    })();
    if tty && n > 0 {
        let _ = writeln!(out);
        let _ = out.flush();
    }
    r
}

fn clear(a: PathArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let n = q.clear();
    let mut out = io::stdout().lock();
    writeln!(out, "{n}")?;
    out.flush()?;
    Ok(())
}

fn unlink(a: PathArgs) -> Result<(), Fail> {
    match probe(&a.path) {
        Ok(_) | Err(Error::IncompleteCreate(_)) => {}
        Err(e) => return Err(Fail::Hard(format!("{e}; not removed"))),
    }
    data_queue_shared::region::unlink(&a.path)?;
    Ok(())
}

// ---- tests ---------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        let v = std::iter::once("dqs")
            .chain(args.iter().copied())
            .map(OsString::from);
        Cli::try_parse_from(normalize_args(v))
    }

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn create_parses_type_capacity_arena_and_mode() {
        let c = parse(&[
            "create",
            "q",
            "--type",
            "str",
            "--capacity",
            "10",
            "--arena",
            "8192",
            "--mode",
            "0660",
        ])
        .unwrap();
        let Cmd::Create(a) = c.cmd else { panic!() };
        assert_eq!(a.qtype, QType::Str);
        assert_eq!((a.capacity, a.arena, a.mode), (10, Some(8192), 0o660));
        let c = parse(&["create", "q", "-t", "int64", "-c", "4"]).unwrap();
        let Cmd::Create(a) = c.cmd else { panic!() };
        assert_eq!((a.qtype, a.mode, a.arena), (QType::Int, 0o600, None));
        assert!(parse(&["create", "q", "--type", "float", "--capacity", "4"]).is_err());
        assert!(parse(&["create", "q", "--type", "int"]).is_err());
        assert!(parse(&["create", "q", "--type", "int", "-c", "4", "--mode", "0999"]).is_err());
    }

    #[test]
    fn push_takes_negative_numbers_and_dash() {
        let c = parse(&["push", "q", "-5", "7", "--wait", "0.5"]).unwrap();
        let Cmd::Push(a) = c.cmd else { panic!() };
        assert_eq!(a.values, ["-5", "7"]);
        assert_eq!(a.wait, Some(0.5));
        let c = parse(&["push", "q", "-", "-0"]).unwrap();
        let Cmd::Push(a) = c.cmd else { panic!() };
        assert_eq!(a.values, ["-"]);
        assert!(a.null);
        let c = parse(&["push", "q", "-0", "-"]).unwrap();
        let Cmd::Push(a) = c.cmd else { panic!() };
        assert_eq!(a.values, ["-"]);
        assert!(a.null);
        let c = parse(&["push", "q", "--", "-x", "-0"]).unwrap();
        let Cmd::Push(a) = c.cmd else { panic!() };
        assert_eq!(a.values, ["-x", "-0"]);
        assert!(!a.null);
        assert!(parse(&["push", "q"]).is_err(), "a value is required");
        assert!(parse(&["push", "q", "a", "--utf8", "--bytes"]).is_err());
    }

    #[test]
    fn pop_options() {
        let c = parse(&["pop", "q", "-n", "3", "-0", "--wait", "inf"]).unwrap();
        let Cmd::Pop(a) = c.cmd else { panic!() };
        assert_eq!((a.n, a.all, a.out.null, a.out.raw), (3, false, true, false));
        assert_eq!(a.wait, Some(f64::INFINITY));
        assert!(parse(&["pop", "q", "-n", "3", "--all"]).is_err());
        assert!(parse(&["pop", "q", "--wait", "-1"]).is_err());
        assert!(parse(&["pop", "q", "--wait", "soon"]).is_err());
        assert!(parse(&["watch", "q", "--interval", "0"]).is_err());
        let c = parse(&["watch", "q", "--count", "2", "-i", "0.25"]).unwrap();
        let Cmd::Watch(a) = c.cmd else { panic!() };
        assert_eq!((a.count, a.interval), (Some(2), 0.25));
    }

    #[test]
    fn seconds_and_modes() {
        assert_eq!(parse_secs("0"), Ok(0.0));
        assert_eq!(parse_secs("1.5"), Ok(1.5));
        assert_eq!(parse_secs("inf"), Ok(f64::INFINITY));
        assert!(parse_secs("NaN").is_err());
        assert!(parse_secs("-0.1").is_err());
        assert_eq!(parse_mode("0660"), Ok(0o660));
        assert_eq!(parse_mode("660"), Ok(0o660));
        assert_eq!(parse_mode("0o4755"), Ok(0o4755));
        assert!(parse_mode("10000").is_err());
        assert!(parse_mode("").is_err());
        assert!(parse_mode("rw").is_err());
    }

    #[test]
    fn integers_are_range_checked_never_truncated() {
        assert_eq!(parse_int(b" 42\n", Variant::Int16), Ok(42));
        assert_eq!(parse_int(b"+7", Variant::Int64), Ok(7));
        assert_eq!(parse_int(b"-32768", Variant::Int16), Ok(-32768));
        let e = parse_int(b"32768", Variant::Int16).unwrap_err();
        assert!(e.contains("32768") && e.contains("Int16"), "{e}");
        let e = parse_int(b"2147483648", Variant::Int32).unwrap_err();
        assert!(e.contains("2147483648") && e.contains("Int32"), "{e}");
        assert_eq!(
            parse_int(b"9223372036854775807", Variant::Int64),
            Ok(i64::MAX)
        );
        let e = parse_int(b"9223372036854775808", Variant::Int64).unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        let e = parse_int(b"1.5", Variant::Int64).unwrap_err();
        assert!(e.contains("'1.5' is not an integer"), "{e}");
        assert!(parse_int(b"", Variant::Int64).is_err());
    }

    #[test]
    fn utf8_flag_modes() {
        assert_eq!(utf8_flag(b"plain", Utf8Mode::Auto), Ok(false));
        assert_eq!(utf8_flag("caf\u{e9}".as_bytes(), Utf8Mode::Auto), Ok(true));
        assert_eq!(utf8_flag(b"caf\xe9", Utf8Mode::Auto), Ok(false));
        assert_eq!(utf8_flag(b"plain", Utf8Mode::Always), Ok(true));
        assert!(utf8_flag(b"caf\xe9", Utf8Mode::Always).is_err());
        assert_eq!(
            utf8_flag("caf\u{e9}".as_bytes(), Utf8Mode::Never),
            Ok(false)
        );
    }

    #[test]
    fn usage_errors_become_one_line() {
        let e = parse(&["create", "q", "--type", "int"]).unwrap_err();
        let line = one_line_usage_error(&e.render().to_string(), &Some("create".into()));
        assert!(!line.contains('\n'), "{line}");
        assert!(line.starts_with("dqs create: "), "{line}");
        assert!(line.contains("--capacity"), "{line}");
        let e = parse(&[]).unwrap_err();
        assert_eq!(
            usage_error_line(&e, &None),
            "dqs: missing subcommand (see 'dqs --help')"
        );
    }

    #[test]
    fn json_is_escaped() {
        assert_eq!(json_string("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
        let s = Stats {
            size: 1,
            capacity: 2,
            ..Stats::default()
        };
        let j = stats_json(Path::new("/t/q"), Variant::Int16, &s);
        assert!(j.starts_with("{\"path\":\"/t/q\",\"type\":\"Int16\",\"size\":1,\"capacity\":2,"));
        assert!(!j.contains("arena"));
        assert!(stats_json(Path::new("q"), Variant::Str, &s).contains("\"compressed_saved\":0}"));
    }

    #[test]
    fn watch_rates_come_from_deltas() {
        let a = Stats {
            push_ok: 10,
            pop_ok: 5,
            capacity: 8,
            ..Stats::default()
        };
        let b = Stats {
            push_ok: 30,
            pop_ok: 5,
            size: 3,
            capacity: 8,
            pop_waiters: 2,
            ..Stats::default()
        };
        let l = watch_line(&a, &b, 2.0, Variant::Int64);
        assert_eq!(l, "size 3/8  push/s 10.0  pop/s 0.0  waiting: push 0 pop 2");
    }

    #[test]
    fn lossy_raw_and_nul_output() {
        let mut v = Vec::new();
        let plain = OutArgs {
            null: false,
            raw: false,
        };
        write_item(&mut v, &Got::Str, b"a\xffb", plain).unwrap();
        write_item(&mut v, &Got::Int(-3), b"", plain).unwrap();
        assert_eq!(v, "a\u{fffd}b\n-3\n".as_bytes());
        let mut v = Vec::new();
        let raw = OutArgs {
            null: false,
            raw: true,
        };
        write_item(&mut v, &Got::Str, b"a\xff\n", raw).unwrap();
        assert_eq!(v, b"a\xff\n");
        let mut v = Vec::new();
        let nul = OutArgs {
            null: true,
            raw: false,
        };
        write_item(&mut v, &Got::Str, b"x\xff", nul).unwrap();
        write_item(&mut v, &Got::Int(5), b"", nul).unwrap();
        assert_eq!(v, b"x\xff\x005\x00");
    }
}
