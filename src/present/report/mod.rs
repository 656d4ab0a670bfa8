//! Presentation: everything that turns run documents into text. Measurement
//! code never prints; this module never measures.

pub mod brief;
pub mod by;
pub mod compare;
pub mod counters;
pub mod doctor;
pub mod env;
pub mod export;
pub mod forest;
pub mod generic;
pub mod header;
pub mod history;
pub mod list;
pub mod plot;
pub mod summary;
pub mod tables;
pub mod terminal;
pub mod time;

use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::tables::tabular::tables::Layout;
use tables::Lineup;
// The kit tables are made with, under the names report code has always used.
pub use list::{render_benchmark, render_list};
pub use terminal::{fit_text, for_terminal, one_line, terminal_width, wrap};

/// The tables of a run, oscycles' own ([`Lineup::standard`]).
pub fn render_tables(doc: &RunDoc) -> String {
    render_tables_with(doc, &Lineup::standard())
}

/// The tables of a run. Tables laid out per environment (noise, control
/// loops) put every condition in one grid; per-condition tables are printed
/// once per condition (load, isolation) when the run had several; a run of
/// several environments gets each environment's tables, then the tables
/// that put environments side by side.
pub fn render_tables_with(doc: &RunDoc, tables: &Lineup) -> String {
    let envs = env::environments(doc);
    if envs.len() < 2 {
        return format!("{}{}", env::render_emulated(doc), render_conditions(doc, tables, None));
    }
    let per_run = tables.families_laid_out(Layout::Run);
    let mut out = String::new();
    let mut per_env: Vec<RunDoc> = Vec::new();
    for e in &envs {
        let mut d = doc.clone();
        d.results.retain(|r| r.env(doc) == e && !per_run.contains(&r.family.as_str()));
        d.environment.name = e.clone();
        if !d.results.is_empty() {
            out += &format!("\n##### environment {e}{} #####\n", env::emulated(doc, e).map_or(String::new(), |n| format!(" ({n})")));
            out += &render_conditions(&d, tables, None);
        }
        per_env.push(d);
    }
    out += &format!("\n##### environments side by side: {} #####\n", envs.join(", "));
    let mut parts = vec![env::render_emulated(doc), env::render_side_by_side(doc, &per_run)];
    for t in tables.tables() {
        let drawn: Vec<RunDoc> = per_env.iter().map(|d| tables.drawn(*t, d)).collect();
        parts.push(t.render_across(&envs.iter().map(String::as_str).zip(&drawn).collect::<Vec<_>>()));
    }
    parts.extend(tables.tables().iter().filter(|t| t.layout() == Layout::Run).map(|t| t.render(&tables.drawn(*t, doc))));
    for p in parts {
        if !p.is_empty() {
            out += &format!("\n{p}");
        }
    }
    out
}

/// The report that leads with what was measured ([`brief`]): the published
/// evaluations' forms the run fills, the notes on its environments' units,
/// then each environment's tables without the tables that are only a form
/// and with what is n/a left out (a line says what and why), then, for
/// several environments, those of the cases measured in two or more side by
/// side. [`render_tables`] is every row (`show --full`).
pub fn render_brief(doc: &RunDoc, tables: &Lineup) -> String {
    let envs = env::environments(doc);
    let mut out = brief::render_forms(doc, tables);
    let notes = env::render_emulated_brief(doc);
    if !notes.is_empty() {
        out += &format!("\n{notes}");
    }
    // The quick suite is every family briefly: the summary has a line for each, and its
    // per-family tables are `--full`'s.
    let (quick, rest) = brief::without_quick(doc);
    if !quick.is_empty() {
        out += &format!(
            "\nthe quick suite's per-family tables ({}): show --full (the summary above has a line per family)\n",
            quick.join(", ")
        );
    }
    let (all, doc) = (doc, &rest);
    if envs.len() < 2 {
        return out + &render_conditions(doc, tables, Some(&[]));
    }
    let per_run = tables.families_laid_out(Layout::Run);
    // A case measured in two environments or more is in the side-by-side table, not in theirs.
    let side = env::measured_in_two(all, &per_run);
    let mut per_env: Vec<RunDoc> = Vec::new();
    for e in &envs {
        let mut d = brief::of_env(doc, e);
        d.results.retain(|r| !per_run.contains(&r.family.as_str()));
        let text = render_conditions(&d, tables, Some(&side));
        if !text.trim().is_empty() {
            // Its first table right under its heading.
            let text = text.strip_prefix('\n').unwrap_or(&text);
            out += &format!("\n##### environment {e}{} #####\n{text}", env::emulated(doc, e).map_or(String::new(), |n| format!(" ({n})")));
        }
        per_env.push(d);
    }
    let mut parts = vec![env::render_side_by_side_measured(all, &per_run)];
    let named: Vec<&str> = envs.iter().map(String::as_str).collect();
    for t in tables.tables().iter().filter(|t| !t.is_form()) {
        let drawn: Vec<RunDoc> = per_env.iter().map(|d| tables.drawn(*t, d)).collect();
        let across: Vec<(&str, &RunDoc)> = named.iter().copied().zip(&drawn).collect();
        if t.render_form(&across).is_empty() {
            parts.push(t.render_across(&across));
        }
    }
    parts.extend(tables.tables().iter().filter(|t| t.layout() == Layout::Run).map(|t| brief::table_text(*t, &tables.drawn(*t, doc), &[])));
    // Each part has its title (the side-by-side table's names the environments).
    parts.iter().filter(|p| !p.is_empty()).for_each(|p| out += &format!("\n{p}"));
    out
}

