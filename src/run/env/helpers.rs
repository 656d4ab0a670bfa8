//! Where the host processes of an environment that intercepts its
//! program's system calls run (uml: the UML kernel's process, which traces
//! one host process per guest address space; gvisor: runsc's Sentry, whose
//! stub processes run the program): `--helper-placement same` puts them all
//! on the measured CPU (the first of --cpus), `cross` the intercepting
//! process on the partner CPU (the second) and the program's processes on
//! the measured one. Each system call in these environments is a round
//! trip between the two, so the placement is part of what is measured:
//! same-CPU it is two context switches, cross-CPU two cross-CPU wake-ups.
//!
//! A [`Placer`] applies it from the host while the environment runs: it
//! follows the processes descending from the one oscycles started (by
//! parent pid, from /proc, never by name), sets each thread's affinity
//! (during the boot, which is not measured, every side on the measured CPU
//! as `same` does; the placement asked for from the guest's hello on:
//! [`Placer::arm`]),
//! re-applies it every [`PERIOD`] to those created later (a guest's new
//! process starts where its parent was), reads back /proc's
//! `Cpus_allowed_list` now and then, and says what it did as facts of the
//! environment. A run that asks for both placements measures each as its
//! own column ([`At`]): `uml helper=same`, `uml helper=cross`.

use super::environment::{Env, Environment, Fit, Outcome};
use super::error::EnvError;
use super::guest::GuestSpec;
use super::options::EnvOptions;
use crate::families::bench::Venue;
use crate::measure::{host, placement};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The option's id among the environments' own (declared once for both).
pub const OPTIONS: &str = "helper-placement";
/// The environment's fact that says where its helpers ran.
pub const FACT: &str = crate::data::schema_core::environment::HELPER_PLACEMENT;
/// How often the placer looks for new processes and threads.
pub const PERIOD: Duration = Duration::from_millis(20);
/// Every this many scans, the affinities are read back from /proc.
const READ_BACK_EVERY: u32 = 10;
/// The most processes one environment may have followed (a guest that forks without end is not followed further).
const MAX_MEMBERS: usize = 4096;

/// Where the intercepting process runs relative to the program's.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HelperPlacement {
    /// On the measured CPU, with the program's processes.
    Same,
    /// On the partner CPU (the second of --cpus), the program's on the measured one.
    Cross,
}

impl HelperPlacement {
    /// The placement a user gets without the option.
    pub const DEFAULT: HelperPlacement = HelperPlacement::Same;

    pub fn name(self) -> &'static str {
        match self {
            HelperPlacement::Same => "same",
            HelperPlacement::Cross => "cross",
        }
    }
}

/// The option uml and gvisor share.
#[derive(clap::Args, Debug, Clone)]
pub struct HelperArgs {
    /// Where --env uml and --env gvisor run the process that intercepts
    /// the program's system calls (UML's kernel process, gVisor's Sentry):
    /// same = on the measured CPU (the first of --cpus) with the program's
    /// processes; cross = on the partner CPU (the second of --cpus), the
    /// program's on the measured one. Both (same,cross): each a column of
    /// its own ("uml helper=same", "uml helper=cross"). Default: same.
    /// Unpinned, as a user starts linux.uml or runsc, the host's scheduler
    /// usually puts them on different CPUs when one is idle (cross), where
    /// every system call costs two cross-CPU wake-ups.
    #[arg(long, value_enum, value_name = "same|cross", value_delimiter = ',', default_value = "same")]
    pub helper_placement: Vec<HelperPlacement>,
}

/// The placements the run asks for, each once, in order.
pub fn asked(o: &EnvOptions) -> Result<Vec<HelperPlacement>, clap::Error> {
    let mut list = o.own.get::<HelperArgs>()?.helper_placement;
    list.sort();
    list.dedup();
    Ok(list)
}

/// Why a placement cannot be applied with these CPUs.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PlacementError {
    #[error("--helper-placement cross needs a partner CPU, the second of --cpus; the run has only CPU {0} (name two, e.g. --cpus 0,1)")]
    NoPartner(usize),
    #[error("the run has no CPU to measure on")]
    NoCpu,
}

