//! Running suites: plan the cases, run each in turn, hand each result to the
//! store as soon as it exists, report progress, stop cleanly on SIGINT/SIGTERM.

use crate::bench::{CaseCtx, CaseError};
use crate::clock::ClockInfo;
use crate::harness::HarnessConfig;
use crate::placement::Policy;
use crate::registry::{Benchmark, Scale, Suite};
use crate::results::{CaseResult, CaseStatus, Params, RunStatus};
use crate::store::{RunWriter, StoreError};
use crate::watchdog;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// One case to run, and the suite it belongs to.
#[derive(Debug, Clone)]
pub struct Planned {
    pub suite: &'static str,
    pub scale: Scale,
    pub benchmark: &'static Benchmark,
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

/// How the cases run.
#[derive(Debug, Clone)]
pub struct Execution {
    pub cpus: Vec<usize>,
    pub policy: Policy,
    pub memory_locked: bool,
    /// Per scale; `harness_for` picks.
    pub quick: HarnessConfig,
    pub full: HarnessConfig,
    pub timeout: Duration,
    pub progress: bool,
    pub scratch: std::path::PathBuf,
    pub mem_bytes: Option<u64>,
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
    fn case(&mut self, i: usize, p: &Planned) {
        if !self.on {
            return;
        }
        let eta = if i > 0 {
            format!(", ~{:.0} s left", self.started.elapsed().as_secs_f64() / i as f64 * (self.total - i) as f64)
        } else {
            String::new()
        };
        if self.tty {
            eprint!("\r\x1b[K[{}/{}{eta}] {}", i + 1, self.total, p.label());
            let _ = std::io::stderr().flush();
        } else if p.benchmark.id != self.last_bench {
            eprintln!("[{}/{}{eta}] {}", i + 1, self.total, p.benchmark.id);
        }
        self.last_bench = p.benchmark.id.clone();
    }
    fn done(&self) {
        if self.on && self.tty {
            eprint!("\r\x1b[K");
        }
    }
}

/// Runs one case; never panics on a failed measurement.
pub fn run_case(p: &Planned, ex: &Execution, clock: &ClockInfo) -> CaseResult {
    let t = Instant::now();
    let ctx = CaseCtx {
        params: &p.params,
        cpus: &ex.cpus,
        policy: ex.policy,
        memory_locked: ex.memory_locked,
        harness: ex.harness_for(p.scale),
        clock,
        timeout: ex.timeout,
        scratch: &ex.scratch,
        mem_bytes: ex.mem_bytes,
    };
    let r = p.benchmark.run(&ctx);
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

/// Runs the plan, saving each result as it comes. Returns how the run ended.
pub fn execute(plan: &[Planned], ex: &Execution, writer: &mut RunWriter) -> Result<RunStatus, StoreError> {
    watchdog::install();
    let clock = writer.doc.host.clock.clone();
    let mut progress = Progress {
        on: ex.progress,
        tty: std::io::stderr().is_terminal(),
        total: plan.len(),
        started: Instant::now(),
        last_bench: String::new(),
    };
    for (i, p) in plan.iter().enumerate() {
        if watchdog::interrupted().is_some() {
            break;
        }
        progress.case(i, p);
        let r = run_case(p, ex, &clock);
        // A case cut short by the interrupt is not a result.
        if watchdog::interrupted().is_some() && r.status == CaseStatus::Failed {
            break;
        }
        writer.push(r)?;
    }
    progress.done();
    let status = if watchdog::interrupted().is_some() { RunStatus::Interrupted } else { RunStatus::Complete };
    writer.finish(status)?;
    Ok(status)
}
