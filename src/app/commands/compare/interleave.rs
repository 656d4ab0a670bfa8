//! `oscycles compare --interleave R --a OPTS --b OPTS`: two configurations
//! (option sets, binaries) measured in one invocation, round by round
//! alternately, so that a host drifting over minutes moves both alike; the
//! comparison then pairs round k of A with round k of B.
//!
//! Each round of a side is one `oscycles run --rounds 1` (a fresh process,
//! as every round is), with the seed of round k on both sides, so both run
//! their cases in the same order. Its document goes under --results; the
//! rounds of a side are pooled in round order into one run (round k of the
//! pooled run is round k of that side), saved beside them.

use anyhow::{Context, Result, bail};
use oscycles::analysis::uncertainty::verdict::Thresholds;
use oscycles::app::cli::UsageError;
use oscycles::app::cli::grammar::CompareArgs;
use oscycles::data::documents;
use oscycles::data::results::RunDoc;
use oscycles::measure::watchdog;
use oscycles::run::rounds;
use oscycles::run::rounds::paired;
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
    let this = std::env::current_exe().map_err(|e| UsageError(format!("finding the oscycles binary: {e}")))?;
    let a_exe = a.a_exe.clone().unwrap_or(this);
    let b_exe = a.b_exe.clone().unwrap_or_else(|| a_exe.clone());
    for exe in [&a_exe, &b_exe] {
        if !exe.is_file() {
            return Err(UsageError(format!("'{}' is not an oscycles binary (no such file)", exe.display())));
        }
    }
    Ok([Side { name: "A", exe: a_exe, options: a_opts }, Side { name: "B", exe: b_exe, options: b_opts }])
}

/// Both sides' pooled runs and their names.
pub type Pooled = (RunDoc, RunDoc, (String, String));

/// Measures both sides `rounds` rounds each, alternately; returns the two
/// pooled runs and their names; None when interrupted (the rounds so far
/// stay in their directory).
pub fn measure(a: &CompareArgs, rounds: usize) -> Result<Option<Pooled>> {
    let sides = sides(a)?;
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(7, |t| t.as_nanos() as u64);
    let dir = results_dir(a)?;
    watchdog::install();
    let mut docs: [Vec<RunDoc>; 2] = [Vec::new(), Vec::new()];
    for k in 0..rounds {
        for i in oscycles::run::rounds::columns::interleaved_order(2, k) {
            let side = &sides[i];
            eprintln!("round {}/{rounds}: {} ({})", k + 1, side.name, side.options.join(" "));
            match round_of(side, &dir, k, rounds::round_seed(seed, k), None, &[]).map_err(|e| refused(&dir, e))? {
                Some(doc) => docs[i].push(doc),
                None => {
                    eprintln!("interrupted in round {} of {rounds}; the rounds so far are in {}", k + 1, dir.display());
                    return Ok(None);
                }
            }
        }
    }
    let [da, db] = docs.map(|d| rounds::pool(d, seed).expect("at least five rounds"));
    let mut names = Vec::new();
    for (side, doc) in sides.iter().zip([&da, &db]) {
        let path = dir.join(format!("{}.json", side.name));
        documents::write_atomically(&path, serde_json::to_string_pretty(doc)?).with_context(|| format!("writing {}", path.display()))?;
        names.push(format!("{} ({})", side.name, path.display()));
    }
    eprintln!("pooled runs: {}", dir.display());
    Ok(Some((da, db, (names[0].clone(), names[1].clone()))))
}

