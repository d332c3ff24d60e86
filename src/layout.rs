//! The on-disk (and in-memory) format: a fixed 320-byte header, then the
//! slot array, then (Str only) the byte arena or (Int only, format 7) the
//! ring's intent records, then the lease table.
//!
//! Everything here is `#[repr(C)]`, holds offsets rather than pointers and
//! uses fixed-width integers, so any language that can map a file can attach.
//! Sizes come from `const fn`s and are checked by compile-time asserts.
//!
//! ```text
//! offset  line  contents
//!      0     0  geometry, written once at create, read-only afterwards
//!     64     1  consumer side: head, pop_empty; Str: the front side
//!    128     2  producer side: tail, push_full; Str: the back side
//!    192     3  rarely written: waiter counts, futex words, counters
//!    256     4  Str compression counters, lease geometry, Str back lock count
//!    320        slots: capacity x slot_size bytes
//!      …        Str: arena_cap bytes of string storage (8-byte aligned)
//! ```
//!
//! The head and tail lines are apart so that a producer and a consumer on
//! different cores do not bounce one cache line between them; the waiter
//! counts live on a line of their own because every push and pop reads them
//! while they change only when somebody blocks.

use crate::sync::{AtomicU32, AtomicU64};

/// "DQSHARE1" read as a little-endian u64: the first eight bytes of a file.
pub const MAGIC: u64 = u64::from_le_bytes(*b"DQSHARE1");
/// Bumped whenever the layout below changes incompatibly.
pub const FORMAT_VERSION: u32 = 8;
/// Size of the header; slots start here.
pub const HEADER_SIZE: usize = 320;
/// Smallest capacity; requests below are raised to it.
pub const MIN_CAPACITY: u64 = 2;
/// Largest capacity. 2^30 keeps 32-bit sequence numbers unambiguous (they
/// must tell "this lap" from "last lap" across a 2 x capacity window) and the
/// Int64 slot array at 16 GiB.
pub const MAX_CAPACITY: u64 = 1 << 30;
/// Smallest Str arena; requests below are raised to it.
pub const MIN_ARENA: u64 = 4096;
/// Largest Str arena (4 GiB).
pub const MAX_ARENA: u64 = 1 << 32;
/// Largest single Str item (just under 2 GiB).
pub const MAX_ITEM: u64 = (1 << 31) - 1;
/// Default arena bytes per slot when none is given.
pub const DEFAULT_ARENA_PER_SLOT: u64 = 256;
/// Consecutive wake calls on one side that found nobody asleep (while the
/// count said somebody waits) before the count is reset; the Str lock's
/// sleeper count uses the same bound.
pub const RESET_AFTER: u32 = 64;

/// Which queue a file holds. Stored in the header; a handle of one variant
/// refuses a file of another.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// 64-bit integers, 16-byte slots.
    Int64 = 1,
    /// 32-bit integers, 8-byte slots.
    Int32 = 2,
    /// 16-bit integers, 8-byte slots.
    Int16 = 3,
    /// Byte strings in an arena, 16-byte slots.
    Str = 4,
}

impl Variant {
    /// The variant stored as `v`, if it is one.
    pub fn from_u32(v: u32) -> Option<Self> {
        match v {
            1 => Some(Variant::Int64),
            2 => Some(Variant::Int32),
            3 => Some(Variant::Int16),
            4 => Some(Variant::Str),
            _ => None,
        }
    }

    /// Bytes per slot for this variant.
    pub const fn slot_size(self) -> u64 {
        match self {
            Variant::Int64 | Variant::Str => 16,
            Variant::Int32 | Variant::Int16 => 8,
        }
    }

    /// Human name, as the Perl classes spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Int64 => "Int",
            Variant::Int32 => "Int32",
            Variant::Int16 => "Int16",
            Variant::Str => "Str",
        }
    }
}

/// A Str lock as it lies in shared memory (at offset 8 of each
/// [`StrSide`]): the lock word and the sleeper count (the protocol is in [`lock`](crate::lock)).
#[repr(C)]
pub struct Lock {
    /// 0 when free, else the holder's pid: the futex word sleepers wait on.
    pub word: AtomicU32,
    /// Epoch, fruitless-wake tally and count of the lockers that will
    /// sleep or sleep on `word`.
    pub sleepers: AtomicU32,
}

