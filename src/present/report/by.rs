//! `oscycles report --by host` (or `kernel`, `environment`): runs side by
//! side, a column per host (after the Phoronix Test Suite's merged results):
//! per family a table whose rows are the cases and metrics, whose cells are
//! each column's median with its 95% interval and its performance relative
//! to the baseline column (above 1 is better, whichever way the metric
//! improves) with the verdict of `compare::judge`; then a geometric mean of
//! those ratios over the cases every column has, with their count. The
//! facts of every column's host come first.
//!
//! Runs of different oscycles versions or document schemas are never laid
//! side by side: each set gets its own tables, under a heading saying so.
//! A column that has several runs of one case (the same label in two
//! fleets, when no `--fleet` is given) shows the newest, and says so.

use super::export::markup::{Cell, MarkupTable};
use crate::analysis::uncertainty::verdict::Thresholds;
use crate::base::named::Named;
use crate::data::compare::{Judged, judge, relative, seed_of};
use crate::data::results::{CaseStatus, Metric, RunDoc, UNIT_CYCLES, params_label};
use crate::tables::tabular::table::{TextTable, cycles};

crate::named_enum! {
    /// What the columns are.
    pub enum By {
        Host = "host",
        Kernel = "kernel",
        Environment = "environment",
    }
}

impl By {
    /// The value called `s` (`env` too, for environment).
    pub fn parse(s: &str) -> Option<By> {
        if s == "env" { Some(By::Environment) } else { <By as Named>::parse(s) }
    }

    /// The column of a result of `doc`.
    fn column(self, doc: &RunDoc, env: &str) -> String {
        match self {
            By::Host => super::one_line(doc.label.as_ref().unwrap_or(&doc.host.hostname)).into_owned(),
            By::Kernel => super::one_line(&doc.host.kernel_release).into_owned(),
            By::Environment => super::one_line(env).into_owned(),
        }
    }
}

/// One row: a case's metric, and each column's value of it.
pub struct Line<'a> {
    pub benchmark: String,
    pub case: String,
    pub metric: String,
    pub unit: String,
    pub cells: Vec<Option<&'a Metric>>,
}

impl Line<'_> {
    /// Column `c` against the baseline `b`, where both have the metric.
    pub fn judged(&self, b: usize, c: usize, policy: &Thresholds) -> Option<Judged> {
        let (base, this) = (self.cells[b]?, self.cells[c]?);
        Some(judge(base, this, policy, seed_of(&format!("{} {} {}", self.benchmark, self.case, self.metric))))
    }
}

/// One family's table.
pub struct Grid<'a> {
    pub family: String,
    pub lines: Vec<Line<'a>>,
}

/// The geometric mean of each column's performance relative to the
/// baseline over the lines every column has (lower-is-better values
/// inverted by `relative`), and how many lines that is.
pub fn geomean(g: &Grid, baseline: usize) -> (Vec<f64>, usize) {
    let full: Vec<&Line> = g.lines.iter().filter(|l| l.cells.iter().all(Option::is_some)).collect();
    let ncol = g.lines.first().map_or(0, |l| l.cells.len());
    let means = (0..ncol)
        .map(|c| {
            let logs: Vec<f64> = full.iter().map(|l| relative(l.cells[baseline].unwrap(), l.cells[c].unwrap()).ln()).collect();
            if logs.is_empty() { f64::NAN } else { (logs.iter().sum::<f64>() / logs.len() as f64).exp() }
        })
        .collect();
    (means, full.len())
}

/// Runs that may share tables (one oscycles version and document schema),
/// their columns and tables.
pub struct Set<'a> {
    /// "oscycles 0.1.0, run schema 2".
    pub version: String,
    pub columns: Vec<String>,
    /// Each column's host facts.
    pub facts: Vec<String>,
    pub baseline: usize,
    pub grids: Vec<Grid<'a>>,
    /// Cells several runs offered (the newest is shown).
    pub overlaps: usize,
}

/// The report: its sets, newest oscycles first as the runs came.
pub struct ByReport<'a> {
    pub by: By,
    pub sets: Vec<Set<'a>>,
}

