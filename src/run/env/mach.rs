//! `mach`: GNU Mach, the Mach 3 microkernel the L4 papers measured their IPC
//! against, as a column. QEMU boots Debian's i386 kernel (`gnumach-image-
//! 1.8-486:i386`, unpacked by scripts/setup-mach into [`CACHE`]) with
//! oscycles' own bootstrap task (guest/mach/task.c, built by build.rs and
//! carried in this binary) as its multiboot module, the cases named on the
//! module's boot-script line. The task says hello, measures in Mach's terms
//! (mach_msg round trips between two threads of one task and between two
//! tasks, traps, yields, vm_allocate, first writes), sends the samples
//! framed over the console (the mach_print trap) and ends the VM with
//! host_reboot (QEMU -no-reboot exits); this module makes them the run
//! document.
//!
//! Units: `--accel icount` (QEMU's instruction counter: the guest's TSC
//! counts its instructions) gives guest instructions, exact and repeatable;
//! `--accel tcg` emulated cycles (the host's TSC); KVM cannot run an
//! ordinary guest here (kvm_pvm) and is refused with the reason. The same
//! invocation boots an independent few-line task (guest/mach/check.c: rdtsc
//! around 10^5 empty mach_msg round trips) and records its figures.

use super::environment::{Environment, Message, Outcome};
use super::error::{EnvError, OwnError};
use super::options::EnvOptions;
use super::output::{ConsoleLog, complete_lines, tail};
use super::program;
use super::qemu::{Accel, AccelArgs};
use crate::data::results::CaseStatus;
use crate::families::bench::schema;
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Where scripts/setup-mach leaves the kernel (`gnumach`) and its version.
pub const CACHE: &str = "/var/cache/oscycles/mach";

/// How many times the run's --init-timeout GNU Mach may take to its hello.
const INIT_SCALE: u32 = 4;

/// The command that installs it.
const INSTALL: &str = "scripts/setup-mach (as root; scripts/setup calls it)";

/// oscycles' bootstrap task and the independent check (guest/mach).
static TASK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mach-task"));
static CHECK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mach-check"));

/// The kernel's directory: [`CACHE`], or `OSCYCLES_MACH_CACHE` (as for
/// scripts/setup-mach; the tests point it at a missing one).
fn cache_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_MACH_CACHE").map_or_else(|| PathBuf::from(CACHE), PathBuf::from)
}

/// GNU Mach under QEMU.
pub struct Mach;

