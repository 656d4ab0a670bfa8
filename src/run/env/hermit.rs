//! `hermit`: the Hermit unikernel (HermitCore's successor) as a column
//! beside Linux, as the HermitCore evaluation compared them. QEMU boots
//! oscycles' own loader (`-kernel`, multiboot) with oscycles' Hermit program
//! (`-initrd`): the kernel from crates.io `hermit-kernel`, linked with the
//! program, both built by `scripts/setup-hermit` into [`CACHE`]. The
//! program (`hermit/program`, oscycles' harness and STREAM compiled for
//! x86_64-unknown-hermit) says hello as its first act, measures the cases
//! named on its command line and sends their samples back framed on the
//! one serial port it shares with the kernel's log; the guest-program kit
//! ([`super::program`]) boots it and makes the run document of them, as any
//! environment's child would send it.
//!
//! Under TCG (here) its cycles are emulated cycles, as qemu-tcg's are;
//! `--accel kvm` boots it on a KVM that can run it. A build that failed, or
//! none, makes every case n/a with the reason. The same invocation boots an
//! independent few-line Hermit program (`hermit/check`: rdtsc around 10^5
//! getpid and yield_now calls) and records its figures beside the run's.

use super::error::{EnvError, OwnError};
use super::guest::GuestMode;
use super::options::{EnvOptions, OwnOptions};
use super::program::{At, Boot, Check, GuestProgram, Machine, Names};
use super::vm::{Accel, Finish, QemuMachine, Serial};
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

/// What each is, for `--env`'s help.
const ABOUT_QEMU: &str = "the Hermit unikernel (HermitCore's successor): oscycles' Hermit program booted by QEMU through oscycles' own loader; --accel tcg (emulated cycles) or kvm";
const ABOUT_OWN: &str = "the Hermit unikernel in oscycles' own KVM VMM (no QEMU, as uhyve runs it): the same loader and program, CPU cycles; needs a KVM that runs ordinary guests (n/a with the reason on kvm_pvm)";

/// The CPU QEMU emulates for the Hermit kernel: what it needs of one.
const CPU: &str = "qemu64,+fsgsbase,+rdtscp,+xsave,+xsaveopt,+fxsr";

impl GuestProgram for Hermit {
    type Build = Build;

    fn names(&self) -> Names {
        let (env, about) = match self.vmm {
            Vmm::Qemu => ("hermit", ABOUT_QEMU),
            Vmm::Own => ("hermit-microvm", ABOUT_OWN),
        };
        Names { env, system: "Hermit", policy: "Hermit's scheduler", about }
    }

    fn options(&self) -> Option<OwnOptions> {
        (self.vmm == Vmm::Qemu).then(|| OwnOptions::of::<super::vm::AccelArgs>(super::vm::ACCEL_OPTIONS))
    }

    fn accel(&self, o: &EnvOptions) -> Result<Accel, EnvError> {
        match self.vmm {
            Vmm::Qemu => Ok(o.own.get::<super::vm::AccelArgs>()?.accel),
            Vmm::Own => Ok(Accel::Kvm),
        }
    }

    /// The own VMM's process (`oscycles __vmm-multiboot ...`, which its
    /// machine starts): boots the image and exits with its status.
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

    fn find(&self) -> Result<Build, EnvError> {
        EnvError::x86_only(
            self.names().env,
            "its program is x86-64 code timed by the guest's TSC, in cycles of the host's x86-64 oscycles",
        )?;
        Ok(Build::find(&cache_dir())?)
    }

    fn image(&self, build: &Build, boot: Boot, _: &str, _: GuestMode) -> Result<Vec<u8>, EnvError> {
        let path = match boot {
            Boot::Program => &build.program,
            Boot::Check => &build.check,
        };
        std::fs::read(path).map_err(EnvError::io(format!("reading {}", path.display())))
    }

    /// oscycles' loader (`-kernel`, multiboot) with the program as its
    /// module, the words on the command line after the kernel's timer rate
    /// (`-freq`, MHz: it runs at the TSC rate given); one CPU (the kernel
    /// is built without smp).
    fn machine(&self, build: &Build, at: &At) -> Result<Machine, EnvError> {
        let append = format!("-freq {} -- {}", (at.clock.tsc_hz / 1e6).round() as u64, at.words);
        Ok(match self.vmm {
            Vmm::Qemu => Machine::Qemu(QemuMachine {
                machine: at.o.own.get::<super::vm::QemuArgs>()?.machine,
                cpu: Some(CPU),
                mem_mib: at.o.vm_mem_mib,
                vcpus: 1,
                kernel: build.loader.clone(),
                initrd: at.image.into(),
                append: Some(append),
                serial: Serial::Shared,
                debug_exit: true,
            }),
            Vmm::Own => {
                let exe = std::env::current_exe().map_err(|source| HermitError::OwnExe { env: self.names().env, source })?;
                let mut cmd = std::process::Command::new(exe);
                cmd.arg(VMM_COMMAND).arg("--kernel").arg(&build.loader).arg("--module").arg(at.image);
                cmd.arg(format!("--append={append}")).arg("--mem-mib").arg(at.o.vm_mem_mib.to_string()).arg("--console").arg(at.console);
                Machine::Own { cmd, vmm: "oscycles (its own KVM VMM, __vmm-multiboot)", machine: "oscycles' own".into() }
            }
        })
    }

