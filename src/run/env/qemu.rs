//! `qemu-tcg` and `qemu-kvm`: QEMU guests, a Linux kernel booted directly (-kernel) with an initramfs
//! that oscycles writes (cpio newc) holding itself as /init and the spec.
//! The console (ttyS0, kernel messages) goes to a log file; the results
//! port (ttyS1) to QEMU's stdout, which the host reads. The guest ends
//! through isa-debug-exit: status 33 is a clean finish.

use super::cmdline::{GUEST_KERNEL_OPTIONS, GuestKernelArgs, boot_line};
use super::cpio::Cpio;
use super::environment::{Environment, Outcome};
use super::error::{EnvError, OwnError};
use super::guest::{GuestSpec, SPEC_PATH};
use super::kcount::{self, Counting, KERNEL_COUNTERS_OPTIONS, KernelCountersArgs};
use super::options::{EnvOptions, NoSuchKernel, OwnOptions};
use super::output::tail;
use crate::data::schema_core::environment::ACCEL;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

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

    fn launch(&self, spec: &GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch(self.kvm, spec, o)
    }
}

/// The qemu environments' own options.
#[derive(clap::Args, Debug, Clone)]
pub struct QemuArgs {
    /// QEMU machine type.
    #[arg(long, default_value = "q35", value_name = "NAME")]
    pub machine: String,
}

/// oscycles' own guest kernel parameters.
const GUEST_CMDLINE: &str = "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic";

fn own(o: &EnvOptions) -> Result<QemuArgs, EnvError> {
    Ok(o.own.get::<QemuArgs>()?)
}

/// What the qemu environments need and did not find.
#[derive(Debug, thiserror::Error)]
pub enum QemuError {
    #[error("no guest kernel: none in /boot or {KERNEL_CACHE} (scripts/setup unpacks linux-image-amd64 there), and no --kernel")]
    NoKernel,
    #[error("{} is dynamically linked; a guest needs the static build (cargo build --release builds it, see .cargo/config.toml)", .0.display())]
    Dynamic(PathBuf),
    #[error("the qemu environments need {QEMU}: {0} (scripts/setup installs qemu-system-x86)")]
    Missing(#[source] std::io::Error),
    #[error("--machine {machine:?}: {QEMU} has no such machine type; try {common} (`{QEMU} -machine help` lists all)")]
    NoSuchMachine { machine: String, common: String },
    #[error("--accel kvm: qemu-tcg is the emulated guest (--accel tcg or icount); the same guest on KVM is --env qemu-kvm")]
    TcgOnKvm,
    #[error("{env}: starting {QEMU}: {source} (scripts/setup installs qemu-system-x86)")]
    Start { env: String, source: std::io::Error },
}

impl OwnError for QemuError {}

pub const QEMU: &str = "qemu-system-x86_64";
/// isa-debug-exit with value 0x10: (0x10 << 1) | 1.
pub const CLEAN_EXIT: i32 = 33;

/// Where scripts/setup unpacks Debian's kernel package.
pub const KERNEL_CACHE: &str = "/var/cache/oscycles/linux/boot";

/// The guest kernel: the one given, else the newest vmlinuz-* in /boot,
/// else in the cache scripts/setup fills.
pub fn find_kernel(given: Option<&Path>) -> Result<PathBuf, EnvError> {
    if let Some(k) = given {
        return if k.is_file() { Ok(k.to_path_buf()) } else { Err(NoSuchKernel(k.to_path_buf()).into()) };
    }
    for dir in ["/boot", KERNEL_CACHE] {
        let mut ks: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-")))
                    .collect()
            })
            .unwrap_or_default();
        ks.sort();
        if let Some(k) = ks.pop() {
            return Ok(k);
        }
    }
    Err(QemuError::NoKernel.into())
}

/// Whether the ELF file at `p` is statically linked (has no PT_INTERP).
pub fn is_static(p: &Path) -> std::io::Result<bool> {
    let b = std::fs::read(p)?;
    if b.len() < 64 || &b[..4] != b"\x7fELF" || b[4] != 2 {
        return Ok(false);
    }
    let u16at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(b[32..40].try_into().expect("8 bytes")) as usize;
    let (phentsize, phnum) = (u16at(54), u16at(56));
    Ok((0..phnum).all(|i| {
        let o = phoff + i * phentsize;
        o + 4 > b.len() || u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes")) != 3 // PT_INTERP
    }))
}

