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
mod tests {
    use super::*;

    #[test]
    fn align8_rounds_up_and_saturates() {
        assert_eq!(align8(0), 0);
        assert_eq!(align8(1), 8);
        assert_eq!(align8(8), 8);
        assert_eq!(align8(2000), 2000);
        assert_eq!(align8(2001), 2008);
        assert_eq!(align8(u64::MAX), !7u64);
    }

    #[test]
    fn two_halves_fill_the_arena_exactly() {
        let mut a = Arena::empty(4096);
        assert_eq!(a.place_back(2048), Some(Placement { off: 0, waste: 0 }));
        assert_eq!(
            a.place_back(2048),
            Some(Placement {
                off: 2048,
                waste: 0
            })
        );
        assert_eq!(a.used, 4096);
        assert_eq!(a.wr, 0);
        assert!(a.is_consistent());
        assert_eq!(a.place_back(1), None);
        assert_eq!(a.place_front(1), None);
        // An empty item still fits in a full arena.
        assert_eq!(a.place_back(0), Some(Placement { off: 0, waste: 0 }));
    }

    #[test]
    fn back_wrap_charges_the_gap_and_gives_it_back() {
        let mut a = Arena::empty(4096);
        a.place_back(1000).unwrap(); // [0, 1000)
        a.place_back(2000).unwrap(); // [1000, 3000)
        a.place_back(1000).unwrap(); // [3000, 4000)
        a.release_front(1000); // rd = 1000

        // 96 bytes left at the end: too short, so wrap and charge them.
        assert_eq!(a.place_back(800), Some(Placement { off: 0, waste: 96 }));
        assert_eq!(a.used, 2000 + 1000 + 96 + 800);
        assert_eq!(a.wr, 800);
        assert!(a.is_consistent());
        // No room at the end nor before rd for another 800.
        assert_eq!(a.place_back(800), None);
        a.release_front(2000);
        a.release_front(1000);
        assert_eq!(a.rd, 4000);
        a.release_front(96 + 800);
        // Empty: back to the start.
        assert_eq!(a, Arena::empty(4096));
    }

    #[test]
    fn empty_arena_resets_to_its_start() {
        let mut a = Arena::empty(4096);
        a.place_back(24).unwrap();
        a.place_back(24).unwrap();
        a.release_back(24);
        assert_eq!(a.wr, 24);
        a.release_back(24);
        assert_eq!(a, Arena::empty(4096));
        a.place_front(4096).unwrap();
        assert_eq!(a.used, 4096);
        a.release_front(4096);
        assert_eq!(a, Arena::empty(4096));
    }

    #[test]
    fn front_wrap_goes_to_the_end_and_charges_the_head_gap() {
        let mut a = Arena::empty(4096);
        a.place_back(16).unwrap(); // [0, 16)
        a.place_back(16).unwrap(); // [16, 32)
        a.release_front(16); // rd = 16
        let p = a.place_front(100).unwrap();
        assert_eq!(
            p,
            Placement {
                off: 4096 - 104,
                waste: 16
            }
        );
        assert_eq!(a.rd, 4096 - 104);
        assert_eq!(a.used, 16 + 104 + 16);
        assert!(a.is_consistent());
        // pop_back of the 16 at [16, 32), then of the front-wrapped item.
        a.release_back(16);
        assert_eq!(a.wr, 16);
        a.release_back(104 + 16);
        assert_eq!(a.used, 0);
        assert_eq!(a.wr, a.rd);
    }

    #[test]
    fn place_back_fast_path_matches_the_general_one_on_every_small_state() {
        // Every size, cursor and length up to a little past 48, aligned or
        // not, consistent or not, plus huge values: the fast path either
        // leaves the state to the general one or does exactly what it does.
        // (Miri, a thousand times slower, runs a sample.)
        let (vals, sizes): (Vec<u64>, &[u64]) = if cfg!(miri) {
            (vec![0, 3, 8, 16, 24, u64::MAX], &[0, 8, 16])
        } else {
            let v = (0..=52).chain([u64::MAX, u64::MAX - 7, 1 << 40]).collect();
            (v, &[0, 8, 16, 24, 48])
        };
        let mut fast = 0u64;
        for &size in sizes {
            for &rd in &vals {
                for &wr in &vals {
                    for &used in &vals {
                        let a = Arena { size, rd, wr, used };
                        for len in 0..=size + 9 {
                            let (mut x, mut y) = (a, a);
                            let got = x.place_back(len);
                            assert_eq!(got, y.place_back_general(len), "{a:?} len {len}");
                            assert_eq!(x, y, "{a:?} len {len}");
                            if got.is_some() && a.used != 0 && got.unwrap().off == a.wr {
                                fast += 1;
                            }
                        }
                    }
                }
            }
        }
        let enough = if cfg!(miri) { 5 } else { 500 };
        assert!(
            fast > enough,
            "the comparison covered the fast path ({fast})"
        );
    }

    #[test]
    fn inconsistent_state_places_nothing() {
        let bad = [
            Arena {
                size: 4096,
                rd: 4096,
                wr: 0,
                used: 0,
            },
            Arena {
                size: 4096,
                rd: 0,
                wr: 8,
                used: 16,
            },
            Arena {
                size: 4096,
                rd: 0,
                wr: 0,
                used: 5000,
            },
            Arena {
                size: 4096,
                rd: 3,
                wr: 3,
                used: 0,
            },
            Arena {
                size: 0,
                rd: 0,
                wr: 0,
                used: 0,
            },
            Arena {
                size: 4096,
                rd: !7u64,
                wr: 8,
                used: 8,
            },
        ];
        for mut a in bad {
            let before = a;
            assert_eq!(a.place_back(8), None, "{a:?}");
            assert_eq!(a.place_front(8), None, "{a:?}");
            assert_eq!(a, before);
            // Releases never panic, whatever the input.
            a.release_front(u64::MAX);
            a.release_back(u64::MAX);
        }
    }

    #[test]
    fn releases_match_the_modular_formula_for_any_input() {
        // The division-free fast paths against the plain `%` arithmetic,
        // at the edges (0, s - 8, s, beyond) and on pseudo-random values.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for s in [8u64, 4096, 4104, 1 << 32] {
            let edges = [0, 8, s - 8, s, s + 8, 2 * s, u64::MAX, u64::MAX - 7];
            let mut vals: Vec<u64> = edges.to_vec();
            vals.extend((0..40).map(|_| (next() % (3 * s)) & !7));
            vals.push(next());
            for &cur in &vals {
                for &charge in &vals {
                    let used = next() % (s + 16);
                    let mut a = Arena {
                        size: s,
                        rd: cur,
                        wr: 0,
                        used,
                    };
                    a.release_front(charge);
                    let mut rd = (cur % s + charge % s) % s;
                    let used2 = used.saturating_sub(charge);
                    if used2 == 0 {
                        rd = 0;
                    }
                    assert_eq!((a.rd, a.used), (rd, used2), "front {s} {cur} {charge}");
                    let mut b = Arena {
                        size: s,
                        rd: 0,
                        wr: cur,
                        used,
                    };
                    b.release_back(charge);
                    let mut wr = (cur % s + s - charge % s) % s;
                    if used2 == 0 {
                        wr = 0;
                    }
                    assert_eq!((b.wr, b.used), (wr, used2), "back {s} {cur} {charge}");
                }
            }
        }
    }
}
