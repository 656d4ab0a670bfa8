//! The kernel's event counters (perf_event_open) around a case's operations:
//! context switches, CPU migrations, minor and major page faults and task
//! clock (software events, which every Linux with perf events has, guests
//! included), and where a PMU exists unhalted core cycles, reference cycles
//! and instructions (the L4Re performance overview's three counters with the
//! TSC).
//!
//! The harness counts in batches of its own after the timed ones (see
//! `harness::measure_prepared`), so the timed batches run with no counter
//! open. A counting batch counts every task the case runs: the measuring
//! thread and whatever threads and processes the case started (its partner,
//! its children), each with one counter group that children inherit. Tasks
//! that existed before the case (the runner's other threads, load workers)
//! are left out. Counters that cannot be opened never fail a case: the counts
//! are n/a, with the reason.
//!
//! Every counter is read by the kernel that runs the process: inside a guest
//! the guest's kernel counted, in a container the host's.

use crate::analysis::stats::Summary;
use crate::base::named::Named;
use crate::measure::host;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::os::fd::OwnedFd;
use std::sync::OnceLock;
use thiserror::Error;

mod perf;

use perf::{IOC_DISABLE, IOC_ENABLE, ioctl_group, open, read, scaled};

crate::named_enum! {
    /// One counted event, by the name run documents record.
    #[derive(Hash)]
    pub enum Event {
        ContextSwitches = "context_switches",
        CpuMigrations = "cpu_migrations",
        MinorFaults = "minor_faults",
        MajorFaults = "major_faults",
        /// Nanoseconds the counted tasks were on a CPU.
        TaskClock = "task_clock_ns",
        /// Unhalted core cycles.
        Cycles = "core_cycles",
        /// Reference cycles (at the TSC's rate, unhalted).
        RefCycles = "ref_cycles",
        Instructions = "instructions",
    }
}

impl Event {
    pub const SOFTWARE: [Event; 5] =
        [Event::ContextSwitches, Event::CpuMigrations, Event::MinorFaults, Event::MajorFaults, Event::TaskClock];
    pub const HARDWARE: [Event; 3] = [Event::Cycles, Event::RefCycles, Event::Instructions];

    /// A table column's heading (per operation).
    pub fn heading(self) -> &'static str {
        match self {
            Event::ContextSwitches => "switches",
            Event::CpuMigrations => "migr.",
            Event::MinorFaults => "minflt",
            Event::MajorFaults => "majflt",
            Event::TaskClock => "task ns",
            Event::Cycles => "core cyc.",
            Event::RefCycles => "ref cyc.",
            Event::Instructions => "instr.",
        }
    }

    pub fn by_name(name: &str) -> Option<Event> {
        Event::parse(name)
    }

    pub fn is_hardware(self) -> bool {
        Event::HARDWARE.contains(&self)
    }
}

/// Why counters could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CounterError {
    #[error(
        "perf_event_open is not available (ENOSYS): the kernel has no perf events, or a container's or sandbox's filter refuses the system call"
    )]
    NoSyscall,
    #[error(
        "perf_event_open refused ({errno}): perf_event_paranoid is {paranoid} and this process lacks CAP_PERFMON / CAP_SYS_ADMIN, or a seccomp filter refuses it"
    )]
    Denied { errno: &'static str, paranoid: String },
    #[error("no PMU: this kernel offers no hardware events ({errno}; a VM without a virtual PMU, or an emulator)")]
    NoPmu { errno: &'static str },
    #[error("perf_event_open of {event}: {error}")]
    Other { event: &'static str, error: String },
}

impl CounterError {
    fn of(event: Event, e: &std::io::Error) -> CounterError {
        let paranoid =
            || std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").map_or("unknown".into(), |s| s.trim().to_string());
        match e.raw_os_error() {
            Some(libc::ENOSYS) => CounterError::NoSyscall,
            Some(libc::EACCES) => CounterError::Denied { errno: "EACCES", paranoid: paranoid() },
            Some(libc::EPERM) => CounterError::Denied { errno: "EPERM", paranoid: paranoid() },
            Some(libc::ENOENT) if event.is_hardware() => CounterError::NoPmu { errno: "ENOENT" },
            Some(libc::EOPNOTSUPP) if event.is_hardware() => CounterError::NoPmu { errno: "EOPNOTSUPP" },
            Some(libc::ENODEV) if event.is_hardware() => CounterError::NoPmu { errno: "ENODEV" },
            _ => CounterError::Other { event: event.name(), error: e.to_string() },
        }
    }
}

/// Whether `events` can be counted here (opened on the calling thread and
/// closed again); the first error otherwise.
pub fn probe(events: &[Event]) -> Result<(), CounterError> {
    events.iter().try_for_each(|&e| open(e, 0, None).map(drop).map_err(|err| CounterError::of(e, &err)))
}

/// What this machine's kernel lets a process count, probed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Availability {
    pub software: Result<(), CounterError>,
    pub hardware: Result<(), CounterError>,
}

pub fn availability() -> &'static Availability {
    static A: OnceLock<Availability> = OnceLock::new();
    A.get_or_init(|| Availability { software: probe(&Event::SOFTWARE), hardware: probe(&Event::HARDWARE) })
}

