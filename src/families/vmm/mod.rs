//! oscycles' own minimal KVM guest (no QEMU): the price of each kind of VM
//! exit, measured the way kvm-unit-tests' vmexit table does, through
//! /dev/kvm with the rust-vmm crates (kvm-ioctls, kvm-bindings, vm-memory).
//!
//! The guest is a few hundred bytes of code (src/families/bench/microvm/guest/microvm64.S for long mode,
//! entered directly with identity-mapped 2 MiB pages; src/families/bench/microvm/guest/microvm16.S for
//! real mode, the fallback where long mode cannot be entered), assembled by
//! build.rs and loaded at 0x1000. For each run the VMM writes the
//! case and the iteration count into guest memory; the guest loops, timing
//! itself with rdtsc, keeps a checksum the VMM verifies, and says done on a
//! port. The VMM counts every exit that reaches it and times its own round
//! trips. Every run gets a fresh VM and fresh guest memory, so the page-touch
//! case meets untouched host pages.

pub mod kvm_backend;
pub mod multiboot;

use kvm_bindings::kvm_userspace_memory_region;
use kvm_ioctls::{Kvm, VcpuExit};
use std::time::Duration;
use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend, GuestMemoryMmap};

// The guests are x86 and so is setting up the vCPU: one file per architecture.
#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
use aarch64 as vcpu;
#[cfg(target_arch = "x86_64")]
mod x86_64;
pub use vcpu::{GUEST16, GUEST64};
use vcpu::{done, set_up_vcpu};
#[cfg(target_arch = "x86_64")]
use x86_64 as vcpu;

/// How the guest runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Long,
    /// Long mode at privilege level 3 (guest user mode), IOPL 3 so port I/O still works.
    LongUser,
    Real,
}

impl Mode {
    pub fn describe(self) -> &'static str {
        match self {
            Mode::Long => "64-bit long mode, identity-mapped 2 MiB pages",
            Mode::LongUser => "64-bit long mode at CPL 3 (guest user mode, IOPL 3)",
            Mode::Real => "real mode (16-bit code, 32-bit registers)",
        }
    }
}

/// The mode this host's KVM runs the guest in: long mode if an empty run
/// there completes, else real mode, with the reason long mode failed.
pub fn mode() -> (Mode, Option<String>) {
    static MODE: std::sync::OnceLock<(Mode, Option<String>)> = std::sync::OnceLock::new();
    MODE.get_or_init(|| match run_in(Mode::Long, GuestCase::Empty, 10, Duration::from_secs(3), &mut || {}) {
        Ok(_) => (Mode::Long, None),
        Err(e) => (Mode::Real, Some(format!("long mode could not be entered: {e}"))),
    })
    .clone()
}

const CODE: u64 = 0x1000;
const PARAMS: u64 = 0x500;
const RESULTS: u64 = 0x600;
/// Guest RAM: 640 KiB from 0; 0xd0000 is left without a slot for the MMIO case.
const RAM: usize = 0xa0000;
/// The page-touch case stores once into each page from here to the end of RAM.
pub const TOUCH_BASE: u64 = 0x20000;
pub const TOUCH_PAGES: u32 = ((RAM as u64 - TOUCH_BASE) / 4096) as u32;
/// Bytes the read case reads per iteration.
pub const READ_BYTES: u64 = 64 << 10;

const PORT_MARKER: u16 = 0xf2;
const PORT_CASE: u16 = 0xe0;
const PORT_DONE: u16 = 0xf1;
const PORT_EXCEPTION: u16 = 0xf3;
/// The guest's exception handler (src/families/bench/microvm/guest/microvm16.S), where the IVT points.
const EXCEPTION_HANDLER: u16 = 0x1004;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestCase {
    Empty = 0,
    Rdtsc = 1,
    Cpuid = 2,
    Hlt = 3,
    Pio = 4,
    Mmio = 5,
    Vmcall = 6,
    Vmmcall = 7,
    Touch = 8,
    Read = 9,
    /// Tests: a guest that never finishes.
    Forever = 98,
    /// Tests: a guest that triple-faults.
    Triple = 99,
}

