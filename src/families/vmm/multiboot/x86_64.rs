//! The multiboot loader's x86 side: a KVM vCPU in 32-bit protected mode
//! at the image's entry, and the two ports the guest uses.

use super::{BootError, INFO, layout};
use kvm_bindings::{KVM_MAX_CPUID_ENTRIES, kvm_pit_config, kvm_regs, kvm_segment};
use kvm_ioctls::{Kvm, VcpuExit};
use std::io::Write;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

const BOOTLOADER_MAGIC: u64 = 0x2BAD_B002;
const COM1: u16 = 0x3f8;
const DEBUG_EXIT: u16 = 0xf4;

fn kvm(what: &'static str) -> impl Fn(kvm_ioctls::Error) -> BootError {
    move |source| BootError::Kvm { what, source }
}

/// A flat 32-bit segment: code (type 0xb) or data (type 3).
fn flat(selector: u16, type_: u8) -> kvm_segment {
    kvm_segment {
        base: 0,
        limit: 0xffff_ffff,
        selector,
        type_,
        present: 1,
        dpl: 0,
        db: 1,
        s: 1,
        l: 0,
        g: 1,
        avl: 0,
        unusable: 0,
        padding: 0,
    }
}

/// Boots `image` with `module` and `cmdline` in `mem_mib` MiB, sends the
/// serial port's bytes to `out`, and returns the status the guest asked
/// for at isa-debug-exit.
pub fn boot(image: &[u8], module: &[u8], cmdline: &str, mem_mib: u32, out: &mut dyn Write) -> Result<i32, BootError> {
    let (h, mem, writes) = layout(image, module, cmdline, mem_mib)?;
    let k = Kvm::new().map_err(kvm("opening /dev/kvm"))?;
    let machine = super::super::vm_with_ram(&k, mem as usize)?;
    let (vm, ram) = (&machine.vm, &machine.ram);
    for (at, bytes) in &writes {
        ram.write_slice(bytes, GuestAddress(*at)).map_err(|e| BootError::Memory(e.to_string()))?;
    }
    vm.create_irq_chip().map_err(kvm("KVM_CREATE_IRQCHIP"))?;
    vm.create_pit2(kvm_pit_config::default()).map_err(kvm("KVM_CREATE_PIT2"))?;
    let mut vcpu = vm.create_vcpu(0).map_err(kvm("KVM_CREATE_VCPU"))?;
    let cpuid = k.get_supported_cpuid(KVM_MAX_CPUID_ENTRIES).map_err(kvm("KVM_GET_SUPPORTED_CPUID"))?;
    vcpu.set_cpuid2(&cpuid).map_err(kvm("KVM_SET_CPUID2"))?;
    let mut sregs = vcpu.get_sregs().map_err(kvm("KVM_GET_SREGS"))?;
    sregs.cs = flat(0x10, 0xb);
    (sregs.ds, sregs.es, sregs.fs, sregs.gs, sregs.ss) = (flat(0x18, 3), flat(0x18, 3), flat(0x18, 3), flat(0x18, 3), flat(0x18, 3));
    (sregs.cr0, sregs.cr4, sregs.efer) = (0x11, 0, 0); // protected mode (PE, ET), paging off
    vcpu.set_sregs(&sregs).map_err(kvm("KVM_SET_SREGS"))?;
    let regs = kvm_regs { rip: h.entry_addr, rax: BOOTLOADER_MAGIC, rbx: INFO, rflags: 2, ..Default::default() };
    vcpu.set_regs(&regs).map_err(kvm("KVM_SET_REGS"))?;
    run(&mut vcpu, ram, out)
}

/// Runs the vCPU until the guest writes isa-debug-exit.
fn run(vcpu: &mut kvm_ioctls::VcpuFd, ram: &GuestMemoryMmap<()>, out: &mut dyn Write) -> Result<i32, BootError> {
    let rip = |vcpu: &kvm_ioctls::VcpuFd| vcpu.get_regs().map_or_else(|_| "?".to_string(), |r| format!("{:#x}", r.rip));
    loop {
        match vcpu.run() {
            Ok(VcpuExit::IoOut(COM1, data)) => {
                let _ = out.write_all(&data[..1]);
                if data[0] == b'\n' {
                    let _ = out.flush();
                }
            }
            Ok(VcpuExit::IoOut(DEBUG_EXIT, data)) => {
                let _ = out.flush();
                return Ok((i32::from(data[0]) << 1) | 1);
            }
            Ok(VcpuExit::IoOut(..) | VcpuExit::MmioWrite(..) | VcpuExit::Hlt) => {}
            // The line status register: transmitter empty; PCI: no device; anything else: nothing there.
            Ok(VcpuExit::IoIn(port, data)) => data.fill(if port == COM1 + 5 { 0x60 } else { 0xff }),
            Ok(VcpuExit::MmioRead(_, data)) => data.fill(0xff),
            Ok(VcpuExit::Shutdown) => return Err(BootError::Guest(format!("the guest shut down (a triple fault) near rip {}", rip(vcpu)))),
            Ok(VcpuExit::FailEntry(reason, _)) => return Err(BootError::Guest(format!("VM entry failed (hardware reason {reason:#x})"))),
            Ok(VcpuExit::InternalError) => {
                // The instruction's bytes (rip read as a physical address:
                // the loader and the kernel's image are mapped one to one).
                let mut bytes = [0u8; 4];
                let at = vcpu.get_regs().map_or(0, |r| r.rip);
                let shown = ram.read_slice(&mut bytes, GuestAddress(at)).map_or_else(
                    |_| String::new(),
                    |()| format!(", instruction bytes {}", bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")),
                );
                return Err(BootError::Guest(format!(
                    "KVM's instruction emulator failed at rip {at:#x}{shown} (kvm_pvm runs a guest that is not PVM by emulating its instructions one by one, and lacks some: x87/SSE, xgetbv)"
                )));
            }
            Ok(other) => {
                let what = format!("{other:?}");
                return Err(BootError::Guest(format!("unexpected exit {what} at rip {}", rip(vcpu))));
            }
            Err(e) if e.errno() == libc::EINTR || e.errno() == libc::EAGAIN => {}
            Err(e) => return Err(BootError::Kvm { what: "KVM_RUN", source: e }),
        }
    }
}
