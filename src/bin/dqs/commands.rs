//! The subcommands, one function each, and the item parsing and printing
//! they share.

use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use data_queue_shared::any::{int_range, probe, AnyQueue};
use data_queue_shared::lease::{reason_name, state_name, DeadItem};
use data_queue_shared::{Deadline, Error, Stats, Variant, Waited};

use crate::cli::{
    CreateArgs, DeadArgs, KickArgs, OutArgs, PathArgs, PeekArgs, PopArgs, PushArgs, QType,
    StatsArgs, WatchArgs,
};
use crate::signals::{check_signal, sleep_secs, Fail, SigStdin, SIGNALLED};

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

fn attach(path: &Path) -> Result<AnyQueue, Fail> {
    AnyQueue::attach(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => Fail::Hard(format!(
            "{}: no such queue file (dqs create makes one)",
            path.display()
        )),
        _ => Fail::from(e),
    })
}

pub(crate) fn create(a: CreateArgs) -> Result<(), Fail> {
    if a.arena.is_some() && a.qtype != QType::Str {
        return Err(Fail::Hard("--arena applies to str queues only".to_string()));
    }
    data_queue_shared::lease::with_create_options(a.max_leases, a.lease_bytes, || {
        data_queue_shared::lease::with_work_options(a.max_deliveries, a.max_dead, || {
            AnyQueue::create(
                &a.path,
                a.qtype.variant(),
                a.capacity,
                a.arena.unwrap_or(0),
                a.mode,
            )
        })
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

/// Push one value visible after `delay` seconds: it waits in a lease
/// record, so no room means every record is taken (an error, exit 2).
fn push_delayed(q: &AnyQueue, v: &Value<'_>, delay: f64) -> Result<(), Fail> {
    match (q, v) {
        (AnyQueue::Int(q), Value::Int(i)) => q.push_delayed(delay, *i),
        (AnyQueue::Int32(q), Value::Int(i)) => q.push_delayed(delay, *i as i32),
        (AnyQueue::Int16(q), Value::Int(i)) => q.push_delayed(delay, *i as i16),
        (AnyQueue::Str(q), Value::Str(b, f)) => q.push_delayed(delay, b, *f),
        _ => unreachable!("values are parsed for the queue's type"),
    }
    .map_err(|e| Fail::Hard(e.to_string()))
}

/// Push one value (after `delay` seconds, when given); `Ok(false)` when
/// there was no room (in time).
fn push_value(
    q: &AnyQueue,
    v: &Value<'_>,
    wait: Option<f64>,
    delay: Option<f64>,
) -> Result<bool, Fail> {
    if let Some(d) = delay {
        push_delayed(q, v, d)?;
        return Ok(true);
    }
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

pub(crate) fn push(a: PushArgs) -> Result<(), Fail> {
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
            if !push_value(&q, v, a.wait, a.delay)? {
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
    let what = if a.null { "record" } else { "line" };
    let mut record = 0u64;
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
        record += 1;
        if item.last() == Some(&sep) {
            item.pop();
        }
        // An integer queue skips blank records (a trailing empty line, a
        // blank line between numbers); a Str queue pushes them, as empty
        // items.
        if variant != Variant::Str && item.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let v = parse_value(&item, variant, mode).map_err(|f| match f {
            Fail::Hard(m) => Fail::Hard(format!(
                "{what} {record} of standard input: {m}; the {pushed} items before it were \
                 pushed, nothing after it"
            )),
            other => other,
        })?;
        if !push_value(&q, &v, a.wait, a.delay)? {
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

pub(crate) fn pop(a: PopArgs) -> Result<(), Fail> {
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

pub(crate) fn peek(a: PeekArgs) -> Result<(), Fail> {
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

pub(crate) fn stats(a: StatsArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let s = q.stats();
    // HOOK(lease): the lease and work-queue counters after the others (a
    // snapshot without the lock).
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
        let fields = stat_fields(&s, q.variant());
        let names = fields.iter().chain(&leases).map(|(k, _)| k.len());
        // Aligned, and at least one space after the longest name, so that
        // every line splits into name and value.
        let w = names.max().unwrap_or(0).max("path".len());
        writeln!(out, "{:<w$} {}", "path", a.path.display())?;
        writeln!(out, "{:<w$} {}", "type", q.variant().name())?;
        for (k, v) in fields.iter().chain(&leases) {
            writeln!(out, "{k:<w$} {v}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `dqs leases`: the open and waiting leases (after a look for dead
/// holders, which returns theirs), with each one's delivery count; a
/// delayed item shows the time until it is due under "left".
fn lease_listing(q: &AnyQueue) -> String {
    let str_q = matches!(q, AnyQueue::Str(_));
    let line = |id: &dyn std::fmt::Display,
                state: &str,
                pid: &dyn std::fmt::Display,
                seq: &dyn std::fmt::Display,
                age: &str,
                left: &str,
                dlv: &dyn std::fmt::Display,
                what: &str| {
        format!("{id:<20} {state:<9} {pid:>8} {seq:>8} {age:>10} {left:>10} {dlv:>10} {what}\n")
    };
    let mut o = line(
        &"lease",
        "state",
        &"pid",
        &"seq",
        "age",
        "left",
        &"deliveries",
        if str_q { "bytes     stored" } else { "value" },
    );
    for l in q.leases() {
        let left = if l.left_ns == 0 {
            "-".to_string()
        } else {
            format!("{:.3}s", l.left_ns as f64 / 1e9)
        };
        let what = if str_q {
            format!("{:<9} {}", l.value, l.stored)
        } else {
            l.value.to_string()
        };
        o.push_str(&line(
            &l.id,
            state_name(l.state),
            &l.pid,
            &l.seq,
            &format!("{:.3}s", l.age_ns as f64 / 1e9),
            &left,
            &l.deliveries,
            &what,
        ));
    }
    o
}

pub(crate) fn leases(a: PathArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let mut out = io::stdout().lock();
    out.write_all(lease_listing(&q).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A dead item's value as `dqs dead` prints it: integers in decimal,
/// strings as text with newlines, tabs and backslashes escaped.
fn dead_value_text(q: &AnyQueue, d: &DeadItem, bytes: &[u8]) -> String {
    if !matches!(q, AnyQueue::Str(_)) {
        return d.value.to_string();
    }
    let mut o = String::new();
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            '\\' => o.push_str("\\\\"),
            c => o.push(c),
        }
    }
    o
}

/// Local time of CLOCK_REALTIME nanoseconds, as `YYYY-MM-DD HH:MM:SS.mmm`.
fn local_time(ns: u64) -> String {
    let secs = (ns / 1_000_000_000) as libc::time_t;
    let ms = (ns / 1_000_000) % 1000;
    // SAFETY: an all-zero `tm` is a valid value of the plain C struct.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads `secs` and writes `tm`, both live locals.
    if unsafe { libc::localtime_r(&secs, &mut tm) }.is_null() {
        return format!("{}.{ms:03}", ns / 1_000_000_000);
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{ms:03}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// One `dqs dead --json` line.
fn dead_json(q: &AnyQueue, d: &DeadItem, bytes: &[u8], utf8: bool) -> String {
    let value = if matches!(q, AnyQueue::Str(_)) {
        format!(
            "{},\"utf8\":{utf8}",
            json_string(&String::from_utf8_lossy(bytes))
        )
    } else {
        d.value.to_string()
    };
    format!(
        "{{\"seq\":{},\"deliveries\":{},\"reason\":{},\"when\":{:.6},\"value\":{value}}}",
        d.seq,
        d.deliveries,
        json_string(reason_name(d.reason)),
        d.when_ns as f64 / 1e9
    )
}

/// `dqs dead`: the dead-letter area, oldest first (nothing removed).
pub(crate) fn dead(a: DeadArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let mut out = io::stdout().lock();
    let mut buf = Vec::new();
    if !a.json {
        writeln!(
            out,
            "{:>8} {:>10} {:<12} {:<23} value",
            "seq", "deliveries", "reason", "when"
        )?;
    }
    let mut k = 0;
    while let Some((d, utf8)) = q
        .dead_nth(k, &mut buf)
        .map_err(|e| Fail::Hard(e.to_string()))?
    {
        check_signal()?;
        if a.json {
            writeln!(out, "{}", dead_json(&q, &d, &buf, utf8))?;
        } else {
            writeln!(
                out,
                "{:>8} {:>10} {:<12} {:<23} {}",
                d.seq,
                d.deliveries,
                reason_name(d.reason),
                local_time(d.when_ns),
                dead_value_text(&q, &d, &buf)
            )?;
        }
        k += 1;
    }
    out.flush()?;
    Ok(())
}

/// `dqs kick`: up to N (default all) dead items back to the live queue.
pub(crate) fn kick(a: KickArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let want = a.n.unwrap_or(u64::MAX);
    let before = q.dead_count();
    let moved = q.kick(want).map_err(|e| Fail::Hard(e.to_string()))?;
    let mut out = io::stdout().lock();
    writeln!(out, "{moved}")?;
    out.flush()?;
    if moved < want.min(before) {
        return Err(Fail::Soft(format!(
            "the live queue has no room: moved {moved} of {} items",
            want.min(before)
        )));
    }
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

pub(crate) fn watch(a: WatchArgs) -> Result<(), Fail> {
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

pub(crate) fn clear(a: PathArgs) -> Result<(), Fail> {
    let q = attach(&a.path)?;
    let n = q.clear();
    let mut out = io::stdout().lock();
    writeln!(out, "{n}")?;
    out.flush()?;
    Ok(())
}

/// Whether the regular file at `path` (not followed if a symlink) starts
/// with the header of a queue file of the C implementation.
fn is_c_impl_file(path: &Path) -> bool {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(mut f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    let mut head = [0u8; 8];
    f.metadata().is_ok_and(|m| m.is_file())
        && f.read_exact(&mut head).is_ok()
        && data_queue_shared::region::c_impl_format(&head).is_some()
}

pub(crate) fn unlink(a: PathArgs) -> Result<(), Fail> {
    match probe(&a.path) {
        Ok(_) | Err(Error::IncompleteCreate(_)) => {}
        // The error for such a file says to remove it: this removes it.
        Err(_) if is_c_impl_file(&a.path) => {}
        Err(e) => return Err(Fail::Hard(format!("{e}; not removed"))),
    }
    data_queue_shared::region::unlink(&a.path)?;
    Ok(())
}

#[cfg(test)]
mod tests;