impl Environment for Mach {
    fn name(&self) -> &'static str {
        "mach"
    }

    fn about(&self) -> &'static str {
        "GNU Mach 1.8 (Debian's i386 kernel) under QEMU with oscycles' own bootstrap task: mach_msg, traps, vm_allocate; --accel icount (guest instructions, its default) or tcg (emulated cycles)"
    }

    fn options(&self) -> Option<super::options::OwnOptions> {
        Some(super::options::OwnOptions::of::<AccelArgs>(super::qemu::ACCEL_OPTIONS))
    }

    fn counts_instructions(&self, o: &EnvOptions) -> bool {
        o.own.get::<AccelArgs>().is_ok_and(|a| a.accel.counts_instructions())
    }

    fn launch(&self, spec: &super::guest::GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
        let accel = accel(o)?;
        if accel == Accel::Kvm {
            return Err(MachError::Kvm.into());
        }
        let kernel = Kernel::find(&cache_dir())?;
        // Emulated, GNU Mach probes its ISA and SCSI devices for seconds
        // before its task starts (6.5 s under the counter on an idle host,
        // over 30 s on this shared one): a longer wait for the hello, as
        // the xen-* environments have under TCG.
        let o = &EnvOptions { init_timeout: o.init_timeout * INIT_SCALE, ..o.clone() };
        let plan = program::plan_of(&spec.run).map_err(MachError::Program)?;
        let quick = plan.iter().any(|p| p.scale.brief());
        let clock = program::clock(accel.counts_instructions());
        let harness = spec.run.harness(clock.tsc_hz, quick);
        let args = task_args(&plan, harness.batches, quick);
        let module = match o.guest_mode {
            // (tests) a module that is no executable: the kernel panics.
            super::guest::GuestMode::Panic => &b"not an ELF image"[..],
            _ => TASK,
        };
        // (tests) a task that never says hello.
        let silent = matches!(o.guest_mode, super::guest::GuestMode::Hang | super::guest::GuestMode::NoInit);
        let mode = if silent { " mode=hang" } else { "" };
        let mut ran = boot(&kernel, module, &format!("{args}{mode}"), accel, o)?.out;
        if let Some(m) = ran.messages.iter().find(|m| m.kind == "samples").cloned() {
            let samples = program::parse_samples(&m.bytes).map_err(MachError::Program)?;
            let mut doc = program::document(&GUEST, &spec.run, &plan, &samples, harness, clock);
            for r in doc.results.iter_mut().filter(|r| r.status == CaseStatus::Ok) {
                r.details.insert("mach_operation".into(), json!(operation(&r.benchmark)));
            }
            ran.messages.push(Message { kind: "run".into(), bytes: serde_json::to_vec(&doc)?, at_s: m.at_s });
        }
        let ipc = plan.iter().any(|p| p.benchmark.id == Mechanism::MachMsg.id());
        if spec.mode == super::guest::GuestMode::Run && o.guest_mode == super::guest::GuestMode::Run && ipc {
            let check = boot(&kernel, CHECK, "", accel, o).map(|r| check_figures(&r.console));
            ran.facts.insert(schema::environment::INDEPENDENT_CHECK.into(), check.unwrap_or_else(|e| json!({ "failed": e.to_string() })));
        }
        ran.facts.insert("kernel_version".into(), json!(format!("GNU Mach {} (Debian gnumach-image-1.8-486)", kernel.version)));
        ran.facts.insert("arch".into(), json!("i386"));
        let unit_name = if accel.counts_instructions() {
            crate::data::results::UNIT_INSTRUCTIONS
        } else {
            "emulated cycles (the host's TSC under TCG)"
        };
        ran.facts.insert("unit".into(), json!(unit_name));
        Ok(ran)
    }
}

use crate::families::bench::schema::ipc::Mechanism;

/// `--accel` as given; not given, the instruction counter (exact counts:
/// this environment's default, where the others' is tcg).
fn accel(o: &EnvOptions) -> Result<Accel, EnvError> {
    Ok(if o.own.given("accel") { o.own.get::<AccelArgs>()?.accel } else { Accel::Icount })
}

/// Why GNU Mach cannot be booted, or its task's answer not read.
#[derive(Debug, thiserror::Error)]
pub enum MachError {
    #[error("mach: GNU Mach is not installed ({} missing; {INSTALL} unpacks Debian's gnumach-image-1.8-486:i386 there)", .0.display())]
    NotInstalled(PathBuf),
    #[error(
        "mach: --accel kvm: not here (this host's /dev/kvm, kvm_pvm, runs no ordinary guest); --accel icount counts guest instructions, tcg emulated cycles"
    )]
    Kvm,
    #[error("mach: the run's directory {0} has a comma or a space, which a multiboot module's line cannot carry")]
    WorkPath(PathBuf),
    #[error("mach: the kernel panicked: {0}")]
    Panic(String),
    #[error("mach: {0}")]
    Program(#[source] program::ProgramError),
}

impl OwnError for MachError {}

/// The kernel scripts/setup-mach unpacked.
struct Kernel {
    path: PathBuf,
    version: String,
}

impl Kernel {
    fn find(dir: &Path) -> Result<Kernel, MachError> {
        let path = dir.join("gnumach");
        if !path.is_file() {
            return Err(MachError::NotInstalled(path));
        }
        let version = std::fs::read_to_string(dir.join("version")).unwrap_or_default().trim().chars().take(64).collect();
        Ok(Kernel { path, version })
    }
}

