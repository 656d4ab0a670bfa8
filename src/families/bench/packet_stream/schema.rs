//! The shared-memory packet stream against synchronous RPC.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("packet-stream");

crate::named_enum! {
    /// Batched stream, RPC over shared memory, RPC over a UNIX socket.
    #[derive(Hash)]
    pub enum Mode { Stream = "stream", RpcShm = "rpc-shm", RpcUnix = "rpc-unix" }
}

crate::named_enum! {
    /// How a sleeping side is woken ("-": by the kernel, a socket).
    #[derive(Hash)]
    pub enum Notify { Futex = "futex", Eventfd = "eventfd", Kernel = "-" }
}

crate::data::schema_core::params! {
    /// A packet-stream case: mode, packets per batch, queue depth, packet size, wake-up.
    Params {
        mode: Mode,
        batch: u64,
        depth: u64,
        bytes: u64,
        notify: Notify,
    }
}

/// Packets per second.
pub const PACKETS_PER_S: &str = "packets_per_s";
/// MiB/s of payload.
pub const MIB_PER_S: &str = "mib_per_s";
/// Notifications per packet (none for a UNIX socket).
pub const NOTIFICATIONS_PER_PACKET: &str = "notifications_per_packet";
/// Submit-to-acknowledge cycles.
pub const LATENCY: &str = "latency";
/// Source CPU ns per packet.
pub const SOURCE_CPU_PER_PACKET: &str = "source_cpu_per_packet";
/// Sink CPU ns per packet.
pub const SINK_CPU_PER_PACKET: &str = "sink_cpu_per_packet";
/// The one benchmark's name (`packet-stream.sweep`).
pub const SWEEP: &str = "sweep";
