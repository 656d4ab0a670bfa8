//! The case executor: a plan run in this process under every condition
//! (load x isolation), each case measured by its family and saved as it
//! comes, the counting pass after the timed cases. Below the rounds (which
//! run it once per round) and the runner (which runs it per environment).

use crate::base::named::Named;
use crate::data::documents::{DocumentError, RunWriter};
use crate::data::results::{CaseResult, CaseStatus, Condition};
use crate::families::bench::{CaseCtx, CaseError};
use crate::measure::clock::ClockInfo;
use crate::measure::counters;
use crate::measure::harness::{self, HarnessConfig};
use crate::measure::placement::{self, Policy};
use crate::measure::watchdog;
use crate::run::isolation::preempt::Preempt;
use crate::run::isolation::{self, Isolation};
use crate::run::load::{Load, LoadError, LoadKind};
use crate::run::plan::{PlannedCase, blank, not_measured};
use crate::run::progress::Reporter;
use crate::run::registry::Scale;
use crate::run::spec::RunSpec;
use std::time::{Duration, Instant};

/// How the cases run: every case of the plan runs under every load of the
/// spec (outer loop) and every isolation mode (inner loop).
#[derive(Debug, Clone)]
pub struct Execution {
    /// The run's settings (loads, isolation modes, timeout, sizes, rounds),
    /// with the TSC rate of this process.
    pub spec: RunSpec,
    /// The CPUs here.
    pub cpus: Vec<usize>,
    /// The oscycles binary, which carries loads as `__load-worker`; None
    /// where no load but idle may run (in-process tests).
    pub exe: Option<std::path::PathBuf>,
    /// Per scale; `harness_for` picks.
    pub quick: HarnessConfig,
    pub full: HarnessConfig,
    /// Whether suites' shortest batches apply (not when `--batch-ms` set the batch).
    pub suite_batches: bool,
    pub scratch: std::path::PathBuf,
    /// How the plan is repeated; None: once, here, in plan order.
    pub rounds: Option<crate::run::spec::Rounds>,
}

impl Execution {
    /// Everything in this process: idle and pinned only, one harness for
    /// both scales, no rounds, no counting pass, a 30 s case timeout. What
    /// tests (and a program embedding the runner) start from.
    pub fn in_process(cpus: Vec<usize>, harness: HarnessConfig, scratch: std::path::PathBuf) -> Execution {
        Execution {
            spec: RunSpec { no_counters: true, timeout_s: 30, ..RunSpec::default() },
            cpus,
            exe: None,
            quick: harness,
            full: harness,
            suite_batches: false,
            scratch,
            rounds: None,
        }
    }

    /// Seconds a case may take.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.spec.timeout_s)
    }

    /// Whether batch-timed cases are followed by counting batches.
    pub fn counters(&self) -> bool {
        !self.spec.no_counters
    }

    pub fn harness_for(&self, s: Scale) -> HarnessConfig {
        match s {
            Scale::Quick | Scale::Test => self.quick,
            Scale::Full => self.full,
        }
    }

    /// The harness of case `p`: its scale's, with its suite's shortest batch.
    fn harness_of(&self, p: &PlannedCase, tsc_hz: f64) -> HarnessConfig {
        self.harness_for(p.scale).at_least_s(if self.suite_batches { p.min_batch_s } else { 0.0 }, tsc_hz)
    }
}

/// What an isolation mode means to a case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mode {
    pub pin: bool,
    pub policy: Policy,
    pub memory_locked: bool,
}

impl Mode {
    pub fn of(iso: Isolation) -> Mode {
        Mode { pin: iso.pins(), policy: iso.policy(), memory_locked: placement::memory_locked() }
    }
}

/// Runs one case; never panics on a failed measurement. With counters on,
/// the harness only notes whether the case times batches on this thread:
/// such a result leaves its counters empty (`None`) for [`count_pass`],
/// which counts it after the round's timed cases.
pub fn run_case(p: &PlannedCase, ex: &Execution, clock: &ClockInfo, mode: Mode) -> CaseResult {
    let harness = ex.harness_of(p, clock.tsc_hz);
    let known = ex.spec.inners.get(&p.label()).map_or(&[][..], Vec::as_slice);
    // Only the timed pass marks its batches (not the counting pass).
    let marking = ex.spec.mark_batches.then(crate::measure::marks::Marking::arm);
    let mut r = measure(p, ex, clock, mode, harness, (ex.counters().then_some(0), known));
    r.marked = marking.and_then(crate::measure::marks::Marking::finish).filter(|_| r.status == CaseStatus::Ok);
    r
}

