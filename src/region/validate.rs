//! The header check made once at attach: a file's first bytes against
//! the variant asked for and the size of what backs it, and the errors
//! that name what a file that is not one of our queues is instead.

use crate::error::{Error, Result};
use crate::layout::{
    normalize_capacity, Geometry, Variant, FORMAT_VERSION, HEADER_SIZE, MAGIC, MAX_ARENA, MIN_ARENA,
};

pub(super) fn read_header_bytes(fd: libc::c_int, who: &str) -> Result<[u8; HEADER_SIZE]> {
    let mut buf = [0u8; HEADER_SIZE];
    let mut done = 0usize;
    while done < HEADER_SIZE {
        // SAFETY: the destination range lies inside `buf`.
        let n = unsafe {
            libc::pread(
                fd,
                buf[done..].as_mut_ptr().cast(),
                HEADER_SIZE - done,
                done as libc::off_t,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(Error::io(format!("{who}: read header"), e));
        }
        if n == 0 {
            return Err(too_small(who, done as u64));
        }
        done += n as usize;
    }
    Ok(buf)
}

pub(super) fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}
pub(super) fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
}

/// Check a header (as raw bytes) against the expected variant and the size
/// of what backs it. Returns the geometry it describes. This is the check
/// every attach makes (see "HEADER" in lib/Data/Queue/Shared/Format.pod); `who`
/// names the file in error messages.
///
/// # Errors
/// [`Error::Incompatible`] naming what is wrong: a file of the C
/// implementation ([`C_IMPL_MAGIC`]), a bad magic number (which
/// includes a header whose create never finished), another format
/// version, an unknown variant or another one than `want`, a capacity that
/// is not a power of two in range, a slot size, header size or slot offset
/// other than the variant's, a Str arena out of range, an arena offset or
/// total size that does not follow from the rest, or `backing_size`
/// smaller than the total size (a truncated file).
pub fn validate_header(
    bytes: &[u8; HEADER_SIZE],
    want: Variant,
    backing_size: u64,
    who: &str,
) -> Result<Geometry> {
    let bad = |why: &str| Error::Incompatible {
        who: who.to_string(),
        why: why.to_string(),
    };
    if let Some(why) = c_queue_file(bytes) {
        return Err(bad(&why));
    }
    if u64_at(bytes, 0) != MAGIC {
        return Err(bad("bad magic"));
    }
    if u32_at(bytes, 8) != FORMAT_VERSION {
        return Err(bad("unknown format version"));
    }
    let variant = Variant::from_u32(u32_at(bytes, 12)).ok_or_else(|| bad("unknown variant"))?;
    if variant != want {
        let article = if variant == Variant::Str { "a" } else { "an" };
        return Err(bad(&format!("it holds {article} {} queue", variant.name())));
    }
    let capacity = u64_at(bytes, 16);
    if !capacity.is_power_of_two() || normalize_capacity(capacity) != Some(capacity) {
        return Err(bad("bad capacity"));
    }
    if u64::from(u32_at(bytes, 24)) != variant.slot_size()
        || u32_at(bytes, 28) as usize != HEADER_SIZE
        || u64_at(bytes, 32) != HEADER_SIZE as u64
    {
        return Err(bad("bad slot geometry"));
    }
    let arena_cap = u64_at(bytes, 48);
    let arena_ok = match variant {
        Variant::Str => (MIN_ARENA..=MAX_ARENA).contains(&arena_cap),
        _ => arena_cap == 0,
    };
    if !arena_ok {
        return Err(bad("bad arena size"));
    }
    let geo = Geometry::compute_full(
        variant,
        capacity,
        arena_cap,
        u64_at(bytes, 280),
        u64_at(bytes, 296),
        u64_at(bytes, 312),
    )
    .ok_or_else(|| bad("size overflow or bad lease table size"))?;
    if u64_at(bytes, 40) != geo.arena_off
        || u64_at(bytes, 56) != geo.total_size
        || u64_at(bytes, 288) != geo.lease_off
    {
        return Err(bad("bad offsets"));
    }
    if backing_size < geo.total_size {
        return Err(bad("truncated"));
    }
    Ok(geo)
}

/// The C implementation of Data::Queue::Shared (the original Perl XS
/// module) starts its files with this 32-bit little-endian word ("1EUQ"
/// on disk), followed by its format version: 1 up to its 0.08, 2 from 0.12.
pub const C_IMPL_MAGIC: u32 = 0x5155_4531;

/// The format version (1 or 2) of a queue file of the C implementation
/// that starts with `head` (its first bytes, at least 8), or `None` when
/// it is not one.
pub fn c_impl_format(head: &[u8]) -> Option<u32> {
    if head.len() < 8 || u32_at(head, 0) != C_IMPL_MAGIC {
        return None;
    }
    let version = u32_at(head, 4);
    matches!(version, 1 | 2).then_some(version)
}

/// What to say about a file written by the C implementation, or `None`
/// when `head` (the first bytes of a file, at least 8) is not one.
pub(super) fn c_queue_file(head: &[u8]) -> Option<String> {
    c_impl_format(head).map(|version| {
        format!(
            "a queue file of another version of Data::Queue::Shared (the C \
             implementation, its format {version}); remove it and create it again"
        )
    })
}

pub(crate) fn incompatible(who: &str, why: &str) -> Error {
    Error::Incompatible {
        who: who.to_string(),
        why: why.to_string(),
    }
}

pub(super) fn too_small(who: &str, size: u64) -> Error {
    Error::TooSmall(format!(
        "{who}: invalid or incompatible queue file (too small: {size} bytes, \
         a queue header alone is {HEADER_SIZE})"
    ))
}

/// The error for a file or fd of `size` bytes, fewer than a header: a
/// file of the C implementation (whose smallest queues are) is named as
/// such; anything else is too small.
pub(crate) fn small_file_error(fd: libc::c_int, size: u64, who: &str) -> Error {
    let mut head = [0u8; 8];
    // SAFETY: reads at most 8 bytes into `head`.
    let n = unsafe { libc::pread(fd, head.as_mut_ptr().cast(), 8, 0) };
    match c_queue_file(&head[..n.max(0) as usize]) {
        Some(why) => incompatible(who, &why),
        None => too_small(who, size),
    }
}
