//! Hand-rolled, seedable, time-bounded fuzzing (cargo-fuzz needs a nightly
//! toolchain and an extra crate; this needs neither).
//!
//! * `header_fuzz`: valid queue files of every variant are damaged (header
//!   bytes flipped, fields set to edge values, geometry rewritten
//!   consistently, truncated, extended, replaced by random bytes, zeroed)
//!   and attached by path and by fd, as the right or a wrong variant.
//!   Attaching must fail with an error or give a handle on which a few
//!   operations run without crashing or hanging. `validate_header` is also
//!   fuzzed directly: whatever geometry it accepts fits the backing size.
//! * `scribble_fuzz`: one or two threads run random operations (single,
//!   batch, blocking with a 1 ms deadline, peek, clear, stats, size) on a
//!   queue while another thread writes edge and random values into its
//!   header words (state copies, counters, lock, copy switch), its slots
//!   and its arena, through a raw pointer into the mapping. Then the
//!   scribbler stops and the operations go on for a while. Nothing may
//!   crash or hang.
//!
//! Every case runs in a forked child (a batch of cases per child), so a
//! crash (any signal) or a hang (no operation finished for
//! `DQS_FUZZ_HANG_SECS`, default 3 s) is caught, reported with the seed of
//! the exact case and the operation it was in, and the run goes on.
//!
//! ```text
//! cargo test --release --test fuzz                      # ~1 s per target
//! DQS_FUZZ_SECS=600 cargo test --release --test fuzz -- --nocapture
//! DQS_FUZZ_SEED=1234 ...                                # repeat a run
//! DQS_FUZZ_CASE=0x1f2e... cargo test --test fuzz scribble -- --nocapture
//!                                                       # one case, in-process
//! ```
//!
//! The files: `../common/rng.rs` (the seeded generator, shared with the
//! other tests), `harness.rs` (the forked children, the hang detector and
//! the report), `ops.rs` (random
//! operations on a queue), `header.rs` and `scribble.rs` (the two targets).

mod harness;
mod header;
mod lease;
mod ops;
#[path = "../common/rng.rs"]
mod rng;
mod scribble;