impl Availability {
    /// One line for `list` and `doctor`.
    pub fn describe(&self) -> String {
        let part = |r: &Result<(), CounterError>| match r {
            Ok(()) => "yes".to_string(),
            Err(e) => format!("n/a: {e}"),
        };
        format!(
            "kernel event counters (perf_event_open, kernel {}): software events (switches, migrations, faults, task clock) {}; \
             hardware events (core cycles, reference cycles, instructions) {}",
            kernel(),
            part(&self.software),
            part(&self.hardware)
        )
    }
}

/// The kernel that counts: its release, as uname gives it to this process.
pub fn kernel() -> String {
    host::kernel_release()
}

/// Every thread of this process and of its descendants.
fn family_tasks() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut parents: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for pid in host::pids() {
        if let Some(ppid) = host::parent_of(pid) {
            parents.entry(ppid).or_default().push(pid);
        }
    }
    let (mut procs, mut next) = (vec![], vec![me]);
    while let Some(p) = next.pop() {
        procs.push(p);
        next.extend(parents.get(&p).into_iter().flatten());
    }
    procs.into_iter().flat_map(host::threads_of).collect()
}

fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// One task's counter groups: software, and hardware when counted.
struct TaskGroups {
    leaders: Vec<OwnedFd>,
    /// (event, descriptor) of every counter, leaders included.
    counters: Vec<(Event, usize)>,
}

/// Counters on every task of a case, opened disabled.
pub struct CaseCounters {
    tasks: Vec<TaskGroups>,
    fds: Vec<OwnedFd>,
    pub events: Vec<Event>,
    /// Events asked for that could not be opened, with the reason.
    pub unavailable: Vec<(Event, String)>,
}

impl CaseCounters {
    /// Opens `events` on the calling thread and on every task in `tasks`
    /// (tasks that ended meanwhile are skipped). An error when the calling
    /// thread's software counters cannot be opened; hardware ones that
    /// cannot are listed as unavailable.
    fn open(software: &[Event], hardware: &[Event], tasks: &[i32]) -> Result<CaseCounters, CounterError> {
        let mut c = CaseCounters { tasks: vec![], fds: vec![], events: software.to_vec(), unavailable: vec![] };
        c.open_task(0, software).map_err(|(e, err)| CounterError::of(e, &err))?;
        if !hardware.is_empty() {
            match c.open_task(0, hardware) {
                Ok(()) => c.events.extend_from_slice(hardware),
                Err((e, err)) => {
                    let why = CounterError::of(e, &err).to_string();
                    c.unavailable.extend(hardware.iter().map(|&h| (h, why.clone())));
                }
            }
        }
        let events = c.events.clone();
        let (sw, hw): (Vec<Event>, Vec<Event>) = events.iter().partition(|e| !e.is_hardware());
        for &t in tasks {
            // A task that ended since it was listed has nothing to count.
            let _ = c.open_task(t, &sw).and_then(|_| if hw.is_empty() { Ok(()) } else { c.open_task(t, &hw) });
        }
        Ok(c)
    }

