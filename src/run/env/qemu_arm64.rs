//! `qemu-arm64`: Linux on ARM as a column beside qemu-tcg. qemu-system-aarch64
//! emulates QEMU's `virt` board with a Cortex-A53 (one vCPU under the
//! counter) and boots Debian's arm64 kernel, which scripts/setup-qemu-arm64
//! unpacks into [`CACHE`] from the arm64 index (`linux-image-arm64`'s
//! kernel, as the index names it at set-up time), with an initramfs
//! oscycles writes ([`super::initramfs`]) holding the aarch64 build of this
//! same version as /init and the spec: the framing and the plan are
//! qemu-tcg's, the guest's side is [`super::guest::main`] compiled for
//! aarch64. `virt` has one UART (ttyAMA0): the kernel's words and the
//! frames share it (the initramfs names it the results port); the guest
//! powers off through PSCI and QEMU, under `-no-reboot`, exits with status 0.
//!
//! The instruction counter is the default (`--accel icount`): the generic
//! timer counts the guest's nanoseconds, one an instruction, and the cells
//! are guest instructions, the same on every run. What makes them repeat:
//! no random seed in the device tree (`dtb-randomness=off`: no KASLR seed,
//! no RNG seed), no RNDR (a Cortex-A53 has none), the RTC on the virtual
//! clock from a fixed date, and `randomize_kstack_offset=off` on the kernel's
//! command line (Debian's kernel draws a random stack offset on every
//! system call, from a generator no entropy ever seeds: getpid would cost
//! 9,746 instructions instead of some 330, and differ between boots).
//! `--accel tcg`: emulated time. This host cannot run an arm64 guest on
//! KVM: `--accel kvm` is refused.

use super::cmdline::{GUEST_KERNEL_OPTIONS, GuestKernelArgs, boot_line};
use super::environment::{Environment, Outcome};
use super::error::{EnvError, OwnError};
use super::guest::{GuestSpec, PORT_PATH};
use super::initramfs::{is_static, write_initramfs};
use super::options::{EnvOptions, OwnOptions};
use super::vm::{ACCEL_OPTIONS, Accel, AccelArgs, Booted, Files, Finish, QemuMachine, Serial, StartError};
use crate::run::plan::PlannedCase;
use std::path::{Path, PathBuf};

/// Where scripts/setup-qemu-arm64 unpacks the kernel: `boot/vmlinuz-*`,
/// `version`; or `failed` (the reason and apt's last lines).
pub const CACHE: &str = "/var/cache/oscycles/qemu-arm64";

const NAME: &str = "qemu-arm64";

/// The command that unpacks the kernel, as reasons name it.
const SETS_UP: &str = "scripts/setup-qemu-arm64 (run by scripts/setup)";

/// The command that builds the aarch64 oscycles, as reasons name it.
const BUILDS: &str = "scripts/build-aarch64";

/// The VMM.
pub const QEMU_ARM64: &str = "qemu-system-aarch64";

/// The board: `virt` without the random seeds it would put in the device tree.
const MACHINE: &str = "virt,dtb-randomness=off";

/// The CPU emulated: the Cortex-A53 (ARMv8.0-A, no RNDR).
const CPU: &str = "cortex-a53";

/// The guest kernel's own parameters.
const GUEST_CMDLINE: &str = "console=ttyAMA0 quiet loglevel=3 panic=-1 oops=panic randomize_kstack_offset=off";

/// The guest's one UART, its results port.
const PORT: &str = "/dev/ttyAMA0";

/// Where scripts/build-aarch64 leaves its build, in the target directory.
const AARCH64_BUILD: &str = "aarch64/aarch64-unknown-linux-gnu/release/oscycles";

/// How many times `--init-timeout` the kernel may take to the hello
/// (emulated: an arm64 kernel probes its devices for longer).
const SLOW_BOOT: u32 = 2;

/// ELF's machine number of AArch64.
const EM_AARCH64: u16 = 183;

