//! How far the measured thread is detached from the rest of Linux:
//!
//! - `none`: the thread may run on any CPU, under SCHED_OTHER;
//! - `pinned`: affinity to the measured CPU only;
//! - `rt`: pinned, SCHED_FIFO, all memory locked (buffers are prefaulted by
//!   the benchmarks), and a 0 us request held on /dev/cpu_dma_latency so that
//!   no CPU enters an idle state slower to leave (as cyclictest does by default);
//! - `isolated`: rt, plus the measured CPU carved out as a cpuset of its own
//!   (a cgroup v2 partition of type isolated; where the cpuset controller lives
//!   on cgroup v1, as on this project's CI host, its v1 equivalent: an exclusive
//!   cpuset with load balancing off and every movable task moved to the other
//!   CPUs), and every movable IRQ's affinity pointed away from it.
//!
//! Everything changed is recorded and put back when the guard is dropped,
//! which the runner does after the condition, on failure and on interrupt.
//! Against SIGKILL a journal of the original settings is written first;
//! the next `oscycles run` finds it and restores them.

use crate::base::named::Named;
use crate::data::schema_core::condition;
use crate::measure::cgroup;
use crate::measure::owner::Owner;
use crate::measure::placement::{PlacementError, Policy, format_cpus, parse_cpu_list};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fs;
use std::path::{Path, PathBuf};

pub mod journal;
pub mod preempt;
pub use journal::JournalError;
use preempt::{Preempt, PreemptError};

pub const RT_PRIORITY: i32 = 50;

crate::named_enum! {
    pub enum Isolation {
        None = "none",
        Pinned = "pinned",
        Rt = "rt",
        Isolated = "isolated",
    }
}

impl Isolation {
    pub fn pins(self) -> bool {
        self != Isolation::None
    }
    pub fn policy(self) -> Policy {
        if matches!(self, Isolation::Rt | Isolation::Isolated) { Policy::Fifo { priority: RT_PRIORITY } } else { Policy::Other }
    }
}

/// One setting changed, and its value before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Change {
    /// A control file and the text it held.
    File {
        path: PathBuf,
        before: String,
    },
    /// A directory oscycles created (removed on restore).
    Dir {
        path: PathBuf,
    },
    /// Tasks moved into a cgroup oscycles made: whatever is in `from` when
    /// restoring (tasks forked there since included) goes back to `to`
    /// (both "tasks" or both "cgroup.procs" files).
    Drain {
        from: PathBuf,
        to: PathBuf,
    },
    /// A thread's CPU affinity before its cpuset changed (Linux keeps a
    /// narrowed mask after the task moves back).
    Affinity {
        tid: u32,
        cpus: Vec<usize>,
    },
    MemoryLocked,
    /// A file system oscycles mounted (debugfs, for `--preempt`): unmounted on restore.
    Mount {
        path: PathBuf,
    },
}

/// The changes, in the order made; restored in reverse.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Journal {
    pub pid: u32,
    /// Which process this is (pid namespace, start time): a run in another
    /// namespace, or after the pid was reused, never takes the journal of a
    /// live run for a dead one's. None in journals of older versions.
    #[serde(default)]
    pub owner: Option<Owner>,
    pub changes: Vec<Change>,
    /// Whether this process made the journal's file.
    #[serde(skip)]
    on_disk: bool,
}

/// Where the journal lives while changes are in force.
pub fn journal_path() -> PathBuf {
    journal_path_of(std::process::id())
}

impl Journal {
    /// An empty journal of this process.
    pub fn of_this_process() -> Journal {
        Journal { pid: std::process::id(), owner: Owner::this_process(), changes: vec![], on_disk: false }
    }

