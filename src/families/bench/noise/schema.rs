//! OS noise: FWQ.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("noise");

crate::data::schema_core::params! {
    /// A noise case: the work quantum in microseconds (calibrated to
    /// decrements at the start of the case) and the quanta timed.
    Params {
        quantum_us: u64,
        samples: u64,
    }
}

/// Cycles of one quantum.
pub const SAMPLE: &str = "sample";
/// The one benchmark's name (`noise.fwq`).
pub const FWQ: &str = "fwq";

/// Details the report reads.
pub mod details {
    pub use crate::data::schema_core::attribution::ATTRIBUTION;
    /// The fastest quantum, cycles.
    pub const MIN_CYCLES: &str = "min_cycles";
    /// The largest delta to the minimum, cycles.
    pub const MAX_DELTA_CYCLES: &str = "max_delta_cycles";
    pub const P99_DELTA_CYCLES: &str = "p99_delta_cycles";
    pub const P999_DELTA_CYCLES: &str = "p999_delta_cycles";
    /// The fraction of time lost to noise.
    pub const LOST_FRACTION: &str = "lost_fraction";
    /// Deltas to the minimum in log2 buckets.
    pub const DELTA_HISTOGRAM_LOG2: &str = "delta_histogram_log2";
    /// Present when the case's time ran out before its quanta: a sentence
    /// (the timeout, quanta measured of those planned, seconds taken).
    pub const CUT: &str = "cut";
}
