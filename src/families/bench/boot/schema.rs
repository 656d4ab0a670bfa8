//! Boot time, measured by the host per environment.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("boot");
/// No parameters.
pub type Params = crate::data::schema_core::NoParams;
/// Seconds from the start to the first act of the environment's init.
pub const TO_INIT: &str = "to_init";
/// Seconds from the start to its first result.
pub const TO_FIRST_RESULT: &str = "to_first_result";
/// The one benchmark's name (`boot.start`).
pub const START_BENCH: &str = "start";
/// The detail listing the starts that failed after one came up.
pub const FAILED_STARTS: &str = "failed_starts";
/// The detail with every start's two times, in seconds.
pub const BOOTS: &str = "boots";
/// The detail listing the starts an environment repeated, each with
/// the faults it gave (`RESTARTED_AFTER`).
pub const RESTARTED_STARTS: &str = "restarted_starts";
/// The fact in which an environment lists the faults of the starts it
/// repeated (Xen under TCG, after a triple fault).
pub const RESTARTED_AFTER: &str = "restarted_after";