impl super::error::OwnError for PlacementError {}

/// The CPUs of the intercepting process and of the program's, for `at`
/// with the run's `cpus` (the measured one first).
pub fn cpus_for(at: HelperPlacement, cpus: &[usize]) -> Result<(usize, usize), PlacementError> {
    let &measured = cpus.first().ok_or(PlacementError::NoCpu)?;
    match at {
        HelperPlacement::Same => Ok((measured, measured)),
        HelperPlacement::Cross => cpus.get(1).map(|&partner| (partner, measured)).ok_or(PlacementError::NoPartner(measured)),
    }
}

/// The run's CPUs, the measured one first: those of `o`, else (options
/// made without them) the first two this process may use, as a run's are.
fn run_cpus(o: &EnvOptions) -> Vec<usize> {
    if o.cpus.is_empty() { placement::allowed_cpus().into_iter().take(2).collect() } else { o.cpus.clone() }
}

/// The intercepting side's CPU and the program's for `at` in a run with options `o`.
pub fn cpus_of(at: HelperPlacement, o: &EnvOptions) -> Result<(usize, usize), PlacementError> {
    cpus_for(at, &run_cpus(o))
}

/// Refuses placements the run's CPUs cannot give (before anything runs).
pub fn check(o: &EnvOptions) -> Result<(), EnvError> {
    for at in asked(o)? {
        cpus_of(at, o)?;
    }
    Ok(())
}

/// Which of an environment's processes run the program.
#[derive(Debug, Clone, Copy)]
pub enum Rule {
    /// Those another process traces (UML: its kernel traces each address space's process).
    Traced,
    /// Those at least this many generations below the process oscycles
    /// started (gVisor: runsc, then its sandbox (the Sentry) and gofer,
    /// then the stubs the Sentry runs the program in).
    Below(u32),
}

/// What the placer is told of an environment.
#[derive(Debug, Clone, Copy)]
pub struct Roles {
    pub rule: Rule,
    /// What the intercepting side is, and the program's, for the facts.
    pub intercepting: &'static str,
    pub program: &'static str,
}

/// The two sides of an environment's processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Side {
    Intercepting,
    Program,
}

/// What the placer did, for the facts.
#[derive(Debug, Default)]
struct Record {
    processes: HashMap<i32, Side>,
    threads: [BTreeSet<i32>; 2],
    moved: u64,
    failed: u64,
    last_failure: Option<String>,
    read_back: [BTreeSet<String>; 2],
    scans: u64,
    /// Whether the placement asked for applied (the guest said hello).
    armed: bool,
}

/// The processes descending from one, as found so far: each pid seen in
/// /proc is looked at once (its parent), and kept as long as it exists.
struct Tree {
    depth: HashMap<i32, u32>,
    strangers: HashSet<i32>,
}

/// Whether another process traces `pid` (TracerPid in /proc/PID/status).
fn traced(pid: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status.lines().find_map(|l| l.strip_prefix("TracerPid:")).is_some_and(|v| v.trim() != "0")
}

impl Tree {
    fn new(root: i32) -> Tree {
        Tree { depth: HashMap::from([(root, 0)]), strangers: HashSet::new() }
    }

    /// Looks at /proc again: the processes gone are forgotten (the root
    /// too: its pid could be another's once it is reaped), the new ones
    /// whose parent is one of ours are ours (a child and its parent both
    /// new are taken in any order).
    fn scan(&mut self) {
        let live: HashSet<i32> = host::pids().into_iter().collect();
        if live.is_empty() {
            return;
        }
        self.depth.retain(|p, _| live.contains(p));
        self.strangers.retain(|p| live.contains(p));
        let mut new: Vec<(i32, i32)> = live
            .iter()
            .filter(|p| !self.depth.contains_key(p) && !self.strangers.contains(p))
            .filter_map(|&p| host::parent_of(p).map(|pp| (p, pp)))
            .collect();
        loop {
            let before = new.len();
            new.retain(|&(p, pp)| match self.depth.get(&pp).copied() {
                Some(d) if self.depth.len() < MAX_MEMBERS => {
                    self.depth.insert(p, d + 1);
                    false
                }
                _ => true,
            });
            if new.len() == before {
                break;
            }
        }
        self.strangers.extend(new.into_iter().map(|(p, _)| p));
    }
}

