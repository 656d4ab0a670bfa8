//! `oscycles run`, and the processes a run starts, which measure its spec
//! here too: a round (`__round`), an environment's child (`__env-child`)
//! and a guest's /init. All of them check the spec, plan its cases and
//! hand them to the runner; only `run` itself goes over environments,
//! records the run in the store and prints.

use super::private_dir;
use super::show::{Tables, print_results};
use anyhow::{Context, Result};
use oscycles::app::cli::{self, EnvChildArgs, RoundArgs, RunArgs, UsageError};
use oscycles::base::named::Named;
use oscycles::data::results::{RunDoc, RunStatus};
use oscycles::data::store::{self, RunWriter};
use oscycles::families::bench::scratch::RunDir;
use oscycles::measure::clock::{self, ClockInfo};
use oscycles::measure::placement::{self, Policy};
use oscycles::measure::watchdog;
use oscycles::present::report;
use oscycles::run::env::guest::GuestSpec;
use oscycles::run::env::{Env, EnvOptions};
use oscycles::run::isolation::{self, RT_PRIORITY};
use oscycles::run::progress;
use oscycles::run::registry::{Suite, Venue};
use oscycles::run::rounds::Rounds;
use oscycles::run::runner::{self, Execution, PlannedCase};
use oscycles::run::spec::RunSpec;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// `oscycles run`: check everything, measure in every environment, record
/// the run, print its summary (or the document with --json).
pub fn run(args: RunArgs) -> Result<ExitCode> {
    recover();
    let spec = args.spec()?;
    let envs = cli::resolve_names::<Env>("--env", &args.env)?;
    let Checked { suites, plan, cpus } = checked(&spec, true)?;
    let run_dir = private_dir(&scratch_base(&spec))?;
    let mut opts = env_options(&args, run_dir.path())?;
    check_fits(&spec, &opts, &plan, &envs)?;
    check_rt(&spec)?;
    let (mut ex, clock) = execution(&spec, cpus, &run_dir)?;
    if let (Some(r), Some(name)) = (ex.rounds.as_mut(), spec.auto.as_ref().and_then(|a| a.until_verdict.as_deref())) {
        r.baseline = Some(until_verdict_baseline(&spec, name, &plan)?);
    }
    let names: Vec<&str> = envs.iter().map(|e| e.name()).collect();
    let cases = plan.len() * spec.loads.len() * spec.isolations.len() * envs.len();
    let mut doc = spec.document(&names, cases, ex.cpus.clone(), ex.harness_for(suites[0].scale), clock);
    // What would make this run noisy, said before it starts (doctor's warnings).
    let findings = oscycles::present::doctor::check(&doc.settings.cpus);
    doc.host.warnings.extend(report::doctor::header_warnings(&findings).into_iter().map(|w| w.trim_start_matches("warning: ").to_string()));
    // In the store from its start, so that a run killed with SIGKILL is
    // found there (and marked killed) by the next command that opens it; a
    // store that cannot take it refuses the run before anything is measured.
    let db_path = spec.db_path();
    let loc = oscycles::data::db::Location::parse(&db_path);
    record(&loc, &doc, &RunWriter::path_in(&spec.results, &doc))
        .map_err(|e| UsageError(format!("--db {loc}: {e}; nothing was measured (the store must accept the run before its first case)")))?;
    let mut writer = RunWriter::create(&spec.results, doc)?;
    // A guest that fails leaves its console beside the run's JSON.
    opts.keep_console = Some(writer.path().with_extension(""));
    if !args.json {
        print!("{}", report::for_terminal(&report::header::render(&writer.doc, true)));
    }
    let mut rep = progress::for_run(spec.quiet);
    rep.run_started(cases, plan.len(), writer.path());
    let status = match runner::run(&envs, &plan, &ex, &spec, &opts, &mut writer, &mut *rep) {
        Ok(s) => s,
        // A full disk or another write that failed: the reason where it fits (issue 43, item 7).
        Err(e) => return Err(ended_by(&loc, &mut writer, e).into()),
    };
    drop(run_dir);
    // The store is a second home: the JSON stays the record, so a store that
    // cannot be written costs a warning, not the run.
    if let Err(e) = record(&loc, &writer.doc, writer.path()) {
        eprintln!("oscycles: warning: {e}");
    }
    finish(&writer, status, &args)
}

