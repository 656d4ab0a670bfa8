//! The guest-program kit: an environment that boots a program of oscycles'
//! own whole (the Hermit program, the seL4 root task, the GNU Mach task)
//! is a [`GuestProgram`], which says what differs between them (how its
//! build is found, its image and the machine that boots it, the reason a
//! case it does not measure is absent, its check, its clean finish), and
//! [`Program`] makes it an [`Environment`] with the one launch for the
//! rest: the plan the run layer made -> the program's words ([`words`]) ->
//! its image, created new in the run's directory -> one boot through the
//! one starter ([`super::vm`]: the accelerator's arguments and CPU model,
//! one wait for the hello, the console kept when it fails) -> the samples
//! it sends back framed (`frame.rs`; guest/freestanding/frame.h for C
//! guests) -> the run document ([`document`], metrics as each family says)
//! -> the facts, typed ([`BootFacts`]). Under `--kernel-counters` a program
//! that says where its kernel begins ([`GuestProgram::kernel_base`]) boots
//! under oscycles' QEMU plugin ([`super::kcount`]), its check too, with its
//! timed batches marked: its cells get the kernel's metrics, the check its
//! kernel's instructions. Another kernel is one file that implements
//! [`GuestProgram`] and one line in `env::ALL`.

pub mod document;
pub mod words;

use super::environment::{Environment, Outcome};
use super::error::{EnvError, OwnError};
use super::guest::{GuestMode, GuestSpec};
use super::kcount::{self, Counting, KERNEL_COUNTERS_OPTIONS, KernelCounters, KernelCountersArgs};
use super::options::{EnvOptions, OwnOptions};
use super::output::{ConsoleLog, complete_lines};
use super::vm::{ACCEL_OPTIONS, Accel, AccelArgs, Booted, Files, Finish, QemuMachine, StartError};
use crate::data::results::RunDoc;
use crate::families::bench::schema;
use crate::measure::clock::ClockInfo;
use crate::measure::harness::HarnessConfig;
use crate::run::plan::PlannedCase;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::process::Command;

/// Which of its programs a boot runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boot {
    /// The program that measures the plan.
    Program,
    /// The independent check ([`Check`]).
    Check,
}

/// How a program is to be booted: given to [`GuestProgram::machine`].
pub struct At<'a> {
    pub boot: Boot,
    /// The image, written in the run's directory.
    pub image: &'a Path,
    /// The program's words ([`GuestProgram::words`]).
    pub words: &'a str,
    pub accel: Accel,
    /// The guest's clock.
    pub clock: &'a ClockInfo,
    /// The options, with the wait for the hello and one vCPU.
    pub o: &'a EnvOptions,
    /// The console log (a VMM of its own writes it there).
    pub console: &'a Path,
}

/// The machine that boots a program.
pub enum Machine {
    /// QEMU, as [`super::vm::qemu_command`] starts it.
    Qemu(QemuMachine),
    /// A VMM of its own: its command, its name (the facts' `vmm`) and machine.
    Own { cmd: Command, vmm: &'static str, machine: String },
}

/// The independent check a program has: a few-line program booted beside
/// a full run, whose console line (`marker key=number...`) is recorded.
pub struct Check {
    pub marker: &'static str,
    /// Whether a plan has a case the check checks.
    pub checks: fn(&PlannedCase) -> bool,
    /// What is added to the figures read (the one-way cost of a round trip).
    pub figures: fn(&mut Map<String, Value>),
}

/// How a guest program is named.
#[derive(Debug, Clone, Copy)]
pub struct Names {
    /// Its name in `--env`.
    pub env: &'static str,
    /// The system, as reasons name it ("seL4").
    pub system: &'static str,
    /// How its threads are scheduled (the placement's policy).
    pub policy: &'static str,
    /// What it is, for `--env`'s help.
    pub about: &'static str,
}

/// What differs between guest programs. Everything else, [`Program`] does
/// the one way.
pub trait GuestProgram: Sync + 'static {
    /// Its build, as [`GuestProgram::find`] finds it.
    type Build;

