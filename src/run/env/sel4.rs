//! `sel4`: the seL4 microkernel as a column, the L4 tables' own kind of
//! kernel beside the Linux ones. QEMU boots seL4 5.0.0 (the source crates.io
//! ships in sel4-sys 0.0.28, built by scripts/setup-sel4 into [`CACHE`]: pc99
//! ia32, release, fastpath) with oscycles' root task as its multiboot module
//! (guest/sel4, compiled by build.rs and embedded here). The host writes the
//! plan into the root task's image (the words of program/words.rs in its
//! `oscycles_args`); the root task says hello, measures the cases it knows
//! in seL4's terms (seL4_Call/ReplyRecv for ipc.sel4-call, seL4_Yield,
//! seL4_Reply as the cheapest kernel entry, two threads yielding), sends the
//! samples framed over COM1 and ends QEMU through isa-debug-exit;
//! the guest-program kit ([`super::program`]) boots it and makes the run
//! document of them.
//!
//! Units: under `--accel icount` (this environment's default) the guest's
//! TSC counts guest instructions, exactly (`guest_instructions`); under
//! `--accel tcg` emulated cycles; `--accel kvm` needs a KVM that runs
//! ordinary guests (n/a with the reason otherwise). A kernel that faults
//! silently (a release kernel prints nothing) or hangs is given up within
//! the init timeout with what the console said. A full run with
//! ipc.sel4-call also boots the independent check (guest/sel4/check.c:
//! 10^5 round trips in one rdtsc pair) and records its figure.

use super::error::{EnvError, OwnError};
use super::guest::GuestMode;
use super::program::{At, Boot, Check, GuestProgram, Machine, Names};
use super::vm::{Finish, QemuMachine, Serial};
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Where scripts/setup-sel4 leaves the kernel (`kernel.elf`, `versions`),
/// or `failed` (the reason and the log's last lines).
pub const CACHE: &str = "/var/cache/oscycles/sel4";

/// The command that builds the kernel, as reasons name it.
const BUILDS: &str = "scripts/setup-sel4 (run by scripts/setup)";

/// oscycles' root task and the independent check (build.rs, guest/sel4).
static ROOT_TASK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sel4-roottask.elf"));
static CHECK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sel4-check.elf"));

/// The marker the host overwrites with the plan, and the room behind it.
const ARGS_MARKER: &[u8] = b"@@OSCYCLES-SEL4-ARGS@@";
const ARGS_ROOM: usize = 16384;

/// The kernel, as built: version, architecture, configuration.
const KERNEL: &str = "seL4 5.0.0";
const ARCH: &str = "ia32 (pc99)";
const CONFIG: &str = "release (no debug build, no printing), fastpath, one node";

/// What it is, for `--env`'s help.
const ABOUT: &str = "the seL4 microkernel (5.0.0 from crates.io sel4-sys, ia32 release with the fastpath) and oscycles' root task, booted by QEMU; --accel icount (the default here: guest instructions), tcg (emulated cycles) or kvm";

/// How the root task's threads are scheduled.
const POLICY: &str = "seL4's scheduler (fixed priority 255, round robin)";

/// The build's directory: [`CACHE`], or `OSCYCLES_SEL4_CACHE` (as for
/// scripts/setup-sel4; the tests point it at a missing or failed build).
fn cache_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_SEL4_CACHE").map_or_else(|| PathBuf::from(CACHE), PathBuf::from)
}

/// seL4 under QEMU with oscycles' root task.
pub struct Sel4;

/// Why seL4 cannot be booted.
#[derive(Debug, thiserror::Error)]
pub enum Sel4Error {
    /// The reason and the log's last lines, as scripts/setup-sel4 left them.
    #[error("sel4: the seL4 build failed: {0} ({BUILDS} builds it)")]
    BuildFailed(String),
    #[error("sel4: not built ({} missing; {BUILDS} builds seL4 into {})", missing.display(), dir.display())]
    NotBuilt { missing: PathBuf, dir: PathBuf },
    #[error("sel4: the plan takes {0} bytes, more than the root task's {ARGS_ROOM}")]
    PlanTooLong(usize),
    #[error("sel4: the root task has no plan marker (a build.rs problem)")]
    NoMarker,
}

