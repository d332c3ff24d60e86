//! Unit tests of layout.rs.

use super::*;

#[test]
fn capacity_rounds_up_to_power_of_two() {
    assert_eq!(normalize_capacity(1), Some(2));
    assert_eq!(normalize_capacity(2), Some(2));
    assert_eq!(normalize_capacity(3), Some(4));
    assert_eq!(normalize_capacity(1000), Some(1024));
    assert_eq!(normalize_capacity(MAX_CAPACITY), Some(MAX_CAPACITY));
}

#[test]
fn absurd_capacities_are_refused() {
    assert_eq!(normalize_capacity(0), None);
    assert_eq!(normalize_capacity(MAX_CAPACITY + 1), None);
    assert_eq!(normalize_capacity(1 << 50), None);
    assert_eq!(normalize_capacity(u64::MAX), None);
}

#[test]
fn geometry_of_int_family_is_header_plus_slots() {
    let g = Geometry::compute_with(Variant::Int64, 1024, 0, 0, 0).unwrap();
    // Header, slots, then the ring's 32 intent records (format 7).
    assert_eq!(g.recs_off, 320 + 1024 * 16);
    assert_eq!(g.total_size, 320 + 1024 * 16 + 32 * 64);
    let g = Geometry::compute_with(Variant::Int16, 8, 0, 0, 0).unwrap();
    assert_eq!(g.recs_off, 384);
    assert_eq!(g.total_size, 384 + 32 * 64);
    // The default lease table (format 8): a 192-byte head, 64 records
    // of 128 bytes, 64 dead-letter records of 64 bytes.
    let g = Geometry::compute(Variant::Int16, 8, 0).unwrap();
    assert_eq!(g.lease_off, 384 + 32 * 64);
    assert_eq!(g.total_size, 384 + 32 * 64 + 192 + 64 * 128 + 64 * 64);
    assert_eq!(g.max_dead, 64);
    assert_eq!(g.arena_off, 0);
}

#[test]
fn geometry_overflow_is_none() {
    assert!(Geometry::compute(Variant::Int64, u64::MAX / 2, 0).is_none());
    assert!(Geometry::compute(Variant::Str, 2, u64::MAX).is_none());
}
