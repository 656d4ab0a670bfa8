//! The tests that need root, namespaces or cgroups: other users created
//! and run as, planted files, network namespaces and sshd, a throwaway
//! PostgreSQL run as its own user, loads in cgroups, a tmpfs mounted.
//! scripts/test runs this binary as root (CI is root); a test here that
//! needs root fails, saying so, when it is not (`common::needs_root`):
//! it never passes without having run.

#[path = "../common/mod.rs"]
mod common;

mod fleet;
mod hardening;
mod history;
mod io;
mod loads;
mod store;
mod store_scale;
