//! Environments the suites run in, each one module behind [`Environment`]:
//! `native` (this process), `container` (namespaces oscycles makes itself),
//! `qemu-tcg` and `qemu-kvm` (a guest kernel booted with an initramfs whose
//! /init is this same static binary), `microvm` (oscycles' own KVM guest),
//! `xen-*` (Xen under QEMU: the suites in dom0 or in a domU, [`xen`]).
//! [`Env::ALL`](Named::ALL) lists them; another environment is a new module
//! and one line there: the module says what it is (`--env`'s help), adds
//! its own options to `oscycles run` ([`Environment::options`], read back
//! typed with [`EnvArgs::get`]), may take over a guest's first process
//! ([`Environment::init`]), and names its facts, which the report reads
//! through [`crate::data::schema_core::environment`].
//!
//! The host starts an environment with a [`guest::GuestSpec`] (the run's
//! [`RunSpec`](crate::run::spec::RunSpec) and how to behave); the child says
//! hello as its first act, runs the spec, and sends the run document back,
//! framed ([`frame`]) so that it survives a console shared with the kernel.
//! The host timestamps every message, which is also how the boot suite
//! measures start-up. The runner ([`crate::run::runner::run`]) goes over the
//! environments of a run; this module knows how to start and watch one.

pub mod container;
pub mod cpio;
pub mod frame;
pub mod guest;
pub mod gvisor;
pub mod hermit;
pub mod mach;
pub mod microvm;
pub mod native;
pub mod program;
pub mod qemu;
pub mod sel4;
pub mod uml;
pub mod xen;

use crate::base::named::Named;
use crate::data::results::RunDoc;
use crate::families::bench::Venue;
use guest::GuestSpec;
use serde_json::{Map, Value};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Where a benchmark's cases stand in one environment of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// Its cases run inside this environment.
    Inside,
    /// The host measures it by starting this environment (boot time).
    FromHost,
    /// Another environment of the run measures it: not here, nothing said.
    Elsewhere,
    /// It cannot run here: every case gets this reason.
    Not(String),
}

/// One place to run suites in.
pub trait Environment: Sync {
    /// Its name in `--env`, in the results and in messages.
    fn name(&self) -> &'static str;

    /// What it is, for `--env`'s help (a phrase after its name).
    fn about(&self) -> &'static str;

    /// Its own options on `oscycles run`, if it has any.
    fn options(&self) -> Option<OwnOptions> {
        None
    }

    /// Whether, with these options, its guest's TSC counts guest
    /// instructions (QEMU's instruction counter, `--accel icount`): its
    /// cells are then guest instructions, and what measures time is n/a.
    fn counts_instructions(&self, _o: &EnvOptions) -> bool {
        false
    }

    /// Its init hook, called first by the binary: where this process is the
    /// first process of one of its guests, it serves the guest (measuring
    /// with the library's `prepared::measure`) and never returns; elsewhere
    /// it returns at once.
    fn init(&self) {}

    /// Where the cases of a benchmark measured as `runs` says stand here,
    /// in a run over `envs`: a benchmark that belongs to one environment
    /// (`Venue::OnlyIn`) runs there when the run has it, else everywhere.
    fn fit(&self, runs: Venue, envs: &[Env]) -> Fit {
        match runs {
            Venue::Anywhere => Fit::Inside,
            Venue::FromHost => Fit::FromHost,
            Venue::OnlyIn(own) if own == self.name() => Fit::Inside,
            Venue::OnlyIn(own) if envs.iter().any(|e| e.name() == own) => Fit::Elsewhere,
            Venue::OnlyIn(_) => Fit::Inside,
        }
    }

    /// Whether its cases run in this process (native; microvm, whose cases
    /// start their own VMs) rather than in a child it launches.
    fn in_process(&self) -> bool {
        false
    }

    /// Facts about it known without starting it, recorded when its cases
    /// run in this process.
    fn facts(&self) -> Map<String, Value> {
        Map::new()
    }

