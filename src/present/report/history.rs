//! `oscycles report --history`: a cell across the stored runs (after asv's
//! history plots and the trend pages of Bencher and github-action-benchmark).
//! For each cell (benchmark, parameters, metric) its median and 95% interval
//! in every run that has it, oldest first, or pooled per value of a key
//! (`--by kernel`: one row per kernel release); each row's step from the row
//! before it (same series: host and environment) is judged by the rules of
//! `compare` (bootstrap interval of the ratio, Mann-Whitney over round
//! medians, the 5% margin), and marked only where it is `faster` or
//! `slower`. A summary line per cell names the first and last value and the
//! largest marked step.

use super::export::markup::{Cell as MCell, MarkupTable};
use crate::analysis::uncertainty::{self, bootstrap::Interval, verdict::Thresholds, verdict::Verdict};
use crate::data::compare::{seed_of, verdict_word};
use crate::data::db::history::Point;
use crate::data::results::{Better, RunDoc, UNIT_CYCLES};
use crate::tables::tabular::table::{TextTable, cycles};
use std::collections::HashMap;

/// What a history is over and how it is laid out.
#[derive(Debug, Clone)]
pub struct Options {
    /// Pool the runs per value of this key (a row per value).
    pub by: Option<String>,
    /// `--where KEY=VALUE`: values of one key are alternatives, keys must all hold.
    pub wheres: Vec<(String, Vec<String>)>,
    /// Rows of each table shown: the newest this many (0: all).
    pub last: usize,
    pub policy: Thresholds,
}

/// Why a history cannot be made (bad usage: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("--where {0}: no measurement has a parameter or fact '{0}'; parameters here: {1}; facts: {2}")]
    UnknownKey(String, String, String),
    #[error("--where keeps no measurement of the {0} found (values of '{1}' here: {2})")]
    KeepsNothing(usize, String, String),
    #[error("--by {0}: no measurement has a fact '{0}'; facts: {1}")]
    UnknownBy(String, String),
    #[error("--where '{0}': expected KEY=VALUE (e.g. load=build, words=8)")]
    BadWhere(String),
}

/// The keys every point has (the columns of the store), by the names `--by`
/// and `--where` take; any other key is looked up in the run's document.
pub const FACTS: &str = "host, hostname, kernel, environment, load, isolation, tool (oscycles version), day, run; \
                         or a document field: cpu_model, a host fact, a condition fact, settings.rounds, ...";

/// Whether `key` needs the run's document.
pub fn needs_document(key: &str) -> bool {
    !matches!(
        key,
        "host"
            | "label"
            | "hostname"
            | "kernel"
            | "kernel_release"
            | "environment"
            | "env"
            | "load"
            | "isolation"
            | "tool"
            | "tool_version"
            | "version"
            | "day"
            | "run"
    )
}

/// The value of `key` for a point: a column, else a field of its run's
/// document (a dotted path from the top, or a bare name looked up in the
/// host facts, the condition's facts, the environment's settings, the
/// settings, in that order).
pub fn fact(p: &Point, key: &str, doc: Option<&RunDoc>) -> Option<String> {
    let col = match key {
        "host" | "label" => p.host().to_string(),
        "hostname" => p.hostname.clone(),
        "kernel" | "kernel_release" => p.kernel.clone(),
        "environment" | "env" => p.environment.clone(),
        "load" => p.load.clone(),
        "isolation" => p.isolation.clone(),
        "tool" | "tool_version" | "version" => p.tool_version.clone(),
        "day" => p.started_at.chars().take(10).collect(),
        "run" => p.run_id.clone(),
        _ => return doc_fact(doc?, key),
    };
    Some(col)
}

fn doc_fact(doc: &RunDoc, key: &str) -> Option<String> {
    let v = serde_json::to_value(doc).ok()?;
    let walk = |root: &serde_json::Value, path: &str| path.split('.').try_fold(root, |v, k| v.get(k)).cloned();
    let found = if key.contains('.') {
        walk(&v, key)
    } else {
        ["host", "condition.facts", "environment.settings", "settings"].iter().find_map(|base| walk(&v, &format!("{base}.{key}")))
    }?;
    match found {
        serde_json::Value::Null | serde_json::Value::Object(_) => None,
        other => Some(crate::data::results::param_text(&other)),
    }
}