/// Writes the initramfs: /init (this binary), the spec, the mount points,
/// and `extra` files (name, contents).
pub fn write_initramfs(path: &Path, exe: &Path, spec: &GuestSpec, extra: &[(&str, &[u8])]) -> Result<(), EnvError> {
    if !is_static(exe).map_err(EnvError::io(format!("reading {}", exe.display())))? {
        return Err(QemuError::Dynamic(exe.to_path_buf()).into());
    }
    let bin = guest_image(exe, path)?;
    let f = crate::measure::scratch::create_new(path, 0o600).map_err(EnvError::io(format!("creating {}", path.display())))?;
    let mut c = Cpio::new(std::io::BufWriter::new(f));
    let w = (|| -> std::io::Result<()> {
        for d in ["dev", "proc", "sys", "tmp", "run"] {
            c.dir(d)?;
        }
        c.file("init", 0o755, &bin)?;
        c.file(SPEC_PATH.trim_start_matches('/'), 0o644, serde_json::to_string(spec)?.as_bytes())?;
        for (name, bytes) in extra {
            c.file(name, 0o644, bytes)?;
        }
        Ok(())
    })();
    w.and_then(|()| c.finish().and_then(|mut b| std::io::Write::flush(&mut b))).map_err(EnvError::io(format!("writing {}", path.display())))
}

/// The executable as a guest gets it: without its debug sections, through
/// binutils' objcopy where there is one (as it is otherwise). A debug
/// build's are about 100 MB that a guest would copy in and unpack: under
/// TCG, an HVM domU's firmware copies its initramfs for minutes. `beside`
/// is a path in the run's private directory to put the copy next to.
pub fn guest_image(exe: &Path, beside: &Path) -> Result<Vec<u8>, EnvError> {
    let stripped = beside.with_extension("stripped");
    let ok = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(exe)
        .arg(&stripped)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let bytes = std::fs::read(if ok { &stripped } else { exe }).map_err(EnvError::io(format!("reading {}", exe.display())));
    let _ = std::fs::remove_file(&stripped);
    bytes
}

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

/// The initramfs and console log of one start, in the run's private
/// directory (unique names, created exclusively); removed when dropped.
pub struct Files {
    pub initrd: PathBuf,
    pub console: PathBuf,
}

impl Files {
    pub fn new(name: &str, o: &EnvOptions) -> Result<Files, EnvError> {
        let tag = crate::measure::scratch::unique_name(name);
        let f = Files { initrd: o.work.join(format!("{tag}.cpio")), console: o.work.join(format!("{tag}.console.log")) };
        crate::measure::scratch::create_new(&f.console, 0o600).map_err(EnvError::io(format!("creating {}", f.console.display())))?;
        Ok(f)
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.initrd);
        let _ = std::fs::remove_file(&self.console);
    }
}

/// What one QEMU start left: how it ended, its console, and the console's tail.
pub struct Ran {
    pub end: super::supervise::Ended,
    pub console: String,
    pub log_tail: String,
}

/// Starts QEMU as `cmd` (machine, kernel and initramfs set) with the console
/// (ttyS0) to `files.console` and the results port (ttyS1) on its stdout,
/// and supervises it; `fatal` is also asked (see [`super::supervise::supervise_watching`]).
pub fn start(
    name: &str,
    mut cmd: Command,
    files: &Files,
    o: &EnvOptions,
    fatal: &mut dyn FnMut() -> Option<String>,
) -> Result<Ran, EnvError> {
    cmd.arg("-serial").arg(format!("file:{}", files.console.display()));
    cmd.args(["-serial", "stdio", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]);
    let mut ran = watch(cmd, &files.console, o, fatal).map_err(|source| QemuError::Start { env: name.to_string(), source })?;
    if !ran.end.messages.iter().any(|m| m.kind == "run")
        && let Some(kept) = keep_console(files, o)
    {
        ran.log_tail += &format!(" (console: {})", kept.display());
    }
    Ok(ran)
}

/// The guest's serial port on QEMU's standard output (which the supervisor
/// reads) and logged into `console`.
pub fn serial_on_stdout(cmd: &mut Command, console: &Path) {
    cmd.arg("-chardev").arg(format!("stdio,id=con,signal=off,logfile={}", console.display()));
    cmd.args(["-serial", "chardev:con"]);
}

/// Starts `cmd` (no input, its output piped, ending with oscycles) and
/// watches it within the timeouts of `o` and `fatal`: how it ended, what it
/// logged into `console`, and the last lines of both. The error is the
/// start's.
pub fn watch(mut cmd: Command, console: &Path, o: &EnvOptions, fatal: &mut dyn FnMut() -> Option<String>) -> std::io::Result<Ran> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    crate::measure::watchdog::die_with_parent(&mut cmd);
    let start = Instant::now();
    let child = cmd.spawn()?;
    let end = super::supervise::supervise_watching(child, start, o.init_timeout, o.run_timeout, fatal);
    let console = std::fs::read_to_string(console).unwrap_or_default();
    let log_tail = tail(&format!("{console}\n{}", end.stderr));
    Ok(Ran { end, console, log_tail })
}

