//! The Xen environments, each a Xen 4.17 machine under QEMU (TCG here; KVM
//! with `--accel kvm` where the host nests virtualisation):
//! - `xen-pv`: the suites run as /init of a para-virtualised dom0 (Debian's
//!   kernel; page tables, system calls and privileged instructions go
//!   through Xen);
//! - `xen-pvh`: the same in a PVH dom0 (hardware-assisted paging; needs an
//!   IOMMU, QEMU's amd-iommu);
//! - `xen-hvm` and `xen-pvh-domu`: in a guest that a PV dom0 starts with the
//!   toolstack (`xl create`), HVM (QEMU's Xen device model emulates its
//!   machine) or PVH.
//!
//! The host boots Xen with QEMU's `-kernel` (multiboot) and hands it the
//! dom0 kernel and initramfs as modules (`-initrd "KERNEL ARGS,INITRD"`).
//! dom0's initramfs is the one qemu-tcg boots (this binary as /init, the
//! spec) for the dom0 modes; for a domU, it holds the toolstack that
//! `scripts/setup` unpacks, the Xen kernel modules of the guest kernel, the
//! domU's kernel and initramfs, and a [`DomUPlan`]: this binary as dom0's
//! /init ([`dom0_main`]) starts the toolstack and the domU, and copies the
//! domU's console (xenconsoled's guest log, where the domU's framed results
//! land) to ttyS1 unchanged, so the host reads a domU as it reads dom0.
//! Xen's own console (com1) goes to the console log, which the host
//! watches for Xen's panic: with `noreboot` QEMU would idle on after it.

use super::cmdline::{GUEST_KERNEL_OPTIONS, GuestKernelArgs, boot_line};
use super::environment::{Environment, Outcome};
use super::error::{EnvError, OwnError};
use super::guest::{GuestMode, GuestSpec, PORT_PATH};
use super::initramfs::{find_kernel, guest_image, write_initramfs};
use super::kcount::{self, Counting, KERNEL_COUNTERS_OPTIONS, KernelCountersArgs};
use super::options::{EnvOptions, OwnOptions};
use super::output::{ConsoleLog, complete_lines};
use super::vm::{self, ACCEL_OPTIONS, Accel, AccelArgs, Booted, Files, QEMU, Serial, StartError};
use crate::families::bench::schema::boot::RESTARTED_AFTER;
use dom0::{DomUPlan, MODULES, PLAN_PATH, dom0_main, is_dom0_init};
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

mod dom0;

/// Where scripts/setup unpacks Xen: the hypervisor (gunzipped), `version`,
/// and `dom0/` (the toolstack with its libraries, at their own paths).
/// `OSCYCLES_XEN_DIR` names another (the tests: an empty one).
pub const XEN_DIR: &str = "/var/cache/oscycles/xen";

fn xen_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_XEN_DIR").map_or_else(|| PathBuf::from(XEN_DIR), PathBuf::from)
}
const HYPERVISOR: &str = "xen-4.17-amd64";

/// Which Xen machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Pv,
    Pvh,
    Hvm,
    PvhDomU,
}

/// One Xen environment.
pub struct Xen {
    mode: Mode,
}

impl Xen {
    pub const PV: Xen = Xen { mode: Mode::Pv };
    pub const PVH: Xen = Xen { mode: Mode::Pvh };
    pub const HVM: Xen = Xen { mode: Mode::Hvm };
    pub const PVH_DOMU: Xen = Xen { mode: Mode::PvhDomU };
}

impl Mode {
    /// The domU's `type` in xl's configuration, if the suites run in one.
    fn domu(self) -> Option<&'static str> {
        match self {
            Mode::Pv | Mode::Pvh => None,
            Mode::Hvm => Some("hvm"),
            Mode::PvhDomU => Some("pvh"),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Mode::Pv => "PV dom0",
            Mode::Pvh => "PVH dom0",
            Mode::Hvm => "HVM domU of a PV dom0",
            Mode::PvhDomU => "PVH domU of a PV dom0",
        }
    }
}

