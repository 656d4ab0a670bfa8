//! Commands that set runs against each other: `compare` (two runs, or a run
//! and a baseline, with the regression gate) and `baseline` (save, list).

use super::read_doc;
use anyhow::Result;
use oscycles::app::cli::{self, UsageError};
use oscycles::data::compare::Method;
use oscycles::data::documents;
use oscycles::data::results::RunDoc;
use oscycles::present::report;
use std::path::PathBuf;
use std::process::ExitCode;

mod interleave;

pub fn baseline_path(results: &std::path::Path, name: &str) -> Result<PathBuf, UsageError> {
    documents::valid_id(name).map_err(|e| UsageError(format!("baseline name: {e}")))?;
    Ok(results.join("baselines").join(format!("{name}.json")))
}

/// `oscycles compare A B` or `compare --baseline NAME RUN`, with the gate;
/// or `compare --interleave R` measuring A and B first.
pub fn compare(a: cli::grammar::CompareArgs) -> Result<ExitCode> {
    if let Some(how) = a.interleave {
        if !a.runs.is_empty() {
            return Err(UsageError("--interleave measures A and B itself: give no runs (their options go in --a and --b)".into()).into());
        }
        if a.budget.is_some() && how != cli::values::InterleaveArg::Auto {
            return Err(UsageError("--budget is for --interleave auto (a number of rounds takes the time it takes)".into()).into());
        }
        let cli::values::InterleaveArg::Rounds(rounds) = how else { return until_settled(&a) };
        let Some((da, db, names)) = interleave::measure(&a, rounds as usize)? else { return Ok(ExitCode::from(130)) };
        let policy = oscycles::analysis::uncertainty::verdict::Thresholds { margin: a.margin, ..Default::default() };
        let rows = oscycles::data::compare::rows_paired_if(true, &da, &db, &policy);
        return judged(&a, &da, &db, &names, &rows, (Method::Paired, PAIRED));
    }
    let (da, db, names) = match (&a.baseline, a.runs.as_slice()) {
        (Some(name), [run]) => {
            let path = baseline_path(&a.results, name)?;
            if !path.exists() {
                return Err(
                    UsageError(format!("no baseline '{name}' in {} (oscycles baseline save {name} RUN...)", a.results.display())).into()
                );
            }
            (read_doc(&path)?, read_doc(run)?, (format!("baseline {name}"), run.display().to_string()))
        }
        (Some(_), _) => return Err(UsageError("with --baseline, give just the run to check".into()).into()),
        (None, [x, y]) => (read_doc(x)?, read_doc(y)?, (x.display().to_string(), y.display().to_string())),
        (None, _) => return Err(UsageError("compare needs two runs A B, or --baseline NAME and one run".into()).into()),
    };
    let policy = oscycles::analysis::uncertainty::verdict::Thresholds { margin: a.margin, ..Default::default() };
    judged(&a, &da, &db, &names, &oscycles::data::compare::rows(&da, &db, &policy), (Method::Independent, ""))
}

const PAIRED: &str = "(A and B took turns round by round: each verdict rests on paired rounds, the median of per-round ratios and a Wilcoxon signed-rank test, not on Mann-Whitney)";

const SEQUENTIAL: &str = "(A and B took turns in pairs of rounds, which first drawn at random, until each cell had a verdict: each verdict rests on a confidence sequence for the median per-pair ratio (signs of the pairs, Howard and Ramdas 2022), valid however often it was looked at; its interval is the sequence's, its p-value none; cells counted exactly settle on one pair)";

