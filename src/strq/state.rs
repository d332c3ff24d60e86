//! The queue state of `StrQueue`: its two sides (see "Shared state" and
//! "Crash safety" in the module docs). Each side, the back (pushes at the
//! back) and the front (pops at the front), has its own lock and its own
//! state, committed by one store of its side word; the other side reads
//! only that word. [`Locked`] holds one lock or both, with the state of
//! the sides it holds loaded and the other side's word read, and commits
//! what changed when it is released.

use super::items::{copy_out, read_item, write_item, Item, META_WASTE};
use super::StrQueue;
use crate::arena::{align8, Arena};
use crate::layout::{
    str_word, str_word_copy, str_word_pos, str_word_units, StrSide, STR_UNITS_MASK,
};
use crate::lock::LockGuard;
use crate::sync::Ordering;
use crate::testpoint::KillPoint;

/// The back side's state: loaded from its side under the back lock, or
/// (only `tail` and `charged`) from its word without it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Back {
    /// Which copy is current.
    pub(super) copy: u32,
    /// Position one past the back item (modulo 2^32; slot `tail & mask`).
    pub(super) tail: u32,
    /// Bytes ever charged to items, in 8-byte units (modulo 2^31).
    pub(super) charged: u32,
    /// Arena offset where the back item's charge ends.
    pub(super) wr: u64,
    /// Pushes at the back, ever.
    pub(super) push_ok: u64,
    /// Pops at the back (`pop_back`), ever.
    pub(super) pops: u64,
}

/// The front side's state: loaded under the front lock, or (only `head`
/// and `released`) from its word without it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Front {
    /// Which copy is current.
    pub(super) copy: u32,
    /// Position of the front item (modulo 2^32; slot `head & mask`).
    pub(super) head: u32,
    /// Bytes ever given back by items that left, in 8-byte units (modulo
    /// 2^31; a front push takes some back).
    pub(super) released: u32,
    /// Pops at the front, ever.
    pub(super) pop_ok: u64,
    /// Pushes at the front (`push_front`), ever.
    pub(super) pushes: u64,
}

/// Items between `head` and `tail` (modulo 2^32; more than the capacity
/// only in hostile memory).
#[inline(always)]
pub(super) fn span(tail: u32, head: u32) -> u64 {
    u64::from(tail.wrapping_sub(head))
}

/// Bytes charged to the items present: `charged - released` units.
#[inline(always)]
pub(super) fn used_bytes(charged: u32, released: u32) -> u64 {
    u64::from(charged.wrapping_sub(released) & STR_UNITS_MASK) * 8
}

impl Back {
    fn of_word(w: u64) -> Back {
        Back {
            copy: str_word_copy(w),
            tail: str_word_pos(w),
            charged: str_word_units(w),
            ..Back::default()
        }
    }
}

impl Front {
    fn of_word(w: u64) -> Front {
        Front {
            copy: str_word_copy(w),
            head: str_word_pos(w),
            released: str_word_units(w),
            ..Front::default()
        }
    }
}

impl StrQueue {
    /// The back side (`true`) or the front side of the header.
    #[inline(always)]
    pub(super) fn side(&self, back: bool) -> &StrSide {
        self.header().str_side(back)
    }

    /// A side's committed word. SYNC POINT: Acquire pairs with the Release
    /// store that committed it: the consumer then sees the bytes and the
    /// slot of every item the word counts, the producer may reuse the
    /// bytes the word says were given back (the consumer copied them out
    /// before it committed), and a lock taker-over sees the copy the word
    /// names whole (a dead holder released no lock to synchronise with).
    #[inline(always)]
    pub(super) fn word(&self, back: bool) -> u64 {
        self.side(back).word.load(Ordering::Acquire)
    }

