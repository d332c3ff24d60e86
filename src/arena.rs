//! Placement arithmetic of the Str queue's circular byte arena.
//!
//! Pure integer arithmetic, no memory access: `strq` derives the three
//! arena words from the shared header (`wr`, and `used` from the bytes
//! charged and given back; `rd` is `wr - used`), under the back lock, asks
//! this module where an item goes or what it gives back, and stores what
//! changed again.
//! Keeping the arithmetic apart lets it be tested exhaustively on its own.
//!
//! The arena is `size` bytes (a multiple of 8). Occupied bytes form one
//! circular span starting at `rd` and `used` bytes long, ending at `wr`
//! (`wr == (rd + used) % size`; `rd == wr` means empty when `used == 0` and
//! exactly full when `used == size`). The span is cut, in queue order, into
//! each item's *charge*: its bytes rounded up to 8, plus any *waste* it
//! caused by wrapping. Every item's bytes are contiguous (never split across
//! the end of the arena), so a wrap leaves a gap, and that gap is charged to
//! the item that caused it:
//!
//! * a back push that does not fit in `[wr, size)` goes to offset 0 and is
//!   charged `size - wr` bytes of waste (the gap before it);
//! * a front push that does not fit in `[0, rd)` goes to `size - len` and is
//!   charged `rd` bytes of waste (the gap after it).
//!
//! So the front item's charge always starts at `rd` and the back item's
//! always ends at `wr`: a front pop advances `rd` by the front item's charge
//! and a back pop moves `wr` back by the back item's charge, giving back
//! exactly what was taken, waste included. The caller starts the arena over
//! at 0 whenever nothing is charged (and resets its counts when the queue
//! is empty, which also repairs any inconsistency a hostile process left
//! behind).
//!
//! Every input may come from hostile shared memory: nothing here panics or
//! overflows for any `u64` values, and a state that fails
//! [`Arena::is_consistent`] is never used to place anything.

/// `n` rounded up to a multiple of 8 (saturating; callers bound `n` first).
#[inline(always)]
pub(crate) const fn align8(n: u64) -> u64 {
    n.saturating_add(7) & !7
}

/// `x % s` for `x < 2 * s` (the cursor sums below), without a division.
#[inline(always)]
const fn wrap_once(x: u64, s: u64) -> u64 {
    if x >= s {
        x - s
    } else {
        x
    }
}

/// The arena's cursor words, as loaded from the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Arena {
    /// Usable bytes: the arena size rounded down to a multiple of 8. Comes
    /// from the private (validated) geometry, never from shared memory.
    pub size: u64,
    /// Where the front item's charge starts.
    pub rd: u64,
    /// Where the back item's charge ends (the next back push goes here).
    pub wr: u64,
    /// Bytes charged to the items present (aligned lengths plus waste).
    pub used: u64,
}

/// Where a new item's bytes go and how much waste it is charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Byte offset in the arena (a multiple of 8, below `size`).
    pub off: u64,
    /// Wrap waste charged to the item (a multiple of 8, below `size`).
    pub waste: u64,
}

impl Arena {
    /// An empty arena of `size` usable bytes.
    #[cfg(all(test, not(loom)))]
    pub(crate) const fn empty(size: u64) -> Arena {
        Arena {
            size,
            rd: 0,
            wr: 0,
            used: 0,
        }
    }

    /// Whether the cursors describe a state this module could have produced.
    pub(crate) fn is_consistent(&self) -> bool {
        let s = self.size;
        s > 0
            && s % 8 == 0
            && self.rd < s
            && self.wr < s
            && self.used <= s
            && (self.rd | self.wr | self.used) % 8 == 0
            && wrap_once(self.rd + self.used, s) == self.wr
    }

    /// Bytes not charged to any item.
    #[inline]
    pub(crate) fn free(&self) -> u64 {
        self.size.saturating_sub(self.used)
    }

    /// Whether the charged span runs past the end of the arena and around to
    /// the start (then the free bytes are the single gap `[wr, rd)`).
    #[inline]
    fn wrapped(&self) -> bool {
        self.wr < self.rd || (self.wr == self.rd && self.used != 0)
    }

    /// Place an item of `len` bytes after the back item. `None` when it does
    /// not fit now (or the state is inconsistent); the state is unchanged
    /// then.
    #[inline(always)]
    pub(crate) fn place_back(&mut self, len: u64) -> Option<Placement> {
        match self.place_back_usual(len) {
            Some(off) => Some(Placement { off, waste: 0 }),
            None => self.place_back_general(len),
        }
    }