/// What the task is asked, on its boot-script line (`key=value`, lists
/// `/`-separated: a comma would start another multiboot module).
fn task_args(plan: &[PlannedCase], batches: usize, quick: bool) -> String {
    let mut words: Vec<u64> = Vec::new();
    let mut spaces: Vec<&str> = Vec::new();
    let mut sys: Vec<&str> = Vec::new();
    for p in plan {
        if p.benchmark.id == Mechanism::MachMsg.id() {
            let params = p.params.get("words").and_then(Value::as_u64);
            if let Some(w) = params.filter(|w| *w <= MAX_WORDS && !words.contains(w)) {
                words.push(w);
            }
            if let Some(s) = p.params.get("space").and_then(Value::as_str).filter(|s| !spaces.contains(s)) {
                spaces.push(if s == "inter" { "inter" } else { "intra" });
            }
        } else if let Some((name, _)) = TRAPS.iter().find(|(_, id)| *id == p.benchmark.id) {
            sys.push(name);
        }
    }
    let scale = if quick { 4 } else { 1 };
    let words: Vec<String> = words.iter().map(u64::to_string).collect();
    format!(
        "words={} space={} sys={} batches={} inner_ipc={} inner_sys={} inner_vm={}",
        words.join("/"),
        spaces.join("/"),
        sys.join("/"),
        batches.clamp(1, 64),
        1000 / scale,
        10000 / scale,
        100 / scale
    )
}

/// The largest payload the task carries, in 64-bit words.
const MAX_WORDS: u64 = 64;

/// The task's names of its single cases, and the rows they answer.
const TRAPS: [(&str, &str); 6] = [
    ("null", "syscall.null"),
    ("getpid", "syscall.getpid"),
    ("yield", "syscall.sched_yield"),
    ("yield-busy", "hermit.sched_yield-busy"),
    ("malloc", "hermit.malloc-1m"),
    ("fault", "pagefault.anon"),
];

/// What each row is in Mach's terms.
fn operation(id: &str) -> Option<&'static str> {
    Some(match id {
        "syscall.null" => "an invalid trap (kern_invalid, -31): the bare entry and exit of a Mach trap",
        "syscall.getpid" => "mach_task_self (trap -28): the cheapest trap that does something",
        "syscall.sched_yield" => "swtch (trap -60) with no other thread runnable",
        "hermit.sched_yield-busy" => "swtch with a second thread of the task yielding too: each call a switch",
        "hermit.malloc-1m" => "vm_allocate + vm_deallocate of 1 MiB (traps -65/-66), untouched",
        "pagefault.anon" => "the first write to each page of a fresh vm_allocate'd 1 MiB region (a zero-fill fault)",
        _ if id == Mechanism::MachMsg.id() => "mach_msg SEND|RCV each way, inline words, a send-once reply right per request",
        _ => return None,
    })
}

/// What one boot left: what came back, and the whole console.
struct Booted {
    out: Outcome,
    console: String,
}