    /// The back state, from its side (the caller holds the back lock).
    #[inline(always)]
    pub(super) fn load_back(&self) -> Back {
        let s = self.side(true);
        let w = s.word.load(Ordering::Acquire);
        let c = str_word_copy(w);
        Back {
            wr: u64::from(s.wr(c).load(Ordering::Relaxed)),
            push_ok: s.ok[c as usize].load(Ordering::Relaxed),
            pops: s.ends[c as usize].load(Ordering::Relaxed),
            ..Back::of_word(w)
        }
    }

    /// The front state, from its side (the caller holds the front lock).
    #[inline(always)]
    pub(super) fn load_front(&self) -> Front {
        let s = self.side(false);
        let w = s.word.load(Ordering::Acquire);
        let c = str_word_copy(w);
        Front {
            pop_ok: s.ok[c as usize].load(Ordering::Relaxed),
            pushes: s.ends[c as usize].load(Ordering::Relaxed),
            ..Front::of_word(w)
        }
    }

    /// Commit the back state `b` (the caller holds the back lock): the
    /// copy that is not current first, then the word that makes it
    /// current.
    #[inline(always)]
    pub(super) fn commit_back<const H: bool>(&self, b: &Back) {
        let s = self.side(true);
        let n = b.copy ^ 1;
        // Plain stores: only holders of the back lock read the copies
        // (and `stats`, which re-checks the word); the word's Release
        // publishes them. `wr < usable <= 2^32` (the arena arithmetic).
        s.wr(n).store(b.wr as u32, Ordering::Relaxed);
        if H {
            self.kill_point.hit(KillPoint::MidCommit);
        }
        s.ok[n as usize].store(b.push_ok, Ordering::Relaxed);
        s.ends[n as usize].store(b.pops, Ordering::Relaxed);
        self.switch::<H>(true, str_word(b.tail, b.charged, n));
    }

    /// Commit the front state `f` (the caller holds the front lock), as
    /// [`StrQueue::commit_back`].
    #[inline(always)]
    pub(super) fn commit_front<const H: bool>(&self, f: &Front) {
        let s = self.side(false);
        let n = f.copy ^ 1;
        s.ok[n as usize].store(f.pop_ok, Ordering::Relaxed);
        if H {
            self.kill_point.hit(KillPoint::MidCommit);
        }
        s.ends[n as usize].store(f.pushes, Ordering::Relaxed);
        self.switch::<H>(false, str_word(f.head, f.released, n));
    }

    /// The commit's one store: side word `w`. After it the operation has
    /// happened.
    #[inline(always)]
    pub(super) fn switch<const H: bool>(&self, back: bool, w: u64) {
        // SYNC POINT: Release publishes the copy, the slot and the bytes
        // written before it (a push), or orders the copy-out of the bytes
        // before the space is given back (a pop); see `word`.
        self.side(back).word.store(w, Ordering::Release);
        if H {
            self.kill_point.hit(KillPoint::AfterCommit);
        }
    }

    /// The arena as the back sees it: the charged span ends at `wr` and is
    /// `used` bytes long, so it starts at `wr - used` (modulo the size).
    /// A state that cannot be (hostile memory) is returned inconsistent,
    /// so that nothing is placed in it.
    #[inline(always)]
    pub(super) fn arena_at(&self, wr: u64, used: u64) -> Arena {
        let s = self.usable;
        let rd = if wr < s && used <= s {
            let x = wr + s - used;
            if x >= s {
                x - s
            } else {
                x
            }
        } else {
            s
        };
        Arena {
            size: s,
            rd,
            wr,
            used,
        }
    }
}

/// One lock or both held, with the state of the sides held loaded and the
/// other side's word read. Changes are committed (the back first) when it
/// is released or dropped, and only then are the locks released. With `H`
/// false the test hooks ([`KillPoint`]) are compiled out.
pub(super) struct Locked<'q, const H: bool> {
    q: &'q StrQueue,
    pub(super) back: Back,
    pub(super) front: Front,
    back_dirty: bool,
    front_dirty: bool,
    /// The locks (the guards are the last fields, dropped after
    /// `Drop::drop` committed).
    gb: Option<LockGuard<'q>>,
    gf: Option<LockGuard<'q>>,
}

