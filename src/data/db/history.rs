//! A cell's history: every stored measurement of the chosen benchmarks, with
//! what `report --history` needs to judge the steps between runs (the
//! interval of the median, which way the metric improves, the raw samples
//! per round), read from the results table by the index
//! `results_cell (benchmark, metric, run_id)`, so that a store of thousands
//! of runs answers without reading their documents. Rows stored before
//! migration 3 lack those columns; they are filled from the run's document.

use super::{Db, DbError, Value};
use crate::analysis::uncertainty::bootstrap::Interval;
use crate::data::results::{Better, Metric, RunDoc};
use std::collections::HashMap;

/// One stored measurement of one metric of one case in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub run_id: String,
    pub started_at: String,
    pub hostname: String,
    /// The run's `--label` (fleets), if any.
    pub label: Option<String>,
    pub kernel: String,
    pub tool_version: String,
    /// Where this result was measured (its own, not the run's lists).
    pub environment: String,
    pub load: String,
    pub isolation: String,
    pub benchmark: String,
    pub params: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub median: f64,
    /// 95% interval of the median (None: a version 1 document).
    pub interval: Option<Interval>,
    /// The raw samples, one list per round (empty: none kept).
    pub samples: Vec<Vec<f64>>,
    /// The case's position in its run's document.
    pub idx: i64,
}

impl Point {
    /// The host as a fleet names it: its label, else its hostname.
    pub fn host(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.hostname)
    }
}

/// The history columns of a result row (migration 3): lo, hi, better, samples.
pub(super) fn columns(m: Option<&Metric>) -> Vec<Value> {
    let e = m.and_then(|m| m.estimate);
    let better = m.map(|m| if m.better == Better::Higher { "higher" } else { "lower" }.to_string());
    let samples = m.filter(|m| !m.samples.is_empty()).and_then(|m| serde_json::to_string(&m.samples).ok());
    vec![Value::Real(e.map(|e| e.interval.lo)), Value::Real(e.map(|e| e.interval.hi)), better.into(), samples.into()]
}

const POINT_SQL: &str = "SELECT r.run_id, u.started_at, u.hostname, u.label, u.kernel, u.tool_version, r.environment, r.load, r.isolation,
        r.benchmark, r.params, r.metric, r.unit, r.median, r.lo, r.hi, r.better, r.samples, r.idx
 FROM results r JOIN runs u ON u.id = r.run_id
 WHERE r.benchmark = $1 AND r.status = 'ok' AND r.metric IS NOT NULL AND (u.fleet = $2 OR $2 = '')
 ORDER BY u.started_at, r.run_id, r.idx";

impl Db {
    /// The benchmarks the store has results of, sorted.
    pub fn benchmarks(&mut self) -> Result<Vec<String>, DbError> {
        let rows = self.query("SELECT DISTINCT benchmark FROM results ORDER BY benchmark", &[])?;
        Ok(rows.iter().filter_map(|r| r[0].text().map(String::from)).collect())
    }

    /// Every measured point of `benchmark` (of one fleet, or all), oldest
    /// run first.
    pub fn history(&mut self, benchmark: &str, fleet: Option<&str>) -> Result<Vec<Point>, DbError> {
        let rows = self.query(POINT_SQL, &[benchmark.into(), fleet.unwrap_or_default().into()])?;
        let mut docs: HashMap<String, Option<RunDoc>> = HashMap::new();
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut p = point(&row)?;
            if p.better_unknown {
                // A row from before migration 3: the rest from its document.
                let doc = match docs.get(&p.point.run_id) {
                    Some(d) => d,
                    None => {
                        let d = self.load(&p.point.run_id)?;
                        docs.entry(p.point.run_id.clone()).or_insert(d)
                    }
                };
                fill_from(&mut p.point, doc.as_ref());
            }
            out.push(p.point);
        }
        Ok(out)
    }

    /// The query plan of [`Db::history`] (SQLite's EXPLAIN QUERY PLAN), to
    /// show the index it uses.
    pub fn history_plan(&mut self) -> Result<Vec<String>, DbError> {
        let rows = self.query(&format!("EXPLAIN QUERY PLAN {POINT_SQL}"), &["x".into(), "".into()])?;
        Ok(rows.iter().map(|r| r.iter().filter_map(|v| v.text().map(String::from)).collect::<Vec<_>>().join(" ")).collect())
    }
}

/// A point as read, and whether its history columns were empty.
struct Read {
    point: Point,
    better_unknown: bool,
}

fn point(row: &[Value]) -> Result<Read, DbError> {
    let s = |i: usize| row[i].text().unwrap_or_default().to_string();
    let f = |i: usize| match row[i] {
        Value::Real(v) => v,
        Value::Int(v) => v.map(|v| v as f64),
        Value::Text(_) => None,
    };
    let samples = match row[17].text() {
        Some(t) => serde_json::from_str(t).map_err(|e| DbError::Document(format!("samples of run '{}': {e}", s(0))))?,
        None => Vec::new(),
    };
    let median = f(13);
    let interval = f(14).zip(f(15));
    let better = if row[16].text() == Some("higher") { Better::Higher } else { Better::Lower };
    let at = format!("the stored result {} of run '{}'", s(9), s(0));
    crate::data::results::check::check_row(&at, median, interval, &samples, better, &s(12))
        .map_err(|e| DbError::Document(e.to_string()))?;
    let point = Point {
        run_id: s(0),
        started_at: s(1),
        hostname: s(2),
        label: row[3].text().map(String::from),
        kernel: s(4),
        tool_version: s(5),
        environment: s(6),
        load: s(7),
        isolation: s(8),
        benchmark: s(9),
        params: s(10),
        metric: s(11),
        unit: s(12),
        better,
        median: median.unwrap_or(f64::NAN),
        interval: interval.map(|(lo, hi)| Interval { lo, hi }),
        samples,
        idx: row[18].int().unwrap_or(-1),
    };
    Ok(Read { point, better_unknown: row[16].text().is_none() })
}

/// Direction, interval and samples from the run's document.
fn fill_from(p: &mut Point, doc: Option<&RunDoc>) {
    let Some(m) = doc.and_then(|d| d.results.get(p.idx as usize)).and_then(|r| r.metric(&p.metric)) else { return };
    p.better = m.better;
    p.interval = m.estimate.map(|e| e.interval);
    p.samples = m.samples.clone();
}
