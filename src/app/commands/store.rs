//! Commands that move runs in and out of the store: `runs` (list),
//! `import` (documents from elsewhere), `report` (HTML, Markdown, CSV, JSON).

use super::{default_db, open_db, read_doc};
use anyhow::Result;
use oscycles::app::cli::{self, UsageError};
use oscycles::data::db::{DbError, Imported, Location};
use oscycles::data::documents;
use oscycles::data::results::RunDoc;
use oscycles::present::report;
use std::path::PathBuf;
use std::process::ExitCode;

/// `oscycles runs`: the stored runs, newest first.
pub fn list_runs(a: cli::grammar::RunsArgs) -> Result<ExitCode> {
    let path = default_db(a.db);
    if !path.exists() {
        return Err(UsageError(format!("no run store at '{path}' (oscycles run creates it; or give --db)")).into());
    }
    let mut db = open_db(&path)?;
    let rows = db.list(&oscycles::data::db::Filter { suite: a.suite, host: a.host, environment: a.environment, since: a.since })?;
    let mut t = oscycles::tables::tabular::table::TextTable::new(
        &["run", "started", "status", "host", "kernel", "environment", "suites", "cases", "from"],
        9,
    );
    for r in &rows {
        // A stored field is one cell on one line (issue 43, item 17).
        let cells = [&r.id, &r.started_at, &r.status, &r.hostname, &r.kernel, &r.environment, &r.suites, &r.cases.to_string(), &r.source];
        t.row(cells.iter().map(|c| report::one_line(c).into_owned()).collect());
    }
    print!("{}", report::for_terminal(&t.render()));
    println!("{} runs in {path}", rows.len());
    Ok(ExitCode::SUCCESS)
}

/// `oscycles import FILES...`: run documents into the store. A document
/// already stored as it is adds nothing (said); an unreadable one, one whose
/// id the store holds with other contents, or a label its fleet has for
/// another run, is refused with exit code 2, and then nothing is imported.
pub fn import(files: &[PathBuf], db: Option<PathBuf>) -> Result<ExitCode> {
    let loc = default_db(db);
    import_into(&loc, files)?;
    Ok(ExitCode::SUCCESS)
}

/// The import itself (`import`, and `fleet run` with the documents it fetched).
pub fn import_into(loc: &Location, files: &[PathBuf]) -> Result<Imported> {
    if let Location::Sqlite(path) = loc
        && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
    {
        oscycles::base::fsafe::check_dir(dir, true).map_err(|e| out_error(dir, e))?;
    }
    // Every document is read and checked before any is stored, and they are
    // stored in one transaction: all or none.
    let mut docs = Vec::new();
    for f in files {
        let doc = documents::read(f).map_err(|e| UsageError(format!("{e}; nothing was imported")))?;
        if let Some((_, other)) = docs.iter().find(|(d, _): &&(RunDoc, String)| d.id == doc.id) {
            return Err(UsageError(format!("{} and {other} hold the same run '{}'; nothing was imported", f.display(), doc.id)).into());
        }
        docs.push((doc, f.display().to_string()));
    }
    let mut db = open_db(loc)?;
    let stored: Vec<(&RunDoc, String)> = docs.iter().map(|(d, f)| (d, format!("imported from {f}"))).collect();
    let done = db.import(&stored).map_err(|e| match e {
        DbError::Duplicate(_) | DbError::Conflict(_) | DbError::LabelTaken { .. } => {
            anyhow::Error::new(UsageError(format!("{e}; nothing was imported")))
        }
        e => anyhow::Error::new(e),
    })?;
    for (doc, f) in &docs {
        let f = report::for_terminal(f);
        if done.added.contains(&doc.id) {
            println!("imported {} ({} cases) from {f}", doc.id, doc.results.len());
        } else {
            println!("already stored: {} from {f} (the same document; nothing added)", doc.id);
        }
    }
    Ok(done)
}

/// The runs a report is over: files, or ids in the store; with --by and no
/// runs, every run in the store (or its --fleet).
fn report_docs(a: &cli::grammar::ReportArgs) -> Result<Vec<RunDoc>> {
    let mut db: Option<oscycles::data::db::Db> = None;
    let open = |db: &mut Option<oscycles::data::db::Db>, what: &str| -> Result<()> {
        if db.is_none() {
            let path = default_db(a.db.clone());
            if !path.exists() {
                return Err(UsageError(format!("{what} (no run store at '{path}')")).into());
            }
            *db = Some(open_db(&path)?);
        }
        Ok(())
    };
    let mut docs = Vec::new();
    if a.runs.is_empty() {
        open(&mut db, "no runs given")?;
        docs = db.as_mut().expect("opened above").documents(a.fleet.as_deref()).map_err(super::db_error)?;
        if docs.is_empty() {
            return Err(UsageError(format!(
                "the store has no runs{}",
                a.fleet.as_ref().map_or(String::new(), |f| format!(" of fleet '{f}'"))
            ))
            .into());
        }
        return Ok(docs);
    }
    for r in &a.runs {
        let p = std::path::Path::new(r);
        if p.exists() {
            docs.push(read_doc(p)?);
            continue;
        }
        open(&mut db, &format!("'{r}' is neither a file nor a run id"))?;
        match db.as_mut().expect("opened above").load(r).map_err(super::db_error)? {
            Some(d) => docs.push(d),
            None => return Err(UsageError(format!("'{r}' is neither a file nor a run id in the store")).into()),
        }
    }
    if let Some(f) = &a.fleet {
        docs.retain(|d| d.fleet.as_deref() == Some(f.as_str()));
    }
    Ok(docs)
}