    /// Writes the journal to its file in the trusted directory (claimed
    /// exclusively on the first save).
    fn save(&mut self) -> Result<(), JournalError> {
        let p = journal_path_of(self.pid);
        if !self.on_disk {
            journal::open_dir(Path::new(journal::DIR), true)?;
            journal::create(&p)?;
            self.on_disk = true;
        }
        let text = serde_json::to_string(self).expect("a journal always serialises");
        journal::replace(&p, &text)
    }

    /// Records a change already made (restored on drop even when the
    /// journal cannot be written).
    fn record(&mut self, c: Change) -> Result<(), JournalError> {
        self.changes.push(c);
        self.save()
    }

    /// Undoes every change, newest first; returns what could not be undone.
    pub fn restore(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        while let Some(c) = self.changes.pop() {
            match c {
                Change::File { path, before } => {
                    if let Err(e) = cgroup::write(&path, &before) {
                        failed.push(e.to_string());
                    }
                }
                Change::Dir { path } => {
                    if let Err(e) = fs::remove_dir(&path)
                        && e.kind() != std::io::ErrorKind::NotFound
                    {
                        failed.push(format!("removing {}: {e}", path.display()));
                    }
                }
                Change::Drain { from, to } => {
                    // Tasks keep forking while this runs (a build load): drain until empty.
                    for _ in 0..100 {
                        let ids = cgroup::read(&from).unwrap_or_default();
                        if ids.is_empty() {
                            break;
                        }
                        for id in ids.lines() {
                            // A task may have exited meanwhile (ESRCH): nothing to restore.
                            let _ = cgroup::write(&to, id);
                        }
                    }
                }
                Change::Affinity { tid, cpus } => {
                    // The thread may have ended (ESRCH): nothing to restore.
                    let _ = crate::measure::placement::set_affinity_of(tid, &cpus);
                }
                Change::MemoryLocked => {
                    // SAFETY: munlockall has no arguments.
                    unsafe { libc::munlockall() };
                }
                Change::Mount { path } => {
                    if let Err(e) = preempt::unmount(&path) {
                        failed.push(e);
                    }
                }
            }
        }
        if self.on_disk {
            let _ = fs::remove_file(journal_path_of(self.pid));
            self.on_disk = false;
        }
        failed
    }
}

fn journal_path_of(pid: u32) -> PathBuf {
    PathBuf::from("/run/oscycles").join(format!("isolation-{pid}.json"))
}

/// Restores what an oscycles that died without cleaning up left changed,
/// from the journals in the trusted directory that hold only what oscycles
/// does. Returns a sentence per journal restored, or why one (or the
/// directory) was not trusted.
pub fn recover_stale() -> Vec<Result<String, JournalError>> {
    let dir = Path::new(journal::DIR);
    match journal::open_dir(dir, false) {
        Ok(true) => {}
        Ok(false) => return vec![],
        Err(e) => return vec![Err(e)],
    }
    let Ok(entries) = fs::read_dir(dir) else { return vec![] };
    let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    names.sort();
    names.iter().filter_map(|p| recover_one(p)).collect()
}

/// Whether the process that wrote journal `j` is gone, once its pid is not
/// in this namespace's /proc: judged from its owner (a journal of another
/// pid namespace, whose live writer this process cannot see, is never this
/// run's to undo), or, in a journal of an older version without one, from
/// its pid alone.
fn journal_of_a_dead_run(j: &Journal) -> bool {
    match (j.owner, Owner::this_process()) {
        (Some(o), Some(me)) => o.is_gone(me.pidns, Owner::of(o.pid)),
        (Some(_), None) => false,
        (None, _) => !Path::new(&format!("/proc/{}", j.pid)).exists(),
    }
}