impl OwnError for Sel4Error {}

/// The kernel scripts/setup-sel4 built, and its versions line.
pub struct Kernel {
    path: PathBuf,
    versions: String,
}

/// The kernel of the build in `dir`, or why there is none.
fn find_kernel(dir: &Path) -> Result<Kernel, Sel4Error> {
    if let Ok(why) = std::fs::read_to_string(dir.join("failed")) {
        return Err(Sel4Error::BuildFailed(why.lines().collect::<Vec<_>>().join(" | ")));
    }
    let path = dir.join("kernel.elf");
    if !path.is_file() {
        return Err(Sel4Error::NotBuilt { missing: path, dir: dir.to_path_buf() });
    }
    Ok(Kernel { path, versions: std::fs::read_to_string(dir.join("versions")).unwrap_or_default().trim().to_string() })
}

/// The root task's image with `args` written over its marker (NUL-ended):
/// sel4-arm's too (the same marker).
pub(super) fn with_args(image: &[u8], args: &str) -> Result<Vec<u8>, Sel4Error> {
    if args.len() >= ARGS_ROOM {
        return Err(Sel4Error::PlanTooLong(args.len()));
    }
    let at = image.windows(ARGS_MARKER.len()).position(|w| w == ARGS_MARKER).ok_or(Sel4Error::NoMarker)?;
    let mut out = image.to_vec();
    out[at..at + ARGS_ROOM].fill(0);
    out[at..at + args.len()].copy_from_slice(args.as_bytes());
    Ok(out)
}

impl GuestProgram for Sel4 {
    type Build = Kernel;

    fn names(&self) -> Names {
        Names { env: "sel4", system: "seL4", policy: POLICY, about: ABOUT }
    }

    fn find(&self) -> Result<Kernel, EnvError> {
        EnvError::x86_only("sel4", "its root task is ia32 code, which an x86-64 build of oscycles carries")?;
        Ok(find_kernel(&cache_dir())?)
    }

    fn image(&self, _: &Kernel, boot: Boot, words: &str, _: GuestMode) -> Result<Vec<u8>, EnvError> {
        Ok(match boot {
            Boot::Program => with_args(ROOT_TASK, words)?,
            Boot::Check => CHECK.to_vec(),
        })
    }

    /// One CPU (a one-node kernel); at most 1 GiB (ia32: the kernel maps
    /// the low memory into its window); the CPU model qemu-tcg's.
    fn machine(&self, kernel: &Kernel, at: &At) -> Result<Machine, EnvError> {
        Ok(Machine::Qemu(QemuMachine {
            machine: at.o.own.get::<super::vm::QemuArgs>()?.machine,
            cpu: Some(at.accel.tcg_cpu()),
            mem_mib: at.o.vm_mem_mib.min(1024),
            vcpus: 1,
            kernel: kernel.path.clone(),
            initrd: at.image.into(),
            append: None,
            serial: Serial::Shared,
            debug_exit: true,
        }))
    }

    fn facts(&self, kernel: &Kernel) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert("kernel".into(), json!(KERNEL));
        f.insert("kernel_arch".into(), json!(ARCH));
        f.insert("kernel_config".into(), json!(CONFIG));
        f.insert("kernel_image".into(), json!(kernel.path.display().to_string()));
        f.insert("versions".into(), json!(kernel.versions));
        f
    }

    fn absent(&self, p: &PlannedCase) -> String {
        absent_reason(p, "seL4", "guest/sel4/roottask.c")
    }

    /// Where the kernel's instructions begin, from its ELF: seL4 ia32's
    /// kernel window, its code linked from 0xe0103000 (the low boot code,
    /// .phys at 0x100000, runs only while it boots).
    fn kernel_base(&self, kernel: &Kernel) -> Result<Option<u64>, EnvError> {
        Ok(Some(super::kcount::kernel_base(&kernel.path)?))
    }

    /// guest/sel4/check.c: 10^5 round trips in one rdtsc pair; its line
    /// `sel4-check round_trips=N total=T`, and the one-way figure the
    /// l4-ipc cell shows beside it.
    fn check(&self) -> Option<Check> {
        Some(Check { marker: "sel4-check ", checks: |p| p.benchmark.id == "ipc.sel4-call", figures: check_figures })
    }

    /// The root task writes 0 to isa-debug-exit.
    fn finish(&self) -> Finish {
        Finish::DebugExit(0)
    }

    fn failed(&self, console: &str, _: Option<std::process::ExitStatus>, _: &str) -> Option<String> {
        console
            .lines()
            .find(|l| l.contains("oscycles-sel4: FAILED"))
            .map(|l| format!("the root task failed: {}", super::frame::plain(l.trim(), 300)))
    }

    fn hang_hint(&self) -> &'static str {
        " (a release seL4 kernel that faults prints nothing)"
    }
}

