//! `sel4`: the seL4 microkernel as a column, the L4 tables' own kind of
//! kernel beside the Linux ones. QEMU boots seL4 5.0.0 (the source crates.io
//! ships in sel4-sys 0.0.28, built by scripts/setup-sel4 into [`CACHE`]: pc99
//! ia32, release, fastpath) with oscycles' root task as its multiboot module
//! (guest/sel4, compiled by build.rs and embedded here). The host writes the
//! plan into the root task's image (the words of program.rs in its
//! `oscycles_args`); the root task says hello, measures the cases it knows
//! in seL4's terms (seL4_Call/ReplyRecv for ipc.sel4-call, seL4_Yield,
//! seL4_Reply as the cheapest kernel entry, two threads yielding), sends the
//! samples framed over COM1 and ends QEMU through isa-debug-exit;
//! program.rs makes the run document of them.
//!
//! Units: under `--accel icount` (this environment's default) the guest's
//! TSC counts guest instructions, exactly (`guest_instructions`); under
//! `--accel tcg` emulated cycles; `--accel kvm` needs a KVM that runs
//! ordinary guests (n/a with the reason otherwise). A kernel that faults
//! silently (a release kernel prints nothing) or hangs is given up within
//! the init timeout with what the console said. A full run with
//! ipc.sel4-call also boots the independent check (guest/sel4/check.c:
//! 10^5 round trips in one rdtsc pair) and records its figure.

use super::environment::{Environment, Message, Outcome};
use super::error::{EnvError, OwnError};
use super::options::EnvOptions;
use super::program;
use super::qemu::{Accel, AccelArgs, QemuArgs};
use crate::families::bench::schema;
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

/// How the root task's threads are scheduled.
const POLICY: &str = "seL4's scheduler (fixed priority 255, round robin)";

/// QEMU's exit status when the root task writes 0 to isa-debug-exit.
const ROOT_TASK_DONE: i32 = 1;

/// The build's directory: [`CACHE`], or `OSCYCLES_SEL4_CACHE` (as for
/// scripts/setup-sel4; the tests point it at a missing or failed build).
fn cache_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_SEL4_CACHE").map_or_else(|| PathBuf::from(CACHE), PathBuf::from)
}

pub struct Sel4;

/// Why seL4 cannot be booted, or its root task's answer not read.
#[derive(Debug, thiserror::Error)]
pub enum Sel4Error {
    /// The reason and the log's last lines, as scripts/setup-sel4 left them.
    #[error("sel4: the seL4 build failed: {0} ({BUILDS} builds it)")]
    BuildFailed(String),
    #[error("sel4: not built ({} missing; {BUILDS} builds seL4 into {})", missing.display(), dir.display())]
    NotBuilt { missing: PathBuf, dir: PathBuf },
    #[error("sel4: {0}")]
    Program(#[source] program::ProgramError),
    #[error("sel4: the plan takes {0} bytes, more than the root task's {ARGS_ROOM}")]
    PlanTooLong(usize),
    #[error("sel4: the root task has no plan marker (a build.rs problem)")]
    NoMarker,
    #[error("sel4: starting QEMU: {0} (scripts/setup installs qemu-system-x86)")]
    StartQemu(#[source] std::io::Error),
    /// The root task reported a failure before its samples.
    #[error("sel4: the root task failed: {0}")]
    RootTask(String),
}

impl OwnError for Sel4Error {}

/// The kernel of the build in `dir`, and its versions line, or why there is none.
fn find_kernel(dir: &Path) -> Result<(PathBuf, String), Sel4Error> {
    if let Ok(why) = std::fs::read_to_string(dir.join("failed")) {
        return Err(Sel4Error::BuildFailed(why.lines().collect::<Vec<_>>().join(" | ")));
    }
    let kernel = dir.join("kernel.elf");
    if !kernel.is_file() {
        return Err(Sel4Error::NotBuilt { missing: kernel, dir: dir.to_path_buf() });
    }
    Ok((kernel, std::fs::read_to_string(dir.join("versions")).unwrap_or_default().trim().to_string()))
}

/// The root task's image with `args` written over its marker (NUL-ended).
fn with_args(image: &[u8], args: &str) -> Result<Vec<u8>, Sel4Error> {
    if args.len() >= ARGS_ROOM {
        return Err(Sel4Error::PlanTooLong(args.len()));
    }
    let at = image.windows(ARGS_MARKER.len()).position(|w| w == ARGS_MARKER).ok_or(Sel4Error::NoMarker)?;
    let mut out = image.to_vec();
    out[at..at + ARGS_ROOM].fill(0);
    out[at..at + args.len()].copy_from_slice(args.as_bytes());
    Ok(out)
}

impl Environment for Sel4 {
    fn name(&self) -> &'static str {
        "sel4"
    }

    fn about(&self) -> &'static str {
        "the seL4 microkernel (5.0.0 from crates.io sel4-sys, ia32 release with the fastpath) and oscycles' root task, booted by QEMU; --accel icount (the default here: guest instructions), tcg (emulated cycles) or kvm"
    }

    fn options(&self) -> Option<super::options::OwnOptions> {
        Some(super::options::OwnOptions::of::<AccelArgs>(super::qemu::ACCEL_OPTIONS))
    }

    fn counts_instructions(&self, o: &EnvOptions) -> bool {
        o.own.get::<AccelArgs>().is_ok_and(|a| a.accel.counts_instructions())
    }