    /// One group of `events` on task `tid`.
    fn open_task(&mut self, tid: i32, events: &[Event]) -> Result<(), (Event, std::io::Error)> {
        let mut fds: Vec<OwnedFd> = Vec::with_capacity(events.len());
        for &e in events {
            fds.push(open(e, tid, fds.first()).map_err(|err| (e, err))?);
        }
        let base = self.fds.len();
        let mut group = TaskGroups { leaders: vec![], counters: vec![] };
        for (i, (e, fd)) in events.iter().zip(fds).enumerate() {
            if i == 0 {
                group.leaders.push(fd.try_clone().map_err(|err| (*e, err))?);
            }
            group.counters.push((*e, base + i));
            self.fds.push(fd);
        }
        self.tasks.push(group);
        Ok(())
    }

    pub fn enable(&self) {
        self.tasks.iter().flat_map(|t| &t.leaders).for_each(|l| ioctl_group(l, IOC_ENABLE));
    }

    pub fn disable(&self) {
        self.tasks.iter().flat_map(|t| &t.leaders).for_each(|l| ioctl_group(l, IOC_DISABLE));
    }

    /// The totals of each of `events` over every task (None where a
    /// counter could not be read), hardware counts scaled up where the PMU
    /// multiplexed them (None where it never ran them).
    pub fn read(&self) -> Vec<Option<f64>> {
        let raw: Vec<Option<[u64; 3]>> = self.fds.iter().map(|f| read(f).ok()).collect();
        self.events
            .iter()
            .map(|&e| {
                let mut total = 0.0;
                for (_, i) in self.tasks.iter().flat_map(|t| &t.counters).filter(|(ev, _)| *ev == e) {
                    let [count, enabled, running] = raw[*i]?;
                    total += if e.is_hardware() { scaled(count, enabled, running)? } else { count as f64 };
                }
                Some(total)
            })
            .collect()
    }
}

/// Counts per operation of one counting batch, per event.
pub type BatchCounts = Vec<(Event, Option<f64>)>;

/// What the counting batches of one harness measurement gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Counted {
    /// Per batch, per event, counts per operation.
    Batches {
        batches: Vec<BatchCounts>,
        unavailable: Vec<(Event, String)>,
    },
    NotCounted(String),
    /// Armed with no batches (the timed pass): the measurement times
    /// batches on this thread and is to be counted in the counting pass.
    Deferred,
}

/// Counting batches after a case's timed ones.
pub const COUNTING_BATCHES: usize = 3;

struct Session {
    batches: usize,
    hardware: bool,
    /// Tasks that existed before the case, left out of its counts.
    before: HashSet<i32>,
    counted: Vec<Counted>,
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// While alive, the harness on this thread follows its timed batches with
/// `batches` counting batches, or with none but a note
/// ([`Counted::Deferred`]) when `batches` is 0. Made by the runner around a
/// case: with 0 in the round's timed pass, then with [`COUNTING_BATCHES`] in
/// its counting pass, which runs the noted cases again after all the timed
/// ones. A per-task perf event leaves the kernel's scheduler hooks for perf
/// switched on for a second (HZ) after it closes (the `perf_sched_events`
/// static key, turned off by delayed work), making every context switch of
/// the machine dearer meanwhile: no timed batch may run in that second.
pub struct Armed(());

impl Armed {
    /// `hardware`: whether to try the hardware events too.
    pub fn arm(batches: usize, hardware: bool) -> Armed {
        let mut before: HashSet<i32> = family_tasks().into_iter().collect();
        before.remove(&gettid());
        SESSION.with(|s| *s.borrow_mut() = Some(Session { batches, hardware, before, counted: vec![] }));
        Armed(())
    }