/// Copies the console log of a start that sent no results to where the
/// options keep them; its path, if it was copied.
fn keep_console(files: &Files, o: &EnvOptions) -> Option<PathBuf> {
    let prefix = o.keep_console.as_ref()?;
    let name = files.console.file_name()?.to_string_lossy().to_string();
    let kept = PathBuf::from(format!("{}.{}", prefix.display(), name.trim_start_matches("oscycles-")));
    std::fs::copy(&files.console, &kept).ok().map(|_| kept)
}

/// QEMU's common arguments: no defaults, no display, no reboot.
pub fn command(o: &EnvOptions, mem_mib: u32) -> Command {
    let mut cmd = Command::new(QEMU);
    cmd.args(["-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot"]);
    cmd.args(["-m", &mem_mib.to_string(), "-smp", &o.vm_cpus.to_string()]);
    cmd
}

/// Boots the guest once with `spec` in its initramfs and watches it.
/// How many times `--init-timeout` a guest under the instruction counter is
/// given to reach /init.
const COUNTED_BOOT_WAIT: u32 = 3;

fn launch(kvm: bool, spec: &GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
    let name = if kvm { "qemu-kvm" } else { "qemu-tcg" };
    if kvm {
        EnvError::kvm_usable(name)?;
    }
    let kernel = find_kernel(o.kernel.as_deref())?;
    let QemuArgs { machine } = own(o)?;
    let accel = if kvm { Accel::Kvm } else { o.own.get::<AccelArgs>()?.accel };
    // Under the counter the boot counts every instruction of the kernel's
    // idle and calibration loops (about 2.3x a TCG boot, measured by hand;
    // past a 30 s wait at a load of 20): a longer wait for /init.
    let wait = if accel.counts_instructions() { o.init_timeout * COUNTED_BOOT_WAIT } else { o.init_timeout };
    let o = &EnvOptions { init_timeout: wait, ..accel.options(o) };
    let counting = if kvm { None } else { Counting::start(o, QEMU, accel.counts_instructions(), kcount::LINUX_X86_64_BASE)? };
    let o = &kcount::options(o, counting.as_ref());
    let (cmdline, spec) = boot_line(&kcount::guest_spec(accel.guest_spec(spec), counting.as_ref()), GUEST_CMDLINE, o)?;
    let files = Files::new(name, o)?;
    write_initramfs(&files.initrd, &o.exe, &spec, &[])?;
    let mut cmd = command(o, o.vm_mem_mib);
    cmd.args(["-machine", &machine]).args(accel.qemu_args());
    cmd.args(["-cpu", if kvm { "host" } else { accel.tcg_cpu() }]);
    cmd.arg("-kernel").arg(&kernel).arg("-initrd").arg(&files.initrd);
    cmd.args(["-append", &cmdline]);
    if let Some(c) = &counting {
        cmd.args(c.qemu_args());
    }
    let Ran { mut end, log_tail, .. } = start(name, cmd, &files, o, &mut || None)?;
    if let Some(w) = end.why {
        let hint =
            if kvm && w.contains("/init") { " (a nested or software KVM that cannot run this kernel hangs it in early boot)" } else { "" };
        return Err(EnvError::Ended { env: name, why: w, hint, tail: log_tail });
    }
    let clean = end.status.and_then(|s| s.code()) == Some(CLEAN_EXIT);
    let mut facts = Map::new();
    facts.insert("vmm".into(), json!(QEMU));
    facts.insert(ACCEL.into(), json!(accel.name()));
    facts.insert("machine".into(), json!(machine));
    facts.insert(crate::data::schema_core::environment::GUEST_CMDLINE.into(), json!(cmdline));
    facts.insert("vcpus".into(), json!(o.vm_cpus));
    facts.insert("memory_mib".into(), json!(o.vm_mem_mib));
    facts.insert("kernel".into(), json!(kernel.display().to_string()));
    facts.insert("clean_exit".into(), Value::Bool(clean));
    if let Some(c) = &counting {
        c.attach(&mut end.messages);
        facts.insert(kcount::FACT.into(), c.facts());
    }
    Ok(Outcome { messages: end.messages, status: end.status, facts, log_tail })
}

/// The id of [`AccelArgs`] among the environments' options: the xen-* and hermit environments
/// share `--accel`, declared once.
pub const ACCEL_OPTIONS: &str = "qemu-accel";