    /// How it is named.
    fn names(&self) -> Names;
    /// Its own options: `--accel`, and `--kernel-counters` (which counts
    /// only a program that says where its kernel begins: [`GuestProgram::kernel_base`]).
    fn options(&self) -> Option<OwnOptions> {
        Some(OwnOptions::of::<AccelArgs>(ACCEL_OPTIONS).and::<KernelCountersArgs>(KERNEL_COUNTERS_OPTIONS))
    }
    /// How it runs with these options (refused with the reason).
    fn accel(&self, o: &EnvOptions) -> Result<Accel, EnvError> {
        Ok(o.own.get::<AccelArgs>()?.accel)
    }
    /// Its init hook ([`Environment::init`]).
    fn init(&self) {}
    /// Its build, or why there is none (every case n/a with it).
    fn find(&self) -> Result<Self::Build, EnvError>;
    /// The program's words for `plan` (by default [`words::args`]).
    fn words(&self, spec: &GuestSpec, plan: &[PlannedCase], h: &HarnessConfig, o: &EnvOptions) -> String {
        words::args(spec, plan, h, o)
    }
    /// The image of a boot, the program given `words` (where they go into it).
    fn image(&self, build: &Self::Build, boot: Boot, words: &str, mode: GuestMode) -> Result<Vec<u8>, EnvError>;
    /// The machine that boots it.
    fn machine(&self, build: &Self::Build, at: &At) -> Result<Machine, EnvError>;
    /// Facts of its build (kernel, versions...).
    fn facts(&self, build: &Self::Build) -> Map<String, Value>;
    /// Where its kernel's addresses begin, for `--kernel-counters` (the
    /// plugin tells a kernel instruction from a user one by it: read from
    /// the kernel's ELF, [`kcount::kernel_base`]); None: a program whose
    /// column is not counted (a unikernel has no user mode to tell apart).
    fn kernel_base(&self, _build: &Self::Build) -> Result<Option<u64>, EnvError> {
        Ok(None)
    }
    /// Why a planned case it did not answer is not measured.
    fn absent(&self, p: &PlannedCase) -> String;
    /// Its independent check, if it has one.
    fn check(&self) -> Option<Check> {
        None
    }
    /// How it says it finished cleanly.
    fn finish(&self) -> Finish;
    /// What the console (whole lines; also while it runs: it is then
    /// stopped) or the VMM's end says failed, if anything did.
    fn failed(&self, _console: &str, _status: Option<std::process::ExitStatus>, _stderr: &str) -> Option<String> {
        None
    }
    /// What is said after a guest killed at a timeout.
    fn hang_hint(&self) -> &'static str {
        ""
    }
    /// How many times the init timeout its kernel may take to the hello
    /// (as the counter's, [`Accel::boot_wait`]).
    fn slow_boot(&self) -> u32 {
        1
    }
    /// What it adds to its run document (what each row is in its terms).
    fn annotate(&self, _doc: &mut RunDoc) {}
}

/// A guest program as an environment.
pub struct Program<P>(pub P);

impl<P: GuestProgram> Environment for Program<P> {
    fn name(&self) -> &'static str {
        self.0.names().env
    }

    fn about(&self) -> &'static str {
        self.0.names().about
    }

    fn options(&self) -> Option<OwnOptions> {
        self.0.options()
    }

    fn counts_instructions(&self, o: &EnvOptions) -> bool {
        self.0.accel(o).is_ok_and(Accel::counts_instructions)
    }

    fn init(&self) {
        self.0.init();
    }

    fn launch(&self, spec: &GuestSpec, plan: &[PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        let p = &self.0;
        let build = p.find()?;
        let accel = p.accel(o)?;
        if accel == Accel::Kvm {
            EnvError::kvm_usable(p.names().env)?;
        }
        let o = &EnvOptions { init_timeout: accel.boot_wait(o.init_timeout, p.slow_boot()), vm_cpus: 1, ..o.clone() };
        // Where the kernel counters count: every boot under the plugin, the timed batches marked.
        let base = if kcount::asked(o) == KernelCounters::Off { None } else { p.kernel_base(&build)? };
        let (o, spec) = (&kcount::options(o, base.is_some()), &kcount::guest_spec(spec.clone(), base.is_some()));
        let clock = document::clock(accel.counts_instructions());
        let harness = spec.run.harness(clock.tsc_hz, plan.iter().any(|c| c.scale.brief()));
        let words = p.words(spec, plan, &harness, o);
        let booted = self.boot(&build, Boot::Program, &words, (accel, &clock, base), o)?;
        let mut out = booted.out;
        if let Some(m) = booted.samples {
            let n = p.names();
            let samples: Value = serde_json::from_slice(&m).map_err(|e| ProgramError::Samples { env: n.env, source: e })?;
            let g = document::Guest { env: n.env, system: n.system, absent: &|c| p.absent(c), policy: n.policy, cpus: 1 };
            let mut doc = document::document(&g, &spec.run, plan, &samples, harness, clock.clone());
            p.annotate(&mut doc);
            if let Some(c) = &booted.counting {
                c.attach_doc(&mut doc);
            }
            out.doc = Some(Box::new(doc));
        }
        if let Some(c) = &booted.counting {
            out.facts.insert(kcount::FACT.into(), c.facts());
        }
        if let Some(check) = p.check().filter(|c| spec.mode == GuestMode::Run && plan.len() > 1 && plan.iter().any(c.checks)) {
            let figures = self.boot(&build, Boot::Check, "", (accel, &clock, base), o).map(|b| {
                let mut v = document::check_line(&b.console, check.marker);
                if let Value::Object(m) = &mut v
                    && !m.contains_key("failed")
                {
                    (check.figures)(m);
                    // A check marks each loop whose line it prints (seL4 on ARM's: eight).
                    if let Some(c) = &b.counting {
                        c.check_figures(m, b.console.matches(check.marker).count());
                    }
                }
                v
            });
            out.facts.insert(schema::environment::INDEPENDENT_CHECK.into(), figures.unwrap_or_else(|e| json!({ "failed": e.to_string() })));
        }
        out.facts.extend(p.facts(&build));
        Ok(out)
    }
}

