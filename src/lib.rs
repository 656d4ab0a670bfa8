//! oscycles: what every layer between a program and the hardware costs, in
//! CPU cycles. The code is a folder per layer, top to bottom: app (the
//! command line), present (reports), run (where and under what), families
//! (what is measured, a folder each, with its table), view (what tables
//! are made of), data (run documents, the store), measure (the harness, the
//! clock), analysis (statistics), base (names, sources); each imports only
//! from its own layer or below (scripts/import-map).

pub mod analysis;
pub mod app;
pub mod base;
pub mod data;
pub mod families;
pub mod measure;
pub mod present;
pub mod run;
pub mod view;

// Each module by its own name (`crate::runner`, `oscycles::report`), wherever
// its layer keeps it.
pub use analysis::{sequential, stats, uncertainty};
pub use app::{catalogue, cli};
pub use base::{fsafe, named, sources};
pub use data::{compare, db, results, schema_core, store};
pub use families::bench::schema;
pub use families::{bench, published, vmm};
pub use measure::{arch, cgroup, clock, counters, harness, host, placement, watchdog};
pub use present::{doctor, fleet, report};
pub use run::{env, execute, isolation, load, plan, progress, registry, rounds, runner, spec};
pub use view::tabular;