fn version_of(d: &RunDoc) -> String {
    format!("oscycles {}, run schema {}", d.tool.version, d.schema_version)
}

fn facts_of(name: &str, d: &RunDoc) -> String {
    let text = format!(
        "{name}: host {} ({}, CPUs {}, {} MiB), kernel {}, {}, hypervisor {}, environment {}, run {}{}",
        d.host.hostname,
        d.host.cpu_model,
        d.host.cpus_online,
        d.host.memory_total_kib / 1024,
        d.host.kernel_release,
        super::header::clock_rate(&d.host.clock, 3),
        d.host.hypervisor.as_deref().unwrap_or("none"),
        d.environment.name,
        d.id,
        d.fleet.as_ref().map_or(String::new(), |f| format!(", fleet {f}"))
    );
    super::one_line(&text).into_owned()
}

/// A `--baseline` that names no column.
#[derive(Debug, thiserror::Error)]
#[error("--baseline {baseline}: no {by} of that name; there are: {columns}")]
pub struct NoSuchBaseline {
    pub baseline: String,
    pub by: &'static str,
    pub columns: String,
}

/// Lays out `docs` by `by`, with `baseline` (a column name; default the
/// first) the column the others are relative to. A baseline no set has is
/// an error naming the columns there are.
pub fn build<'a>(docs: &'a [RunDoc], by: By, baseline: Option<&str>) -> Result<ByReport<'a>, NoSuchBaseline> {
    let mut docs: Vec<&RunDoc> = docs.iter().collect();
    // Older first, so that the newest run of a cell is the one kept.
    docs.sort_by(|a, b| (&a.started_at, &a.id).cmp(&(&b.started_at, &b.id)));
    let versions = crate::tables::tabular::distinct(docs.iter().map(|d| version_of(d)));
    let mut sets = Vec::new();
    for v in versions {
        let mine: Vec<&RunDoc> = docs.iter().copied().filter(|d| version_of(d) == v).collect();
        sets.push(build_set(&mine, by, v));
    }
    if let Some(b) = baseline {
        let mut found = false;
        for s in &mut sets {
            if let Some(i) = s.columns.iter().position(|c| c == b) {
                s.baseline = i;
                found = true;
            }
        }
        if !found {
            let all: Vec<String> = crate::tables::tabular::distinct(sets.iter().flat_map(|s| s.columns.iter().cloned()));
            return Err(NoSuchBaseline { baseline: b.to_string(), by: by.name(), columns: all.join(", ") });
        }
    }
    Ok(ByReport { by, sets })
}

/// The key of a line within a family: case (with its condition) and metric.
type Key = (String, String, String, String);
/// A family's lines as they are gathered: its name, the keys, each key's cells.
type Gathered<'a> = (String, Vec<Key>, Vec<Vec<Option<&'a Metric>>>);

fn build_set<'a>(docs: &[&'a RunDoc], by: By, version: String) -> Set<'a> {
    let mut columns: Vec<String> = Vec::new();
    let mut facts: Vec<String> = Vec::new();
    let mut families: Vec<Gathered<'a>> = Vec::new();
    let mut overlaps = 0;
    for d in docs {
        for r in d.results.iter().filter(|r| r.status == CaseStatus::Ok) {
            let col = by.column(d, r.env(d));
            let c = columns.iter().position(|x| *x == col).unwrap_or_else(|| {
                facts.push(facts_of(&col, d));
                columns.push(col);
                columns.len() - 1
            });
            let (l, i) = r.load_isolation(d);
            let mut case = params_label(&r.params);
            if by != By::Environment && r.env(d) != "native" {
                case = format!("{case} [{}]", r.env(d)).trim().to_string();
            }
            if (l, i.as_ref()) != ("idle", "pinned") {
                case = format!("{case} [{l}/{i}]").trim().to_string();
            }
            let f = match families.iter().position(|f| f.0 == r.family) {
                Some(f) => f,
                None => {
                    families.push((r.family.clone(), vec![], vec![]));
                    families.len() - 1
                }
            };
            for m in &r.metrics {
                let key = (r.benchmark.clone(), case.clone(), m.name.clone(), m.unit.clone());
                let fam = &mut families[f];
                let k = fam.1.iter().position(|x| *x == key).unwrap_or_else(|| {
                    fam.1.push(key);
                    fam.2.push(vec![]);
                    fam.1.len() - 1
                });
                let cells = &mut fam.2[k];
                cells.resize(cells.len().max(c + 1), None);
                overlaps += usize::from(cells[c].is_some());
                cells[c] = Some(m);
            }
        }
    }
    let n = columns.len();
    let grids = families
        .into_iter()
        .map(|(family, keys, cells)| Grid {
            family,
            lines: keys
                .into_iter()
                .zip(cells)
                .map(|((benchmark, case, metric, unit), mut cells)| {
                    cells.resize(n, None);
                    Line { benchmark, case, metric, unit, cells }
                })
                .collect(),
        })
        .collect();
    Set { version, columns, facts, baseline: 0, grids, overlaps }
}

