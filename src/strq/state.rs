//! The queue state of `StrQueue`: the two state copies in the header
//! (see "Crash safety" in the module docs). [`Locked`] holds the lock with
//! the current copy loaded, and commits what changed to the other copy
//! (the whole state, then one store that makes it current); the committed
//! state can also be read without the lock, as a snapshot.

use super::items::{copy_out, read_item, store_item, Item, StrSlot};
use super::StrQueue;
use crate::arena::{align8, Arena};
use crate::futex::Deadline;
use crate::layout::{str_current, str_current_count, StrCopy};
use crate::lock::{LockFail, LockGuard};
use crate::sync::Ordering;
use crate::testpoint::KillPoint;

/// The lock held, with the queue state loaded from the current copy in the
/// header. Changes are committed to the other copy when it is dropped, and
/// only then is the lock released (the guard is the last field, dropped
/// after `Drop::drop` ran). With `H` false the test hooks ([`KillPoint`])
/// are compiled out: the hot paths use that when the handle has none.
pub(super) struct Locked<'q, const H: bool> {
    q: &'q StrQueue,
    /// Which state copy is current (0 or 1, see "Crash safety").
    copy: u32,
    pub(super) head: u64,
    pub(super) count: u64,
    pub(super) arena: Arena,
    pub(super) push_ok: u64,
    pub(super) pop_ok: u64,
    pub(super) dirty: bool,
    _guard: LockGuard<'q>,
}

impl<const H: bool> Drop for Locked<'_, H> {
    fn drop(&mut self) {
        self.commit();
    }
}

impl<const H: bool> Locked<'_, H> {
    /// Commit and unlock, as dropping does, but inlined into the caller
    /// (the drop glue is an out-of-line call on the hot path).
    #[inline(always)]
    pub(super) fn release(self) {
        let mut me = std::mem::ManuallyDrop::new(self);
        me.commit();
        // SAFETY: `me` is never dropped nor used again; the guard is moved
        // out exactly once and dropped here, which unlocks. The other
        // fields own nothing.
        drop(unsafe { std::ptr::read(&me._guard) });
    }

    /// Commit the changes made under the lock, if any (see "Crash safety"
    /// in the module docs): write the whole new state to the copy that is
    /// not current, then make it current with one store.
    #[inline(always)]
    pub(super) fn commit(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let next = self.copy ^ 1;
        write_state::<H>(
            self.q,
            next,
            (self.head, self.count),
            &self.arena,
            (self.push_ok, self.pop_ok),
        );
        self.copy = next;
    }
}

/// The commit proper: write the new state to copy `next`, which is not
/// current, then make it current.
#[inline(always)]
fn write_state<const H: bool>(
    q: &StrQueue,
    next: u32,
    (head, count): (u64, u64),
    arena: &Arena,
    (push_ok, pop_ok): (u64, u64),
) {
    write_copy::<H>(q, next, (head, count), arena, (push_ok, pop_ok));
    switch_to::<H>(q, next, count);
}

/// The first half of [`write_state`]: write the new state to copy `next`,
/// which is not current (nobody reads it, so this may come before or after
/// the other writes of the operation).
#[inline(always)]
pub(super) fn write_copy<const H: bool>(
    q: &StrQueue,
    next: u32,
    (head, count): (u64, u64),
    arena: &Arena,
    (push_ok, pop_ok): (u64, u64),
) {
    let kp = q.kill_point;
    let c = q.header().str_copy(next);
    let Arena { rd, wr, used, .. } = *arena;
    // Plain Relaxed stores: every reader and writer of these words holds
    // the lock, whose release (the guard, dropped next) publishes them.
    // `len` and `stats` also read them without the lock, wanting only
    // recent values.
    c.head.store(head, Ordering::Relaxed);
    c.count.store(count, Ordering::Relaxed);
    c.rd.store(rd, Ordering::Relaxed);
    if H {
        kp.hit(KillPoint::MidCommit);
    }
    c.wr.store(wr, Ordering::Relaxed);
    c.used.store(used, Ordering::Relaxed);
    c.push_ok.store(push_ok, Ordering::Relaxed);
    c.pop_ok.store(pop_ok, Ordering::Relaxed);
}