/// A run the store could not keep going (a full disk): its document and the
/// store say `failed` and why, where they can; stderr always does.
fn ended_by(loc: &oscycles::data::db::Location, writer: &mut RunWriter, e: store::StoreError) -> store::StoreError {
    let kept = writer.fail(&e.to_string());
    if let Err(d) = record(loc, &writer.doc, writer.path()) {
        eprintln!("oscycles: warning: {d}");
    }
    match kept {
        Ok(()) => eprintln!("oscycles: the run ended failed; {} says why", writer.path().display()),
        Err(w) => eprintln!("oscycles: the run ended failed; {} could not say so either: {w}", writer.path().display()),
    }
    e
}

/// `--until-verdict NAME`: a run document, or a baseline saved under the
/// results; refused when it measured none of the plan's benchmarks.
fn until_verdict_baseline(spec: &RunSpec, name: &str, plan: &[PlannedCase]) -> Result<RunDoc, UsageError> {
    let path = if Path::new(name).is_file() { Path::new(name).to_path_buf() } else { super::compare::baseline_path(&spec.results, name)? };
    if !path.exists() {
        return Err(UsageError(format!(
            "--until-verdict {name}: neither a run document nor a baseline in {} (oscycles baseline save {name} RUN...)",
            spec.results.display()
        )));
    }
    let doc = super::read_doc(&path)?;
    if !doc.results.iter().any(|r| plan.iter().any(|p| p.benchmark.id == r.benchmark)) {
        return Err(UsageError(format!("--until-verdict {name}: it measured none of the benchmarks this run plans")));
    }
    Ok(doc)
}

/// The end of `run`: the document (--json) or the summary, and the exit code.
fn finish(writer: &RunWriter, status: RunStatus, args: &RunArgs) -> Result<ExitCode> {
    let doc = &writer.doc;
    if args.json {
        println!("{}", serde_json::to_string_pretty(doc)?);
    } else {
        println!();
        print_results(doc, writer.path(), if args.full { Tables::Full } else { Tables::None });
        println!("saved: {} ({} of {} cases, {:?})", writer.path().display(), doc.results.len(), doc.planned_cases, status);
    }
    Ok(match status {
        RunStatus::Interrupted => {
            eprintln!("oscycles: interrupted by signal {}; the results measured so far are saved", watchdog::interrupted().unwrap_or(0));
            ExitCode::from(130)
        }
        RunStatus::Failed => {
            let why = doc.reason.as_deref().unwrap_or("each failed or was not applicable");
            eprintln!("oscycles: no case measured successfully ({}; the reasons are in the document)", report::for_terminal(why));
            ExitCode::from(1)
        }
        _ => ExitCode::SUCCESS,
    })
}

/// Measures `spec` in this process and the rounds it starts, its document in
/// `spec.results`, printing nothing but progress: a round's process and the
/// run inside an environment. Exit code 0, or 130 when interrupted.
pub fn measure(spec: &RunSpec) -> Result<u8> {
    recover();
    let Checked { suites, plan, cpus } = checked(spec, false)?;
    let run_dir = private_dir(&scratch_base(spec))?;
    check_rt(spec)?;
    let (ex, clock) = execution(spec, cpus, &run_dir)?;
    let cases = plan.len() * spec.loads.len() * spec.isolations.len();
    let doc = spec.document(&["native"], cases, ex.cpus.clone(), ex.harness_for(suites[0].scale), clock);
    let mut writer = RunWriter::create(&spec.results, doc)?;
    let status = runner::execute(&plan, &ex, &mut writer, &mut *progress::for_run(spec.quiet))?;
    Ok(if status == RunStatus::Interrupted { 130 } else { 0 })
}

/// `oscycles __round --spec JSON`: one round of a run.
pub fn round(a: RoundArgs) -> Result<ExitCode> {
    let spec: RunSpec = serde_json::from_str(&a.spec).map_err(|e| UsageError(format!("--spec: {e}")))?;
    measure(&spec).map(ExitCode::from)
}

