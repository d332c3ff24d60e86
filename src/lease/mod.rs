//! Leased pops: an item taken with `pop_lease` leaves the queue for every
//! other consumer but is held, in a lease table in shared memory, for the
//! process that took it, until that process acks it (gone for good) or
//! releases it (back to the front). A lease whose holder process died, or
//! whose optional deadline passed, is returned to the front by the next
//! operation that looks: no daemon.
//!
//! # The table (format 6, records and head grown in format 8)
//!
//! After the body (header, slots, Str arena), at `lease_off` (a multiple of
//! 64, stored in the header with `max_leases`, `max_dead` and, for Str,
//! `lease_bytes`):
//!
//! ```text
//! lease_off                     192 bytes          LeaseHead (lock, counters, work words)
//! lease_off + 192               max_leases * 128   LeaseRec, one per lease
//! lease_off + 192 + 128n        max_dead * 64      DeadRec, the dead-letter area
//! lease_off + 192 + 128n + 64d  lease_bytes (Str)  lease data: leased, delayed and dead items' bytes
//! ```
//!
//! A record's `state` word is `generation << 8 | state`, with the states
//! [`FREE`], [`TAKING`], [`HELD`], [`RETURNED`], [`RETURNING`], and
//! (format 8) [`DELAYED`] and [`BACK`]. A lease
//! id given to the user is `generation << 16 | record index`; an id whose
//! generation no longer matches its record is a lease that has ended.
//!
//! # Who writes the table
//!
//! Only the holder of a lock: for the integer queues the table's own lock
//! (`LeaseHead::lock`, the crate's robust lock with dead-holder takeover),
//! for Str the queue's lock. A holder killed inside leaves the lock held;
//! the process that takes it over repairs the table before anything else
//! (`recover` in src/intq/lease.rs and src/strq/lease.rs). A plain push never takes
//! these locks. A plain pop reads one header word,
//! [`Header::lease_busy`](crate::layout::Header::lease_busy), the number of
//! records not free, and goes to the table only when it is not zero: then
//! it takes the returned items first (Int), and looks for dead holders
//! and passed deadlines when a look is due (every [`SCAN_NS`], or
//! `SCAN_NS / 20` when it found the queue empty), as the lease calls do.
//! Every operation that writes the table stores the exact count before it
//! unlocks, and counts a record about to leave the free state ahead of
//! time, so that a holder killed in between leaves the word too high
//! (harmless: pops look, the takeover recounts), never too low.
//!
//! # Int: intent, take, held
//!
//! The Int ring takes an item with one CAS on its slot, which cannot also
//! write the table. So `pop_lease`, holding the lease lock, writes the
//! record first as [`TAKING`] with the slot's position and value, then
//! CASes the slot, then marks the record [`HELD`]; a failed CAS frees the
//! record before the walk goes on. A taker-over that finds a `TAKING`
//! record looks at the slot: still holding that position's value, the take
//! did not happen (record freed); otherwise it did (record held by the
//! dead process, so returned). The one ambiguity: a plain, unleased pop
//! that takes the same item after the leaser died between its intent and
//! its CAS (a few instructions) and before the takeover. That item is then
//! given twice. Leasing consumers never race this way: they all hold the
//! lease lock while they take, and the takeover comes first. A plain pop
//! that finds [`Header::lease_busy`](crate::layout::Header::lease_busy)
//! not zero and the lease lock held takes the lock (over) before it goes
//! to the ring, so the case needs the plain pop to have passed that check
//! before the leaser took the lock, and the leaser to die within those
//! instructions meanwhile.
//!
//! Returned Int items wait in the table ([`RETURNED`]) with their value,
//! counted in [`Header::lease_returned`](crate::layout::Header::lease_returned)
//! and in the queue's size; every pop serves them first, oldest pop first
//! (each record keeps the sequence number of the `pop_lease` that first
//! took its item).
//!
//! # Str: pending, commit, held
//!
//! A Str `pop_lease` copies the front item's stored bytes into the lease
//! data area and writes the record as [`TAKING`] with a mark, the queue's
//! `pop_ok` after this pop, all before the commit that removes the item;
//! after the commit the record becomes [`HELD`]. A taker-over compares the
//! committed `pop_ok` with the mark: reached, the pop happened (held by the
//! dead process, so returned), else the record is freed. Returning a Str
//! item is a front push inside the same discipline: [`RETURNING`] with the
//! `push_ok` mark, then the commit, then [`FREE`]. Str items are returned
//! into the queue itself (while the queue is full they wait in the table,
//! counted in its size); plain Str pops go to the table only to look for
//! dead holders.
//!
//! # Work queue (format 8)
//!
//! **Delivery counts.** Every leased hand-out counts one delivery in the
//! record's `deliveries` word, written before the record becomes
//! [`HELD`] (Int: after the take, before `HELD`; Str: before the commit
//! that removes the item). A return (release, passed deadline, dead
//! holder) keeps the count with the item: an Int item waits in its
//! record ([`RETURNED`]), so the count stays there; a Str item goes back
//! into the queue itself, and its record stays behind as [`BACK`],
//! holding no bytes, with the item's position and its slot's arena
//! offset and stored length (`qpos`, `due`). The next `pop_lease` of the
//! item at that position, with that offset and length, leases it with
//! that record and goes on from its count. Every Str lease call that
//! holds the locks first frees the `BACK` records whose item is no longer
//! where they saw it (a plain pop took it: a plain pop is not a delivery
//! and ends the count; or `clear`), and every push at the front (plain,
//! returned or kicked) first frees the `BACK` records of the position it
//! writes, so that a new item there never inherits a count (a front push
//! pays one load of [`Header::lease_busy`](crate::layout::Header::lease_busy)
//! for this; pushes at the back pay nothing). When every record is in use,
//! `pop_lease` forgets one `BACK` record's count rather than fail. A
//! `pop_back` of such an item followed by a push of an item of the same
//! size at the same place can carry the count over to the new item (a
//! count too high, never an item lost).
//!
//! **Dead letters.** The create option `max_deliveries` (in the head;
//! 0: unlimited) makes a returning item whose count has reached it move
//! to the dead-letter area (`max_dead` records after the lease records,
//! [`DeadRec`]) instead, with its count, reason and the CLOCK_REALTIME
//! time: `Table::give_back` decides, `Table::move_dead` moves. `bury`
//! moves a held item whatever its count. A Str dead item keeps its bytes
//! where they were, in the lease data area (the default area is sized for
//! `max_leases + max_dead` items). When the area is full nothing is
//! dropped: the item returns as usual and `dead_full` counts it (`bury`
//! fails instead, the lease still held). `kick` moves dead items back to
//! the front with their counts reset (Int: as returned records; Str:
//! front pushes); `dead_take` removes them. Dead items are in no pop's
//! view and not in the size; plain pops never read the dead area.
//!
//! **Delays.** `release_after` and `push_delayed` leave the item in a
//! record as [`DELAYED`] with a due time (CLOCK_MONOTONIC); it takes a
//! lease record (and, for Str, room in the lease data area). The head's
//! `next_due` word is the earliest due time. Every look (the lease
//! calls', and a plain pop's when lease records are in use) makes the
//! items whose time has come [`RETURNED`], so they are served first, as
//! released items are: a due item goes before the items pushed after it
//! fell due. A look that is due anyway also recomputes `next_due` (so a
//! scribbled hint is repaired). Delayed items are not in the size. A
//! blocked pop (plain or leased) sleeps while lease records are in use at
//! most 50 ms and at most until `next_due` + 1 ms; `release_after` and
//! `push_delayed` wake the sleepers so that they take the new due time
//! into account.
//!
//! **Touch.** `touch` moves a held lease's deadline to now + its own
//! length (the record's `length`) or a new one; a lease without a
//! deadline stays without one.
//!
//! **Crash safety.** Each step writes in an order where a holder killed
//! in between leaves the item at worst in two places, never in none, and
//! each has a kill point (see `testpoint`):
//!
//! * the count (`work_counted`): written before the lease is held; a
//!   holder killed then leaves the item where it was (Int: returned, or
//!   settled by the intent rules above; Str: the take not committed), the
//!   count maybe one too high;
//! * the move to the dead area (`work_dead_moved`): the dead record is
//!   written whole and made held, then the lease record freed; the
//!   takeover frees a lease record that a dead record names (`src`: its
//!   index and generation), so the move happens exactly once
//!   (`Table::settle_dead_moves`);
//! * the kick (`work_kicked`): the item is back in the live queue first,
//!   then the dead record is freed: killed in between, the item is in
//!   both (twice);
//! * the delay (`work_delayed`) and the due item (`work_made_due`): a
//!   state change of one record, the hint and counters after it (the
//!   takeover recounts the returned items; the next look recomputes the
//!   hint);
//! * the dead drain (`work_dead_drain`): the item is copied out before
//!   its record is freed: killed in between, it is still in the area.
//!
//! A plain push, pop or batch pays nothing for any of this on a queue
//! with no lease record in use: dead items use no lease record, and the
//! one word a plain pop reads for leases
//! ([`Header::lease_busy`](crate::layout::Header::lease_busy)) is not
//! zero while an item is delayed (or, for Str, while a `BACK` record
//! keeps a count), which sends pops to the looks above.