    /// Refuses, before anything is measured, what cannot work with these
    /// options (qemu: a machine type QEMU does not have). The options all
    /// environments share are checked by [`EnvOptions::check`].
    fn check(&self, _o: &EnvOptions) -> Result<(), EnvError> {
        Ok(())
    }

    /// Starts it once with `spec`, watches it within the timeouts of `o`,
    /// and collects what it sends.
    fn launch(&self, spec: &GuestSpec, o: &EnvOptions) -> Result<Outcome, EnvError>;

    /// The child's side, in `oscycles __env-child --env NAME`: say hello,
    /// measure the spec (`prepared::measure`), send the document back. Returns the
    /// exit code. A QEMU guest's child is its /init ([`guest::main`]), which
    /// serves the same way.
    fn serve(&self, spec: &GuestSpec) -> u8 {
        guest::send(&mut std::io::stdout(), "hello", 0, b"start");
        native::serve_here(spec, guest::facts_inside())
    }
}

/// An environment, as the run names and passes them.
pub type Env = &'static dyn Environment;

impl Named for Env {
    const ALL: &'static [Env] = &[
        &native::Native,
        &container::Container,
        &qemu::Qemu::TCG,
        &qemu::Qemu::KVM,
        &microvm::Microvm,
        &xen::Xen::PV,
        &xen::Xen::PVH,
        &xen::Xen::HVM,
        &xen::Xen::PVH_DOMU,
        &uml::Uml,
        &gvisor::Gvisor,
        &hermit::Hermit::QEMU,
        &hermit::Hermit::MICROVM,
        &sel4::Sel4,
        &mach::Mach,
    ];

    fn name(&self) -> &'static str {
        Environment::name(*self)
    }
}

impl std::fmt::Debug for dyn Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Calls every environment's init hook ([`Environment::init`]): returns
/// only if this process is none of their guests' first process.
pub fn init_hooks() {
    for e in Env::ALL {
        e.init();
    }
}

/// An environment's own command-line options: a clap [`Args`](clap::Args)
/// type, added to `oscycles run` once for every environment that names it
/// (qemu-tcg and qemu-kvm share theirs).
pub struct OwnOptions {
    pub id: &'static str,
    pub augment: fn(clap::Command) -> clap::Command,
    /// Options it shares with other environments, each declared once
    /// (qemu-tcg: QEMU's `--machine` and the emulated ones' `--accel`).
    pub also: Vec<OwnOptions>,
}

impl OwnOptions {
    pub fn of<T: clap::Args>(id: &'static str) -> OwnOptions {
        OwnOptions { id, augment: T::augment_args, also: Vec::new() }
    }

    /// These options and those of `T` (declared under `id`) too.
    pub fn and<T: clap::Args>(mut self, id: &'static str) -> OwnOptions {
        self.also.push(OwnOptions::of::<T>(id));
        self
    }
}

/// The environments' own options as `oscycles run` parsed them (flattened
/// into its arguments); each environment reads its own, typed, with [`EnvArgs::get`].
#[derive(Debug, Clone)]
pub struct EnvArgs(clap::ArgMatches);

impl EnvArgs {
    /// The options of environment type `T`, as given or defaulted.
    pub fn get<T: clap::FromArgMatches>(&self) -> Result<T, clap::Error> {
        T::from_arg_matches(&self.0)
    }

    /// Whether option `id` (a field of an environment's options) was given
    /// on the command line rather than defaulted: an environment whose
    /// default differs from the shared one (mach's --accel) asks.
    pub fn given(&self, id: &str) -> bool {
        self.0.try_get_raw(id).is_ok_and(|v| v.is_some()) && self.0.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    }

    /// Every environment's options at their defaults.
    pub fn defaults() -> Result<EnvArgs, clap::Error> {
        let cmd = <EnvArgs as clap::Args>::augment_args(clap::Command::new("oscycles"));
        Ok(EnvArgs(cmd.try_get_matches_from(["oscycles"])?))
    }
}

impl clap::FromArgMatches for EnvArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(EnvArgs(m.clone()))
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.0 = m.clone();
        Ok(())
    }
}