/// Applies a placement to an environment's processes while it runs.
pub struct Placer {
    stop: Arc<AtomicBool>,
    armed: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Record>>,
    at: HelperPlacement,
    cpus: (usize, usize),
    roles: Roles,
}

impl Placer {
    /// Starts placing the processes descending from `root` (the process
    /// oscycles started, itself included): until [`arm`](Placer::arm),
    /// both sides on the measured CPU `cpus.1` (the boot, not measured:
    /// cross-CPU on a busy machine, each of its system calls waited for the
    /// host's scheduler tick, and a UML boot beside `stress-ng --cpu 2` took
    /// 170 s instead of 4), then at `at`: the intercepting side on `cpus.0`,
    /// the program's on `cpus.1`. The placer's own thread runs off the
    /// measured CPU where there is another.
    pub fn start(root: u32, at: HelperPlacement, cpus: (usize, usize), roles: Roles) -> Placer {
        let stop = Arc::new(AtomicBool::new(false));
        let armed = Arc::new(AtomicBool::new(false));
        let (flag, go) = (stop.clone(), armed.clone());
        let thread = std::thread::spawn(move || {
            let others: Vec<usize> = placement::allowed_cpus().into_iter().filter(|&c| c != cpus.1).collect();
            if !others.is_empty() {
                let _ = placement::set_affinity(&others);
            }
            let (mut tree, mut rec) = (Tree::new(root as i32), Record::default());
            loop {
                let last = flag.load(Ordering::Relaxed);
                let go_now = go.load(Ordering::Acquire);
                // What /proc said during the boot is not what the cases ran at.
                let first = go_now && !rec.armed;
                if first {
                    rec.armed = true;
                    rec.read_back = Default::default();
                }
                let now = if go_now { cpus } else { (cpus.1, cpus.1) };
                tree.scan();
                let read_back = last || first || rec.scans % u64::from(READ_BACK_EVERY) == 1;
                place(&tree, roles.rule, now, &mut rec, read_back);
                if last {
                    return rec;
                }
                std::thread::park_timeout(PERIOD);
            }
        });
        Placer { stop, armed, thread: Some(thread), at, cpus, roles }
    }

    /// The guest said hello (its boot is over): the placement asked for
    /// applies from now on, the placer's next pass at once.
    pub fn arm(&self) {
        if !self.armed.swap(true, Ordering::AcqRel)
            && let Some(t) = &self.thread
        {
            t.thread().unpark();
        }
    }

    /// Stops it (a last pass first) and says what it did.
    pub fn finish(mut self) -> Value {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
        let rec = self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default();
        facts(self.at, self.cpus, self.roles, &rec)
    }
}

impl Drop for Placer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One pass: each thread of each process of `tree` on its side's CPU.
fn place(tree: &Tree, rule: Rule, cpus: (usize, usize), rec: &mut Record, read_back: bool) {
    rec.scans += 1;
    for (&pid, &depth) in &tree.depth {
        let side = match rule {
            Rule::Traced if traced(pid) => Side::Program,
            Rule::Below(n) if depth >= n => Side::Program,
            _ => Side::Intercepting,
        };
        rec.processes.insert(pid, side);
        let cpu = if side == Side::Program { cpus.1 } else { cpus.0 };
        for tid in host::threads_of(pid) {
            // A thread is read back when first seen and when moved, not only
            // every READ_BACK_EVERY passes: on a loaded machine a guest's
            // program lived between two of those and read back nothing
            // (issue 58, item 12).
            let mut read_back = read_back | rec.threads[side as usize].insert(tid);
            if placement::affinity_of(tid as u32) != [cpu] {
                match placement::set_affinity_of(tid as u32, &[cpu]) {
                    Ok(()) => {
                        rec.moved += 1;
                        read_back = true;
                    }
                    // A thread that ended in between.
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                    Err(e) => {
                        rec.failed += 1;
                        rec.last_failure = Some(format!("thread {tid}: {e}"));
                    }
                }
            }
            if read_back && let Some(l) = cpus_allowed(pid, tid) {
                rec.read_back[side as usize].insert(l);
            }
        }
    }
}