/// The second half of [`write_state`]: make copy `next`, written by
/// [`write_copy`] with `count` items, current. After this store the
/// operation has happened.
#[inline(always)]
pub(super) fn switch_to<const H: bool>(q: &StrQueue, next: u32, count: u64) {
    let h = q.header();
    // SYNC POINT: Release orders the copy before the switch for a
    // taker-over, which reads `current` with Acquire in `current_state`
    // (a dead holder released no lock it could synchronise with).
    // The item count rides along (`count <= capacity <= 2^30`, so the
    // shift cannot overflow): one load of this word tells a pop that
    // finds the queue empty, or a push that finds every slot taken, so
    // without the lock (see "Looking without the lock").
    h.current.store(str_current(next, count), Ordering::Release);
    if H {
        q.kill_point.hit(KillPoint::AfterCommit);
    }
}

/// What a successful take found: where its bytes went in `out`, and flags.
pub(super) struct Taken {
    pub(super) start: usize,
    pub(super) len: usize,
    pub(super) utf8: bool,
    /// The bytes in `out` are a zstd frame, to decode after unlocking.
    pub(super) packed: bool,
}

impl<'q, const H: bool> Locked<'q, H> {
    fn capacity(&self) -> u64 {
        self.q.mask + 1
    }

    fn slot_of(&self, back: bool) -> &'q StrSlot {
        let i = if back {
            self.head.wrapping_add(self.count).wrapping_sub(1)
        } else {
            self.head
        };
        self.q.slot(i)
    }

    /// The end item's (offset, stored length, waste, utf8, compressed),
    /// if there is an item and its bytes lie inside the arena.
    #[inline(always)]
    pub(super) fn read_end(&self, back: bool) -> Option<Item> {
        if self.count == 0 {
            return None;
        }
        read_item::<true>(self.slot_of(back), self.q.usable)
    }

    /// Append the end item's bytes to `out`; optionally remove the item.
    #[inline(always)]
    pub(super) fn copy_end(
        &mut self,
        back: bool,
        remove: bool,
        out: &mut Vec<u8>,
    ) -> Option<Taken> {
        let Item {
            off,
            len,
            waste,
            utf8,
            packed,
        } = self.read_end(back)?;
        let start = copy_out(self.q, off, len, out)?;
        let n = len as usize;
        if remove {
            let charge = align8(len) + waste;
            (self.head, self.arena) = self
                .q
                .after_removal(back, self.head, self.count, self.arena, charge);
            self.count -= 1;
            self.pop_ok = self.pop_ok.wrapping_add(1);
            self.dirty = true;
        }
        Some(Taken {
            start,
            len: n,
            utf8,
            packed,
        })
    }

    /// Push `bytes` at one end if there is a free slot and arena room.
    /// The caller has checked that the item can ever fit.
    #[inline(always)]
    pub(super) fn put(&mut self, bytes: &[u8], utf8: bool, front: bool) -> bool {
        self.put_any(bytes, utf8, front, None)
    }

    /// [`Locked::put`]; with `packed` (the original length) `bytes` is its
    /// zstd frame: the item is flagged compressed and counted.
    #[inline(always)]
    pub(super) fn put_any(
        &mut self,
        bytes: &[u8],
        utf8: bool,
        front: bool,
        packed: Option<u64>,
    ) -> bool {
        if self.count >= self.capacity() {
            return false;
        }
        let mut arena = self.arena;
        let Some(head) = store_item::<H>(
            self.q, self.head, self.count, &mut arena, bytes, utf8, front,
        ) else {
            return false;
        };
        // HOOK(compress): flag the slot just written, count the saving.
        if let Some(orig) = packed {
            let idx = if front {
                head
            } else {
                head.wrapping_add(self.count)
            };
            self.q.mark_packed(idx, bytes.len() as u64, orig);
        }
        self.head = head;
        self.arena = arena;
        self.count += 1;
        self.push_ok = self.push_ok.wrapping_add(1);
        self.dirty = true;
        true
    }
}

