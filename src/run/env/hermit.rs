//! `hermit`: the Hermit unikernel (HermitCore's successor) as a column
//! beside Linux, as the HermitCore evaluation compared them. QEMU boots
//! oscycles' own loader (`-kernel`, multiboot) with oscycles' Hermit program
//! (`-initrd`): the kernel from crates.io `hermit-kernel`, linked with the
//! program, both built by `scripts/setup-hermit` into [`CACHE`]. The
//! program (`hermit/program`, oscycles' harness and STREAM compiled for
//! x86_64-unknown-hermit) says hello as its first act, measures the cases
//! named on its command line and sends their samples back framed on the
//! one serial port it shares with the kernel's log; this module makes the
//! run document of them, as any environment's child would send it.
//!
//! Under TCG (here) its cycles are emulated cycles, as qemu-tcg's are;
//! `--accel kvm` boots it on a KVM that can run it. A build that failed, or
//! none, makes every case n/a with the reason. The same invocation boots an
//! independent few-line Hermit program (`hermit/check`: rdtsc around 10^5
//! getpid and yield_now calls) and records its figures beside the run's.

use super::environment::{Environment, Message, Outcome};
use super::error::{EnvError, OwnError};
use super::options::EnvOptions;
use super::program;
use super::qemu::{Accel, AccelArgs, QemuArgs};
use crate::families::bench::schema;
use crate::measure::clock::ClockInfo;
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Where scripts/setup-hermit leaves the build: `loader`, `program`,
/// `check`, `versions`; or `failed` (the reason and the log's last lines).
pub const CACHE: &str = "/var/cache/oscycles/hermit";

/// The build's directory: [`CACHE`], or `OSCYCLES_HERMIT_CACHE` (as for
/// scripts/setup-hermit; the tests point it at a missing or failed build).
fn cache_dir() -> PathBuf {
    std::env::var_os("OSCYCLES_HERMIT_CACHE").map_or_else(|| PathBuf::from(CACHE), PathBuf::from)
}

/// Hermit under a VMM: QEMU (`hermit`) or oscycles' own (`hermit-microvm`).
pub struct Hermit {
    vmm: Vmm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vmm {
    /// QEMU, TCG or KVM (`--accel`).
    Qemu,
    /// oscycles' own KVM VMM (`__vmm-multiboot`), uhyve's way: no QEMU.
    Own,
}

impl Hermit {
    pub const QEMU: Hermit = Hermit { vmm: Vmm::Qemu };
    pub const MICROVM: Hermit = Hermit { vmm: Vmm::Own };
}

impl Environment for Hermit {
    fn name(&self) -> &'static str {
        match self.vmm {
            Vmm::Qemu => "hermit",
            Vmm::Own => "hermit-microvm",
        }
    }

    fn about(&self) -> &'static str {
        match self.vmm {
            Vmm::Qemu => {
                "the Hermit unikernel (HermitCore's successor): oscycles' Hermit program booted by QEMU through oscycles' own loader; --accel tcg (emulated cycles) or kvm"
            }
            Vmm::Own => {
                "the Hermit unikernel in oscycles' own KVM VMM (no QEMU, as uhyve runs it): the same loader and program, CPU cycles; needs a KVM that runs ordinary guests (n/a with the reason on kvm_pvm)"
            }
        }
    }

    fn options(&self) -> Option<super::options::OwnOptions> {
        (self.vmm == Vmm::Qemu).then(|| super::options::OwnOptions::of::<AccelArgs>(super::qemu::ACCEL_OPTIONS))
    }

    fn counts_instructions(&self, o: &EnvOptions) -> bool {
        self.vmm == Vmm::Qemu && o.own.get::<AccelArgs>().is_ok_and(|a| a.accel.counts_instructions())
    }

    /// The own VMM's process (`oscycles __vmm-multiboot ...`, which
    /// [`Hermit::boot`] starts): boots the image and exits with its status.
    fn init(&self) {
        if self.vmm != Vmm::Own || std::env::args_os().nth(1).is_none_or(|a| a != VMM_COMMAND) {
            return;
        }
        /// `oscycles __vmm-multiboot`'s command line.
        #[derive(clap::Parser)]
        #[command(name = "oscycles __vmm-multiboot")]
        struct Command {
            #[command(flatten)]
            vmm: VmmArgs,
        }
        let c = <Command as clap::Parser>::parse_from(std::env::args_os().skip(1));
        std::process::exit(vmm_multiboot(&c.vmm));
    }

    fn launch(&self, spec: &super::guest::GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError> {
        let build = Build::find(&cache_dir())?;
        let plan = program::plan_of(&spec.run).map_err(HermitError::Program)?;
        let clock = program::clock(self.counts_instructions(o));
        let quick = plan.iter().any(|p| p.scale.brief());
        let harness = spec.run.harness(clock.tsc_hz, quick);
        let args = program::args(spec, &plan, &harness, o);
        let mut ran = self.boot(&build, &build.program, &args, &clock, o)?;
        if let Some(m) = ran.messages.iter().find(|m| m.kind == "samples").cloned() {
            let samples = program::parse_samples(&m.bytes).map_err(HermitError::Program)?;
            let doc = program::document(&GUEST, &spec.run, &plan, &samples, harness, clock.clone());
            let bytes = serde_json::to_vec(&doc)?;
            ran.messages.push(Message { kind: "run".into(), bytes, at_s: m.at_s });
        }
        // The independent check, beside a full run (not beside a boot).
        let checked = ["syscall.getpid", "syscall.sched_yield", "ipc.futex"];
        if spec.mode == super::guest::GuestMode::Run && plan.iter().any(|p| checked.contains(&p.benchmark.id.as_str())) && plan.len() > 1 {
            let check = self.boot(&build, &build.check, "", &clock, o).map(|r| check_figures(&r.console));
            ran.facts.insert(schema::environment::INDEPENDENT_CHECK.into(), check.unwrap_or_else(|e| json!({ "failed": e.to_string() })));
        }
        ran.facts.insert("versions".into(), json!(build.versions));
        Ok(Outcome { messages: ran.messages, status: ran.status, facts: ran.facts, log_tail: ran.log_tail })
    }
}

