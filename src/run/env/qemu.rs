//! `qemu-tcg` and `qemu-kvm`: QEMU guests, a Linux kernel booted directly (-kernel) with an initramfs
//! that oscycles writes ([`super::initramfs`]) holding itself as /init and the spec.
//! The console (ttyS0, kernel messages) goes to a log file; the results
//! port (ttyS1) to QEMU's stdout, which the host reads. The guest ends
//! through isa-debug-exit: status 33 is a clean finish. The machine is
//! started the way every VM is ([`super::vm`]).

use super::cmdline::{GUEST_KERNEL_OPTIONS, GuestKernelArgs, boot_line};
use super::environment::{Environment, Outcome};
use super::error::{EnvError, OwnError};
use super::guest::GuestSpec;
use super::initramfs::{find_kernel, write_initramfs};
use super::kcount::{self, Counting, KERNEL_COUNTERS_OPTIONS, KernelCountersArgs};
use super::options::{EnvOptions, OwnOptions};
use super::vm::{ACCEL_OPTIONS, Accel, AccelArgs, Booted, Files, QEMU, QemuArgs, QemuMachine, Serial, StartError};
use crate::data::schema_core::environment::ACCEL;
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value, json};
use std::process::{Command, Stdio};

/// A QEMU guest, accelerated by KVM or emulated by TCG.
pub struct Qemu {
    kvm: bool,
}

impl Qemu {
    pub const TCG: Qemu = Qemu { kvm: false };
    pub const KVM: Qemu = Qemu { kvm: true };
}

impl Environment for Qemu {
    fn name(&self) -> &'static str {
        if self.kvm { "qemu-kvm" } else { "qemu-tcg" }
    }

    fn about(&self) -> &'static str {
        if self.kvm {
            "a guest kernel under QEMU with KVM, booted with an initramfs holding this static binary as /init"
        } else {
            "the same guest emulated by QEMU's TCG"
        }
    }

    fn options(&self) -> Option<OwnOptions> {
        let own = OwnOptions::of::<QemuArgs>("qemu").and::<GuestKernelArgs>(GUEST_KERNEL_OPTIONS);
        Some(if self.kvm { own } else { own.and::<AccelArgs>(ACCEL_OPTIONS).and::<KernelCountersArgs>(KERNEL_COUNTERS_OPTIONS) })
    }

    fn counts_instructions(&self, o: &EnvOptions) -> bool {
        !self.kvm && o.own.get::<AccelArgs>().is_ok_and(|a| a.accel == Accel::Icount)
    }

    /// A guest's /init with a spec (also a Xen domU's).
    fn init(&self) {
        if super::guest::is_guest_init() {
            super::guest::main();
        }
    }

    fn check(&self, o: &EnvOptions) -> Result<(), EnvError> {
        if !self.kvm && o.own.get::<AccelArgs>()?.accel == Accel::Kvm {
            return Err(QemuError::TcgOnKvm.into());
        }
        Ok(check_machine(&own(o)?.machine)?)
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch(self.kvm, spec, o)
    }
}

/// oscycles' own guest kernel parameters.
const GUEST_CMDLINE: &str = "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic";

fn own(o: &EnvOptions) -> Result<QemuArgs, EnvError> {
    Ok(o.own.get::<QemuArgs>()?)
}

