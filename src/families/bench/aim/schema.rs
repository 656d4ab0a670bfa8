//! The AIM7-style job mix.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("aim");

crate::data::schema_core::params! {
    /// An aim case: concurrent tasks.
    Params {
        tasks: u64,
    }
}

/// Jobs per minute per task.
pub const JOBS_PER_MIN_PER_TASK: &str = "jobs_per_min_per_task";
/// The one benchmark's name (`aim.mix`).
pub const MIX: &str = "mix";
/// The most tasks a case may run.
pub const MAX_TASKS: usize = 64;
