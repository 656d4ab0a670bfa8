//! The measure layer: how it is measured, the harness, the clock, arch
//! primitives, placement, the watchdog, kernel counters, marks for a counting QEMU plugin, host facts, cgroups, and the
//! run's private directory (scratch).
//! It imports only from its own layer and the layers below it
//! (scripts/import-map.layers, checked by scripts/import-map).

pub mod arch;
pub mod cgroup;
pub mod checks;
pub mod clock;
pub mod counters;
pub mod harness;
pub mod host;
pub mod marks;
pub mod owner;
pub mod placement;
pub mod scratch;
pub mod watchdog;
