//! oscycles' own VMM on aarch64: n/a. Its guests are x86 (real and long
//! mode, port I/O, cpuid, hlt) and so is its vCPU's set-up; an aarch64
//! guest (MMIO and HVC exits) is not written.

use super::{Mode, VmError};
use vm_memory::GuestMemoryMmap;

/// No guest for aarch64: never written to a VM ([`supported`] refuses first).
pub const GUEST16: &[u8] = &[];
/// Likewise.
pub const GUEST64: &[u8] = &[];

/// Why the VMM does not run here.
pub fn supported() -> Result<(), VmError> {
    Err(VmError::NotX86("aarch64"))
}

/// Never reached: [`supported`] refuses before a vCPU exists.
pub fn done(_vcpu: &kvm_ioctls::VcpuFd, _n: u32) -> (u32, u64) {
    (0, 0)
}

/// Never reached, likewise.
pub fn set_up_vcpu(_vcpu: &mut kvm_ioctls::VcpuFd, _mem: &GuestMemoryMmap<()>, _mode: Mode) -> Result<(), VmError> {
    supported()
}