impl StrQueue {
    /// Take the lock for a non-blocking call, waiting at most the
    /// handle's lock timeout. `None` (and `errno` = `ETIMEDOUT`) when that
    /// passed with the lock still held by a live process.
    #[inline(always)]
    pub(super) fn locked<const H: bool>(&self) -> Option<Locked<'_, H>> {
        Some(self.load_state(self.guard_now::<H>()?))
    }

    /// Take the lock (taking it over from a dead holder), waiting until
    /// the deadline `deadline()` computes (only when the lock is found
    /// held), and load the state, sanitised (see the module docs).
    #[inline(always)]
    pub(super) fn lock_until<const H: bool>(
        &self,
        deadline: impl FnOnce() -> Deadline,
        interruptible: bool,
    ) -> std::result::Result<Locked<'_, H>, LockFail> {
        Ok(self.load_state(self.lock_guard::<H>(deadline, interruptible)?))
    }

    /// The lock `guard` with the state loaded from the current copy.
    #[inline(always)]
    pub(super) fn load_state<'q, const H: bool>(&'q self, guard: LockGuard<'q>) -> Locked<'q, H> {
        let (copy, c, head, count) = self.current_state();
        let arena = self.arena_of(c, count);
        Locked {
            q: self,
            copy,
            head,
            count,
            arena,
            push_ok: c.push_ok.load(Ordering::Relaxed),
            pop_ok: c.pop_ok.load(Ordering::Relaxed),
            dirty: false,
            _guard: guard,
        }
    }

    /// The item count of the committed state, from `current`, read
    /// without the lock: a snapshot (see "Looking without the lock").
    #[inline(always)]
    pub(super) fn committed_count(&self) -> u32 {
        str_current_count(self.committed_word())
    }

    /// The `current` word, read without the lock: a snapshot of the
    /// committed item count and copy.
    #[inline(always)]
    pub(super) fn committed_word(&self) -> u32 {
        // Relaxed: a caller acts on this value only to answer "empty" or
        // "full" with nothing else read. Coherence makes the value no
        // older than any commit that happens-before this load (the
        // caller's own pushes, or ones it synchronised with), so an
        // "empty" answer means the queue was empty at some point during
        // the call. Any other value sends the caller to the lock, which
        // reloads `current` (Acquire) under it.
        self.header().current.load(Ordering::Relaxed)
    }

    /// The current copy's number, the copy, its front index and its item
    /// count, sanitised (masked and clamped). Without the lock (`len`,
    /// `stats`) a snapshot.
    #[inline(always)]
    pub(super) fn current_state(&self) -> (u32, &StrCopy, u64, u64) {
        let h = self.header();
        // SYNC POINT: Acquire pairs with the Release that made the copy
        // current: after a takeover the lock CAS synchronised with nothing
        // the dead holder wrote, and a reader without the lock did not get
        // it from the writer.
        let copy = h.current.load(Ordering::Acquire) & 1;
        let c = h.str_copy(copy);
        let head = c.head.load(Ordering::Relaxed) & self.mask;
        let count = c.count.load(Ordering::Relaxed).min(self.mask + 1);
        (copy, c, head, count)
    }

    /// The arena words of copy `c` holding `count` items (an empty arena
    /// when there are none).
    #[inline(always)]
    pub(super) fn arena_of(&self, c: &StrCopy, count: u64) -> Arena {
        if count == 0 {
            return Arena::empty(self.usable);
        }
        Arena {
            size: self.usable,
            rd: c.rd.load(Ordering::Relaxed),
            wr: c.wr.load(Ordering::Relaxed),
            used: c.used.load(Ordering::Relaxed),
        }
    }

    /// The front index and arena once the end item (at the back with
    /// `back`), charged `charge`, has left the `count` items from `head`:
    /// a queue that empties starts over at slot 0 and arena offset 0.
    #[inline(always)]
    pub(super) fn after_removal(
        &self,
        back: bool,
        head: u64,
        count: u64,
        mut arena: Arena,
        charge: u64,
    ) -> (u64, Arena) {
        if count <= 1 {
            return (0, Arena::empty(self.usable));
        }
        if back {
            arena.release_back(charge);
            (head, arena)
        } else {
            arena.release_front(charge);
            (head.wrapping_add(1) & self.mask, arena)
        }
    }
}