impl Lock {
    /// A free lock nobody waits for.
    pub fn new() -> Lock {
        Lock {
            word: AtomicU32::new(0),
            sleepers: AtomicU32::new(0),
        }
    }
}

impl Default for Lock {
    fn default() -> Lock {
        Lock::new()
    }
}

/// The 320-byte header at offset 0 of every queue.
#[repr(C, align(64))]
pub struct Header {
    // ---- line 0: geometry (immutable after create) ----
    /// [`MAGIC`]; written last at create, so a zero here means "not ready".
    pub magic: AtomicU64,
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// [`Variant`] as u32.
    pub variant: u32,
    /// Slot count, a power of two in `MIN_CAPACITY..=MAX_CAPACITY`.
    pub capacity: u64,
    /// Bytes per slot (16 or 8).
    pub slot_size: u32,
    /// [`HEADER_SIZE`].
    pub header_size: u32,
    /// Byte offset of slot 0 (== `header_size`).
    pub slots_off: u64,
    /// Byte offset of the arena (Str), else 0.
    pub arena_off: u64,
    /// Arena bytes (Str), else 0.
    pub arena_cap: u64,
    /// Total mapped bytes: header + slots + arena.
    pub total_size: u64,

    // ---- line 1: consumer side ----
    /// Int: positions claimed by consumers, an exact counter moved by CAS
    /// (see the `ring` module). Str: the front side's `word`
    /// (see [`StrSide`]).
    pub head: AtomicU64,
    /// Int: pops (and waits) that found the queue empty. Str: part of the
    /// front side (its lock).
    pub pop_empty: AtomicU64,
    /// Str: part of the front side. Int: positions given up by slot repair
    /// ([`Header::int_skipped`]).
    pub c0_count: AtomicU64,
    /// Str: part of the front side. Int: unused (0; format 6 timed stuck
    /// positions here).
    pub c0_rd: AtomicU64,
    /// Str: part of the front side. Int: unused (0).
    pub c0_wr: AtomicU64,
    /// Str: part of the front side.
    pub c0_used: AtomicU64,
    /// Str: part of the front side.
    pub c0_push_ok: AtomicU64,
    /// Str: part of the front side.
    pub c0_pop_ok: AtomicU64,

    // ---- line 2: producer side ----
    /// Int: positions reserved by producers, an exact counter moved by CAS
    /// (see the `ring` module). Str: the back side's `word` (see
    /// [`StrSide`]).
    pub tail: AtomicU64,
    /// Int: pushes (and waits) that found the queue full. Str: part of the
    /// back side (its lock).
    pub push_full: AtomicU64,
    /// Str: part of the back side.
    pub c1_count: AtomicU64,
    /// Str: part of the back side.
    pub c1_rd: AtomicU64,
    /// Str: part of the back side.
    pub c1_wr: AtomicU64,
    /// Str: part of the back side.
    pub c1_used: AtomicU64,
    /// Str: part of the back side.
    pub c1_push_ok: AtomicU64,
    /// Str: part of the back side.
    pub c1_pop_ok: AtomicU64,

    // ---- line 3: rarely written ----
    /// Consumers blocked in a wait (announced before they sample the queue).
    pub pop_waiters: AtomicU32,
    /// Futex word consumers sleep on; bumped by producers that wake them.
    pub pop_futex: AtomicU32,
    /// Producers blocked in a wait.
    pub push_waiters: AtomicU32,
    /// Futex word producers sleep on; bumped by consumers that wake them.
    pub push_futex: AtomicU32,
    /// Str: items removed by `clear` (format 7; written only by `clear`,
    /// under both locks). Int: unused (zero).
    pub str_cleared: AtomicU64,
    /// Int: crash recoveries performed (slot repairs). Str: `push_full`
    /// (see [`Header::str_push_full`]).
    pub recoveries: AtomicU64,
    /// Int: items removed by `clear` (subtracted from pop_ok). Str:
    /// `pop_empty` (see [`Header::str_pop_empty`]).
    pub cleared: AtomicU64,
    /// Str: lock takeovers of either lock (format 7; written only by a
    /// takeover).
    pub str_recoveries: AtomicU64,
    /// Str: times the front lock was found held and had to be waited for
    /// (modulo 2^32).
    pub str_front_contended: AtomicU32,
    /// Str: the same for the back lock.
    pub str_back_contended: AtomicU32,
    /// Lease records not free (held, being taken, or returned and
    /// waiting), kept by every lease operation under the table's lock:
    /// the one word a plain pop reads for leases (see the `lease`
    /// module). On this line because every pop reads it anyway (the
    /// waiter words). Zero in a file that never had a lease open.
    pub lease_busy: AtomicU64,

