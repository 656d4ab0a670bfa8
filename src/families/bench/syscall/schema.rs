//! System calls, one pinned thread, one case per call.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("syscall");
/// No parameters.
pub type Params = crate::data::schema_core::NoParams;
/// Cycles per call.
pub const PER_CALL: &str = "per_call";
pub const GETPID: &str = "getpid";
pub const GETPPID: &str = "getppid";
/// lat_syscall null: getppid() through the C library.
pub const NULL: &str = "null";
pub const SCHED_YIELD: &str = "sched_yield";
