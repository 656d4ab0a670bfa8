//! `gvisor`: the suites in a gVisor sandbox (Debian's `runsc`). Its
//! Sentry, a Linux personality written as a user-space Go program,
//! intercepts the sandboxed program's system calls (platform ptrace, kvm
//! or systrap) and serves them itself, asking the host kernel for a narrow
//! set of services.
//!
//! oscycles writes a minimal OCI bundle in the run's private directory: a
//! read-only root holding just this binary (debug sections stripped), a
//! tmpfs for /tmp, `config.json` running `oscycles __env-child --env gvisor`
//! as nobody with no capabilities, network none (the sandbox's own
//! loopback only). The child's stdout is the framed channel, as for every
//! environment's child: nothing in the sandbox can write the host's files.
//! runsc keeps its state under the run's private directory, creates no
//! cgroup (`--ignore-cgroups`), and runs the sandbox attached (its
//! processes die with runsc, which dies with oscycles); `runsc delete
//! --force` on the way out, and a later gvisor run kills the sandbox
//! processes of a run whose private directory is gone.
//!
//! Where the Sentry runs against the stub processes that run the program
//! is `--helper-placement` ([`super::helpers`]): on the measured CPU with
//! them (same, the default), or on the partner CPU (cross).

use super::environment::{Environment, Fit, Outcome};
use super::error::{EnvError, OwnError};
use super::guest::{self, GuestSpec};
use super::helpers::{self, At, HelperArgs, HelperPlacement, Placer, Roles, Rule};
use super::options::{EnvOptions, OwnOptions};
use super::output::tail;
use super::supervise::supervise_watching;
use crate::families::bench::Venue;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub struct Gvisor;

/// The columns of a run that measures gVisor at both helper placements.
static AT: [At; 2] = [
    At { base: &Gvisor, at: HelperPlacement::Same, name: "gvisor helper=same", launch: launch_at },
    At { base: &Gvisor, at: HelperPlacement::Cross, name: "gvisor helper=cross", launch: launch_at },
];

/// Its processes: runsc, its sandbox (the Sentry) and gofer intercept;
/// the processes below the sandbox (the stubs) run the program.
const ROLES: Roles = Roles {
    rule: Rule::Below(2),
    intercepting: "runsc's sandbox process (the Sentry), with runsc and its gofer",
    program: "the stub processes below the sandbox, in which the program runs",
};

pub const RUNSC: &str = "runsc";
const INSTALL: &str = "apt-get install runsc (scripts/setup installs it)";
/// The user the sandboxed program runs as (nobody).
const SANDBOX_UID: u32 = 65534;
/// The longest a platform's trial may take when none is named (below --init-timeout).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// How the Sentry intercepts the sandboxed program's system calls.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Ptrace,
    Kvm,
    Systrap,
}

impl Platform {
    /// Tried in this order when none is named: the fastest first.
    const PREFERRED: [Platform; 3] = [Platform::Systrap, Platform::Kvm, Platform::Ptrace];

    pub fn name(self) -> &'static str {
        match self {
            Platform::Ptrace => "ptrace",
            Platform::Kvm => "kvm",
            Platform::Systrap => "systrap",
        }
    }
}

/// The gvisor environment's own options.
#[derive(clap::Args, Debug, Clone)]
pub struct GvisorArgs {
    /// How gVisor's Sentry intercepts system calls under --env gvisor:
    /// ptrace, kvm or systrap. Default: the first of systrap, kvm, ptrace
    /// that runs a sandbox here (each tried within --init-timeout, at most 10 s).
    #[arg(long, value_enum, value_name = "PLATFORM")]
    pub gvisor_platform: Option<Platform>,
}

