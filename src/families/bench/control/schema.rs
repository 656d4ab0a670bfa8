//! The 1000 us control loop.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("control");

crate::data::schema_core::params! {
    /// A control case: wake-ups timed.
    Params {
        samples: u64,
    }
}

/// Cycles from a deadline to the wake-up.
pub const DEVIATION: &str = "deviation";
pub const NANOSLEEP: &str = "nanosleep";

/// Details the report reads.
pub mod details {
    pub use crate::data::schema_core::attribution::ATTRIBUTION;
    /// The period in cycles.
    pub const PERIOD_CYCLES: &str = "period_cycles";
    /// Deadlines passed unmet.
    pub const OVERRUNS: &str = "overruns";
    /// Largest interval between wake-ups above the period, cycles.
    pub const PERIOD_DEV_MAX_CYCLES: &str = "period_dev_max_cycles";
    /// Largest interval between wake-ups below the period (negative), cycles.
    pub const PERIOD_DEV_MIN_CYCLES: &str = "period_dev_min_cycles";
    /// |period deviation| in log2 buckets.
    pub const PERIOD_DEV_ABS_HISTOGRAM_LOG2: &str = "period_dev_abs_histogram_log2";
    /// The latest wake-up after its deadline, cycles.
    pub const LATE_MAX_CYCLES: &str = "late_max_cycles";
}
