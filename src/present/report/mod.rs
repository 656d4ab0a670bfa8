//! Presentation: everything that turns run documents into text. Measurement
//! code never prints; this module never measures.

pub mod by;
pub mod compare;
pub mod counters;
pub mod doctor;
pub mod env;
pub mod export;
pub mod figures;
pub mod forest;
pub mod generic;
pub mod header;
pub mod history;
pub mod io;
pub mod ipc;
pub mod list;
pub mod lmbench;
pub mod load;
pub mod memory;
pub mod microvm;
pub mod noise;
pub mod packet_stream;
pub mod plot;
pub mod rows;
pub mod summary;
pub mod syscall;
pub mod table;
pub mod tables;
pub mod terminal;

use crate::results::{CaseResult, CaseStatus, RunDoc};
use crate::schema::CaseParams;
pub use list::{render_benchmark, render_list};
use table::percent;
pub use tables::{Draws, Layout, Table, Tables};
pub use terminal::{fit_text, for_terminal, terminal_width, wrap};

/// One line on how noisy a table's cells were.
pub fn noise_note(results: &[&CaseResult], metric: &str) -> String {
    let mut cvs: Vec<(f64, String)> = results
        .iter()
        .filter(|r| r.status == CaseStatus::Ok)
        .filter_map(|r| {
            let m = r.metric(metric)?;
            let p: Vec<String> = r.params.values().map(|v| v.as_str().map_or_else(|| v.to_string(), String::from)).collect();
            Some((m.summary.cv, format!("{} {}", r.benchmark, p.join(" ")).trim().to_string()))
        })
        .collect();
    if cvs.is_empty() {
        return String::new();
    }
    cvs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = cvs[cvs.len() / 2].0;
    let (max, which) = cvs.last().cloned().unwrap();
    let noisy = cvs.iter().filter(|c| c.0 > ipc::NOISY_CV).count();
    format!(
        "  noise: CV across batches median {}, max {} ({which}); {noisy} of {} cells above {:.0}%\n",
        percent(median),
        percent(max),
        cvs.len(),
        ipc::NOISY_CV * 100.0
    )
}

/// The results given, each with its parameters as `P` (those whose
/// parameters do not fit it are left out).
pub fn typed<'a, P: CaseParams>(results: impl IntoIterator<Item = &'a CaseResult>) -> Vec<(&'a CaseResult, P)> {
    results.into_iter().filter_map(|r| Some((r, r.params_as::<P>()?))).collect()
}

/// A numeric detail of a result, NaN where it has none.
pub fn num(r: &CaseResult, key: &str) -> f64 {
    r.detail_f64(key).unwrap_or(f64::NAN)
}

/// Distinct values in order of first appearance.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The tables of a run, oscycles' own ([`Tables::standard`]).
pub fn render_tables(doc: &RunDoc) -> String {
    render_tables_with(doc, &Tables::standard())
}

/// The tables of a run. Tables laid out per environment (noise, control
/// loops) put every condition in one grid; per-condition tables are printed
/// once per condition (load, isolation) when the run had several; a run of
/// several environments gets each environment's tables, then the tables
/// that put environments side by side.
pub fn render_tables_with(doc: &RunDoc, tables: &Tables) -> String {
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
    let mut parts = vec![env::render_emulated(doc), env::render_side_by_side(doc)];
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
fn render_conditions(doc: &RunDoc, tables: &Tables) -> String {
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
            d.results.retain(|r| !grids.contains(&r.family.as_str()) && r.load_isolation(doc) == (l.as_str(), i.as_str()));
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
fn render_condition(doc: &RunDoc, tables: &Tables) -> String {
    let mut parts: Vec<String> =
        tables.tables().iter().filter(|t| t.layout() == Layout::Condition).map(|t| t.render(&tables.drawn(*t, doc))).collect();
    let unknown: Vec<&CaseResult> = doc.results.iter().filter(|r| !tables.shows(&r.family)).collect();
    if !unknown.is_empty() {
        parts.push(generic::render(&unknown));
    }
    parts.into_iter().filter(|p| !p.is_empty()).map(|p| format!("\n{p}")).collect()
}