use std::fmt;

use crate::futex::Deadline;
use crate::layout::{DEAD_REC_SIZE, LEASE_HEAD_SIZE, LEASE_REC_SIZE};
use crate::lock::{current_tag, owner_is_dead, Lock, LockFail};
use crate::region::Region;
use crate::sync::{AtomicU64, Ordering};
use crate::testpoint::Point;
use crate::Error;

// This module is the table both queues share. Each queue's lease methods
// live with the queue, as children for its private parts:
// src/intq/lease.rs (with the ring's pop for it, src/ring/lease_pop.rs)
// and src/strq/lease.rs.
#[cfg(all(test, not(loom)))]
mod tests;
#[cfg(all(test, not(loom)))]
mod work_tests;

/// A free record.
pub const FREE: u64 = 0;
/// Int: intent written, slot take may or may not have happened. Str: the
/// pop that removes the item is written but maybe not committed.
pub const TAKING: u64 = 1;
/// Held by the process `owner`.
pub const HELD: u64 = 2;
/// Back from a lease, waiting to be served (Int), or for room at the front
/// of the queue (Str).
pub const RETURNED: u64 = 3;
/// Str: pushed back to the front, commit maybe not landed.
pub const RETURNING: u64 = 4;
/// An item waiting for its due time (`due`) before it is returned
/// (format 8: `release_after`, `push_delayed`).
pub const DELAYED: u64 = 5;
/// Str: a returned item that is in the queue again, at the position
/// `qpos`, whose delivery count the record keeps for its next leased pop
/// (format 8).
pub const BACK: u64 = 6;

/// A dead-letter record's state: free.
pub const DEAD_FREE: u64 = 0;
/// A dead-letter record's state: holds an item.
pub const DEAD_HELD: u64 = 1;

/// The head of the lease table.
#[repr(C, align(64))]
pub struct LeaseHead {
    /// Int: the lock every table write holds (Str uses its front lock;
    /// every Str lease call holds both of its locks).
    pub lock: Lock,
    /// Int: the lock holder's tag, as a Str lock's `owner`.
    pub lock_owner: AtomicU64,
    /// Sequence number of the next new lease (pop order).
    pub next_seq: AtomicU64,
    /// Leases acked, ever.
    pub acked: AtomicU64,
    /// Leases released, ever.
    pub released: AtomicU64,
    /// Leases returned because their holder died, ever.
    pub returned_dead: AtomicU64,
    /// Leases returned because their deadline passed, ever.
    pub returned_timeout: AtomicU64,
    /// CLOCK_MONOTONIC ns of the last look for dead holders.
    pub last_scan: AtomicU64,
    // ---- line 1 (format 8) ----
    /// Deliveries after which a returning item goes to the dead-letter
    /// area (0: unlimited). Written at create.
    pub max_deliveries: AtomicU64,
    /// CLOCK_MONOTONIC ns of the earliest due time of a delayed item (0:
    /// none): a hint for the looks and the waits, recomputed by every
    /// look under the lock.
    pub next_due: AtomicU64,
    /// Leased hand-outs, ever.
    pub delivered: AtomicU64,
    /// Moved to the dead-letter area at `max_deliveries`, ever.
    pub dead: AtomicU64,
    /// Buried, ever.
    pub buried: AtomicU64,
    /// Kicked back from the dead-letter area, ever.
    pub kicked: AtomicU64,
    /// Taken out of the dead-letter area, ever.
    pub drained: AtomicU64,
    /// Touches, ever.
    pub touched: AtomicU64,
    // ---- line 2 (format 8) ----
    /// Items that should have died but found the dead-letter area full,
    /// ever.
    pub dead_full: AtomicU64,
    /// The order number of the next dead-letter record (oldest first).
    pub dead_next: AtomicU64,
    /// Zero; reserved.
    pub reserved: [AtomicU64; 6],
}