/// Writes `text` to `dest` ('-': standard output).
fn write_out(dest: &std::path::Path, text: &str) -> Result<()> {
    if dest.as_os_str() == "-" {
        print!("{}", report::for_terminal(text));
        return Ok(());
    }
    oscycles::base::fsafe::write_file(dest, text).map_err(|e| out_error(dest, e).into())
}

/// Why an output was not written, as a usage error.
pub fn out_error(dest: &std::path::Path, e: oscycles::base::fsafe::UnsafePath) -> UsageError {
    match e {
        oscycles::base::fsafe::UnsafePath::Io(_, e) => UsageError(format!("cannot write '{}': {e}", dest.display())),
        e => UsageError(e.to_string()),
    }
}

/// The directory `dir` of an output, made if missing and checked.
pub fn out_dir(dir: &std::path::Path) -> Result<oscycles::base::fsafe::OutDir, UsageError> {
    oscycles::base::fsafe::OutDir::open(dir, true).map_err(|e| out_error(dir, e))
}

/// `oscycles report --by host|kernel|environment`: runs side by side.
fn report_by(a: &cli::grammar::ReportArgs, by: &str, docs: &[RunDoc]) -> Result<ExitCode> {
    use report::by;
    let by =
        by::By::parse(by).ok_or_else(|| UsageError(format!("--by {by}: valid: {}", <by::By as oscycles::base::named::Named>::names())))?;
    let r = by::build(docs, by, a.baseline.as_deref()).map_err(|e| UsageError(e.to_string()))?;
    let policy = oscycles::analysis::uncertainty::verdict::Thresholds::default();
    if a.html.is_none() && a.markdown.is_none() && a.csv.is_none() && a.json.is_none() {
        let text = oscycles::tables::tabular::table::within(Some(report::terminal_width()), || by::render(&r, &policy));
        print!("{}", report::for_terminal(&text));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dest) = &a.markdown {
        write_out(dest, &by::markdown(&r, &policy))?;
    }
    if let Some(dest) = &a.csv {
        write_out(dest, &by::csv(&r, &policy))?;
    }
    if let Some(dir) = &a.html {
        let out = out_dir(dir)?;
        out.write("index.html", report::export::html::by_page(&r, docs, &policy)).map_err(|e| out_error(dir, e))?;
        eprintln!("report: {}", out.path_of("index.html").display());
    }
    export_docs(&[(report::export::Format::Json, &a.json)], docs)
}

/// `oscycles report RUN...`: HTML, Markdown, CSV or JSON over the runs
/// (with --by, side by side).
pub fn report_cmd(a: cli::grammar::ReportArgs) -> Result<ExitCode> {
    if a.history {
        return super::history::report_history(&a);
    }
    let docs = report_docs(&a)?;
    if let Some(by) = &a.by {
        return report_by(&a, by, &docs);
    }
    let exported = super::history::ci_exports(&a, &docs)?;
    if a.html.is_none() && a.markdown.is_none() && a.csv.is_none() && a.json.is_none() {
        if exported {
            return Ok(ExitCode::SUCCESS);
        }
        return Err(UsageError(
            "report needs at least one of --html DIR, --markdown FILE, --csv FILE, --json DIR, --bmf FILE, --github-benchmark FILE (or --by host, --history)".into(),
        )
        .into());
    }
    use report::export::Format;
    export_docs(&[(Format::Markdown, &a.markdown), (Format::Csv, &a.csv), (Format::Json, &a.json), (Format::Html, &a.html)], &docs)
}

/// The exports of the runs, each format to its destination.
fn export_docs(targets: &[(report::export::Format, &Option<PathBuf>)], docs: &[RunDoc]) -> Result<ExitCode> {
    use report::export::Export;
    for &(format, dest) in targets {
        let Some(dest) = dest else { continue };
        match report::export::exporter(format).export(docs).map_err(|e| UsageError(e.to_string()))? {
            Export::Text(text) => write_out(dest, &text)?,
            Export::Files { files, entry } => {
                let out = out_dir(dest)?;
                for (name, text) in &files {
                    out.write(name, text).map_err(|e| out_error(&out.path_of(name), e))?;
                }
                if let Some(e) = entry {
                    eprintln!("report: {}", dest.join(e).display());
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
