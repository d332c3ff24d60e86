//! The fast paths of `StrQueue`: a push at the back and a pop at the
//! front, with the lock free and the usual placement.
//!
//! `push` (at the back) and `pop` (at the front) of strings up to
//! [`SHORT`] bytes are the operations most programs make all the time, so
//! their usual case is written out flat: the lock free (one CAS), a slot
//! and room right after the back item for a push, an item that fits the
//! caller's buffer for a pop. That code makes no call at all (the bytes
//! are copied inline, the wake-ups are checked inline and made out of
//! line), so the compiler keeps the queue state in registers instead of
//! saving it around calls; every other case, from a held lock to a
//! wrapping placement or a long string, jumps to functions of its own
//! (`push_general`, `push_locked`, `pop_general`, `pop_locked`, `*_long`)
//! that run the general code (a pop that finds the queue empty just
//! unlocks and jumps to `found_empty`). Both run the same commit, and the
//! test hooks are compiled into both for handles that have a crash point.
//! Measured with callgrind (`examples/str_pair.rs`, instructions): a
//! 50-byte push+pop pair went from 310 to 235, with 100 items queued from
//! 337 to 288, and a pop of an empty queue from 68 to 73.

use super::items::{copy_bytes, copy_short, read_item, write_item, Item, SHORT};
use super::state::{switch_to, write_copy};
use super::StrQueue;
use crate::arena::{align8, Arena};
use crate::error::Result;
use crate::lock::LockGuard;
use crate::sync::Ordering;

impl StrQueue {
    /// A back push. The usual case (a free lock, a free slot, and room
    /// right after the back item) is written out flat with no call in it,
    /// so the compiler keeps its state in registers rather than saving it
    /// around calls; every other case is handed whole, by a jump, to the
    /// general code ([`StrQueue::push_general`] before the lock is taken,
    /// [`StrQueue::push_locked`] after).
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
        if self.committed_word() >= self.full_word {
            // Every slot taken: answered without the lock.
            return self.found_full();
        }
        let Some(guard) = self.try_lock::<H>() else {
            return self.push_general::<H>(bytes, utf8, false);
        };
        let (copy, c, head, count) = self.current_state();
        // An empty queue (its arena starts over, see arena_of) is placed
        // apart: with nothing loaded the placement folds to two compares.
        let placed = if count == 0 {
            let mut a = Arena::empty(self.usable);
            a.place_back_usual(len).map(|off| (off, a))
        } else {
            let mut a = self.arena_of(c, count);
            match a.place_back_usual(len) {
                Some(off) if count <= self.mask => Some((off, a)),
                _ => None,
            }
        };
        let Some((off, arena)) = placed else {
            return self.push_locked::<H, false>(guard, bytes, utf8);
        };
        // The new state first, while it is in registers (so fewer values
        // stay live across the copy); nothing is visible before the switch.
        let pushed = c.push_ok.load(Ordering::Relaxed).wrapping_add(1);
        let popped = c.pop_ok.load(Ordering::Relaxed);
        write_copy::<H>(self, copy ^ 1, (head, count + 1), &arena, (pushed, popped));
        // `off < usable <= 2^32` (place_back_usual).
        write_item::<H, LONG>(self, head.wrapping_add(count), off as u32, 0, bytes, utf8);
        switch_to::<H>(self, copy ^ 1, count + 1);
        let wake_lock = guard.unlock();
        if wake_lock || self.consumers().waiting() {
            return self.wake_after_push(wake_lock);
        }
        Ok(true)
    }

    /// The wake-ups after a push that found a sleeper on the lock word
    /// (`wake_lock`) or a consumer waiting.
    #[cold]
    #[inline(never)]
    fn wake_after_push(&self, wake_lock: bool) -> Result<bool> {
        if wake_lock {
            LockGuard::wake_one(&self.header().lock);
        }
        self.consumers().wake(1);
        Ok(true)
    }

    /// A front pop. The usual case (a free lock, an item, and room for it
    /// in `out`) is written out flat with no call in it, as
    /// [`StrQueue::push_back`]; an empty queue is answered at once, and
    /// everything else jumps to the general code
    /// ([`StrQueue::pop_general`] before the lock is taken,
    /// [`StrQueue::pop_locked`] after).
    #[inline(always)]
    pub(super) fn pop_front<const H: bool>(&self, out: &mut Vec<u8>) -> Option<bool> {
        out.clear();
        if self.committed_count() == 0 {
            // Empty: common for a consumer that polls, so answered here,
            // without the lock.
            return self.found_empty(false);
        }
        let Some(guard) = self.try_lock::<H>() else {
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

    /// [`StrQueue::pop_front`] once the lock is held, with `out` empty;
    /// without `LONG`, items longer than [`SHORT`] go to
    /// [`StrQueue::pop_front_long`].
    #[inline(always)]
    fn pop_front_held<const H: bool, const LONG: bool>(
        &self,
        guard: LockGuard<'_>,
        out: &mut Vec<u8>,
    ) -> Option<bool> {
        let (copy, c, head, count) = self.current_state();
        if count == 0 {
            // Empty: common for a consumer that polls, so answered here.
            return self.found_empty(guard.unlock());
        }
        let Item {
            off,
            len,
            waste,
            utf8,
            ..
        } = match read_item::<false>(self.slot(head), self.usable) {
            // `out` is empty: room for `len` bytes without growing it.
            Some(i) if i.len as usize <= out.capacity() => i,
            _ => return self.pop_locked::<H>(guard, false, out),
        };
        if !LONG && len > SHORT {
            return self.pop_front_long::<H>(guard, out);
        }
        // The new state first, as in push_back.
        // `count - 1`: no arena word is loaded when the queue empties.
        let arena = self.arena_of(c, count - 1);
        let (head, arena) = self.after_removal(false, head, count, arena, align8(len) + waste);
        let pushed = c.push_ok.load(Ordering::Relaxed);
        let popped = c.pop_ok.load(Ordering::Relaxed).wrapping_add(1);
        write_copy::<H>(self, copy ^ 1, (head, count - 1), &arena, (pushed, popped));
        // SAFETY: `off + len <= usable` (read_item), so the source lies in
        // the mapped arena; `out` has room for `len` bytes (checked above)
        // and never overlaps the mapping; under the lock nobody else
        // writes this item. Without LONG, `len <= SHORT` (checked above).
        unsafe {
            let src = self.arena_ptr(off);
            if LONG {
                copy_bytes(src, out.as_mut_ptr(), len as usize);
            } else {
                copy_short(src, out.as_mut_ptr(), len as usize);
            }
            out.set_len(len as usize);
        }
        switch_to::<H>(self, copy ^ 1, count - 1);
        let wake_lock = guard.unlock();
        if wake_lock || self.producers().waiting() {
            return self.wake_after_pop(wake_lock, utf8);
        }
        Some(utf8)
    }

    /// The wake-ups after a pop that found a sleeper on the lock word
    /// (`wake_lock`) or a producer waiting; returns the item's `utf8`.
    #[cold]
    #[inline(never)]
    fn wake_after_pop(&self, wake_lock: bool, utf8: bool) -> Option<bool> {
        if wake_lock {
            LockGuard::wake_one(&self.header().lock);
        }
        self.wake_producers();
        Some(utf8)
    }
}
