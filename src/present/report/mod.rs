//! Presentation: everything that turns run documents into text. Measurement
//! code never prints; this module never measures.

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

use crate::data::results::{CaseResult, RunDoc};
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
        return format!("{}{}", env::render_emulated(doc), render_conditions(doc, tables));
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
            out += &render_conditions(&d, tables);
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

/// The tables of one environment's results.
fn render_conditions(doc: &RunDoc, tables: &Lineup) -> String {
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
            out += &render_condition(&d, tables);
        }
    } else {
        let mut d = doc.clone();
        d.results.retain(|r| !grids.contains(&r.family.as_str()));
        out += &render_condition(&d, tables);
    }
    for layout in [Layout::Environment, Layout::Run] {
        for t in tables.tables().iter().filter(|t| t.layout() == layout) {
            let p = t.render(&tables.drawn(*t, doc));
            if !p.is_empty() {
                out += &format!("\n{p}");
            }
        }
    }
    out
}

/// The per-condition tables of one condition, then the generic table of
/// the families no table shows.
fn render_condition(doc: &RunDoc, tables: &Lineup) -> String {
    let mut parts: Vec<String> =
        tables.tables().iter().filter(|t| t.layout() == Layout::Condition).map(|t| t.render(&tables.drawn(*t, doc))).collect();
    let unknown: Vec<&CaseResult> = doc.results.iter().filter(|r| !tables.shows(&r.family)).collect();
    if !unknown.is_empty() {
        parts.push(generic::render(&unknown));
    }
    parts.into_iter().filter(|p| !p.is_empty()).map(|p| format!("\n{p}")).collect()
}