/// A case run with `harness`, the counters armed with `counting` batches
/// if given: with batches, its counts are in the result; with 0 (the timed
/// pass), a case that times batches leaves them empty. Its calibration
/// starts at the `known` inner counts (`harness::Inners`), one per
/// measurement, where given.
fn measure(
    p: &PlannedCase,
    ex: &Execution,
    clock: &ClockInfo,
    mode: Mode,
    harness: HarnessConfig,
    (counting, known): (Option<usize>, &[u64]),
) -> CaseResult {
    let t = Instant::now();
    let ctx = CaseCtx {
        params: &p.params,
        cpus: &ex.cpus,
        pin: mode.pin,
        policy: mode.policy,
        memory_locked: mode.memory_locked,
        harness,
        scale: p.scale,
        point_ms: ex.spec.point_ms,
        clock,
        timeout: ex.timeout(),
        scratch: &ex.scratch,
        mem_bytes: ex.spec.mem_bytes,
    };
    // Every case has a deadline on this thread: blocking calls return EINTR
    // after it, polling loops and the harness stop at it.
    let deadline = watchdog::Deadline::arm(ex.timeout());
    let armed = counting.map(|k| counters::Armed::arm(k, true));
    let carried = harness::Inners::arm(known);
    let mut r = p.benchmark.run(&ctx);
    let inners = carried.finish();
    let counted = armed.map(counters::Armed::finish).unwrap_or_default();
    if deadline.as_ref().is_ok_and(|d| d.passed()) && r.is_err() && watchdog::interrupted().is_none() {
        r = Err(CaseError::Failed(format!(
            "timed out: stopped after {:.1} s (--timeout {} s)",
            t.elapsed().as_secs_f64(),
            ex.spec.timeout_s
        )));
    }
    drop(deadline);
    let mut out = blank(p);
    match r {
        Ok(d) => {
            out.placement = Some(d.placement);
            out.metrics = d.metrics;
            out.details = d.details;
            out.inners = inners;
            let deferred = counted.iter().any(|c| matches!(c, counters::Counted::Deferred));
            if counting.is_some() && !deferred {
                out.counters = Some(counters::Counts::of_case(&counted));
            }
        }
        Err(e) => {
            let (status, why) = e.into_status();
            (out.status, out.reason) = (status, Some(why));
        }
    }
    out.elapsed_s = t.elapsed().as_secs_f64();
    out
}

/// How long the kernel keeps its scheduler hooks for perf on after the
/// last per-task counter closed (HZ, a second), with a margin: the pause
/// after a counting pass before anything is timed again.
pub const COUNTERS_COOL_DOWN: Duration = Duration::from_millis(1200);

/// The counting pass after a round's timed cases (under one condition):
/// each case the timed pass noted (`to_count`: the case and its result's
/// index in the document) runs again, briefly, with the counters armed, and
/// its counts go into its result. Then a pause ([`COUNTERS_COOL_DOWN`]),
/// so that nothing timed next meets the kernel's perf hooks still on.
fn count_pass(
    to_count: &[(&PlannedCase, usize)],
    ex: &Execution,
    clock: &ClockInfo,
    mode: Mode,
    recorder: &mut Recorder,
) -> Result<(), DocumentError> {
    for &(p, i) in to_count {
        if watchdog::interrupted().is_some() {
            return Ok(());
        }
        // One timed batch (the family needs a sample to make its result;
        // the counting batches follow it) of the harness's own length:
        // counts are per operation, and at the LMBench suite's 100 ms
        // batches its 45 cases' counting took 30 s more (2026-11-27).
        let own = ex.harness_for(p.scale);
        let harness = HarnessConfig { batches: 1, ..own };
        // Armed with batches, a measured case always carries its counts.
        // It calibrates from where its timed pass settled if that pass's
        // batches were as long.
        let timed_alike = ex.harness_of(p, clock.tsc_hz).target_batch_cycles == own.target_batch_cycles;
        let known = if timed_alike { recorder.writer.doc.results[i].inners.clone() } else { vec![] };
        let r = measure(p, ex, clock, mode, harness, (Some(counters::COUNTING_BATCHES), &known));
        let spent = recorder.writer.spent();
        *spent.counting_s.entry(p.benchmark.family.name().to_string()).or_default() += r.elapsed_s;
        spent.counted += 1;
        let counts = match (r.status, r.counters) {
            (CaseStatus::Ok, Some(counts)) => counts,
            _ => counters::Counts::none(&format!("not counted: its counting run failed: {}", r.reason.unwrap_or_default())),
        };
        recorder.writer.update(|doc| doc.results[i].counters = Some(counts))?;
    }
    if !to_count.is_empty() {
        std::thread::sleep(COUNTERS_COOL_DOWN);
        recorder.writer.spent().cool_down_s += COUNTERS_COOL_DOWN.as_secs_f64();
    }
    Ok(())
}

/// The CPUs a load runs on: every allowed CPU but the measured one (all of
/// them on a one-CPU machine, where the load then shares the CPU).
pub fn load_cpus(measured: usize) -> Vec<usize> {
    let all = placement::allowed_cpus();
    let rest: Vec<usize> = all.iter().copied().filter(|&c| c != measured).collect();
    if rest.is_empty() { all } else { rest }
}

/// Seconds a load runs before the first measurement under it.
pub const LOAD_SETTLE: Duration = Duration::from_secs(2);

/// Where a plan's results go and who hears of its progress: the run's
/// document, the environment its results are tagged with (None: the run's
/// own, untagged), the reporter.
pub struct Destination<'a> {
    pub writer: &'a mut RunWriter,
    pub env: Option<&'a str>,
    pub rep: &'a mut dyn Reporter,
}