    fn launch(&self, spec: &super::guest::GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
        let (kernel, versions) = find_kernel(&cache_dir())?;
        let accel = o.own.get::<AccelArgs>()?.accel;
        let plan = program::plan_of(&spec.run).map_err(Sel4Error::Program)?;
        let clock = program::clock(accel.counts_instructions());
        let quick = plan.iter().any(|p| p.scale.brief());
        let harness = spec.run.harness(clock.tsc_hz, quick);
        let args = program::args(spec, &plan, &harness, o);
        let mut ran = boot(&kernel, &with_args(ROOT_TASK, &args)?, accel, o)?;
        if let Some(m) = ran.messages.iter().find(|m| m.kind == "samples").cloned() {
            let samples = program::parse_samples(&m.bytes).map_err(Sel4Error::Program)?;
            let g = program::Guest { env: "sel4", system: "seL4", absent: absent_reason, policy: POLICY, one_cpu: true };
            let doc = program::document(&g, &spec.run, &plan, &samples, harness, clock.clone());
            ran.messages.push(Message { kind: "run".into(), bytes: serde_json::to_vec(&doc)?, at_s: m.at_s });
        } else if let Some(line) = ran.console.lines().find(|l| l.contains("oscycles-sel4: FAILED")) {
            return Err(Sel4Error::RootTask(line.trim().to_string()).into());
        }
        if spec.mode == super::guest::GuestMode::Run && plan.iter().any(|p| p.benchmark.id == "ipc.sel4-call") && plan.len() > 1 {
            let check = boot(&kernel, CHECK, accel, o).map(|r| check_figures(&r.console));
            ran.facts.insert(schema::environment::INDEPENDENT_CHECK.into(), check.unwrap_or_else(|e| json!({ "failed": e.to_string() })));
        }
        ran.facts.insert("versions".into(), json!(versions));
        Ok(Outcome { messages: ran.messages, status: ran.status, facts: ran.facts, log_tail: ran.log_tail })
    }
}

/// What one boot left.
struct Ran {
    messages: Vec<Message>,
    status: Option<std::process::ExitStatus>,
    facts: Map<String, Value>,
    console: String,
    log_tail: String,
}

/// Boots `kernel` with `root_task` once under QEMU, the serial port on
/// QEMU's stdout and in a log file, within the timeouts of `o`; QEMU dies
/// with oscycles (die_with_parent).
fn boot(kernel: &Path, root_task: &[u8], accel: Accel, o: &EnvOptions) -> Result<Ran, EnvError> {
    let name = "sel4";
    if accel == Accel::Kvm {
        EnvError::kvm_usable(name)?;
    }
    let files = super::qemu::Files::new(name, o)?;
    crate::base::fsafe::write_new(&files.initrd, root_task).map_err(EnvError::io(format!("writing {}", files.initrd.display())))?;
    let machine = o.own.get::<QemuArgs>()?.machine;
    // One CPU (a one-node kernel); at most 1 GiB (ia32: the kernel maps
    // the low memory into its window).
    let mut cmd = super::qemu::command(&EnvOptions { vm_cpus: 1, ..o.clone() }, o.vm_mem_mib.min(1024));
    cmd.args(["-machine", &machine]).args(accel.qemu_args());
    cmd.args(["-cpu", if accel == Accel::Kvm { "host" } else { CPU }]);
    cmd.arg("-kernel").arg(kernel).arg("-initrd").arg(&files.initrd);
    super::qemu::serial_on_stdout(&mut cmd, &files.console);
    cmd.args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]);
    let super::qemu::Ran { end, console, log_tail } =
        super::qemu::watch(cmd, &files.console, o, &mut || None).map_err(Sel4Error::StartQemu)?;
    if let Some(why) = end.why {
        let hint = " (a release seL4 kernel that faults prints nothing)";
        return Err(EnvError::Ended { env: name, why, hint, tail: log_tail });
    }
    let mut facts = Map::new();
    facts.insert("vmm".into(), json!(super::qemu::QEMU));
    facts.insert(crate::data::schema_core::environment::ACCEL.into(), json!(accel.name()));
    facts.insert("machine".into(), json!(machine));
    facts.insert("cpu_model".into(), json!(if accel == Accel::Kvm { "host" } else { CPU }));
    facts.insert("vcpus".into(), json!(1));
    facts.insert("kernel".into(), json!(KERNEL));
    facts.insert("kernel_arch".into(), json!(ARCH));
    facts.insert("kernel_config".into(), json!(CONFIG));
    facts.insert("kernel_image".into(), json!(kernel.display().to_string()));
    facts.insert("clean_exit".into(), json!(end.status.and_then(|s| s.code()) == Some(ROOT_TASK_DONE)));
    Ok(Ran { messages: end.messages, status: end.status, facts, console, log_tail })
}

/// The CPU QEMU emulates: qemu-tcg's (the same model, so the columns
/// compare like with like).
const CPU: &str = "max";

/// The check's line: `sel4-check round_trips=N total=T`, and the one-way
/// figure the l4-ipc cell shows beside it.
fn check_figures(console: &str) -> Value {
    let mut v = program::check_line(console, "sel4-check ");
    if let (Some(n), Some(t)) = (v["round_trips"].as_f64(), v["total"].as_f64()) {
        v["one_way"] = json!(t / n / 2.0);
        v["what"] = json!("10^5 seL4_Call round trips of no payload to a server in the same address space, one rdtsc pair around the loop");
    }
    v
}

/// Why a case of the plan is not measured in seL4.
fn absent_reason(p: &PlannedCase) -> String {
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
            "not in oscycles' seL4 root task (guest/sel4/roottask.c measures ipc.sel4-call, seL4_Yield, seL4_Reply and two threads yielding)"
        }
    };
    format!("{id} in seL4: {why}")
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
        let v = check_figures("Booting from ROM..\r\nsel4-check round_trips=100000 total=51509000\r\n");
        assert_eq!((v["round_trips"].as_f64(), v["one_way"].as_f64()), (Some(100000.0), Some(257.545)));
        assert!(check_figures("nothing").get("failed").is_some());
    }
}
