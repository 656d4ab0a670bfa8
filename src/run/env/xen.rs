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

use super::guest::{self, GuestMode, GuestSpec, PORT_PATH, RunFn};
use super::qemu::{self, Accel, AccelArgs, Files, Ran};
use super::{EnvError, EnvOptions, Environment, Outcome, OwnOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Where scripts/setup unpacks Xen: the hypervisor (gunzipped), `version`,
/// and `dom0/` (the toolstack with its libraries, at their own paths).
/// `OSCYCLES_XEN_DIR` names another (the tests: an empty one).
pub const XEN_DIR: &str = "/var/cache/oscycles/xen";

fn xen_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_XEN_DIR").map_or_else(|| PathBuf::from(XEN_DIR), PathBuf::from)
}
const HYPERVISOR: &str = "xen-4.17-amd64";
/// In dom0's initramfs: what to start (a domU's dom0 only).
const PLAN_PATH: &str = "/oscycles-xen-domu.json";
/// The Xen modules of the guest kernel dom0 loads for the toolstack, in order
/// (xenfs uses xen-privcmd).
const MODULES: [&str; 5] = ["xen-evtchn.ko", "xen-privcmd.ko", "xen-gntdev.ko", "xen-gntalloc.ko", "xenfs/xenfs.ko"];
const TOOLS: &str = "/usr/lib/xen-4.17/bin";
const DOMU_NAME: &str = "oscycles";

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
        Some(OwnOptions::of::<AccelArgs>(qemu::ACCEL_OPTIONS))
    }

    fn counts_instructions(&self, o: &EnvOptions) -> bool {
        o.own.get::<AccelArgs>().is_ok_and(|a| a.accel.counts_instructions())
    }

    /// dom0's /init with a domU to start.
    fn init(&self, _run: &RunFn) {
        if is_dom0_init() {
            dom0_main();
        }
    }

    fn launch(&self, spec: &GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch(self, spec, o)
    }
}