/// The journal at `path`, if it is one of a dead process: restored (a
/// sentence), refused (the reason), or None (not a journal, or its process lives).
fn recover_one(path: &Path) -> Option<Result<String, JournalError>> {
    let name = path.file_name()?.to_str()?;
    let pid: u32 = name.strip_prefix("isolation-")?.strip_suffix(".json")?.parse().ok()?;
    if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
        return None;
    }
    let text = match journal::read_trusted(path) {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    let bad = |entry: String| Some(Err(JournalError::Entry { path: path.to_path_buf(), entry }));
    let Ok(mut j) = serde_json::from_str::<Journal>(&text) else { return bad("it does not parse as a journal".into()) };
    if j.pid != pid {
        return bad(format!("pid {} in a journal named for {pid}", j.pid));
    }
    if !journal_of_a_dead_run(&j) {
        return None;
    }
    // The dead process's memory lock and threads died with it.
    j.changes.retain(|c| !matches!(c, Change::MemoryLocked | Change::Affinity { .. }));
    let m = cgroup::mounts();
    let roots: Vec<PathBuf> = m.v2.into_iter().chain(m.v1_cpuset).collect();
    if let Some(c) = j.changes.iter().find(|c| !journal::allowed(c, pid, &roots)) {
        return bad(format!("{c:?}"));
    }
    j.on_disk = true;
    let n = j.changes.len();
    let failed = j.restore();
    Some(Ok(format!(
        "restored {n} isolation settings left by oscycles process {pid} that did not finish{}",
        if failed.is_empty() { String::new() } else { format!(" ({} failed: {})", failed.len(), failed.join("; ")) }
    )))
}

/// An isolation mode in force; dropping it restores everything.
pub struct Applied {
    pub mode: Isolation,
    journal: Journal,
    /// The open /dev/cpu_dma_latency request; the kernel drops it when the
    /// file closes, whatever way oscycles ends.
    _dma_latency: Option<fs::File>,
    /// What was done and what could not be, for the results.
    pub facts: Map<String, Value>,
}

impl Drop for Applied {
    fn drop(&mut self) {
        let failed = self.journal.restore();
        for f in failed {
            eprintln!("oscycles: could not restore an isolation setting: {f}");
        }
    }
}