/// Measures a spec for an environment's child or a guest's /init; errors
/// are said on stderr (the host shows the end of it) and become the exit
/// code: 2 for bad usage, else 1.
pub fn measure_in_child(spec: &RunSpec) -> u8 {
    match measure(spec) {
        Ok(0) => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("oscycles: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() { 2 } else { 1 }
        }
    }
}

/// `oscycles __env-child --env NAME --spec JSON`: the child of an environment run.
pub fn env_child(a: EnvChildArgs) -> Result<ExitCode> {
    let spec: GuestSpec = serde_json::from_str(&a.spec).map_err(|e| UsageError(format!("--spec: {e}")))?;
    let env = Env::parse(&a.env).ok_or_else(|| UsageError(format!("--env: unknown '{}'; valid: {}", a.env, Env::names())))?;
    Ok(ExitCode::from(env.serve(&spec, &measure_in_child)))
}

/// Puts back what a dead run left: a journal left by a SIGKILLed isolated
/// run is undone first (until then this process' allowed CPUs are that
/// run's leftovers), and load groups are removed.
fn recover() {
    watchdog::install();
    let mut restored = false;
    for r in isolation::recover_stale() {
        match r {
            Ok(line) => {
                eprintln!("oscycles: {line}");
                restored = true;
            }
            Err(e) => eprintln!("oscycles: warning: {e}"),
        }
    }
    if restored {
        // This process was born while the dead run had everything else moved
        // away from its CPU, and Linux keeps the narrowed mask: take the
        // parent's again (restored from the journal with the rest).
        // SAFETY: getppid has no preconditions.
        let parent = placement::affinity_of(unsafe { libc::getppid() } as u32);
        if !parent.is_empty() && placement::set_affinity(&parent).is_ok() {
            eprintln!("oscycles: CPUs allowed again: {}", placement::format_cpus(&parent));
        }
    }
    oscycles::measure::cgroup::remove_stale_load_groups();
}

fn scratch_base(spec: &RunSpec) -> std::path::PathBuf {
    spec.scratch.clone().unwrap_or_else(std::env::temp_dir)
}

/// A spec as this process will measure it.
struct Checked {
    suites: Vec<&'static Suite>,
    plan: Vec<PlannedCase>,
    /// The CPUs here.
    cpus: Vec<usize>,
}

/// What this process can check of a spec before measuring anything: its
/// suites, the CPUs here, the directories and the store, and that the plan
/// has a case. A run's children leave out what the host measures itself.
fn checked(spec: &RunSpec, with_host: bool) -> Result<Checked, UsageError> {
    let suites = cli::resolve_suites(&spec.suites.join(","))?;
    let cpus = cli::resolve_cpus(spec.cpus.as_deref().map(placement::format_cpus).as_deref())?;
    store::check_writable(&spec.results, "results", "--results").map_err(|e| UsageError(e.to_string()))?;
    store::check_writable(&scratch_base(spec), "scratch files", "--scratch").map_err(|e| UsageError(e.to_string()))?;
    if with_host {
        oscycles::data::db::Location::parse(&spec.db_path()).check().map_err(|e| UsageError(e.to_string()))?;
    }
    let mut plan = runner::plan_at(&suites, spec.benchmarks.as_deref(), spec.scale);
    runner::keep_where(&mut plan, &spec.cases_where, with_host).map_err(|e| UsageError(e.to_string()))?;
    if let Some(labels) = &spec.cases {
        runner::keep_cases(&mut plan, labels).map_err(|e| UsageError(e.to_string()))?;
    }
    if !with_host {
        plan.retain(|p| p.benchmark.runs() != Venue::FromHost);
    }
    if plan.is_empty() {
        return Err(UsageError("the suites and benchmarks chosen contain no case to run".into()));
    }
    Ok(Checked { suites, plan, cpus })
}

/// --rt is a promise: refused up front where SCHED_FIFO or locking is not permitted.
fn check_rt(spec: &RunSpec) -> Result<()> {
    if spec.rt {
        placement::lock_memory().context("--rt asks for locked memory")?;
        placement::set_policy(Policy::Fifo { priority: RT_PRIORITY }).context("--rt asks for SCHED_FIFO")?;
        placement::set_policy(Policy::Other)?;
    }
    Ok(())
}