impl Environment for Xen {
    fn name(&self) -> &'static str {
        match self.mode {
            Mode::Pv => "xen-pv",
            Mode::Pvh => "xen-pvh",
            Mode::Hvm => "xen-hvm",
            Mode::PvhDomU => "xen-pvh-domu",
        }
    }

    fn about(&self) -> &'static str {
        match self.mode {
            Mode::Pv => "the suites in Xen's dom0, para-virtualised, under QEMU",
            Mode::Pvh => "the suites in a PVH dom0 under QEMU",
            Mode::Hvm => "in an HVM guest dom0 starts with xl",
            Mode::PvhDomU => "in a PVH guest dom0 starts with xl",
        }
    }

    fn options(&self) -> Option<OwnOptions> {
        Some(
            OwnOptions::of::<AccelArgs>(ACCEL_OPTIONS)
                .and::<GuestKernelArgs>(GUEST_KERNEL_OPTIONS)
                .and::<KernelCountersArgs>(KERNEL_COUNTERS_OPTIONS),
        )
    }

    fn counts_instructions(&self, o: &EnvOptions) -> bool {
        o.own.get::<AccelArgs>().is_ok_and(|a| a.accel.counts_instructions())
    }

    /// dom0's /init with a domU to start.
    fn init(&self) {
        if is_dom0_init() {
            dom0_main();
        }
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[crate::run::plan::PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch(self, spec, o)
    }
}