impl<const H: bool> Drop for Locked<'_, H> {
    fn drop(&mut self) {
        self.commit();
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
    /// The state under the locks `gb` (back) and `gf` (front): each held
    /// side loaded, the other's word read.
    #[inline(always)]
    pub(super) fn new(
        q: &'q StrQueue,
        gb: Option<LockGuard<'q>>,
        gf: Option<LockGuard<'q>>,
    ) -> Self {
        let back = match gb {
            Some(_) => q.load_back(),
            None => Back::of_word(q.word(true)),
        };
        let front = match gf {
            Some(_) => q.load_front(),
            None => Front::of_word(q.word(false)),
        };
        Locked {
            q,
            back,
            front,
            back_dirty: false,
            front_dirty: false,
            gb,
            gf,
        }
    }

    /// Commit the changes made under the locks, if any: the back first
    /// (the only operation that changes both, a front push into an
    /// arena holding no bytes, first moves the back's `wr` to 0, which
    /// changes nothing anybody could tell; see "Crash safety").
    #[inline(always)]
    pub(super) fn commit(&mut self) {
        if self.back_dirty {
            self.back_dirty = false;
            if self.front_dirty {
                // The reset before a front push: its own commit, without
                // the commit hooks (which mean "the operation happened"),
                // and a hook of its own after it.
                self.q.commit_back::<false>(&self.back);
                if H {
                    self.q.kill_point.hit(KillPoint::AfterReset);
                }
            } else {
                self.q.commit_back::<H>(&self.back);
            }
            self.back.copy ^= 1;
        }
        if self.front_dirty {
            self.front_dirty = false;
            self.q.commit_front::<H>(&self.front);
            self.front.copy ^= 1;
        }
    }

    /// Commit and unlock, as dropping does.
    #[inline(always)]
    pub(super) fn release(self) {
        drop(self);
    }

    fn capacity(&self) -> u64 {
        self.q.mask + 1
    }

    /// Items in the queue as the held sides see them (the other side's
    /// count is a snapshot, which only errs towards fewer items for a
    /// consumer and more for a producer), clamped to the capacity.
    #[inline(always)]
    pub(super) fn count(&self) -> u64 {
        span(self.back.tail, self.front.head).min(self.capacity())
    }

    /// Bytes charged to the items present (a producer's view errs towards
    /// more, as `count`).
    #[inline(always)]
    pub(super) fn used(&self) -> u64 {
        used_bytes(self.back.charged, self.front.released)
    }

    /// Mark a direct change of the front state (`clear`).
    pub(super) fn front_changed(&mut self) {
        self.front_dirty = true;
    }

    /// The end item's (offset, stored length, waste, utf8, compressed),
    /// if there is an item and its bytes lie inside the arena.
    #[inline(always)]
    pub(super) fn read_end(&self, back: bool) -> Option<Item> {
        if self.count() == 0 {
            return None;
        }
        let i = if back {
            self.back.tail.wrapping_sub(1)
        } else {
            self.front.head
        };
        read_item::<true>(self.q.slot(u64::from(i)), self.q.usable)
    }

    /// The item at position `pos`, if it is in the queue (between the
    /// front and the back) and its bytes lie inside the arena.
    pub(super) fn item_at(&self, pos: u32) -> Option<Item> {
        if u64::from(pos.wrapping_sub(self.front.head)) >= self.count() {
            return None;
        }
        read_item::<true>(self.q.slot(u64::from(pos)), self.q.usable)
    }

    /// Append the end item's bytes to `out`; optionally remove the item
    /// (at the front: the front lock held; at the back: both).
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
        if remove {
            let charge = align8(len) + waste;
            if back {
                debug_assert!(self.gb.is_some() && self.gf.is_some());
                let mut a = self.q.arena_at(self.back.wr, self.used());
                a.release_back(charge);
                self.back.wr = a.wr;
                self.back.charged = self.front.released.wrapping_add((a.used / 8) as u32);
                self.back.tail = self.back.tail.wrapping_sub(1);
                self.back.pops = self.back.pops.wrapping_add(1);
                self.back_dirty = true;
            } else {
                debug_assert!(self.gf.is_some());
                // `charge` comes from the slot: garbage only in hostile
                // memory, healed when the queue empties.
                self.front.released = self.front.released.wrapping_add((charge / 8) as u32);
                self.front.head = self.front.head.wrapping_add(1);
                self.front.pop_ok = self.front.pop_ok.wrapping_add(1);
                self.front_dirty = true;
            }
        }
        Some(Taken {
            start,
            len: len as usize,
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
    /// zstd frame: the item is flagged compressed and counted. At the back
    /// the back lock is held; at the front both.
    #[inline(always)]
    pub(super) fn put_any(
        &mut self,
        bytes: &[u8],
        utf8: bool,
        front: bool,
        packed: Option<u64>,
    ) -> bool {
        debug_assert!(self.gb.is_some() && (!front || self.gf.is_some()));
        let count = span(self.back.tail, self.front.head);
        if count >= self.capacity() {
            return false;
        }
        let mut used = self.used();
        if count == 0 && used != 0 {
            // Empty: every charge has been given back (the front word
            // read says so, and no pop can follow it while nothing is
            // queued), unless the memory is hostile: heal it.
            self.back.charged = self.front.released;
            self.back_dirty = true;
            used = 0;
        }
        if used == 0 && self.back.wr != 0 {
            // No bytes charged: start over at offset 0 (moving `wr`
            // under items of length 0 is harmless: they own no bytes).
            self.back.wr = 0;
            self.back_dirty = true;
        }
        let len = bytes.len() as u64;
        let mut a = self.q.arena_at(self.back.wr, used);
        let Some(p) = (if front {
            a.place_front(len)
        } else {
            a.place_back(len)
        }) else {
            return false;
        };
        // The arena arithmetic guarantees these; checking them here keeps
        // the copy below obviously in bounds.
        let (Ok(off32), Ok(waste32)) = (u32::try_from(p.off), u32::try_from(p.waste)) else {
            return false;
        };
        if p.off.saturating_add(len) > self.q.usable || waste32 & !META_WASTE != 0 {
            return false;
        }
        let idx = if front {
            self.front.head.wrapping_sub(1)
        } else {
            self.back.tail
        };
        // HOOK(work): a new item at the front takes no count that a lease
        // record keeps for an item that was there before (the one load a
        // front push pays; back pushes pay nothing).
        if front && self.q.leases_busy() {
            self.q.forget_back_at(idx);
        }
        write_item::<H, true>(self.q, u64::from(idx), off32, waste32, bytes, utf8);
        // HOOK(compress): flag the slot just written, count the saving.
        if let Some(orig) = packed {
            self.q.mark_packed(u64::from(idx), len, orig);
        }
        let units = ((a.used - used) / 8) as u32;
        if front {
            debug_assert_eq!(a.wr, self.back.wr);
            self.front.head = idx;
            self.front.released = self.front.released.wrapping_sub(units);
            self.front.pushes = self.front.pushes.wrapping_add(1);
            self.front_dirty = true;
        } else {
            self.back.tail = idx.wrapping_add(1);
            self.back.charged = self.back.charged.wrapping_add(units);
            self.back.wr = a.wr;
            self.back.push_ok = self.back.push_ok.wrapping_add(1);
            self.back_dirty = true;
        }
        true
    }
}

#[cfg(all(test, not(loom)))]
impl StrQueue {
    /// Tests: the front position, the item count, and the arena as the
    /// back sees it (`rd` derived), from the committed state.
    pub(super) fn view(&self) -> (u64, u64, Arena) {
        let (b, f) = (self.load_back(), self.load_front());
        let used = used_bytes(b.charged, f.released);
        (
            u64::from(f.head),
            span(b.tail, f.head),
            self.arena_at(b.wr, used),
        )
    }
}
