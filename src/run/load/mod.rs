//! Background loads that oscycles starts and stops itself, so that noise
//! and jitter can be measured under them: `idle` (nothing), `build` (make
//! -jN with gcc over a generated C tree) and `io` (direct-I/O disk traffic
//! plus loopback TCP).
//!
//! A load runs as a worker process (`oscycles __load-worker`, which is this
//! same binary) on the CPUs not measured. Its process group, and where
//! cgroup v2 allows it a cgroup of its own, hold everything it starts; both
//! are killed when the load is dropped, which the runner does when a run
//! ends, fails or is interrupted. The worker also kills its group itself if
//! oscycles disappears without stopping it (SIGKILL). Throughput counters
//! travel through a small file the worker rewrites every 100 ms.

pub mod build;
pub mod io;

use crate::base::named::Named;
use crate::data::schema_core::condition;
use crate::measure::cgroup::KillableGroup;
use crate::measure::placement::format_cpus;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

crate::named_enum! {
    pub enum LoadKind {
        Idle = "idle",
        Build = "build",
        Io = "io",
    }
}

const PROGRESS: &str = "progress";

/// Counters as the worker writes them: "name value" per line; an "error"
/// line says why the worker stopped.
pub fn parse_progress(text: &str) -> (BTreeMap<String, u64>, Option<String>) {
    let mut counters = BTreeMap::new();
    let mut error = None;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(' ') else { continue };
        if k == "error" {
            error = Some(v.to_string());
        } else if let Ok(n) = v.parse() {
            counters.insert(k.to_string(), n);
        }
    }
    (counters, error)
}

/// A running load (or none, for idle). Dropping it stops everything it started.
pub struct Load {
    pub kind: LoadKind,
    pub cpus: Vec<usize>,
    dir: PathBuf,
    child: Option<Child>,
    group: Option<KillableGroup>,
    containment: String,
}

/// Counters at a moment, to turn into rates over a case.
#[derive(Debug, Clone)]
pub struct Mark {
    at: Instant,
    counters: BTreeMap<String, u64>,
}

