//! memcpy by size and alignment.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("memcpy");

crate::data::schema_core::params! {
    /// A memcpy case: bytes copied, source and destination offset from a page boundary.
    Params {
        bytes: u64,
        src_off: u64,
        dst_off: u64,
    }
}

/// MB/s.
pub const BANDWIDTH: &str = "bandwidth";
/// Cycles per copy.
pub const PER_COPY: &str = "per_copy";
/// The implementations in table order (bench::memcpy::Impl's names).
pub const IMPLS: [&str; 3] = ["libc", "bytes", "words"];
pub const LIBC: &str = "libc";