    // ---- line 4: Str compression counters (format 5) ----
    /// Str: items stored compressed, ever. Written under the lock (load +
    /// store, exact; like `cleared`, a holder killed mid-push may leave
    /// it one off).
    pub compressed: AtomicU64,
    /// Str: arena bytes the compressed items did not take, ever (each
    /// one's aligned length minus its aligned compressed length). Under
    /// the lock, as `compressed`.
    pub compressed_saved: AtomicU64,
    /// Leased items waiting to be served again (format 6): the one word
    /// every Int pop reads for leases (see the `lease` module). Str: 0.
    pub lease_returned: AtomicU64,
    /// Lease records in the lease table (format 6; 0: no leases).
    pub max_leases: u64,
    /// Byte offset of the lease table (format 6).
    pub lease_off: u64,
    /// Str: bytes of the lease data area after the table (format 6).
    pub lease_bytes: u64,
    /// Str: times the back lock was taken (format 7; the front lock's
    /// count is in the front side, see [`StrSide`]). Here, not on line 2,
    /// for want of room there; only producers write this line.
    pub str_back_acquired: AtomicU64,
    /// Records of the dead-letter area after the lease records (format
    /// 8; 0: none; see the `lease` module, "Work queue").
    pub max_dead: u64,
}

impl Header {
    /// Int: positions given up by slot repair; they hold no item and are
    /// subtracted from the push and pop counts (Str's `c0_count`).
    pub fn int_skipped(&self) -> &AtomicU64 {
        &self.c0_count
    }

    /// Str: pops that found the queue empty. Str keeps this counter on
    /// line 3 (the word Int uses for `cleared`): a consumer that polls an
    /// empty queue counts its miss there, on the line of the waiter words
    /// every operation reads anyway, not on a side line the other end
    /// reads on every operation.
    #[inline(always)]
    pub fn str_pop_empty(&self) -> &AtomicU64 {
        &self.cleared
    }

    /// Str: pushes that found the queue full, on line 3 for the same
    /// reason (the word Int uses for `recoveries`).
    #[inline(always)]
    pub fn str_push_full(&self) -> &AtomicU64 {
        &self.recoveries
    }

    /// Str: one end's state (format 7): the front side on header line 1,
    /// the back side on line 2 (see [`StrSide`]).
    #[inline(always)]
    pub fn str_side(&self, back: bool) -> &StrSide {
        let at = if back { 128 } else { 64 };
        // SAFETY: lines 1 and 2 of the header are each eight AtomicU64
        // fields, 64-byte aligned (the header is); StrSide is 64 bytes of
        // atomics (asserted below), which may alias the named fields; the
        // reference lives no longer than `self`.
        unsafe {
            &*(self as *const Header)
                .cast::<u8>()
                .add(at)
                .cast::<StrSide>()
        }
    }

    /// Str: the front lock's acquisition count, and its contention count.
    #[inline(always)]
    pub fn str_lock_counters(&self, back: bool) -> (&AtomicU64, &AtomicU32) {
        if back {
            (&self.str_back_acquired, &self.str_back_contended)
        } else {
            (&self.str_side(false).aux, &self.str_front_contended)
        }
    }
}

/// Str: the bits of a side word ([`StrSide::word`]) that count bytes, in
/// units of 8: 31 bits, compared modulo 2^31 (the bytes in the arena,
/// at most 2^32, are at most 2^29 units, so the difference of two such
/// counters is never ambiguous).
pub const STR_UNITS_MASK: u32 = 0x7FFF_FFFF;

/// Str: the side word of a commit that makes copy `copy` (0 or 1) of a
/// side current, with the end position `pos` (the back's `tail` or the
/// front's `head`, counted modulo 2^32) and the byte counter `units` (the
/// back's bytes charged or the front's bytes released, in 8-byte units,
/// modulo 2^31).
#[inline(always)]
pub const fn str_word(pos: u32, units: u32, copy: u32) -> u64 {
    (pos as u64) << 32 | ((units & STR_UNITS_MASK) as u64) << 1 | (copy & 1) as u64
}

