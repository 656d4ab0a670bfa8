//! `oscycles compare --interleave R --a OPTS --b OPTS`: two configurations
//! (option sets, binaries) measured in one invocation, round by round, so
//! that a host drifting over minutes moves both alike; the comparison then
//! pairs round k of A with round k of B.
//!
//! `--interleave auto`: A and B are the two columns of the loop that
//! measures until cells settle (`rounds::settle`), held by this one
//! process: both sides are prepared here once (the TSC calibrated once,
//! both plans made once), each round is a fresh process of its side's
//! binary (`__round`, its spec and case list on its stdin) merged into one
//! run document as it saves, in a directory this invocation made; the
//! two sides' runs are written beside it at the end.
//!
//! `--interleave N`: each round of a side is one `oscycles run --rounds 1`
//! (a fresh process, as every round is), with the seed of round k on both
//! sides, so both run their cases in the same order. Its document goes
//! under the invocation's directory; the rounds of a side are pooled in
//! round order into one run (round k of the pooled run is round k of that
//! side), saved beside them.

use anyhow::{Context, Result, bail};
use clap::Parser;
use oscycles::analysis::uncertainty::verdict::Thresholds;
use oscycles::app::cli::UsageError;
use oscycles::app::cli::grammar::{Cli, Command as CliCommand, CompareArgs};
use oscycles::base::fsafe::OutDir;
use oscycles::data::documents::{self, RunWriter};
use oscycles::data::results::RunDoc;
use oscycles::data::results::adaptive::{Auto, MAX_ROUNDS, Outcome};
use oscycles::measure::watchdog;
use oscycles::run::prepared::{Prepared, Side as Part};
use oscycles::run::progress;
use oscycles::run::rounds::{self, Repeated, settle};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One side: its name, binary and `run` options.
struct Side {
    name: &'static str,
    exe: PathBuf,
    options: Vec<String>,
}

/// Options the rounds set themselves, refused in --a and --b.
const OWN_OPTIONS: [&str; 9] = ["--rounds", "--seed", "--results", "--db", "--json", "--until-verdict", "--tsc-hz", "--quiet", "-q"];

fn sides(a: &CompareArgs) -> Result<[Side; 2], UsageError> {
    let split = |o: &Option<String>| o.as_deref().unwrap_or("").split_whitespace().map(String::from).collect::<Vec<_>>();
    let a_opts = split(&a.a_options);
    let b_opts = if a.b_options.is_some() { split(&a.b_options) } else { a_opts.clone() };
    for o in a_opts.iter().chain(&b_opts) {
        if let Some(own) = OWN_OPTIONS.iter().find(|own| o == *own || o.starts_with(&format!("{own}="))) {
            return Err(UsageError(format!("--interleave sets {own} of each round itself: leave it out of --a and --b")));
        }
    }
    let this = oscycles::base::fsafe::own_exe().map_err(|e| UsageError(format!("finding the oscycles binary: {e}")))?;
    // A binary the caller names runs by its real path, checked: no other
    // user can change it or a directory above it (it runs as the caller).
    let named = |flag: &str, exe: &Option<PathBuf>| -> Result<Option<PathBuf>, UsageError> {
        let checked = |p: &std::path::Path| {
            if !p.is_file() {
                return Err(UsageError(format!("{flag} '{}' is not an oscycles binary (no such file)", p.display())));
            }
            oscycles::base::fsafe::trusted_program(p).map_err(|e| UsageError(format!("{flag}: {e}")))
        };
        exe.as_deref().map(checked).transpose()
    };
    let a_exe = named("--a-exe", &a.a_exe)?.unwrap_or(this);
    let b_exe = named("--b-exe", &a.b_exe)?.unwrap_or_else(|| a_exe.clone());
    Ok([Side { name: "A", exe: a_exe, options: a_opts }, Side { name: "B", exe: b_exe, options: b_opts }])
}

/// Both sides' pooled runs and their names.
pub type Pooled = (RunDoc, RunDoc, (String, String));

/// Measures both sides `rounds` rounds each, alternately; returns the two
/// pooled runs and their names; None when interrupted (the rounds so far
/// stay in their directory).
pub fn measure(a: &CompareArgs, rounds: usize) -> Result<Option<Pooled>> {
    let sides = sides(a)?;
    let seed = seed_now();
    let (dir, out) = results_dir(a)?;
    watchdog::install();
    let mut docs: [Vec<RunDoc>; 2] = [Vec::new(), Vec::new()];
    for k in 0..rounds {
        for i in settle::interleaved_order(2, k) {
            let side = &sides[i];
            eprintln!("round {}/{rounds}: {} ({})", k + 1, side.name, side.options.join(" "));
            match round_of(side, &dir, k, rounds::round_seed(seed, k)).map_err(|e| refused(&dir, e))? {
                Some(doc) => docs[i].push(doc),
                None => {
                    eprintln!("interrupted in round {} of {rounds}; the rounds so far are in {}", k + 1, dir.display());
                    return Ok(None);
                }
            }
        }
    }
    let [da, db] = docs.map(|d| rounds::pool(d, seed).expect("at least five rounds"));
    let names = save_sides(&out, [&da, &db])?;
    eprintln!("pooled runs: {}", dir.display());
    Ok(Some((da, db, names)))
}

