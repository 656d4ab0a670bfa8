//! STREAM: copy, scale, add, triad.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("stream");

crate::named_enum! {
    /// One thread, or one pinned per CPU given.
    #[derive(Hash)]
    pub enum Threads { Single = "single", PerCpu = "per-cpu" }
}

crate::data::schema_core::params! {
    /// A stream case: threads, and the array size where the suite fixes it (quick).
    Params {
        threads: Threads,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        array_bytes: Option<u64>,
    }
}

/// The kernels in STREAM's order, as metric names begin.
pub const KERNELS: [&str; 4] = ["copy", "scale", "add", "triad"];
pub const TRIAD: &str = "triad";

/// A kernel's rate in MB/s (`triad_rate`).
pub fn rate(kernel: &str) -> String {
    format!("{kernel}_rate")
}

/// A kernel's time per repetition in seconds (`triad_time`).
pub fn time(kernel: &str) -> String {
    format!("{kernel}_time")
}

/// The one benchmark's name (`stream.kernels`).
pub const KERNELS_BENCH: &str = "kernels";

/// Details the report reads.
pub mod details {
    /// Bytes of each array.
    pub const ARRAY_BYTES: &str = "array_bytes";
    /// Whether the arrays are at least 4x the LLC (STREAM's rule).
    pub const MEETS_4X_LLC: &str = "meets_4x_llc";
    /// Repetitions the statistics are over (the first is not counted).
    pub const REPETITIONS_COUNTED: &str = "repetitions_counted";
}