/// What one boot of a program left: the outcome (messages, status, facts,
/// the console's tail), its samples, its whole console, and the kernel
/// counters' plugin that counted it (its windows not read yet).
struct Answered {
    out: Outcome,
    samples: Option<Vec<u8>>,
    console: String,
    counting: Option<Counting>,
}

impl<P: GuestProgram> Program<P> {
    /// Boots one of the program's images once with `words` and watches it
    /// (under the kernel counters' plugin where `base`, the kernel's, is
    /// given): a failure its console or VMM shows, or a guest killed at a
    /// timeout, is the error, with the console's last lines (and where it
    /// was kept).
    fn boot(
        &self,
        build: &P::Build,
        boot: Boot,
        words: &str,
        (accel, clock, base): (Accel, &ClockInfo, Option<u64>),
        o: &EnvOptions,
    ) -> Result<Answered, EnvError> {
        let p = &self.0;
        let name = p.names().env;
        let files = Files::new(name, o)?;
        files.write_image(&p.image(build, boot, words, o.guest_mode)?)?;
        let at = At { boot, image: &files.initrd, words, accel, clock, o, console: &files.console };
        let (mut cmd, facts) = match p.machine(build, &at)? {
            Machine::Qemu(m) => (super::vm::qemu_command(&m, accel, o, &files.console), BootFacts::of(&m, accel)),
            Machine::Own { cmd, vmm, machine } => {
                let facts =
                    BootFacts { vmm, accel: accel.name(), machine, cpu_model: None, vcpus: 1, memory_mib: o.vm_mem_mib, clean_exit: false };
                (cmd, facts)
            }
        };
        // The plugin is probed with the QEMU that boots the program.
        let qemu = cmd.get_program().to_string_lossy().into_owned();
        let counting = base.map(|b| Counting::start(o, &qemu, accel.counts_instructions(), b, None)).transpose()?.flatten();
        if let Some(c) = &counting {
            cmd.args(c.qemu_args());
        }
        let mut log = ConsoleLog::new(&files.console);
        // While the guest runs, whole lines only: a line read before its
        // end may name half its reason (a serial port sends a character at a time).
        let mut fatal = || log.grown().and_then(|seen| p.failed(complete_lines(seen), None, ""));
        let answer = (boot == Boot::Program).then_some("samples");
        let Booted { end, console, log_tail } = super::vm::watch(cmd, &files, o, answer, &mut fatal).map_err(|source| StartError {
            env: name.into(),
            what: facts.vmm.into(),
            source,
        })?;
        if let Some(why) = p.failed(&console, end.status, &end.stderr) {
            return Err(ProgramError::Failed { env: name, why, tail: log_tail }.into());
        }
        if let Some(why) = end.why {
            return Err(EnvError::Ended { env: name, why, hint: p.hang_hint(), tail: log_tail });
        }
        let samples = end.messages.iter().find(|m| m.kind == "samples").map(|m| m.bytes.clone());
        let facts = BootFacts { clean_exit: p.finish().is(end.status), ..facts }.into_map();
        Ok(Answered { out: Outcome { messages: end.messages, status: end.status, facts, log_tail, doc: None }, samples, console, counting })
    }
}

/// The facts of a program's boot, as every guest program has them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BootFacts {
    /// The VMM: QEMU, or one of its own.
    pub vmm: &'static str,
    /// How it ran (`--accel`).
    pub accel: &'static str,
    pub machine: String,
    /// The CPU model QEMU gave it (None: QEMU's default, or no QEMU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<&'static str>,
    pub vcpus: u32,
    pub memory_mib: u32,
    /// Whether it ended the way it says it finishes ([`GuestProgram::finish`]).
    pub clean_exit: bool,
}

impl BootFacts {
    fn of(m: &QemuMachine, accel: Accel) -> BootFacts {
        BootFacts {
            vmm: super::vm::QEMU,
            accel: accel.name(),
            machine: m.machine.clone(),
            cpu_model: accel.cpu_model(m.cpu),
            vcpus: m.vcpus,
            memory_mib: m.mem_mib,
            clean_exit: false,
        }
    }

    fn into_map(self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }
}

/// Why a program's boot brought no answer the host can read.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error("{env}: the program's samples do not parse: {source}")]
    Samples { env: &'static str, source: serde_json::Error },
    /// What its console or VMM said failed.
    #[error("{env}: {why}; last output: {tail}")]
    Failed { env: &'static str, why: String, tail: String },
}

impl OwnError for ProgramError {}