    /// What the case's harness measurements counted, in order.
    pub fn finish(self) -> Vec<Counted> {
        SESSION.with(|s| s.borrow_mut().take()).map(|s| s.counted).unwrap_or_default()
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        SESSION.with(|s| s.borrow_mut().take());
    }
}

/// How many counting batches the harness owes this thread's case, if armed.
pub fn armed_batches() -> Option<usize> {
    SESSION.with(|s| s.borrow().as_ref().map(|s| s.batches))
}

/// Opens the counters of the case armed on this thread: the calling
/// thread and every task the case started.
pub fn open_for_case() -> Result<CaseCounters, CounterError> {
    let (before, hardware) = SESSION.with(|s| s.borrow().as_ref().map(|s| (s.before.clone(), s.hardware))).unwrap_or_default();
    let me = gettid();
    let tasks: Vec<i32> = family_tasks().into_iter().filter(|t| *t != me && !before.contains(t)).collect();
    let hw: &[Event] = if hardware && availability().hardware.is_ok() { &Event::HARDWARE } else { &[] };
    let mut c = CaseCounters::open(&Event::SOFTWARE, hw, &tasks)?;
    if hw.is_empty() {
        let why = match &availability().hardware {
            Err(e) => e.to_string(),
            Ok(()) => "not asked for".to_string(),
        };
        c.unavailable.extend(Event::HARDWARE.iter().map(|&h| (h, why.clone())));
    }
    Ok(c)
}

/// Hands a measurement's counts to the armed case.
pub fn record(c: Counted) {
    SESSION.with(|s| {
        if let Some(s) = s.borrow_mut().as_mut() {
            s.counted.push(c);
        }
    });
}

/// A case's counts in a run document: per event, counts per operation by
/// round and batch, with their summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// The kernel that counted (uname release of the process that counted:
    /// a guest's own kernel inside a VM, the host's in a container).
    pub kernel: String,
    /// Per event name, counts per operation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub events: BTreeMap<String, EventCounts>,
    /// Per event name, why it was not counted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unavailable: BTreeMap<String, String>,
    /// Why nothing was counted, when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventCounts {
    /// Over every batch of every round.
    pub summary: Summary,
    /// One list of per-batch counts per operation for each round.
    pub samples: Vec<Vec<f64>>,
}

impl EventCounts {
    /// The medians of each round: the spread over rounds.
    pub fn round_medians(&self) -> Vec<f64> {
        self.samples.iter().filter_map(|r| Summary::of(r).map(|s| s.median)).collect()
    }
}

impl Counts {
    /// Nothing counted, for `reason`.
    pub fn none(reason: &str) -> Counts {
        Counts { kernel: kernel(), events: BTreeMap::new(), unavailable: BTreeMap::new(), reason: Some(reason.into()) }
    }

    /// The document's form of the counts of a case's measurements: those of
    /// the last one (the operation its main metric is of).
    pub fn of_case(counted: &[Counted]) -> Counts {
        match counted.last() {
            None => Counts::none("not counted: the case does not time batches of operations on the runner's thread"),
            Some(Counted::NotCounted(why)) => Counts::none(why),
            Some(Counted::Deferred) => Counts::none("not counted: the round ended before its counting pass reached the case"),
            Some(Counted::Batches { batches, unavailable }) => {
                let mut c = Counts::none("");
                c.reason = None;
                let mut per: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
                for (e, v) in batches.iter().flatten() {
                    match v {
                        Some(v) => per.entry(e.name()).or_default().push(*v),
                        None => {
                            c.unavailable.insert(e.name().into(), "the PMU never ran the counter".into());
                        }
                    }
                }
                for (name, v) in per {
                    if let Some(summary) = Summary::of(&v) {
                        c.events.insert(name.into(), EventCounts { summary, samples: vec![v] });
                    }
                }
                c.unavailable.extend(unavailable.iter().map(|(e, why)| (e.name().to_string(), why.clone())));
                c
            }
        }
    }

    /// Adds another round's counts of the same case.
    pub fn absorb(&mut self, other: &Counts) {
        for (name, o) in &other.events {
            match self.events.get_mut(name) {
                Some(e) => {
                    e.samples.extend(o.samples.iter().cloned());
                    let pooled: Vec<f64> = e.samples.iter().flatten().copied().collect();
                    if let Some(s) = Summary::of(&pooled) {
                        e.summary = s;
                    }
                }
                None => {
                    self.events.insert(name.clone(), o.clone());
                }
            }
        }
        if !other.events.is_empty() {
            self.reason = None;
        }
    }

    /// The median count per operation of `event`.
    pub fn median(&self, event: Event) -> Option<f64> {
        self.events.get(event.name()).map(|e| e.summary.median)
    }
}