/// What the qemu environments need and did not find.
#[derive(Debug, thiserror::Error)]
pub enum QemuError {
    #[error("the qemu environments need {QEMU}: {0} (scripts/setup installs qemu-system-x86)")]
    Missing(#[source] std::io::Error),
    #[error("--machine {machine:?}: {QEMU} has no such machine type; try {common} (`{QEMU} -machine help` lists all)")]
    NoSuchMachine { machine: String, common: String },
    #[error("--accel kvm: qemu-tcg is the emulated guest (--accel tcg or icount); the same guest on KVM is --env qemu-kvm")]
    TcgOnKvm,
}

impl OwnError for QemuError {}

/// Checks a QEMU machine type (`--machine`) against the list this QEMU
/// prints (`-machine help`).
pub fn check_machine(machine: &str) -> Result<(), QemuError> {
    let out = Command::new(QEMU).args(["-machine", "help"]).stdin(Stdio::null()).output().map_err(QemuError::Missing)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let known: Vec<&str> = text.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    if known.contains(&machine) {
        Ok(())
    } else {
        let common: Vec<&str> = known.iter().copied().filter(|m| ["q35", "pc", "microvm", "isapc"].contains(m)).collect();
        Err(QemuError::NoSuchMachine { machine: machine.to_string(), common: common.join(", ") })
    }
}

/// Boots the guest once with `spec` in its initramfs and watches it.
fn launch(kvm: bool, spec: &GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
    let name = if kvm { "qemu-kvm" } else { "qemu-tcg" };
    EnvError::x86_only(name, "its guest is x86-64 Linux, whose /init is this binary (an x86-64 oscycles)")?;
    if kvm {
        EnvError::kvm_usable(name)?;
    }
    let kernel = find_kernel(o.kernel.as_deref())?;
    let QemuArgs { machine } = own(o)?;
    let accel = if kvm { Accel::Kvm } else { o.own.get::<AccelArgs>()?.accel };
    let o = &EnvOptions { init_timeout: accel.boot_wait(o.init_timeout, 1), ..accel.options(o) };
    let counting = if kvm { None } else { Counting::start(o, QEMU, accel.counts_instructions(), kcount::LINUX_X86_64_BASE, None)? };
    let o = &kcount::options(o, counting.is_some());
    let (cmdline, spec) = boot_line(&kcount::guest_spec(accel.guest_spec(spec), counting.is_some()), GUEST_CMDLINE, o)?;
    let files = Files::new(name, o)?;
    write_initramfs(&files.initrd, &o.exe, &spec, &[])?;
    let m = QemuMachine {
        machine,
        cpu: Some(accel.tcg_cpu()),
        mem_mib: o.vm_mem_mib,
        vcpus: o.vm_cpus,
        kernel,
        initrd: files.initrd.clone().into(),
        append: Some(cmdline),
        serial: Serial::Split,
        debug_exit: true,
    };
    let mut cmd = super::vm::qemu_command(&m, accel, o, &files.console);
    if let Some(c) = &counting {
        cmd.args(c.qemu_args());
    }
    let Booted { mut end, log_tail, .. } = super::vm::watch(cmd, &files, o, Some("run"), &mut || None).map_err(StartError::qemu(name))?;
    if let Some(w) = end.why {
        let hint =
            if kvm && w.contains("/init") { " (a nested or software KVM that cannot run this kernel hangs it in early boot)" } else { "" };
        return Err(EnvError::Ended { env: name, why: w, hint, tail: log_tail });
    }
    let mut facts = boot_facts(QEMU, &m, accel, super::vm::LINUX_FINISH.is(end.status));
    if let Some(c) = &counting {
        c.attach(&mut end.messages);
        facts.insert(kcount::FACT.into(), c.facts());
    }
    Ok(Outcome { messages: end.messages, status: end.status, facts, log_tail, doc: None })
}

/// The facts of a Linux guest's boot (qemu-*, qemu-arm64): its VMM, how it
/// ran, its machine, command line, size and kernel, and whether it ended cleanly.
pub fn boot_facts(vmm: &str, m: &QemuMachine, accel: Accel, clean_exit: bool) -> Map<String, Value> {
    let mut facts = Map::new();
    facts.insert("vmm".into(), json!(vmm));
    facts.insert(ACCEL.into(), json!(accel.name()));
    facts.insert("machine".into(), json!(m.machine));
    facts.insert(crate::data::schema_core::environment::GUEST_CMDLINE.into(), json!(m.append.as_deref().unwrap_or("")));
    facts.insert("vcpus".into(), json!(m.vcpus));
    facts.insert("memory_mib".into(), json!(m.mem_mib));
    facts.insert("kernel".into(), json!(m.kernel.display().to_string()));
    facts.insert("clean_exit".into(), Value::Bool(clean_exit));
    facts
}
