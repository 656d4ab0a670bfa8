//! A run resolved once in this process ([`Prepared`], as ripgrep's
//! `HiArgs`): from a [`RunSpec`] alone, its suites and plan against the
//! registry, the CPUs here, the clock, the harness, the rounds and the
//! run's private directory. `oscycles run` prepares its spec once; a
//! round's process and an environment's child prepare the spec they were
//! handed, and measure it with [`measure`], the library's, not the binary's.

use crate::data::documents::{self, DocumentError, RunWriter};
use crate::data::results::time::Spent;
use crate::data::results::{RunDoc, RunStatus};
use crate::measure::clock::{self, ClockInfo};
use crate::measure::placement::{self, Policy};
use crate::measure::scratch::RunDir;
use crate::measure::watchdog;
use crate::run::execute::{Destination, Execution};
use crate::run::isolation::{self, RT_PRIORITY};
use crate::run::plan::{self, PlannedCase};
use crate::run::progress::{self, Reporter};
use crate::run::registry::{self, Suite, Venue};
use crate::run::rounds;
use crate::run::spec::{Rounds, RunSpec};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a spec cannot be measured here.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// Bad input: a sentence naming it and what would be valid (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error("finding the oscycles binary (it carries the loads): {0}")]
    Exe(std::io::Error),
    /// `--rt` promised what this process may not do.
    #[error("--rt asks for {what}: {why}")]
    Rt { what: &'static str, why: placement::PlacementError },
    #[error(transparent)]
    Placement(#[from] placement::PlacementError),
    #[error(transparent)]
    Store(#[from] DocumentError),
}

/// Which process of a run prepares it: the run's own (`oscycles run`,
/// which has the whole plan, times starts from the host and records the
/// run in the store), or a part of it (a round, an environment's child).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Host,
    Part,
}

/// A run as this process measures it, resolved once.
pub struct Prepared {
    /// The spec's suites, from the registry (none when made from parts).
    pub suites: Vec<&'static Suite>,
    /// The cases this process runs.
    pub plan: Vec<PlannedCase>,
    /// How they run: the spec (with this process' TSC rate), the CPUs here,
    /// the harness, the rounds.
    pub execution: Execution,
    pub clock: ClockInfo,
    /// The run's private directory, removed with this value (None: a
    /// directory the caller owns).
    pub run_dir: Option<RunDir>,
    /// What preparing has to say (directories of dead runs removed).
    pub notes: Vec<String>,
    /// What preparing took (the document's `settings.spent` starts from it).
    pub spent: Spent,
}

impl Prepared {
    /// Resolves `spec` for this process: suites, benchmarks and `--where`
    /// against the registry, the CPUs here (a guest has its own), the
    /// directories and (host) the store checked, `--rt` tried, the clock
    /// calibrated (or the parent's rate taken), the run's private directory
    /// made.
    pub fn new(spec: &RunSpec, side: Side) -> Result<Prepared, PrepareError> {
        let started = std::time::Instant::now();
        let suites = find_suites(&spec.suites)?;
        let cpus = cpus_here(spec.cpus.as_deref())?;
        let usage = |e: DocumentError| PrepareError::Usage(e.to_string());
        documents::check_writable(&spec.results, "results", "--results").map_err(usage)?;
        documents::check_writable(&scratch_base(spec), "scratch files", "--scratch").map_err(usage)?;
        if side == Side::Host {
            crate::data::db::Location::parse(&spec.db_path()).check().map_err(|e| PrepareError::Usage(e.to_string()))?;
        }
        let plan = plan_of(spec, &suites, side)?;
        let base = scratch_base(spec);
        let (run_dir, notes) = RunDir::create(&base)
            .map_err(|e| PrepareError::Usage(format!("cannot make a private directory in '{}' (--scratch): {e}", base.display())))?;
        check_rt(spec)?;
        let calibrating = std::time::Instant::now();
        // Under QEMU's instruction counter, a clock that reads guest instructions (aarch64's counter scaled).
        let counts = crate::measure::arch::count_instructions(spec.instruction_counter) && spec.instruction_counter;
        let clock = match spec.tsc_hz {
            Some(hz) if hz > 1e6 => clock::known_tsc(hz),
            _ => clock::calibrate_tsc(5, Duration::from_millis(60)),
        }
        .counting(counts);
        let calibration_s = calibrating.elapsed().as_secs_f64();
        let execution = execution(spec, cpus, &clock, run_dir.path())?;
        let spent = Spent { prepare_s: started.elapsed().as_secs_f64(), calibration_s, ..Spent::default() };
        Ok(Prepared { suites, plan, execution, clock, run_dir: Some(run_dir), notes, spent })
    }

    /// A run made of parts resolved elsewhere (tests, a program embedding
    /// the runner with families of its own).
    pub fn of(plan: Vec<PlannedCase>, execution: Execution, clock: ClockInfo) -> Prepared {
        Prepared { suites: vec![], plan, execution, clock, run_dir: None, notes: vec![], spent: Spent::default() }
    }

    pub fn spec(&self) -> &RunSpec {
        &self.execution.spec
    }

    /// The run document this run starts, in `envs` (their names): every
    /// case under every condition in each, the harness of its first suite;
    /// what preparing and collecting the host's facts took in its `spent`.
    pub fn document(&self, envs: &[&str]) -> RunDoc {
        let spec = self.spec();
        let cases = self.plan.len() * spec.conditions() * envs.len();
        let harness = self.suites.first().map_or(self.execution.full, |s| self.execution.harness_for(s.scale));
        let t = std::time::Instant::now();
        let mut doc = spec.document(envs, cases, self.execution.cpus.clone(), harness, self.clock.clone());
        doc.settings.spent = Some(Spent { facts_s: t.elapsed().as_secs_f64(), ..self.spent.clone() });
        doc
    }
}

/// Where the run's private directory goes: `--scratch`, else the system's.
pub fn scratch_base(spec: &RunSpec) -> PathBuf {
    spec.scratch.clone().unwrap_or_else(std::env::temp_dir)
}

/// The cases of `spec` as a part of a run plans them (an environment's
/// child; a start the host times): as [`Prepared::new`] of a part does.
pub fn plan_part(spec: &RunSpec) -> Result<Vec<PlannedCase>, PrepareError> {
    plan_of(spec, &find_suites(&spec.suites)?, Side::Part)
}

/// The cases of `spec` this process runs; a part leaves out what the host
/// measures itself, and a `--where` parameter only the rest of the plan has.
fn plan_of(spec: &RunSpec, suites: &[&'static Suite], side: Side) -> Result<Vec<PlannedCase>, PrepareError> {
    let usage = |e: plan::WhereError| PrepareError::Usage(e.to_string());
    if let Some(ids) = &spec.benchmarks {
        check_benchmarks(ids, suites)?;
    }
    let mut plan = plan::plan_at(suites, spec.benchmarks.as_deref(), spec.scale);
    plan::keep_where(&mut plan, &spec.cases_where, side == Side::Host).map_err(usage)?;
    if let Some(labels) = &spec.cases {
        plan::keep_cases(&mut plan, labels).map_err(usage)?;
    }
    if side == Side::Part {
        plan.retain(|p| p.benchmark.venue() != Venue::FromHost);
    }
    if plan.is_empty() {
        return Err(PrepareError::Usage("the suites and benchmarks chosen contain no case to run".into()));
    }
    Ok(plan)
}

/// The suites of these names, or a sentence naming the bad one.
pub fn find_suites(names: &[String]) -> Result<Vec<&'static Suite>, PrepareError> {
    if names.is_empty() {
        return Err(PrepareError::Usage(format!("--suite needs at least one suite name; valid suites: {}", registry::suite_names())));
    }
    names
        .iter()
        .map(|n| {
            registry::find_suite(n)
                .ok_or_else(|| PrepareError::Usage(format!("unknown suite '{n}'; valid suites: {}", registry::suite_names())))
        })
        .collect()
}

/// Benchmark ids (`--bench`), each checked against the registry and the
/// chosen suites.
pub fn check_benchmarks(ids: &[String], suites: &[&'static Suite]) -> Result<(), PrepareError> {
    if ids.is_empty() {
        return Err(PrepareError::Usage("--bench needs at least one benchmark id; see `oscycles list`".into()));
    }
    for id in ids {
        let Some(b) = registry::find_benchmark(id) else {
            let all: Vec<&str> = registry::benchmarks().iter().map(|b| b.id.as_str()).collect();
            return Err(PrepareError::Usage(format!("unknown benchmark '{id}'; valid benchmarks: {}", all.join(", "))));
        };
        if !suites.iter().any(|s| s.contains(b)) {
            let names: Vec<&str> = suites.iter().map(|s| s.name).collect();
            return Err(PrepareError::Usage(format!(
                "benchmark '{id}' is not part of the suites chosen ({}); add a suite that has it",
                names.join(",")
            )));
        }
    }
    Ok(())
}

/// The CPUs of `--cpus` as this process may use them (each allowed here,
/// named once), or the first two allowed.
pub fn cpus_here(cpus: Option<&[usize]>) -> Result<Vec<usize>, PrepareError> {
    let allowed = placement::allowed_cpus();
    let Some(cpus) = cpus else {
        if allowed.is_empty() {
            return Err(PrepareError::Usage("this process may run on no CPU at all (sched_getaffinity failed)".into()));
        }
        return Ok(allowed.into_iter().take(2).collect());
    };
    let list = placement::format_cpus(cpus);
    if let Some(&cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
        let e = placement::PlacementError::NotAllowed { cpu, list, allowed: placement::format_cpus(&allowed) };
        return Err(PrepareError::Usage(format!("--cpus: {e}")));
    }
    if (1..cpus.len()).any(|i| cpus[..i].contains(&cpus[i])) {
        return Err(PrepareError::Usage(format!("--cpus {list}: a CPU is named twice; name each CPU once (e.g. 0,1)")));
    }
    Ok(cpus.to_vec())
}

/// --rt is a promise: refused up front where SCHED_FIFO or locking is not permitted.
fn check_rt(spec: &RunSpec) -> Result<(), PrepareError> {
    if spec.rt {
        placement::lock_memory().map_err(|why| PrepareError::Rt { what: "locked memory", why })?;
        placement::set_policy(Policy::Fifo { priority: RT_PRIORITY }).map_err(|why| PrepareError::Rt { what: "SCHED_FIFO", why })?;
        placement::set_policy(Policy::Other)?;
    }
    Ok(())
}

/// How the cases run here: the spec with the clock's rate (rounds take it
/// instead of calibrating), the harness spanning the clock's steps (an
/// emulated TSC moves in steps), the rounds in the run's private directory.
/// A suite's shortest batch (LMBench's 100 ms) is a rule for timing a CPU
/// (what a sample spans of the caches, the timer, the scheduler): under
/// QEMU's instruction counter a count does not need it, and there it made
/// each batch at least 10^8 guest instructions, 20 times the harness's
/// own: lmbench's syscall.null took 3.0 * 10^9 in qemu-arm64, 75 times
/// its 4 * 10^7 now (a minute or more of an emulated Cortex-A53 on a
/// loaded host, per case).
fn execution(spec: &RunSpec, cpus: Vec<usize>, clock: &ClockInfo, run_dir: &Path) -> Result<Execution, PrepareError> {
    let hz = clock.tsc_hz;
    Ok(Execution {
        spec: RunSpec { tsc_hz: Some(hz), ..spec.clone() },
        cpus,
        exe: Some(crate::base::fsafe::own_exe().map_err(PrepareError::Exe)?),
        quick: spec.harness(hz, true).spanning_steps(clock.step_cycles, (2.0 * hz) as u64),
        full: spec.harness(hz, false).spanning_steps(clock.step_cycles, (2.0 * hz) as u64),
        suite_batches: spec.batch_ms.is_none() && !spec.instruction_counter,
        scratch: run_dir.to_path_buf(),
        rounds: Some(Rounds { work: run_dir.to_path_buf(), baseline: None }),
    })
}

/// Puts back what a dead run left: a journal left by a SIGKILLed isolated
/// run is undone first (until then this process' allowed CPUs are that
/// run's leftovers), and load groups are removed. Returns what it did, to
/// be said.
pub fn recover() -> Vec<String> {
    watchdog::install();
    let mut said = Vec::new();
    let mut restored = false;
    for r in isolation::recover_stale() {
        match r {
            Ok(line) => {
                said.push(line);
                restored = true;
            }
            Err(e) => said.push(format!("warning: {e}")),
        }
    }
    if restored {
        // This process was born while the dead run had everything else moved
        // away from its CPU, and Linux keeps the narrowed mask: take the
        // parent's again (restored from the journal with the rest).
        // SAFETY: getppid has no preconditions.
        let parent = placement::affinity_of(unsafe { libc::getppid() } as u32);
        if !parent.is_empty() && placement::set_affinity(&parent).is_ok() {
            said.push(format!("CPUs allowed again: {}", placement::format_cpus(&parent)));
        }
    }
    crate::measure::cgroup::remove_stale_load_groups();
    said
}

/// Runs the plan in this process (in rounds if `ex.rounds` says) and
/// finishes the document, telling `rep` how far it got: what a round's
/// process and an environment's child do with their part of a run.
/// Returns how the run ended.
pub fn execute(plan: &[PlannedCase], ex: &Execution, writer: &mut RunWriter, rep: &mut dyn Reporter) -> Result<RunStatus, DocumentError> {
    rounds::run(plan, ex, &mut Destination { writer, env: None, rep })?;
    finish(writer)
}

/// Marks the document complete, or interrupted if a signal came.
pub fn finish(writer: &mut RunWriter) -> Result<RunStatus, DocumentError> {
    let status = if watchdog::interrupted().is_some() { RunStatus::Interrupted } else { RunStatus::Complete };
    writer.finish(status)?;
    Ok(status)
}

/// Measures `spec` in this process and the rounds it starts, its document
/// in `spec.results`, printing nothing but progress (and, on stderr, what
/// recovering did): a round's process and the run inside an environment.
pub fn measure(spec: &RunSpec) -> Result<RunStatus, PrepareError> {
    say(&recover());
    let p = Prepared::new(spec, Side::Part)?;
    say(&p.notes);
    let doc = p.document(&["native"]);
    // A round's document is read by the run's own process only.
    let mut writer =
        if spec.round.is_some() { RunWriter::create_private(&spec.results, doc)? } else { RunWriter::create(&spec.results, doc)? };
    Ok(execute(&p.plan, &p.execution, &mut writer, &mut *progress::for_run(spec.quiet))?)
}

/// Lines for stderr, which the host shows.
fn say(lines: &[String]) {
    lines.iter().for_each(|l| eprintln!("oscycles: {l}"));
}

/// [`measure`] in an environment's child or a guest's /init: an error is
/// said on stderr (the host shows the end of it) and becomes the exit
/// code, 2 for bad usage, else 1; 0 when the run is complete.
pub fn measure_in_child(spec: &RunSpec) -> u8 {
    match measure(spec) {
        Ok(RunStatus::Complete) => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("oscycles: {e}");
            if matches!(e, PrepareError::Usage(_)) { 2 } else { 1 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_takes_the_parents_tsc_rate_instead_of_calibrating() {
        let tmp = tempfile::tempdir().unwrap();
        let spec = RunSpec {
            suites: vec!["syscall".into()],
            tsc_hz: Some(2.5e9),
            round: Some(1),
            results: tmp.path().join("results"),
            scratch: Some(tmp.path().into()),
            ..RunSpec::default()
        };
        let p = Prepared::new(&spec, Side::Part).unwrap();
        // A calibration never lands on the parent's number exactly.
        assert_eq!(p.clock.tsc_hz, 2.5e9);
        assert_eq!(p.execution.spec.tsc_hz, Some(2.5e9), "and hands it on to its own rounds");
        let doc = p.document(&["native"]);
        assert_eq!(doc.host.clock.tsc_hz, 2.5e9);
        let spent = doc.settings.spent.expect("what preparing took is in the document");
        assert!(spent.prepare_s >= spent.calibration_s && spent.facts_s >= 0.0, "{spent:?}");
        // Handed the run's host facts, a round takes them, with its own clock.
        let facts = crate::measure::host::HostFacts { hostname: "the-runs-host".into(), ..doc.host.clone() };
        let handed = RunSpec { host: Some(facts), tsc_hz: Some(3e9), ..spec };
        let doc = Prepared::new(&handed, Side::Part).unwrap().document(&["native"]);
        assert_eq!((doc.host.hostname.as_str(), doc.host.clock.tsc_hz), ("the-runs-host", 3e9));
    }

    #[test]
    fn under_the_instruction_counter_a_case_takes_few_batches_of_the_harness_own_length() {
        // execution() itself: Prepared::new would set aarch64's clock scale for the whole test process.
        let clock = ClockInfo { step_cycles: None, ..clock::known_tsc(1e9) };
        let spec = RunSpec { suites: vec!["lmbench".into()], rounds: 1, ..RunSpec::default() };
        let timed = execution(&spec, vec![0], &clock, Path::new("/nonexistent")).unwrap();
        assert!(timed.suite_batches, "timed: LMBench's 100 ms batches");
        assert_eq!(timed.full.batches, 15);
        let counted =
            execution(&RunSpec { instruction_counter: true, ..spec }, vec![0], &clock.counting(true), Path::new("/nonexistent")).unwrap();
        assert!(!counted.suite_batches, "counted: the harness's own 5 ms (5 * 10^6 instructions)");
        assert_eq!((counted.full.batches, counted.quick.batches), (crate::run::spec::COUNTED_BATCHES, crate::run::spec::COUNTED_BATCHES));
        assert_eq!(counted.full.target_batch_cycles, 5_000_000);
    }
}
