//! The tests that boot a guest or a sandbox: a container and QEMU/TCG
//! guests, QEMU's instruction counter, Xen, User-Mode Linux and gVisor,
//! Hermit, seL4 and GNU Mach (minutes each under TCG). Where a kernel or
//! build scripts/setup makes is missing, a test checks that the run says
//! why. scripts/test runs the Hermit ones last (`--skip hermit::`, then
//! `hermit::`), once the Hermit build it starts beside the others is ready.
//! One family of guests: `cargo test --test guests sel4::`.

#[path = "../common/mod.rs"]
mod common;

mod env;
mod hermit;
mod icount;
mod mach;
mod sel4;
mod uml_gvisor;
mod xen;
