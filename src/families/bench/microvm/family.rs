//! The microvm family: one case per exit kind, each run in fresh VMs, with
//! iterations calibrated until the guest's own timing is long enough; and
//! the VM start (KVM_CREATE_VM to the guest's first instruction).

use crate::analysis::stats::Summary;
use crate::base::named::Named;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::microvm::table;
use crate::families::bench::schema::{self, microvm::details as keys};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::sampling::{pinned, points, summary_of};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale, Unsupported, Venue};
use crate::families::vmm::{self, GuestCase, kvm_backend};
use serde_json::json;
use std::time::Duration;

crate::named_enum! {
    pub enum MicroOp {
        Empty = "empty",
        Rdtsc = "rdtsc",
        Cpuid = "cpuid",
        Hlt = "hlt",
        Pio = schema::microvm::PIO,
        Mmio = "mmio",
        Vmcall = "vmcall",
        Vmmcall = "vmmcall",
        Touch = "touch",
        Read = "read",
        Start = "start",
    }
}

impl MicroOp {
    pub fn description(self) -> &'static str {
        match self {
            MicroOp::Empty => "the guest's empty loop iteration (its baseline)",
            MicroOp::Rdtsc => "rdtsc in the guest (no exit where the TSC is not trapped)",
            MicroOp::Cpuid => "cpuid: an exit handled in the kernel",
            MicroOp::Hlt => "hlt with interrupts off: an exit to the VMM (no in-kernel irqchip)",
            MicroOp::Pio => "a port-I/O write the VMM handles: exit to user space and back",
            MicroOp::Mmio => "a write to an address with no memory slot: exit to user space through the MMIO path",
            MicroOp::Vmcall => "vmcall (Intel): an in-kernel hypercall (an unknown number, answered -ENOSYS)",
            MicroOp::Vmmcall => "vmmcall (AMD): an in-kernel hypercall",
            MicroOp::Touch => "first store to a fresh guest page: guest-physical fault plus host page fault",
            MicroOp::Read => "guest memory read bandwidth (64 KiB per iteration)",
            MicroOp::Start => "a VM start: KVM_CREATE_VM, memory, vCPU, registers, to the guest's first instruction",
        }
    }
    fn guest(self) -> Option<GuestCase> {
        Some(match self {
            MicroOp::Empty => GuestCase::Empty,
            MicroOp::Rdtsc => GuestCase::Rdtsc,
            MicroOp::Cpuid => GuestCase::Cpuid,
            MicroOp::Hlt => GuestCase::Hlt,
            MicroOp::Pio => GuestCase::Pio,
            MicroOp::Mmio => GuestCase::Mmio,
            MicroOp::Vmcall => GuestCase::Vmcall,
            MicroOp::Vmmcall => GuestCase::Vmmcall,
            MicroOp::Touch => GuestCase::Touch,
            MicroOp::Read => GuestCase::Read,
            MicroOp::Start => return None,
        })
    }
    /// Exits that reach the VMM once per iteration.
    fn exits_to_vmm(self) -> bool {
        matches!(self, MicroOp::Hlt | MicroOp::Pio | MicroOp::Mmio)
    }
}

fn supported() -> Result<(), Unsupported> {
    vmm::kvm_usable().map_err(|e| Unsupported(e.to_string()))
}

/// Each operation at guest privilege level 0 (guest kernel mode) and 3
/// (guest user mode: a software layer such as PVM may run only that
/// natively); a VM start has no level.
fn cases(op: MicroOp) -> Vec<Params> {
    let levels: &[u64] = if op == MicroOp::Start { &[0] } else { &[0, 3] };
    points(levels.iter().map(|&cpl| schema::microvm::Params { cpl }))
}

/// The fastest of 7 timed runs of `n` calls of `f`, in cycles per call: a
/// native reference for the table's ratio column.
fn native(n: u32, mut f: impl FnMut()) -> f64 {
    (0..7)
        .map(|_| {
            let t0 = crate::measure::arch::rdtscp();
            for _ in 0..n {
                f();
            }
            (crate::measure::arch::rdtscp() - t0) as f64 / f64::from(n)
        })
        .fold(f64::INFINITY, f64::min)
}