/// Str: the position a side word holds (see [`str_word`]).
#[inline(always)]
pub const fn str_word_pos(w: u64) -> u32 {
    (w >> 32) as u32
}

/// Str: the byte counter a side word holds, in 8-byte units.
#[inline(always)]
pub const fn str_word_units(w: u64) -> u32 {
    (w as u32) >> 1
}

/// Str: which copy a side word makes current.
#[inline(always)]
pub const fn str_word_copy(w: u64) -> u32 {
    w as u32 & 1
}

/// Str (format 7): one end of the queue, overlaid on header line 1 (the
/// front: pops at the front) or line 2 (the back: pushes at the back).
/// Each side has its own lock and its own state, committed by one store
/// of `word`; the other side reads only `word`. See the `strq` module
/// docs ("Shared state").
///
/// ```text
/// offset  field    back (line 2)              front (line 1)
///      0  word     tail | charged | copy      head | released | copy
///      8  lock     the back lock              the front lock
///     16  owner    its holder's tag           its holder's tag
///     24  ok[2]    push_ok, per copy          pop_ok, per copy
///     40  ends[2]  pop_back count, per copy   push_front count, per copy
///     56  aux      wr per copy (two u32)      front lock acquisitions
/// ```
#[repr(C, align(64))]
pub struct StrSide {
    /// `pos << 32 | units << 1 | copy` (see [`str_word`]): the committed
    /// end position and byte counter, and which copy holds the rest.
    pub word: AtomicU64,
    /// This side's lock (see [`crate::lock`]).
    pub lock: Lock,
    /// The lock holder's tag, `pid << 32 | start time` (see
    /// [`crate::lock`]).
    pub owner: AtomicU64,
    /// Per copy: the back's pushes at the back, or the front's pops at the
    /// front (exact counters).
    pub ok: [AtomicU64; 2],
    /// Per copy: the operations at the other end that this side commits:
    /// the back's `pop_back`s, the front's `push_front`s.
    pub ends: [AtomicU64; 2],
    /// Back: the arena write offset of each copy, two u32 halves (see
    /// [`StrSide::wr`]). Front: the front lock's acquisition count.
    pub aux: AtomicU64,
}

impl StrSide {
    /// Back: copy `c`'s arena write offset (where the back item's charge
    /// ends; below the arena size, at most 2^32 - 8).
    #[inline(always)]
    pub fn wr(&self, c: u32) -> &AtomicU32 {
        // SAFETY: `aux` is 8 bytes, 8-aligned; its two 4-byte halves are
        // valid AtomicU32s, which may alias it (the front never uses it
        // as halves, the back never as a whole).
        unsafe {
            &*(&self.aux as *const AtomicU64)
                .cast::<AtomicU32>()
                .add(c as usize & 1)
        }
    }
}

#[cfg(not(loom))]
const _: () = {
    assert!(std::mem::size_of::<Header>() == HEADER_SIZE);
    assert!(std::mem::align_of::<Header>() == 64);
    assert!(std::mem::offset_of!(Header, head) == 64);
    assert!(std::mem::offset_of!(Header, tail) == 128);
    assert!(std::mem::offset_of!(Header, pop_waiters) == 192);
    assert!(std::mem::offset_of!(Header, c0_count) == 80);
    assert!(std::mem::offset_of!(Header, c0_pop_ok) == 120);
    assert!(std::mem::offset_of!(Header, c1_count) == 144);
    assert!(std::mem::offset_of!(Header, c1_pop_ok) == 184);
    assert!(std::mem::size_of::<StrSide>() == 64);
    assert!(std::mem::offset_of!(StrSide, lock) == 8);
    assert!(std::mem::offset_of!(StrSide, owner) == 16);
    assert!(std::mem::offset_of!(StrSide, ok) == 24);
    assert!(std::mem::offset_of!(StrSide, ends) == 40);
    assert!(std::mem::offset_of!(StrSide, aux) == 56);
    assert!(std::mem::size_of::<Lock>() == 8);
    assert!(std::mem::offset_of!(Lock, sleepers) == 4);
    assert!(std::mem::offset_of!(Header, str_cleared) == 208);
    assert!(std::mem::offset_of!(Header, str_recoveries) == 232);
    assert!(std::mem::offset_of!(Header, str_front_contended) == 240);
    assert!(std::mem::offset_of!(Header, str_back_contended) == 244);
    assert!(std::mem::offset_of!(Header, lease_busy) == 248);
    assert!(std::mem::offset_of!(Header, str_back_acquired) == 304);
    assert!(std::mem::offset_of!(Header, compressed) == 256);
    assert!(std::mem::offset_of!(Header, compressed_saved) == 264);
    assert!(std::mem::offset_of!(Header, lease_returned) == 272);
    assert!(std::mem::offset_of!(Header, max_leases) == 280);
    assert!(std::mem::offset_of!(Header, lease_off) == 288);
    assert!(std::mem::offset_of!(Header, lease_bytes) == 296);
    assert!(std::mem::offset_of!(Header, max_dead) == 312);
};