/// The runs as one run whose environments are the columns (a host, a
/// kernel, an environment), newest first, so that the published
/// evaluations' figures across environments draw them side by side. Each
/// column keeps the facts of the environment it came from (how QEMU ran it:
/// its clock).
pub fn merged(docs: &[RunDoc], by: By) -> Option<RunDoc> {
    let mut sorted: Vec<&RunDoc> = docs.iter().collect();
    sorted.sort_by(|a, b| (&b.started_at, &b.id).cmp(&(&a.started_at, &a.id)));
    let mut out = (*sorted.first()?).clone();
    out.results.clear();
    out.environment.settings.clear();
    for d in sorted {
        for r in d.results.iter().filter(|r| r.status == CaseStatus::Ok) {
            let col = by.column(d, r.env(d));
            if let Some(s) = d.environment.settings.get(r.env(d)) {
                out.environment.settings.entry(col.clone()).or_insert_with(|| s.clone());
            }
            let mut r = r.clone();
            r.environment = Some(col);
            out.results.push(r);
        }
    }
    out.environment.name = crate::tables::tabular::distinct(out.results.iter().map(|r| r.env(&out).to_string())).join(",");
    Some(out)
}

/// A value with its 95% interval: "1234 [1200, 1260]".
pub fn value_cell(m: &Metric) -> String {
    let f = |v: f64| if m.unit == UNIT_CYCLES { cycles(v) } else { format!("{v:.1}") };
    match &m.estimate {
        Some(e) => format!("{} [{}, {}]", f(e.median), f(e.interval.lo), f(e.interval.hi)),
        None => f(m.summary.median),
    }
}

/// The relative cell of column `c`: "1.00" for the baseline, else ratio,
/// interval and verdict.
pub fn rel_cell(l: &Line, b: usize, c: usize, policy: &Thresholds) -> String {
    if c == b {
        return if l.cells[c].is_some() { "1.00".into() } else { String::new() };
    }
    l.judged(b, c, policy).map_or(String::new(), |j| format!("{} {}", super::compare::ratio_cell(&j), super::compare::verdict_cell(&j)))
}

/// The columns of a set's tables: the labels, then a value per host and a
/// relative column for each host but the baseline (itself against itself
/// says nothing).
pub fn headers(s: &Set) -> Vec<String> {
    let base = &s.columns[s.baseline];
    let mut h: Vec<String> = ["benchmark", "case", "metric", "unit"].map(String::from).to_vec();
    for (i, c) in s.columns.iter().enumerate() {
        h.push(c.clone());
        if i != s.baseline {
            h.push(format!("{c} vs {base}"));
        }
    }
    h
}

/// The rows of a grid as text cells, the geometric mean last.
pub fn rows(s: &Set, g: &Grid, policy: &Thresholds) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for l in &g.lines {
        let mut r = vec![l.benchmark.clone(), l.case.clone(), l.metric.clone(), l.unit.clone()];
        for c in 0..s.columns.len() {
            r.push(l.cells[c].map_or(String::new(), value_cell));
            if c != s.baseline {
                r.push(rel_cell(l, s.baseline, c, policy));
            }
        }
        out.push(r);
    }
    let (means, n) = geomean(g, s.baseline);
    let mut r = vec!["geometric mean".to_string(), format!("{n} cases every column has"), "relative".into(), "".into()];
    for (c, m) in means.into_iter().enumerate() {
        r.push(String::new());
        if c != s.baseline {
            r.push(if m.is_finite() { format!("{m:.2}") } else { "-".into() });
        }
    }
    out.push(r);
    out
}

