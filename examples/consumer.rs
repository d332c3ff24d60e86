//! Pop items from a shared queue file and print one line per item.
//!
//! ```text
//! consumer [--wait SECS] [--capacity N] [--arena BYTES] [--] PATH TYPE COUNT
//! ```
//!
//! `TYPE` is `int` (i64), `int32`, `int16` or `str`. Pops `COUNT` items:
//! integers print in decimal; strings print as `utf8 HEX` or `bytes HEX`
//! (the UTF-8 flag, then the bytes in hex, so any byte survives). Without
//! `--wait` an empty queue ends the run early (exit 1); with it, each pop
//! waits up to `SECS` seconds (exit 2 on timeout). The queue file is created
//! (with `--capacity` slots and, for `str`, `--arena` bytes) when missing.
//!
//! ```text
//! cargo run --release --example consumer -- --wait 10 /tmp/q.shm str 1 &
//! cargo run --release --example producer -- --utf8 /tmp/q.shm str 'héllo'
//! ```

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use data_queue_shared::{Deadline, Element, IntQueue, StrQueue, Waited};

const USAGE: &str =
    "usage: consumer [--wait SECS] [--capacity N] [--arena BYTES] PATH int|int32|int16|str COUNT";

struct Args {
    wait: Option<f64>,
    capacity: u64,
    arena: u64,
    path: String,
    kind: String,
    count: u64,
}

fn number<N: std::str::FromStr>(s: &str, what: &str) -> Result<N, String> {
    s.parse().map_err(|_| format!("{what}: not a number: {s}"))
}

fn parse() -> Result<Args, String> {
    let mut wait = None;
    let mut capacity = 1024;
    let mut arena = 0;
    let mut pos = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--wait" => wait = Some(number(&value("--wait")?, "--wait")?),
            "--capacity" => capacity = number(&value("--capacity")?, "--capacity")?,
            "--arena" => arena = number(&value("--arena")?, "--arena")?,
            "--" => {
                pos.extend(it.by_ref());
                break;
            }
            _ => pos.push(arg),
        }
    }
    let [path, kind, count] = <[String; 3]>::try_from(pos).map_err(|_| USAGE.to_string())?;
    Ok(Args {
        wait,
        capacity,
        arena,
        path,
        kind,
        count: number(&count, "COUNT")?,
    })
}

/// What ended a run early: the exit code and the message.
type Stop = (u8, String);

fn ended(w: Option<Waited<()>>, got: u64) -> Stop {
    match w {
        Some(Waited::TimedOut) => (2, format!("timed out after {got} items")),
        _ => (1, format!("queue empty after {got} items")),
    }
}

fn consume_int<T: Element>(a: &Args, out: &mut impl std::io::Write) -> Result<(), Stop> {
    let q = IntQueue::<T>::open(&a.path, a.capacity, 0o600).map_err(|e| (1, e.to_string()))?;
    for got in 0..a.count {
        let v = match a.wait {
            None => q.pop().ok_or_else(|| ended(None, got))?,
            Some(secs) => {
                let d = Deadline::after_secs(secs);
                loop {
                    match q.pop_wait(&d) {
                        Waited::Done(v) => break v,
                        Waited::Interrupted => continue,
                        Waited::TimedOut => return Err(ended(Some(Waited::TimedOut), got)),
                    }
                }
            }
        };
        writeln!(out, "{}", v.to_i64()).map_err(|e| (1, e.to_string()))?;
    }
    Ok(())
}

fn consume_str(a: &Args, out: &mut impl std::io::Write) -> Result<(), Stop> {
    let q = StrQueue::open(&a.path, a.capacity, a.arena, 0o600).map_err(|e| (1, e.to_string()))?;
    let mut bytes = Vec::new();
    let mut line = String::new();
    for got in 0..a.count {
        let utf8 = match a.wait {
            None => q
                .pop_checked(false, &mut bytes)
                .map_err(|e| (3, e.to_string()))?
                .ok_or_else(|| ended(None, got))?,
            Some(secs) => {
                let d = Deadline::after_secs(secs);
                loop {
                    match q.pop_wait(false, &mut bytes, &d) {
                        Waited::Done(f) => break f,
                        Waited::Interrupted => continue,
                        Waited::TimedOut => return Err(ended(Some(Waited::TimedOut), got)),
                    }
                }
            }
        };
        line.clear();
        line.push_str(if utf8 { "utf8 " } else { "bytes " });
        for b in &bytes {
            let _ = write!(line, "{b:02x}");
        }
        writeln!(out, "{line}").map_err(|e| (1, e.to_string()))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("consumer: {e}");
            return ExitCode::from(64);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let r = match a.kind.as_str() {
        "int" => consume_int::<i64>(&a, &mut out),
        "int32" => consume_int::<i32>(&a, &mut out),
        "int16" => consume_int::<i16>(&a, &mut out),
        "str" => consume_str(&a, &mut out),
        other => Err((64, format!("unknown type {other:?}\n{USAGE}"))),
    };
    let _ = out.flush();
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, msg)) => {
            eprintln!("consumer: {msg}");
            ExitCode::from(code)
        }
    }
}
