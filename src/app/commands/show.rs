//! Commands that look at one thing and print it: the registry (`list`), a
//! saved run (`show`, and the end of `run`), this machine (`doctor`).

use anyhow::Result;
use oscycles::app::cli::{self, UsageError};
use oscycles::data::results::RunDoc;
use oscycles::present::report;
use std::process::ExitCode;

/// `oscycles list [BENCH] [--long] [--sources]`, within the terminal's width.
pub fn list(bench: Option<&str>, long: bool, sources: bool) -> Result<ExitCode> {
    let width = report::terminal_width();
    if sources {
        print!("{}", report::list::render_sources(width));
        return Ok(ExitCode::SUCCESS);
    }
    match bench {
        Some(id) => match oscycles::app::catalogue::benchmark(id) {
            Some(b) => print!("{}", report::render_benchmark(&b, width)),
            None => {
                return Err(UsageError(format!("unknown benchmark '{id}'; `oscycles list` shows every benchmark id")).into());
            }
        },
        None => print!("{}", report::render_list(&oscycles::app::catalogue::catalogue(), width, long)),
    }
    print!("\n{}", report::wrap(&oscycles::measure::counters::availability().describe(), width, ""));
    Ok(ExitCode::SUCCESS)
}

/// The end of a run or a `show`: the full tables when asked (as wide as
/// they are), then the one-screen summary, then where the run is and how to
/// see the rest.
pub fn print_results(doc: &RunDoc, path: &std::path::Path, tables: Tables) {
    let width = report::terminal_width();
    match tables {
        Tables::None => {}
        Tables::Fitted => {
            let tables = oscycles::tables::tabular::table::within(Some(width), || report::render_tables(doc));
            print!("{}", report::for_terminal(&report::fit_text(&tables, width)));
            println!();
        }
        Tables::Full => {
            print!("{}", report::for_terminal(&report::render_tables(doc)));
            println!();
        }
    }
    print!("{}", report::for_terminal(&report::fit_text(&report::summary::render(doc, width), width)));
    match tables {
        Tables::None => pointer("tables", &format!("oscycles show {} (--full: every column, unsplit)", path.display()), width),
        Tables::Fitted => pointer("every column, unsplit", &format!("oscycles show {} --full", path.display()), width),
        Tables::Full => {}
    }
}

/// The summary, then the published forms and the tables without what is
/// n/a, within `width` columns, then how to see every row.
fn print_brief(doc: &RunDoc, path: &std::path::Path, width: usize) {
    print!("{}", report::for_terminal(&report::fit_text(&report::summary::render_brief(doc, width), width)));
    let lineup = report::tables::Lineup::standard();
    let tables = oscycles::tables::tabular::compact::within_compact(width, || report::render_brief(doc, &lineup));
    print!("{}", report::for_terminal(&report::fit_text(&tables, width)));
    pointer("every table, row and column", &format!("oscycles show {} --full", path.display()), width);
}

/// "what: command" on one line, or the command on a line of its own under
/// `what` when the two do not fit the width together (a long path of the
/// run's document; a path is not broken, it is copied as it is).
fn pointer(what: &str, command: &str, width: usize) {
    let line = format!("{what}: {command}");
    let text = if line.chars().count() <= width { line } else { format!("{what}:\n  {command}") };
    println!("{}", report::for_terminal(&text));
}

/// Which tables come before the summary.
#[derive(Clone, Copy, PartialEq)]
pub enum Tables {
    /// Only the summary (the end of a run).
    None,
    /// Every table, split to the terminal's width (`show`).
    Fitted,
    /// Every table as wide as it is (`--full`).
    Full,
}

/// `oscycles show RUN`: what was measured first (a few lines of header, the
/// summary, the published evaluations' forms the run fills, then the tables
/// without what is n/a); --full the whole header, every table and row, then
/// the summary; --json the document; --counters the kernel's event counts
/// per operation; --time where the run's time went.
pub fn show(file: &std::path::Path, full: bool, json: bool, counters: bool, time: bool) -> Result<ExitCode> {
    let doc = super::read_doc(file)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    let width = report::terminal_width();
    let header = if full { report::header::render(&doc, false) } else { report::header::render_brief(&doc) };
    print!("{}", report::for_terminal(&report::fit_text(&header, width)));
    println!();
    if !full && !counters && !time {
        print_brief(&doc, file, width);
        return Ok(ExitCode::SUCCESS);
    }
    if counters {
        let counts = oscycles::tables::tabular::table::within((!full).then(report::terminal_width), || report::counters::render(&doc));
        print!("{}", report::for_terminal(&counts));
        println!();
    }
    if time {
        let spent = oscycles::tables::tabular::table::within((!full).then(report::terminal_width), || report::time::render(&doc));
        print!("{}", report::for_terminal(&spent));
        println!();
    }
    print_results(&doc, file, if full { Tables::Full } else { Tables::Fitted });
    Ok(ExitCode::SUCCESS)
}

/// `oscycles doctor`: what would make measurements noisy here, with fixes.
pub fn doctor(cpus: Option<&str>) -> Result<ExitCode> {
    let cpus = cli::resolve::resolve_cpus(cpus)?;
    let findings = oscycles::measure::checks::check(&cpus);
    print!("{}", report::for_terminal(&report::doctor::render(&findings, report::terminal_width())));
    Ok(ExitCode::SUCCESS)
}
