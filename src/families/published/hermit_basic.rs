//! The basic benchmark of the HermitCore PVH/HVM benchmark post ("Results of the Basic
//! Benchmark"): getpid, sched_yield, malloc and a first write, a column per
//! environment, from the syscall, hermit and pagefault families.

use crate::base::sources::Source;
use crate::data::results::{CaseResult, RunDoc};
use crate::families::bench::schema::{hermit, pagefault, syscall};
use crate::tables::tabular::figures::{Bars, Plots, bars_of, capitalised, panels};
use crate::tables::tabular::median_cell;
use crate::tables::tabular::rows::Row;
use crate::tables::tabular::table::TextTable;
use crate::tables::tabular::tables::{Draws, Table};

/// The rows of the HermitCore post's basic benchmark.
fn hermit_rows() -> Vec<Row> {
    let mut rows = Row::each(syscall::id, syscall::PER_CALL, &[("getpid", syscall::GETPID, ""), ("sched_yield", syscall::SCHED_YIELD, "")]);
    rows.extend(Row::each(
        hermit::id,
        hermit::PER_OP,
        &[("sched_yield, 2nd thread runnable", hermit::SCHED_YIELD_BUSY, ""), ("malloc (1 MiB) + free", hermit::MALLOC_1M, "")],
    ));
    rows.extend(Row::each(
        pagefault::id,
        pagefault::PER_PAGE,
        &[
            ("write access (4 KiB page)", pagefault::ANON, ""),
            ("write access, THP (per 4 KiB)", pagefault::ANON_THP, ""),
            ("write access, huge page (per 4 KiB)", pagefault::ANON_HUGETLB, ""),
        ],
    ));
    rows
}

/// The HermitCore post's "Results of the Basic Benchmark": one column for the run's environment.
pub fn render_hermit(doc: &RunDoc) -> String {
    render_hermit_envs(&[(doc.environment.name.as_str(), doc)])
}

/// The HermitCore post's basic table with one column per environment (name, its results).
pub fn render_hermit_envs(envs: &[(&str, &RunDoc)]) -> String {
    let mut head = vec!["System activity"];
    head.extend(envs.iter().map(|e| e.0));
    let one = envs.len() == 1;
    if one {
        head.push("CV");
    }
    head.push("note");
    let mut t = TextTable::new(&head, 1);
    t.also_left = vec![head.len() - 1];
    for row in hermit_rows() {
        let cases: Vec<Option<&CaseResult>> = envs.iter().map(|(_, d)| row.case(d)).collect();
        if cases.iter().all(Option::is_none) {
            continue;
        }
        let mut cells = vec![row.label.clone()];
        // Why a cell has no number, each reason once with the environments it holds for.
        let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
        for (c, (name, _)) in cases.iter().zip(envs) {
            let (v, cv) = median_cell(*c, &row.metric);
            let failed = v == "n/a" || v == "fail";
            if failed && !cv.is_empty() {
                match notes.iter_mut().find(|n| n.0 == cv) {
                    Some(n) => n.1.push(name),
                    None => notes.push((cv.clone(), vec![name])),
                }
            }
            cells.push(v);
            if one {
                cells.push(if failed { String::new() } else { cv });
            }
        }
        let said: Vec<String> = notes.into_iter().map(|(why, who)| if one { why } else { format!("{}: {why}", who.join(", ")) }).collect();
        cells.push(said.join("; "));
        t.row(cells);
    }
    if t.rows.is_empty() {
        return String::new();
    }
    let unit = crate::tables::tabular::cost_unit(envs.iter().flat_map(|(_, d)| d.results.iter()));
    format!("hermit-basic: the basic benchmark of {}, median {} per operation\n{}", Source::HermitCoreXen.short(), unit.long, t.render())
}

/// The HermitCore PVH/HVM benchmark post's basic benchmark: the
/// hermit-basic suite's cases (and the quick suite's), a column per environment.
pub struct HermitBasicTable;

impl Table for HermitBasicTable {
    fn families(&self) -> &'static [&'static str] {
        &[hermit::FAMILY, syscall::FAMILY, pagefault::FAMILY]
    }
    fn draws(&self) -> Draws {
        Draws::Suites { own: &["hermit-basic"], also: &["quick"] }
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_hermit(doc)
    }
    fn render_across(&self, envs: &[(&str, &RunDoc)]) -> String {
        render_hermit_envs(envs)
    }
    fn render_form(&self, envs: &[(&str, &RunDoc)]) -> String {
        match envs {
            [(_, doc)] => render_hermit(doc),
            _ => render_hermit_envs(envs),
        }
    }
    fn is_form(&self) -> bool {
        true
    }
}

/// The HermitCore post's basic table as a picture: grouped bars of each
/// row, a bar per environment, a panel per clock (CPU, emulated and
/// instruction-counted costs are never on one axis).
pub struct HermitBasicBars;

impl Plots for HermitBasicBars {
    fn bars(&self, doc: &RunDoc) -> Vec<Bars> {
        let rows = hermit_rows();
        let found: Vec<(String, _)> = rows.iter().map(|r| (r.label.clone(), move |d: &RunDoc| r.value(d).cloned())).collect();
        panels(doc)
            .into_iter()
            .filter_map(|(clock, envs)| {
                let title = format!("{}: basic benchmark ({})", capitalised(Source::HermitCoreXen.short()), clock.panel());
                bars_of(doc, &envs, title, format!("median per operation ({}, log)", clock.cost_unit()), &found)
            })
            .collect()
    }
    fn across_environments(&self) -> bool {
        true
    }
}