/// The legend under every report.
pub fn legend(s: &Set) -> String {
    format!(
        "cells: median [95% interval]; \"X vs {b}\": X's performance relative to {b} (above 1 = better: {b}/X for costs, X/{b} for rates) \
         [95% interval] and verdict; geometric mean over the cases every column has",
        b = s.columns[s.baseline]
    )
}

/// The report for the terminal.
pub fn render(r: &ByReport, policy: &Thresholds) -> String {
    let mut out = String::new();
    for s in &r.sets {
        if r.sets.len() > 1 {
            out += &format!("\n##### {} (runs of other versions are in their own tables) #####\n", s.version);
        }
        out += &format!("by {}: {} columns, baseline {}\n", r.by.name(), s.columns.len(), s.columns[s.baseline]);
        for f in &s.facts {
            out += &format!("  {f}\n");
        }
        if s.overlaps > 0 {
            out += &format!("  {} cells had several runs in one column; the newest is shown\n", s.overlaps);
        }
        for g in &s.grids {
            let h = headers(s);
            let mut t = TextTable::new(&h.iter().map(String::as_str).collect::<Vec<_>>(), 4);
            for row in rows(s, g, policy) {
                t.row(row);
            }
            out += &format!("\n{}\n{}", g.family, t.render());
        }
        out += &format!("{}\n", legend(s));
    }
    out
}

/// A grid as a markup table (Markdown, HTML), verdicts coloured in HTML.
pub fn markup(s: &Set, g: &Grid, policy: &Thresholds) -> MarkupTable {
    let h = headers(s);
    let right: Vec<usize> = (4..h.len()).collect();
    let mut t = MarkupTable::new(&h.iter().map(String::as_str).collect::<Vec<_>>(), &right);
    for row in rows(s, g, policy) {
        t.row(
            row.into_iter()
                .map(|c| match () {
                    _ if c.ends_with("faster") => Cell::coloured(c, "#1a7f37"),
                    _ if c.ends_with("slower") => Cell::coloured(c, "#c62828"),
                    _ => Cell::from(c),
                })
                .collect(),
        );
    }
    t
}

/// The report in Markdown: a section per set, host facts, a table per family.
pub fn markdown(r: &ByReport, policy: &Thresholds) -> String {
    use super::export::markup::{Markdown, Markup};
    let mut out = Markdown.heading(1, &format!("oscycles runs by {}", r.by.name()));
    for s in &r.sets {
        out += &Markdown.heading(2, &s.version);
        out += &s.facts.iter().map(|f| format!("- {}\n", Markdown.escape(f))).collect::<String>();
        out += "\n";
        out += &Markdown.paragraph(&legend(s));
        for g in &s.grids {
            out += &Markdown.heading(3, &g.family);
            out += &Markdown.table(&markup(s, g, policy));
            out += "\n";
        }
    }
    out
}