/// Why a load did not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// What the build load lacks, as `build::tools_missing` says it.
    #[error("{0}")]
    NoTools(String),
    #[error("loads other than idle need the oscycles binary to carry them")]
    NoBinary,
    #[error("creating {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    #[error("writing the build tree in {}: {source}", dir.display())]
    BuildTree { dir: PathBuf, source: std::io::Error },
    #[error("starting the {kind} load ({}): {source}", exe.display())]
    Start { kind: &'static str, exe: PathBuf, source: std::io::Error },
    #[error("the {kind} load made no progress in 30 s (see {})", log.display())]
    NoProgress { kind: &'static str, log: PathBuf },
    /// The worker's own error, or how it exited.
    #[error("the {kind} load stopped: {why}")]
    Stopped { kind: &'static str, why: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Load {
    pub fn idle() -> Load {
        Load { kind: LoadKind::Idle, cpus: vec![], dir: PathBuf::new(), child: None, group: None, containment: "none".into() }
    }

    /// Starts `kind` on `cpus`, with its files in a fresh directory under
    /// `scratch`; `exe` is the oscycles binary that becomes the worker.
    pub fn start(kind: LoadKind, exe: &Path, scratch: &Path, cpus: &[usize]) -> Result<Load, LoadError> {
        if kind == LoadKind::Idle {
            return Ok(Load::idle());
        }
        if kind == LoadKind::Build
            && let Some(why) = build::tools_missing()
        {
            return Err(LoadError::NoTools(why));
        }
        let dir = scratch.join(crate::measure::scratch::unique_name(&format!("load-{}", kind.name())));
        // Inside the run's private directory; a name already there is refused.
        std::fs::create_dir(&dir).map_err(|source| LoadError::Create { path: dir.clone(), source })?;
        let mut load = Load { kind, cpus: cpus.to_vec(), dir, child: None, group: None, containment: String::new() };
        if kind == LoadKind::Build {
            build::generate(&load.dir).map_err(|source| LoadError::BuildTree { dir: load.dir.clone(), source })?;
        }
        let group = KillableGroup::create(&crate::measure::cgroup::load_group_name(kind.name()));
        let mut cmd = Command::new(exe);
        cmd.arg("__load-worker").arg(kind.name()).arg("--dir").arg(&load.dir).arg("--cpus").arg(format_cpus(cpus));
        cmd.arg("--parent").arg(std::process::id().to_string());
        match &group {
            Ok(g) => {
                cmd.arg("--cgroup").arg(&g.path);
                load.containment = format!("process group + cgroup {}", g.path.display());
            }
            Err(e) => load.containment = format!("process group only ({e})"),
        }
        let log = crate::measure::scratch::create_new(&load.dir.join("worker.log"), 0o600)?;
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log);
        load.group = group.ok();
        load.child = Some(cmd.spawn().map_err(|source| LoadError::Start { kind: kind.name(), exe: exe.to_path_buf(), source })?);
        Ok(load)
    }

    fn counters_and_error(&self) -> (BTreeMap<String, u64>, Option<String>) {
        std::fs::read_to_string(self.dir.join(PROGRESS)).map(|t| parse_progress(&t)).unwrap_or_default()
    }

    /// Waits until the load reports progress (and then `settle` more), or
    /// fails; gives up early when the run is interrupted.
    pub fn warm_up(&mut self, settle: Duration) -> Result<(), LoadError> {
        if self.child.is_none() {
            return Ok(());
        }
        let t = Instant::now();
        let mut started: Option<Instant> = None;
        while started.is_none_or(|s| s.elapsed() < settle) {
            if crate::measure::watchdog::interrupted().is_some() {
                return Ok(());
            }
            self.check()?;
            if started.is_none() && self.counters_and_error().0.values().any(|&v| v > 0) {
                started = Some(Instant::now());
            }
            if t.elapsed() > Duration::from_secs(30) {
                return Err(LoadError::NoProgress { kind: self.kind.name(), log: self.dir.join("worker.log") });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Err with the reason if the worker has stopped.
    pub fn check(&mut self) -> Result<(), LoadError> {
        let Some(child) = self.child.as_mut() else { return Ok(()) };
        match child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(st)) => {
                let why = self.counters_and_error().1.unwrap_or_else(|| format!("exited ({st})"));
                Err(LoadError::Stopped { kind: self.kind.name(), why })
            }
            Err(e) => Err(e.into()),
        }
    }

    pub fn mark(&self) -> Mark {
        Mark { at: Instant::now(), counters: self.counters_and_error().0 }
    }

    /// What the load achieved since `m`, and how it was run.
    pub fn facts_since(&self, m: &Mark) -> Map<String, Value> {
        let mut f = Map::new();
        f.insert(condition::LOAD.into(), json!(self.kind.name()));
        if self.kind == LoadKind::Idle {
            return f;
        }
        let now = self.mark();
        let secs = now.at.duration_since(m.at).as_secs_f64().max(1e-9);
        let rate = |k: &str| now.counters.get(k).unwrap_or(&0).saturating_sub(*m.counters.get(k).unwrap_or(&0)) as f64 / secs;
        f.insert("load_cpus".into(), json!(format_cpus(&self.cpus)));
        f.insert("load_containment".into(), json!(self.containment));
        match self.kind {
            LoadKind::Build => {
                f.insert(condition::BUILD_UNITS_PER_S.into(), json!(rate("units")));
                f.insert("build_jobs".into(), json!(now.counters.get("jobs")));
            }
            LoadKind::Io => {
                f.insert(condition::DISK_WRITE_MB_PER_S.into(), json!(rate("disk_written") / 1e6));
                f.insert(condition::DISK_READ_MB_PER_S.into(), json!(rate("disk_read") / 1e6));
                f.insert("disk_direct_io".into(), json!(now.counters.get("direct") == Some(&1)));
                f.insert(condition::TCP_MB_PER_S.into(), json!(rate("tcp") / 1e6));
            }
            LoadKind::Idle => {}
        }
        f
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: kill takes no pointers; the negative pid names the
            // worker's own process group (it was started as its leader).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            if let Some(g) = &self.group {
                g.kill();
            }
            let _ = child.wait();
        }
        self.group.take();
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The worker's side: `oscycles __load-worker KIND --dir D --cpus L --parent P [--cgroup G]`.
pub struct WorkerArgs {
    pub kind: LoadKind,
    pub dir: PathBuf,
    pub cpus: Vec<usize>,
    pub parent: u32,
    pub cgroup: Option<PathBuf>,
}

fn write_progress(dir: &Path, counters: &[(&str, u64)], error: Option<&str>) {
    let mut text: String = counters.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    if let Some(e) = error {
        text += &format!("error {}\n", e.replace('\n', " "));
    }
    let _ = crate::data::documents::write_atomically(&dir.join(PROGRESS), text);
}

fn kill_own_group() -> ! {
    // SAFETY: kill takes no pointers; pid 0 is this process's group, which
    // holds the worker and everything it started.
    unsafe { libc::kill(0, libc::SIGKILL) };
    std::process::exit(1)
}

/// Runs the load until killed. Never returns normally.
pub fn worker_main(a: WorkerArgs) -> i32 {
    if let Some(cg) = &a.cgroup
        && let Err(e) = crate::measure::cgroup::write(&cg.join("cgroup.procs"), "0")
    {
        eprintln!("load worker: {e}");
        return 1;
    }
    if let Err(e) = crate::measure::placement::set_affinity(&a.cpus) {
        eprintln!("load worker: setting affinity to {}: {e}", format_cpus(&a.cpus));
        return 1;
    }
    let error: Arc<Mutex<Option<String>>> = Arc::default();
    let fail = {
        let error = error.clone();
        move |what: &str, e: std::io::Error| *error.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!("{what}: {e}"))
    };
    let jobs = 2 * a.cpus.len().max(1);
    let builds = Arc::new(AtomicU64::new(0));
    let io = Arc::new(io::Counters::default());
    match a.kind {
        LoadKind::Idle => {}
        LoadKind::Build => {
            let (dir, builds, fail) = (a.dir.clone(), builds.clone(), fail.clone());
            std::thread::spawn(move || build::run(&dir, jobs, &builds).map_err(|e| fail("build", e)));
        }
        LoadKind::Io => {
            let (path, c, f) = (a.dir.join("direct-io.dat"), io.clone(), fail.clone());
            std::thread::spawn(move || io::disk(&path, &c).map_err(|e| f("disk", e)));
            let (c, f) = (io.clone(), fail.clone());
            std::thread::spawn(move || io::tcp(&c).map_err(|e| f("tcp", e)));
        }
    }
    // Compiled units: every object file that appears counts once (a clean
    // empties the directory; no rebuild of a unit fits in one 100 ms tick).
    let (mut units, mut objects) = (0u64, 0u64);
    loop {
        // SAFETY: getppid has no arguments.
        if unsafe { libc::getppid() } as u32 != a.parent {
            kill_own_group();
        }
        if a.kind == LoadKind::Build {
            let now = build::objects(&a.dir);
            units += now.saturating_sub(objects);
            objects = now;
        }
        let counters = [
            ("units", units),
            ("builds", builds.load(Ordering::Relaxed)),
            ("jobs", jobs as u64),
            ("disk_written", io.disk_written.load(Ordering::Relaxed)),
            ("disk_read", io.disk_read.load(Ordering::Relaxed)),
            ("direct", io.direct.load(Ordering::Relaxed) as u64),
            ("tcp", io.tcp.load(Ordering::Relaxed)),
        ];
        let err = error.lock().unwrap_or_else(|p| p.into_inner()).clone();
        write_progress(&a.dir, &counters, err.as_deref());
        if err.is_some() {
            kill_own_group();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write_progress(dir, &[("units", 48), ("tcp", 1 << 40)], Some("make failed\nbadly"));
        let (c, e) = parse_progress(&std::fs::read_to_string(dir.join(PROGRESS)).unwrap());
        assert_eq!(c.get("units"), Some(&48));
        assert_eq!(c.get("tcp"), Some(&(1 << 40)));
        assert_eq!(e.as_deref(), Some("make failed badly"));
    }
}
