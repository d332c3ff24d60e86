//! The model-based test oracle of `StrQueue`: random deque operations run
//! against the queue and an independent model of the arena, compared after
//! every step.

use std::collections::VecDeque;

use super::items::SHORT;
use super::tests::{end_slot, pattern, pop_item, slot_charges, Rng};
use super::StrQueue;

struct MItem {
    data: Vec<u8>,
    utf8: bool,
    /// First 8-byte cell of the item's charge (waste included).
    start: usize,
    /// Cells charged.
    cells: usize,
    /// First cell of its bytes, and the waste it was charged (cells).
    off: usize,
    waste: usize,
}

/// An independent model of the arena: an occupancy bitmap of 8-byte
/// cells plus a VecDeque of items. Placement follows the documented
/// policy (bytes contiguous; a back push wraps to 0, a front push to
/// the end; the gap goes to the wrapping item; an arena holding no bytes
/// starts over, at 0 for a back push, at the end for a front push) but is decided by scanning the bitmap, not by
/// cursor arithmetic.
struct Model {
    cells: Vec<bool>,
    cap: usize,
    items: VecDeque<MItem>,
}

impl Model {
    fn n(&self) -> usize {
        self.cells.len()
    }
    fn charged(&self) -> usize {
        self.items.iter().map(|i| i.cells).sum()
    }
    fn free(&self, a: usize, b: usize) -> bool {
        (a..b).all(|c| !self.cells[c])
    }
    fn mark(&mut self, start: usize, cells: usize, on: bool) {
        let n = self.n();
        for j in 0..cells {
            let c = (start + j) % n;
            assert_ne!(
                self.cells[c], on,
                "model: cell {c} double-booked or double-freed"
            );
            self.cells[c] = on;
        }
    }
    /// (off, waste, start) for a new item of `len` bytes, or None.
    fn predict(&self, len: usize, front: bool) -> Option<(usize, usize, usize)> {
        if self.items.len() == self.cap {
            return None;
        }
        let k = len.div_ceil(8);
        let n = self.n();
        if self.charged() == 0 {
            // Starts over: a back push at 0, a front push at the end
            // (the front does not move the back's write offset).
            return Some(if front && k > 0 {
                (n - k, 0, n - k)
            } else {
                (0, 0, 0)
            });
        }
        if front {
            let first = self.items.iter().find(|i| i.cells > 0).unwrap();
            let s = first.start;
            if k == 0 {
                return Some((s, 0, s));
            }
            if k <= s && self.free(s - k, s) {
                return Some((s - k, 0, s - k));
            }
            if self.free(0, s) && self.free(n - k, n) {
                return Some((n - k, s, n - k));
            }
        } else {
            let last = self.items.iter().rev().find(|i| i.cells > 0).unwrap();
            let e = (last.start + last.cells) % n;
            if k == 0 {
                return Some((e, 0, e));
            }
            if e + k <= n && self.free(e, e + k) {
                return Some((e, 0, e));
            }
            if self.free(e, n) && self.free(0, k) {
                return Some((0, n - e, e));
            }
        }
        None
    }
    fn push(&mut self, data: Vec<u8>, utf8: bool, front: bool) -> Option<(usize, usize)> {
        let (off, waste, start) = self.predict(data.len(), front)?;
        let cells = data.len().div_ceil(8) + waste;
        self.mark(start, cells, true);
        let it = MItem {
            data,
            utf8,
            start,
            cells,
            off,
            waste,
        };
        if front {
            self.items.push_front(it);
        } else {
            self.items.push_back(it);
        }
        Some((off, waste))
    }
    fn pop(&mut self, back: bool) -> Option<MItem> {
        let it = if back {
            self.items.pop_back()
        } else {
            self.items.pop_front()
        }?;
        self.mark(it.start, it.cells, false);
        Some(it)
    }
}

struct Oracle {
    q: StrQueue,
    m: Model,
    rng: Rng,
    next_id: u64,
    pushes: u64,
    pops: u64,
    wraps_back: u64,
    wraps_front: u64,
    full_refusals: u64,
    /// A buffer kept from pop to pop, as the C ABI keeps its scratch
    /// buffer: with room for the item, a front pop takes the fast path
    /// (a fresh 3-byte buffer sends it to the general one).
    out: Vec<u8>,
    /// Pops into `out` that found it already large enough.
    roomy_pops: u64,
}

impl Oracle {
    fn new(seed: u64, cap: u64, arena: u64) -> Self {
        let q = StrQueue::anonymous(cap, arena).unwrap();
        let n = (q.usable / 8) as usize;
        Oracle {
            m: Model {
                cells: vec![false; n],
                cap: q.capacity() as usize,
                items: VecDeque::new(),
            },
            q,
            rng: Rng(seed),
            next_id: 0,
            pushes: 0,
            pops: 0,
            wraps_back: 0,
            wraps_front: 0,
            full_refusals: 0,
            out: Vec::new(),
            roomy_pops: 0,
        }
    }

    fn item(&mut self) -> (Vec<u8>, bool) {
        // Empty, short (copied inline by the hot paths), or any length.
        let len = match self.rng.below(20) {
            0 => 0,
            1..=6 => self.rng.below(SHORT + 2) as usize,
            _ => self.rng.below(701) as usize,
        };
        self.next_id += 1;
        (pattern(self.next_id, len), self.rng.below(2) == 0)
    }

