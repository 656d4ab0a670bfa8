//! VM exits in oscycles' own KVM guest.
//! Its section of the schema: its parameters, metric and detail names, ids.

crate::data::schema_core::family!("microvm");

crate::data::schema_core::params! {
    /// A microvm case: the guest's privilege level (0 kernel, 3 user).
    Params {
        cpl: u64,
    }
}

/// The guest's own cycles per operation.
pub const GUEST: &str = "guest";
/// Cycles of a VM start (the `start` benchmark).
pub const START: &str = "start";
/// Cycles of an exit's round trip through the VMM.
pub const VMM_ROUND_TRIP: &str = "vmm_round_trip";
pub const PIO: &str = "pio";

/// Details the report reads.
pub mod details {
    /// The virtualisation layer under /dev/kvm.
    pub const LAYER: &str = "layer";
    /// The guest's mode ("64-bit long mode at CPL 0"...).
    pub const GUEST_MODE: &str = "guest_mode";
    /// Iterations per run.
    pub const ITERATIONS: &str = "iterations";
    /// What native operation the exit is compared with.
    pub const NATIVE_EQUIVALENT: &str = "native_equivalent";
    /// That operation's cycles natively.
    pub const NATIVE_CYCLES: &str = "native_cycles";
}
