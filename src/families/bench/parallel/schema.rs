//! Every CPU busy at once.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("parallel");

crate::data::schema_core::params! {
    /// A parallel case: instances, one pinned per CPU.
    Params {
        instances: u64,
    }
}

/// Cycles per operation, every batch of every instance.
pub const PER_OP: &str = "per_op";
/// The operations in table order (bench::parallel::ParOp's names).
pub const OPS: [&str; 4] = ["getppid", "pipe", "futex", "eventfd"];