/// `compare --interleave auto`: pairs until the cells settle or the budget
/// ends; the comparison, the cells still unsettled with the pairs each
/// would need, what a pair cost, and 130 when interrupted.
fn until_settled(a: &cli::grammar::CompareArgs) -> Result<ExitCode> {
    use oscycles::analysis::uncertainty::verdict::Verdict;
    let policy = oscycles::analysis::uncertainty::verdict::Thresholds { margin: a.margin, ..Default::default() };
    let Some(settled) = interleave::measure_auto(a, &policy)? else {
        eprintln!("interrupted before the first pair was measured");
        return Ok(ExitCode::from(130));
    };
    let ([da, db], out) = (&settled.docs, &settled.outcome);
    let rows = oscycles::data::compare::rows_with(da, db, &|ma, mb, seed| {
        oscycles::data::compare::judge_sequential(ma, mb, &policy).unwrap_or_else(|| oscycles::data::compare::judge(ma, mb, &policy, seed))
    });
    let code = judged(a, da, db, &settled.names, &rows, (Method::Sequential, SEQUENTIAL))?;
    let count = |v: Verdict| rows.iter().filter(|r| r.judged.verdict == v).count();
    let out_to = |line: String| if a.json { eprintln!("{line}") } else { println!("{line}") };
    out_to(format!(
        "{} pairs in {:.0} s ({}): {} faster, {} slower, {} same, {} unsure",
        out.rounds,
        out.elapsed_s,
        out.ended.describe(),
        count(Verdict::Faster),
        count(Verdict::Slower),
        count(Verdict::Same),
        count(Verdict::Unsure)
    ));
    if let (Some(first), Some(last)) = (out.round_s.first(), out.round_s.last()) {
        let path = settled.run.display().to_string();
        let run = report::for_terminal(&path);
        out_to(format!("a pair took {first:.1} s at the start, {last:.1} s at the end (where it went: oscycles show {run} --time)"));
    }
    for u in &out.unsettled {
        let need = u.rounds_needed.map_or("?".into(), |n| n.to_string());
        let waited = u.waiting_since.map_or(String::new(), |k| format!(" (not measured after pair {k}: more than the time left)"));
        let cell = format!("{} {}", u.benchmark, u.cell);
        out_to(format!("  unsettled: {}: would need about {need} pairs{waited}", report::for_terminal(cell.trim())));
    }
    Ok(if oscycles::measure::watchdog::interrupted().is_some() { ExitCode::from(130) } else { code })
}

/// The comparison of B with A printed (tables or JSON), its header saying
/// how the verdicts were reached (`method`), with `note` below the tables,
/// and the gate's exit code.
fn judged(
    a: &cli::grammar::CompareArgs,
    da: &RunDoc,
    db: &RunDoc,
    names: &(String, String),
    rows: &[oscycles::data::compare::Row],
    (method, note): (Method, &str),
) -> Result<ExitCode> {
    let policy = oscycles::analysis::uncertainty::verdict::Thresholds { margin: a.margin, ..Default::default() };
    if rows.is_empty() {
        return Err(UsageError(format!("'{}' and '{}' have no measured case in common", names.0, names.1)).into());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", report::for_terminal(&report::compare::render_by(da, db, rows, &policy, method)));
        if !note.is_empty() {
            println!("{note}");
        }
    }
    let Some(limit) = a.fail_above else { return Ok(ExitCode::SUCCESS) };
    let bad = oscycles::data::compare::regressions(rows, limit);
    if bad.is_empty() {
        println!("gate: no cell is significantly worse than {} by more than {:.1}%: pass", names.0, limit * 100.0);
        return Ok(ExitCode::SUCCESS);
    }
    println!("gate: {} cells significantly worse than {} by more than {:.1}%: FAIL", bad.len(), names.0, limit * 100.0);
    for r in bad {
        println!("  {} {} {}: rel. {}", r.benchmark, report::for_terminal(&r.params), r.metric, report::compare::ratio_cell(&r.judged));
    }
    Ok(ExitCode::from(1))
}

/// `oscycles baseline save NAME RUN...` and `baseline list`.
pub fn baseline(action: cli::grammar::BaselineAction) -> Result<ExitCode> {
    match action {
        cli::grammar::BaselineAction::Save { name, runs, results } => {
            let path = baseline_path(&results, &name)?;
            let docs = runs.iter().map(|r| documents::read(r).map_err(|e| UsageError(e.to_string()))).collect::<Result<Vec<_>, _>>()?;
            let n = docs.len();
            let mut pooled = oscycles::run::rounds::pool(docs, oscycles::data::compare::seed_of(&name)).expect("at least one run");
            pooled.id = format!("baseline-{name}");
            // Statistics over the pooled runs that overflow would be written as null, never to be read back.
            oscycles::data::results::check::check(&pooled)
                .map_err(|e| UsageError(format!("baseline {name}: the pooled runs give {e}; nothing was saved")))?;
            oscycles::base::fsafe::check_dir(path.parent().expect("a directory"), true).map_err(|e| UsageError(e.to_string()))?;
            documents::write_atomically(&path, serde_json::to_string_pretty(&pooled)?)
                .map_err(|e| UsageError(format!("cannot write '{}': {e}", path.display())))?;
            println!(
                "baseline {name}: {n} runs, {} cells, {} rounds, saved as {}",
                pooled.results.len(),
                pooled.settings.rounds,
                path.display()
            );
        }
        cli::grammar::BaselineAction::List { results } => {
            let dir = results.join("baselines");
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(String::from)).collect())
                .unwrap_or_default();
            names.sort();
            for n in &names {
                println!("{}", report::for_terminal(n));
            }
            println!("{} baselines in {}", names.len(), dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
