//! Starting a virtual machine, the one way every environment that boots one
//! does (qemu-*, xen-*, and the guest programs of [`super::program`]): the
//! files of a start in the run's directory ([`Files`]: the image created
//! new, the console), QEMU's command line made in one function
//! ([`qemu_command`], from a [`QemuMachine`] and the [`Accel`]: the
//! accelerator's arguments, the CPU model, the serial ports), one rule for
//! how long a guest may take to its hello ([`Accel::boot_wait`]), and the
//! watch that keeps a failed guest's console beside the run ([`watch`]).

use super::environment::Message;
use super::error::EnvError;
use super::guest::GuestSpec;
use super::options::EnvOptions;
use super::output::tail;
use super::supervise::Supervised;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const QEMU: &str = "qemu-system-x86_64";

/// A machine's VMM that would not start.
#[derive(Debug, thiserror::Error)]
#[error("{env}: starting {what}: {source} (scripts/setup installs it: scripts/programs names its package)")]
pub struct StartError {
    pub env: String,
    /// QEMU, or another VMM.
    pub what: String,
    pub source: std::io::Error,
}

impl super::error::OwnError for StartError {}

impl StartError {
    /// The error of `env` starting QEMU.
    pub fn qemu(env: &str) -> impl FnOnce(std::io::Error) -> StartError {
        let env = env.to_string();
        move |source| StartError { env, what: QEMU.into(), source }
    }
}

/// The image and console log of one start, in the run's private
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

    /// Writes `bytes` as the start's image: a file created new (never one
    /// that was there, never through a link).
    pub fn write_image(&self, bytes: &[u8]) -> Result<(), EnvError> {
        let what = || format!("writing {}", self.initrd.display());
        let mut f = crate::measure::scratch::create_new(&self.initrd, 0o600).map_err(EnvError::io(what()))?;
        std::io::Write::write_all(&mut f, bytes).map_err(EnvError::io(what()))
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.initrd);
        let _ = std::fs::remove_file(&self.console);
    }
}

/// What one start of a machine left: how it ended, its console, and the
/// console's tail (with where the console was kept, if it was).
pub struct Booted {
    pub end: Supervised,
    pub console: String,
    pub log_tail: String,
}

impl Booted {
    /// The first message of `kind`.
    pub fn first(&self, kind: &str) -> Option<&Message> {
        self.end.messages.iter().find(|m| m.kind == kind)
    }
}

/// Starts `cmd` (no input, its output piped, ending with oscycles) and
/// watches it within the timeouts of `o` and `fatal`: how it ended, what it
/// logged into `files.console`, and the last lines of both. A start that
/// sent no message of kind `answer` (its results) leaves its console where
/// the options keep them, and the tail says where. The error is the start's.
pub fn watch(
    mut cmd: Command,
    files: &Files,
    o: &EnvOptions,
    answer: Option<&str>,
    fatal: &mut dyn FnMut() -> Option<String>,
) -> std::io::Result<Booted> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    crate::measure::watchdog::die_with_parent(&mut cmd);
    let start = Instant::now();
    let child = cmd.spawn()?;
    let mut cap = super::output::ConsoleCap::new(&files.console);
    let end = super::supervise::supervise_watching(child, start, o.init_timeout, o.run_timeout, &mut |_| cap.check().or_else(&mut *fatal));
    let console = super::output::read_console(&files.console);
    let mut log_tail = tail(&format!("{console}\n{}", end.stderr));
    if let Some(kind) = answer
        && !end.messages.iter().any(|m| m.kind == kind)
        && let Some(kept) = keep_console(files, &console, o)
    {
        log_tail += &format!(" (console: {})", kept.display());
    }
    Ok(Booted { end, console, log_tail })
}

/// Writes the console of a start that sent no results where the options
/// keep them; its path, if it was written.
fn keep_console(files: &Files, console: &str, o: &EnvOptions) -> Option<PathBuf> {
    let prefix = o.keep_console.as_ref()?;
    let name = files.console.file_name()?.to_string_lossy().to_string();
    let kept = PathBuf::from(format!("{}.{}", prefix.display(), name.trim_start_matches("oscycles-")));
    crate::base::fsafe::write_file(&kept, console).ok().map(|()| kept)
}

/// QEMU's common arguments: no defaults, no display, no reboot; the memory
/// and vCPUs given. Every QEMU an environment starts begins here.
pub fn command(o: &EnvOptions, mem_mib: u32) -> Command {
    command_of(QEMU, o, mem_mib)
}

/// [`command`] for the QEMU of another architecture (`vmm`: qemu-system-aarch64).
pub fn command_of(vmm: &str, o: &EnvOptions, mem_mib: u32) -> Command {
    let mut cmd = Command::new(vmm);
    cmd.args(["-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot"]);
    cmd.args(["-m", &mem_mib.to_string(), "-smp", &o.vm_cpus.to_string()]);
    cmd
}

/// Where a guest's serial ports go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serial {
    /// A Linux guest's two: the console (ttyS0) into the log file, the
    /// results port (ttyS1) on QEMU's stdout; the guest ends through
    /// isa-debug-exit.
    Split,
    /// One port for both (a guest program's frames beside its kernel's
    /// words): on QEMU's stdout, and logged into the console file.
    Shared,
}

impl Serial {
    /// Adds the serial ports' arguments for a start whose console is `console`.
    pub fn add(self, cmd: &mut Command, console: &Path) {
        match self {
            Serial::Split => {
                cmd.arg("-serial").arg(format!("file:{}", console.display()));
                cmd.args(["-serial", "stdio"]);
                cmd.args(DEBUG_EXIT);
            }
            Serial::Shared => {
                cmd.arg("-chardev").arg(format!("stdio,id=con,signal=off,logfile={}", console.display()));
                cmd.args(["-serial", "chardev:con"]);
            }
        }
    }
}