/// What the Xen environments lack.
#[derive(Debug, thiserror::Error)]
pub enum XenError {
    #[error("{env}: Xen hypervisor not found (scripts/setup installs it)")]
    NoHypervisor { env: &'static str },
    #[error("{env}: QEMU separates multiboot modules by commas: {modules} cannot be passed")]
    Commas { env: &'static str, modules: String },
    #[error("the Xen toolstack is missing ({} not found; scripts/setup installs it)", .0.display())]
    NoToolstack(PathBuf),
    #[error("no Xen modules ({}) for {}: the toolstack needs them", MODULES.join(", "), .0.display())]
    NoModules(PathBuf),
}

impl OwnError for XenError {}

/// The hypervisor scripts/setup unpacked.
fn find_xen() -> Option<PathBuf> {
    Some(xen_dir().join(HYPERVISOR)).filter(|p| p.is_file())
}

/// How the machine is built for `mode` (and a test's `guest_mode`):
/// QEMU's machine and CPU, Xen's command line, dom0's memory.
struct Machine {
    machine: &'static str,
    cpu: &'static str,
    iommu: bool,
    xen_args: String,
    dom0_mib: u32,
    qemu_mib: u32,
}

/// `initrd_mib`: the size of dom0's initramfs, which dom0 holds about three
/// times over with a domU to start (the archive, its unpacked files, and
/// what the toolstack reads of the domU's kernel and initramfs).
fn machine(mode: Mode, o: &EnvOptions, guest_mode: GuestMode, initrd_mib: u32) -> Machine {
    // A PVH dom0, and any HVM or PVH domU, needs hardware-assisted paging
    // (nested SVM with NPT); a PVH dom0 an IOMMU too. With -cpu max a PV
    // dom0 dies at its first instructions, so qemu64 with what is needed.
    // Not rdtscp: TCG reports its exit as rdtsc's, and Xen, which traps the
    // TSC here (no invariant TSC), kills the domain on the mismatch;
    // oscycles reads the TSC with lfence; rdtsc then.
    let xen_panic = guest_mode == GuestMode::XenPanic;
    let pvh_dom0 = mode == Mode::Pvh || xen_panic;
    let iommu = mode == Mode::Pvh && !xen_panic;
    let (dom0_mib, qemu_mib) = match mode.domu() {
        None => (o.vm_mem_mib, o.vm_mem_mib + 256),
        Some(_) => {
            let dom0 = 512 + 3 * initrd_mib;
            (dom0, o.vm_mem_mib + dom0 + 256)
        }
    };
    let mut xen_args = format!("console=com1 dom0_mem={dom0_mib}M,max:{dom0_mib}M dom0_max_vcpus={} noreboot", o.vm_cpus);
    if pvh_dom0 {
        xen_args += " dom0=pvh";
    }
    if iommu {
        xen_args += " iommu=1";
    }
    Machine {
        machine: if iommu { "q35,kernel-irqchip=split" } else { "q35" },
        cpu: if mode == Mode::Pv && !xen_panic { "qemu64,+svm" } else { "qemu64,+svm,+npt" },
        iommu,
        xen_args,
        dom0_mib,
        qemu_mib,
    }
}

/// Boots Xen with `spec` run in dom0 or in a domU, and watches it; again
/// (up to [`STARTS`] in all) while a start's guest triple-faulted or
/// stuck before it sent its results. Under TCG a guest in an HVM container
/// (a PVH dom0, an HVM domU) now and then triple-faults at an instruction
/// Xen intercepts (seen: an rdtsc, a write of the x2APIC's EOI), and a PV
/// dom0 now and then never leaves the kernel (seen: its /init in a soft
/// lockup from 10 s after boot, for 12 minutes, where the same test had
/// passed in 90 s): faults of the emulation, not of the system measured.
/// The facts list the faults of the starts repeated; each start's console
/// is kept beside the results.
fn launch(env: &Xen, spec: &GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
    EnvError::x86_only(env.name(), "Xen boots under qemu-system-x86_64 with an x86-64 oscycles as its guests' /init")?;
    let mut faults: Vec<String> = Vec::new();
    loop {
        let (mut out, console) = start(env, spec, o)?;
        let fault = out.first("run").is_none().then(|| emulation_fault(&console)).flatten();
        match fault {
            Some(f) if faults.len() + 1 < STARTS => faults.push(f.to_string()),
            _ => {
                if !faults.is_empty() {
                    out.facts.insert(RESTARTED_AFTER.into(), json!(faults));
                    if out.first("run").is_none() {
                        out.log_tail = format!("{} (earlier starts ended too: {})", out.log_tail, faults.join("; "));
                    }
                }
                return Ok(out);
            }
        }
    }
}

/// Starts of a Xen machine whose guest triple-faults, at most.
const STARTS: usize = 3;

/// The line of Xen's console that says a guest triple-faulted, or that a
/// guest's CPU has been stuck in its kernel for [`STUCK_S`] or more.
fn emulation_fault(console: &str) -> Option<&str> {
    let lines = || console.lines().map(|l| l.trim_start_matches("(XEN)").trim());
    lines().find(|l| l.contains("Triple fault")).or_else(|| stuck(console))
}

/// Seconds a guest's CPU may stay in its kernel (its soft-lockup watchdog
/// says for how long) before the start counts as stuck: a soft lockup
/// under TCG's load may pass; one of two minutes has not been seen to.
const STUCK_S: u64 = 120;

/// The soft-lockup line of a guest stuck for [`STUCK_S`] or more, if any
/// ("watchdog: BUG: soft lockup - CPU#0 stuck for 130s! [init:1]").
fn stuck(console: &str) -> Option<&str> {
    console.lines().map(str::trim).find(|l| {
        l.split("soft lockup - CPU#")
            .nth(1)
            .and_then(|rest| rest.split(" stuck for ").nth(1))
            .and_then(|rest| rest.split('s').next())
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|s| s >= STUCK_S)
    })
}

/// Boots Xen once with `spec` run in dom0 or in a domU, and watches it:
/// what came back, and Xen's console.
fn start(env: &Xen, spec: &GuestSpec, o: &EnvOptions) -> Result<(Outcome, String), EnvError> {
    let name = env.name();
    let xen = find_xen().ok_or(XenError::NoHypervisor { env: name })?;
    let accel = o.own.get::<AccelArgs>()?.accel;
    if accel == Accel::Kvm {
        EnvError::kvm_usable(name)?;
    }
    let o = &accel.options(o);
    // The guest's kernel above Xen's part of the address space (a PV
    // guest's; an HVM or PVH guest's Linux lies there too), Xen's apart.
    let counting = Counting::start(o, QEMU, accel.counts_instructions(), kcount::XEN_X86_64_RANGE.1, Some(kcount::XEN_X86_64_RANGE))?;
    let o = &kcount::options(o, counting.is_some());
    let kernel = find_kernel(o.kernel.as_deref())?;
    let files = Files::new(name, o)?;
    let init = if spec.mode == GuestMode::NoInit { "/no-such-init" } else { "/init" };
    // The measured guest's line (dom0's, or the domU's) takes --guest-append and the isolated parameters.
    let spec = kcount::guest_spec(accel.guest_spec(spec), counting.is_some());
    let (line, spec) = boot_line(&spec, &format!("console=hvc0 rdinit={init} quiet loglevel=3 panic=-1 oops=panic"), o)?;
    let (dom0_args, guest_cmdline) = match env.mode.domu() {
        None => {
            write_initramfs(&files.initrd, &o.exe, &spec, &[])?;
            (line.clone(), line)
        }
        Some(kind) => {
            write_dom0_initramfs(
                &files.initrd,
                &kernel,
                &spec,
                o,
                DomUPlan { kind: kind.into(), memory_mib: o.vm_mem_mib, vcpus: o.vm_cpus, cmdline: line.clone() },
            )?;
            (format!("console=hvc0 rdinit={init} quiet loglevel=3 panic=-1 oops=panic"), line)
        }
    };
    let initrd_mib = std::fs::metadata(&files.initrd).map_or(0, |m| (m.len() >> 20) as u32);
    let m = machine(env.mode, o, spec.mode, initrd_mib);
    let mut cmd = vm::command(o, m.qemu_mib);
    cmd.args(["-machine", m.machine]).args(accel.qemu_args()).args(["-cpu", m.cpu]);
    if m.iommu {
        cmd.args(["-device", "amd-iommu"]);
    }
    cmd.arg("-kernel").arg(&xen).args(["-append", &m.xen_args]);
    // Multiboot modules, comma-separated: paths with a comma cannot be passed,
    // a comma of dom0's line is doubled (QEMU's escape: isolcpus=nohz,domain,1).
    let modules = format!("{} {},{}", kernel.display(), dom0_args.replace(',', ",,"), files.initrd.display());
    if kernel.to_string_lossy().contains(',') || files.initrd.to_string_lossy().contains(',') {
        return Err(XenError::Commas { env: name, modules }.into());
    }
    cmd.arg("-initrd").arg(&modules);
    if let Some(c) = &counting {
        cmd.args(c.qemu_args());
    }
    // Emulated, Xen and a domU boot in tens of seconds to minutes where a
    // plain kernel takes seconds: a longer wait for /init.
    let o = EnvOptions { init_timeout: accel.boot_wait(o.init_timeout, if env.mode.domu().is_some() { 12 } else { 4 }), ..o.clone() };
    let mut watch = ConsoleLog::new(&files.console);
    Serial::Split.add(&mut cmd, &files.console);
    let Booted { mut end, console, log_tail } =
        vm::watch(cmd, &files, &o, Some("run"), &mut || watch.grown().and_then(fatal)).map_err(StartError::qemu(name))?;
    // Xen's dumps bury what went wrong: its first telling line leads.
    let log_tail = match telling(&console) {
        Some(l) if !log_tail.contains(l) => format!("{l} | ... | {log_tail}"),
        _ => log_tail,
    };
    if let Some(w) = end.why {
        // A stuck guest ends this start only: `launch` starts it again.
        if stuck(&console).is_none() {
            let hint = if env.mode.domu().is_some() && o.vm_cpus > 1 && !w.contains("interrupted") { DOMU_HINT } else { "" };
            return Err(EnvError::Ended { env: name, why: w, hint, tail: log_tail });
        }
    }
    let mut facts = machine_facts(env, accel, &m, &o, &kernel, guest_cmdline);
    facts.insert("clean_exit".into(), Value::Bool(super::vm::LINUX_FINISH.is(end.status)));
    if let Some(c) = &counting {
        c.attach(&mut end.messages);
        facts.insert(kcount::FACT.into(), c.facts());
    }
    Ok((Outcome { messages: end.messages, status: end.status, facts, log_tail, doc: None }, console))
}

/// Why a domU under an emulated Xen can time out on a busy host. Every
/// device request of the domU (its firmware reads its kernel and initramfs
/// through dom0's device model) goes to dom0 and back; on two emulated
/// CPUs each is a wake-up of QEMU's other thread, which waits behind the
/// host's other work. Beside `stress-ng --cpu 2` on a 2-vCPU host an HVM
/// domU had printed nothing after 11 minutes with two vCPUs and returned its
/// results in 76 s with one.
const DOMU_HINT: &str = " (dom0 and the domU on two emulated CPUs wait on each other's host thread at every device request of the \
                          domU: on a busy host that alone can take this long; --vm-cpus 1 puts both on one, as a case that \
                          needs no second CPU can)";

/// The facts of a start: the machine QEMU emulated and what it booted.
fn machine_facts(env: &Xen, accel: Accel, m: &Machine, o: &EnvOptions, kernel: &Path, guest_cmdline: String) -> Map<String, Value> {
    let mut facts = Map::new();
    facts.insert("vmm".into(), json!(QEMU));
    facts.insert(crate::data::schema_core::environment::ACCEL.into(), json!(accel.name()));
    facts.insert("hypervisor".into(), json!(format!("Xen {}", xen_version())));
    facts.insert("xen_mode".into(), json!(env.mode.describe()));
    facts.insert("xen_cmdline".into(), json!(m.xen_args));
    facts.insert(crate::data::schema_core::environment::GUEST_CMDLINE.into(), json!(guest_cmdline));
    facts.insert("machine".into(), json!(m.machine));
    facts.insert("cpu".into(), json!(m.cpu));
    facts.insert("vcpus".into(), json!(o.vm_cpus));
    facts.insert("memory_mib".into(), json!(o.vm_mem_mib));
    facts.insert("dom0_memory_mib".into(), json!(m.dom0_mib));
    facts.insert("kernel".into(), json!(kernel.display().to_string()));
    facts
}

/// The Debian version of the unpacked hypervisor (scripts/setup writes it).
fn xen_version() -> String {
    std::fs::read_to_string(xen_dir().join("version")).map(|v| v.trim().to_string()).unwrap_or_else(|_| "4.17".into())
}

/// Xen's end on the console read so far: its panic, a dom0 that crashed
/// (Xen then idles with `noreboot`), or a guest stuck in its kernel
/// ([`stuck`]).
fn fatal(console: &str) -> Option<String> {
    xen_fatal(console).or_else(|| stuck(console).map(|l| format!("a guest stuck in its kernel: {l}")))
}

/// Xen's panic ("Panic on CPU n:" and the reason on the next line) or the
/// line saying dom0 crashed, as one line, once the reason is there.
pub fn xen_fatal(console: &str) -> Option<String> {
    // Whole lines only: the reason may still be on its way.
    let lines: Vec<&str> = complete_lines(console).lines().map(|l| l.trim_start_matches("(XEN)").trim()).collect();
    if let Some(i) = lines.iter().position(|l| l.starts_with("Panic on CPU")) {
        let reason = lines.get(i + 1).filter(|r| !r.is_empty())?;
        return Some(format!("Xen: {} {reason}", lines[i]));
    }
    lines.iter().find(|l| l.contains("Hardware Dom0 crashed") || l.contains("Domain 0 crashed")).map(|l| format!("Xen: {l}"))
}

/// The first line of a Xen console that says something went wrong (a
/// kernel's panic or oops, Xen's bug, crash or assertion, a domain's shutdown).
fn telling(console: &str) -> Option<&str> {
    const SIGNS: [&str; 9] =
        ["Kernel panic", "BUG", "Oops", "general protection", "Assertion", "crashed", "Dom0 shutdown", "emulation failed", "Triple fault"];
    console.lines().map(str::trim).find(|l| SIGNS.iter().any(|s| l.contains(s)))
}

/// The Xen modules of `kernel` (vmlinuz-VERSION): in the tree beside it
/// (scripts/setup's unpacked package) or in /lib/modules.
fn module_dir(kernel: &Path) -> Result<PathBuf, XenError> {
    let version = kernel.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_prefix("vmlinuz-")).unwrap_or_default();
    let beside = kernel.parent().and_then(Path::parent).map(|root| root.join("lib/modules").join(version));
    let dirs = beside.into_iter().chain([Path::new("/lib/modules").join(version)]);
    dirs.map(|d| d.join("kernel/drivers/xen"))
        .find(|d| d.join(MODULES[0]).is_file())
        .ok_or_else(|| XenError::NoModules(kernel.to_path_buf()))
}

