//! Push items into a shared queue file, creating it if needed.
//!
//! ```text
//! producer [--wait SECS] [--capacity N] [--arena BYTES] [--utf8] [--compress MIN] [--count N] [--] PATH TYPE [ITEM...]
//! ```
//!
//! `TYPE` is `int` (i64), `int32`, `int16` or `str`. Items are the `ITEM`
//! arguments (integers for the integer types; the argument bytes for `str`,
//! flagged UTF-8 with `--utf8`), or with `--count N` the items `0 .. N`
//! (`item 0`, `item 1`, ... for `str`). Without `--wait` a full queue is an
//! error (exit 1); with it, each push waits up to `SECS` seconds for room
//! (exit 2 on timeout). `--capacity` and `--arena` apply when the file is
//! created; an existing file keeps its own geometry. `--compress MIN`
//! stores `str` items of at least `MIN` bytes zstd-compressed (level 3).
//!
//! ```text
//! cargo run --release --example producer -- /tmp/q.shm int 1 2 3
//! cargo run --release --example consumer -- /tmp/q.shm int 3
//! ```

use std::os::unix::ffi::OsStrExt;
use std::process::ExitCode;

use data_queue_shared::{Deadline, Element, IntQueue, StrQueue, Waited};

struct Args {
    wait: Option<f64>,
    capacity: u64,
    arena: u64,
    utf8: bool,
    compress: u64,
    count: Option<u64>,
    path: String,
    kind: String,
    items: Vec<Vec<u8>>,
}

const USAGE: &str = "usage: producer [--wait SECS] [--capacity N] [--arena BYTES] [--utf8] \
                     [--count N] PATH int|int32|int16|str [ITEM...]";

fn parse() -> Result<Args, String> {
    let mut a = Args {
        wait: None,
        capacity: 1024,
        arena: 0,
        utf8: false,
        compress: 0,
        count: None,
        path: String::new(),
        kind: String::new(),
        items: Vec::new(),
    };
    let mut it = std::env::args_os().skip(1);
    let mut positional = Vec::new();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| -> Result<String, String> {
            it.next()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.to_str() {
            Some("--wait") => a.wait = Some(number(&value("--wait")?, "--wait")?),
            Some("--capacity") => a.capacity = number(&value("--capacity")?, "--capacity")?,
            Some("--arena") => a.arena = number(&value("--arena")?, "--arena")?,
            Some("--count") => a.count = Some(number(&value("--count")?, "--count")?),
            Some("--utf8") => a.utf8 = true,
            Some("--compress") => a.compress = number(&value("--compress")?, "--compress")?,
            Some("--") => {
                positional.extend(it.by_ref());
                break;
            }
            _ => positional.push(arg),
        }
    }
    let mut pos = positional.into_iter();
    a.path = pos.next().and_then(|p| p.into_string().ok()).ok_or(USAGE)?;
    a.kind = pos.next().and_then(|p| p.into_string().ok()).ok_or(USAGE)?;
    a.items = pos.map(|p| p.as_bytes().to_vec()).collect();
    if let Some(n) = a.count {
        if !a.items.is_empty() {
            return Err("give either --count or items, not both".into());
        }
        a.items = (0..n)
            .map(|i| match a.kind.as_str() {
                "str" => format!("item {i}").into_bytes(),
                _ => i.to_string().into_bytes(),
            })
            .collect();
    }
    Ok(a)
}

fn number<N: std::str::FromStr>(s: &str, what: &str) -> Result<N, String> {
    s.parse().map_err(|_| format!("{what}: not a number: {s}"))
}

/// Retry a wait that a signal interrupted, with the same deadline.
fn retry<R>(mut f: impl FnMut() -> Waited<R>) -> Waited<R> {
    loop {
        match f() {
            Waited::Interrupted => continue,
            w => return w,
        }
    }
}

fn produce_int<T: Element>(a: &Args) -> Result<(), (u8, String)> {
    let q = IntQueue::<T>::open(&a.path, a.capacity, 0o600).map_err(|e| (1, e.to_string()))?;
    for item in &a.items {
        let text = String::from_utf8_lossy(item);
        let v: i64 = number(&text, "item").map_err(|e| (1, e))?;
        // Values wider than the queue are truncated as a C cast would.
        let v = T::from_i64(v);
        match a.wait {
            None if !q.push(v) => return Err((1, format!("queue full at item {text}"))),
            None => {}
            Some(secs) => {
                let d = Deadline::after_secs(secs);
                if retry(|| q.push_wait(v, &d)) != Waited::Done(()) {
                    return Err((2, format!("timed out pushing item {text}")));
                }
            }
        }
    }
    Ok(())
}

fn produce_str(a: &Args) -> Result<(), (u8, String)> {
    let q = StrQueue::open(&a.path, a.capacity, a.arena, 0o600).map_err(|e| (1, e.to_string()))?;
    q.set_compress(a.compress, 3)
        .map_err(|e| (1, e.to_string()))?;
    for item in &a.items {
        let shown = String::from_utf8_lossy(item);
        match a.wait {
            None => match q.push(item, a.utf8) {
                Ok(true) => {}
                Ok(false) => return Err((1, format!("queue full at item {shown}"))),
                Err(e) => return Err((1, e.to_string())),
            },
            Some(secs) => {
                let d = Deadline::after_secs(secs);
                loop {
                    match q.push_wait(item, a.utf8, false, &d) {
                        Ok(Waited::Done(())) => break,
                        Ok(Waited::Interrupted) => continue,
                        Ok(Waited::TimedOut) => {
                            return Err((2, format!("timed out pushing item {shown}")))
                        }
                        Err(e) => return Err((1, e.to_string())),
                    }
                }
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("producer: {e}");
            return ExitCode::from(64);
        }
    };
    let r = match a.kind.as_str() {
        "int" => produce_int::<i64>(&a),
        "int32" => produce_int::<i32>(&a),
        "int16" => produce_int::<i16>(&a),
        "str" => produce_str(&a),
        other => Err((64, format!("unknown type {other:?}\n{USAGE}"))),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, msg)) => {
            eprintln!("producer: {msg}");
            ExitCode::from(code)
        }
    }
}