/// A thread's Cpus_allowed_list, as /proc says it.
fn cpus_allowed(pid: i32, tid: i32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).map(|v| v.trim().to_string())
}

/// The facts of a placement: what was asked, where each side was put,
/// how many threads of each, and what /proc said of their CPUs.
fn facts(at: HelperPlacement, cpus: (usize, usize), roles: Roles, rec: &Record) -> Value {
    let count = |s: Side| rec.processes.values().filter(|&&x| x == s).count();
    let seen = |s: Side| rec.read_back[s as usize].iter().cloned().collect::<Vec<_>>();
    json!({
        "placement": at.name(),
        "default": HelperPlacement::DEFAULT.name(),
        "intercepting": roles.intercepting,
        "intercepting_cpu": cpus.0,
        "program": roles.program,
        "program_cpu": cpus.1,
        "how": format!("sched_setaffinity from the host on every thread of the processes descending from the one oscycles started \
                        (found by parent pid in /proc), re-applied every {} ms to those created later; during the boot (not measured) every side on the \
                        measured CPU, the placement asked for from the guest's hello on", PERIOD.as_millis()),
        "applied_from_hello": rec.armed,
        "processes": {"intercepting": count(Side::Intercepting), "program": count(Side::Program)},
        "threads": {"intercepting": rec.threads[0].len(), "program": rec.threads[1].len()},
        "moved": rec.moved,
        "failed": rec.failed,
        "last_failure": rec.last_failure,
        "cpus_allowed_read_back": {"intercepting": seen(Side::Intercepting), "program": seen(Side::Program)},
        "scans": rec.scans,
    })
}

/// How an environment that places its helpers starts at one placement.
pub type LaunchAt = fn(&GuestSpec, &EnvOptions, HelperPlacement) -> Result<Outcome, EnvError>;

/// The placement of an environment's launch when the run asks for one
/// (a run that asks for several launches each column at its own).
pub fn single(o: &EnvOptions) -> Result<HelperPlacement, EnvError> {
    Ok(asked(o)?.first().copied().unwrap_or(HelperPlacement::DEFAULT))
}

/// One environment at one helper placement: a column of a run that
/// measures several.
pub struct At {
    pub base: Env,
    pub at: HelperPlacement,
    pub name: &'static str,
    pub launch: LaunchAt,
}

impl Environment for At {
    fn name(&self) -> &'static str {
        self.name
    }

    fn about(&self) -> &'static str {
        self.base.about()
    }

    fn fit(&self, runs: Venue, envs: &[Env]) -> Fit {
        self.base.fit(runs, envs)
    }

    fn check(&self, o: &EnvOptions) -> Result<(), EnvError> {
        self.base.check(o)
    }

    fn launch(&self, spec: &GuestSpec, _plan: &[crate::run::plan::PlannedCase], o: &EnvOptions) -> Result<Outcome, EnvError> {
        (self.launch)(spec, o, self.at)
    }

    fn serve(&self, spec: &GuestSpec) -> u8 {
        self.base.serve(spec)
    }
}