/// Why Hermit cannot be booted, or its program's answer not read.
#[derive(Debug, thiserror::Error)]
pub enum HermitError {
    /// The reason and the log's last lines, as scripts/setup-hermit left them.
    #[error("hermit: the Hermit build failed: {0}")]
    BuildFailed(String),
    #[error("hermit: not built ({} missing; scripts/setup builds Hermit into {})", missing.display(), dir.display())]
    NotBuilt { missing: PathBuf, dir: PathBuf },
    #[error("hermit: {0}")]
    Program(#[source] program::ProgramError),
    #[error("{env}: finding oscycles' own executable: {source}")]
    OwnExe { env: &'static str, source: std::io::Error },
    #[error("{env}: starting the VMM: {source} (scripts/setup installs qemu-system-x86)")]
    StartVmm { env: &'static str, source: std::io::Error },
    /// The own VMM's last line of standard error.
    #[error("{env}: {why}")]
    CannotRun { env: &'static str, why: String },
}

impl OwnError for HermitError {}

/// The artefacts of the Hermit build.
struct Build {
    loader: PathBuf,
    program: PathBuf,
    check: PathBuf,
    versions: String,
}

impl Build {
    /// The build in `dir`, or why there is none (n/a for every case).
    fn find(dir: &Path) -> Result<Build, HermitError> {
        if let Ok(why) = std::fs::read_to_string(dir.join("failed")) {
            return Err(HermitError::BuildFailed(why.lines().collect::<Vec<_>>().join(" | ")));
        }
        let b = Build {
            loader: dir.join("loader"),
            program: dir.join("program"),
            check: dir.join("check"),
            versions: std::fs::read_to_string(dir.join("versions")).unwrap_or_default().trim().to_string(),
        };
        match [&b.loader, &b.program, &b.check].iter().find(|p| !p.is_file()) {
            Some(p) => Err(HermitError::NotBuilt { missing: p.to_path_buf(), dir: dir.to_path_buf() }),
            None => Ok(b),
        }
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

impl Hermit {
    /// Boots `program` once with `args` under this environment's VMM, the
    /// serial port (kernel log and the program's frames) on the VMM's
    /// stdout and in a log file, and watches it within the timeouts of `o`.
    fn boot(&self, build: &Build, program: &Path, args: &str, clock: &ClockInfo, o: &EnvOptions) -> Result<Ran, EnvError> {
        let name = self.name();
        let files = super::qemu::Files::new(name, o)?;
        // The kernel's timer runs at the TSC rate given (-freq, MHz).
        let append = format!("-freq {} -- {args}", (clock.tsc_hz / 1e6).round() as u64);
        let (cmd, machine) = match self.vmm {
            Vmm::Qemu => qemu_command(build, program, &append, &files, o)?,
            Vmm::Own => {
                EnvError::kvm_usable(name)?;
                let exe = std::env::current_exe().map_err(|source| HermitError::OwnExe { env: name, source })?;
                let mut cmd = std::process::Command::new(exe);
                cmd.arg(VMM_COMMAND).arg("--kernel").arg(&build.loader).arg("--module").arg(program);
                cmd.arg(format!("--append={append}")).arg("--mem-mib").arg(o.vm_mem_mib.to_string()).arg("--console").arg(&files.console);
                (cmd, "oscycles' own".to_string())
            }
        };
        let super::qemu::Ran { end, console, log_tail } =
            super::qemu::watch(cmd, &files.console, o, &mut || None).map_err(|source| HermitError::StartVmm { env: name, source })?;
        if let Some(w) = end.why {
            return Err(EnvError::Ended { env: name, why: w, hint: "", tail: log_tail });
        }
        if end.status.and_then(|s| s.code()) == Some(VMM_CANNOT_RUN) {
            let why = end.stderr.lines().last().unwrap_or("the VMM could not run the guest").to_string();
            return Err(HermitError::CannotRun { env: name, why }.into());
        }
        let accel = match self.vmm {
            Vmm::Qemu => o.own.get::<AccelArgs>()?.accel.name(),
            Vmm::Own => "kvm",
        };
        let mut facts = boot_facts(build, program, accel, &machine, o, end.status);
        if self.vmm == Vmm::Own {
            facts.insert("vmm".into(), json!("oscycles (its own KVM VMM, __vmm-multiboot)"));
        }
        Ok(Ran { messages: end.messages, status: end.status, facts, console, log_tail })
    }
}

/// QEMU booting oscycles' loader with `program` as its module: the command
/// and the machine type.
fn qemu_command(
    build: &Build,
    program: &Path,
    append: &str,
    files: &super::qemu::Files,
    o: &EnvOptions,
) -> Result<(std::process::Command, String), EnvError> {
    let accel = o.own.get::<AccelArgs>()?.accel;
    let kvm = accel == Accel::Kvm;
    let machine = o.own.get::<QemuArgs>()?.machine;
    if kvm {
        EnvError::kvm_usable("hermit")?;
    }
    // One CPU: the kernel is built without smp.
    let mut cmd = super::qemu::command(&EnvOptions { vm_cpus: 1, ..o.clone() }, o.vm_mem_mib);
    cmd.args(["-machine", &machine]).args(accel.qemu_args());
    cmd.args(["-cpu", if kvm { "host" } else { "qemu64,+fsgsbase,+rdtscp,+xsave,+xsaveopt,+fxsr" }]);
    cmd.arg("-kernel").arg(&build.loader).arg("-initrd").arg(program).arg("-append").arg(append);
    super::qemu::serial_on_stdout(&mut cmd, &files.console);
    cmd.args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]);
    Ok((cmd, machine))
}

/// The own VMM's status when KVM cannot run the guest (the reason on its
/// last line of standard error); any other status is the guest's.
const VMM_CANNOT_RUN: i32 = 70;

/// The first argument that makes this process the own VMM's.
const VMM_COMMAND: &str = "__vmm-multiboot";

/// `oscycles __vmm-multiboot`: oscycles' own KVM VMM boots a multiboot
/// image (hermit-microvm).
#[derive(clap::Args, Debug)]
pub struct VmmArgs {
    /// The multiboot image (oscycles' Hermit loader).
    #[arg(long)]
    pub kernel: PathBuf,
    /// Its module (the Hermit program).
    #[arg(long)]
    pub module: PathBuf,
    /// The command line.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub append: String,
    /// Guest memory in MiB.
    #[arg(long, default_value_t = 1024)]
    pub mem_mib: u32,
    /// A file that gets the serial port's bytes too.
    #[arg(long)]
    pub console: Option<PathBuf>,
}

/// Runs the VMM: the serial port on standard output (and `--console`), the
/// guest's isa-debug-exit status as the exit status, or VMM_CANNOT_RUN
/// with the reason on standard error.
fn vmm_multiboot(a: &VmmArgs) -> i32 {
    struct Tee(std::io::Stdout, Option<std::fs::File>);
    impl std::io::Write for Tee {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if let Some(f) = &mut self.1 {
                f.write_all(b)?;
            }
            self.0.write_all(b).map(|()| b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            self.0.flush()
        }
    }
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()));
    let console = a.console.as_deref().map(|p| std::fs::OpenOptions::new().append(true).create(true).open(p));
    let r = (|| {
        let mut out = Tee(std::io::stdout(), console.transpose().map_err(|e| e.to_string())?);
        crate::families::vmm::multiboot::boot(&read(&a.kernel)?, &read(&a.module)?, &a.append, a.mem_mib, &mut out)
            .map_err(|e| e.to_string())
    })();
    // The process exits without unwinding: what the serial port wrote must be out first.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    match r {
        Ok(status) => i32::from(u8::try_from(status).unwrap_or(u8::MAX)),
        Err(why) => {
            eprintln!("{why}");
            VMM_CANNOT_RUN
        }
    }
}

/// The Hermit kernel ends QEMU through isa-debug-exit: 1 -> status 3 (success).
const HERMIT_SUCCESS: i32 = 3;

fn boot_facts(
    build: &Build,
    program: &Path,
    accel: &str,
    machine: &str,
    o: &EnvOptions,
    status: Option<std::process::ExitStatus>,
) -> Map<String, Value> {
    let mut f = Map::new();
    f.insert("vmm".into(), json!(super::qemu::QEMU));
    f.insert(crate::data::schema_core::environment::ACCEL.into(), json!(accel));
    f.insert("machine".into(), json!(machine));
    f.insert("vcpus".into(), json!(1));
    f.insert("memory_mib".into(), json!(o.vm_mem_mib));
    f.insert("loader".into(), json!(build.loader.display().to_string()));
    f.insert("program".into(), json!(program.display().to_string()));
    f.insert("clean_exit".into(), json!(status.and_then(|s| s.code()) == Some(HERMIT_SUCCESS)));
    f
}

/// The check program's line: `hermit-check getpid_cycles=X yield_cycles=Y
/// futex_one_way_cycles=Z`.
fn check_figures(console: &str) -> Value {
    program::check_line(console, "hermit-check ")
}

/// Why a case of the plan is not measured in the unikernel.
fn absent_reason(p: &PlannedCase) -> String {
    let id = p.benchmark.id.as_str();
    let why = match p.benchmark.family.name() {
        "pagefault" => "one kind of memory, the kernel's heap: its first write access is pagefault.anon's row",
        "proc" => "a unikernel runs one process: no fork or exec",
        _ if id == "syscall.getppid" || id == "syscall.null" => "Hermit has no parent process (no getppid)",
        _ => {
            "not in oscycles' Hermit program (hermit/program measures hermit-basic, single-threaded STREAM, memcpy, alloc and ipc.futex between threads)"
        }
    };
    format!("{id} in Hermit: {why}")
}

/// The Hermit program, as program.rs makes its run document.
const GUEST: program::Guest =
    program::Guest { env: "hermit", system: "Hermit", absent: absent_reason, policy: "Hermit's scheduler", one_cpu: true };

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::results::CaseStatus;