/// CSV, long: one row per column (host), case and metric, plus each
/// table's geometric mean.
pub fn csv(r: &ByReport, policy: &Thresholds) -> String {
    let f = super::export::csv::field;
    let mut out =
        String::from("set,table,by,column,benchmark,case,metric,unit,median,lo,hi,relative,relative_lo,relative_hi,verdict,baseline\n");
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for s in &r.sets {
        let base = &s.columns[s.baseline];
        for g in &s.grids {
            for l in &g.lines {
                for (c, col) in s.columns.iter().enumerate() {
                    let Some(m) = l.cells[c] else { continue };
                    let e = m.estimate.as_ref();
                    let j = if c == s.baseline { None } else { l.judged(s.baseline, c, policy) };
                    let rel = if c == s.baseline { Some(1.0) } else { j.map(|j| j.ratio) };
                    out += &format!(
                        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                        f(&s.version),
                        f(&g.family),
                        r.by.name(),
                        f(col),
                        f(&l.benchmark),
                        f(&l.case),
                        f(&l.metric),
                        f(&l.unit),
                        e.map_or(m.summary.median, |e| e.median),
                        num(e.map(|e| e.interval.lo)),
                        num(e.map(|e| e.interval.hi)),
                        num(rel),
                        num(j.and_then(|j| j.interval).map(|i| i.lo)),
                        num(j.and_then(|j| j.interval).map(|i| i.hi)),
                        j.map_or("", |j| crate::data::compare::verdict_word(j.verdict)),
                        f(base)
                    );
                }
            }
            let (means, n) = geomean(g, s.baseline);
            for (c, col) in s.columns.iter().enumerate() {
                out += &format!(
                    "{},{},{},{},geometric mean,{n} cases,relative,,,,,{},,,,{}\n",
                    f(&s.version),
                    f(&g.family),
                    r.by.name(),
                    f(col),
                    num(Some(means[c]).filter(|m| m.is_finite())),
                    f(base)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::data::results::fixture;

    /// A copy of the fixture as host `label`, its costs scaled by `k`.
    fn host(label: &str, k: f64) -> RunDoc {
        let mut d = fixture();
        d.label = Some(label.into());
        d.id = format!("run-{label}");
        for m in d.results.iter_mut().flat_map(|r| r.metrics.iter_mut()) {
            m.summary = m.summary.scaled(k);
            m.samples.iter_mut().flatten().for_each(|v| *v *= k);
            m.estimate = None;
        }
        d
    }

    #[test]
    fn a_column_per_host_and_the_geometric_mean_of_ratios() {
        let docs = vec![host("h1", 1.0), host("h2", 2.0)];
        let r = build(&docs, By::Host, Some("h1")).unwrap();
        assert_eq!(r.sets.len(), 1);
        let s = &r.sets[0];
        assert_eq!(s.columns, vec!["h1", "h2"]);
        let g = &s.grids[0];
        let (means, n) = geomean(g, 0);
        assert!(n > 0);
        assert!((means[0] - 1.0).abs() < 1e-12);
        // h2's values are twice h1's: half the performance for costs, twice for rates.
        let full: Vec<&Line> = g.lines.iter().filter(|l| l.cells.iter().all(Option::is_some)).collect();
        let higher = full.iter().filter(|l| l.cells[0].unwrap().better == crate::data::results::Better::Higher).count() as f64;
        let expected = 2f64.powf((2.0 * higher - n as f64) / n as f64);
        assert!((means[1] - expected).abs() < 1e-9, "{} vs {expected}", means[1]);
        let text = render(&r, &Thresholds::default());
        assert!(text.contains("geometric mean") && text.contains("h2 vs h1"), "{text}");
        assert!(!text.contains("h1 vs h1"), "no column of the baseline against itself: {text}");
        assert!(build(&docs, By::Host, Some("nope")).err().unwrap().to_string().contains("h1, h2"));
    }

    #[test]
    fn other_versions_get_their_own_tables() {
        let mut old = host("h2", 1.0);
        old.tool.version = "0.0.9".into();
        let docs = vec![host("h1", 1.0), old];
        let r = build(&docs, By::Host, None).unwrap();
        assert_eq!(r.sets.len(), 2, "never side by side");
        assert!(r.sets.iter().all(|s| s.columns.len() == 1));
        assert!(render(&r, &Thresholds::default()).contains("in their own tables"));
    }

    #[test]
    fn csv_has_a_row_per_host_case_and_metric() {
        let docs = vec![host("h1", 1.0), host("h2", 1.5)];
        let r = build(&docs, By::Host, None).unwrap();
        let text = csv(&r, &Thresholds::default());
        let metrics: usize = docs[0].results.iter().filter(|r| r.status == CaseStatus::Ok).map(|r| r.metrics.len()).sum();
        let geo: usize = r.sets[0].grids.len() * 2;
        assert_eq!(text.lines().count(), 1 + 2 * metrics + geo, "{text}");
    }
}
