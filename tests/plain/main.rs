//! The tests that need nothing but this build: no root, no guest, no CPU
//! of their own (what they run says not applicable where the host cannot
//! do something). One binary; its tests run side by side as threads.
//! A fast loop for one of them: `cargo test --test plain cli::`.

#[path = "../common/mod.rs"]
mod common;

mod brief;
mod catalogue;
mod cli;
mod file_writes;
mod fsafe_rule;
mod import_map;
mod kernel_counters;
mod registry;
mod report;
mod screen;
mod setup_scripts;
mod uncertainty;
mod validate_lmbench;
mod validate_scripts;