/// Geometry of a queue, computed with checked arithmetic from the request
/// (at create) or from the header (at attach).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// The variant.
    pub variant: Variant,
    /// Slot count (power of two).
    pub capacity: u64,
    /// Arena bytes (0 for the Int family).
    pub arena_cap: u64,
    /// Offset of the arena (0 for the Int family).
    pub arena_off: u64,
    /// Header + slots + arena + lease table (+ Str lease data).
    pub total_size: u64,
    /// Lease records (0: none).
    pub max_leases: u64,
    /// Offset of the lease table (64-byte aligned, after the arena).
    pub lease_off: u64,
    /// Str: lease data bytes after the table (0 for the Int family).
    pub lease_bytes: u64,
    /// Int family: offset of the ring's intent records ([`RING_RECORDS`]
    /// of [`RING_REC_SIZE`] bytes, 64-byte aligned, right after the slots;
    /// format 7; see `ring/records.rs`). 0 for Str.
    pub recs_off: u64,
    /// Dead-letter records after the lease records (format 8; 0: none,
    /// always without a lease table).
    pub max_dead: u64,
}

impl Geometry {
    /// Geometry for `capacity` slots (and, for Str, `arena_cap` bytes), both
    /// already normalised and in range, with the default lease table
    /// ([`DEFAULT_MAX_LEASES`] records). `None` on overflow.
    pub const fn compute(variant: Variant, capacity: u64, arena_cap: u64) -> Option<Geometry> {
        let lb = default_lease_bytes(
            variant,
            capacity,
            arena_cap,
            DEFAULT_MAX_LEASES + DEFAULT_MAX_DEAD,
        );
        Self::compute_with(variant, capacity, arena_cap, DEFAULT_MAX_LEASES, lb)
    }

    /// [`Geometry::compute`] with `max_leases` lease records (at most
    /// [`MAX_LEASES`]) and, for Str, `lease_bytes` of lease data (0 for
    /// the Int family), and the default dead-letter area
    /// ([`DEFAULT_MAX_DEAD`] records, none without leases). `None` on
    /// overflow or out-of-range lease sizes.
    pub const fn compute_with(
        variant: Variant,
        capacity: u64,
        arena_cap: u64,
        max_leases: u64,
        lease_bytes: u64,
    ) -> Option<Geometry> {
        let dead = if max_leases == 0 { 0 } else { DEFAULT_MAX_DEAD };
        Self::compute_full(variant, capacity, arena_cap, max_leases, lease_bytes, dead)
    }