/// Exits that reached the VMM, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exits {
    pub pio: u64,
    pub mmio: u64,
    pub hlt: u64,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    /// Guest-side cycles over all iterations (its own rdtsc).
    pub guest_cycles: u64,
    /// VMM-side cycles from the first KVM_RUN after the marker to the done exit.
    pub vmm_cycles: u64,
    pub exits: Exits,
    /// Cycles from KVM_CREATE_VM to the guest's marker exit (its first instruction).
    pub create_to_marker: u64,
}

/// Whether this process may use /dev/kvm; the reason if not.
pub fn kvm_usable() -> Result<(), VmError> {
    vcpu::supported()?;
    std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").map(|_| ()).map_err(VmError::Device)
}

/// The checksum a run of `n` iterations must leave: n(n+1)/2 mod 2^32.
pub fn expected_checksum(n: u32) -> u32 {
    (u64::from(n) * (u64::from(n) + 1) / 2) as u32
}

fn err(what: &'static str) -> impl Fn(kvm_ioctls::Error) -> VmError {
    move |source| VmError::Kvm { what, source }
}

/// Why a VM could not be made or its guest did not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    #[error("/dev/kvm: {0}")]
    Device(#[source] std::io::Error),
    #[error("{what}: {source}")]
    Kvm { what: &'static str, source: kvm_ioctls::Error },
    #[error("guest memory: {0}")]
    Memory(String),
    #[error("writing page tables: {0}")]
    PageTables(#[source] vm_memory::GuestMemoryError),
    #[error("writing guest memory: {0}")]
    Write(#[source] vm_memory::GuestMemoryError),
    #[error("reading guest memory: {0}")]
    Read(#[source] vm_memory::GuestMemoryError),
    #[error("{0}")]
    Checksum(#[source] vm_memory::GuestMemoryError),
    #[error("{0}")]
    Watchdog(#[source] std::io::Error),
    #[error("the guest took an exception after {done} of {n} iterations (the layer under /dev/kvm injected a fault)")]
    Exception { done: u32, n: u32 },
    #[error("the guest shut down (a triple fault)")]
    TripleFault,
    #[error("VM entry failed (hardware reason {0:#x})")]
    FailEntry(u64),
    #[error("KVM reported an internal error running the guest")]
    Internal,
    /// The exit, as its Debug text.
    #[error("unexpected exit: {0}")]
    UnexpectedExit(String),
    #[error("interrupted")]
    Interrupted,
    #[error("the guest did not finish within {secs} s (stuck at rip {rip:#x} after {done} of {n} iterations)")]
    Stuck { secs: f64, rip: u64, done: u32, n: u32 },
    #[error("the guest's checksum is {got:#x}, expected {expected:#x}: it did not run its loop as written")]
    BadChecksum { got: u32, expected: u32 },
    #[error("oscycles' own VMM runs x86 guests only: n/a on {0}")]
    NotX86(&'static str),
}

/// A VM and its RAM. The VM is dropped before the memory it maps (fields
/// drop in their order), so keep the two together.
pub struct VmWithRam {
    pub vm: kvm_ioctls::VmFd,
    pub ram: GuestMemoryMmap<()>,
}

/// A fresh VM with `bytes` of RAM from guest address 0, in one memory slot.
pub fn vm_with_ram(kvm: &Kvm, bytes: usize) -> Result<VmWithRam, VmError> {
    let vm = kvm.create_vm().map_err(|source| VmError::Kvm { what: "KVM_CREATE_VM", source })?;
    let ram = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), bytes)]).map_err(|e| VmError::Memory(e.to_string()))?;
    let host = ram.get_host_address(GuestAddress(0)).map_err(|e| VmError::Memory(e.to_string()))?;
    let region =
        kvm_userspace_memory_region { slot: 0, guest_phys_addr: 0, memory_size: bytes as u64, userspace_addr: host as u64, flags: 0 };
    // SAFETY: the region maps `ram`, which the returned VmWithRam keeps and
    // drops after the VM.
    unsafe { vm.set_user_memory_region(region) }.map_err(|source| VmError::Kvm { what: "KVM_SET_USER_MEMORY_REGION", source })?;
    Ok(VmWithRam { vm, ram })
}

/// Runs `case` for `n` iterations in a fresh VM; the reason as a sentence
/// if the VM cannot be made, the guest faults, or it does not finish within
/// `timeout`.
pub fn run(case: GuestCase, n: u32, timeout: Duration) -> Result<Outcome, VmError> {
    run_with(case, n, timeout, &mut || {})
}

/// As `run`, calling `on_marker` when the guest's first instruction reports.
pub fn run_with(case: GuestCase, n: u32, timeout: Duration, on_marker: &mut dyn FnMut()) -> Result<Outcome, VmError> {
    run_in(mode().0, case, n, timeout, on_marker)
}

pub fn run_in(mode: Mode, case: GuestCase, n: u32, timeout: Duration, on_marker: &mut dyn FnMut()) -> Result<Outcome, VmError> {
    vcpu::supported()?;
    let kvm = Kvm::new().map_err(err("/dev/kvm"))?;
    let t_create = crate::measure::arch::rdtscp();
    let machine = vm_with_ram(&kvm, RAM)?;
    let (vm, mem) = (&machine.vm, &machine.ram);
    let w = |r: Result<(), vm_memory::GuestMemoryError>| r.map_err(VmError::Write);
    w(mem.write_slice(if mode == Mode::Real { GUEST16 } else { GUEST64 }, GuestAddress(CODE)))?;
    w(mem.write_obj(case as u32, GuestAddress(PARAMS)))?;
    w(mem.write_obj(n, GuestAddress(PARAMS + 4)))?;
    // Real-mode IVT: vectors 0-31 (faults and exceptions) go to the handler, segment 0.
    for v in 0..32u64 {
        w(mem.write_obj(u32::from(EXCEPTION_HANDLER), GuestAddress(v * 4)))?;
    }
    let mut vcpu = vm.create_vcpu(0).map_err(err("KVM_CREATE_VCPU"))?;
    set_up_vcpu(&mut vcpu, mem, mode)?;

    let _deadline = crate::measure::watchdog::Deadline::arm(timeout).map_err(VmError::Watchdog)?;
    let mut exits = Exits::default();
    let (mut marker, mut vmm_start) = (None, 0u64);
    loop {
        match vcpu.run() {
            Ok(VcpuExit::IoOut(PORT_MARKER, _)) => {
                let now = crate::measure::arch::rdtscp();
                marker = Some(now - t_create);
                on_marker();
                vmm_start = crate::measure::arch::rdtscp();
            }
            Ok(VcpuExit::IoOut(PORT_CASE, _)) => exits.pio += 1,
            Ok(VcpuExit::IoOut(PORT_DONE, _)) => break,
            Ok(VcpuExit::IoOut(PORT_EXCEPTION, _)) => {
                return Err(VmError::Exception { done: done(&vcpu, n).0, n });
            }
            Ok(VcpuExit::MmioWrite(..)) => exits.mmio += 1,
            Ok(VcpuExit::Hlt) => exits.hlt += 1,
            Ok(VcpuExit::Shutdown) => return Err(VmError::TripleFault),
            Ok(VcpuExit::FailEntry(reason, _)) => return Err(VmError::FailEntry(reason)),
            Ok(VcpuExit::InternalError) => return Err(VmError::Internal),
            Ok(other) => return Err(VmError::UnexpectedExit(format!("{other:?}"))),
            Err(e) if e.errno() == libc::EINTR => {
                if crate::measure::watchdog::check().is_err() {
                    return Err(if crate::measure::watchdog::interrupted().is_some() {
                        VmError::Interrupted
                    } else {
                        let (done, rip) = done(&vcpu, n);
                        VmError::Stuck { secs: timeout.as_secs_f64(), rip, done, n }
                    });
                }
            }
            Err(source) => return Err(VmError::Kvm { what: "KVM_RUN", source }),
        }
    }
    let vmm_cycles = crate::measure::arch::rdtscp() - vmm_start;
    let r = |a: u64| mem.read_obj::<u64>(GuestAddress(a)).map_err(VmError::Read);
    let (t0, t1) = (r(RESULTS)?, r(RESULTS + 8)?);
    let checksum = mem.read_obj::<u32>(GuestAddress(RESULTS + 16)).map_err(VmError::Checksum)?;
    if checksum != expected_checksum(n) {
        return Err(VmError::BadChecksum { got: checksum, expected: expected_checksum(n) });
    }
    Ok(Outcome { guest_cycles: t1.wrapping_sub(t0), vmm_cycles, exits, create_to_marker: marker.unwrap_or(0) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The test fails, saying why, where KVM cannot be used (they are `#[ignore]`d:
    /// scripts/test runs them as root where /dev/kvm is, and says so where it is not).
    fn needs_kvm() {
        if let Err(e) = kvm_usable() {
            panic!("this test needs a usable KVM: {e}");
        }
    }

    const T: Duration = Duration::from_secs(10);

    #[test]
    #[ignore = "needs root and /dev/kvm"]
    fn the_guest_runs_to_completion_with_the_right_checksum() {
        needs_kvm();
        for n in [1, 7, 1000] {
            let o = run(GuestCase::Empty, n, T).unwrap();
            assert_eq!(o.exits, Exits::default());
            assert!(o.guest_cycles > 0 && o.create_to_marker > 0);
        }
        assert_eq!(expected_checksum(3), 6);
        assert_eq!(expected_checksum(100_000), 705_082_704, "wraps modulo 2^32");
    }

    #[test]
    #[ignore = "needs root and /dev/kvm"]
    fn each_exit_kind_reaches_the_vmm_the_expected_number_of_times_in_both_modes() {
        needs_kvm();
        let mut modes = vec![Mode::Real];
        if mode().0 == Mode::Long {
            modes.extend([Mode::Long, Mode::LongUser]);
        }
        let go = |m: Mode, c: GuestCase, n: u32| run_in(m, c, n, T, &mut || {}).unwrap_or_else(|e| panic!("{m:?} {c:?}: {e}")).exits;
        for m in modes {
            assert_eq!(go(m, GuestCase::Pio, 37), Exits { pio: 37, ..Default::default() }, "{m:?}");
            assert_eq!(go(m, GuestCase::Mmio, 11), Exits { mmio: 11, ..Default::default() }, "{m:?}");
            if m != Mode::LongUser {
                // hlt is privileged: at CPL 3 it faults.
                assert_eq!(go(m, GuestCase::Hlt, 5), Exits { hlt: 5, ..Default::default() }, "{m:?}");
            }
            // Handled in the kernel: nothing but the end reaches the VMM.
            assert_eq!(go(m, GuestCase::Cpuid, 50), Exits::default(), "{m:?}");
            assert_eq!(go(m, GuestCase::Touch, TOUCH_PAGES), Exits::default(), "{m:?}");
            assert_eq!(go(m, GuestCase::Read, 2), Exits::default(), "{m:?}");
        }
    }

    #[test]
    #[ignore = "needs root and /dev/kvm"]
    fn a_triple_fault_and_an_endless_guest_are_reported_within_the_timeout() {
        needs_kvm();
        // Hardware KVM shuts the guest down; a layer that emulates real mode
        // may vector the interrupt through the IVT regardless of the limit.
        let e = run(GuestCase::Triple, 1, T).unwrap_err().to_string();
        assert!(e.contains("triple fault") || e.contains("took an exception"), "{e}");
        let t = std::time::Instant::now();
        let e = run(GuestCase::Forever, 1, Duration::from_millis(500)).unwrap_err().to_string();
        assert!(e.contains("did not finish within 0.5 s (stuck at rip 0x"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
