//! lat_ctx: a token passed round a ring of processes.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("ctx");

crate::data::schema_core::params! {
    /// A ctx case: processes in the ring, working set each sums in KiB.
    Params {
        procs: u64,
        ws_kib: u64,
    }
}

/// Cycles of a context switch: a hop less the ring overhead.
pub const SWITCH: &str = "switch";
/// Cycles of one hop round the ring.
pub const HOP: &str = "hop";
/// Cycles of the ring's own work per hop, measured in one process.
pub const OVERHEAD: &str = "overhead";
/// The one benchmark's name (`ctx.ring`).
pub const RING: &str = "ring";
