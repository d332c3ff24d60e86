//! Compressed Str items: the zstd codec behind `StrQueue::set_compress`.
//!
//! A producer handle with compression on stores each string of at least
//! `min_bytes` as one standard zstd frame (RFC 8878, with its content size
//! and a content checksum) when that frame is shorter than the string;
//! bit 31 of the slot's `len` word marks such an item (see src/strq/items.rs).
//! Readers need no setting: every pop, peek and batch takes the frame out
//! of the arena under the lock like any other item, and decodes it here
//! after the lock is released. Neither side ever runs zstd while holding
//! the lock.
//!
//! Why a checksum: without it, shared memory scribbled over inside a frame
//! can decode to other bytes of the right length, and the reader would
//! hand them out as the item. With it (4 bytes per item, XXH64, several
//! GB/s) a scribbled frame fails to decode and the pop reports it.
//!
//! The codec state is per thread (a handle may be used by several
//! threads): one compression context, one decompression context and one
//! buffer, created on first use and reused, so a compressed push or pop
//! allocates nothing once warm.
//!
//! Built without the `zstd` cargo feature, a handle cannot turn
//! compression on, and a reader that meets a compressed item (written by
//! a build that has it) fails with an error naming the feature.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};
use crate::layout::MAX_ITEM;

/// The default level, zstd's own default: on JSON of 1-10 KB it gives most
/// of the ratio of the slow levels at a fraction of their time (see the
/// measurements in bench/RESULTS.pod).
pub const DEFAULT_LEVEL: i32 = 3;

/// A frame's first four bytes (little-endian), RFC 8878 section 3.1.1.
const FRAME_MAGIC: u32 = 0xFD2F_B528;

/// The per-handle producer setting: strings of at least `min` bytes are
/// compressed at `level`; `min == u64::MAX` is off. Boxed in the handle,
/// so the push hot path pays one load and one compare when it is off.
pub(crate) struct Setting {
    pub(crate) min: std::sync::atomic::AtomicU64,
    pub(crate) level: std::sync::atomic::AtomicI32,
}

impl Setting {
    pub(crate) fn off() -> Self {
        Setting {
            min: std::sync::atomic::AtomicU64::new(u64::MAX),
            level: std::sync::atomic::AtomicI32::new(DEFAULT_LEVEL),
        }
    }
}

/// The range of levels zstd accepts, `(min, max)`.
pub fn level_range() -> (i32, i32) {
    #[cfg(feature = "zstd")]
    {
        (zstd_safe::min_c_level(), zstd_safe::max_c_level())
    }
    #[cfg(not(feature = "zstd"))]
    {
        (0, 0)
    }
}

/// Check a `set_compress` request; the `min` to store (`u64::MAX`: off).
pub(crate) fn check_setting(min_bytes: u64, level: i32) -> Result<u64> {
    if min_bytes == 0 {
        return Ok(u64::MAX);
    }
    if !cfg!(feature = "zstd") {
        return Err(Error::Unsupported(
            "compression needs the zstd feature, which this build lacks",
        ));
    }
    let (lo, hi) = level_range();
    if level < lo || level > hi || level == 0 {
        return Err(Error::InvalidArgument(format!(
            "compression level {level} is out of range ({lo} .. -1 or 1 .. {hi})"
        )));
    }
    Ok(min_bytes)
}