    fn push(&mut self, front: bool) {
        let (data, utf8) = self.item();
        let ok = if front {
            self.q.push_front(&data, utf8)
        } else {
            self.q.push(&data, utf8)
        }
        .unwrap();
        let want = self.m.push(data, utf8, front);
        assert_eq!(ok, want.is_some(), "push (front={front}) outcome");
        if let Some((off, waste)) = want {
            assert_eq!(
                end_slot(&self.q, !front),
                (off as u64 * 8, waste as u64 * 8)
            );
            self.pushes += 1;
            if waste > 0 {
                if front {
                    self.wraps_front += 1;
                } else {
                    self.wraps_back += 1;
                }
            }
        } else {
            self.full_refusals += 1;
        }
    }

    fn pop(&mut self, back: bool) {
        let got = if self.rng.below(2) == 0 {
            pop_item(&self.q, back)
        } else {
            let mut out = std::mem::take(&mut self.out);
            out.extend_from_slice(b"stale"); // must be cleared by pop
            let roomy = out.capacity();
            let r = self.q.pop(back, &mut out).map(|u| (out.clone(), u));
            if r.as_ref().is_some_and(|(d, _)| d.len() <= roomy) {
                self.roomy_pops += 1;
            }
            self.out = out;
            r
        };
        let want = self.m.pop(back).map(|i| (i.data, i.utf8));
        assert_eq!(got, want, "pop (back={back})");
        if got.is_some() {
            self.pops += 1;
        }
    }

    fn push_multi(&mut self) {
        let k = 1 + self.rng.below(4) as usize;
        let batch: Vec<_> = (0..k).map(|_| self.item()).collect();
        let refs: Vec<(&[u8], bool)> = batch.iter().map(|(d, u)| (&d[..], *u)).collect();
        let n = self.q.push_multi(&refs).unwrap();
        let mut want = 0;
        for (d, u) in batch {
            if self.m.push(d, u, false).is_none() {
                break;
            }
            want += 1;
        }
        assert_eq!(n, want, "push_multi count");
        self.pushes += n as u64;
    }

    fn pop_multi(&mut self) {
        let k = 1 + self.rng.below(5) as usize;
        let budget = if self.rng.below(2) == 0 {
            None
        } else {
            Some(self.rng.below(1500))
        };
        let mut out = Vec::new();
        let mut items = Vec::new();
        let n = self.q.pop_multi(k, budget, &mut out, &mut items);
        let mut want = vec![];
        let mut total = 0u64;
        while want.len() < k {
            let Some(front) = self.m.items.front() else {
                break;
            };
            let len = front.data.len() as u64;
            if let Some(b) = budget {
                if !want.is_empty() && total + len > b {
                    break;
                }
            }
            total += len;
            let it = self.m.pop(false).unwrap();
            want.push((it.data, it.utf8));
        }
        let got: Vec<_> = items
            .iter()
            .map(|&(s, l, u)| (out[s..s + l].to_vec(), u))
            .collect();
        assert_eq!(got, want, "pop_multi");
        assert_eq!(n, want.len());
        self.pops += n as u64;
    }

    pub(super) fn check(&self, step: usize) {
        let s = self.q.stats();
        let model_used = self.m.charged() as u64 * 8;
        assert_eq!(
            self.q.len(),
            self.m.items.len() as u64,
            "len at step {step}"
        );
        assert_eq!(s.arena_used, model_used, "arena_used at step {step}");
        assert_eq!(
            slot_charges(&self.q),
            model_used,
            "slot charges at step {step}"
        );
        assert_eq!(
            (s.push_ok, s.pop_ok),
            (self.pushes, self.pops),
            "counters at step {step}"
        );
        let (_, _, a) = self.q.view();
        assert!(a.is_consistent(), "arena state at step {step}: {a:?}");
        // Each item's bytes lie inside its own charge.
        for it in &self.m.items {
            let k = it.data.len().div_ceil(8);
            assert!(it.off + k <= self.m.n());
            assert_eq!(it.cells, k + it.waste);
        }
    }

    fn run(&mut self, ops: usize) {
        for step in 0..ops {
            match self.rng.below(100) {
                0..=34 => self.push(false),
                35..=49 => self.push(true),
                50..=74 => self.pop(false),
                75..=89 => self.pop(true),
                90..=92 => self.push_multi(),
                93..=95 => self.pop_multi(),
                96..=98 => {
                    let mut out = Vec::new();
                    let got = self.q.peek(&mut out).map(|u| (out, u));
                    let want = self.m.items.front().map(|i| (i.data.clone(), i.utf8));
                    assert_eq!(got, want, "peek at step {step}");
                }
                _ => {
                    if self.rng.below(10) == 0 {
                        let n = self.q.clear();
                        assert_eq!(n, self.m.items.len() as u64);
                        while self.m.pop(false).is_some() {}
                    }
                }
            }
            self.check(step);
        }
    }
}

#[test]
fn model_random_deque_ops_on_a_small_wrapping_arena() {
    let mut o = Oracle::new(0x5EED_0001, 16, 4096);
    o.run(60_000);
    // The run really exercised what it is meant to.
    assert!(o.wraps_back > 500, "back wraps: {}", o.wraps_back);
    assert!(o.wraps_front > 200, "front wraps: {}", o.wraps_front);
    assert!(o.full_refusals > 1000, "refusals: {}", o.full_refusals);
    assert!(o.pushes > 20_000 && o.pops > 20_000);
    assert!(
        o.roomy_pops > 5_000,
        "pops into a roomy buffer: {}",
        o.roomy_pops
    );
}

#[test]
fn model_random_deque_ops_other_geometries() {
    // Arena sizes that are not multiples of 8, more slots than the
    // arena can use, and fewer.
    for (seed, cap, arena) in [(7, 8, 4100), (8, 16, 4999), (9, 64, 4096), (10, 2, 6000)] {
        let mut o = Oracle::new(seed, cap, arena);
        o.run(15_000);
    }
}