/// What `--interleave auto` ends with: how the loop went, each side's run
/// and their names.
pub struct Settled {
    pub outcome: Outcome,
    pub docs: [RunDoc; 2],
    pub names: (String, String),
    /// The run of both sides (every round's record: `show --time` of it).
    pub run: PathBuf,
}

/// A side as the loop measures it: prepared here once.
struct Prepared2 {
    name: &'static str,
    exe: PathBuf,
    p: Prepared,
}

/// `compare --interleave auto`: rounds of A and B until every cell has a
/// verdict or the budget ends (`rounds::settle`), each round measuring only
/// the cases still open. None when not even one pair was measured.
pub fn measure_auto(a: &CompareArgs, policy: &Thresholds) -> Result<Option<Settled>> {
    let sides = sides(a)?;
    if let Some(o) = sides.iter().flat_map(|s| &s.options).find(|o| *o == "--cases" || o.starts_with("--cases=")) {
        return Err(UsageError(format!("--interleave auto sets {o} of each round itself: leave it out of --a and --b")).into());
    }
    let auto = Auto { budget_min: a.budget.unwrap_or(10.0), target_pct: 100.0 * policy.margin, until_verdict: None };
    let (dir, out) = results_dir(a)?;
    watchdog::install();
    let prepared = prepare_sides(sides, &dir, &auto).map_err(|e| refused(&dir, e))?;
    let mut doc = prepared[0].p.document(&["native"]);
    doc.settings.interleaved = true;
    let mut writer = RunWriter::create(&dir, doc)?;
    let mut rep = progress::for_run(false);
    let layout = settle::Layout {
        tags: prepared.iter().map(|s| Some(s.name.to_string())).collect(),
        names: prepared.iter().map(|s| s.name.to_string()).collect(),
        reference: 0,
        first: 0,
        seed: prepared[0].p.spec().seed,
        across_conditions: true,
        baseline: None,
    };
    let t = std::time::Instant::now();
    let columns = prepared.iter().filter_map(|s| {
        let r = s.p.execution.rounds.as_ref()?;
        Some(Repeated { exe: &s.exe, plan: &s.p.plan, r, spec: &s.p.execution.spec, env: Some(s.name), first: 0 })
    });
    let mut sides = rounds::Fresh { columns: columns.collect(), writer: &mut writer, rep: &mut *rep };
    let outcome = settle::drive(&auto, &layout, &mut sides, &mut || t.elapsed())?;
    outcome.describe().iter().for_each(|l| rep.note(l));
    if !writer.doc.results.iter().any(|r| r.metrics.first().is_some_and(|m| !m.samples.is_empty())) {
        return Ok(None);
    }
    writer.update(|doc| {
        doc.settings.rounds = outcome.rounds;
        doc.settings.adaptive.push(outcome.clone());
        rounds::estimate_all(doc, layout.seed);
    })?;
    oscycles::run::prepared::finish(&mut writer)?;
    let docs = [0, 1].map(|i| side_doc(&writer.doc, &prepared[i], &outcome));
    let names = save_sides(&out, [&docs[0], &docs[1]])?;
    eprintln!("the run of both sides and each side's: {}", dir.display());
    Ok(Some(Settled { outcome, docs, names, run: writer.path().to_path_buf() }))
}

/// Both sides' options as `run` takes them, prepared here: one plan each,
/// the TSC calibrated once (B takes A's rate), the same seed (round k runs
/// its cases in the same order on both sides), rounds until settled.
fn prepare_sides(sides: [Side; 2], dir: &Path, auto: &Auto) -> Result<[Prepared2; 2]> {
    let seed = seed_now();
    let mut hz = None;
    let mut out = Vec::new();
    for side in sides {
        let args = std::iter::once("oscycles".to_string()).chain(["run".to_string()]).chain(side.options.iter().cloned());
        let cli = Cli::try_parse_from(args).map_err(|e| {
            let text = e.to_string();
            let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("refused").trim_start_matches("error: ").to_string();
            UsageError(format!("{}'s options: {first}", side.name))
        })?;
        let CliCommand::Run(args) = cli.command else { unreachable!("parsed as run") };
        let envs = args.envs()?;
        if envs.len() != 1 || !envs[0].in_process() {
            return Err(UsageError(format!(
                "{}'s options: --interleave auto measures both sides in processes of this host; for other environments use --interleave N, or `run --env a,b --rounds auto`",
                side.name
            ))
            .into());
        }
        let mut spec = args.spec()?;
        if spec.conditions() != 1 {
            return Err(UsageError(format!(
                "{}'s options: --interleave auto compares one condition a side (one --load, --isolation and --preempt)",
                side.name
            ))
            .into());
        }
        (spec.seed, spec.rounds, spec.auto, spec.tsc_hz) = (seed, MAX_ROUNDS, Some(auto.clone()), hz);
        (spec.results, spec.quiet) = (dir.to_path_buf(), true);
        let p = Prepared::new(&spec, Part::Part).map_err(|e| UsageError(format!("{}'s options: {e}", side.name)))?;
        hz = Some(p.clock.tsc_hz);
        out.push(Prepared2 { name: side.name, exe: side.exe, p });
    }
    let [a, b]: [Prepared2; 2] = out.try_into().map_err(|_| anyhow::anyhow!("two sides"))?;
    Ok([a, b])
}

