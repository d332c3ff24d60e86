//! Lease calls mixed into the operations (format 6).

use data_queue_shared::LeaseError;

use crate::harness::Status;
use crate::rng::Rng;

/// One lease call: a `pop_lease` (with or without a deadline), an ack or
/// a release of a lease taken before (or of a made-up id), or a look at
/// the table.
pub(crate) fn lease_op(
    rng: &mut Rng,
    st: &Status,
    leases: &mut Vec<u64>,
    pop: impl Fn(Option<f64>) -> Result<Option<u64>, LeaseError>,
    end: impl Fn(u64, bool) -> Result<bool, LeaseError>,
    look: impl Fn() -> u64,
) {
    match rng.below(4) {
        0 | 1 => {
            st.enter(22);
            let t = rng.chance(30).then(|| 0.001 * rng.below(3) as f64);
            if let Ok(Some(l)) = pop(t) {
                leases.push(l);
            }
        }
        2 => {
            st.enter(23);
            let l = if !leases.is_empty() && rng.chance(80) {
                leases.swap_remove(rng.below(leases.len() as u64) as usize)
            } else {
                rng.next()
            };
            let _ = end(l, rng.chance(50));
        }
        _ => {
            st.enter(10);
            look();
        }
    }
}