    /// [`Geometry::compute_with`] with `max_dead` dead-letter records (at
    /// most [`MAX_DEAD`]; must be 0 without leases).
    pub const fn compute_full(
        variant: Variant,
        capacity: u64,
        arena_cap: u64,
        max_leases: u64,
        lease_bytes: u64,
        max_dead: u64,
    ) -> Option<Geometry> {
        if max_leases > MAX_LEASES
            || lease_bytes > MAX_ARENA
            || max_dead > MAX_DEAD
            || (max_leases == 0 && max_dead != 0)
        {
            return None;
        }
        let lease_bytes = match variant {
            Variant::Str if max_leases > 0 => lease_bytes,
            Variant::Str => 0,
            _ => {
                if lease_bytes != 0 {
                    return None;
                }
                0
            }
        };
        let slots = match capacity.checked_mul(variant.slot_size()) {
            Some(s) => s,
            None => return None,
        };
        let slots_end = match slots.checked_add(HEADER_SIZE as u64) {
            Some(s) => s,
            None => return None,
        };
        let (arena_off, arena_cap) = match variant {
            Variant::Str => (slots_end, arena_cap),
            _ => (0, 0),
        };
        let body_end = match slots_end.checked_add(arena_cap) {
            Some(s) => s,
            None => return None,
        };
        // Int: the ring's intent records, on a cache line after the slots.
        let (recs_off, body_end) = match variant {
            Variant::Str => (0, body_end),
            _ => match body_end.checked_add(63) {
                Some(s) => {
                    let off = s & !63;
                    match off.checked_add(RING_RECORDS * RING_REC_SIZE) {
                        Some(e) => (off, e),
                        None => return None,
                    }
                }
                None => return None,
            },
        };
        // The lease table starts on a cache line: records are 64 bytes.
        let lease_off = match body_end.checked_add(63) {
            Some(s) => s & !63,
            None => return None,
        };
        let total_size = if max_leases == 0 {
            body_end
        } else {
            // max_leases, max_dead <= 2^16 and lease_bytes <= 2^32: no
            // overflow.
            let t = LEASE_HEAD_SIZE
                + max_leases * LEASE_REC_SIZE
                + max_dead * DEAD_REC_SIZE
                + lease_bytes;
            match lease_off.checked_add(t) {
                Some(s) => s,
                None => return None,
            }
        };
        Some(Geometry {
            variant,
            capacity,
            arena_cap,
            arena_off,
            total_size,
            max_leases,
            lease_off: if max_leases == 0 { 0 } else { lease_off },
            lease_bytes,
            recs_off,
            max_dead,
        })
    }
}

/// Int family: intent records in the ring's table (format 7): one per
/// thread and handle that uses the queue, claimed once; record 0 is the
/// shared overflow record (see `ring/records.rs`).
pub const RING_RECORDS: u64 = 32;
/// Bytes per ring intent record (one cache line).
pub const RING_REC_SIZE: u64 = 64;

/// Lease records a queue gets when its creator asks for no number.
pub const DEFAULT_MAX_LEASES: u64 = 64;
/// Dead-letter records a queue gets when its creator asks for no number.
pub const DEFAULT_MAX_DEAD: u64 = 64;
/// Most dead-letter records a queue may have.
pub const MAX_DEAD: u64 = 1 << 16;
/// Most lease records a queue may have.
pub const MAX_LEASES: u64 = 1 << 16;
/// Bytes per lease record (format 8: two cache lines).
pub const LEASE_REC_SIZE: u64 = 128;
/// Bytes of the lease table's head, before the records (format 8).
pub const LEASE_HEAD_SIZE: u64 = 192;
/// Offset in the lease table's head of `max_deliveries` (format 8),
/// written at create.
pub const LEASE_HEAD_MAX_DELIVERIES: u64 = 64;
/// Bytes per dead-letter record (format 8), after the lease records.
pub const DEAD_REC_SIZE: u64 = 64;

/// The Str lease data area a creator gets when it asks for no size (a
/// create passes its `max_leases + max_dead` as `max_leases`): room
/// for `max_leases` items of the queue's average slot share of the arena
/// (at least 256 bytes each), at least 4096 bytes, at most the arena
/// (whichever is larger), rounded up to 8. 0 for the Int family or with
/// no leases.
pub const fn default_lease_bytes(
    variant: Variant,
    capacity: u64,
    arena_cap: u64,
    max_leases: u64,
) -> u64 {
    if !matches!(variant, Variant::Str) || max_leases == 0 || capacity == 0 {
        return 0;
    }
    let mut per = arena_cap / capacity;
    if per < 256 {
        per = 256;
    }
    let mut b = per.saturating_mul(max_leases);
    let cap = if arena_cap > MIN_ARENA {
        arena_cap
    } else {
        MIN_ARENA
    };
    if b > cap {
        b = cap;
    }
    if b < MIN_ARENA {
        b = MIN_ARENA;
    }
    (b + 7) & !7
}

/// Round a requested capacity up to a power of two, at least
/// [`MIN_CAPACITY`]. `None` when the request is 0 or above [`MAX_CAPACITY`].
pub const fn normalize_capacity(requested: u64) -> Option<u64> {
    if requested == 0 || requested > MAX_CAPACITY {
        return None;
    }
    let c = requested.next_power_of_two();
    Some(if c < MIN_CAPACITY { MIN_CAPACITY } else { c })
}

#[cfg(test)]
mod tests;
