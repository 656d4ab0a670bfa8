//! The x86 side of oscycles' own VMM: the guests (assembled by build.rs)
//! and the vCPU's set-up for them.

use super::{CODE, Mode, VmError, err};
use kvm_bindings::kvm_regs;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

/// The real-mode guest, a flat binary linked at 0x1000.
pub const GUEST16: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/microvm16.bin"));
/// The long-mode guest, likewise.
pub const GUEST64: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/microvm64.bin"));

/// Page tables for long mode: PML4, PDPT, PD (one 2 MiB page at 0).
const PML4: u64 = 0x9000;

/// The VMM runs here.
#[inline(always)]
pub fn supported() -> Result<(), VmError> {
    Ok(())
}

/// Iterations completed (the loop counter counts down in rbp) and where the guest is.
pub fn done(vcpu: &kvm_ioctls::VcpuFd, n: u32) -> (u32, u64) {
    match vcpu.get_regs() {
        Ok(r) => (n - (r.rbp as u32).min(n), r.rip),
        Err(_) => (0, 0),
    }
}

/// Sets the vCPU up for long mode: paging on with identity-mapped 2 MiB
/// pages over the first GiB, 64-bit code segment, flat data segments.
fn long_mode(mem: &GuestMemoryMmap<()>, sregs: &mut kvm_bindings::kvm_sregs, user: bool) -> Result<(), VmError> {
    let w = |v: u64, a: u64| mem.write_obj(v, GuestAddress(a)).map_err(VmError::PageTables);
    let u = if user { 4 } else { 0 }; // the user bit, for a guest at CPL 3
    w((PML4 + 0x1000) | 3 | u, PML4)?; // PML4[0] -> PDPT
    w((PML4 + 0x2000) | 3 | u, PML4 + 0x1000)?; // PDPT[0] -> PD
    for i in 0..512u64 {
        w((i << 21) | 0x83 | u, PML4 + 0x2000 + i * 8)?; // present, writable, 2 MiB page
    }
    sregs.cr3 = PML4;
    sregs.cr4 |= 1 << 5; // PAE
    sregs.cr0 |= 1 | (1 << 31); // PE, PG
    sregs.efer |= (1 << 8) | (1 << 10); // LME, LMA
    let code = kvm_bindings::kvm_segment {
        base: 0,
        limit: 0xffff_ffff,
        selector: 8,
        type_: 11,
        present: 1,
        dpl: 0,
        db: 0,
        s: 1,
        l: 1,
        g: 1,
        ..Default::default()
    };
    let mut data = kvm_bindings::kvm_segment { selector: 16, type_: 3, db: 1, l: 0, ..code };
    let mut code = code;
    if user {
        (code.dpl, code.selector, data.dpl, data.selector) = (3, 0x1b, 3, 0x23);
    }
    sregs.cs = code;
    for s in [&mut sregs.ds, &mut sregs.es, &mut sregs.ss, &mut sregs.fs, &mut sregs.gs] {
        *s = data;
    }
    Ok(())
}

/// The vCPU's segments and registers for `mode`: page tables and long-mode
/// segments, or flat real mode; execution starts at CODE.
pub fn set_up_vcpu(vcpu: &mut kvm_ioctls::VcpuFd, mem: &GuestMemoryMmap<()>, mode: Mode) -> Result<(), VmError> {
    let mut sregs = vcpu.get_sregs().map_err(err("KVM_GET_SREGS"))?;
    match mode {
        Mode::Long | Mode::LongUser => long_mode(mem, &mut sregs, mode == Mode::LongUser)?,
        Mode::Real => {
            for s in [&mut sregs.cs, &mut sregs.ds, &mut sregs.es, &mut sregs.ss, &mut sregs.fs, &mut sregs.gs] {
                s.base = 0;
                s.selector = 0;
            }
        }
    }
    vcpu.set_sregs(&sregs).map_err(err("KVM_SET_SREGS"))?;
    let iopl3 = if mode == Mode::LongUser { 3 << 12 } else { 0 };
    vcpu.set_regs(&kvm_regs { rip: CODE, rflags: 2 | iopl3, ..Default::default() }).map_err(err("KVM_SET_REGS"))?;
    Ok(())
}