#[derive(Debug, thiserror::Error)]
pub enum GvisorError {
    #[error("gvisor: {RUNSC} not found: {INSTALL}")]
    Missing,
    #[error("gvisor: its options: {0}")]
    Options(#[from] clap::Error),
    #[error("gvisor: {what} {}: {source}", path.display())]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
    #[error("gvisor: no platform runs a sandbox here: {0}")]
    NoPlatform(String),
    #[error("gvisor (platform {platform}) {why}; last output: {tail}")]
    Ended { platform: &'static str, why: String, tail: String },
    /// A platform's trial: a sandbox that did not answer.
    #[error("no answer within {0} s")]
    NoAnswer(u64),
    /// A platform's trial: runsc ended without running it.
    #[error("runsc ended ({status}): {tail}")]
    RunscEnded { status: String, tail: String },
}

impl OwnError for GvisorError {}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> GvisorError {
    let path = path.to_path_buf();
    move |source| GvisorError::Io { what, path, source }
}

impl Environment for Gvisor {
    fn name(&self) -> &'static str {
        "gvisor"
    }

    fn about(&self) -> &'static str {
        "a gVisor sandbox (runsc): a user-space Linux personality, its Sentry, serves the system calls"
    }

    fn options(&self) -> Option<OwnOptions> {
        Some(OwnOptions::of::<GvisorArgs>("gvisor").and::<HelperArgs>(helpers::OPTIONS))
    }

    fn fit(&self, runs: Venue, _envs: &[super::environment::Env]) -> Fit {
        match runs {
            Venue::Anywhere => Fit::Inside,
            Venue::FromHost => Fit::FromHost,
            Venue::OnlyIn(own) => {
                Fit::Not(format!("the {own} suite runs only in its own environment, which a gVisor sandbox is not (no /dev/kvm there)"))
            }
        }
    }

    fn check(&self, o: &EnvOptions) -> Result<(), EnvError> {
        helpers::check(o)
    }

    fn columns(&self, o: &EnvOptions) -> Result<Option<Vec<super::environment::Env>>, EnvError> {
        helpers::columns(o, &AT)
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[crate::run::plan::PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        launch_at(spec, o, helpers::single(o)?)
    }

    /// Hello, then the run, with the Sentry's own view of itself.
    fn serve(&self, spec: &GuestSpec) -> u8 {
        guest::send(&mut std::io::stdout(), "hello", 0, b"start");
        let mut facts = guest::facts_inside();
        facts.insert("kernel_version_inside".into(), json!(crate::measure::host::uname().1));
        guest::serve_here(spec, facts)
    }
}

/// runsc's version line, or why there is none.
fn runsc_version() -> Result<String, GvisorError> {
    let out = Command::new(RUNSC).arg("--version").stdin(Stdio::null()).output().map_err(|_| GvisorError::Missing)?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().trim().to_string())
}

/// One sandbox: its bundle and runsc's state, in the run's private directory.
struct Sandbox {
    id: String,
    bundle: PathBuf,
    state: PathBuf,
}

impl Sandbox {
    /// A bundle running `/oscycles ARGS` as nobody.
    fn new(o: &EnvOptions, args: &[&str]) -> Result<Sandbox, GvisorError> {
        let id = crate::measure::scratch::unique_name("gvisor");
        let s = Sandbox { bundle: o.work.join(format!("{id}.bundle")), state: o.work.join(format!("{id}.state")), id };
        let root = s.bundle.join("rootfs");
        for d in [&s.bundle, &root, &s.state] {
            crate::base::fsafe::make_dir(d, 0o755).map_err(io("creating", d))?;
        }
        let bin = super::initramfs::guest_image(&o.exe, &s.bundle.join("oscycles"))
            .map_err(|e| io("reading", &o.exe)(std::io::Error::other(e)))?;
        let exe = root.join("oscycles");
        let f = crate::measure::scratch::create_new(&exe, 0o755).map_err(io("creating", &exe))?;
        std::io::Write::write_all(&mut std::io::BufWriter::new(f), &bin).map_err(io("writing", &exe))?;
        let config = s.bundle.join("config.json");
        crate::base::fsafe::write_new(&config, config_json(args).to_string()).map_err(io("writing", &config))?;
        Ok(s)
    }

    /// `runsc` with this sandbox's state directory, no network, no cgroup.
    fn runsc(&self, platform: Platform) -> Command {
        let mut cmd = Command::new(RUNSC);
        cmd.arg("--root").arg(&self.state);
        cmd.args(["--network=none", "--ignore-cgroups", "--platform", platform.name()]);
        cmd
    }