/// The isa-debug-exit device: a guest's write of v to port 0xf4 ends QEMU
/// with status (v << 1) | 1.
const DEBUG_EXIT: [&str; 2] = ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"];

/// QEMU's machine type (`--machine`): the qemu environments' own option,
/// which sel4 and hermit read too.
#[derive(clap::Args, Debug, Clone)]
pub struct QemuArgs {
    /// QEMU machine type.
    #[arg(long, default_value = "q35", value_name = "NAME")]
    pub machine: String,
}

/// A machine QEMU boots directly (`-kernel`), as data.
#[derive(Debug, Clone)]
pub struct QemuMachine {
    /// The machine type (`-machine`).
    pub machine: String,
    /// The CPU model under emulation (None: QEMU's default); on KVM the
    /// host's ([`Accel::cpu_model`]).
    pub cpu: Option<&'static str>,
    pub mem_mib: u32,
    pub vcpus: u32,
    pub kernel: PathBuf,
    /// `-initrd`: an image's path, or a multiboot module's line.
    pub initrd: OsString,
    pub append: Option<String>,
    pub serial: Serial,
    /// isa-debug-exit, for a guest that ends through it ([`Serial::Split`] has it).
    pub debug_exit: bool,
}

/// QEMU's command for `m` under `accel`, its console in `console`: the
/// one place a QEMU command line of a directly booted machine is made.
pub fn qemu_command(m: &QemuMachine, accel: Accel, o: &EnvOptions, console: &Path) -> Command {
    qemu_command_of(QEMU, m, accel, o, console)
}

/// [`qemu_command`] for the QEMU of another architecture (`vmm`).
pub fn qemu_command_of(vmm: &str, m: &QemuMachine, accel: Accel, o: &EnvOptions, console: &Path) -> Command {
    let mut cmd = command_of(vmm, &EnvOptions { vm_cpus: m.vcpus, ..o.clone() }, m.mem_mib);
    cmd.args(["-machine", &m.machine]).args(accel.qemu_args());
    if let Some(cpu) = accel.cpu_model(m.cpu) {
        cmd.args(["-cpu", cpu]);
    }
    cmd.arg("-kernel").arg(&m.kernel).arg("-initrd").arg(&m.initrd);
    if let Some(a) = &m.append {
        cmd.args(["-append", a]);
    }
    m.serial.add(&mut cmd, console);
    if m.debug_exit && m.serial != Serial::Split {
        cmd.args(DEBUG_EXIT);
    }
    cmd
}

/// How a guest says it finished cleanly, by its VMM's exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// It wrote this value to isa-debug-exit: status (value << 1) | 1.
    DebugExit(u8),
    /// Its VMM exits with status 0 (a guest that reboots under `-no-reboot`).
    Zero,
}

/// How the host sees a Linux guest's clean finish ([`super::guest::power_off`]):
/// 0x10 written to isa-debug-exit (QEMU's exit status 33).
pub const LINUX_FINISH: Finish = Finish::DebugExit(0x10);

impl Finish {
    /// Whether `status` is this clean finish.
    pub fn is(self, status: Option<std::process::ExitStatus>) -> bool {
        let code = status.and_then(|s| s.code());
        match self {
            Finish::DebugExit(v) => code == Some((i32::from(v) << 1) | 1),
            Finish::Zero => code == Some(0),
        }
    }
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

/// How many times `--init-timeout` a guest under the instruction counter
/// is given to its hello: the counter counts every instruction of a
/// kernel's idle and calibration loops (a Linux boot takes about 2.3x a
/// TCG boot, measured by hand; past a 30 s wait at a load of 20).
const COUNTED_BOOT_WAIT: u32 = 3;

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

    /// The CPU model a machine gets: the host's on KVM, else the one it
    /// emulates (`emulated`; None: QEMU's default).
    pub fn cpu_model(self, emulated: Option<&'static str>) -> Option<&'static str> {
        if self == Accel::Kvm { Some("host") } else { emulated }
    }

    /// How long a guest may take to its hello: on KVM `init_timeout`;
    /// emulated, times `slow` (a guest whose kernel boots slowly emulated:
    /// probes its devices for long, a hypervisor first), and under the
    /// counter at least times its slower boot.
    pub fn boot_wait(self, init_timeout: Duration, slow: u32) -> Duration {
        match self {
            Accel::Kvm => init_timeout,
            Accel::Tcg => init_timeout * slow,
            Accel::Icount => init_timeout * slow.max(COUNTED_BOOT_WAIT),
        }
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
    fn a_clean_finish_is_read_from_the_status_and_the_cpu_model_and_wait_come_from_the_accelerator() {
        use std::os::unix::process::ExitStatusExt;
        let code = |c: i32| Some(std::process::ExitStatus::from_raw(c << 8));
        assert!(Finish::DebugExit(0x10).is(code(33)) && Finish::DebugExit(0).is(code(1)) && Finish::DebugExit(1).is(code(3)));
        assert!(Finish::Zero.is(code(0)) && !Finish::Zero.is(code(1)) && !Finish::DebugExit(1).is(None));
        assert_eq!((Accel::Kvm.cpu_model(Some("max")), Accel::Tcg.cpu_model(None)), (Some("host"), None));
        let s = Duration::from_secs(10);
        assert_eq!(Accel::Icount.boot_wait(s, 1), s * 3);
        assert_eq!(Accel::Tcg.boot_wait(s, 1), s);
        assert_eq!((Accel::Icount.boot_wait(s, 4), Accel::Tcg.boot_wait(s, 4), Accel::Kvm.boot_wait(s, 4)), (s * 4, s * 4, s));
    }
}