/// The one-way figure of the check's round trips.
fn check_figures(v: &mut Map<String, Value>) {
    if let (Some(n), Some(t)) = (v.get("round_trips").and_then(Value::as_f64), v.get("total").and_then(Value::as_f64)) {
        v.insert("one_way".into(), json!(t / n / 2.0));
        v.insert(
            "what".into(),
            json!("10^5 seL4_Call round trips of no payload to a server in the same address space, one rdtsc pair around the loop"),
        );
    }
}

/// Why a case of the plan is not measured in seL4 (`system`: its name, as
/// reasons give it) by oscycles' root task `task` (its source file):
/// sel4-arm's too.
pub(super) fn absent_reason(p: &PlannedCase, system: &str, task: &str) -> String {
    let id = p.benchmark.id.as_str();
    let why = match p.benchmark.family.name() {
        "ipc" => "seL4 has no pipes, sockets, futexes or message queues: its IPC is ipc.sel4-call's row",
        "pagefault" => "no demand paging in seL4: a root task maps a frame before it touches it",
        "proc" => "seL4 has no processes to fork or exec",
        "boot" => "boot time is measured by the host",
        _ if id == "syscall.getpid" || id == "syscall.getppid" => {
            "seL4 has no process ids; the cheapest kernel entry is syscall.null's row (seL4_Reply)"
        }
        _ => {
            return format!(
                "{id} in {system}: not in oscycles' root task ({task} measures ipc.sel4-call, seL4_Yield, seL4_Reply and two threads yielding)"
            );
        }
    };
    format!("{id} in {system}: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_written_over_the_marker_and_bounded() {
        let image = with_args(ROOT_TASK, "mode=run benches=syscall.null").unwrap();
        assert_eq!(image.len(), ROOT_TASK.len());
        let at = image.windows(9).position(|w| w == b"mode=run ").expect("written");
        assert_eq!(&image[at..at + 29], b"mode=run benches=syscall.null");
        assert_eq!(image[at + 29], 0, "NUL-ended");
        assert!(image.windows(ARGS_MARKER.len()).all(|w| w != ARGS_MARKER), "the marker is gone");
        assert!(matches!(with_args(ROOT_TASK, &"x".repeat(ARGS_ROOM)), Err(Sel4Error::PlanTooLong(_))));
        assert!(matches!(with_args(b"no marker here", "a=b"), Err(Sel4Error::NoMarker)));
    }

    #[test]
    fn a_missing_or_failed_build_says_why_and_what_builds_it() {
        let d = tempfile::tempdir().unwrap();
        let e = find_kernel(d.path()).err().unwrap().to_string();
        assert!(e.contains("not built") && e.contains("scripts/setup-sel4"), "{e}");
        std::fs::write(d.path().join("failed"), "building the seL4 kernel failed\nmake: *** [kernel.elf] Error 1\n").unwrap();
        let e = find_kernel(d.path()).err().unwrap().to_string();
        assert!(e.contains("build failed") && e.contains("Error 1") && e.contains("scripts/setup-sel4"), "{e}");
    }

    #[test]
    fn the_check_line_is_read_and_halved() {
        let Value::Object(mut v) = super::super::program::document::check_line(
            "Booting from ROM..\r\nsel4-check round_trips=100000 total=51509000\r\n",
            "sel4-check ",
        ) else {
            panic!("figures")
        };
        check_figures(&mut v);
        assert_eq!((v["round_trips"].as_f64(), v["one_way"].as_f64()), (Some(100000.0), Some(257.545)));
    }
}
