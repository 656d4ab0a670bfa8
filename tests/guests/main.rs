//! The tests that boot a guest or a sandbox: a container and QEMU/TCG
//! guests, QEMU's instruction counter, Xen, User-Mode Linux and gVisor,
//! Hermit, seL4 (ia32 and ARM), GNU Mach and Linux on ARM (qemu-arm64; minutes each under
//! TCG), and oscycles built for aarch64 under qemu-aarch64. A test that boots
//! what a set-up script makes is `#[ignore = "needs scripts/setup-X"]` (and
//! in this binary #[ignore] means only that): scripts/test runs them with
//! `--include-ignored` once the set-up succeeded, the Hermit ones last
//! (`--skip hermit::`, then `hermit::`), once the Hermit build it starts
//! beside the others is ready; a test with a missing kernel checks that the
//! run says why. One family of guests: `cargo test --test guests sel4:: --
//! --include-ignored`.

#[path = "../common/mod.rs"]
mod common;

mod aarch64;
mod env;
mod hermit;
mod icount;
mod mach;
mod qemu_arm64;
mod sel4;
mod sel4_arm;
mod uml_gvisor;
mod xen;
