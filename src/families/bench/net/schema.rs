//! Network throughput and request/response.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("net");

crate::named_enum! {
    /// Loopback, or a veth pair between two namespaces.
    #[derive(Hash)]
    pub enum Path { Loopback = "loopback", Veth = "veth" }
}

crate::data::schema_core::params! {
    /// A net case: the path and the payload per message in bytes.
    Params {
        path: Path,
        bytes: u64,
    }
}

/// MiB/s at the receiver, over the window's slices.
pub const THROUGHPUT: &str = "throughput";
/// Cycles of a request/response round trip.
pub const RTT: &str = "rtt";
pub const UDP: &str = "udp";
pub const TCP: &str = "tcp";
pub const TCP_RR: &str = "tcp-rr";
/// UDP's largest payload, which shares TCP's 64 KiB row.
pub const UDP_MAX_BYTES: u64 = 65507;
pub const TCP_MAX_BYTES: u64 = 65536;

/// Details the report reads.
pub mod details {
    /// Payload MiB/s over the whole window.
    pub const MIB_PER_S: &str = "mib_per_s";
    /// Messages per second at the receiver.
    pub const MSGS_PER_S: &str = "msgs_per_s";
    /// UDP datagrams lost, as a fraction of those sent.
    pub const UDP_LOSS: &str = "udp_loss";
    pub const SENDER_CPU_MS_PER_MIB: &str = "sender_cpu_ms_per_mib";
    pub const RECEIVER_CPU_MS_PER_MIB: &str = "receiver_cpu_ms_per_mib";
    /// Request/response transactions in the window.
    pub const TRANSACTIONS: &str = "transactions";
}
