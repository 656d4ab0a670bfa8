//! HermitCore's basic-benchmark extras.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("hermit");
/// No parameters.
pub type Params = crate::data::schema_core::NoParams;
/// Cycles per operation.
pub const PER_OP: &str = "per_op";
pub const SCHED_YIELD_BUSY: &str = "sched_yield-busy";
pub const MALLOC_1M: &str = "malloc-1m";
