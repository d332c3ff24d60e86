//! The command line: help text, clap types, argument parsers, and the
//! one-line usage errors.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use data_queue_shared::Variant;

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

A new file gets --mode exactly (octal permission bits, default 0600; the
umask does not apply); the setuid, setgid and sticky bits are refused
(exit 2). When PATH already holds a queue of the same type and the geometry
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
truncated. Arguments are all checked before anything is pushed. From
standard input, blank lines (or records) are skipped; a line that is not
an integer the queue can hold stops the command (exit 2), and the message
gives its line number and how many items before it were pushed.

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
waits up to SECS seconds for room (fractions allowed; inf, or a negative
number such as -1, waits for ever); a wait that times out stops the
command (exit 1).

--delay SECS (at least 0, fractions allowed) makes each item invisible to
every pop, and to the size, for SECS seconds; then it comes out at the
front of the queue. A delayed item waits in a lease record: when every
record is taken (or a Str queue's lease data area has no room) the command
stops (exit 2), the items before it pushed. --delay and --wait exclude
each other.";

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
item waits up to SECS seconds (fractions allowed; inf, or a negative
number such as -1, waits for ever). With
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
Prints the queue's counters and gauges, one per line: the name, spaces,
the value. The names, in order: path, type, size, capacity, mmap_size,
push_ok, pop_ok, push_full, pop_empty, recoveries, push_waiters,
pop_waiters; for Str queues arena_cap, arena_used, lock_acquired,
lock_contended, compressed, compressed_saved; then the lease counters
max_leases, leases_open, leases_waiting, leases_acked, leases_nacked,
leases_dead, leases_expired, and for Str queues lease_bytes; then the
work-queue counters max_deliveries, max_dead, delivered, dead, buried,
kicked, drained, delayed, touched, dead_full, dead_items. With --json, one
JSON object on one line instead, with the same keys; numbers are JSON
integers.";

const DEAD_HELP: &str = "\
Lists the items in the queue's dead-letter area, oldest first, one line
each: seq (pop order), deliveries, reason (released, deadline, holder
died, buried), when (local time of the move) and the value (integers in
decimal; strings as text, bytes that are not valid UTF-8 shown as U+FFFD,
newlines and tabs escaped). Nothing is removed. With --json, one JSON
object per line instead, with the keys seq, deliveries, reason, when (epoch
seconds) and value (a string for Str queues, with utf8 true when the
item carries the UTF-8 flag). Exit 0 also when the area is empty.";

const KICK_HELP: &str = "\
Moves up to N items (default: all) from the dead-letter area back to the
front of the live queue, oldest first, with their delivery counts reset
to 0, and prints how many moved. Fewer move when the area holds fewer
(not an error) or the live queue has no room (then exit 1, the message
says how many moved).";

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
    version = crate::VERSION,
    about = "Create, fill, drain and watch Data::Queue::Shared queue files",
    long_about = "Create, fill, drain and watch Data::Queue::Shared queue files.\n\n\
Every subcommand but create attaches to an existing queue file (it never\n\
creates one) and reads its type (int, int32, int16 or str) from the header.\n\
See 'dqs help SUBCOMMAND' for each one.",
    after_help = EXIT_CODES,
    subcommand_required = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Cmd {
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
    /// List the dead-letter area
    #[command(long_about = DEAD_HELP, after_help = EXIT_CODES)]
    Dead(DeadArgs),
    /// Move dead items back to the live queue
    #[command(long_about = KICK_HELP, after_help = EXIT_CODES)]
    Kick(KickArgs),
    /// Remove every item; prints how many
    #[command(after_help = EXIT_CODES)]
    Clear(PathArgs),
    /// Remove the queue file (only if it is a queue file)
    #[command(
        long_about = "Removes the file at PATH after checking that it is a queue file (or one\n\
left behind by an interrupted create, or a queue file of the C\n\
implementation, which cannot be opened and has to go). Processes attached\n\
to it keep using their mapping; new ones cannot reach it any more.",
        after_help = EXIT_CODES
    )]
    Unlink(PathArgs),
}