/// The parameters of a point as (key, value) pairs, from its label.
fn params(p: &Point) -> Vec<(&str, &str)> {
    p.params.split(' ').filter_map(|kv| kv.split_once('=')).collect()
}

/// `--where` texts as (key, values): values of one key gathered.
pub fn parse_wheres(texts: &[String]) -> Result<Vec<(String, Vec<String>)>, HistoryError> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for t in texts {
        let (k, v) = t.split_once('=').filter(|(k, v)| !k.is_empty() && !v.is_empty()).ok_or_else(|| HistoryError::BadWhere(t.clone()))?;
        match out.iter_mut().find(|(key, _)| key == k) {
            Some((_, vs)) => vs.push(v.to_string()),
            None => out.push((k.to_string(), vec![v.to_string()])),
        }
    }
    Ok(out)
}

/// The value of `key` for `p`: its parameter of that name, else the fact.
fn value_of(p: &Point, key: &str, docs: &HashMap<String, RunDoc>) -> Option<String> {
    params(p).iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_string()).or_else(|| fact(p, key, docs.get(&p.run_id)))
}

/// The points `--where` keeps; refused when a key is unknown or nothing is kept.
pub fn keep_where(
    points: Vec<Point>,
    wheres: &[(String, Vec<String>)],
    docs: &HashMap<String, RunDoc>,
) -> Result<Vec<Point>, HistoryError> {
    let mut points = points;
    for (key, values) in wheres {
        let seen = crate::tables::tabular::distinct(points.iter().filter_map(|p| value_of(p, key, docs)));
        if seen.is_empty() {
            let names = crate::tables::tabular::distinct(points.iter().flat_map(|p| params(p).into_iter().map(|(k, _)| k.to_string())));
            return Err(HistoryError::UnknownKey(
                key.clone(),
                if names.is_empty() { "none".into() } else { names.join(", ") },
                FACTS.into(),
            ));
        }
        let before = points.len();
        points.retain(|p| value_of(p, key, docs).is_some_and(|v| values.contains(&v)));
        if points.is_empty() {
            return Err(HistoryError::KeepsNothing(before, key.clone(), seen.join(", ")));
        }
    }
    Ok(points)
}

/// One row of a cell's history: a run, or the runs pooled under one value of `--by`.
#[derive(Debug, Clone)]
pub struct Row {
    /// The run's id, or the value of the `--by` key.
    pub label: String,
    /// When its (first) run started.
    pub started_at: String,
    /// Host and environment (where several): the series a step stays in.
    pub series: String,
    /// Load/isolation of the measurement(s).
    pub condition: String,
    pub runs: usize,
    pub median: f64,
    pub interval: Option<Interval>,
    pub rounds: usize,
    pub samples: Vec<Vec<f64>>,
    pub step: Option<Step>,
}

/// The change from the previous row of the same series, judged.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// Index of that row.
    pub from: usize,
    /// median / previous median - 1.
    pub change: f64,
    /// This row's performance relative to that one (above 1: better).
    pub ratio: f64,
    pub interval: Option<Interval>,
    pub verdict: Verdict,
    /// Whether `verdict` was computed (see `judge_steps`); if not, the
    /// medians moved less than the margin and the step is not marked.
    pub judged: bool,
}

impl Step {
    /// Whether the step is marked: faster or slower.
    pub fn marked(&self) -> bool {
        matches!(self.verdict, Verdict::Faster | Verdict::Slower)
    }
}

/// A cell's history.
#[derive(Debug, Clone)]
pub struct History {
    pub benchmark: String,
    pub params: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// The `--by` key, if rows are pooled.
    pub by: Option<String>,
    pub rows: Vec<Row>,
}