/// One dead-letter record (64 bytes, format 8).
#[repr(C, align(64))]
pub struct DeadRec {
    /// `order << 8 | state` ([`DEAD_FREE`], [`DEAD_HELD`]); `order` from
    /// [`LeaseHead::dead_next`], oldest first.
    pub state: AtomicU64,
    /// Pop order of the item.
    pub seq: AtomicU64,
    /// Its delivery count.
    pub deliveries: AtomicU64,
    /// Why it died ([`DEAD_RELEASED`], ...).
    pub reason: AtomicU64,
    /// CLOCK_REALTIME ns of the move.
    pub when_ns: AtomicU64,
    /// As [`LeaseRec::value`] (Str: its bytes stay in the lease data
    /// area).
    pub value: AtomicU64,
    /// Str: 1 when UTF-8.
    pub meta: AtomicU64,
    /// The lease id of the record it came from: a takeover frees that
    /// record if it still names the item (the move completed).
    pub src: AtomicU64,
}

/// One lease record (64 bytes).
#[repr(C, align(64))]
pub struct LeaseRec {
    /// `generation << 8 | state`.
    pub state: AtomicU64,
    /// Holder's tag, `pid << 32 | start time` (see lock.rs).
    pub owner: AtomicU64,
    /// Pop order of the item (from `next_seq`).
    pub seq: AtomicU64,
    /// Int: the value. Str: lease data offset << 32 | stored length word
    /// (bit 31: compressed).
    pub value: AtomicU64,
    /// Int: the ring position (for `TAKING`). Str: 1 when UTF-8.
    pub meta: AtomicU64,
    /// CLOCK_MONOTONIC ns after which the lease is returned; 0: never.
    pub deadline: AtomicU64,
    /// Str: the `pop_ok` (`TAKING`) or `push_ok` (`RETURNING`) the commit
    /// reaches.
    pub mark: AtomicU64,
    /// CLOCK_MONOTONIC ns when the item was leased.
    pub since: AtomicU64,
    // ---- line 1 (format 8) ----
    /// The item's delivery count (leased hand-outs so far).
    pub deliveries: AtomicU64,
    /// The lease's own length in ns (0: no deadline), for `touch`.
    pub length: AtomicU64,
    /// [`DELAYED`]: CLOCK_MONOTONIC ns when it is due. Str [`BACK`]: the
    /// stored length word of the item in the queue.
    pub due: AtomicU64,
    /// Str [`BACK`]: the item's position `<< 32 |` its arena offset.
    pub qpos: AtomicU64,
    /// Zero; reserved.
    pub reserved: [AtomicU64; 4],
}

#[cfg(not(loom))]
const _: () = {
    assert!(std::mem::size_of::<LeaseHead>() as u64 == crate::layout::LEASE_HEAD_SIZE);
    assert!(std::mem::size_of::<LeaseRec>() as u64 == crate::layout::LEASE_REC_SIZE);
    assert!(std::mem::size_of::<DeadRec>() as u64 == crate::layout::DEAD_REC_SIZE);
    assert!(
        std::mem::offset_of!(LeaseHead, max_deliveries) as u64
            == crate::layout::LEASE_HEAD_MAX_DELIVERIES
    );
};

/// How often (at most) an operation looks for dead holders and passed
/// deadlines, unless it found the queue empty: a look reads `/proc` once
/// per other holder.
pub const SCAN_NS: u64 = 2_000_000;

/// Longest sleep of a waiting pop (leased or plain) while leases are
/// open: it wakes to look for dead holders at least this often.
pub const LOOK_EVERY_SECS: f64 = 0.05;

/// Why a lease operation failed.
#[derive(Debug)]
pub enum LeaseError {
    /// The queue was created with `max_leases` 0.
    NoLeases,
    /// Every record holds a lease (the number of records).
    Full(u64),
    /// Str: the lease data area has no room for the front item now.
    AreaFull {
        /// Bytes the item needs.
        need: u64,
        /// Size of the area.
        area: u64,
    },
    /// Str: the front item is larger than the whole lease data area.
    TooBig {
        /// Bytes the item needs.
        need: u64,
        /// Size of the area.
        area: u64,
    },
    /// Not a lease id of this queue.
    BadLease(u64),
    /// The lease is held by another process (its pid).
    NotHolder(u64, u32),
    /// The lock guarding the table stayed held by a live process: the
    /// Str queue lock past the handle's lock timeout, or the integer
    /// queues' lease lock for a second.
    LockTimeout,
    /// Str: the leased item could not be decoded (it was acked: gone).
    Corrupt(Error),
    /// `bury`: the dead-letter area is full (its number of records), or
    /// the queue has none (0).
    DeadFull(u64),
    /// A bad argument (the text says which).
    BadArg(String),
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseError::NoLeases => {
                write!(f, "this queue has no lease table (created with max_leases 0)")
            }
            LeaseError::Full(n) => write!(
                f,
                "all {n} leases are taken (ack or release some, or create the queue with a larger max_leases)"
            ),
            LeaseError::AreaFull { need, area } => write!(
                f,
                "the lease data area ({area} bytes) has no room now for the front item ({need} bytes); ack or release some leases"
            ),
            LeaseError::TooBig { need, area } => write!(
                f,
                "the front item ({need} bytes) is larger than the lease data area ({area} bytes); create the queue with a larger lease_bytes"
            ),
            LeaseError::BadLease(id) => write!(f, "'{id}' is not a lease of this queue"),
            LeaseError::NotHolder(id, pid) => {
                write!(f, "lease {id} is held by process {pid}, not this one")
            }
            LeaseError::LockTimeout => write!(f, "lock timeout"),
            LeaseError::Corrupt(e) => write!(f, "{e}"),
            LeaseError::DeadFull(0) => write!(
                f,
                "this queue has no dead-letter area (created with max_dead 0)"
            ),
            LeaseError::DeadFull(n) => write!(
                f,
                "the dead-letter area is full ({n} items); kick or drain some, or create the queue with a larger max_dead"
            ),
            LeaseError::BadArg(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for LeaseError {}

/// Counters and gauges of a queue's leases (what `dqs stats` shows).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaseStats {
    /// Lease records (0: the queue has no lease table).
    pub max_leases: u64,
    /// Leases held now (including ones being taken).
    pub open: u64,
    /// Returned items waiting to be served again.
    pub waiting: u64,
    /// Acked, ever.
    pub acked: u64,
    /// Released, ever.
    pub released: u64,
    /// Returned after their holder died, ever.
    pub returned_dead: u64,
    /// Returned after their deadline passed, ever.
    pub returned_timeout: u64,
    /// Str: bytes of the lease data area.
    pub lease_bytes: u64,
    /// Deliveries after which a returning item goes to the dead-letter
    /// area (0: unlimited).
    pub max_deliveries: u64,
    /// Records of the dead-letter area (0: none).
    pub max_dead: u64,
    /// Leased hand-outs, ever.
    pub delivered: u64,
    /// Items moved to the dead-letter area because their count reached
    /// `max_deliveries`, ever.
    pub dead: u64,
    /// Items buried (moved there by `bury`), ever.
    pub buried: u64,
    /// Items kicked back to the live queue, ever.
    pub kicked: u64,
    /// Items drained (taken out) of the dead-letter area, ever.
    pub drained: u64,
    /// Delayed items waiting for their due time now.
    pub delayed: u64,
    /// Touches that moved a deadline, ever.
    pub touched: u64,
    /// Items that should have died but found the dead-letter area full
    /// (returned to the live queue instead), ever.
    pub dead_full: u64,
    /// Items in the dead-letter area now.
    pub dead_items: u64,
}

/// One open or waiting lease, as `dqs leases` lists it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaseInfo {
    /// The lease id.
    pub id: u64,
    /// [`HELD`], [`RETURNED`], ...
    pub state: u64,
    /// Holder pid.
    pub pid: u64,
    /// Pop order.
    pub seq: u64,
    /// Nanoseconds since it was leased.
    pub age_ns: u64,
    /// Nanoseconds until its deadline (0: none or passed).
    pub left_ns: u64,
    /// Int: the value. Str: the item's length in bytes (decoded, for an
    /// item stored compressed).
    pub value: i64,
    /// Str: the bytes the item takes in the lease data area (its
    /// compressed length when stored compressed). Int: 0.
    pub stored: u64,
    /// Leased hand-outs of the item so far.
    pub deliveries: u64,
}