/// Boots GNU Mach with `module` (its boot-script line `args`), the console
/// on QEMU's stdout and in a log file, watched within the timeouts of `o`;
/// a console that says `panic` ends it at once.
fn boot(kernel: &Kernel, module: &[u8], args: &str, accel: Accel, o: &EnvOptions) -> Result<Booted, EnvError> {
    let files = super::qemu::Files::new("mach", o)?;
    if files.initrd.to_string_lossy().contains([',', ' ']) {
        return Err(MachError::WorkPath(o.work.clone()).into());
    }
    crate::base::fsafe::write_new(&files.initrd, module).map_err(EnvError::io(format!("writing {}", files.initrd.display())))?;
    let line = format!("{} ${{host-port}} ${{device-port}} {args} $(task-create) $(task-resume)", files.initrd.display());
    let mut cmd = super::qemu::command(&EnvOptions { vm_cpus: 1, ..o.clone() }, o.vm_mem_mib.min(1024));
    cmd.args(["-machine", "pc"]).args(accel.qemu_args());
    cmd.arg("-kernel").arg(&kernel.path).arg("-initrd").arg(&line).args(["-append", "console=com0"]);
    super::qemu::serial_on_stdout(&mut cmd, &files.console);
    let mut watch = ConsoleLog::new(&files.console);
    // While the guest runs, whole lines only: a panic line read before its
    // end names half its reason (seen: "panic ../kern/bootstrap.c:810: us").
    let mut panicked = move || watch.grown().and_then(|seen| panic_line(complete_lines(seen)));
    let super::qemu::Ran { end, console, log_tail } = super::qemu::watch(cmd, &files.console, o, &mut panicked)
        .map_err(|e| EnvError::Io { what: format!("starting {} (scripts/setup installs it)", super::qemu::QEMU), source: e })?;
    if let Some(p) = panic_line(&console) {
        return Err(MachError::Panic(format!("{p}; last output: {log_tail}")).into());
    }
    if let Some(w) = end.why {
        return Err(EnvError::Ended { env: "mach", why: w, hint: "", tail: log_tail });
    }
    let mut facts = Map::new();
    facts.insert("vmm".into(), json!(super::qemu::QEMU));
    facts.insert(crate::data::schema_core::environment::ACCEL.into(), json!(accel.name()));
    facts.insert("machine".into(), json!("pc"));
    facts.insert("vcpus".into(), json!(1));
    facts.insert("kernel".into(), json!(kernel.path.display().to_string()));
    facts.insert("clean_exit".into(), json!(end.status.is_some_and(|s| s.success())));
    Ok(Booted { out: Outcome { messages: end.messages, status: end.status, facts, log_tail }, console })
}

/// The console's panic line, if the kernel panicked (`panic: ...`,
/// `panic ../file.c:N: ...`).
fn panic_line(console: &str) -> Option<String> {
    console.lines().find(|l| l.trim_start().starts_with("panic")).map(|l| l.trim().chars().take(200).collect())
}

/// The check task's line: `mach-check round_trips=N total=T round_trip_x1000=R`.
fn check_figures(console: &str) -> Value {
    // The kernel's `start <task>: ` may precede it on the line.
    let Some(line) = console.lines().find_map(|l| l.find("mach-check ").map(|i| &l[i..])) else {
        return json!({ "failed": format!("no figures; last output: {}", tail(console)) });
    };
    let mut v = Map::new();
    for (k, x) in line.split_whitespace().filter_map(|w| w.split_once('=')) {
        if let Ok(x) = x.parse::<u64>() {
            v.insert(k.into(), json!(x));
        }
    }
    if let Some(r) = v.get("round_trip_x1000").and_then(Value::as_u64) {
        v.insert("mach_msg_one_way".into(), json!(r as f64 / 2000.0));
    }
    Value::Object(v)
}

/// Why a row is not measured in GNU Mach.
fn absent_reason(p: &PlannedCase) -> String {
    let id = p.benchmark.id.as_str();
    let why = match p.benchmark.family.name() {
        schema::ipc::FAMILY if p.params.get("cores").and_then(Value::as_str) == Some("cross") => {
            "one CPU: Debian's i386 GNU Mach is a uniprocessor kernel"
        }
        schema::ipc::FAMILY => {
            "Mach's IPC is mach_msg (ipc.mach-msg); pipes, sockets and futexes are the Hurd's servers', not the kernel's"
        }
        "pagefault" => "one kind of memory is measured, vm_allocate'd (pagefault.anon's row)",
        _ => "not in oscycles' GNU Mach task (guest/mach/task.c measures mach_msg, traps, yields, vm_allocate and first writes)",
    };
    format!("{id} in GNU Mach: {why}")
}

/// The guest, as program.rs makes its document.
const GUEST: program::Guest =
    program::Guest { env: "mach", system: "GNU Mach", absent: absent_reason, policy: "GNU Mach's scheduler", one_cpu: true };