/// The content size a zstd frame header declares, parsed here (no zstd
/// needed): `None` when `frame` does not start with a frame header that
/// declares one. RFC 8878 section 3.1.1.1.
pub fn content_size(frame: &[u8]) -> Option<u64> {
    let magic = u32::from_le_bytes(frame.get(..4)?.try_into().ok()?);
    if magic != FRAME_MAGIC {
        return None;
    }
    let fhd = *frame.get(4)?;
    let single_segment = fhd & 0x20 != 0;
    let fcs_len = match fhd >> 6 {
        0 if single_segment => 1,
        0 => return None,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let did_len = [0usize, 1, 2, 4][usize::from(fhd & 3)];
    let at = 5 + usize::from(!single_segment) + did_len;
    let field = frame.get(at..at + fcs_len)?;
    let mut b = [0u8; 8];
    b[..fcs_len].copy_from_slice(field);
    let v = u64::from_le_bytes(b);
    Some(if fcs_len == 2 { v + 256 } else { v })
}

thread_local! {
    /// The failure of the last pop on this thread that met an item it
    /// could not decode; taken (and cleared) by the public pop calls
    /// before they return. `FAILED` is the cheap test for it.
    static FAILED: Cell<bool> = const { Cell::new(false) };
    static FAILURE: RefCell<Option<Error>> = const { RefCell::new(None) };
    /// Decoded or encoded bytes, reused by every call on this thread.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Failures recorded and not yet taken, in all threads: the test an empty
/// pop makes, one load of a global (a thread-local costs a call to
/// `__tls_get_addr` in the shared object Perl loads). A failing pop takes
/// its own failure before it returns, so this is non-zero only briefly.
static PENDING: AtomicUsize = AtomicUsize::new(0);

/// Record why the pop in progress on this thread failed.
#[cold]
pub(crate) fn fail(e: Error) {
    FAILURE.with(|f| *f.borrow_mut() = Some(e));
    FAILED.with(|f| f.set(true));
    PENDING.fetch_add(1, Ordering::Relaxed);
}

/// The failure recorded by this thread's pop in progress, if any (cleared).
#[inline(always)]
pub(crate) fn take_failure() -> Option<Error> {
    if PENDING.load(Ordering::Relaxed) == 0 {
        return None;
    }
    take_failure_here()
}

#[cold]
#[inline(never)]
fn take_failure_here() -> Option<Error> {
    if !FAILED.with(Cell::get) {
        return None;
    }
    FAILED.with(|f| f.set(false));
    PENDING.fetch_sub(1, Ordering::Relaxed);
    FAILURE.with(|f| f.borrow_mut().take())
}

/// The error for a compressed item this build cannot decode.
#[cfg(not(feature = "zstd"))]
fn no_feature() -> Error {
    Error::Unsupported(
        "the queue holds a compressed item, and this build lacks the zstd feature that decodes it",
    )
}

fn corrupt(stored: usize, why: &str) -> Error {
    Error::Corrupt(format!(
        "compressed item of {stored} bytes is corrupt ({why}); it was removed"
    ))
}

/// Run `f` on the bytes to store for `src`: a zstd frame at `level` in this
/// thread's scratch buffer (with `true`) when that is shorter than `src`,
/// else `src` itself (with `false`), and also when `src` is longer than an
/// item may be (the caller's length check then refuses it as usual).
pub(crate) fn with_packed<R>(src: &[u8], level: i32, f: impl FnOnce(&[u8], bool) -> R) -> R {
    let mut buf = SCRATCH.with(|s| s.take());
    let ok = src.len() as u64 <= MAX_ITEM && encode(src, level, &mut buf);
    let r = if ok { f(&buf, true) } else { f(src, false) };
    SCRATCH.with(|s| s.replace(keep(buf)));
    r
}

/// Batches: encode each of `items` whose length `wants` selects into one
/// buffer; `f` gets the items to store as (bytes, utf8, compressed,
/// original length).
pub(crate) fn with_packed_batch<R>(
    items: &[(&[u8], bool)],
    wants: impl Fn(usize) -> bool,
    level: i32,
    f: impl FnOnce(&[(&[u8], bool, bool, u64)]) -> R,
) -> R {
    let mut buf = SCRATCH.with(|s| s.take());
    buf.clear();
    let mut frame = Vec::new();
    // Where each compressed item's frame is in `buf`.
    let spans: Vec<Option<(usize, usize)>> = items
        .iter()
        .map(|(b, _)| {
            let ok = wants(b.len()) && b.len() as u64 <= MAX_ITEM && encode(b, level, &mut frame);
            ok.then(|| {
                buf.extend_from_slice(&frame);
                (buf.len() - frame.len(), buf.len())
            })
        })
        .collect();
    let stored: Vec<(&[u8], bool, bool, u64)> = items
        .iter()
        .zip(&spans)
        .map(|(&(b, utf8), span)| match *span {
            Some((s, e)) => (&buf[s..e], utf8, true, b.len() as u64),
            None => (b, utf8, false, b.len() as u64),
        })
        .collect();
    let r = f(&stored);
    drop(stored);
    SCRATCH.with(|s| s.replace(keep(buf)));
    r
}

/// A scratch buffer worth keeping for the next call (huge ones are not).
fn keep(mut buf: Vec<u8>) -> Vec<u8> {
    if buf.capacity() > 1 << 20 {
        buf = Vec::new();
    }
    buf
}

#[cfg(feature = "zstd")]
thread_local! {
    static CCTX: RefCell<Option<zstd_safe::CCtx<'static>>> = const { RefCell::new(None) };
    static DCTX: RefCell<Option<zstd_safe::DCtx<'static>>> = const { RefCell::new(None) };
}

/// Compress `src` at `level` into `dst` (replacing its contents); whether
/// the frame came out shorter than `src`.
#[cfg(feature = "zstd")]
fn encode(src: &[u8], level: i32, dst: &mut Vec<u8>) -> bool {
    use zstd_safe::CParameter;
    dst.clear();
    if src.is_empty()
        || dst
            .try_reserve(zstd_safe::compress_bound(src.len()))
            .is_err()
    {
        return false;
    }
    CCTX.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = zstd_safe::CCtx::try_create();
        }
        let Some(cctx) = c.as_mut() else {
            return false;
        };
        if cctx
            .set_parameter(CParameter::CompressionLevel(level))
            .is_err()
            || cctx.set_parameter(CParameter::ChecksumFlag(true)).is_err()
        {
            return false;
        }
        // A Vec as zstd's output is written from its start up to its
        // capacity, at least the bound reserved above.
        matches!(cctx.compress2(dst, src), Ok(n) if n < src.len())
    })
}