impl History {
    /// The cell's name as a heading shows it.
    pub fn title(&self) -> String {
        format!("{} {} {}", self.benchmark, self.params, self.metric).split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The distinct series, in order of first appearance.
    pub fn series(&self) -> Vec<String> {
        crate::tables::tabular::distinct(self.rows.iter().map(|r| r.series.clone()))
    }

    /// The marked step with the largest change (in log terms), else the
    /// largest change of any step.
    pub fn largest_step(&self) -> Option<(usize, Step)> {
        let size = |s: &Step| (1.0 + s.change).ln().abs();
        let steps = self.rows.iter().enumerate().filter_map(|(i, r)| Some((i, r.step?)));
        let marked = steps.clone().filter(|(_, s)| s.marked()).max_by(|a, b| size(&a.1).total_cmp(&size(&b.1)));
        marked.or_else(|| steps.max_by(|a, b| size(&a.1).total_cmp(&size(&b.1))))
    }
}

/// The histories of the points: one per cell (benchmark, parameters,
/// metric), in order of first appearance. `docs` holds the runs' documents
/// where the `--by` key needs them.
pub fn build(points: &[Point], opts: &Options, docs: &HashMap<String, RunDoc>) -> Result<Vec<History>, HistoryError> {
    if let Some(key) = &opts.by
        && !points.iter().any(|p| fact(p, key, docs.get(&p.run_id)).is_some())
    {
        return Err(HistoryError::UnknownBy(key.clone(), FACTS.into()));
    }
    let cells = crate::tables::tabular::distinct(points.iter().map(|p| (p.benchmark.as_str(), p.params.as_str(), p.metric.as_str())));
    Ok(cells
        .into_iter()
        .map(|(b, pa, m)| {
            let pts: Vec<&Point> =
                points.iter().filter(|p| (p.benchmark.as_str(), p.params.as_str(), p.metric.as_str()) == (b, pa, m)).collect();
            cell(&pts, opts, docs)
        })
        .collect())
}

/// One cell's history from its points (oldest first).
fn cell(pts: &[&Point], opts: &Options, docs: &HashMap<String, RunDoc>) -> History {
    let first = pts[0];
    let hosts = crate::tables::tabular::distinct(pts.iter().map(|p| p.host())).len();
    let envs = crate::tables::tabular::distinct(pts.iter().map(|p| p.environment.as_str())).len();
    let series = |p: &Point| match (hosts > 1, envs > 1) {
        (true, true) => format!("{} {}", p.host(), p.environment),
        (true, false) => p.host().to_string(),
        (false, true) => p.environment.clone(),
        (false, false) => String::new(),
    };
    // Rows: a point each, or the points of one (series, key value) pooled.
    let mut groups: Vec<(String, String, Vec<&Point>)> = Vec::new();
    for p in pts {
        let label = match &opts.by {
            Some(k) => fact(p, k, docs.get(&p.run_id)).unwrap_or_else(|| "(none)".into()),
            None => p.run_id.clone(),
        };
        let s = series(p);
        match groups.iter_mut().find(|g| opts.by.is_some() && g.0 == s && g.1 == label) {
            Some(g) => g.2.push(p),
            None => groups.push((s, label, vec![p])),
        }
    }
    let name = format!("{} {} {}", first.benchmark, first.params, first.metric);
    let mut rows: Vec<Row> = groups.into_iter().map(|(s, label, g)| pooled(s, label, &g, &name)).collect();
    let shown = shown_from(rows.len(), opts.last);
    judge_steps(&mut rows, first.better, &opts.policy, &name, shown);
    History {
        benchmark: first.benchmark.clone(),
        params: first.params.clone(),
        metric: first.metric.clone(),
        unit: first.unit.clone(),
        better: first.better,
        by: opts.by.clone(),
        rows,
    }
}

/// A row from its points: one run as stored, several pooled (their rounds
/// together: median and interval recomputed).
fn pooled(series: String, label: String, g: &[&Point], name: &str) -> Row {
    let samples: Vec<Vec<f64>> = g.iter().flat_map(|p| p.samples.iter().cloned()).collect();
    let condition = crate::tables::tabular::distinct(g.iter().map(|p| format!("{}/{}", p.load, p.isolation))).join(",");
    let (median, interval) = match g {
        [one] => {
            (one.median, one.interval.or_else(|| uncertainty::bootstrap::estimate(&one.samples, seed_of(&one.run_id)).map(|e| e.interval)))
        }
        _ => match uncertainty::bootstrap::estimate(&samples, seed_of(&format!("{name} {label}"))) {
            Some(e) => (e.median, Some(e.interval)),
            None => {
                (crate::analysis::stats::Summary::of(&g.iter().map(|p| p.median).collect::<Vec<_>>()).map_or(f64::NAN, |s| s.median), None)
            }
        },
    };
    Row {
        label,
        started_at: g[0].started_at.clone(),
        series,
        condition,
        runs: g.len(),
        median,
        interval,
        rounds: samples.iter().filter(|r| !r.is_empty()).count(),
        samples,
        step: None,
    }
}

/// Each row's step from the previous row of its series, judged as `compare`
/// judges. Rows before `shown` (not in the table) are judged only where
/// their medians moved beyond the margin: a step within it cannot be
/// `faster` or `slower` (the interval of the ratio holds the ratio of the
/// medians), and a bootstrap per step would make a history of thousands of
/// runs take minutes. Those steps keep `judged` false.
fn judge_steps(rows: &mut [Row], better: Better, policy: &Thresholds, name: &str, shown: usize) {
    let band = (1.0 / (1.0 + policy.margin), 1.0 + policy.margin);
    let mut last_of: HashMap<String, usize> = HashMap::new();
    for i in 0..rows.len() {
        let Some(from) = last_of.insert(rows[i].series.clone(), i) else { continue };
        let (a, b) = (&rows[from], &rows[i]);
        let ratio = match better {
            Better::Lower => a.median / b.median,
            Better::Higher => b.median / a.median,
        };
        let judge = i >= shown || !(band.0..=band.1).contains(&ratio);
        let c = judge.then(|| {
            let seed = seed_of(&format!("{name} {} {}", a.label, b.label));
            uncertainty::verdict::compare(&a.samples, &b.samples, better == Better::Lower, policy, seed)
        });
        rows[i].step = Some(Step {
            from,
            change: b.median / a.median - 1.0,
            ratio: c.flatten().map_or(ratio, |c| c.ratio),
            interval: c.flatten().map(|c| c.interval),
            verdict: c.flatten().map_or(Verdict::Unsure, |c| c.verdict),
            judged: judge,
        });
    }
}

/// The first row a table shows: the newest `last` (0: all).
pub fn shown_from(rows: usize, last: usize) -> usize {
    if last > 0 { rows.saturating_sub(last) } else { 0 }
}

/// A step's verdict as the tables show it.
fn verdict_of(s: &Step) -> &'static str {
    if s.judged { verdict_word(s.verdict) } else { "within margin" }
}