/// Counts that differ between two runs of a cell enough to explain a
/// difference of time: (event, A's median, B's median) where both have the
/// event and they differ by at least 0.1 per operation and 10% of the larger.
/// Task clock and core cycles are left out: they are the time itself.
pub fn changed(a: &Counts, b: &Counts) -> Vec<(Event, f64, f64)> {
    Event::SOFTWARE
        .into_iter()
        .chain(Event::HARDWARE)
        .filter(|e| !matches!(e, Event::TaskClock | Event::Cycles | Event::RefCycles))
        .filter_map(|e| {
            let (x, y) = (a.median(e)?, b.median(e)?);
            let d = (y - x).abs();
            (d >= 0.1 && d >= 0.1 * x.abs().max(y.abs())).then_some((e, x, y))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(events: &[(Event, &[&[f64]])]) -> Counts {
        let mut c = Counts::none("");
        c.reason = None;
        for (e, rounds) in events {
            let samples: Vec<Vec<f64>> = rounds.iter().map(|r| r.to_vec()).collect();
            let pooled: Vec<f64> = samples.iter().flatten().copied().collect();
            c.events.insert(e.name().into(), EventCounts { summary: Summary::of(&pooled).unwrap(), samples });
        }
        c
    }

    #[test]
    fn rounds_absorb_into_one_summary_and_keep_their_spread() {
        let mut a = counts(&[(Event::ContextSwitches, &[&[2.0, 2.0, 2.1]])]);
        a.absorb(&counts(&[(Event::ContextSwitches, &[&[1.9, 2.0, 2.0]]), (Event::MinorFaults, &[&[1.0]])]));
        let cs = &a.events["context_switches"];
        assert_eq!(cs.samples.len(), 2);
        assert_eq!(cs.summary.n, 6);
        assert_eq!(cs.summary.median, 2.0);
        assert_eq!(cs.round_medians(), vec![2.0, 2.0]);
        assert_eq!(a.median(Event::MinorFaults), Some(1.0));
    }

    #[test]
    fn a_case_counts_its_last_measurement_and_says_why_not() {
        let b = |cs: f64| vec![(Event::ContextSwitches, Some(cs)), (Event::TaskClock, None)];
        let last = Counted::Batches { batches: vec![b(2.0), b(2.2)], unavailable: vec![(Event::Cycles, "no PMU".into())] };
        let c = Counts::of_case(&[Counted::Batches { batches: vec![b(9.0)], unavailable: vec![] }, last]);
        assert_eq!(c.events["context_switches"].samples, vec![vec![2.0, 2.2]]);
        assert_eq!(c.unavailable["core_cycles"], "no PMU");
        assert!(c.unavailable.contains_key("task_clock_ns"));
        assert!(c.reason.is_none());
        assert!(Counts::of_case(&[]).reason.unwrap().contains("not counted"));
        assert_eq!(Counts::of_case(&[Counted::NotCounted("why".into())]).reason.as_deref(), Some("why"));
    }

    #[test]
    fn only_counts_that_moved_are_changes() {
        let a = counts(&[(Event::ContextSwitches, &[&[2.0]]), (Event::MinorFaults, &[&[10.0]]), (Event::TaskClock, &[&[100.0]])]);
        let b = counts(&[(Event::ContextSwitches, &[&[4.0]]), (Event::MinorFaults, &[&[10.5]]), (Event::TaskClock, &[&[900.0]])]);
        assert_eq!(changed(&a, &b), vec![(Event::ContextSwitches, 2.0, 4.0)]);
        assert!(changed(&a, &a).is_empty());
    }

    #[test]
    fn errors_name_the_cause() {
        let e = |errno| std::io::Error::from_raw_os_error(errno);
        assert_eq!(CounterError::of(Event::ContextSwitches, &e(libc::ENOSYS)), CounterError::NoSyscall);
        assert!(matches!(CounterError::of(Event::Cycles, &e(libc::ENOENT)), CounterError::NoPmu { .. }));
        assert!(CounterError::of(Event::Cycles, &e(libc::EACCES)).to_string().contains("perf_event_paranoid"));
        assert!(matches!(CounterError::of(Event::MinorFaults, &e(libc::ENOENT)), CounterError::Other { .. }));
    }

    #[test]
    fn every_event_has_a_name_it_is_found_by() {
        for e in Event::SOFTWARE.into_iter().chain(Event::HARDWARE) {
            assert_eq!(Event::by_name(e.name()), Some(e));
        }
    }
}