/// Where the results of a plan go: tagged with the environment (if given),
/// counted for progress.
struct Recorder<'a> {
    writer: &'a mut RunWriter,
    env: Option<&'a str>,
    done: usize,
}

impl Recorder<'_> {
    fn push(&mut self, mut r: CaseResult) -> Result<(), DocumentError> {
        r.environment = self.env.map(String::from);
        self.done += 1;
        self.writer.push(r)
    }

    /// Every case of `plan` not measured, for `why`.
    fn not_measured(&mut self, plan: &[PlannedCase], status: CaseStatus, why: &str, condition: &Condition) -> Result<(), DocumentError> {
        plan.iter().try_for_each(|p| self.push(not_measured(p, status, why, condition.clone())))
    }
}

/// The condition of a load, an isolation mode and a preemption mode (None:
/// the kernel's own), without facts yet.
pub fn condition(kind: LoadKind, iso: Isolation, preempt: Option<Preempt>) -> Condition {
    Condition {
        load: kind.name().into(),
        isolation: iso.name().into(),
        preempt: preempt.map(|p| p.name().into()),
        facts: Default::default(),
    }
}

/// Runs the plan under every condition, saving each result as it comes,
/// tagged with `env` if given. Loads and isolation settings are undone when
/// the run ends, fails or is interrupted (their guards are dropped on every
/// path out).
pub fn run_plan(plan: &[PlannedCase], ex: &Execution, out: &mut Destination) -> Result<(), DocumentError> {
    watchdog::install();
    let rep = &mut *out.rep;
    let mut recorder = Recorder { writer: &mut *out.writer, env: out.env, done: 0 };
    let planned: Vec<Option<f64>> = plan.iter().map(|p| p.benchmark.planned_s(&p.params)).collect();
    rep.plan_started(&planned.repeat(ex.spec.conditions()));
    for &kind in &ex.spec.loads {
        if watchdog::interrupted().is_some() {
            break;
        }
        let started = match &ex.exe {
            None if kind != LoadKind::Idle => Err(LoadError::NoBinary),
            None => Ok(Load::idle()),
            Some(exe) => Load::start(kind, exe, &ex.scratch, &ex.spec.load_cpus.clone().unwrap_or_else(|| load_cpus(ex.cpus[0]))),
        };
        match started.and_then(|mut l| l.warm_up(LOAD_SETTLE).map(|()| l)) {
            Ok(mut load) => {
                if !under_load(plan, ex, &mut load, &mut recorder, rep)? {
                    break;
                }
            }
            Err(why) => {
                for (iso, pre) in ex.spec.isolation_modes() {
                    recorder.not_measured(plan, CaseStatus::Failed, &why.to_string(), &condition(kind, iso, pre))?;
                }
            }
        }
    }
    rep.plan_done();
    Ok(())
}

/// The plan under `load` and every isolation (and preemption) mode in turn. Returns false
/// when interrupted.
fn under_load(
    plan: &[PlannedCase],
    ex: &Execution,
    load: &mut Load,
    recorder: &mut Recorder,
    rep: &mut dyn Reporter,
) -> Result<bool, DocumentError> {
    let clock = recorder.writer.doc.host.clock.clone();
    let many = ex.spec.conditions() > 1;
    for (iso, pre) in ex.spec.isolation_modes() {
        if watchdog::interrupted().is_some() {
            return Ok(false);
        }
        let cond = condition(load.kind, iso, pre);
        let label = if many { format!("{}/{}: ", cond.load, cond.isolation_label()) } else { String::new() };
        let applied = match isolation::apply(iso, ex.cpus[0], pre) {
            Ok(a) => a,
            Err(why) => {
                recorder.not_measured(plan, CaseStatus::NotApplicable, &why.to_string(), &cond)?;
                continue;
            }
        };
        let mode = Mode::of(iso);
        let mut to_count = Vec::new();
        for p in plan {
            if watchdog::interrupted().is_some() {
                return Ok(false);
            }
            rep.case_started(recorder.done, p, &label);
            if let Err(why) = load.check() {
                recorder.push(not_measured(p, CaseStatus::Failed, &why.to_string(), cond.clone()))?;
                continue;
            }
            let mark = load.mark();
            let mut r = run_case(p, ex, &clock, mode);
            let deferred = ex.counters() && r.status == CaseStatus::Ok && r.counters.is_none();
            // A case cut short by the interrupt is not a result.
            if watchdog::interrupted().is_some() && r.status == CaseStatus::Failed {
                return Ok(false);
            }
            let mut c = cond.clone();
            c.facts = applied.facts.clone();
            c.facts.extend(load.facts_since(&mark));
            r.condition = Some(c);
            recorder.push(r)?;
            if deferred {
                to_count.push((p, recorder.writer.doc.results.len() - 1));
            }
        }
        count_pass(&to_count, ex, &clock, mode, recorder)?;
        drop(applied);
    }
    Ok(true)
}
