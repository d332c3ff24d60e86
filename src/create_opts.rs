//! This thread's create options: the size of the lease table (see the
//! `lease` module) that the queues it creates next get. They are read by
//! the region as it sizes a new queue, so they live below both: a thread
//! local set around a create ([`with_create_options`], the Rust form) or
//! until changed ([`set_create_options`], the C API's form). Attaching
//! ignores them: the header's sizes win.

use std::cell::Cell;

use crate::error::{Error, Result};
use crate::layout::{
    default_lease_bytes, Variant, DEFAULT_MAX_DEAD, DEFAULT_MAX_LEASES, MAX_DEAD, MAX_LEASES,
};

thread_local! {
    static CREATE: Cell<(Option<u64>, Option<u64>)> = const { Cell::new((None, None)) };
}

/// Run `f` (which creates a queue) with this thread's create options:
/// `max_leases` lease records (default [`DEFAULT_MAX_LEASES`], 0 for none)
/// and, for Str, `lease_bytes` of lease data (default
/// [`default_lease_bytes`]). Attaching to an existing queue ignores them.
///
/// # Examples
///
/// ```
/// use data_queue_shared::{lease, IntQueue};
/// let q = lease::with_create_options(Some(2), None, || IntQueue::<i64>::anonymous(8))?;
/// q.push(1);
/// q.push(2);
/// q.push(3);
/// let (_, a) = q.pop_lease(None)?.unwrap();
/// let (_, _b) = q.pop_lease(None)?.unwrap();
/// assert!(q.pop_lease(None).is_err()); // both records taken
/// assert_eq!(q.pop(), Some(3)); // plain pops go on
/// assert!(q.ack(a)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn with_create_options<R>(
    max_leases: Option<u64>,
    lease_bytes: Option<u64>,
    f: impl FnOnce() -> R,
) -> R {
    let old = CREATE.with(|c| c.replace((max_leases, lease_bytes)));
    let r = f();
    CREATE.with(|c| c.set(old));
    r
}

/// Set this thread's create options until changed (the C API's form).
pub(crate) fn set_create_options(max_leases: Option<u64>, lease_bytes: Option<u64>) {
    CREATE.with(|c| c.set((max_leases, lease_bytes)));
}

thread_local! {
    static WORK: Cell<(Option<u64>, Option<u64>)> = const { Cell::new((None, None)) };
}

/// Run `f` (which creates a queue) with this thread's work-queue create
/// options: `max_deliveries` (default 0: unlimited; at most 2^32-1) and
/// `max_dead` dead-letter records (default [`DEFAULT_MAX_DEAD`], 0 for
/// none, at most [`MAX_DEAD`]). Attaching ignores them.
pub fn with_work_options<R>(
    max_deliveries: Option<u64>,
    max_dead: Option<u64>,
    f: impl FnOnce() -> R,
) -> R {
    let old = WORK.with(|c| c.replace((max_deliveries, max_dead)));
    let r = f();
    WORK.with(|c| c.set(old));
    r
}

/// Set this thread's work-queue create options until changed (the C
/// API's form).
pub(crate) fn set_work_options(max_deliveries: Option<u64>, max_dead: Option<u64>) {
    WORK.with(|c| c.set((max_deliveries, max_dead)));
}

/// The work-queue options a create asks for: (max_deliveries, max_dead).
pub(crate) fn work_sizes() -> Result<(u64, u64)> {
    let (d, n) = WORK.with(|c| c.get());
    let d = d.unwrap_or(0);
    if d > u64::from(u32::MAX) {
        return Err(Error::InvalidArgument(format!(
            "max_deliveries {d} is out of range (0 .. {})",
            u32::MAX
        )));
    }
    let n = n.unwrap_or(DEFAULT_MAX_DEAD);
    if n > MAX_DEAD {
        return Err(Error::InvalidArgument(format!(
            "max_dead {n} is out of range (0 .. {MAX_DEAD})"
        )));
    }
    Ok((d, n))
}

/// The lease table size a create asks for: (max_leases, lease_bytes).
/// `dead`: the dead-letter records asked for (the default Str lease data
/// area has room for their items too).
pub(crate) fn create_sizes(
    variant: Variant,
    cap: u64,
    arena: u64,
    dead: u64,
) -> Result<(u64, u64)> {
    let (n, b) = CREATE.with(|c| c.get());
    let n = n.unwrap_or(DEFAULT_MAX_LEASES);
    if n > MAX_LEASES {
        return Err(Error::InvalidArgument(format!(
            "max_leases {n} is out of range (0 .. {MAX_LEASES})"
        )));
    }
    let b = match (variant, b) {
        (Variant::Str, None) => {
            default_lease_bytes(variant, cap, arena, if n == 0 { 0 } else { n + dead })
        }
        (Variant::Str, Some(b)) => {
            if b == 0 || b > crate::layout::MAX_ARENA {
                return Err(Error::InvalidArgument(format!(
                    "lease_bytes {b} is out of range (1 .. {})",
                    crate::layout::MAX_ARENA
                )));
            }
            if n == 0 {
                0
            } else {
                (b + 7) & !7
            }
        }
        (_, Some(b)) if b != 0 => {
            return Err(Error::InvalidArgument(
                "lease_bytes applies to Str queues only".into(),
            ))
        }
        _ => 0,
    };
    Ok((n, b))
}
