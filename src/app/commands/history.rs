//! `oscycles report --history` (cells across the stored runs) and the
//! exports continuous-benchmarking services read (`report --bmf`,
//! `--github-benchmark`, `--github-benchmark-bigger`).

use super::{default_db, open_db};
use anyhow::Result;
use oscycles::analysis::uncertainty::verdict::Thresholds;
use oscycles::app::cli::{self, UsageError};
use oscycles::data::db::history::Point;
use oscycles::data::results::{Better, RunDoc};
use oscycles::present::report::export::ci;
use oscycles::present::report::history::{self, HistoryError, Options};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Whether a benchmark id matches a `--bench` selector: the id, its family,
/// or a pattern with `*`.
fn selects(sel: &str, bench: &str) -> bool {
    if sel.contains('*') {
        let parts: Vec<&str> = sel.split('*').collect();
        let (first, last) = (parts[0], parts[parts.len() - 1]);
        let mut rest = match bench.strip_prefix(first) {
            Some(r) => r,
            None => return false,
        };
        for p in &parts[1..parts.len() - 1] {
            match rest.find(p) {
                Some(i) => rest = &rest[i + p.len()..],
                None => return false,
            }
        }
        return rest.ends_with(last) && rest.len() >= last.len();
    }
    bench == sel || bench.strip_prefix(sel).is_some_and(|r| r.starts_with('.'))
}

/// The benchmarks `--bench` chooses among those stored (all without it).
fn chosen(stored: &[String], sels: &[String]) -> Result<Vec<String>> {
    for s in sels {
        if !stored.iter().any(|b| selects(s, b)) {
            return Err(UsageError(format!("--bench {s}: the store has no results of it; benchmarks stored: {}", stored.join(", "))).into());
        }
    }
    Ok(stored.iter().filter(|b| sels.is_empty() || sels.iter().any(|s| selects(s, b))).cloned().collect())
}

/// The documents of the points' runs, where `--by` or `--where` name a
/// fact only the document has.
fn documents(db: &mut oscycles::data::db::Db, points: &[Point], keys: &[&str]) -> Result<HashMap<String, RunDoc>> {
    let mut docs = HashMap::new();
    if !keys.iter().any(|k| history::needs_document(k)) {
        return Ok(docs);
    }
    for id in oscycles::tables::tabular::distinct(points.iter().map(|p| p.run_id.as_str())) {
        if let Some(d) = db.load(id)? {
            docs.insert(id.to_string(), d);
        }
    }
    Ok(docs)
}

/// `oscycles report --history`.
pub fn report_history(a: &cli::grammar::ReportArgs) -> Result<ExitCode> {
    let loc = default_db(a.db.clone());
    if !loc.exists() {
        return Err(UsageError(format!(
            "--history reads the run store, and there is none at '{loc}' (oscycles run creates it; or give --db)"
        ))
        .into());
    }
    let mut db = open_db(&loc)?;
    let benches = chosen(&db.benchmarks()?, &a.bench)?;
    let mut points = Vec::new();
    for b in &benches {
        points.extend(db.history(b, a.fleet.as_deref())?);
    }
    if points.is_empty() {
        return Err(UsageError(format!(
            "the store '{loc}' has no measured results{}",
            a.fleet.as_ref().map_or(String::new(), |f| format!(" in fleet '{f}'"))
        ))
        .into());
    }
    let wheres = history::parse_wheres(&a.where_).map_err(usage)?;
    let keys: Vec<&str> = wheres.iter().map(|(k, _)| k.as_str()).chain(a.by.as_deref()).collect();
    let docs = documents(&mut db, &points, &keys)?;
    let points = history::keep_where(points, &wheres, &docs).map_err(usage)?;
    let opts = Options { by: a.by.clone(), wheres, last: a.last, policy: Thresholds::default() };
    let hs = history::build(&points, &opts, &docs).map_err(usage)?;
    if let Some(dir) = &a.html {
        let out = super::store::out_dir(dir)?;
        let page = oscycles::present::report::export::html_history::page(&hs, &opts);
        out.write("index.html", page).map_err(|e| super::store::out_error(dir, e))?;
        eprintln!("report: {}", dir.join("index.html").display());
    } else {
        let width = Some(oscycles::present::report::terminal_width());
        let text = oscycles::tables::tabular::table::within(width, || history::render(&hs, &opts));
        print!("{}", oscycles::present::report::for_terminal(&text));
    }
    Ok(ExitCode::SUCCESS)
}

fn usage(e: HistoryError) -> anyhow::Error {
    UsageError(e.to_string()).into()
}

/// Writes the exports asked for (`--bmf`, `--github-benchmark[-bigger]`)
/// of `docs` (one run, or two: the second against the first); whether any was.
pub fn ci_exports(a: &cli::grammar::ReportArgs, docs: &[RunDoc]) -> Result<bool> {
    let policy = Thresholds::default();
    let targets: [(&Option<PathBuf>, &dyn Fn() -> ci::CiExport); 3] = [
        (&a.bmf, &|| ci::bmf(docs, &policy)),
        (&a.github_benchmark, &|| ci::github_action_benchmark(docs, Better::Lower, &policy)),
        (&a.github_benchmark_bigger, &|| ci::github_action_benchmark(docs, Better::Higher, &policy)),
    ];
    if targets.iter().any(|(d, _)| d.is_some()) && docs.len() > 2 {
        return Err(UsageError(format!(
            "--bmf and --github-benchmark take one run, or two (the second against the first); {} given",
            docs.len()
        ))
        .into());
    }
    let mut any = false;
    for (dest, make) in targets {
        let Some(dest) = dest else { continue };
        let (json, left) = make();
        for cell in &left {
            eprintln!("oscycles: left out of {}: {}", dest.display(), oscycles::present::report::for_terminal(cell));
        }
        let text = serde_json::to_string_pretty(&json)? + "\n";
        if dest.as_os_str() == "-" {
            print!("{text}");
        } else {
            oscycles::base::fsafe::write_file(dest, text).map_err(|e| super::store::out_error(dest, e))?;
        }
        any = true;
    }
    Ok(any)
}