    fn facts(&self, build: &Build) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert("loader".into(), json!(build.loader.display().to_string()));
        f.insert("program".into(), json!(build.program.display().to_string()));
        f.insert("versions".into(), json!(build.versions));
        f
    }

    fn absent(&self, p: &PlannedCase) -> String {
        absent_reason(p)
    }

    /// hermit/check: rdtsc around 10^5 getpid and yield_now calls; its line
    /// `hermit-check getpid_cycles=X yield_cycles=Y futex_one_way_cycles=Z`.
    fn check(&self) -> Option<Check> {
        let checks = |p: &PlannedCase| ["syscall.getpid", "syscall.sched_yield", "ipc.futex"].contains(&p.benchmark.id.as_str());
        Some(Check { marker: "hermit-check ", checks, figures: |_| {} })
    }

    /// The Hermit kernel writes 1 to isa-debug-exit (QEMU's status 3).
    fn finish(&self) -> Finish {
        Finish::DebugExit(1)
    }

    /// The own VMM that could not run the guest, with its reason.
    fn failed(&self, _: &str, status: Option<std::process::ExitStatus>, stderr: &str) -> Option<String> {
        (status.and_then(|s| s.code()) == Some(VMM_CANNOT_RUN))
            .then(|| super::frame::plain(stderr.lines().last().unwrap_or("the VMM could not run the guest"), 300))
    }
}

/// Why Hermit cannot be booted.
#[derive(Debug, thiserror::Error)]
pub enum HermitError {
    /// The reason and the log's last lines, as scripts/setup-hermit left them.
    #[error("hermit: the Hermit build failed: {0}")]
    BuildFailed(String),
    #[error("hermit: not built ({} missing; scripts/setup builds Hermit into {})", missing.display(), dir.display())]
    NotBuilt { missing: PathBuf, dir: PathBuf },
    #[error("{env}: finding oscycles' own executable: {source}")]
    OwnExe { env: &'static str, source: std::io::Error },
}

impl OwnError for HermitError {}

/// The artefacts of the Hermit build.
pub struct Build {
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
    // The console file the host made new in its private run directory
    // (vm::Files): opened as it is, never created here, never through a link.
    let console = a.console.as_deref().map(|p| {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new().append(true).custom_flags(libc::O_NOFOLLOW).open(p)
    });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::results::CaseStatus;
    use crate::families::bench::schema;
    use crate::run::env::program::document::tests::{plan, spec};
    use crate::run::env::program::{document, words};

    /// The Hermit program, as the kit makes its run document.
    const GUEST: document::Guest =
        document::Guest { env: "hermit", system: "Hermit", absent: &absent_reason, policy: "Hermit's scheduler", cpus: 1 };

    #[test]
    fn the_programs_samples_become_the_run_document_of_the_plan() {
        let run = spec(&["hermit-basic", "stream"]);
        let plan = plan(&run);
        let samples = json!({"cases": [
            {"benchmark": "syscall.getpid", "status": "ok", "per_op_cycles": [100.0, 120.0, 110.0], "inner": 4096},
            {"benchmark": "hermit.malloc-1m", "status": "failed", "reason": "malloc(1 MiB) returned NULL"},
            {"benchmark": "stream.kernels", "status": "ok", "elements": 1024, "repetitions": 4, "kernels": [
                {"name": "Copy", "times": [0.5, 0.25], "bytes": 16_000_000},
                {"name": "Triad", "times": [1.0], "bytes": 24_000_000}]},
        ]});
        let clock = crate::measure::clock::known_tsc(2e9);
        let doc = document::document(&GUEST, &run, &plan, &samples, crate::measure::harness::HarnessConfig::tiny(), clock);
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
        let mut plan = plan(&run);
        plan.retain(|p| p.params.get("bytes").is_none_or(|b| b == 64) && p.params.get("words").is_none_or(|w| w == 0));
        let lists = words::case_lists(&plan);
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
        let doc = document::document(
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
    fn a_missing_or_failed_build_says_why() {
        let d = tempfile::tempdir().unwrap();
        let e = Build::find(d.path()).err().unwrap().to_string();
        assert!(e.contains("not built") && e.contains("scripts/setup"), "{e}");
        std::fs::write(d.path().join("failed"), "building the Hermit kernel failed\nerror: no\n").unwrap();
        let e = Build::find(d.path()).err().unwrap().to_string();
        assert!(e.contains("build failed") && e.contains("error: no"), "{e}");
    }
}
