//! oscycles: what every layer between a program and the hardware costs, in
//! CPU cycles. Layers: arch/clock/harness/placement (measure) -> bench
//! (what to measure) -> runner (where, under what) -> store (keep) -> report
//! (show).

pub mod arch;
pub mod bench;
pub mod catalogue;
pub mod cgroup;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod counters;
pub mod db;
pub mod doctor;
pub mod env;
pub mod execute;
pub mod fleet;
pub mod harness;
pub mod host;
pub mod isolation;
pub mod load;
pub mod microvm;
pub mod named;
pub mod placement;
pub mod plan;
pub mod progress;
pub mod registry;
pub mod report;
pub mod results;
pub mod rounds;
pub mod runner;
pub mod schema;
pub mod sources;
pub mod spec;
pub mod stats;
pub mod store;
pub mod uncertainty;
pub mod watchdog;