/// A value in the cell's unit as tables print it.
pub fn value(v: f64, unit: &str) -> String {
    if unit == UNIT_CYCLES || v.abs() >= 100.0 {
        cycles(v)
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The cells of one history row, as both the terminal and the HTML tables show them.
fn row_cells(h: &History, i: usize, with_series: bool, with_condition: bool) -> Vec<String> {
    let r = &h.rows[i];
    let mut c = vec![(i + 1).to_string(), r.started_at.replace('T', " ").trim_end_matches('Z').chars().take(16).collect()];
    if with_series {
        c.push(r.series.clone());
    }
    if with_condition {
        c.push(r.condition.clone());
    }
    c.push(value(r.median, &h.unit));
    c.push(r.interval.map_or("-".into(), |iv| format!("{}..{}", value(iv.lo, &h.unit), value(iv.hi, &h.unit))));
    c.push(if h.by.is_some() { format!("{}/{}", r.runs, r.rounds) } else { r.rounds.to_string() });
    match r.step {
        Some(s) => {
            c.push(format!("{:+.1}% {}", s.change * 100.0, verdict_of(&s)));
            c.push(if s.marked() { format!("<< {}", verdict_word(s.verdict)) } else { String::new() });
        }
        None => c.extend(["".into(), "".into()]),
    }
    c.push(r.label.clone());
    c
}

/// The headers matching `row_cells`.
fn headers(h: &History, with_series: bool, with_condition: bool) -> Vec<String> {
    let mut v: Vec<String> = vec!["#".into(), "started (UTC)".into()];
    if with_series {
        v.push("series".into());
    }
    if with_condition {
        v.push("load/isolation".into());
    }
    let unit = if h.unit == UNIT_CYCLES { "cycles".to_string() } else { h.unit.clone() };
    v.extend([format!("median ({unit})"), "95% interval".into(), if h.by.is_some() { "runs/rounds".into() } else { "rounds".into() }]);
    v.extend(["step, verdict".into(), "marked".into(), h.by.clone().unwrap_or_else(|| "run".into())]);
    v
}

/// Which optional columns a history needs: series, load/isolation.
fn optional_columns(h: &History) -> (bool, bool) {
    (h.series().len() > 1, crate::tables::tabular::distinct(h.rows.iter().map(|r| r.condition.as_str())).len() > 1)
}

/// The summary line: first and last value, the largest step and where.
pub fn summary(h: &History) -> String {
    let (Some(first), Some(last)) = (h.rows.first(), h.rows.last()) else { return "no measurements".into() };
    let u = if h.unit == UNIT_CYCLES { " cycles" } else { "" };
    let mut s = format!(
        "first {}{u} (#1), last {}{u} (#{}): {:+.1}% over {} rows",
        value(first.median, &h.unit),
        value(last.median, &h.unit),
        h.rows.len(),
        (last.median / first.median - 1.0) * 100.0,
        h.rows.len()
    );
    s += &match h.largest_step() {
        Some((i, st)) if st.marked() => format!(
            "; largest step {:+.1}% ({}) at #{} ({}, {}) from #{}",
            st.change * 100.0,
            verdict_word(st.verdict),
            i + 1,
            h.rows[i].label,
            h.rows[i].started_at,
            st.from + 1
        ),
        Some((i, st)) => {
            format!("; no step marked (largest change {:+.1}% at #{}, {})", st.change * 100.0, i + 1, verdict_of(&st))
        }
        None => "; no steps (one row per series)".into(),
    };
    s + &format!("; {} steps marked", h.rows.iter().filter(|r| r.step.is_some_and(|s| s.marked())).count())
}

/// What the columns mean, once under the tables.
pub fn legend(policy: &Thresholds) -> String {
    format!(
        "  step: change of the median from the previous row of the same series; verdict as `compare` judges it (bootstrap 95% interval \
         of the ratio, Mann-Whitney over round medians, margin {:.0}%, at least {} rounds a side); marked (<<) only where faster or slower.\n",
        policy.margin * 100.0,
        policy.min_rounds
    )
}

/// The histories as terminal tables (the newest `last` rows of each; 0: all).
pub fn render(hs: &[History], opts: &Options) -> String {
    let mut out = String::new();
    for h in hs {
        let better = if h.better == Better::Lower { "lower is better" } else { "higher is better" };
        out += &format!("{} ({better})\n", h.title());
        let (ws, wc) = optional_columns(h);
        let hdr = headers(h, ws, wc);
        let mut t = TextTable::new(&hdr.iter().map(String::as_str).collect::<Vec<_>>(), 2);
        t.also_left = (hdr.len() - 3..hdr.len()).collect();
        let skip = shown_from(h.rows.len(), opts.last);
        for i in skip..h.rows.len() {
            t.row(row_cells(h, i, ws, wc));
        }
        out += &t.render();
        if skip > 0 {
            out += &format!("  ({skip} older rows not shown; --last 0 shows all)\n");
        }
        out += &format!("  {}\n\n", summary(h));
    }
    out + &legend(&opts.policy)
}

/// A history as a markup table (HTML), the newest `last` rows (0: all), marked steps coloured.
pub fn markup(h: &History, last: usize) -> MarkupTable {
    let (ws, wc) = optional_columns(h);
    let hdr = headers(h, ws, wc);
    let n = hdr.len();
    let mut t = MarkupTable::new(&hdr.iter().map(String::as_str).collect::<Vec<_>>(), &(0..n - 3).collect::<Vec<_>>());
    for (i, r) in h.rows.iter().enumerate().skip(shown_from(h.rows.len(), last)) {
        let colour = r.step.filter(Step::marked).map(|s| if s.verdict == Verdict::Slower { "#c62828" } else { "#2e7d32" });
        t.row(
            row_cells(h, i, ws, wc)
                .into_iter()
                .map(|c| if let Some(col) = colour { MCell::coloured(c, col) } else { MCell::from(c) })
                .collect(),
        );
    }
    t
}