/// Queue types, as `--type` spells them.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QType {
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
    pub(crate) fn variant(self) -> Variant {
        match self {
            QType::Int => Variant::Int64,
            QType::Int32 => Variant::Int32,
            QType::Int16 => Variant::Int16,
            QType::Str => Variant::Str,
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct CreateArgs {
    /// The queue file
    pub(crate) path: PathBuf,
    /// What the queue holds
    #[arg(long = "type", short = 't', value_name = "TYPE")]
    pub(crate) qtype: QType,
    /// How many items it holds (rounded up to a power of two)
    #[arg(long, short = 'c', value_name = "N")]
    pub(crate) capacity: u64,
    /// Str only: bytes of string storage (default capacity * 256)
    #[arg(long, value_name = "BYTES")]
    pub(crate) arena: Option<u64>,
    /// File mode of a new file, in octal (0 .. 0777)
    #[arg(long, value_name = "MODE", default_value = "0600", value_parser = parse_mode)]
    pub(crate) mode: u32,
    /// Leases that can be open at once (default 64; 0: no lease table)
    #[arg(long, value_name = "N")]
    pub(crate) max_leases: Option<u64>,
    /// Str only: bytes of the lease data area (default: see the manual)
    #[arg(long, value_name = "BYTES")]
    pub(crate) lease_bytes: Option<u64>,
    /// Deliveries after which a returning item goes to the dead-letter
    /// area (default 0: unlimited)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(..=u32::MAX as u64))]
    pub(crate) max_deliveries: Option<u64>,
    /// Dead-letter records (default 64; 0: no dead-letter area)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(..=65536))]
    pub(crate) max_dead: Option<u64>,
}

#[derive(Args, Debug)]
pub(crate) struct PushArgs {
    /// The queue file
    pub(crate) path: PathBuf,
    /// Values to push, or a single - to read them from standard input
    #[arg(required = true, value_name = "VALUE")]
    pub(crate) values: Vec<OsString>,
    /// Standard input holds NUL-terminated items instead of lines
    #[arg(short = '0', long = "null")]
    pub(crate) null: bool,
    /// Wait up to SECS seconds for room for each item (inf or -1: for ever)
    #[arg(long, short = 'w', value_name = "SECS", value_parser = parse_secs, allow_negative_numbers = true)]
    pub(crate) wait: Option<f64>,
    /// Str: set the UTF-8 flag on every item (they must be valid UTF-8)
    #[arg(long, conflicts_with = "bytes")]
    pub(crate) utf8: bool,
    /// Str: never set the UTF-8 flag
    #[arg(long)]
    pub(crate) bytes: bool,
    /// Str: store items of at least MIN bytes zstd-compressed (at LEVEL,
    /// default 3)
    #[arg(long, value_name = "MIN[:LEVEL]", value_parser = parse_compress)]
    pub(crate) compress: Option<(u64, i32)>,
    /// Make each item visible to pops only after SECS seconds
    #[arg(long, value_name = "SECS", value_parser = parse_delay, conflicts_with = "wait")]
    pub(crate) delay: Option<f64>,
}

#[derive(Args, Debug, Clone, Copy)]
pub(crate) struct OutArgs {
    /// Print each item's exact bytes followed by a NUL byte
    #[arg(short = '0', long = "null")]
    pub(crate) null: bool,
    /// Print each item's exact bytes with nothing after them
    #[arg(long)]
    pub(crate) raw: bool,
}

#[derive(Args, Debug)]
pub(crate) struct PopArgs {
    /// The queue file
    pub(crate) path: PathBuf,
    /// Pop up to N items
    #[arg(
        short = 'n',
        long = "count",
        value_name = "N",
        default_value_t = 1,
        conflicts_with = "all"
    )]
    pub(crate) n: u64,
    /// Pop every item there is
    #[arg(long, short = 'a')]
    pub(crate) all: bool,
    /// Wait up to SECS seconds for each item (inf or -1: for ever)
    #[arg(long, short = 'w', value_name = "SECS", value_parser = parse_secs, allow_negative_numbers = true)]
    pub(crate) wait: Option<f64>,
    #[command(flatten)]
    pub(crate) out: OutArgs,
}