/// What an isolation mode needs and this machine does not give it.
#[derive(Debug, thiserror::Error)]
pub enum IsolationError {
    #[error("{mode} needs SCHED_FIFO: {source}")]
    Policy { mode: &'static str, source: PlacementError },
    #[error("{mode} needs locked memory: {source}")]
    LockMemory { mode: &'static str, source: PlacementError },
    #[error(transparent)]
    Placement(#[from] PlacementError),
    #[error("isolated needs root (cpusets and IRQ affinity)")]
    NotRoot,
    #[error("isolated needs a second online CPU for everything else")]
    OneCpu,
    #[error("isolated needs the cpuset controller (neither cgroup v2 nor v1 offers it here)")]
    NoCpuset,
    #[error("the kernel refused the isolated partition for CPU {cpu}: {state}")]
    Refused { cpu: usize, state: String },
    #[error(
        "isolated needs CPUs {cpus} in a cpuset of their own, but cpuset {} holds CPUs {theirs} exclusively (its cpuset.cpu_exclusive is 1); free them or leave out isolated (the kernel said: {kernel})",
        holder.display()
    )]
    HeldBy { cpus: String, holder: PathBuf, theirs: String, kernel: Box<IsolationError> },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Preempt(#[from] PreemptError),
    #[error("reading {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("creating {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    /// A control file's read or write (a write's error names the file and the value).
    #[error(transparent)]
    Cgroup(std::io::Error),
}

/// Applies `mode` for measurements on `cpu`, and the kernel's preemption
/// mode `preempt` where one is asked for. Err is a sentence saying what is
/// missing (the results then say so; nothing else is measured instead).
pub fn apply(mode: Isolation, cpu: usize, preempt: Option<Preempt>) -> Result<Applied, IsolationError> {
    let mut a = Applied { mode, journal: Journal::of_this_process(), _dma_latency: None, facts: Map::new() };
    a.facts.insert("isolation".into(), json!(mode.name()));
    if let Some(p) = preempt {
        preempt::switch(&mut a, p)?;
    }
    if matches!(mode, Isolation::Rt | Isolation::Isolated) {
        crate::measure::placement::set_policy(mode.policy()).map_err(|source| IsolationError::Policy { mode: mode.name(), source })?;
        crate::measure::placement::set_policy(Policy::Other)?;
        if !crate::measure::placement::memory_locked() {
            crate::measure::placement::lock_memory().map_err(|source| IsolationError::LockMemory { mode: mode.name(), source })?;
            // In memory only: a dead process's lock dies with it.
            a.journal.changes.push(Change::MemoryLocked);
        }
        let rt = fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap_or_default();
        a.facts.insert(condition::SCHED_RT_RUNTIME_US.into(), json!(rt.trim()));
        let held = hold_dma_latency_zero();
        a.facts.insert(
            condition::CPU_DMA_LATENCY.into(),
            json!(held.as_ref().map_or_else(|e| format!("not held: {e}"), |_| "0 us held".into())),
        );
        a._dma_latency = held.ok();
    }
    if mode == Isolation::Isolated {
        // SAFETY: geteuid has no arguments.
        if unsafe { libc::geteuid() } != 0 {
            return Err(IsolationError::NotRoot);
        }
        // On disk before the first change, for a later run to undo after a SIGKILL.
        a.journal.save()?;
        isolate_cpuset(&mut a, cpu)?;
        move_irqs(&mut a, cpu)?;
    }
    Ok(a)
}

/// Asks the kernel's PM QoS for 0 us wake-up latency from idle states, for
/// as long as the returned file stays open.
fn hold_dma_latency_zero() -> std::io::Result<fs::File> {
    use std::io::Write;
    let mut f = fs::OpenOptions::new().write(true).open("/dev/cpu_dma_latency")?;
    f.write_all(&0i32.to_ne_bytes())?;
    Ok(f)
}

fn others(cpu: usize) -> Vec<usize> {
    let online = fs::read_to_string("/sys/devices/system/cpu/online").ok().and_then(|s| parse_cpu_list(s.trim()).ok()).unwrap_or_default();
    online.into_iter().filter(|&c| c != cpu).collect()
}

/// Changes a control file, journalled.
fn set(a: &mut Applied, path: &Path, value: &str) -> Result<(), IsolationError> {
    let before = cgroup::read(path).map_err(|source| IsolationError::Read { path: path.to_path_buf(), source })?;
    if before == value {
        return Ok(());
    }
    cgroup::write(path, value).map_err(IsolationError::Cgroup)?;
    Ok(a.journal.record(Change::File { path: path.to_path_buf(), before })?)
}

/// Writes a file in a directory oscycles made (not journalled: it goes with the directory).
fn put(path: &Path, value: &str) -> Result<(), IsolationError> {
    cgroup::write(path, value).map_err(IsolationError::Cgroup)
}

fn make_dir(a: &mut Applied, path: &Path) -> Result<(), IsolationError> {
    fs::create_dir(path).map_err(|source| IsolationError::Create { path: path.to_path_buf(), source })?;
    Ok(a.journal.record(Change::Dir { path: path.to_path_buf() })?)
}

fn own_threads() -> Vec<u32> {
    fs::read_dir("/proc/self/task").map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect()).unwrap_or_default()
}

/// Journals the affinity of every thread of oscycles, to restore after it
/// leaves a cpuset (restored after the move back: journal order is reversed).
fn record_affinities(a: &mut Applied) -> Result<(), JournalError> {
    for tid in own_threads() {
        let cpus = crate::measure::placement::affinity_of(tid);
        if !cpus.is_empty() {
            a.journal.record(Change::Affinity { tid, cpus })?;
        }
    }
    Ok(())
}

/// Carves `cpu` out as a cpuset that holds oscycles and nothing else movable.
fn isolate_cpuset(a: &mut Applied, cpu: usize) -> Result<(), IsolationError> {
    let rest = others(cpu);
    if rest.is_empty() {
        return Err(IsolationError::OneCpu);
    }
    let m = cgroup::mounts();
    let v2_has_cpuset = m.v2.as_ref().is_some_and(|r| cgroup::lists(&r.join("cgroup.controllers"), "cpuset"));
    if let (true, Some(root)) = (v2_has_cpuset, m.v2.clone()) {
        return isolate_v2(a, cpu, &root);
    }
    let Some(root) = m.v1_cpuset else {
        return Err(IsolationError::NoCpuset);
    };
    isolate_v1(a, cpu, rest, root)
}

/// cgroup v2: an isolated partition; the root loses the CPU by itself.
fn isolate_v2(a: &mut Applied, cpu: usize, root: &Path) -> Result<(), IsolationError> {
    let pid = std::process::id();
    let sub = root.join("cgroup.subtree_control");
    if !cgroup::lists(&sub, "cpuset") {
        cgroup::write(&sub, "+cpuset").map_err(IsolationError::Cgroup)?;
        a.journal.record(Change::File { path: sub, before: "-cpuset".into() })?;
    }
    let g = root.join(format!("oscycles-isolated-{pid}"));
    make_dir(a, &g)?;
    // Files inside a directory oscycles made go with the directory; the
    // partition is reverted to a member first so that the CPU returns.
    put(&g.join("cpuset.cpus"), &cpu.to_string())?;
    if g.join("cpuset.cpus.exclusive").exists() {
        put(&g.join("cpuset.cpus.exclusive"), &cpu.to_string())?;
    }
    set(a, &g.join("cpuset.cpus.partition"), "isolated")?;
    let state = cgroup::read(&g.join("cpuset.cpus.partition")).unwrap_or_default();
    if state != "isolated" {
        return Err(IsolationError::Refused { cpu, state });
    }
    record_affinities(a)?;
    let back = root.join(cgroup::own_v2_path().unwrap_or("/".into()).trim_start_matches('/')).join("cgroup.procs");
    a.journal.record(Change::Drain { from: g.join("cgroup.procs"), to: back })?;
    cgroup::write(&g.join("cgroup.procs"), &pid.to_string()).map_err(IsolationError::Cgroup)?;
    a.facts.insert(condition::CPUSET.into(), json!(format!("cgroup v2 partition 'isolated' at {}", g.display())));
    Ok(())
}

/// cgroup v1: `cpu` as an exclusive cpuset, `rest` as another.
fn isolate_v1(a: &mut Applied, cpu: usize, rest: Vec<usize>, root: PathBuf) -> Result<(), IsolationError> {
    let pid = std::process::id();
    // cgroup v1: what cset shield does. Load balancing off at the root, an
    // exclusive cpuset for the CPU holding oscycles' threads, one for the
    // other CPUs holding every other task that can move.
    let mems = cgroup::read(&root.join("cpuset.mems")).map_err(IsolationError::Cgroup)?;
    let shield = root.join(format!("oscycles-isolated-{pid}"));
    let system = root.join(format!("oscycles-system-{pid}"));
    for (dir, cpus) in [(&shield, vec![cpu]), (&system, rest)] {
        make_dir(a, dir)?;
        // Another cpuset holding some of the CPUs exclusively makes the kernel refuse (EINVAL): say which.
        let held = |e: IsolationError| match exclusive_holder(&root, &cpus, &[&shield, &system]) {
            Some(h) => held_by(&cpus, h, e),
            None => e,
        };
        put(&dir.join("cpuset.cpus"), &format_cpus(&cpus)).map_err(held)?;
        put(&dir.join("cpuset.mems"), &mems)?;
        put(&dir.join("cpuset.cpu_exclusive"), "1").map_err(held)?;
    }
    put(&shield.join("cpuset.sched_load_balance"), "0")?;
    set(a, &root.join("cpuset.sched_load_balance"), "0")?;
    let ours = own_threads();
    let tasks: Vec<u32> = cgroup::read(&root.join("tasks")).unwrap_or_default().lines().filter_map(|l| l.parse().ok()).collect();
    let others_tasks: Vec<u32> = tasks.into_iter().filter(|t| !ours.contains(t)).collect();
    record_affinities(a)?;
    a.journal.record(Change::Drain { from: system.join("tasks"), to: root.join("tasks") })?;
    a.journal.record(Change::Drain { from: shield.join("tasks"), to: root.join("tasks") })?;
    let (mut moved, mut stayed) = (0usize, 0usize);
    for t in &others_tasks {
        match cgroup::write(&system.join("tasks"), &t.to_string()) {
            Ok(()) => moved += 1,
            Err(_) => stayed += 1, // per-CPU kernel threads cannot move
        }
    }
    for t in &ours {
        cgroup::write(&shield.join("tasks"), &t.to_string()).map_err(IsolationError::Cgroup)?;
    }
    a.facts.insert(
        condition::CPUSET.into(),
        json!(format!(
            "cgroup v1 (the cpuset controller is not on cgroup v2 here): exclusive cpuset {} with load balancing off; {} other tasks moved to CPUs {}, {stayed} could not move (per-CPU kernel threads)",
            shield.display(),
            moved,
            format_cpus(&others(cpu))
        )),
    );
    Ok(())
}

/// A cpuset under `root`, other than `ours`, holding any of `cpus`
/// exclusively (cgroup v1 `cpuset.cpu_exclusive`): its path and CPUs.
fn exclusive_holder(root: &Path, cpus: &[usize], ours: &[&PathBuf]) -> Option<(PathBuf, String)> {
    fs::read_dir(root).ok()?.flatten().map(|e| e.path()).filter(|p| p.is_dir() && !ours.contains(&p)).find_map(|p| {
        if cgroup::read(&p.join("cpuset.cpu_exclusive")).ok()? != "1" {
            return None;
        }
        let theirs = cgroup::read(&p.join("cpuset.cpus")).ok()?;
        parse_cpu_list(&theirs).ok()?.iter().any(|c| cpus.contains(c)).then_some((p, theirs))
    })
}

/// The reason for CPUs another cpuset holds exclusively.
fn held_by(cpus: &[usize], (holder, theirs): (PathBuf, String), kernel: IsolationError) -> IsolationError {
    IsolationError::HeldBy { cpus: format_cpus(cpus), holder, theirs, kernel: Box::new(kernel) }
}

/// Points every IRQ that allows it away from `cpu`, and the default affinity of new ones.
fn move_irqs(a: &mut Applied, cpu: usize) -> Result<(), JournalError> {
    let away = format_cpus(&others(cpu));
    let (mut moved, mut unmovable) = (0usize, Vec::new());
    let mut irqs: Vec<(u32, PathBuf)> = fs::read_dir("/proc/irq")
        .map(|d| d.flatten().filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("smp_affinity_list")))).collect())
        .unwrap_or_default();
    irqs.sort();
    for (n, p) in irqs {
        let Ok(before) = cgroup::read(&p) else { continue };
        if parse_cpu_list(&before).is_ok_and(|l| !l.contains(&cpu)) {
            continue;
        }
        match cgroup::write(&p, &away) {
            Ok(()) => {
                a.journal.record(Change::File { path: p, before })?;
                moved += 1;
            }
            Err(_) => unmovable.push(n), // managed or per-CPU interrupts refuse (EIO)
        }
    }
    let def = Path::new("/proc/irq/default_smp_affinity");
    if let Ok(before) = cgroup::read(def) {
        let mask = others(cpu).iter().fold(0u128, |m, &c| m | (1u128 << c.min(127)));
        if cgroup::write(def, &format!("{mask:x}")).is_ok() {
            a.journal.record(Change::File { path: def.to_path_buf(), before })?;
        }
    }
    a.facts.insert(condition::IRQS_MOVED_AWAY.into(), json!(moved));
    a.facts.insert(condition::IRQS_UNMOVABLE.into(), json!(unmovable));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_is_a_dead_runs_only_when_its_writer_is_gone_from_this_pid_namespace() {
        let me = Owner::this_process().unwrap();
        let gone = u32::MAX >> 1; // above pid_max: no process has it
        let with = |owner: Option<Owner>, pid: u32| Journal { pid, owner, ..Journal::of_this_process() };
        assert!(!journal_of_a_dead_run(&with(Some(me), me.pid)), "a live writer");
        assert!(journal_of_a_dead_run(&with(Some(Owner { pid: gone, ..me }), gone)), "a writer gone from this namespace");
        let elsewhere = Owner { pidns: me.pidns + 1, pid: gone, ..me };
        assert!(!journal_of_a_dead_run(&with(Some(elsewhere), gone)), "a writer in another namespace, invisible here");
        assert!(journal_of_a_dead_run(&with(None, gone)), "an older journal: by its pid");
        assert!(Journal::of_this_process().owner == Some(me));
    }

    #[test]
    fn a_journal_restores_files_and_removes_directories_newest_first() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().to_path_buf();
        let file = base.join("setting");
        fs::write(&file, "0-1").unwrap();
        let mut j = Journal::of_this_process();
        let made = base.join("made");
        fs::create_dir(&made).unwrap();
        j.record(Change::Dir { path: made.clone() }).unwrap();
        cgroup::write(&file, "1").unwrap();
        j.record(Change::File { path: file.clone(), before: "0-1".into() }).unwrap();
        cgroup::write(&file, "0").unwrap(); // changed twice: the oldest value wins
        j.record(Change::File { path: file.clone(), before: "1".into() }).unwrap();
        let saved: Journal = serde_json::from_str(&fs::read_to_string(journal_path()).unwrap()).unwrap();
        assert_eq!(saved.changes, j.changes, "the journal on disk holds every change");
        assert!(j.restore().is_empty());
        assert_eq!(fs::read_to_string(&file).unwrap(), "0-1");
        assert!(!made.exists());
        assert!(!journal_path().exists(), "a restored journal is removed");
    }

    #[test]
    #[ignore = "needs root"]
    fn a_journal_unmounts_what_it_mounted() {
        // SAFETY: geteuid has no arguments.
        assert_eq!(unsafe { libc::geteuid() }, 0, "this test needs root (it mounts a tmpfs)");
        let tmp = tempfile::tempdir().unwrap();
        let c = |s: &str| std::ffi::CString::new(s).unwrap();
        let (src, target) = (c("tmpfs"), c(tmp.path().to_str().unwrap()));
        // SAFETY: valid NUL-terminated strings, no data.
        assert_eq!(unsafe { libc::mount(src.as_ptr(), target.as_ptr(), src.as_ptr(), 0, std::ptr::null()) }, 0);
        let mounted =
            || fs::read_to_string("/proc/self/mountinfo").unwrap().lines().any(|l| l.split_whitespace().nth(4) == tmp.path().to_str());
        assert!(mounted());
        let mut j = Journal::of_this_process();
        // In memory only (the test beside it owns this process's journal file).
        j.changes.push(Change::Mount { path: tmp.path().to_path_buf() });
        assert!(j.restore().is_empty());
        assert!(!mounted(), "unmounted on restore");
    }

    #[test]
    fn modes_parse_and_map_to_policies() {
        assert_eq!(Isolation::parse("isolated"), Some(Isolation::Isolated));
        assert_eq!(Isolation::parse("detached"), None);
        assert!(!Isolation::None.pins());
        assert_eq!(Isolation::Pinned.policy(), Policy::Other);
        assert_eq!(Isolation::Rt.policy(), Policy::Fifo { priority: RT_PRIORITY });
    }
}
