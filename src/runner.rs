//! Running suites: plan the cases, run each in turn, hand each result to the
//! store as soon as it exists, report progress, stop cleanly on SIGINT/SIGTERM.

use crate::bench::{CaseCtx, CaseError};
use crate::clock::ClockInfo;
use crate::harness::HarnessConfig;
use crate::isolation::{self, Isolation};
use crate::load::{Load, LoadKind};
use crate::placement::{self, Policy};
use crate::registry::{Benchmark, Scale, Suite};
use crate::results::{CaseResult, CaseStatus, Condition, Params, RunStatus};
use crate::store::{RunWriter, StoreError};
use crate::watchdog;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// One case to run, and the suite it belongs to.
#[derive(Debug, Clone)]
pub struct Planned {
    pub suite: &'static str,
    pub scale: Scale,
    pub benchmark: Benchmark,
    pub params: Params,
}

impl Planned {
    pub fn label(&self) -> String {
        format!("{} {}", self.benchmark.id, crate::results::params_label(&self.params)).trim().to_string()
    }
}

/// Every case of the suites, restricted to `only` benchmark ids if given.
/// A case in two suites (same benchmark, same parameters) runs once, under
/// the first.
pub fn plan(suites: &[&'static Suite], only: Option<&[String]>) -> Vec<Planned> {
    let mut out: Vec<Planned> = Vec::new();
    for s in suites {
        for (b, params) in s.cases() {
            if only.is_some_and(|o| !o.iter().any(|id| id == &b.id)) || out.iter().any(|p| p.benchmark.id == b.id && p.params == params) {
                continue;
            }
            out.push(Planned { suite: s.name, scale: s.scale, benchmark: b, params });
        }
    }
    out
}

/// How the cases run: every case of the plan runs under every load (outer
/// loop) and every isolation mode (inner loop).
#[derive(Debug, Clone)]
pub struct Execution {
    pub cpus: Vec<usize>,
    pub loads: Vec<LoadKind>,
    pub isolations: Vec<Isolation>,
    /// The oscycles binary, which carries loads as `__load-worker`; None
    /// where no load but idle may run (in-process tests).
    pub exe: Option<std::path::PathBuf>,
    /// Per scale; `harness_for` picks.
    pub quick: HarnessConfig,
    pub full: HarnessConfig,
    pub timeout: Duration,
    pub progress: bool,
    pub scratch: std::path::PathBuf,
    pub mem_bytes: Option<u64>,
    /// Measured milliseconds per point of net and blk cases.
    pub point_ms: Option<u64>,
    /// How the plan is repeated; None: once, here, in plan order.
    pub rounds: Option<crate::rounds::Rounds>,
}

impl Execution {
    pub fn harness_for(&self, s: Scale) -> HarnessConfig {
        match s {
            Scale::Quick => self.quick,
            Scale::Full => self.full,
        }
    }
}

/// Progress on stderr: a rewritten line on a terminal, one line per
/// benchmark otherwise, nothing when off.
struct Progress {
    on: bool,
    tty: bool,
    total: usize,
    started: Instant,
    last_bench: String,
}

impl Progress {
    fn case(&mut self, i: usize, p: &Planned, cond: &str) {
        if !self.on {
            return;
        }
        let eta = if i > 0 {
            format!(", ~{:.0} s left", self.started.elapsed().as_secs_f64() / i as f64 * (self.total - i) as f64)
        } else {
            String::new()
        };
        if self.tty {
            eprint!("\r\x1b[K[{}/{}{eta}] {cond}{}", i + 1, self.total, p.label());
            let _ = std::io::stderr().flush();
        } else if format!("{cond}{}", p.benchmark.id) != self.last_bench {
            eprintln!("[{}/{}{eta}] {cond}{}", i + 1, self.total, p.benchmark.id);
        }
        self.last_bench = format!("{cond}{}", p.benchmark.id);
    }
    fn done(&self) {
        if self.on && self.tty {
            eprint!("\r\x1b[K");
        }
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

pub fn not_measured(p: &Planned, status: CaseStatus, why: &str, condition: Condition) -> CaseResult {
    CaseResult {
        suite: p.suite.into(),
        benchmark: p.benchmark.id.clone(),
        family: p.benchmark.family.name().into(),
        params: p.params.clone(),
        status,
        reason: Some(why.into()),
        placement: None,
        metrics: vec![],
        details: Default::default(),
        elapsed_s: 0.0,
        condition: Some(condition),
        environment: None,
    }
}

/// Runs one case; never panics on a failed measurement.
pub fn run_case(p: &Planned, ex: &Execution, clock: &ClockInfo, mode: Mode) -> CaseResult {
    let t = Instant::now();
    let ctx = CaseCtx {
        params: &p.params,
        cpus: &ex.cpus,
        pin: mode.pin,
        policy: mode.policy,
        memory_locked: mode.memory_locked,
        harness: ex.harness_for(p.scale),
        scale: p.scale,
        point_ms: ex.point_ms,
        clock,
        timeout: ex.timeout,
        scratch: &ex.scratch,
        mem_bytes: ex.mem_bytes,
    };
    // Every case has a deadline on this thread: blocking calls return EINTR
    // after it, polling loops and the harness stop at it.
    let deadline = watchdog::Deadline::arm(ex.timeout);
    let mut r = p.benchmark.run(&ctx);
    if deadline.as_ref().is_ok_and(|d| d.passed()) && r.is_err() && watchdog::interrupted().is_none() {
        r = Err(CaseError::Failed(format!(
            "timed out: stopped after {:.1} s (--timeout {} s)",
            t.elapsed().as_secs_f64(),
            ex.timeout.as_secs()
        )));
    }
    drop(deadline);
    let mut out = CaseResult {
        suite: p.suite.into(),
        benchmark: p.benchmark.id.clone(),
        family: p.benchmark.family.name().into(),
        params: p.params.clone(),
        status: CaseStatus::Ok,
        reason: None,
        placement: None,
        metrics: vec![],
        details: Default::default(),
        elapsed_s: 0.0,
        condition: None,
        environment: None,
    };
    match r {
        Ok(d) => {
            out.placement = Some(d.placement);
            out.metrics = d.metrics;
            out.details = d.details;
        }
        Err(CaseError::NotApplicable(why)) => {
            out.status = CaseStatus::NotApplicable;
            out.reason = Some(why);
        }
        Err(CaseError::Failed(why)) => {
            out.status = CaseStatus::Failed;
            out.reason = Some(why);
        }
        Err(CaseError::Interrupted) => {
            out.status = CaseStatus::Failed;
            out.reason = Some("interrupted by a signal".into());
        }
    }
    out.elapsed_s = t.elapsed().as_secs_f64();
    out
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

/// Runs the plan under every condition and finishes the document. Returns
/// how the run ended.
pub fn execute(plan: &[Planned], ex: &Execution, writer: &mut RunWriter) -> Result<RunStatus, StoreError> {
    run_rounds(plan, ex, writer, None)?;
    let status = if watchdog::interrupted().is_some() { RunStatus::Interrupted } else { RunStatus::Complete };
    writer.finish(status)?;
    Ok(status)
}

/// Runs the plan as `ex.rounds` says (in rounds, each in a fresh process),
/// or once here.
pub fn run_rounds(plan: &[Planned], ex: &Execution, writer: &mut RunWriter, env: Option<&str>) -> Result<(), StoreError> {
    match &ex.rounds {
        Some(r) => crate::rounds::run(plan, ex, writer, env, r),
        None => run_plan(plan, ex, writer, env),
    }
}

/// Runs the plan under every condition, saving each result as it comes,
/// tagged with `env` if given. Loads and isolation settings are undone when
/// the run ends, fails or is interrupted (their guards are dropped on every
/// path out).
pub fn run_plan(plan: &[Planned], ex: &Execution, writer: &mut RunWriter, env: Option<&str>) -> Result<(), StoreError> {
    watchdog::install();
    let tag = |mut r: CaseResult| {
        r.environment = env.map(String::from);
        r
    };
    let clock = writer.doc.host.clock.clone();
    let conditions = ex.loads.len() * ex.isolations.len();
    let mut progress = Progress {
        on: ex.progress,
        tty: std::io::stderr().is_terminal(),
        total: plan.len() * conditions,
        started: Instant::now(),
        last_bench: String::new(),
    };
    let mut i = 0;
    let many = conditions > 1;
    'loads: for &kind in &ex.loads {
        if watchdog::interrupted().is_some() {
            break;
        }
        let cond = |iso: Isolation| Condition { load: kind.name().into(), isolation: iso.name().into(), facts: Default::default() };
        let started = match &ex.exe {
            None if kind != LoadKind::Idle => Err("loads other than idle need the oscycles binary to carry them".to_string()),
            None => Ok(Load::idle()),
            Some(exe) => Load::start(kind, exe, &ex.scratch, &load_cpus(ex.cpus[0])),
        };
        let mut load = match started.and_then(|mut l| l.warm_up(LOAD_SETTLE).map(|()| l)) {
            Ok(l) => l,
            Err(why) => {
                for &iso in &ex.isolations {
                    for p in plan {
                        writer.push(tag(not_measured(p, CaseStatus::Failed, &why, cond(iso))))?;
                        i += 1;
                    }
                }
                continue;
            }
        };
        for &iso in &ex.isolations {
            if watchdog::interrupted().is_some() {
                break 'loads;
            }
            let applied = isolation::apply(iso, ex.cpus[0]);
            let label = if many { format!("{}/{}: ", kind.name(), iso.name()) } else { String::new() };
            let applied = match applied {
                Ok(a) => a,
                Err(why) => {
                    for p in plan {
                        writer.push(tag(not_measured(p, CaseStatus::NotApplicable, &why, cond(iso))))?;
                        i += 1;
                    }
                    continue;
                }
            };
            let mode = Mode::of(iso);
            for p in plan {
                if watchdog::interrupted().is_some() {
                    break 'loads;
                }
                progress.case(i, p, &label);
                i += 1;
                if let Err(why) = load.check() {
                    writer.push(tag(not_measured(p, CaseStatus::Failed, &why, cond(iso))))?;
                    continue;
                }
                let mark = load.mark();
                let mut r = run_case(p, ex, &clock, mode);
                // A case cut short by the interrupt is not a result.
                if watchdog::interrupted().is_some() && r.status == CaseStatus::Failed {
                    break 'loads;
                }
                let mut c = cond(iso);
                c.facts = applied.facts.clone();
                c.facts.extend(load.facts_since(&mark));
                r.condition = Some(c);
                writer.push(tag(r))?;
            }
            drop(applied);
        }
        drop(load);
    }
    progress.done();
    Ok(())
}