#[derive(Args, Debug)]
pub(crate) struct PeekArgs {
    /// The queue file
    pub(crate) path: PathBuf,
    #[command(flatten)]
    pub(crate) out: OutArgs,
}

#[derive(Args, Debug)]
pub(crate) struct StatsArgs {
    /// The queue file
    pub(crate) path: PathBuf,
    /// Print one JSON object
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct WatchArgs {
    /// The queue file
    pub(crate) path: PathBuf,
    /// Seconds between refreshes
    #[arg(long, short = 'i', value_name = "SECS", default_value = "1", value_parser = parse_interval)]
    pub(crate) interval: f64,
    /// Stop after N refreshes
    #[arg(long, short = 'c', value_name = "N")]
    pub(crate) count: Option<u64>,
}

#[derive(Args, Debug)]
pub(crate) struct DeadArgs {
    /// The queue file
    pub(crate) path: PathBuf,
    /// Print one JSON object per item
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct KickArgs {
    /// The queue file
    pub(crate) path: PathBuf,
    /// How many to move (default: all)
    #[arg(value_name = "N")]
    pub(crate) n: Option<u64>,
}

#[derive(Args, Debug)]
pub(crate) struct PathArgs {
    /// The queue file
    pub(crate) path: PathBuf,
}

/// A timeout in seconds, fractions allowed: `inf` or any negative number
/// (as `-1`) waits for ever, as a negative timeout does in the Perl API.
fn parse_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if v.is_nan() {
        return Err(format!(
            "'{s}' is not a number of seconds (a number, inf, or -1 for ever)"
        ));
    }
    Ok(if v < 0.0 { f64::INFINITY } else { v })
}

/// A delay in seconds: a finite number >= 0, fractions allowed.
pub(crate) fn parse_delay(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds >= 0")),
    }
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
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(0.001..=86400.0).contains(&v) {
        return Err(format!(
            "interval '{s}' must be between 0.001 and 86400 seconds"
        ));
    }
    Ok(v)
}

/// A file mode in octal (`0660`, `660` or `0o660`): permission bits only.
/// The setuid, setgid and sticky bits (`07000`) are refused: a queue file
/// is never a program or a directory, and `--mode 4777` is a typo or worse.
fn parse_mode(s: &str) -> Result<u32, String> {
    let digits = s.strip_prefix("0o").unwrap_or(s);
    match u32::from_str_radix(digits, 8) {
        Ok(m) if m <= 0o777 && !digits.is_empty() => Ok(m),
        Ok(m) if m <= 0o7777 && !digits.is_empty() => Err(format!(
            "'{s}' sets the setuid, setgid or sticky bit (07000); a queue file takes \
             permission bits only (0 .. 0777)"
        )),
        _ => Err(format!("'{s}' is not an octal file mode (0 .. 0777)")),
    }
}

impl Cmd {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Cmd::Create(_) => "create",
            Cmd::Push(_) => "push",
            Cmd::Pop(_) => "pop",
            Cmd::Peek(_) => "peek",
            Cmd::Stats(_) => "stats",
            Cmd::Watch(_) => "watch",
            Cmd::Leases(_) => "leases",
            Cmd::Dead(_) => "dead",
            Cmd::Kick(_) => "kick",
            Cmd::Clear(_) => "clear",
            Cmd::Unlink(_) => "unlink",
        }
    }
}

/// `push` takes negative numbers as values, which would make its `-0`
/// flag the number zero: before any `--`, a `-0` becomes `--null`.
pub(crate) fn normalize_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
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
pub(crate) fn subcommand_in_args() -> Option<String> {
    let cmd = Cli::command();
    let first = std::env::args_os().nth(1)?;
    let first = first.to_str()?;
    let known = cmd.get_subcommands().any(|s| s.get_name() == first);
    known.then(|| first.to_string())
}

/// The one line printed for a usage error (exit 2). A bare `dqs` gets a
/// short message rather than the whole help on stderr.
pub(crate) fn usage_error_line(e: &clap::Error, sub: &Option<String>) -> String {
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

#[cfg(test)]
mod tests;