/// cpuid natively, where there is one (x86; elsewhere the family is n/a).
#[cfg(target_arch = "x86_64")]
pub fn native_cpuid() -> Option<f64> {
    Some(native(2000, || {
        std::hint::black_box(crate::measure::arch::cpuid(std::hint::black_box(0), 0));
    }))
}

#[cfg(not(target_arch = "x86_64"))]
pub fn native_cpuid() -> Option<f64> {
    None
}

pub fn native_null_syscall() -> f64 {
    native(2000, || {
        // SAFETY: getppid takes no arguments.
        std::hint::black_box(unsafe { crate::measure::arch::syscall3(libc::SYS_getppid, 0, 0, 0) });
    })
}

fn run(op: MicroOp, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    // Without access to /dev/kvm (no KVM here, or a user outside the kvm
    // group) nothing can be measured: not applicable, as `list` says.
    supported().map_err(|Unsupported(why)| CaseError::NotApplicable(why))?;
    let layer = kvm_backend::detect();
    let timeout = ctx.timeout.min(Duration::from_secs(10));
    let (mode, why_not_long) = guest_mode(op, ctx.typed::<schema::microvm::Params>()?.cpl)?;
    let batches = ctx.harness.batches.max(3);
    let tiny = ctx.scale == Scale::Test;
    let target = if tiny { 200_000 } else { ctx.harness.target_batch_cycles.max(1) };
    let fail = |e: vmm::VmError| {
        if crate::measure::watchdog::interrupted().is_some() {
            CaseError::Interrupted
        } else if matches!(op, MicroOp::Vmcall | MicroOp::Vmmcall) && matches!(e, vmm::VmError::Stuck { .. }) {
            CaseError::NotApplicable(format!("this layer never completes a {} in the guest: {e}", op.name()))
        } else {
            CaseError::Failed(e.to_string())
        }
    };
    let ((samples, vmm, iterations, exits), placement) = pinned(ctx, || {
        let Some(guest) = op.guest() else {
            // VM starts: one per sample.
            let mut s = Vec::new();
            for _ in 0..batches {
                s.push(vmm::run_in(mode, GuestCase::Empty, 1, timeout, &mut || {}).map_err(fail)?.create_to_marker as f64);
            }
            return Ok((s, vec![], 1, vmm::Exits::default()));
        };
        // Calibrate: double n until the guest's own time reaches the target
        // (a fresh VM each run; touching stops at the pages there are).
        let mut n: u32 = 1;
        let cap = if op == MicroOp::Touch { vmm::TOUCH_PAGES } else { 1 << 24 };
        loop {
            let o = vmm::run_in(mode, guest, n, timeout, &mut || {}).map_err(fail)?;
            if o.guest_cycles >= target || n >= cap {
                break;
            }
            n = (n * 2).min(cap);
        }
        let (mut s, mut v) = (Vec::new(), Vec::new());
        let mut exits = vmm::Exits::default();
        for _ in 0..batches {
            let o = vmm::run_in(mode, guest, n, timeout, &mut || {}).map_err(fail)?;
            s.push(o.guest_cycles as f64 / f64::from(n));
            v.push(o.vmm_cycles as f64 / f64::from(n));
            exits = o.exits;
        }
        Ok((s, v, n, exits))
    })?;
    let summary = summary_of(&samples)?;
    let name = if op == MicroOp::Start { schema::microvm::START } else { schema::microvm::GUEST };
    let mut metrics = vec![Metric::cycles(name, summary, ctx.clock)];
    if op.exits_to_vmm()
        && let Some(s) = Summary::of(&vmm)
    {
        metrics.push(Metric::cycles(schema::microvm::VMM_ROUND_TRIP, s, ctx.clock));
    }
    let details = describe(op, &layer, mode, why_not_long, iterations, &exits, summary.median, ctx);
    Ok(CaseData { placement, metrics, details })
}

