//! The tests that must have the process, or a CPU, to themselves: kernel
//! event counts per operation, what a case leaves behind in the process,
//! process creation after other cases, the isolated mode (which moves
//! every other task off the measured CPU), and the guide's commands (which
//! run the isolated mode too: beside the plain tests, a case pinned to the
//! CPU it holds was refused with EINVAL). They take turns
//! (`common::one_at_a_time`), and scripts/test runs each file's tests in a
//! process of their own (what a case before leaves in the process, a grown
//! heap, would be residue), one at a time so that not even libtest starts
//! a thread while one measures: `cargo test --test serial residue:: --
//! --test-threads=1`. Its root-only test fails, saying so, when it is not
//! root.

#[path = "../common/mod.rs"]
mod common;

mod counters;
mod guide;
mod isolation;
mod proc_order;
mod residue;