/// Why an item is in the dead-letter area.
pub const DEAD_RELEASED: u64 = 1;
/// Its lease deadline passed.
pub const DEAD_DEADLINE: u64 = 2;
/// Its holder died.
pub const DEAD_HOLDER_DIED: u64 = 3;
/// Buried by its holder.
pub const DEAD_BURIED: u64 = 4;

/// Name of a dead-letter reason, as the Perl API spells it.
pub fn reason_name(r: u64) -> &'static str {
    match r {
        DEAD_RELEASED => "released",
        DEAD_DEADLINE => "deadline",
        DEAD_HOLDER_DIED => "holder died",
        DEAD_BURIED => "buried",
        _ => "unknown",
    }
}

/// What [`Table::work_end`] does with a held lease.
pub(crate) enum WorkEnd {
    /// `touch`: a new length in seconds, or the lease's own.
    Touch(Option<f64>),
    /// `release_after`: back after this many ns.
    Delay(u64),
    /// `bury`.
    Bury,
}

/// One item of the dead-letter area.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeadItem {
    /// Pop order of the item (as a lease's `seq`).
    pub seq: u64,
    /// Leased hand-outs it had.
    pub deliveries: u64,
    /// [`DEAD_RELEASED`], [`DEAD_DEADLINE`], [`DEAD_HOLDER_DIED`] or
    /// [`DEAD_BURIED`].
    pub reason: u64,
    /// CLOCK_REALTIME ns of the move.
    pub when_ns: u64,
    /// Int: the value. Str: the item's length (decoded).
    pub value: i64,
    /// Str: the bytes it takes in the lease data area. Int: 0.
    pub stored: u64,
}

/// Name of a state, for listings.
pub fn state_name(s: u64) -> &'static str {
    match s {
        FREE => "free",
        TAKING => "taking",
        HELD => "held",
        RETURNED => "returned",
        RETURNING => "returning",
        DELAYED => "delayed",
        BACK => "back",
        _ => "corrupt",
    }
}

pub(crate) use crate::create_opts::set_create_options;
pub use crate::create_opts::{with_create_options, with_work_options};

pub(crate) use crate::clock::now_ns;

/// What one slice of a `pop_lease_wait` came to, from its `block_on`
/// result `w` (an attempt gives its item, a lease error `Err(Ok(_))`, or
/// a failed lock wait `Err(Err(_))`): `None` when the slice ended and the
/// wait goes on. A lock wait ends at a signal (`Interrupted`), at the
/// slice's end (then as a timeout of the wait), or at the call's lock
/// bound first (then [`LeaseError::LockTimeout`], as for the other lease
/// calls). `Some(Ok(Waited::TimedOut))`: the caller counts the miss.
pub(crate) fn slice_outcome<X>(
    w: crate::wait::Waited<std::result::Result<X, std::result::Result<LeaseError, LockFail>>>,
    slice: &Deadline,
    deadline: &Deadline,
) -> Option<std::result::Result<crate::wait::Waited<X>, LeaseError>> {
    use crate::wait::Waited;
    match w {
        Waited::Done(Ok(x)) => Some(Ok(Waited::Done(x))),
        Waited::Done(Err(Ok(e))) => Some(Err(e)),
        Waited::Done(Err(Err(LockFail::TimedOut))) if !slice.expired() => {
            Some(Err(LeaseError::LockTimeout))
        }
        Waited::Interrupted | Waited::Done(Err(Err(LockFail::Interrupted))) => {
            Some(Ok(Waited::Interrupted))
        }
        Waited::TimedOut | Waited::Done(Err(Err(LockFail::TimedOut))) if deadline.expired() => {
            Some(Ok(Waited::TimedOut))
        }
        Waited::TimedOut | Waited::Done(Err(Err(LockFail::TimedOut))) => None,
    }
}

/// The deadline word for a lease of `timeout` seconds (None, negative or
/// not a number: no deadline).
pub(crate) fn deadline_of(now: u64, timeout: Option<f64>) -> u64 {
    match timeout {
        Some(t) if t >= 0.0 && t.is_finite() => {
            let ns = (t.min(1.0e9) * 1e9) as u64;
            now.saturating_add(ns).max(1)
        }
        _ => 0,
    }
}

/// Nanoseconds of a delay of `secs` (checked by the caller: finite, not
/// negative), at most 10^9 seconds.
pub(crate) fn delay_ns(secs: f64) -> u64 {
    (secs.clamp(0.0, 1.0e9) * 1e9) as u64
}

/// A delay argument the Rust API refuses: negative, NaN or infinite.
pub(crate) fn check_delay(secs: f64) -> std::result::Result<(), LeaseError> {
    if secs.is_finite() && secs >= 0.0 {
        Ok(())
    } else {
        Err(LeaseError::BadArg(format!(
            "delay '{secs}' is not a number of seconds >= 0"
        )))
    }
}

/// The `length` word for a lease of `timeout` seconds (0: none).
pub(crate) fn length_of(timeout: Option<f64>) -> u64 {
    deadline_of(0, timeout)
}

/// `generation << 8 | state`.
#[inline]
pub(crate) fn word(gen: u64, state: u64) -> u64 {
    gen << 8 | state
}

/// The lease id of record `idx` at generation `gen`.
#[inline]
pub(crate) fn lease_id(gen: u64, idx: usize) -> u64 {
    (gen & 0xFFFF_FFFF_FFFF) << 16 | idx as u64
}

/// The generation after `gen` (48 bits, never 0).
#[inline]
pub(crate) fn next_gen(gen: u64) -> u64 {
    let g = gen.wrapping_add(1) & 0xFFFF_FFFF_FFFF;
    g.max(1)
}