/// `cmd` with the own options of `envs` (each set once, however many
/// environments share it): what `oscycles run` gets from [`Env::ALL`], and
/// a test from the environments it defines.
pub fn with_options(mut cmd: clap::Command, envs: &[Env]) -> clap::Command {
    let mut added: Vec<&str> = Vec::new();
    for o in envs.iter().filter_map(|e| e.options()) {
        for part in std::iter::once(&o).chain(&o.also) {
            if !added.contains(&part.id) {
                added.push(part.id);
                cmd = (part.augment)(cmd);
            }
        }
    }
    cmd
}

impl clap::Args for EnvArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        with_options(cmd, Env::ALL)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `--env`'s help: every environment with what it is.
pub fn help() -> String {
    let each: Vec<String> = Env::ALL.iter().map(|e| format!("{} ({})", e.name(), e.about())).collect();
    format!("Environments to run the suites in, each in turn (comma-separated): {}", each.join("; "))
}

/// How guests are built and how long to wait for them.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    pub exe: PathBuf,
    pub work: PathBuf,
    /// A guest's Linux kernel (qemu-*, xen-*).
    pub kernel: Option<PathBuf>,
    pub vm_mem_mib: u32,
    pub vm_cpus: u32,
    /// Until the guest's /init says hello.
    pub init_timeout: Duration,
    /// For the whole guest run.
    pub run_timeout: Duration,
    /// What the child's init does ([`GuestMode::Run`] but in tests).
    pub guest_mode: guest::GuestMode,
    /// The environments' own options.
    pub own: EnvArgs,
    /// Where a guest that sent no results leaves its console log: a path
    /// prefix (the run's JSON without `.json`) the log's name is added to.
    /// None: the log goes with the run's private directory.
    pub keep_console: Option<PathBuf>,
}

/// A `--kernel` that is no file.
#[derive(Debug, thiserror::Error)]
#[error("--kernel {}: no such file", .0.display())]
pub struct NoSuchKernel(pub PathBuf);

impl EnvOptions {
    /// Refuses what no environment could work with: a `--kernel` that is no file.
    pub fn check(&self) -> Result<(), NoSuchKernel> {
        match &self.kernel {
            Some(k) if !k.is_file() => Err(NoSuchKernel(k.clone())),
            _ => Ok(()),
        }
    }
}