/// How the cases run here: the clock (the parent's rate if the spec has
/// it, else calibrated), the harness, the rounds; the clock too.
fn execution(spec: &RunSpec, cpus: Vec<usize>, run_dir: &RunDir) -> Result<(Execution, ClockInfo)> {
    let clock = match spec.tsc_hz {
        Some(hz) if hz > 1e6 => clock::known_tsc(hz),
        _ => clock::calibrate_tsc(5, Duration::from_millis(60)),
    }
    .counting(spec.instruction_counter);
    let hz = clock.tsc_hz;
    let ex = Execution {
        cpus,
        loads: spec.loads.clone(),
        load_cpus: spec.load_cpus.clone(),
        isolations: spec.isolations.clone(),
        exe: Some(std::env::current_exe().context("finding the oscycles binary (it carries the loads)")?),
        // A TSC that moves in steps (emulated) needs batches of many steps.
        quick: spec.harness(hz, true).spanning_steps(clock.step_cycles, (2.0 * hz) as u64),
        full: spec.harness(hz, false).spanning_steps(clock.step_cycles, (2.0 * hz) as u64),
        suite_batches: spec.batch_ms.is_none(),
        timeout: Duration::from_secs(spec.timeout_s),
        scratch: run_dir.path().to_path_buf(),
        mem_bytes: spec.mem_bytes,
        point_ms: spec.point_ms,
        counters: !spec.no_counters,
        rounds: Some(Rounds { spec: RunSpec { tsc_hz: Some(hz), ..spec.clone() }, work: run_dir.path().to_path_buf(), baseline: None }),
    };
    Ok((ex, clock))
}

/// How environments are started: from the command line, in the run's
/// private directory.
fn env_options(args: &RunArgs, work: &Path) -> Result<EnvOptions> {
    Ok(EnvOptions {
        exe: std::env::current_exe().context("finding the oscycles binary (it carries the loads)")?,
        work: work.to_path_buf(),
        kernel: args.kernel.clone(),
        vm_mem_mib: args.vm_mem,
        vm_cpus: args.vm_cpus,
        init_timeout: Duration::from_secs(args.init_timeout),
        run_timeout: Duration::from_secs(args.env_timeout),
        guest_mode: args.guest_mode,
        own: args.own.clone(),
        keep_console: None,
    })
}

/// Records the run, whose JSON is at `path`, in the store.
fn record(loc: &oscycles::data::db::Location, doc: &RunDoc, path: &Path) -> Result<(), oscycles::data::db::DbError> {
    // Absolute, so that the row names the file wherever the store is opened next.
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    oscycles::data::db::Db::open(loc).and_then(|mut db| db.upsert(doc, &path.display().to_string()))
}

/// Refuses, before measuring, what cannot work: memory buffers larger than
/// this machine has free, a guest kernel or QEMU machine type that does not
/// exist, blk cases on a scratch directory without a disk behind it.
fn check_fits(spec: &RunSpec, o: &EnvOptions, plan: &[PlannedCase], envs: &[Env]) -> Result<(), UsageError> {
    if let Some(bytes) = spec.mem_bytes {
        // STREAM holds three arrays of this size at once (bw_mem cp two).
        let need = bytes.saturating_mul(3);
        let avail = oscycles::measure::host::meminfo("MemAvailable").map(|k| k * 1024);
        if let Some(avail) = avail.filter(|&a| need > a) {
            return Err(UsageError(format!(
                "--mem-bytes {}: STREAM needs three arrays of that size ({:.1} GiB) and this machine has {:.1} GiB available; choose at most {}M",
                bytes,
                need as f64 / (1u64 << 30) as f64,
                avail as f64 / (1u64 << 30) as f64,
                (avail / 3) >> 20
            )));
        }
    }
    o.check().map_err(|e| UsageError(e.to_string()))?;
    for env in envs {
        env.check(o).map_err(|e| UsageError(e.to_string()))?;
    }
    if let Some(dir) = &spec.scratch
        && plan.iter().any(|p| p.benchmark.needs_disk())
        && oscycles::families::bench::blk::on_tmpfs(dir)
    {
        return Err(UsageError(format!(
            "--scratch {} is tmpfs, which has no disk behind it and no direct I/O: blk cannot measure there; point --scratch at a directory on a disk filesystem, or leave blk out",
            dir.display()
        )));
    }
    Ok(())
}
