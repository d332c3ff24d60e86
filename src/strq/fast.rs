//! The fast paths of `StrQueue`: a push at the back and a pop at the
//! front, each under its own side's lock, free, and the usual placement.
//!
//! `push` (at the back) and `pop` (at the front) of strings up to
//! [`SHORT`] bytes are the operations most programs make all the time, so
//! their usual case is written out flat: the lock of its side free (one
//! CAS), a slot and room right after the back item for a push, an item
//! that fits the caller's buffer for a pop. That code makes no call at all
//! (the bytes are copied inline, the wake-ups are checked inline and made
//! out of line), so the compiler keeps the queue state in registers
//! instead of saving it around calls; every other case, from a held lock
//! to a wrapping placement or a long string, jumps to functions of its own
//! (`push_general`, `push_locked`, `pop_general`, `pop_locked`, `*_long`)
//! that run the general code. Both run the same commit, and the test hooks
//! are compiled into both for handles that have a crash point.
//!
//! Each starts with the look without the lock ("Looking without the lock"
//! in the module docs): the two side words, read Relaxed, tell an empty
//! queue (a pop) or one whose every slot is taken (a push).

use super::items::{copy_bytes, copy_short, read_item, write_item, Item, SHORT};
use super::state::{span, used_bytes};
use super::StrQueue;
use crate::arena::align8;
use crate::error::Result;
use crate::layout::{str_word, str_word_copy, str_word_pos, str_word_units};
use crate::lock::LockGuard;
use crate::sync::Ordering;
use crate::testpoint::KillPoint;

impl StrQueue {
    /// A back push. The usual case (the back lock free, a free slot, and
    /// room right after the back item) is written out flat with no call
    /// in it, so the compiler keeps its state in registers rather than
    /// saving it around calls; every other case is handed whole, by a
    /// jump, to the general code ([`StrQueue::push_general`] before the
    /// lock is taken, [`StrQueue::push_locked`] after).
    #[inline(always)]
    pub(super) fn push_back<const H: bool>(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        if bytes.len() as u64 > SHORT {
            return self.push_back_long::<H>(bytes, utf8);
        }
        self.push_back_with::<H, false>(bytes, utf8)
    }

    /// [`StrQueue::push_back`] of a string longer than [`SHORT`]: the same
    /// code with a `memcpy` (and the frame a call needs) in a function of
    /// its own.
    #[inline(never)]
    fn push_back_long<const H: bool>(&self, bytes: &[u8], utf8: bool) -> Result<bool> {
        self.push_back_with::<H, true>(bytes, utf8)
    }

    /// Whether the side words say every slot is taken (a look without
    /// the lock).
    #[inline(always)]
    pub(super) fn looks_full(&self) -> bool {
        let b = self.side(true).word.load(Ordering::Relaxed);
        let f = self.side(false).word.load(Ordering::Relaxed);
        span(str_word_pos(b), str_word_pos(f)) > self.mask
    }

    /// Whether the side words say the queue is empty (a look without the
    /// lock).
    #[inline(always)]
    pub(super) fn looks_empty(&self) -> bool {
        let f = self.side(false).word.load(Ordering::Relaxed);
        let b = self.side(true).word.load(Ordering::Relaxed);
        str_word_pos(b) == str_word_pos(f)
    }

    /// [`StrQueue::push_back`]; without `LONG` for strings of at most
    /// [`SHORT`] bytes.
    #[inline(always)]
    fn push_back_with<const H: bool, const LONG: bool>(
        &self,
        bytes: &[u8],
        utf8: bool,
    ) -> Result<bool> {
        let len = bytes.len() as u64;
        if len > self.max_len {
            return self.push_general::<H>(bytes, utf8, false);
        }
        if self.looks_full() {
            // Every slot taken: answered without the lock.
            return self.found_full();
        }
        let Some(guard) = self.try_lock::<H>(true) else {
            return self.push_general::<H>(bytes, utf8, false);
        };
        let side = self.side(true);
        let bw = side.word.load(Ordering::Acquire);
        let fw = self.word(false);
        let (c, tail) = (str_word_copy(bw), str_word_pos(bw));
        let count = span(tail, str_word_pos(fw));
        let al = align8(len);
        let s = self.usable;
        // An arena holding no bytes (every charge given back; an empty
        // queue always, which also heals a hostile count) starts over at
        // offset 0; otherwise the item goes right after the back item
        // when the charged span does not wrap (`used <= wr`) and it fits
        // before the end. `al <= max_len <= s` rounded: `al <= s`.
        let used = used_bytes(str_word_units(bw), str_word_units(fw));
        let (off, charged) = if count == 0 || (used == 0 && count <= self.mask) {
            (0, str_word_units(fw))
        } else {
            let wr = u64::from(side.wr(c).load(Ordering::Relaxed));
            if count > self.mask || used > wr || wr > s - al {
                return self.push_locked::<H, false>(guard, bytes, utf8);
            }
            (wr, str_word_units(bw))
        };
        let end = off + al;
        let wr = if end == s { 0 } else { end };
        // The new copy first, while the old one is in registers; nothing
        // is visible before the switch.
        let n = c ^ 1;
        side.wr(n).store(wr as u32, Ordering::Relaxed);
        if H {
            self.kill_point.hit(KillPoint::MidCommit);
        }
        let pushed = side.ok[c as usize].load(Ordering::Relaxed).wrapping_add(1);
        side.ok[n as usize].store(pushed, Ordering::Relaxed);
        let pops = side.ends[c as usize].load(Ordering::Relaxed);
        side.ends[n as usize].store(pops, Ordering::Relaxed);
        // `off + len <= s <= 2^32`.
        write_item::<H, LONG>(self, u64::from(tail), off as u32, 0, bytes, utf8);
        let units = charged.wrapping_add((al / 8) as u32);
        self.switch::<H>(true, str_word(tail.wrapping_add(1), units, n));
        let wake_lock = guard.unlock();
        if wake_lock || self.consumers().waiting() {
            return self.wake_after_push(wake_lock);
        }
        Ok(true)
    }