/// The cases (benchmark, parameters) of the side-by-side table, for the
/// report that leads with what was measured; None: every table whole.
type Brief<'a> = Option<&'a [(String, String)]>;

/// The table `t` of `doc`: all of it, or (`brief`) without its n/a cases
/// and those shown elsewhere.
fn table_text(t: &dyn crate::tables::tabular::tables::Table, doc: &RunDoc, brief: Brief) -> String {
    match brief {
        Some(side) => brief::table_text(t, doc, side),
        None => t.render(doc),
    }
}

/// The tables of one environment's results; `brief`: without the tables
/// that are only a published evaluation's form, without n/a cases and
/// without the cases of the side-by-side table.
fn render_conditions(doc: &RunDoc, tables: &Lineup, brief: Brief) -> String {
    let mut grids = tables.families_laid_out(Layout::Environment);
    grids.extend(tables.families_laid_out(Layout::Run));
    let mut conditions: Vec<(String, String)> = Vec::new();
    for r in doc.results.iter().filter(|r| !grids.contains(&r.family.as_str())) {
        let (l, i) = r.load_isolation(doc);
        if !conditions.iter().any(|c| c.0 == l && c.1 == i) {
            conditions.push((l.to_string(), i.to_string()));
        }
    }
    let mut out = String::new();
    if conditions.len() > 1 {
        for (l, i) in &conditions {
            let mut d = doc.clone();
            d.results.retain(|r| !grids.contains(&r.family.as_str()) && r.measured_under(doc, l, i));
            out += &format!("\n=== under load {l}, isolation {i} ===\n");
            out += &render_condition(&d, tables, brief);
        }
    } else {
        let mut d = doc.clone();
        d.results.retain(|r| !grids.contains(&r.family.as_str()));
        out += &render_condition(&d, tables, brief);
    }
    for layout in [Layout::Environment, Layout::Run] {
        for t in tables.tables().iter().filter(|t| t.layout() == layout && !(brief.is_some() && t.is_form())) {
            let p = table_text(*t, &tables.drawn(*t, doc), brief);
            if !p.is_empty() {
                out += &format!("\n{p}");
            }
        }
    }
    out
}

/// The per-condition tables of one condition, then the generic table of
/// the families no table shows.
fn render_condition(doc: &RunDoc, tables: &Lineup, brief: Brief) -> String {
    let mut parts: Vec<String> = tables
        .tables()
        .iter()
        .filter(|t| t.layout() == Layout::Condition && !(brief.is_some() && t.is_form()))
        .map(|t| table_text(*t, &tables.drawn(*t, doc), brief))
        .collect();
    let unknown: Vec<&CaseResult> =
        doc.results.iter().filter(|r| !(tables.shows(&r.family) || brief.is_some() && r.status == CaseStatus::NotApplicable)).collect();
    if !unknown.is_empty() {
        parts.push(generic::render(&unknown));
    }
    // The report that leads with what was measured runs lines that are no table on without a blank line.
    let mut out = String::new();
    let mut after_line = false;
    for p in parts.into_iter().filter(|p| !p.is_empty()) {
        let line = brief.is_some() && !p.contains("\n---") && !p.contains(crate::tables::tabular::table::MARK);
        out += &format!("{}{p}", if line && after_line { "" } else { "\n" });
        after_line = line;
    }
    out
}