/// Without the feature nothing is compressed.
#[cfg(not(feature = "zstd"))]
fn encode(_src: &[u8], _level: i32, _dst: &mut Vec<u8>) -> bool {
    false
}

/// Decode the zstd frame `src` (an item of `stored` bytes) into `dst`
/// (replacing its contents): exactly one frame, whose declared content
/// size is at most [`MAX_ITEM`] and matches what it decodes to, checksum
/// verified.
fn decode(src: &[u8], dst: &mut Vec<u8>) -> Result<()> {
    let stored = src.len();
    let Some(size) = content_size(src) else {
        return Err(corrupt(stored, "no zstd frame header with a content size"));
    };
    if size > MAX_ITEM {
        return Err(corrupt(
            stored,
            &format!("declares {size} bytes, more than an item may hold"),
        ));
    }
    decode_sized(src, size as usize, dst)
}

#[cfg(feature = "zstd")]
fn decode_sized(src: &[u8], size: usize, dst: &mut Vec<u8>) -> Result<()> {
    let stored = src.len();
    dst.clear();
    if dst.try_reserve_exact(size).is_err() {
        return Err(corrupt(
            stored,
            &format!("cannot allocate the {size} bytes it declares"),
        ));
    }
    DCTX.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_none() {
            *d = zstd_safe::DCtx::try_create();
        }
        let Some(dctx) = d.as_mut() else {
            return Err(corrupt(stored, "cannot create a zstd context"));
        };
        // Write into exactly `size` bytes: a frame that decodes to more
        // fails ("destination buffer is too small").
        dst.resize(size, 0);
        match dctx.decompress(&mut dst[..], src) {
            Ok(n) if n == size => Ok(()),
            Ok(n) => Err(corrupt(
                stored,
                &format!("decodes to {n} bytes, its header says {size}"),
            )),
            Err(code) => Err(corrupt(
                stored,
                &format!("zstd: {}", zstd_safe::get_error_name(code)),
            )),
        }
    })
    .inspect_err(|_| dst.clear())
}

#[cfg(not(feature = "zstd"))]
fn decode_sized(_src: &[u8], _size: usize, dst: &mut Vec<u8>) -> Result<()> {
    dst.clear();
    Err(no_feature())
}

/// After a single-item pop: `out` holds a compressed item; replace it with
/// the decoded bytes. On failure `out` is left empty.
#[cold]
#[inline(never)]
pub(crate) fn unpack(out: &mut Vec<u8>) -> Result<()> {
    let mut plain = SCRATCH.with(|s| s.take());
    let r = decode(out, &mut plain);
    // `out` gets the decoded bytes; its old buffer becomes the scratch.
    std::mem::swap(out, &mut plain);
    plain.clear();
    SCRATCH.with(|s| s.replace(keep(plain)));
    if r.is_err() {
        out.clear();
    }
    r
}

/// After a batch pop: the items `items[first..]` (ranges of `out`) whose
/// indexes are in `packed` are compressed; decode them in place, moving
/// the items after each. On failure `out` and `items` are cut back to
/// `out_len0` bytes and `first` items.
#[cold]
#[inline(never)]
pub(crate) fn unpack_batch(
    out: &mut Vec<u8>,
    items: &mut Vec<(usize, usize, bool)>,
    first: usize,
    out_len0: usize,
    packed: &[usize],
) -> Result<()> {
    let mut rebuilt = SCRATCH.with(|s| s.take());
    rebuilt.clear();
    rebuilt.extend_from_slice(&out[..out_len0]);
    let mut plain = Vec::new();
    let mut next = packed.iter().peekable();
    let mut r = Ok(());
    for (k, it) in items.iter_mut().enumerate().skip(first) {
        let (start, len, _) = *it;
        let src = &out[start..start + len];
        let at = rebuilt.len();
        if next.peek() == Some(&&k) {
            next.next();
            if let Err(e) = decode(src, &mut plain) {
                r = Err(e);
                break;
            }
            rebuilt.extend_from_slice(&plain);
            *it = (at, plain.len(), it.2);
        } else {
            rebuilt.extend_from_slice(src);
            *it = (at, len, it.2);
        }
    }
    std::mem::swap(out, &mut rebuilt);
    rebuilt.clear();
    SCRATCH.with(|s| s.replace(keep(rebuilt)));
    if r.is_err() {
        out.truncate(out_len0);
        items.truncate(first);
    }
    r
}

#[cfg(all(test, not(loom)))]
mod tests;