/// Side i's run: its own settings and condition, its cells (untagged).
fn side_doc(run: &RunDoc, side: &Prepared2, outcome: &Outcome) -> RunDoc {
    let mut doc = side.p.document(&["native"]);
    doc.id = format!("{}-{}", run.id, side.name);
    (doc.started_at, doc.finished_at, doc.status) = (run.started_at.clone(), run.finished_at.clone(), run.status);
    doc.settings.interleaved = true;
    doc.settings.rounds = outcome.rounds;
    doc.settings.adaptive.push(outcome.clone());
    doc.settings.round_log = run.settings.round_log.clone();
    doc.results = run
        .results
        .iter()
        .filter(|r| r.environment.as_deref() == Some(side.name))
        .map(|r| oscycles::data::results::CaseResult { environment: None, ..r.clone() })
        .collect();
    doc
}

fn seed_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(7, |t| t.as_nanos() as u64)
}

/// Writes each side's run as A.json and B.json in the invocation's
/// directory; returns their names as the comparison shows them.
fn save_sides(out: &OutDir, docs: [&RunDoc; 2]) -> Result<(String, String)> {
    let mut names = Vec::new();
    for (name, doc) in ["A", "B"].into_iter().zip(docs) {
        let file = format!("{name}.json");
        out.write(&file, serde_json::to_string_pretty(doc)?).with_context(|| format!("writing {}", out.path_of(&file).display()))?;
        names.push(format!("{name} ({})", out.path_of(&file).display()));
    }
    Ok((names[0].clone(), names[1].clone()))
}

/// A round's options refused: the directory of this invocation's rounds
/// goes too if no round saved anything in it (issue 43, item 20). Passes
/// the error on.
fn refused(dir: &Path, e: anyhow::Error) -> anyhow::Error {
    // No run document anywhere under it (a round's directory, its case list and store may be there).
    fn saved_nothing(p: &Path) -> bool {
        std::fs::read_dir(p).is_ok_and(|entries| {
            entries.flatten().all(|e| match e.file_type() {
                Ok(t) if t.is_dir() => saved_nothing(&e.path()),
                _ => e.path().extension().is_none_or(|x| x != "json"),
            })
        })
    }
    if e.downcast_ref::<UsageError>().is_some() && saved_nothing(dir) {
        let _ = std::fs::remove_dir_all(dir);
    }
    e
}

/// The directory of this invocation, made under --results (a directory of
/// our own: never through another user's link, never one already there).
fn results_dir(a: &CompareArgs) -> Result<(PathBuf, OutDir), UsageError> {
    let stamp: String = oscycles::data::results::now_rfc3339().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let name = format!("interleaved-{stamp}-{}", std::process::id());
    // --results checked, the rounds' directory made new in it (one already there, whoever made it, is refused).
    let made = super::super::store::out_dir(&a.results)?.make_dir(&name).map_err(|e| UsageError(e.to_string()))?;
    Ok((made.path().to_path_buf(), made))
}

/// Round k of one side, `run --rounds 1 --seed S` in a process of its
/// own: its document, None when it was interrupted.
fn round_of(side: &Side, dir: &Path, k: usize, seed: u64) -> Result<Option<RunDoc>> {
    let results = dir.join(format!("{}-round-{k}", side.name));
    let mut cmd = Command::new(&side.exe);
    cmd.arg("run").args(&side.options).args(["--rounds", "1", "--quiet", "--seed", &seed.to_string()]);
    cmd.arg("--results").arg(&results).arg("--db").arg(dir.join("store.sqlite"));
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    watchdog::die_with_parent(&mut cmd);
    let out = cmd.output().with_context(|| format!("starting {}", side.exe.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A round that ended at SIGINT/SIGTERM (its own 130, or killed by the signal before
    // its handler was in place) is an interruption, not a failure.
    let by_signal = std::os::unix::process::ExitStatusExt::signal(&out.status).is_some_and(|s| s == libc::SIGINT || s == libc::SIGTERM);
    if out.status.code() == Some(130) || by_signal || watchdog::interrupted().is_some() {
        return Ok(None);
    }
    if out.status.code() == Some(2) {
        // The round's first line says what was wrong (clap's usage after it is of `run`, not of compare).
        let first = stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("refused");
        return Err(UsageError(format!("{}'s options: {}", side.name, first.trim_start_matches("error: "))).into());
    }
    if !out.status.success() {
        bail!("{} round {} ended with {}: {}", side.name, k + 1, out.status, stderr.trim());
    }
    let json = std::fs::read_dir(&results)?.flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "json"));
    let path = json.with_context(|| format!("{} round {} saved no document in {}", side.name, k + 1, results.display()))?;
    Ok(Some(documents::read(&path)?))
}