    /// Runs it on `platform`, watched within `init`/`run` timeouts, its
    /// processes placed as `place` says (at, and the intercepting side's
    /// and the program's CPUs), with the facts of it.
    fn run(
        &self,
        platform: Platform,
        init: Duration,
        run: Duration,
        place: Option<(HelperPlacement, (usize, usize))>,
    ) -> Result<(super::supervise::Supervised, Option<Value>), GvisorError> {
        let mut cmd = self.runsc(platform);
        cmd.arg("run").arg("--bundle").arg(&self.bundle).arg(&self.id);
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        crate::measure::watchdog::die_with_parent(&mut cmd);
        let start = Instant::now();
        let child = cmd.spawn().map_err(|_| GvisorError::Missing)?;
        let placer = place.map(|(at, cpus)| Placer::start(child.id(), at, cpus, ROLES));
        let end = supervise_watching(child, start, init, run, &mut |hello| {
            if hello && let Some(p) = &placer {
                p.arm();
            }
            None
        });
        Ok((end, placer.map(Placer::finish)))
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let mut cmd = Command::new(RUNSC);
        cmd.arg("--root").arg(&self.state).args(["delete", "--force", &self.id]);
        let _ = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status();
        let _ = std::fs::remove_dir_all(&self.bundle);
        let _ = std::fs::remove_dir_all(&self.state);
    }
}

/// The OCI runtime configuration: `/oscycles ARGS` as nobody, no
/// capabilities, a read-only root, /tmp a tmpfs, its own namespaces.
fn config_json(args: &[&str]) -> Value {
    let argv: Vec<&str> = std::iter::once("/oscycles").chain(args.iter().copied()).collect();
    json!({
        "ociVersion": "1.0.0",
        "process": {
            "user": {"uid": SANDBOX_UID, "gid": SANDBOX_UID},
            "args": argv,
            "env": ["PATH=/", "HOME=/tmp"],
            "cwd": "/tmp",
            "noNewPrivileges": true,
            "capabilities": {"bounding": [], "effective": [], "permitted": [], "inheritable": [], "ambient": []}
        },
        "root": {"path": "rootfs", "readonly": true},
        "hostname": "oscycles-gvisor",
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["mode=1777"]},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs"}
        ],
        "linux": {"namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}]}
    })
}

/// The platform to use: the one named, else the first that runs
/// `oscycles --version` in a sandbox within the trial's time (decided
/// once a process), with what each trial said.
fn platform(o: &EnvOptions) -> Result<(Platform, Vec<String>), GvisorError> {
    if let Some(p) = o.own.get::<GvisorArgs>()?.gvisor_platform {
        return Ok((p, vec![format!("{}: named by --gvisor-platform", p.name())]));
    }
    // The platform and what each trial said; or, none running, what each said.
    type Trials = Result<(Platform, Vec<String>), Vec<String>>;
    static CHOSEN: OnceLock<Trials> = OnceLock::new();
    let chosen = CHOSEN.get_or_init(|| {
        let limit = o.init_timeout.min(PROBE_TIMEOUT);
        let mut said = Vec::new();
        for p in Platform::PREFERRED {
            match try_platform(p, o, limit) {
                Ok(()) => {
                    said.push(format!("{}: runs", p.name()));
                    return Ok((p, said));
                }
                Err(why) => said.push(format!("{}: {why}", p.name())),
            }
        }
        Err(said)
    });
    chosen.clone().map_err(|said| GvisorError::NoPlatform(said.join("; ")))
}

/// Whether a sandbox on `p` runs `oscycles --version` within `limit`.
fn try_platform(p: Platform, o: &EnvOptions, limit: Duration) -> Result<(), GvisorError> {
    let sandbox = Sandbox::new(o, &["--version"])?;
    // The version line is no frame: a hello never comes, the init timeout ends a hang.
    let (end, _) = sandbox.run(p, limit, limit, None)?;
    match (end.why, end.status) {
        (Some(_), _) => Err(GvisorError::NoAnswer(limit.as_secs())),
        (None, Some(s)) if s.success() => Ok(()),
        (None, s) => Err(GvisorError::RunscEnded { status: s.map_or("killed".into(), |s| s.to_string()), tail: tail(&end.stderr) }),
    }
}

