//! Unit tests of arena.rs.

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