    /// [`Arena::place_back`] in the usual case, in a few instructions: the
    /// span does not wrap and the item fits after it, at the returned
    /// offset (`wr`, below `size`), with no waste. `None`, with the state
    /// unchanged, for every other case, which `place_back_general` decides.
    /// Every state this accepts is consistent (`rd <= wr < size`, both
    /// multiples of 8, `used == wr - rd`) and is placed exactly as
    /// `place_back_general` would place it (its reset of an unused arena is
    /// a no-op here: `used == 0` only with `wr == 0`, hence `rd == 0`); a
    /// test compares the two on every small state.
    #[inline(always)]
    pub(crate) fn place_back_usual(&mut self, len: u64) -> Option<u64> {
        let (s, rd, wr, used) = (self.size, self.rd, self.wr, self.used);
        let al = align8(len);
        if rd <= wr
            && wr < s
            && used == wr - rd
            && (rd | wr) % 8 == 0
            && al <= s - wr
            && (used != 0 || wr == 0)
        {
            self.used = used + al;
            self.wr = wrap_once(wr + al, s);
            return Some(wr);
        }
        None
    }

    /// [`Arena::place_back`] for every state: wrapped spans, wraps, and
    /// states that are not consistent.
    #[inline(never)]
    fn place_back_general(&mut self, len: u64) -> Option<Placement> {
        let al = self.admit(len)?;
        let s = self.size;
        let p = if self.wrapped() || al <= s - self.wr {
            // Wrapped: the one free gap [wr, rd) holds it (admit checked the
            // total). Otherwise [wr, size) does.
            Placement {
                off: self.wr,
                waste: 0,
            }
        } else if al <= self.rd {
            // [wr, size) is too short: start over at 0 and charge the tail
            // gap to this item.
            Placement {
                off: 0,
                waste: s - self.wr,
            }
        } else {
            return None;
        };
        self.used += p.waste + al;
        // `p.off + al <= size` in both placements above.
        self.wr = wrap_once(p.off + al, s);
        Some(p)
    }

    /// Place an item of `len` bytes before the front item. `None` when it
    /// does not fit now (or the state is inconsistent); the state is
    /// unchanged then. Only `rd` and `used` change (and, for an arena
    /// holding no bytes, the reset of both cursors to 0 first): the Str
    /// queue's front push does not own `wr` (it belongs to the back, see
    /// `strq`), so into an empty arena the item goes at the very end,
    /// `size - len`, and its charge ends at `wr = 0`.
    pub(crate) fn place_front(&mut self, len: u64) -> Option<Placement> {
        let al = self.admit(len)?;
        let s = self.size;
        let p = if self.wrapped() || al <= self.rd {
            // Wrapped: the one free gap [wr, rd) ends at rd and is large
            // enough. Otherwise [0, rd) holds it.
            Placement {
                off: self.rd - al,
                waste: 0,
            }
        } else if al <= s - self.wr {
            // [0, rd) is too short: go to the very end of the arena; the
            // unusable [0, rd) becomes this item's trailing waste (none
            // when the arena is empty: then rd = wr = 0).
            Placement {
                off: s - al,
                waste: self.rd,
            }
        } else {
            return None;
        };
        self.used += p.waste + al;
        self.rd = p.off;
        Some(p)
    }

    /// Common admission for both ends: the aligned length if the state is
    /// consistent and enough bytes are free in total. An arena holding no
    /// bytes is reset to its start first.
    fn admit(&mut self, len: u64) -> Option<u64> {
        if !self.is_consistent() {
            return None;
        }
        let al = align8(len);
        if al > self.free() {
            return None;
        }
        if self.used == 0 {
            self.rd = 0;
            self.wr = 0;
        }
        Some(al)
    }

    /// Give back the front item's `charge` (aligned length + waste). (The
    /// Str queue's front does not keep `rd`: it counts the bytes it gave
    /// back, see `strq`; the tests here use it.)
    #[cfg(all(test, not(loom)))]
    pub(crate) fn release_front(&mut self, charge: u64) {
        let s = self.size;
        if s == 0 {
            return;
        }
        self.rd = if self.rd < s && charge <= s {
            // The usual case, without a division: the sum is below 2 * s.
            wrap_once(self.rd + charge, s)
        } else {
            (self.rd % s + charge % s) % s
        };
        self.used = self.used.saturating_sub(charge);
        self.reset_if_unused();
    }

    /// Give back the back item's `charge` (aligned length + waste).
    pub(crate) fn release_back(&mut self, charge: u64) {
        let s = self.size;
        if s == 0 {
            return;
        }
        self.wr = if self.wr < s && charge <= s {
            // As in release_front: `wr + s - charge` is below 2 * s.
            wrap_once(self.wr + s - charge, s)
        } else {
            (self.wr % s + s - charge % s) % s
        };
        self.used = self.used.saturating_sub(charge);
        self.reset_if_unused();
    }

    /// Nothing charged: start over at offset 0, so the next item gets the
    /// whole arena in one piece. (Items of length 0 may remain; they own no
    /// bytes, so moving the cursors under them is harmless.)
    fn reset_if_unused(&mut self) {
        if self.used == 0 {
            self.rd = 0;
            self.wr = 0;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