/// The runsc binary on the PATH: its device and inode.
fn runsc_identity() -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    let m = std::env::split_paths(&path).find_map(|d| std::fs::metadata(d.join(RUNSC)).ok().filter(|m| m.is_file()))?;
    Some((m.dev(), m.ino()))
}

/// Kills the sandbox processes of runs gone: a run killed with SIGKILL
/// takes its attached sandbox with it (runsc dies with oscycles, the
/// sandbox with runsc); this is for anything else. A process is never
/// chosen by its name: only one that runs the runsc binary itself (the same
/// file, by device and inode), as this user (or, for root, as the sandbox's
/// user), whose state directory is in a run directory of this run's scratch
/// directory `base` that no longer exists. runsc's sandbox starts a session
/// of its own, so no process group of the run holds it.
fn reap_orphans(base: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Some(runsc) = runsc_identity() else { return };
    let me = crate::base::fsafe::euid();
    let Ok(procs) = std::fs::read_dir("/proc") else { return };
    for p in procs.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(exe) = std::fs::metadata(p.path().join("exe")) else { continue };
        let Ok(owner) = std::fs::metadata(p.path()).map(|m| m.uid()) else { continue };
        if (exe.dev(), exe.ino()) != runsc || !(owner == me || (me == 0 && owner == SANDBOX_UID)) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(p.path().join("cmdline")) else { continue };
        let args: Vec<String> = cmdline.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).to_string()).collect();
        let ours_gone = |root: &str| {
            let run_dir = Path::new(root).parent();
            run_dir.and_then(Path::parent) == Some(base)
                && run_dir
                    .and_then(Path::file_name)
                    .is_some_and(|n| n.to_string_lossy().starts_with(crate::measure::scratch::RUN_DIR_PREFIX))
                && run_dir.is_some_and(|d| !d.exists())
        };
        if args.iter().filter_map(|a| a.strip_prefix("--root=")).any(ours_gone) {
            // SAFETY: kill takes no pointers; the pid runs runsc as this
            // user (or its sandbox's), for a run of this scratch directory that is gone.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// [`launch`] as an environment's error.
fn launch_at(spec: &GuestSpec, o: &EnvOptions, at: HelperPlacement) -> Result<Outcome, EnvError> {
    let cpus = helpers::cpus_of(at, o)?;
    Ok(launch(spec, o, (at, cpus))?)
}

/// Runs `spec` in a fresh sandbox, its processes placed as `place` says,
/// and collects what it sends.
fn launch(spec: &GuestSpec, o: &EnvOptions, place: (HelperPlacement, (usize, usize))) -> Result<Outcome, GvisorError> {
    let version = runsc_version()?;
    if let Some(base) = o.work.parent() {
        reap_orphans(base);
    }
    let (platform, trials) = platform(o)?;
    let spec_json = serde_json::to_string(spec).map_err(|e| io("writing the spec for", &o.work)(e.into()))?;
    let sandbox = Sandbox::new(o, &["__env-child", "--env", "gvisor", "--spec", &spec_json])?;
    let (end, placed) = sandbox.run(platform, o.init_timeout, o.run_timeout, Some(place))?;
    drop(sandbox);
    let log_tail = tail(&end.stderr);
    if let Some(why) = end.why {
        let why = if platform == Platform::Kvm && why.contains("/init") {
            format!("{why} (this machine's /dev/kvm may not run gVisor's KVM platform: a nested or software KVM hangs it)")
        } else {
            why
        };
        return Err(GvisorError::Ended { platform: platform.name(), why, tail: log_tail });
    }
    let mut facts = Map::new();
    facts.insert("runsc".into(), json!(version));
    facts.insert("platform".into(), json!(platform.name()));
    facts.insert("platform_trials".into(), json!(trials));
    facts.insert("network".into(), json!("none (the sandbox's own loopback)"));
    facts.insert("sandbox_uid".into(), json!(SANDBOX_UID));
    if let Some(placed) = placed {
        facts.insert(helpers::FACT.into(), placed);
    }
    Ok(Outcome { messages: end.messages, status: end.status, facts, log_tail, doc: None })
}