/// This binary's version, as its `--version` says it: the aarch64 build it
/// boots says the same.
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (git ", env!("OSCYCLES_GIT"), ")");

/// qemu-arm64's own options.
#[derive(clap::Args, Debug, Clone)]
pub struct Arm64Args {
    /// The aarch64 oscycles qemu-arm64 boots as /init: a static build of
    /// this same version (scripts/build-aarch64 builds it; default: its
    /// output in this binary's target directory,
    /// target/aarch64/aarch64-unknown-linux-gnu/release/oscycles).
    #[arg(long, value_name = "PATH")]
    pub arm64_exe: Option<PathBuf>,
    /// The arm64 kernel qemu-arm64 boots (a raw Image; default: the one
    /// scripts/setup-qemu-arm64 unpacked from Debian's arm64 index).
    #[arg(long, value_name = "IMAGE")]
    pub arm64_kernel: Option<PathBuf>,
}

/// Linux on ARM under QEMU.
pub struct QemuArm64;

/// Why qemu-arm64 cannot boot.
#[derive(Debug, thiserror::Error)]
pub enum Arm64Error {
    /// The reason and apt's last lines, as scripts/setup-qemu-arm64 left them.
    #[error("qemu-arm64: setting up its kernel failed: {0} ({SETS_UP} tries again)")]
    SetUpFailed(String),
    #[error("qemu-arm64: no arm64 kernel in {} ({SETS_UP} unpacks Debian's there)", .0.display())]
    NoKernel(PathBuf),
    #[error("--arm64-kernel {}: no such file", .0.display())]
    NoSuchKernel(PathBuf),
    #[error("qemu-arm64: no aarch64 oscycles at {} ({BUILDS} builds it there; --arm64-exe names another)", .0.display())]
    NoExe(PathBuf),
    #[error("qemu-arm64: {} is no static aarch64 executable ({why}; {BUILDS} builds one)", path.display())]
    NotAarch64 { path: PathBuf, why: &'static str },
    #[error("qemu-arm64: {} is not oscycles {VERSION}, this binary's version ({BUILDS} builds it again from this tree)", .0.display())]
    OtherVersion(PathBuf),
    #[error(
        "--accel kvm: qemu-arm64 is emulated (an arm64 guest on this host's KVM cannot be): --accel icount (the default: guest instructions) or tcg (emulated time)"
    )]
    Kvm,
}

impl OwnError for Arm64Error {}

/// The kernel's directory: [`CACHE`], or `OSCYCLES_QEMU_ARM64_CACHE` (as
/// for scripts/setup-qemu-arm64; the tests point it at a missing or failed one).
fn cache_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_QEMU_ARM64_CACHE").map_or_else(|| PathBuf::from(CACHE), PathBuf::from)
}

/// The kernel: the one given, else the newest the set-up unpacked into
/// `dir`, or why there is none; with the package it came from, if known.
fn find_kernel(given: Option<&Path>, dir: &Path) -> Result<(PathBuf, Option<String>), Arm64Error> {
    if let Some(k) = given {
        return if k.is_file() { Ok((k.to_path_buf(), None)) } else { Err(Arm64Error::NoSuchKernel(k.to_path_buf())) };
    }
    if let Ok(why) = std::fs::read_to_string(dir.join("failed")) {
        return Err(Arm64Error::SetUpFailed(why.lines().take(4).collect::<Vec<_>>().join(" | ")));
    }
    let mut ks: Vec<PathBuf> = std::fs::read_dir(dir.join("boot"))
        .map(|d| {
            d.flatten().map(|e| e.path()).filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-"))).collect()
        })
        .unwrap_or_default();
    ks.sort();
    let k = ks.pop().ok_or_else(|| Arm64Error::NoKernel(dir.join("boot")))?;
    let version = std::fs::read_to_string(dir.join("version")).ok().map(|v| v.trim().chars().take(200).collect());
    Ok((k, version))
}

