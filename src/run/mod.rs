//! The run layer: the runner, rounds, the case executor, environments, the
//! spec, isolation, loads, progress, the plan, and the registry of families and
//! suites. It imports only from its own layer and the layers below it
//! (scripts/import-map.layers, checked by scripts/import-map).

pub mod env;
pub mod execute;
pub mod fleet;
pub mod isolation;
pub mod load;
pub mod plan;
pub mod prepared;
pub mod progress;
pub mod registry;
pub mod rounds;
pub mod runner;
pub mod spec;