/// A test hook: `DQS_TEST_KILL_POINT` names a point inside a lease
/// operation where the process sends itself SIGKILL (tests only; see
/// [`crate::testpoint`]).
#[inline]
pub(crate) fn kill_point(p: Point) {
    #[cfg(not(loom))]
    crate::testpoint::lease_at(p, crate::lock::current_pid());
    #[cfg(loom)]
    if DIE_AT.with(|d| d.get()) == Some(p) {
        std::panic::panic_any(Died);
    }
}

// Loom: the point where the current model thread "dies" (it unwinds
// with `Died`, which the model catches; what it stored stays).
#[cfg(loom)]
loom::thread_local! {
    pub(crate) static DIE_AT: std::cell::Cell<Option<Point>> = std::cell::Cell::new(None);
}

/// Loom: the unwind of a model thread that died at its point.
#[cfg(loom)]
pub(crate) struct Died;

/// The due hint of `region`'s lease table (0: none, or no table): a
/// blocked pop notes it when it computes its sleep slice, and ends the
/// slice early when it has changed (a `release_after` or `push_delayed`
/// made an earlier due time; they wake the sleepers).
#[cold]
pub(crate) fn due_hint(region: &Region) -> u64 {
    Table::of(region).map_or(0, |t| t.head.next_due.load(Ordering::Relaxed))
}

/// A queue's lease table, bounds from the private geometry.
pub(crate) struct Table<'a> {
    pub head: &'a LeaseHead,
    pub recs: &'a [LeaseRec],
    pub dead: &'a [DeadRec],
    /// The header's [`Header::lease_busy`](crate::layout::Header::lease_busy).
    pub busy: &'a AtomicU64,
    /// The header's [`Header::lease_returned`](crate::layout::Header::lease_returned).
    pub returned: &'a AtomicU64,
    data: *mut u8,
    pub data_len: u64,
}

impl<'a> Table<'a> {
    /// The table of `region`; `None` when it has none.
    pub(crate) fn of(region: &'a Region) -> Option<Table<'a>> {
        let g = region.geometry();
        if g.max_leases == 0 {
            return None;
        }
        let n = g.max_leases as usize;
        let nd = g.max_dead as usize;
        let (hs, rs, ds) = (
            LEASE_HEAD_SIZE as usize,
            LEASE_REC_SIZE as usize,
            DEAD_REC_SIZE as usize,
        );
        // SAFETY: the geometry (validated at attach, or made at create)
        // puts the head, `n` lease records and `nd` dead-letter records
        // at `lease_off`, 64-byte aligned, inside the mapping, and the
        // data area after them; the types are repr(C) atomics, which may
        // alias shared memory.
        unsafe {
            let base = region.at(g.lease_off);
            let dead = base.add(hs + rs * n);
            Some(Table {
                head: &*(base as *const LeaseHead),
                recs: std::slice::from_raw_parts(base.add(hs) as *const LeaseRec, n),
                dead: std::slice::from_raw_parts(dead as *const DeadRec, nd),
                busy: &region.header().lease_busy,
                returned: &region.header().lease_returned,
                data: dead.add(ds * nd),
                data_len: g.lease_bytes,
            })
        }
    }

    /// A table over parts the loom models own (no data area).
    #[cfg(loom)]
    pub(crate) fn from_parts(
        head: &'a LeaseHead,
        recs: &'a [LeaseRec],
        dead: &'a [DeadRec],
        busy: &'a AtomicU64,
        returned: &'a AtomicU64,
    ) -> Table<'a> {
        Table {
            head,
            recs,
            dead,
            busy,
            returned,
            data: std::ptr::null_mut(),
            data_len: 0,
        }
    }

    /// Record `idx`'s (generation, state).
    #[inline]
    pub(crate) fn state(&self, idx: usize) -> (u64, u64) {
        let w = self.recs[idx].state.load(Ordering::Acquire);
        (w >> 8, w & 0xFF)
    }

    /// Set record `idx`'s state word.
    #[inline]
    pub(crate) fn set(&self, idx: usize, gen: u64, state: u64) {
        // SYNC POINT: Release after the record's other fields; the next
        // holder of the table lock acquires it (and a taker-over reads a
        // dead holder's stores, which the kernel keeps in order for it).
        self.recs[idx]
            .state
            .store(word(gen, state), Ordering::SeqCst);
    }

    /// A free record's index, or `None`.
    pub(crate) fn free_record(&self) -> Option<usize> {
        (0..self.recs.len()).find(|&i| self.state(i).1 == FREE)
    }

    /// The record index of `id`, checked against the table size.
    pub(crate) fn index_of(&self, id: u64) -> std::result::Result<(usize, u64), LeaseError> {
        let idx = (id & 0xFFFF) as usize;
        let gen = id >> 16;
        if idx >= self.recs.len() || gen == 0 {
            return Err(LeaseError::BadLease(id));
        }
        Ok((idx, gen))
    }

