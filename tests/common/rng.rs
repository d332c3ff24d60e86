//! Random numbers for the tests in tests/ (the fuzzer, the Str queue's
//! thread tests): seedable, and the same on every run. Each test crate
//! includes this file with `#[path]` and uses what it needs.

#![allow(dead_code)]

/// xorshift64* (Vigna): small, fast, good enough to pick mutations.
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so that nearby seeds diverge at once.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 1 } else { z })
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// An edge value, a value near one of `hints`, or a random one.
    pub fn interesting(&mut self, hints: &[u64]) -> u64 {
        const EDGES: [u64; 14] = [
            0,
            1,
            2,
            7,
            8,
            255,
            4096,
            u32::MAX as u64,
            1 << 31,
            1 << 32,
            1 << 62,
            1 << 63,
            u64::MAX,
            u64::MAX - 1,
        ];
        match self.below(4) {
            0 => EDGES[self.below(EDGES.len() as u64) as usize],
            1 | 2 if !hints.is_empty() => {
                let h = hints[self.below(hints.len() as u64) as usize];
                h.wrapping_add(self.below(7)).wrapping_sub(3)
            }
            _ => self.next() >> self.below(64),
        }
    }
}