/// Why an environment could not be used or did not bring results back,
/// each a sentence a user reads (a case's n/a reason, a usage error).
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },
    /// An environment that runs on KVM, without a usable /dev/kvm.
    #[error("{env}: {source}")]
    NoKvm { env: &'static str, source: crate::families::vmm::VmError },
    #[error(transparent)]
    NoSuchKernel(#[from] NoSuchKernel),
    /// Its own options, as clap read them back.
    #[error(transparent)]
    Options(#[from] clap::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The child was killed: `why` is a timeout or an interrupt.
    #[error("{env} {why}")]
    Stopped { env: &'static str, why: String },
    /// A guest killed, with the end of its console (and a hint, if any).
    #[error("{env} {why}{hint}; last output: {tail}")]
    Ended { env: &'static str, why: String, hint: &'static str, tail: String },
    /// What the child sent as its error.
    #[error("{env}: {message}")]
    Child { env: &'static str, message: String },
    #[error("{env} ended ({status}) without sending results; last output: {tail}")]
    NoResults { env: &'static str, status: String, tail: String },
    #[error("{env}: the results do not parse: {source}")]
    BadResults { env: &'static str, source: serde_json::Error },
    #[error("{env} never said hello; last output: {tail}")]
    NoHello { env: &'static str, tail: String },
    #[error("{env} sent no result; last output: {tail}")]
    NoResult { env: &'static str, tail: String },
    #[error(transparent)]
    Qemu(#[from] qemu::QemuError),
    #[error(transparent)]
    Xen(#[from] xen::XenError),
    #[error(transparent)]
    Hermit(#[from] hermit::HermitError),
    #[error(transparent)]
    Sel4(#[from] sel4::Sel4Error),
    #[error(transparent)]
    Mach(#[from] mach::MachError),
    #[error(transparent)]
    Uml(#[from] uml::UmlError),
    #[error(transparent)]
    Gvisor(#[from] gvisor::GvisorError),
}

impl EnvError {
    /// An I/O error with what was being done (`creating PATH`...).
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EnvError {
        let what = what.into();
        move |source| EnvError::Io { what, source }
    }

    /// `env` needs /dev/kvm: the reason it cannot have it, if it cannot.
    pub fn kvm_usable(env: &'static str) -> Result<(), EnvError> {
        crate::families::vmm::kvm_usable().map_err(|source| EnvError::NoKvm { env, source })
    }
}

/// A framed message from a child, with when it arrived (seconds since the
/// child was started).
#[derive(Debug, Clone)]
pub struct Message {
    pub kind: String,
    pub bytes: Vec<u8>,
    pub at_s: f64,
}

/// What came back from one start of an environment.
#[derive(Debug)]
pub struct Outcome {
    pub messages: Vec<Message>,
    /// The child's exit status, if it exited.
    pub status: Option<std::process::ExitStatus>,
    /// Facts of how it was started (command line, machine, kernel...).
    pub facts: Map<String, Value>,
    /// The end of its console or stderr, for error messages.
    pub log_tail: String,
}

impl Outcome {
    pub fn first(&self, kind: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.kind == kind)
    }
}

/// Reads framed messages from `r` on a thread, timestamped from `start`.
fn reader(mut r: impl Read + Send + 'static, start: Instant) -> mpsc::Receiver<Message> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut d = frame::Decoder::default();
        let mut buf = [0u8; 8192];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            d.feed(&String::from_utf8_lossy(&buf[..n]));
            for (kind, bytes) in d.take() {
                if tx.send(Message { kind, bytes, at_s: start.elapsed().as_secs_f64() }).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// How a supervised child ended.
pub struct Ended {
    pub messages: Vec<Message>,
    pub status: Option<std::process::ExitStatus>,
    /// Why it was killed (a timeout, an interrupt), if it was.
    pub why: Option<String>,
    pub stderr: String,
}

/// Waits for `child` (started at `start`, stdout and stderr piped),
/// collecting the messages on its stdout and its stderr, within the
/// timeouts: no hello within `init_timeout`, or no end within
/// `run_timeout`, kills it. The child is also killed on SIGINT/SIGTERM of
/// oscycles.
pub fn supervise(child: Child, start: Instant, init_timeout: Duration, run_timeout: Duration) -> Ended {
    supervise_watching(child, start, init_timeout, run_timeout, &mut || None)
}

/// [`supervise`], also asking `fatal` now and then (a console that shows
/// a hypervisor's panic, after which the VM would idle on): a reason it
/// gives ends the child with that reason.
pub fn supervise_watching(
    mut child: Child,
    start: Instant,
    init_timeout: Duration,
    run_timeout: Duration,
    fatal: &mut dyn FnMut() -> Option<String>,
) -> Ended {
    let rx = reader(child.stdout.take().expect("stdout piped"), start);
    let err_tail = stderr_tail(child.stderr.take().expect("stderr piped"));
    let mut messages = Vec::new();
    let mut why = None;
    let status = loop {
        while let Ok(m) = rx.try_recv() {
            messages.push(m);
        }
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(e) => {
                why = Some(e.to_string());
                break None;
            }
        }
        let hello = messages.iter().any(|m: &Message| m.kind == "hello");
        let stop = if crate::measure::watchdog::interrupted().is_some() {
            Some("interrupted".to_string())
        } else if !hello && start.elapsed() > init_timeout {
            Some(format!("did not reach its /init within {} s", init_timeout.as_secs()))
        } else if start.elapsed() > run_timeout {
            Some(format!("did not finish within {} s", run_timeout.as_secs()))
        } else {
            fatal()
        };
        if let Some(w) = stop {
            let _ = child.kill();
            let _ = child.wait();
            why = Some(w);
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Messages still in the pipe when the child ended.
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(500) {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => messages.push(m),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    Ended { messages, status, why, stderr: err_tail.taken(Duration::from_secs(2)) }
}

/// The most of a child's stderr kept: its end (for error messages).
const STDERR_KEPT: usize = 64 << 10;

/// The bytes kept so far, and whether the pipe closed.
type Kept = std::sync::Mutex<(Vec<u8>, bool)>;

/// The end of a child's stderr, read on a thread.
struct StderrTail(std::sync::Arc<(Kept, std::sync::Condvar)>);

fn stderr_tail(mut r: impl Read + Send + 'static) -> StderrTail {
    let kept = std::sync::Arc::new((std::sync::Mutex::new((Vec::new(), false)), std::sync::Condvar::new()));
    let k = kept.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = r.read(&mut buf) {
            let mut g = k.0.lock().unwrap_or_else(|p| p.into_inner());
            g.0.extend_from_slice(&buf[..n]);
            if g.0.len() > 2 * STDERR_KEPT {
                let cut = g.0.len() - STDERR_KEPT;
                g.0.drain(..cut);
            }
        }
        k.0.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
        k.1.notify_all();
    });
    StderrTail(kept)
}

impl StderrTail {
    /// What was read, once the pipe closed or `wait` passed (a process
    /// the child left behind may hold it open for good).
    fn taken(self, wait: Duration) -> String {
        let (m, cv) = &*self.0;
        let g = m.lock().unwrap_or_else(|p| p.into_inner());
        let (g, _) = cv.wait_timeout_while(g, wait, |(_, done)| !*done).unwrap_or_else(|p| p.into_inner());
        let b = &g.0[g.0.len().saturating_sub(STDERR_KEPT)..];
        String::from_utf8_lossy(b).into_owned()
    }
}

/// Starts `oscycles __env-child --env NAME` with `spec` and watches it;
/// `ended` is told the child's pid when it has ended (to clean up after it).
pub fn launch_child(env: &dyn Environment, spec: &GuestSpec, o: &EnvOptions, ended: impl FnOnce(u32)) -> Result<Outcome, EnvError> {
    let mut cmd = Command::new(&o.exe);
    cmd.arg("__env-child").arg("--env").arg(env.name());
    cmd.arg("--spec").arg(serde_json::to_string(spec)?);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    crate::measure::watchdog::die_with_parent(&mut cmd);
    let start = Instant::now();
    let child = cmd.spawn().map_err(EnvError::io(format!("starting {}", o.exe.display())))?;
    let pid = child.id();
    let end = supervise(child, start, o.init_timeout, o.run_timeout);
    ended(pid);
    if let Some(w) = end.why {
        return Err(EnvError::Stopped { env: env.name(), why: w });
    }
    let mut facts = Map::new();
    facts.insert("start".into(), Value::from(format!("oscycles __env-child ({})", env.name())));
    Ok(Outcome { messages: end.messages, status: end.status, facts, log_tail: tail(&end.stderr) })
}

/// The last lines of a log for an error message, led by the kernel's panic
/// line if there is one (the lines after it are a register dump).
pub fn tail(log: &str) -> String {
    let lines: Vec<String> =
        log.lines().filter(|l| !l.trim().is_empty() && !l.contains("@@OSCYCLES")).map(|l| frame::plain(l, 300)).collect();
    if lines.is_empty() {
        return "(none)".into();
    }
    let last = lines[lines.len().saturating_sub(4)..].join(" | ");
    match lines.iter().rev().find(|l| l.contains("Kernel panic")) {
        Some(p) => format!("{} | ... | {last}", p.trim()),
        None => last,
    }
}

/// Runs `spec` in `env` and returns the run document it sent back, with the
/// facts of how it was started and what it said about itself.
pub fn run_in(env: Env, spec: &GuestSpec, o: &EnvOptions) -> Result<(RunDoc, Map<String, Value>), EnvError> {
    let out = env.launch(spec, o)?;
    if let Some(e) = out.first("error") {
        return Err(EnvError::Child { env: env.name(), message: frame::plain(&String::from_utf8_lossy(&e.bytes), 4096) });
    }
    let Some(m) = out.first("run") else {
        let status = out.status.map_or("killed".into(), |s| s.to_string());
        return Err(EnvError::NoResults { env: env.name(), status, tail: out.log_tail });
    };
    let doc: RunDoc = serde_json::from_slice(&m.bytes).map_err(|source| EnvError::BadResults { env: env.name(), source })?;
    let mut facts = out.facts;
    if let Some(env_facts) = out.messages.iter().find(|m| m.kind == "facts")
        && let Ok(Value::Object(f)) = serde_json::from_slice::<Value>(&env_facts.bytes)
    {
        facts.extend(f);
    }
    Ok((doc, facts))
}

pub use crate::families::bench::schema::boot::RESTARTED_AFTER;

/// One start of `env` running the smallest real run ([`RunSpec::boot`](crate::run::spec::RunSpec::boot)):
/// seconds from start to the hello of its /init, and to its first result;
/// and the faults of earlier starts the environment repeated (Xen under
/// TCG), if any: the times are the last start's own.
pub fn boot_once(env: Env, o: &EnvOptions, seed: u64) -> Result<(f64, f64, Option<Value>), EnvError> {
    // One round: the first result is one small measurement, not the default
    // rounds (each a fresh process) a run takes.
    let run = crate::run::spec::RunSpec { rounds: 1, ..crate::run::spec::RunSpec::boot(seed) };
    let spec = GuestSpec { run, mode: guest::GuestMode::Run, vm_cpus: o.vm_cpus, vm_mem_mib: o.vm_mem_mib };
    let mut out = env.launch(&spec, o)?;
    let hello = out.first("hello").ok_or_else(|| EnvError::NoHello { env: env.name(), tail: out.log_tail.clone() })?;
    let result = out.first("run").ok_or_else(|| EnvError::NoResult { env: env.name(), tail: out.log_tail.clone() })?;
    let (to_init, to_result) = (hello.at_s, result.at_s);
    Ok((to_init, to_result, out.facts.remove(RESTARTED_AFTER)))
}

/// Whether `p` exists and can be executed.
pub fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environments_are_named_and_parsed_as_before() {
        assert_eq!(
            Env::names(),
            "native, container, qemu-tcg, qemu-kvm, microvm, xen-pv, xen-pvh, xen-hvm, xen-pvh-domu, uml, gvisor, hermit, hermit-microvm, sel4, mach"
        );
        assert_eq!(Env::parse("qemu-kvm").map(|e| e.name()), Some("qemu-kvm"));
        assert!(Env::parse("xen").is_none());
    }

    #[test]
    fn a_benchmark_of_one_environment_runs_there_when_the_run_has_it() {
        let (native, micro) = (Env::parse("native").unwrap(), Env::parse("microvm").unwrap());
        let own = Venue::OnlyIn("microvm");
        assert_eq!(native.fit(own, &[native]), Fit::Inside, "no microvm in the run: it runs where the run is");
        assert_eq!(native.fit(own, &[native, micro]), Fit::Elsewhere);
        assert_eq!(micro.fit(own, &[native, micro]), Fit::Inside);
        assert!(matches!(micro.fit(Venue::Anywhere, &[micro]), Fit::Not(why) if why.contains("only the microvm suite")));
        for e in Env::ALL {
            assert_eq!(e.fit(Venue::FromHost, Env::ALL), Fit::FromHost, "{}", e.name());
        }
    }

    #[test]
    fn a_childs_stderr_is_kept_bounded_and_not_waited_for_when_a_leftover_holds_it() {
        // 5 MB of stderr without a newline, then a process left behind holding the pipe for 20 s.
        let child = Command::new("sh")
            .args(["-c", "head -c 5000000 /dev/zero | tr '\\0' x >&2; (sleep 20 &); exit 0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let t = Instant::now();
        let end = supervise(child, t, Duration::from_secs(30), Duration::from_secs(30));
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(end.stderr.len() <= STDERR_KEPT && end.stderr.len() > 1000, "{}", end.stderr.len());
        assert!(tail(&end.stderr).len() < 400);
    }
}