    /// Bump an (exact, lock-protected) counter.
    pub(crate) fn count(c: &AtomicU64, n: u64) {
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    /// Start a new lease in record `idx` for this process: owner, times
    /// and pop order; returns the new generation (state not yet written).
    pub(crate) fn begin(&self, idx: usize, now: u64, timeout: Option<f64>, fresh: bool) -> u64 {
        let r = &self.recs[idx];
        r.owner.store(current_tag(), Ordering::Relaxed);
        r.deadline
            .store(deadline_of(now, timeout), Ordering::Relaxed);
        r.since.store(now, Ordering::Relaxed);
        r.length.store(length_of(timeout), Ordering::Relaxed);
        if fresh {
            let s = self.head.next_seq.load(Ordering::Relaxed);
            self.head
                .next_seq
                .store(s.wrapping_add(1), Ordering::Relaxed);
            r.seq.store(s, Ordering::Relaxed);
            r.deliveries.store(0, Ordering::Relaxed);
        }
        next_gen(self.state(idx).0)
    }

    /// Count one delivery of record `idx` (being leased now): its new
    /// count. Written before the record becomes [`HELD`].
    pub(crate) fn deliver(&self, idx: usize) -> u64 {
        let r = &self.recs[idx];
        let n = r.deliveries.load(Ordering::Relaxed).saturating_add(1);
        r.deliveries.store(n, Ordering::Relaxed);
        kill_point(Point::WorkCounted);
        Self::count(&self.head.delivered, 1);
        n
    }

    /// Whether it is time to look for dead holders, `gap` ns after the
    /// last look (and note the look).
    pub(crate) fn due(&self, now: u64, gap: u64) -> bool {
        let last = self.head.last_scan.load(Ordering::Relaxed);
        if gap == 0 || now.wrapping_sub(last) >= gap || last > now {
            self.head.last_scan.store(now, Ordering::Relaxed);
            true
        } else {
            false
        }
    }

    /// Whether a look is due `gap` ns after the last one, read without
    /// the lock: a plain pop's test before it takes the lock (`due`
    /// decides again under it).
    pub(crate) fn look_due(&self, now: u64, gap: u64) -> bool {
        let last = self.head.last_scan.load(Ordering::Relaxed);
        now.wrapping_sub(last) >= gap || last > now
    }

    /// Store the number of records not free in the header's
    /// [`Header::lease_busy`](crate::layout::Header::lease_busy) word. Caller holds the table lock.
    pub(crate) fn recount_busy(&self) {
        let n = (0..self.recs.len())
            .filter(|&i| self.state(i).1 != FREE)
            .count() as u64;
        if self.busy.load(Ordering::Relaxed) != n {
            self.busy.store(n, Ordering::SeqCst);
        }
    }

    /// Before a record leaves the free state: count it in
    /// [`Header::lease_busy`](crate::layout::Header::lease_busy) first, so that a holder killed before its
    /// `recount_busy` leaves the word too high (plain pops look, and the
    /// takeover recounts), never too low. Caller holds the table lock.
    pub(crate) fn busy_ahead(&self) {
        let b = self.busy;
        b.store(b.load(Ordering::Relaxed).wrapping_add(1), Ordering::SeqCst);
    }

    /// The held leases that must come back now: (index, holder died),
    /// for a holder found dead or a deadline passed. Scribbled states are
    /// repaired to free. Caller holds the table lock.
    pub(crate) fn to_return(&self, now: u64) -> Vec<(usize, bool)> {
        let me = current_tag();
        let mut seen: Vec<(u64, bool)> = Vec::new();
        let mut out = Vec::new();
        for i in 0..self.recs.len() {
            let (gen, st) = self.state(i);
            match st {
                HELD => {}
                FREE | RETURNED | DELAYED | BACK => continue,
                _ => {
                    // Hostile memory: not a state we write, or a `TAKING`
                    // or `RETURNING` record, which live only inside an
                    // operation under the lock we hold (a dead holder's
                    // were settled by the takeover). Forget it.
                    self.set(i, gen, FREE);
                    continue;
                }
            }
            let r = &self.recs[i];
            let owner = r.owner.load(Ordering::Relaxed);
            let dead = owner != me && {
                match seen.iter().find(|s| s.0 == owner) {
                    Some(s) => s.1,
                    None => {
                        let d = owner_is_dead((owner >> 32) as u32, owner, 0) || owner >> 32 == 0;
                        seen.push((owner, d));
                        d
                    }
                }
            };
            let dl = r.deadline.load(Ordering::Relaxed);
            if dead || (dl != 0 && now >= dl) {
                out.push((i, dead));
            }
        }
        out
    }

    /// A lease that comes back (released, deadline passed, holder died:
    /// `reason`): to the dead-letter area if it has had its last allowed
    /// delivery and the area has room, else [`RETURNED`] (Int: counted in
    /// [`Header::lease_returned`](crate::layout::Header::lease_returned)). Whether it went back to the queue.
    /// Caller holds the table lock.
    pub(crate) fn give_back(&self, idx: usize, gen: u64, reason: u64, int: bool) -> bool {
        if self.spent(idx) && self.move_dead(idx, gen, reason) {
            return false;
        }
        self.set(idx, gen, RETURNED);
        if int {
            kill_point(Point::LeaseIntReturned);
            self.returned.fetch_add(1, Ordering::SeqCst);
        }
        true
    }

    /// The common part of `touch`, `release_after` and `bury` on lease
    /// `id`: whether the lease was held (`Ok(false)`: it had ended; a
    /// lease whose deadline has passed is returned as a late ack returns
    /// it), and how many items came back to the queue. Caller holds the
    /// table lock (`int`: the integer queues' returned items).
    pub(crate) fn work_end(
        &self,
        id: u64,
        now: u64,
        what: WorkEnd,
        int: bool,
    ) -> std::result::Result<(bool, u64), LeaseError> {
        let Some((i, gen)) = self.held_by_me(id)? else {
            return Ok((false, 0));
        };
        if self.expired(i, now) && !matches!(what, WorkEnd::Bury) {
            self.count_return(false);
            return Ok((false, u64::from(self.give_back(i, gen, DEAD_DEADLINE, int))));
        }
        match what {
            WorkEnd::Touch(timeout) => {
                let r = &self.recs[i];
                if let Some(s) = timeout {
                    r.length.store(length_of(Some(s)), Ordering::Relaxed);
                }
                let len = r.length.load(Ordering::Relaxed);
                if len != 0 {
                    r.deadline
                        .store(now.saturating_add(len).max(1), Ordering::Relaxed);
                    Self::count(&self.head.touched, 1);
                }
            }
            WorkEnd::Delay(ns) => {
                Self::count(&self.head.released, 1);
                if !(self.spent(i) && self.move_dead(i, gen, DEAD_RELEASED)) {
                    self.delay(i, gen, now.saturating_add(ns));
                }
            }
            WorkEnd::Bury => {
                if !self.move_dead(i, gen, DEAD_BURIED) {
                    return Err(LeaseError::DeadFull(self.dead.len() as u64));
                }
            }
        }
        Ok((true, 0))
    }

    /// The slice a blocked pop sleeps while lease records are in use:
    /// until `deadline`, at most [`LOOK_EVERY_SECS`], and at most until
    /// the earliest delayed item falls due (+ 1 ms).
    pub(crate) fn wait_slice(&self, deadline: &Deadline) -> Deadline {
        let mut secs = LOOK_EVERY_SECS;
        let nd = self.head.next_due.load(Ordering::Relaxed);
        if nd != 0 {
            let left = nd.saturating_sub(now_ns()) as f64 / 1e9 + 0.001;
            secs = secs.min(left);
        }
        Deadline::after_secs(secs).earliest(*deadline)
    }

    /// Count a return.
    pub(crate) fn count_return(&self, dead: bool) {
        if dead {
            Self::count(&self.head.returned_dead, 1);
        } else {
            Self::count(&self.head.returned_timeout, 1);
        }
    }

    /// The records in `state`, oldest pop first.
    pub(crate) fn in_state_by_seq(&self, state: u64) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.recs.len())
            .filter(|&i| self.state(i).1 == state)
            .collect();
        v.sort_by_key(|&i| self.recs[i].seq.load(Ordering::Relaxed));
        v
    }

    /// Check that `id` names a lease held by this process now: its index
    /// and generation; `Ok(None)` when the lease has ended (acked,
    /// released, returned).
    pub(crate) fn held_by_me(
        &self,
        id: u64,
    ) -> std::result::Result<Option<(usize, u64)>, LeaseError> {
        let (idx, gen) = self.index_of(id)?;
        let (g, st) = self.state(idx);
        if g & 0xFFFF_FFFF_FFFF != gen || st != HELD {
            return Ok(None);
        }
        let owner = self.recs[idx].owner.load(Ordering::Relaxed);
        if owner != current_tag() {
            return Err(LeaseError::NotHolder(id, (owner >> 32) as u32));
        }
        Ok(Some((idx, g)))
    }

    /// Whether lease `idx`'s deadline has passed.
    pub(crate) fn expired(&self, idx: usize, now: u64) -> bool {
        let dl = self.recs[idx].deadline.load(Ordering::Relaxed);
        dl != 0 && now >= dl
    }

    /// Counters and gauges.
    pub(crate) fn stats(&self) -> LeaseStats {
        let mut s = LeaseStats {
            max_leases: self.recs.len() as u64,
            acked: self.head.acked.load(Ordering::Relaxed),
            released: self.head.released.load(Ordering::Relaxed),
            returned_dead: self.head.returned_dead.load(Ordering::Relaxed),
            returned_timeout: self.head.returned_timeout.load(Ordering::Relaxed),
            lease_bytes: self.data_len,
            max_deliveries: self.head.max_deliveries.load(Ordering::Relaxed),
            max_dead: self.dead.len() as u64,
            delivered: self.head.delivered.load(Ordering::Relaxed),
            dead: self.head.dead.load(Ordering::Relaxed),
            buried: self.head.buried.load(Ordering::Relaxed),
            kicked: self.head.kicked.load(Ordering::Relaxed),
            drained: self.head.drained.load(Ordering::Relaxed),
            touched: self.head.touched.load(Ordering::Relaxed),
            dead_full: self.head.dead_full.load(Ordering::Relaxed),
            dead_items: self.dead_count(),
            ..LeaseStats::default()
        };
        for i in 0..self.recs.len() {
            match self.state(i).1 {
                TAKING | HELD => s.open += 1,
                RETURNED | RETURNING => s.waiting += 1,
                DELAYED => s.delayed += 1,
                _ => {}
            }
        }
        s
    }

    /// Every record not free, oldest pop first.
    pub(crate) fn list(&self, str_q: bool) -> Vec<LeaseInfo> {
        let now = now_ns();
        let mut v: Vec<LeaseInfo> = (0..self.recs.len())
            .filter_map(|i| {
                let (gen, st) = self.state(i);
                if st == FREE || st == BACK {
                    return None;
                }
                let r = &self.recs[i];
                let dl = if st == DELAYED {
                    r.due.load(Ordering::Relaxed)
                } else {
                    r.deadline.load(Ordering::Relaxed)
                };
                let val = r.value.load(Ordering::Relaxed);
                Some(LeaseInfo {
                    id: lease_id(gen, i),
                    state: st,
                    pid: r.owner.load(Ordering::Relaxed) >> 32,
                    seq: r.seq.load(Ordering::Relaxed),
                    age_ns: now.saturating_sub(r.since.load(Ordering::Relaxed)),
                    left_ns: if dl == 0 { 0 } else { dl.saturating_sub(now) },
                    value: if str_q {
                        i64::from(val as u32 & 0x7FFF_FFFF)
                    } else {
                        val as i64
                    },
                    stored: if str_q {
                        u64::from(val as u32 & 0x7FFF_FFFF)
                    } else {
                        0
                    },
                    deliveries: r.deliveries.load(Ordering::Relaxed),
                })
            })
            .collect();
        v.sort_by_key(|i| i.seq);
        v
    }

    // ---- Work queue (format 8) ----

    /// Dead-letter record `k`'s (order, state).
    #[inline]
    pub(crate) fn dead_state(&self, k: usize) -> (u64, u64) {
        let w = self.dead[k].state.load(Ordering::Acquire);
        (w >> 8, w & 0xFF)
    }

    /// Items in the dead-letter area (a snapshot).
    pub(crate) fn dead_count(&self) -> u64 {
        (0..self.dead.len())
            .filter(|&k| self.dead_state(k).1 == DEAD_HELD)
            .count() as u64
    }

    /// The dead-letter records that hold an item, oldest first.
    pub(crate) fn dead_by_age(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.dead.len())
            .filter(|&k| self.dead_state(k).1 == DEAD_HELD)
            .collect();
        v.sort_by_key(|&k| self.dead_state(k).0);
        v
    }

    /// Dead-letter record `k` as the API gives it (`value` as stored:
    /// Int the value, Str the stored length; the Str caller decodes).
    pub(crate) fn dead_item(&self, k: usize, str_q: bool) -> DeadItem {
        let r = &self.dead[k];
        let v = r.value.load(Ordering::Relaxed);
        let lw = u64::from(v as u32 & 0x7FFF_FFFF);
        DeadItem {
            seq: r.seq.load(Ordering::Relaxed),
            deliveries: r.deliveries.load(Ordering::Relaxed),
            reason: r.reason.load(Ordering::Relaxed),
            when_ns: r.when_ns.load(Ordering::Relaxed),
            value: if str_q { lw as i64 } else { v as i64 },
            stored: if str_q { lw } else { 0 },
        }
    }

    /// Free dead-letter record `k`. Caller holds the table lock.
    pub(crate) fn dead_free(&self, k: usize) {
        let (order, _) = self.dead_state(k);
        self.dead[k]
            .state
            .store(order << 8 | DEAD_FREE, Ordering::SeqCst);
    }

    /// Whether record `idx`'s item has had its last allowed delivery.
    pub(crate) fn spent(&self, idx: usize) -> bool {
        let max = self.head.max_deliveries.load(Ordering::Relaxed);
        max != 0 && self.recs[idx].deliveries.load(Ordering::Relaxed) >= max
    }

    /// Move the item of record `idx` (generation `gen`) to the dead-letter
    /// area with `reason`: the dead record is written whole, then made
    /// held, then the lease record freed (a holder killed in between
    /// leaves both; the takeover frees the lease record, see
    /// [`Table::settle_dead_moves`]). `false` when the area is absent or
    /// full (then counted in `dead_full` unless buried; the caller
    /// returns the item as usual). Caller holds the table lock.
    pub(crate) fn move_dead(&self, idx: usize, gen: u64, reason: u64) -> bool {
        let Some(k) = (0..self.dead.len()).find(|&k| self.dead_state(k).1 == DEAD_FREE) else {
            if reason != DEAD_BURIED {
                Self::count(&self.head.dead_full, 1);
            }
            return false;
        };
        let r = &self.recs[idx];
        let d = &self.dead[k];
        d.seq
            .store(r.seq.load(Ordering::Relaxed), Ordering::Relaxed);
        d.deliveries
            .store(r.deliveries.load(Ordering::Relaxed), Ordering::Relaxed);
        d.reason.store(reason, Ordering::Relaxed);
        d.when_ns
            .store(crate::clock::realtime_ns(), Ordering::Relaxed);
        d.value
            .store(r.value.load(Ordering::Relaxed), Ordering::Relaxed);
        d.meta
            .store(r.meta.load(Ordering::Relaxed), Ordering::Relaxed);
        d.src.store(lease_id(gen, idx), Ordering::Relaxed);
        let order = self.head.dead_next.load(Ordering::Relaxed);
        self.head
            .dead_next
            .store(order.wrapping_add(1), Ordering::Relaxed);
        d.state
            .store((order & (u64::MAX >> 8)) << 8 | DEAD_HELD, Ordering::SeqCst);
        kill_point(Point::WorkDeadMoved);
        self.set(idx, gen, FREE);
        if reason == DEAD_BURIED {
            Self::count(&self.head.buried, 1);
        } else {
            Self::count(&self.head.dead, 1);
        }
        true
    }

    /// After a takeover: free the lease records whose item a dead-letter
    /// record holds already (a holder killed inside
    /// [`Table::move_dead`]), so that the item is not also returned.
    pub(crate) fn settle_dead_moves(&self) {
        for k in 0..self.dead.len() {
            if self.dead_state(k).1 != DEAD_HELD {
                continue;
            }
            let src = self.dead[k].src.load(Ordering::Relaxed);
            let (idx, gen) = ((src & 0xFFFF) as usize, src >> 16);
            if idx < self.recs.len() && gen != 0 {
                let (g, st) = self.state(idx);
                if g & 0xFFFF_FFFF_FFFF == gen && st != FREE {
                    self.set(idx, g, FREE);
                }
            }
        }
    }

    /// Make record `idx` (generation `gen`, its item filled in) a delayed
    /// item due at `due`. Caller holds the table lock.
    pub(crate) fn delay(&self, idx: usize, gen: u64, due: u64) {
        self.recs[idx].due.store(due.max(1), Ordering::Relaxed);
        self.set(idx, gen, DELAYED);
        kill_point(Point::WorkDelayed);
        let nd = self.head.next_due.load(Ordering::Relaxed);
        if nd == 0 || due < nd {
            self.head.next_due.store(due.max(1), Ordering::SeqCst);
        }
    }

    /// Whether a delayed item may be due at `now` (the hint word).
    #[inline]
    pub(crate) fn due_now(&self, now: u64) -> bool {
        let nd = self.head.next_due.load(Ordering::Relaxed);
        nd != 0 && now >= nd
    }

    /// The delayed items due at `now`, made [`RETURNED`] (oldest pop
    /// first once served); recomputes the `next_due` hint. Caller holds
    /// the table lock; the Int caller counts them in `lease_returned`.
    pub(crate) fn make_due(&self, now: u64) -> Vec<usize> {
        let mut out = Vec::new();
        let mut next = 0u64;
        for i in 0..self.recs.len() {
            let (gen, st) = self.state(i);
            if st != DELAYED {
                continue;
            }
            let due = self.recs[i].due.load(Ordering::Relaxed);
            if now >= due {
                self.set(i, gen, RETURNED);
                kill_point(Point::WorkMadeDue);
                out.push(i);
            } else if next == 0 || due < next {
                next = due;
            }
        }
        if self.head.next_due.load(Ordering::Relaxed) != next {
            self.head.next_due.store(next, Ordering::SeqCst);
        }
        out
    }

    // ---- Str lease data area ----

    /// Str: record `idx`'s bytes in the data area as (offset, stored
    /// length word, utf8), if they lie inside it.
    pub(crate) fn data_of(&self, idx: usize) -> Option<(u64, u32, bool)> {
        let r = &self.recs[idx];
        self.range_of(
            r.value.load(Ordering::Relaxed),
            r.meta.load(Ordering::Relaxed),
        )
    }

    /// Str: dead-letter record `k`'s bytes, as [`Table::data_of`].
    pub(crate) fn dead_data_of(&self, k: usize) -> Option<(u64, u32, bool)> {
        let r = &self.dead[k];
        self.range_of(
            r.value.load(Ordering::Relaxed),
            r.meta.load(Ordering::Relaxed),
        )
    }

    fn range_of(&self, v: u64, meta: u64) -> Option<(u64, u32, bool)> {
        let off = v >> 32;
        let lw = v as u32;
        let len = u64::from(lw & 0x7FFF_FFFF);
        if off.checked_add(len)? > self.data_len {
            return None;
        }
        Some((off, lw, meta & 1 != 0))
    }

    /// Str: the bytes at `off` (checked by `data_of` or `place`).
    ///
    /// # Safety
    /// `off + len <= data_len`, and the caller holds the queue lock.
    pub(crate) unsafe fn bytes(&self, off: u64, len: u64) -> &[u8] {
        // SAFETY: inside the data area (the caller's promise), which the
        // lock holder alone writes.
        unsafe { std::slice::from_raw_parts(self.data.add(off as usize), len as usize) }
    }

    /// Str: copy `src` into the data area at `off`.
    ///
    /// # Safety
    /// `off + src.len() <= data_len`, the range belongs to no live record,
    /// `src` does not overlap it, and the caller holds the queue lock.
    pub(crate) unsafe fn write(&self, off: u64, src: *const u8, len: usize) {
        // SAFETY: the caller's promise.
        unsafe { std::ptr::copy_nonoverlapping(src, self.data.add(off as usize), len) };
    }

    /// Str: first fit for `len` bytes (8-aligned) among the ranges of the
    /// records that keep bytes (every state but free).
    pub(crate) fn place(&self, len: u64) -> std::result::Result<u64, LeaseError> {
        let need = (len + 7) & !7;
        if need > self.data_len {
            return Err(LeaseError::TooBig {
                need: len,
                area: self.data_len,
            });
        }
        let mut used: Vec<(u64, u64)> = (0..self.recs.len())
            .filter(|&i| !matches!(self.state(i).1, FREE | BACK))
            .filter_map(|i| self.data_of(i))
            .chain(
                (0..self.dead.len())
                    .filter(|&k| self.dead_state(k).1 == DEAD_HELD)
                    .filter_map(|k| self.dead_data_of(k)),
            )
            .map(|(o, lw, _)| (o, (u64::from(lw & 0x7FFF_FFFF) + 7) & !7))
            .collect();
        used.sort_unstable();
        let mut at = 0u64;
        for (o, l) in used {
            if o >= at && o - at >= need {
                return Ok(at);
            }
            at = at.max(o.saturating_add(l));
        }
        if self.data_len.saturating_sub(at) >= need {
            return Ok(at);
        }
        Err(LeaseError::AreaFull {
            need: len,
            area: self.data_len,
        })
    }
}