    /// The wake-ups after a push that found a sleeper on the back lock
    /// (`wake_lock`) or a consumer waiting.
    #[cold]
    #[inline(never)]
    fn wake_after_push(&self, wake_lock: bool) -> Result<bool> {
        if wake_lock {
            LockGuard::wake_one(&self.side(true).lock);
        }
        self.consumers().wake(1);
        Ok(true)
    }

    /// A front pop. The usual case (the front lock free, an item, and
    /// room for it in `out`) is written out flat with no call in it, as
    /// [`StrQueue::push_back`]; an empty queue is answered at once, and
    /// everything else jumps to the general code
    /// ([`StrQueue::pop_general`] before the lock is taken,
    /// [`StrQueue::pop_locked`] after).
    #[inline(always)]
    pub(super) fn pop_front<const H: bool>(&self, out: &mut Vec<u8>) -> Option<bool> {
        out.clear();
        if self.looks_empty() {
            // Empty: common for a consumer that polls, so answered here,
            // without the lock.
            return self.found_empty(None);
        }
        let Some(guard) = self.try_lock::<H>(false) else {
            return self.pop_general::<H>(false, out);
        };
        self.pop_front_held::<H, false>(guard, out)
    }

    /// [`StrQueue::pop_front`] of an item longer than [`SHORT`], with the
    /// lock held: the same code with a `memcpy`, as
    /// [`StrQueue::push_back_long`].
    #[inline(never)]
    fn pop_front_long<const H: bool>(
        &self,
        guard: LockGuard<'_>,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        self.pop_front_held::<H, true>(guard, out)
    }

    /// [`StrQueue::pop_front`] once the front lock is held, with `out`
    /// empty; without `LONG`, items longer than [`SHORT`] go to
    /// [`StrQueue::pop_front_long`].
    #[inline(always)]
    fn pop_front_held<const H: bool, const LONG: bool>(
        &self,
        guard: LockGuard<'_>,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        let side = self.side(false);
        let fw = side.word.load(Ordering::Acquire);
        let bw = self.word(true);
        let head = str_word_pos(fw);
        if str_word_pos(bw) == head {
            // Empty: common for a consumer that polls, so answered here.
            return self.found_empty(Some(guard));
        }
        let Item {
            off,
            len,
            waste,
            utf8,
            ..
        } = match read_item::<false>(self.slot(u64::from(head)), self.usable) {
            // `out` is empty: room for `len` bytes without growing it.
            Some(i) if i.len as usize <= out.capacity() => i,
            _ => return self.pop_locked::<H>(guard, false, out),
        };
        if !LONG && len > SHORT {
            return self.pop_front_long::<H>(guard, out);
        }
        // SAFETY: `off + len <= usable` (read_item), so the source lies in
        // the mapped arena; `out` has room for `len` bytes (checked above)
        // and never overlaps the mapping; the item is ours until the
        // commit below gives its bytes back. Without LONG, `len <= SHORT`
        // (checked above).
        unsafe {
            let src = self.arena_ptr(off);
            if LONG {
                copy_bytes(src, out.as_mut_ptr(), len as usize);
            } else {
                copy_short(src, out.as_mut_ptr(), len as usize);
            }
            out.set_len(len as usize);
        }
        let (c, n) = (str_word_copy(fw), str_word_copy(fw) ^ 1);
        let popped = side.ok[c as usize].load(Ordering::Relaxed).wrapping_add(1);
        side.ok[n as usize].store(popped, Ordering::Relaxed);
        if H {
            self.kill_point.hit(KillPoint::MidCommit);
        }
        let pushes = side.ends[c as usize].load(Ordering::Relaxed);
        side.ends[n as usize].store(pushes, Ordering::Relaxed);
        // `waste` comes from the slot: garbage only in hostile memory,
        // healed when the queue empties.
        let units = str_word_units(fw).wrapping_add(((align8(len) + waste) / 8) as u32);
        self.switch::<H>(false, str_word(head.wrapping_add(1), units, n));
        let wake_lock = guard.unlock();
        if wake_lock || self.producers().waiting() {
            return self.wake_after_pop(wake_lock, utf8);
        }
        Some(utf8)
    }

    /// The wake-ups after a pop that found a sleeper on the front lock
    /// (`wake_lock`) or a producer waiting; returns the item's `utf8`.
    #[cold]
    #[inline(never)]
    fn wake_after_pop(&self, wake_lock: bool, utf8: bool) -> Option<bool> {
        if wake_lock {
            LockGuard::wake_one(&self.side(false).lock);
        }
        self.wake_producers();
        Some(utf8)
    }
}