/// The guest mode a case runs in: the privilege level asked for on this
/// CPU, or why it cannot run (a hypercall of the other vendor, hlt at CPL 3,
/// CPL 3 without long mode); with why long mode is unavailable, if it is.
fn guest_mode(op: MicroOp, cpl: u64) -> Result<(vmm::Mode, Option<String>), CaseError> {
    let vendor = kvm_backend::cpu_vendor();
    match op {
        MicroOp::Vmcall if vendor != "GenuineIntel" => {
            return Err(CaseError::NotApplicable(format!("vmcall is Intel's; this CPU is {vendor}")));
        }
        MicroOp::Vmmcall if vendor != "AuthenticAMD" => {
            return Err(CaseError::NotApplicable(format!("vmmcall is AMD's; this CPU is {vendor}")));
        }
        _ => {}
    }
    let (base_mode, why_not_long) = vmm::mode();
    let mode = match (cpl, base_mode) {
        (0, m) => m,
        (_, vmm::Mode::Long) if op == MicroOp::Hlt => {
            return Err(CaseError::NotApplicable("hlt is privileged: it faults at CPL 3".into()));
        }
        (_, vmm::Mode::Long) => vmm::Mode::LongUser,
        _ => return Err(CaseError::NotApplicable(format!("CPL 3 needs long mode; {}", why_not_long.unwrap_or_default()))),
    };
    Ok((mode, why_not_long))
}

/// A case's details: the virtualisation layer, the guest mode, iterations,
/// exits, and the native equivalent of the operation.
#[allow(clippy::too_many_arguments)]
fn describe(
    op: MicroOp,
    layer: &kvm_backend::KvmBackend,
    mode: vmm::Mode,
    why_not_long: Option<String>,
    iterations: u32,
    exits: &vmm::Exits,
    median: f64,
    ctx: &CaseCtx,
) -> serde_json::Map<String, serde_json::Value> {
    let mut details = serde_json::Map::new();
    details.insert(keys::LAYER.into(), json!(layer.describe()));
    details.insert("layer_module".into(), json!(layer.module));
    details.insert("nested".into(), json!(layer.nested()));
    details.insert(keys::GUEST_MODE.into(), json!(mode.describe()));
    if let Some(w) = why_not_long {
        details.insert("long_mode".into(), json!(w));
    }
    details.insert(keys::ITERATIONS.into(), json!(iterations));
    details.insert("exits_to_vmm_per_run".into(), json!({"pio": exits.pio, "mmio": exits.mmio, "hlt": exits.hlt}));
    let native = match op {
        MicroOp::Cpuid => native_cpuid().map(|c| ("cpuid natively", c)),
        MicroOp::Hlt | MicroOp::Pio | MicroOp::Mmio | MicroOp::Vmcall | MicroOp::Vmmcall => {
            Some(("a null system call (getppid)", native_null_syscall()))
        }
        _ => None,
    };
    if let Some((what, c)) = native {
        details.insert(keys::NATIVE_EQUIVALENT.into(), json!(what));
        details.insert(keys::NATIVE_CYCLES.into(), json!(c));
    }
    if op == MicroOp::Read {
        details.insert("mb_per_s".into(), json!(vmm::READ_BYTES as f64 * ctx.clock.tsc_hz / median / 1e6));
    }
    details
}

/// microvm.*: VM exits in oscycles' own KVM guest; they run only in the
/// microvm environment when the run has it.
pub const MICROVM: Described<MicroOp> = Described {
    name: schema::microvm::FAMILY,
    variants: MicroOp::ALL,
    info: |op| (op.name(), op.description(), "cpl 0,3 (guest kernel / user mode); iterations calibrated; a fresh VM per run", "/dev/kvm"),
    cases: |op, _| cases(op),
    supported: |_| supported(),
    run,
    venue: Venue::OnlyIn("microvm"),
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[], headline: Some(&table::MicrovmHeadline) },
    params: round_trip::<schema::microvm::Params>,
    ..Described::BASE
};