#[cfg(test)]
mod tests {
    use super::*;

    /// GNU Mach loads each PT_LOAD apart (vm_allocate of its pages, asserted):
    /// the task must be ET_EXEC, i386, and no two segments may share a page.
    #[test]
    fn the_tasks_are_i386_executables_whose_segments_never_share_a_page() {
        for elf in [TASK, CHECK] {
            let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]);
            let u32_at = |o: usize| u32::from_le_bytes([elf[o], elf[o + 1], elf[o + 2], elf[o + 3]]);
            assert_eq!(&elf[..5], b"\x7fELF\x01", "ELF32");
            assert_eq!((u16_at(16), u16_at(18)), (2, 3), "ET_EXEC, EM_386");
            let (phoff, phentsize, phnum) = (u32_at(28) as usize, u16_at(42) as usize, u16_at(44) as usize);
            let mut pages: Vec<(u32, u32)> = (0..phnum)
                .map(|i| phoff + i * phentsize)
                .filter(|&h| u32_at(h) == 1)
                .map(|h| (u32_at(h + 8) / 4096, (u32_at(h + 8) + u32_at(h + 20) - 1) / 4096))
                .collect();
            pages.sort();
            assert!(pages.len() >= 2, "{pages:?}");
            assert!(pages.windows(2).all(|w| w[0].1 < w[1].0), "segments share a page: {pages:?}");
        }
    }

    fn plan(suites: &[&str]) -> Vec<PlannedCase> {
        let run = crate::run::spec::RunSpec { suites: suites.iter().map(|s| s.to_string()).collect(), ..Default::default() };
        program::plan_of(&run).unwrap()
    }

    #[test]
    fn the_tasks_line_names_the_plans_cases_without_a_comma() {
        let args = task_args(&plan(&["l4-ipc", "hermit-basic"]), 11, false);
        assert!(!args.contains(',') && !args.contains('$'), "a comma would start another module: {args}");
        assert!(args.contains("words=0/1/2/4/8/16/64") && args.contains("space=intra/inter"), "{args}");
        assert!(args.contains("sys=getpid/yield/yield-busy/malloc/fault"), "{args}");
        assert!(args.contains("batches=11"));
        let none = task_args(&plan(&["syscall"]), 3, true);
        assert!(none.contains("words= space=") && none.contains("inner_ipc=250"), "{none}");
    }

    #[test]
    fn rows_mach_has_not_say_why() {
        let p = plan(&["l4-ipc"]);
        let why = |id: &str, cores: &str| {
            let c = p.iter().find(|c| c.benchmark.id == id && c.params.get("cores").and_then(Value::as_str) == Some(cores)).unwrap();
            absent_reason(c)
        };
        assert!(why("ipc.mach-msg", "cross").contains("uniprocessor"));
        assert!(why("ipc.pipe", "same").contains("Hurd"));
    }

    #[test]
    fn the_check_and_a_panic_are_read_from_the_console() {
        let v = check_figures("start /x/task: mach-check round_trips=100000 total=243910100 round_trip_x1000=2439101\n");
        assert_eq!(v["mach_msg_one_way"], json!(1219.5505));
        assert!(check_figures("nothing").get("failed").is_some());
        let p = panic_line("module 0\npanic ../kern/bootstrap.c:810: user_bootstrap: Cannot load\nmore");
        assert_eq!(p.as_deref(), Some("panic ../kern/bootstrap.c:810: user_bootstrap: Cannot load"));
        assert!(panic_line("no trouble").is_none());
        let writing = "module 0\npanic ../kern/bootstrap.c:810: us";
        assert_eq!(panic_line(complete_lines(writing)), None, "a line still being written is not read");
        assert!(panic_line(complete_lines(&format!("{writing}er_bootstrap: Cannot load\n"))).unwrap().ends_with("Cannot load"));
    }
}