/// What the Xen environments lack, and what failed in dom0 starting a domU.
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
    #[error(transparent)]
    Plan(#[from] guest::ReadJsonError),
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    #[error(transparent)]
    System(std::io::Error),
    /// A toolstack program that failed, with its output.
    #[error("{command}: {status}; {output}")]
    Tool { command: String, status: std::process::ExitStatus, output: String },
    #[error("{path} did not appear within {secs} s")]
    NotWithin { path: String, secs: u64 },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> XenError {
    let what = what.into();
    move |source| XenError::Io { what, source }
}

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
    let mut faults: Vec<String> = Vec::new();
    loop {
        let (mut out, console) = start(env, spec, o)?;
        let fault = out.first("run").is_none().then(|| emulation_fault(&console)).flatten();
        match fault {
            Some(f) if faults.len() + 1 < STARTS => faults.push(f.to_string()),
            _ => {
                if !faults.is_empty() {
                    out.facts.insert(super::RESTARTED_AFTER.into(), json!(faults));
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
    let kernel = qemu::find_kernel(o.kernel.as_deref())?;
    let files = Files::new(name, o)?;
    let spec = &accel.guest_spec(spec);
    match env.mode.domu() {
        None => qemu::write_initramfs(&files.initrd, &o.exe, spec, &[])?,
        Some(kind) => write_dom0_initramfs(&files.initrd, &kernel, spec, o, kind)?,
    }
    let initrd_mib = std::fs::metadata(&files.initrd).map_or(0, |m| (m.len() >> 20) as u32);
    let m = machine(env.mode, o, spec.mode, initrd_mib);
    let mut cmd = qemu::command(o, m.qemu_mib);
    cmd.args(["-machine", m.machine]).args(accel.qemu_args()).args(["-cpu", m.cpu]);
    if m.iommu {
        cmd.args(["-device", "amd-iommu"]);
    }
    let init = if spec.mode == GuestMode::NoInit { "/no-such-init" } else { "/init" };
    let dom0_args = format!("console=hvc0 rdinit={init} quiet loglevel=3 panic=-1 oops=panic");
    cmd.arg("-kernel").arg(&xen).args(["-append", &m.xen_args]);
    // Multiboot modules, comma-separated: paths with a comma cannot be passed.
    let modules = format!("{} {dom0_args},{}", kernel.display(), files.initrd.display());
    if kernel.to_string_lossy().contains(',') || files.initrd.to_string_lossy().contains(',') {
        return Err(XenError::Commas { env: name, modules }.into());
    }
    cmd.arg("-initrd").arg(&modules);
    // Under TCG, Xen and a domU boot in tens of seconds to minutes where a
    // plain kernel takes seconds: a longer wait for /init.
    let scale = match (accel, env.mode.domu()) {
        (Accel::Tcg | Accel::Icount, None) => 4,
        (Accel::Tcg | Accel::Icount, Some(_)) => 12,
        (Accel::Kvm, _) => 1,
    };
    let o = EnvOptions { init_timeout: o.init_timeout * scale, ..o.clone() };
    let mut watch = ConsoleWatch::new(&files.console);
    let Ran { end, console, log_tail } = qemu::start(name, cmd, &files, &o, &mut || watch.fatal())?;
    // Xen's dumps bury what went wrong: its first telling line leads.
    let log_tail = match telling(&console) {
        Some(l) if !log_tail.contains(l) => format!("{l} | ... | {log_tail}"),
        _ => log_tail,
    };
    if let Some(w) = end.why {
        // A stuck guest ends this start only: `launch` starts it again.
        if stuck(&console).is_none() {
            return Err(EnvError::Ended { env: name, why: w, hint: "", tail: log_tail });
        }
    }
    let mut facts = Map::new();
    facts.insert("vmm".into(), json!(qemu::QEMU));
    facts.insert(crate::data::schema_core::environment::ACCEL.into(), json!(accel.name()));
    facts.insert("hypervisor".into(), json!(format!("Xen {}", xen_version())));
    facts.insert("xen_mode".into(), json!(env.mode.describe()));
    facts.insert("xen_cmdline".into(), json!(m.xen_args));
    facts.insert("machine".into(), json!(m.machine));
    facts.insert("cpu".into(), json!(m.cpu));
    facts.insert("vcpus".into(), json!(o.vm_cpus));
    facts.insert("memory_mib".into(), json!(o.vm_mem_mib));
    facts.insert("dom0_memory_mib".into(), json!(m.dom0_mib));
    facts.insert("kernel".into(), json!(kernel.display().to_string()));
    facts.insert("clean_exit".into(), Value::Bool(end.status.and_then(|s| s.code()) == Some(qemu::CLEAN_EXIT)));
    Ok((Outcome { messages: end.messages, status: end.status, facts, log_tail }, console))
}

/// The Debian version of the unpacked hypervisor (scripts/setup writes it).
fn xen_version() -> String {
    std::fs::read_to_string(xen_dir().join("version")).map(|v| v.trim().to_string()).unwrap_or_else(|_| "4.17".into())
}

/// Reads the console log as it grows and finds Xen's end: its panic, a
/// dom0 that crashed (Xen then idles with `noreboot`), or a guest stuck in
/// its kernel ([`stuck`]).
struct ConsoleWatch {
    path: PathBuf,
    seen: String,
    last: Instant,
}

impl ConsoleWatch {
    fn new(path: &Path) -> ConsoleWatch {
        ConsoleWatch { path: path.to_path_buf(), seen: String::new(), last: Instant::now() }
    }

    fn fatal(&mut self) -> Option<String> {
        if self.last.elapsed() < Duration::from_millis(250) {
            return None;
        }
        self.last = Instant::now();
        let mut f = std::fs::File::open(&self.path).ok()?;
        f.seek(std::io::SeekFrom::Start(self.seen.len() as u64)).ok()?;
        let mut more = Vec::new();
        f.read_to_end(&mut more).ok()?;
        self.seen += &String::from_utf8_lossy(&more);
        xen_fatal(&self.seen).or_else(|| stuck(&self.seen).map(|l| format!("a guest stuck in its kernel: {l}")))
    }
}

/// Xen's panic ("Panic on CPU n:" and the reason on the next line) or the
/// line saying dom0 crashed, as one line, once the reason is there.
pub fn xen_fatal(console: &str) -> Option<String> {
    // Whole lines only: the reason may still be on its way.
    let complete = &console[..console.rfind('\n').map_or(0, |i| i + 1)];
    let lines: Vec<&str> = complete.lines().map(|l| l.trim_start_matches("(XEN)").trim()).collect();
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

/// What dom0's /init starts, written into its initramfs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DomUPlan {
    /// xl's `type`: "hvm" or "pvh".
    pub kind: String,
    pub memory_mib: u32,
    pub vcpus: u32,
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
fn write_dom0_initramfs(path: &Path, kernel: &Path, spec: &GuestSpec, o: &EnvOptions, kind: &str) -> Result<(), EnvError> {
    let tree = xen_dir().join("dom0");
    if !tree.join(".complete").is_file() {
        return Err(XenError::NoToolstack(tree).into());
    }
    let modules = module_dir(kernel)?;
    let domu_initrd = path.with_extension("domu.cpio");
    qemu::write_initramfs(&domu_initrd, &o.exe, spec, &[(PORT_PATH.trim_start_matches('/'), b"/dev/hvc0")])?;
    let domu = std::fs::read(&domu_initrd);
    let _ = std::fs::remove_file(&domu_initrd);
    let plan = DomUPlan { kind: kind.into(), memory_mib: o.vm_mem_mib, vcpus: o.vm_cpus };
    let init = qemu::guest_image(&o.exe, path)?;
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

/// Whether this process is dom0's /init with a domU to start.
pub fn is_dom0_init() -> bool {
    std::process::id() == 1 && Path::new(PLAN_PATH).exists()
}

/// dom0's /init for a domU: start the toolstack and the domU, copy its
/// console to the results port until it has sent its results or is gone,
/// power off. Never returns.
pub fn dom0_main() -> ! {
    for (src, target, fs) in
        [("devtmpfs", "/dev", "devtmpfs"), ("proc", "/proc", "proc"), ("sysfs", "/sys", "sysfs"), ("tmpfs", "/tmp", "tmpfs")]
    {
        guest::mount(src, target, fs);
    }
    for (src, target, fs) in [("tmpfs", "/run", "tmpfs"), ("tmpfs", "/var", "tmpfs"), ("devpts", "/dev/pts", "devpts")] {
        guest::mount(src, target, fs);
    }
    let mut out = guest::port();
    // Not a hello: the host's init timeout runs until the domU's /init says it.
    guest::send(&mut out, "dom0", 0, b"init");
    let plan: Result<DomUPlan, XenError> = guest::read_json(Path::new(PLAN_PATH)).map_err(XenError::Plan);
    let started = plan.and_then(|p| start_domu(&p));
    match started {
        Ok(()) => relay(&mut out),
        Err(e) => {
            say(&format!("oscycles dom0: {e}"));
            guest::send(&mut out, "error", 1, format!("dom0: {e}").as_bytes());
        }
    }
    // SAFETY: tcdrain on the descriptor `out` owns.
    unsafe { libc::tcdrain(std::os::unix::io::AsRawFd::as_raw_fd(&out)) };
    guest::power_off();
}

/// A line on dom0's console (hvc0, which Xen writes to the console log).
fn say(line: &str) {
    if let Ok(mut c) = std::fs::OpenOptions::new().write(true).open("/dev/console") {
        let _ = writeln!(c, "{line}");
    }
}

/// Loads a kernel module from a file.
fn load_module(path: &Path) -> Result<(), XenError> {
    let f = std::fs::File::open(path).map_err(io(path.display().to_string()))?;
    // SAFETY: finit_module on a descriptor `f` owns, with an empty,
    // NUL-terminated parameter string and no flags.
    let r = unsafe { libc::syscall(libc::SYS_finit_module, std::os::unix::io::AsRawFd::as_raw_fd(&f), c"".as_ptr(), 0) };
    if r != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
        return Err(io(format!("loading {}", path.display()))(std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Runs a toolstack program to its end; its output is the error if it
/// fails. The output goes through a file, not a pipe: `xl create` leaves a
/// child behind (watching the domain) that would hold a pipe open. While it
/// runs, what it and the toolstack's logs say goes to dom0's console every
/// 20 s (a stuck `xl create` then says where).
fn run_tool(program: &str, args: &[&str]) -> Result<(), XenError> {
    let log = format!("/tmp/{}.out", Path::new(program).file_name().map_or("tool".into(), |n| n.to_string_lossy()));
    let f = std::fs::File::create(&log).map_err(io(log.as_str()))?;
    let mut child = Command::new(program)
        .args(args)
        .env("LD_LIBRARY_PATH", "/lib/x86_64-linux-gnu")
        .env("PATH", format!("{TOOLS}:/usr/libexec"))
        .stdin(std::process::Stdio::null())
        .stdout(f.try_clone().map_err(XenError::System)?)
        .stderr(f)
        .spawn()
        .map_err(io(program))?;
    let t = Instant::now();
    let mut told = 0;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(XenError::System)? {
            break st;
        }
        if t.elapsed().as_secs() / 20 > told {
            told += 1;
            say(&format!("oscycles dom0: {program} {} still running after {} s: {}", args.join(" "), t.elapsed().as_secs(), logs(&log)));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if status.success() {
        Ok(())
    } else {
        let output = std::fs::read_to_string(&log).unwrap_or_default().trim().to_string();
        Err(XenError::Tool { command: format!("{program} {}", args.join(" ")), status, output })
    }
}

/// The last lines of a tool's output and of the toolstack's logs.
fn logs(own: &str) -> String {
    let mut files = vec![PathBuf::from(own)];
    files.extend(std::fs::read_dir("/var/log/xen").into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_file()));
    let mut out = String::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        out += &format!("\n  [{}] {}", f.display(), lines[lines.len().saturating_sub(8)..].join("\n    "));
    }
    out
}

/// Waits until `path` exists.
fn wait_for(path: &str, within: Duration) -> Result<(), XenError> {
    let t = Instant::now();
    while !Path::new(path).exists() {
        if t.elapsed() > within {
            return Err(XenError::NotWithin { path: path.to_string(), secs: within.as_secs() });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// xl's configuration of the domU.
fn domu_config(p: &DomUPlan) -> String {
    let mut cfg = format!(
        "name = \"{DOMU_NAME}\"\ntype = \"{}\"\nmemory = {}\nvcpus = {}\nkernel = \"/domu/vmlinuz\"\nramdisk = \"/domu/initrd.cpio\"\n\
         extra = \"console=hvc0 rdinit=/init quiet loglevel=3 panic=-1 oops=panic\"\n\
         on_poweroff = \"preserve\"\non_reboot = \"preserve\"\non_crash = \"preserve\"\n",
        p.kind, p.memory_mib, p.vcpus
    );
    if p.kind == "hvm" {
        cfg += "device_model_override = \"/usr/libexec/xen-qemu-system-i386\"\nvnc = 0\nsdl = 0\nserial = \"none\"\n";
    }
    cfg
}

/// The toolstack (modules, xenfs, xenstored, xen-init-dom0, xenconsoled
/// logging guests' consoles), then `xl create`.
fn start_domu(p: &DomUPlan) -> Result<(), XenError> {
    for m in MODULES {
        load_module(&Path::new("/modules").join(Path::new(m).file_name().expect("a file name")))?;
    }
    guest::mount("xenfs", "/proc/xen", "xenfs");
    for d in ["/run/xen", "/run/xenstored", "/var/lib/xen", "/var/log/xen/console"] {
        std::fs::create_dir_all(d).map_err(io(d))?;
    }
    let _ = std::os::unix::fs::symlink("/run", "/var/run");
    run_tool(&format!("{TOOLS}/xenstored"), &[])?;
    wait_for("/run/xenstored/socket", Duration::from_secs(30))?;
    run_tool(&format!("{TOOLS}/xen-init-dom0"), &[])?;
    run_tool(&format!("{TOOLS}/xenconsoled"), &["--log=guest", "--log-dir=/var/log/xen/console"])?;
    std::fs::write("/tmp/domu.cfg", domu_config(p)).map_err(XenError::System)?;
    let xl = format!("{TOOLS}/xl");
    let mut tries = 0;
    loop {
        tries += 1;
        say(&format!("oscycles dom0: xl create ({} domU, try {tries} of 2)", p.kind));
        match run_tool(&xl, &["-vvv", "create", "/tmp/domu.cfg"]) {
            // libxl gives an HVM domU's device model 60 s to start, a limit
            // built into it; an emulated dom0 on a busy host can miss it once
            // (the second start finds its libraries in the page cache).
            Err(e) if tries < 2 => {
                say(&format!("oscycles dom0: xl create failed, destroying the domU and trying again: {e}"));
                let _ = run_tool(&xl, &["destroy", DOMU_NAME]);
            }
            r => return r,
        }
    }
}

/// The domU's line of `xl list` (name id MiB vcpus state seconds, single
/// spaces), None when it is not listed.
fn domu_line() -> Option<String> {
    run_tool(&format!("{TOOLS}/xl"), &["list"]).ok()?;
    let list = std::fs::read_to_string("/tmp/xl.out").unwrap_or_default();
    list.lines().find(|l| l.starts_with(DOMU_NAME)).map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Whether the domU has stopped running: shut down, crashed or dying (the
/// state letters s, c, d of `xl list`).
fn stopped(line: &str) -> bool {
    line.split_whitespace().nth(4).is_some_and(|state| state.contains(['s', 'c', 'd']))
}

/// Copies the domU's console log to `out` as it grows, until the domU sent
/// its results (or an error), or stopped and its console stayed quiet for
/// a few seconds; says the log's end on dom0's console if no results came.
/// The domU is preserved when it stops (xl's on_poweroff): a destroyed
/// domain takes what xenconsoled has not yet read of its console ring with
/// it, which under an emulated dom0 can be the end of the results.
fn relay(out: &mut std::fs::File) {
    let log = format!("/var/log/xen/console/guest-{DOMU_NAME}.log");
    let mut d = super::frame::Decoder::default();
    let (mut at, mut done, mut text) = (0usize, false, String::new());
    let (mut checked, mut last_byte, mut stopped_at, mut misses) = (Instant::now(), Instant::now(), None, 0);
    let (started, mut told) = (Instant::now(), 0);
    loop {
        let bytes = std::fs::read(&log).unwrap_or_default();
        if bytes.len() > at {
            last_byte = Instant::now();
            let _ = out.write_all(&bytes[at..]);
            let _ = out.flush();
            let s = String::from_utf8_lossy(&bytes[at..]).to_string();
            d.feed(&s);
            // The domU's own lines (its kernel's) also on dom0's console,
            // where the host's log of the run and its error messages are.
            text += &s;
            if let Some(nl) = text.rfind('\n') {
                let lines: Vec<String> = text
                    .drain(..=nl)
                    .collect::<String>()
                    .lines()
                    .filter(|l| !l.contains("@@OSCYCLES") && !l.trim().is_empty())
                    .map(|l| format!("domU: {l}"))
                    .collect();
                if !lines.is_empty() {
                    say(&lines.join("\n"));
                }
            }
            at = bytes.len();
            done |= d.take().iter().any(|(k, _)| k == "run" || k == "error");
        }
        if stopped_at.is_none() && checked.elapsed() > Duration::from_secs(2) {
            checked = Instant::now();
            match domu_line() {
                Some(line) if stopped(&line) => {
                    say(&format!("oscycles dom0: domU stopped: {line} (name id MiB vcpus state seconds)"));
                    stopped_at = Some(Instant::now());
                }
                Some(_) => misses = 0,
                // Three misses in a row: gone (not a toolstack busy for a
                // moment; a preserved domU stays listed until destroyed).
                None => {
                    misses += 1;
                    if misses >= 3 {
                        stopped_at = Some(Instant::now());
                    }
                }
            }
        }
        if started.elapsed().as_secs() / 30 > told {
            told += 1;
            let line = domu_line().unwrap_or_else(|| "(not listed)".into());
            say(&format!(
                "oscycles dom0: domU {line} (name id MiB vcpus state seconds) after {} s, {at} bytes of console",
                started.elapsed().as_secs()
            ));
        }
        let drained = |t: Instant| t.elapsed() > Duration::from_secs(5) && last_byte.elapsed() > Duration::from_secs(5);
        if done || stopped_at.is_some_and(drained) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if !done {
        let partial = if d.midway() { "; a message began and did not end" } else { "" };
        say(&format!("oscycles dom0: the domU ended without sending results ({at} bytes of console{partial}); {}", logs("/tmp/xl.out")));
    }
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

    #[test]
    fn a_domu_config_names_the_device_model_only_for_hvm() {
        let hvm = domu_config(&DomUPlan { kind: "hvm".into(), memory_mib: 512, vcpus: 1 });
        assert!(hvm.contains("type = \"hvm\"") && hvm.contains("device_model_override") && hvm.contains("serial = \"none\""));
        let pvh = domu_config(&DomUPlan { kind: "pvh".into(), memory_mib: 512, vcpus: 1 });
        assert!(pvh.contains("memory = 512") && !pvh.contains("device_model_override"));
        assert!(pvh.contains("on_poweroff = \"preserve\""), "kept until its console is read");
    }

    #[test]
    fn a_stopped_domu_is_told_by_its_state() {
        assert!(stopped("oscycles 1 504 1 ---s-- 12.5"));
        assert!(stopped("oscycles 1 504 1 ----c- 3.0"));
        assert!(!stopped("oscycles 1 504 1 r----- 12.5"));
        assert!(!stopped("oscycles 1 504 1 -b---- 12.5"));
    }
}