/// The aarch64 oscycles: the one given, else scripts/build-aarch64's
/// beside `exe` (this binary, in `<target>/<triple>/<profile>/`).
fn guest_exe(given: Option<&Path>, exe: &Path) -> PathBuf {
    given.map_or_else(|| exe.ancestors().nth(3).unwrap_or(Path::new("target")).join(AARCH64_BUILD), Path::to_path_buf)
}

/// Refuses what is not a static aarch64 oscycles of this version.
fn check_exe(path: &Path) -> Result<(), Arm64Error> {
    let bytes = std::fs::read(path).map_err(|_| Arm64Error::NoExe(path.to_path_buf()))?;
    let bad = |why| Err(Arm64Error::NotAarch64 { path: path.to_path_buf(), why });
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 {
        return bad("not a 64-bit ELF file");
    }
    if u16::from_le_bytes([bytes[18], bytes[19]]) != EM_AARCH64 {
        return bad("another machine's");
    }
    if !is_static(path).unwrap_or(false) {
        return bad("dynamically linked");
    }
    if !bytes.windows(VERSION.len()).any(|w| w == VERSION.as_bytes()) {
        return Err(Arm64Error::OtherVersion(path.to_path_buf()));
    }
    Ok(())
}

impl Environment for QemuArm64 {
    fn name(&self) -> &'static str {
        NAME
    }

    fn about(&self) -> &'static str {
        "Debian's arm64 Linux under qemu-system-aarch64 (virt, Cortex-A53), the aarch64 build of this binary as /init; --accel icount (the default: guest instructions) or tcg"
    }

    fn options(&self) -> Option<OwnOptions> {
        Some(OwnOptions::of::<Arm64Args>("qemu-arm64").and::<AccelArgs>(ACCEL_OPTIONS).and::<GuestKernelArgs>(GUEST_KERNEL_OPTIONS))
    }

    fn counts_instructions(&self, o: &EnvOptions) -> bool {
        o.own.get::<AccelArgs>().is_ok_and(|a| a.accel == Accel::Icount)
    }

    fn check(&self, o: &EnvOptions) -> Result<(), EnvError> {
        let args = o.own.get::<Arm64Args>()?;
        if o.own.get::<AccelArgs>()?.accel == Accel::Kvm {
            return Err(Arm64Error::Kvm.into());
        }
        match args.arm64_kernel {
            Some(k) if !k.is_file() => Err(Arm64Error::NoSuchKernel(k).into()),
            _ => Ok(()),
        }
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        let args = o.own.get::<Arm64Args>()?;
        let (kernel, package) = find_kernel(args.arm64_kernel.as_deref(), &cache_dir())?;
        // Beside the path this binary was started by (o.exe is /proc/PID/exe, which has no directory).
        let started = std::env::current_exe().unwrap_or_else(|_| o.exe.clone());
        let exe = guest_exe(args.arm64_exe.as_deref(), &started);
        check_exe(&exe)?;
        let accel = o.own.get::<AccelArgs>()?.accel;
        let o = &EnvOptions { init_timeout: accel.boot_wait(o.init_timeout, SLOW_BOOT), ..accel.options(o) };
        let (cmdline, spec) = boot_line(&accel.guest_spec(spec), GUEST_CMDLINE, o)?;
        let files = Files::new(NAME, o)?;
        write_initramfs(&files.initrd, &exe, &spec, &[(PORT_PATH.trim_start_matches('/'), PORT.as_bytes())])?;
        let m = QemuMachine {
            machine: MACHINE.into(),
            cpu: Some(CPU),
            mem_mib: o.vm_mem_mib,
            vcpus: o.vm_cpus,
            kernel: kernel.clone(),
            initrd: files.initrd.clone().into(),
            append: Some(cmdline.clone()),
            serial: Serial::Shared,
            debug_exit: false,
        };
        let cmd = super::vm::qemu_command_of(QEMU_ARM64, &m, accel, o, &files.console);
        let Booted { end, log_tail, .. } = super::vm::watch(cmd, &files, o, Some("run"), &mut || None).map_err(|source| StartError {
            env: NAME.into(),
            what: QEMU_ARM64.into(),
            source,
        })?;
        if let Some(why) = end.why {
            return Err(EnvError::Ended { env: NAME, why, hint: "", tail: log_tail });
        }
        let mut facts = super::qemu::boot_facts(QEMU_ARM64, &m, accel, Finish::Zero.is(end.status));
        facts.insert("cpu_model".into(), CPU.into());
        facts.insert("guest_exe".into(), exe.display().to_string().into());
        if let Some(p) = package {
            facts.insert("kernel_package".into(), p.into());
        }
        Ok(Outcome { messages: end.messages, status: end.status, facts, log_tail, doc: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_failed_kernel_says_why_and_what_unpacks_it() {
        let d = tempfile::tempdir().unwrap();
        let e = find_kernel(None, d.path()).unwrap_err().to_string();
        assert!(e.contains("no arm64 kernel") && e.contains("scripts/setup-qemu-arm64"), "{e}");
        std::fs::create_dir(d.path().join("boot")).unwrap();
        std::fs::write(d.path().join("boot/vmlinuz-6.1.0-9-arm64"), b"old").unwrap();
        std::fs::write(d.path().join("boot/vmlinuz-6.1.0-10-arm64"), b"new").unwrap();
        std::fs::write(d.path().join("version"), "linux-image-6.1.0-10-arm64 6.1.1-1\n").unwrap();
        let (k, v) = find_kernel(None, d.path()).unwrap();
        assert!(k.ends_with("vmlinuz-6.1.0-9-arm64"), "the last by name: {k:?}");
        assert_eq!(v.as_deref(), Some("linux-image-6.1.0-10-arm64 6.1.1-1"));
        std::fs::write(d.path().join("failed"), "downloading or unpacking Debian's arm64 kernel failed\nE: 404\n").unwrap();
        let e = find_kernel(None, d.path()).unwrap_err().to_string();
        assert!(e.contains("setting up its kernel failed") && e.contains("E: 404") && e.contains("tries again"), "{e}");
        let given = d.path().join("boot/vmlinuz-6.1.0-10-arm64");
        assert_eq!(find_kernel(Some(&given), d.path()).unwrap().0, given, "a given kernel, whatever the cache says");
    }

    #[test]
    fn the_guest_binary_must_be_a_static_aarch64_oscycles_of_this_version() {
        let exe = Path::new("/w/target/x86_64-unknown-linux-gnu/release/oscycles");
        assert_eq!(guest_exe(None, exe), Path::new("/w/target/aarch64/aarch64-unknown-linux-gnu/release/oscycles"));
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("none");
        assert!(matches!(check_exe(&missing), Err(Arm64Error::NoExe(_))));
        // This test binary: a 64-bit ELF for another machine.
        let me = std::env::current_exe().unwrap();
        let e = check_exe(&me).unwrap_err().to_string();
        assert!(e.contains("no static aarch64 executable") && e.contains("scripts/build-aarch64"), "{e}");
        // An aarch64 header of a static file without this version.
        let mut elf = vec![0u8; 4096];
        elf[..5].copy_from_slice(b"\x7fELF\x02");
        elf[18..20].copy_from_slice(&EM_AARCH64.to_le_bytes());
        let f = d.path().join("other");
        std::fs::write(&f, &elf).unwrap();
        assert!(matches!(check_exe(&f), Err(Arm64Error::OtherVersion(_))), "{:?}", check_exe(&f));
        elf.extend_from_slice(VERSION.as_bytes());
        std::fs::write(&f, &elf).unwrap();
        assert!(check_exe(&f).is_ok(), "{:?}", check_exe(&f));
    }
}
