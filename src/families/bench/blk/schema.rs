//! Sequential block I/O.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("blk");

crate::named_enum! {
    /// O_DIRECT, or through the page cache.
    #[derive(Hash)]
    pub enum Mode { Direct = "direct", Cached = "cached" }
}

crate::data::schema_core::params! {
    /// A blk case: cache mode and block size in bytes.
    Params {
        mode: Mode,
        block: u64,
    }
}

/// MiB/s over the window's slices.
pub const THROUGHPUT: &str = "throughput";
pub const READ: &str = "read";
pub const WRITE: &str = "write";
/// The operations in table order.
pub const OPS: [&str; 2] = [READ, WRITE];

/// Details the report reads.
pub mod details {
    pub const MIB_PER_S: &str = "mib_per_s";
    pub const IOPS: &str = "iops";
    pub const CPU_MS_PER_MIB: &str = "cpu_ms_per_mib";
    pub const CPU_UTIL: &str = "cpu_util";
    /// Writes: the fdatasync after the window, seconds.
    pub const FDATASYNC_AFTER_S: &str = "fdatasync_after_s";
}