/// dom0's initramfs for a domU: this binary as /init with the plan, the
/// toolstack tree, the Xen modules, and the domU's kernel and initramfs
/// (the one qemu-tcg boots, its results port hvc0).
fn write_dom0_initramfs(path: &Path, kernel: &Path, spec: &GuestSpec, o: &EnvOptions, plan: DomUPlan) -> Result<(), EnvError> {
    let tree = xen_dir().join("dom0");
    if !tree.join(".complete").is_file() {
        return Err(XenError::NoToolstack(tree).into());
    }
    let modules = module_dir(kernel)?;
    let domu_initrd = path.with_extension("domu.cpio");
    write_initramfs(&domu_initrd, &o.exe, spec, &[(PORT_PATH.trim_start_matches('/'), b"/dev/hvc0")])?;
    let domu = std::fs::read(&domu_initrd);
    let _ = std::fs::remove_file(&domu_initrd);
    let init = guest_image(&o.exe, path)?;
    let f = crate::measure::scratch::create_new(path, 0o600).map_err(EnvError::io(format!("creating {}", path.display())))?;
    let mut c = super::cpio::Cpio::new(std::io::BufWriter::new(f));
    let w = (|| -> std::io::Result<()> {
        for d in ["dev", "proc", "sys", "tmp", "run", "var", "domu", "modules"] {
            c.dir(d)?;
        }
        c.file("init", 0o755, &init)?;
        c.file(PLAN_PATH.trim_start_matches('/'), 0o644, serde_json::to_string(&plan)?.as_bytes())?;
        c.file("domu/vmlinuz", 0o644, &std::fs::read(kernel)?)?;
        c.file("domu/initrd.cpio", 0o644, &domu?)?;
        for m in MODULES {
            let file = Path::new(m).file_name().expect("a file name").to_string_lossy();
            c.file(&format!("modules/{file}"), 0o644, &std::fs::read(modules.join(m))?)?;
        }
        c.tree(&tree)?;
        c.finish().and_then(|mut b| b.flush())
    })();
    w.map_err(EnvError::io(format!("writing {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_xens_panic_once_its_reason_is_there() {
        let head = "(XEN) ****************************************\n(XEN) Panic on CPU 0:\n";
        assert_eq!(xen_fatal(head), None, "the reason is the next line");
        let full = format!("{head}(XEN) Presently, iommu must be enabled for PVH hardware domain\n(XEN) ****\n");
        assert_eq!(xen_fatal(&full).unwrap(), "Xen: Panic on CPU 0: Presently, iommu must be enabled for PVH hardware domain");
        let crash =
            "[    3.1] Kernel panic - not syncing: No working init found.\n(XEN) Hardware Dom0 crashed: 'noreboot' set - not rebooting.\n";
        assert!(xen_fatal(crash).unwrap().contains("Hardware Dom0 crashed"));
        assert_eq!(xen_fatal("(XEN) Xen version 4.17\n"), None);
    }

    #[test]
    fn a_guests_triple_fault_is_found_and_leads_the_reason() {
        let console = "(XEN) Freed 656kB init memory\n(XEN) d1v0 Triple fault - invoking HVM shutdown action 1\n(XEN) RIP: 0010\n";
        assert_eq!(emulation_fault(console), Some("d1v0 Triple fault - invoking HVM shutdown action 1"));
        assert_eq!(telling(console), Some("(XEN) d1v0 Triple fault - invoking HVM shutdown action 1"));
        assert_eq!(emulation_fault("(XEN) Freed 656kB init memory\n"), None);
    }

    #[test]
    fn a_guest_stuck_in_its_kernel_for_two_minutes_is_a_fault_and_a_shorter_lockup_is_not() {
        let console = "about to get started...\n[   54.51] watchdog: BUG: soft lockup - CPU#0 stuck for 44s! [init:1]\n";
        assert_eq!(emulation_fault(console), None);
        let longer = format!("{console}[  146.51] watchdog: BUG: soft lockup - CPU#0 stuck for 130s! [init:1]\n");
        assert_eq!(emulation_fault(&longer), Some("[  146.51] watchdog: BUG: soft lockup - CPU#0 stuck for 130s! [init:1]"));
    }
}