/// The columns of `variants` (one per placement, same then cross) the run
/// asks for, when it asks for more than one.
pub fn columns(o: &EnvOptions, variants: &'static [At; 2]) -> Result<Option<Vec<Env>>, EnvError> {
    let asked = asked(o)?;
    if asked.len() < 2 {
        return Ok(None);
    }
    Ok(Some(variants.iter().filter(|v| asked.contains(&v.at)).map(|v| v as Env).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_takes_the_partner_cpu_and_needs_one() {
        assert_eq!(cpus_for(HelperPlacement::Same, &[3, 1]), Ok((3, 3)));
        assert_eq!(cpus_for(HelperPlacement::Cross, &[3, 1]), Ok((1, 3)));
        assert_eq!(cpus_for(HelperPlacement::Cross, &[2]), Err(PlacementError::NoPartner(2)));
        assert!(PlacementError::NoPartner(2).to_string().contains("--cpus 0,1"));
    }

    #[test]
    fn the_tree_follows_children_of_the_root_and_nothing_else() {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "sleep 5 & sleep 5 & wait"]);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().unwrap();
        let me = std::process::id() as i32;
        let mut tree = Tree::new(child.id() as i32);
        let t = std::time::Instant::now();
        while tree.depth.len() < 3 && t.elapsed() < Duration::from_secs(5) {
            tree.scan();
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: kill takes no pointers; the group is the one just started.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
        assert_eq!(tree.depth.len(), 3, "{:?}", tree.depth);
        assert_eq!(tree.depth.values().filter(|&&d| d == 1).count(), 2);
        assert!(!tree.depth.contains_key(&me) && tree.strangers.contains(&me));
    }

    /// A shell (the "intercepting" side) that starts a child after a while:
    /// the placer puts it and its later child where the rule says, as /proc reads back.
    #[test]
    fn the_placer_puts_each_side_on_its_cpu_and_follows_later_children() {
        let allowed = placement::allowed_cpus();
        assert!(allowed.len() >= 2, "this test needs two CPUs; this process may use {allowed:?}");
        let cpus = (allowed[1], allowed[0]);
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "sleep 0.3; sleep 2 & wait"]);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().unwrap();
        let roles = Roles { rule: Rule::Below(1), intercepting: "the shell", program: "its children" };
        let placer = Placer::start(child.id(), HelperPlacement::Cross, cpus, roles);
        placer.arm();
        std::thread::sleep(Duration::from_millis(1200));
        let f = placer.finish();
        // SAFETY: kill takes no pointers; the group is the one just started.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
        assert_eq!(f["placement"], "cross");
        assert_eq!(f["failed"], 0, "{f}");
        assert_eq!(f["processes"]["intercepting"], 1, "{f}");
        assert!(f["processes"]["program"].as_u64().unwrap() >= 1, "{f}");
        assert_eq!(f["cpus_allowed_read_back"]["intercepting"], json!([cpus.0.to_string()]), "{f}");
        assert_eq!(f["cpus_allowed_read_back"]["program"], json!([cpus.1.to_string()]), "{f}");
        assert!(f["moved"].as_u64().unwrap() >= 2, "{f}");
        assert_eq!(f["applied_from_hello"], true, "{f}");
    }

    /// Until the guest's hello (its boot), both sides run on the measured
    /// CPU whatever the placement asked for.
    #[test]
    fn before_the_hello_both_sides_are_on_the_measured_cpu() {
        let allowed = placement::allowed_cpus();
        assert!(allowed.len() >= 2, "this test needs two CPUs; this process may use {allowed:?}");
        let cpus = (allowed[1], allowed[0]);
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "sleep 2 & wait"]);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().unwrap();
        let roles = Roles { rule: Rule::Below(1), intercepting: "the shell", program: "its children" };
        let placer = Placer::start(child.id(), HelperPlacement::Cross, cpus, roles);
        std::thread::sleep(Duration::from_millis(600));
        let f = placer.finish();
        // SAFETY: kill takes no pointers; the group is the one just started.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
        assert_eq!(f["applied_from_hello"], false, "{f}");
        assert_eq!(f["cpus_allowed_read_back"]["intercepting"], json!([cpus.1.to_string()]), "{f}");
        assert_eq!(f["cpus_allowed_read_back"]["program"], json!([cpus.1.to_string()]), "{f}");
    }
}
