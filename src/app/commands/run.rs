//! `oscycles run`, and the processes a run starts, which measure its spec
//! here too: a round (`__round`), an environment's child (`__env-child`)
//! and a guest's /init. All of them check the spec, plan its cases and
//! hand them to the runner; only `run` itself goes over environments,
//! records the run in the store and prints.

use super::show::{Tables, print_results};
use anyhow::{Context, Result};
use oscycles::app::cli::UsageError;
use oscycles::app::cli::grammar::{EnvChildArgs, RoundArgs};
use oscycles::app::cli::run::RunArgs;
use oscycles::base::named::Named;
use oscycles::data::documents::{DocumentError, RunWriter};
use oscycles::data::results::{RunDoc, RunStatus};
use oscycles::measure::watchdog;
use oscycles::present::report;
use oscycles::run::env::environment::Env;
use oscycles::run::env::guest::GuestSpec;
use oscycles::run::plan::PlannedCase;
use oscycles::run::prepared::{self, PrepareError, Prepared, Side};
use oscycles::run::progress;
use oscycles::run::runner::{self, Environments};
use oscycles::run::spec::RunSpec;
use std::path::Path;
use std::process::ExitCode;

/// `oscycles run`: check everything, measure in every environment, record
/// the run, print its summary (or the document with --json).
pub fn run(args: RunArgs) -> Result<ExitCode> {
    say(&prepared::recover());
    let spec = args.spec()?;
    let mut p = Prepared::new(&spec, Side::Host).map_err(usage)?;
    say(&p.notes);
    let list = args.envs()?;
    let exe = p.execution.exe.clone().context("finding the oscycles binary (it carries the loads)")?;
    let mut envs = Environments { list, options: args.env_options(exe, p.execution.scratch.clone()) };
    envs.options.cpus = p.execution.cpus.clone();
    envs.list = oscycles::run::env::columns(&envs.list, &envs.options).map_err(|e| UsageError(e.to_string()))?;
    check_fits(&p, &envs)?;
    if let (Some(r), Some(name)) = (p.execution.rounds.as_mut(), spec.auto.as_ref().and_then(|a| a.until_verdict.as_deref())) {
        r.baseline = Some(until_verdict_baseline(&spec, name, &p.plan)?);
    }
    let names: Vec<&str> = envs.list.iter().map(|e| e.name()).collect();
    let mut doc = p.document(&names);
    let cases = doc.planned_cases;
    // What would make this run noisy, said before it starts (doctor's warnings).
    let findings = oscycles::measure::checks::check(&doc.settings.cpus);
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
    envs.options.keep_console = Some(writer.path().with_extension(""));
    if !args.json {
        print!("{}", report::for_terminal(&report::header::render(&writer.doc, true)));
    }
    let mut rep = progress::for_run(spec.quiet);
    rep.run_started(cases, p.plan.len(), writer.path());
    let status = match runner::run(&p, &envs, &mut writer, &mut *rep) {
        Ok(s) => s,
        // A full disk or another write that failed: the reason where it fits (issue 43, item 7).
        Err(e) => return Err(ended_by(&loc, &mut writer, e).into()),
    };
    drop(p);
    // The store is a second home: the JSON stays the record, so a store that
    // cannot be written costs a warning, not the run.
    if let Err(e) = record(&loc, &writer.doc, writer.path()) {
        eprintln!("oscycles: warning: {e}");
    }
    finish(&writer, status, &args)
}

/// Lines for stderr.
fn say(lines: &[String]) {
    lines.iter().for_each(|l| eprintln!("oscycles: {l}"));
}

/// A spec this process cannot measure: bad usage (exit code 2), or a failure.
fn usage(e: PrepareError) -> anyhow::Error {
    match e {
        PrepareError::Usage(why) => UsageError(why).into(),
        e => anyhow::Error::from(e),
    }
}

/// A run the store could not keep going (a full disk): its document and the
/// store say `failed` and why, where they can; stderr always does.
fn ended_by(loc: &oscycles::data::db::Location, writer: &mut RunWriter, e: DocumentError) -> DocumentError {
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

/// Longest spec a round reads from stdin (a run of every suite's cases
/// with their inner counts is some 100 KB).
const ROUND_SPEC_MAX: u64 = 64 << 20;

/// `oscycles __round --spec JSON|-`: one round of a run, measured by the
/// library; 130 when interrupted.
pub fn round(a: RoundArgs) -> Result<ExitCode> {
    let text = match a.spec.as_str() {
        "-" => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::Read::take(std::io::stdin(), ROUND_SPEC_MAX), &mut s)
                .map_err(|e| UsageError(format!("--spec -: reading stdin: {e}")))?;
            s
        }
        json => json.to_string(),
    };
    let spec: RunSpec = serde_json::from_str(&text).map_err(|e| UsageError(format!("--spec: {e}")))?;
    let status = prepared::measure(&spec).map_err(usage)?;
    Ok(ExitCode::from(if status == RunStatus::Interrupted { 130 } else { 0 }))
}

/// `oscycles __env-child --env NAME --spec JSON`: the child of an environment run.
pub fn env_child(a: EnvChildArgs) -> Result<ExitCode> {
    let spec: GuestSpec = serde_json::from_str(&a.spec).map_err(|e| UsageError(format!("--spec: {e}")))?;
    let env = Env::parse(&a.env).ok_or_else(|| UsageError(format!("--env: unknown '{}'; valid: {}", a.env, Env::names())))?;
    Ok(ExitCode::from(env.serve(&spec)))
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
fn check_fits(p: &Prepared, envs: &Environments) -> Result<(), UsageError> {
    let spec = p.spec();
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
    envs.options.check().map_err(|e| UsageError(e.to_string()))?;
    for env in &envs.list {
        env.check(&envs.options).map_err(|e| UsageError(e.to_string()))?;
    }
    if let Some(dir) = &spec.scratch
        && p.plan.iter().any(|p| p.benchmark.needs_disk())
        && oscycles::families::bench::blk::on_tmpfs(dir)
    {
        return Err(UsageError(format!(
            "--scratch {} is tmpfs, which has no disk behind it and no direct I/O: blk cannot measure there; point --scratch at a directory on a disk filesystem, or leave blk out",
            dir.display()
        )));
    }
    Ok(())
}