/// `compare --interleave auto`: pairs of rounds until every cell has a
/// verdict or the budget ends (`rounds::paired`), each round measuring only
/// the cells still unsettled (`run --cases`). None when not even one pair
/// was measured.
pub fn measure_auto(a: &CompareArgs, policy: &Thresholds) -> Result<Option<(paired::Outcome, (String, String))>> {
    let sides = sides(a)?;
    if let Some(o) = sides.iter().flat_map(|s| &s.options).find(|o| *o == "--cases" || o.starts_with("--cases=")) {
        return Err(UsageError(format!("--interleave auto sets {o} of each round itself: leave it out of --a and --b")).into());
    }
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(7, |t| t.as_nanos() as u64);
    let dir = results_dir(a)?;
    watchdog::install();
    let budget = std::time::Duration::from_secs_f64(60.0 * a.budget.unwrap_or(10.0));
    let settings = paired::Settings { budget, policy: *policy, seed };
    // What every round would do again, done once: the TSC's rate
    // (calibrated here, on the same host), and the kernel's event counts
    // (a cell's counts do not change between rounds): the first pair counts,
    // later rounds skip the counting pass and its 1.2 s cool-down.
    let hz = oscycles::measure::clock::calibrate_tsc(5, std::time::Duration::from_millis(60)).tsc_hz;
    let extra = |k: usize| {
        let mut o = vec!["--tsc-hz".to_string(), format!("{hz:.0}")];
        if k > 0 {
            o.push("--no-counters".into());
        }
        o
    };
    let t = std::time::Instant::now();
    let outcome = paired::drive(
        &settings,
        &mut |ask| {
            if watchdog::interrupted().is_some() {
                return Ok(paired::Round::Interrupted);
            }
            let side = &sides[ask.side];
            let cells = ask.cases.map_or("every cell".to_string(), |c| format!("{} cells", c.len()));
            eprintln!("pair {}: {} ({cells})", ask.k + 1, side.name);
            match round_of(side, &dir, ask.k, ask.seed, ask.cases, &extra(ask.k)) {
                Ok(Some(doc)) => Ok(paired::Round::Measured(Box::new(doc))),
                Ok(None) => Ok(paired::Round::Interrupted),
                // Bad options are the user's (the first pair shows them);
                // anything else loses the pair.
                Err(e) if e.downcast_ref::<UsageError>().is_some() => Err(refused(&dir, e)),
                Err(e) => Ok(paired::Round::Failed(format!("{e:#}"))),
            }
        },
        &mut || t.elapsed(),
        &mut |line| eprintln!("{line}"),
    )?;
    let Some(outcome) = outcome else { return Ok(None) };
    let mut names = Vec::new();
    for (side, doc) in sides.iter().zip(&outcome.docs) {
        let path = dir.join(format!("{}.json", side.name));
        documents::write_atomically(&path, serde_json::to_string_pretty(doc)?).with_context(|| format!("writing {}", path.display()))?;
        names.push(format!("{} ({})", side.name, path.display()));
    }
    eprintln!("pooled runs: {}", dir.display());
    Ok(Some((outcome, (names[0].clone(), names[1].clone()))))
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

/// The directory of this invocation's rounds, under --results.
fn results_dir(a: &CompareArgs) -> Result<PathBuf, UsageError> {
    let stamp: String = oscycles::data::results::now_rfc3339().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let name = format!("interleaved-{stamp}-{}", std::process::id());
    // --results checked, the rounds' directory made new in it (one already there, whoever made it, is refused).
    let made = super::super::store::out_dir(&a.results)?.make_dir(&name).map_err(|e| UsageError(e.to_string()))?;
    Ok(made.path().to_path_buf())
}

/// Round k of one side, `run --rounds 1 --seed S` in a process of its
/// own, of the cases `cases` (None: all): its document, None when it was
/// interrupted.
fn round_of(side: &Side, dir: &Path, k: usize, seed: u64, cases: Option<&[String]>, extra: &[String]) -> Result<Option<RunDoc>> {
    let results = dir.join(format!("{}-round-{k}", side.name));
    let mut cmd = Command::new(&side.exe);
    cmd.arg("run").args(&side.options).args(["--rounds", "1", "--quiet", "--seed", &seed.to_string()]);
    // --no-counters given twice is refused: only if the user did not.
    cmd.args(extra.iter().filter(|o| !side.options.contains(o)));
    if let Some(cases) = cases {
        let list = dir.join(format!("{}-round-{k}.cases", side.name));
        oscycles::base::fsafe::write_new(&list, cases.join("\n") + "\n").with_context(|| format!("writing {}", list.display()))?;
        cmd.arg("--cases").arg(list);
    }
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