/// How QEMU runs the guests that take `--accel` (qemu-tcg, xen-*, hermit).
#[derive(clap::Args, Debug, Clone)]
pub struct AccelArgs {
    /// How QEMU runs the qemu-tcg, xen-* and hermit environments. icount
    /// (the default): emulated under QEMU's instruction counter, the cells
    /// are guest instructions per operation, exact and the same on every
    /// run (user and kernel together; what the counter cannot see: caches,
    /// TLB refills, the cost of an address-space switch itself); families
    /// that measure time (fwq, control loop, net, blk, boot) are n/a there.
    /// tcg: emulated, the cells are emulated cycles (the host's TSC while
    /// QEMU emulates: the emulator's time, 10-15% apart between runs).
    /// kvm: on KVM (xen-*: needs nested virtualisation; hermit: a KVM that
    /// runs a guest at hardware speed; qemu-tcg: use qemu-kvm).
    #[arg(long, default_value = "icount", value_enum)]
    pub accel: Accel,
}

/// The seed of a guest's case order under the instruction counter: the
/// same in every run, so that two runs execute the same instructions.
pub const COUNTED_SEED: u64 = 0;

/// How QEMU runs a guest: emulated (its TSC the host's: emulated cycles),
/// emulated under the instruction counter (`-icount shift=0`: its TSC counts
/// guest instructions, exactly), or on KVM.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accel {
    Tcg,
    Icount,
    Kvm,
}

impl Accel {
    /// Its name for QEMU's `-accel` and in the facts.
    pub fn name(self) -> &'static str {
        match self {
            Accel::Tcg => "tcg",
            Accel::Icount => "icount",
            Accel::Kvm => "kvm",
        }
    }

    /// QEMU's arguments for it. The instruction counter: `shift=0` (one
    /// guest nanosecond, one TSC tick, per instruction), `sleep=off` (an
    /// idle guest's clock does not follow the host's: the counts repeat),
    /// no `align` (which only slows the guest to the host's pace); the
    /// real-time clock from a fixed date on the virtual clock (the host's
    /// date would make every boot's work differ).
    pub fn qemu_args(self) -> &'static [&'static str] {
        match self {
            Accel::Tcg => &["-accel", "tcg"],
            Accel::Icount => &["-accel", "tcg", "-icount", "shift=0,sleep=off", "-rtc", "base=2026-01-01T00:00:00,clock=vm"],
            Accel::Kvm => &["-accel", "kvm"],
        }
    }

    /// Whether the guest's TSC counts its instructions.
    pub fn counts_instructions(self) -> bool {
        self == Accel::Icount
    }

    /// The CPU model QEMU emulates for a Linux guest: every feature TCG has
    /// (`max`), but under the counter without RDRAND and RDSEED, which
    /// QEMU answers from the host's entropy: a guest seeded from them would
    /// take other paths (KASLR, hash seeds) on every boot.
    pub fn tcg_cpu(self) -> &'static str {
        if self.counts_instructions() { "max,-rdrand,-rdseed" } else { "max" }
    }

    /// `spec` as a guest under this accelerator gets it: under the counter
    /// it says so, the guest's clock counts instructions, and it measures
    /// one round (the counts repeat: more rounds would give the same).
    pub fn guest_spec(self, spec: &GuestSpec) -> GuestSpec {
        let mut s = spec.clone();
        if self.counts_instructions() {
            s.run.instruction_counter = true;
            s.run.rounds = 1;
            s.run.auto = None;
            // One order of the cases: another would move where the timer's
            // ticks fall among the batches, and the counts with them.
            s.run.seed = COUNTED_SEED;
        }
        s.vm_cpus = self.vcpus(s.vm_cpus);
        s
    }

    /// The vCPUs a guest gets when `asked` for: one under the counter.
    /// QEMU runs every vCPU of an icount guest in turn on one host thread
    /// (round-robin TCG, never in parallel), and here (QEMU 7.2, Debian's
    /// Linux 6.1) a guest with two hung bringing up the second, with
    /// `sleep=off` and `sleep=on` alike.
    pub fn vcpus(self, asked: u32) -> u32 {
        if self.counts_instructions() { 1 } else { asked }
    }

    /// The options `o` for QEMU under this accelerator (its vCPUs).
    pub fn options(self, o: &EnvOptions) -> EnvOptions {
        EnvOptions { vm_cpus: self.vcpus(o.vm_cpus), ..o.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_static_from_dynamic_executables() {
        // /bin/sh is dynamically linked on every Debian.
        assert!(!is_static(Path::new("/bin/sh")).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let helper = dir.path().join("static-elf");
        std::fs::write(&helper, crate::families::bench::proc::helper::helper_elf()).unwrap();
        let s = is_static(&helper).unwrap();
        assert!(s, "the 132-byte helper has no interpreter");
    }
}