    fn spec(suites: &[&str]) -> crate::run::spec::RunSpec {
        crate::run::spec::RunSpec { suites: suites.iter().map(|s| s.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn the_programs_samples_become_the_run_document_of_the_plan() {
        let run = spec(&["hermit-basic", "stream"]);
        let plan = program::plan_of(&run).unwrap();
        let samples = json!({"cases": [
            {"benchmark": "syscall.getpid", "status": "ok", "per_op_cycles": [100.0, 120.0, 110.0], "inner": 4096},
            {"benchmark": "hermit.malloc-1m", "status": "failed", "reason": "malloc(1 MiB) returned NULL"},
            {"benchmark": "stream.kernels", "status": "ok", "elements": 1024, "repetitions": 4, "kernels": [
                {"name": "Copy", "times": [0.5, 0.25], "bytes": 16_000_000},
                {"name": "Triad", "times": [1.0], "bytes": 24_000_000}]},
        ]});
        let clock = crate::measure::clock::known_tsc(2e9);
        let doc = program::document(&GUEST, &run, &plan, &samples, crate::measure::harness::HarnessConfig::tiny(), clock);
        assert_eq!(doc.results.len(), plan.len(), "every planned case has a result");
        let getpid = doc.case("syscall.getpid", |_| true).unwrap();
        assert_eq!(getpid.status, CaseStatus::Ok);
        let m = getpid.metric(schema::syscall::PER_CALL).unwrap();
        assert_eq!((m.summary.median, m.samples[0].len()), (110.0, 3));
        assert_eq!(m.ns.unwrap().median, 55.0, "cycles at 2 GHz");
        let malloc = doc.case("hermit.malloc-1m", |_| true).unwrap();
        assert_eq!((malloc.status, malloc.reason.as_deref()), (CaseStatus::Failed, Some("malloc(1 MiB) returned NULL")));
        let yields = doc.case("syscall.sched_yield", |_| true).unwrap();
        assert_eq!(yields.status, CaseStatus::NotApplicable, "not sent: n/a with the reason");
        assert!(yields.reason.as_deref().unwrap().contains("syscall.sched_yield"));
        let single = doc.case("stream.kernels", |r| r.params.get("threads").and_then(|t| t.as_str()) == Some("single")).unwrap();
        assert_eq!(single.status, CaseStatus::Ok);
        assert_eq!(single.metric("copy_rate").unwrap().summary.max, 64.0, "16 MB in 0.25 s");
        let per_cpu = doc.case("stream.kernels", |r| r.params.get("threads").and_then(|t| t.as_str()) == Some("per-cpu")).unwrap();
        assert_eq!(per_cpu.status, CaseStatus::NotApplicable);
        assert!(doc.results.iter().all(|r| r.status != CaseStatus::Ok || !r.metrics.is_empty()));
    }

    #[test]
    fn each_case_with_parameters_is_named_to_the_program_and_its_answer_found_by_them() {
        let mut run = spec(&["memcpy", "l4-ipc"]);
        run.benchmarks = Some(vec!["memcpy.words".into(), "ipc.futex".into()]);
        let mut plan = program::plan_of(&run).unwrap();
        plan.retain(|p| p.params.get("bytes").is_none_or(|b| b == 64) && p.params.get("words").is_none_or(|w| w == 0));
        let lists = program::case_lists(&plan);
        let futex = lists.split(' ').find(|w| w.starts_with("cases.ipc.futex=")).expect(&lists);
        let (keys, rows) = futex["cases.ipc.futex=".len()..].split_once(':').unwrap();
        assert_eq!(rows.split(':').count(), 4, "space x cores at 0 words: {futex}");
        assert_eq!(keys.split('/').count(), 3, "{futex}");
        assert!(rows.split(':').all(|r| r.split('/').count() == 3), "{futex}");
        let copies = plan.iter().filter(|p| p.benchmark.id == "memcpy.words").count();
        let memcpy = lists.split(' ').find(|w| w.starts_with("cases.memcpy.words=")).unwrap();
        assert_eq!(memcpy.split(':').count(), copies + 1, "{memcpy}");

        let params = |words: u64, space: &str, cores: &str| json!({"words": words, "space": space, "cores": cores});
        let samples = json!({"cases": [
            {"benchmark": "ipc.futex", "params": params(0, "intra", "same"), "status": "ok", "per_op_cycles": [10.0, 12.0, 14.0], "inner": 8, "round_trips": 40, "requests_verified_by_server": 40},
            {"benchmark": "ipc.futex", "params": params(0, "inter", "same"), "status": "n/a", "reason": "one address space"},
        ]});
        let doc = program::document(
            &GUEST,
            &run,
            &plan,
            &samples,
            crate::measure::harness::HarnessConfig::tiny(),
            crate::measure::clock::known_tsc(2e9),
        );
        let at = |space: &str, cores: &str| {
            doc.case("ipc.futex", |r| r.params.get("space") == Some(&json!(space)) && r.params.get("cores") == Some(&json!(cores))).unwrap()
        };
        let ok = at("intra", "same");
        assert_eq!(ok.status, CaseStatus::Ok);
        assert_eq!(ok.metric(schema::ipc::ONE_WAY).unwrap().summary.median, 6.0, "half the round trip");
        assert_eq!(ok.metric(schema::ipc::ROUND_TRIP).unwrap().summary.median, 12.0);
        assert_eq!(ok.details.get("requests_verified_by_server"), Some(&json!(40)));
        let inter = at("inter", "same");
        assert_eq!(inter.status, CaseStatus::NotApplicable);
        assert_eq!(inter.reason.as_deref(), Some("ipc.futex in Hermit: one address space"));
        assert_eq!(at("intra", "cross").status, CaseStatus::NotApplicable, "not answered: n/a");
    }

    #[test]
    fn the_check_programs_line_is_read_from_the_console() {
        let v = check_figures("[0.1][INFO] boot\nhermit-check getpid_cycles=123.5 yield_cycles=456.0\n[0.2] shutdown\n");
        assert_eq!(v, json!({"getpid_cycles": 123.5, "yield_cycles": 456.0}));
        assert!(check_figures("nothing here").get("failed").is_some());
    }

    #[test]
    fn a_missing_or_failed_build_says_why() {
        let d = tempfile::tempdir().unwrap();
        let e = Build::find(d.path()).err().unwrap().to_string();
        assert!(e.contains("not built") && e.contains("scripts/setup"), "{e}");
        std::fs::write(d.path().join("failed"), "building the Hermit kernel failed\nerror: no\n").unwrap();
        let e = Build::find(d.path()).err().unwrap().to_string();
        assert!(e.contains("build failed") && e.contains("error: no"), "{e}");
    }
}
