//! What continuous-benchmarking services read, from one run or from a
//! comparison of two (the second run's values, and its performance relative
//! to the first):
//!
//! - Bencher Metric Format (BMF) JSON, as published at
//!   <https://bencher.dev/docs/reference/bencher-metric-format> (JSON schema
//!   <https://bencher.dev/bmf.json>): an object keyed by benchmark name, each
//!   an object keyed by measure, each `{"value", "lower_value",
//!   "upper_value"}` (`value` required, the bounds optional). BMF has no unit
//!   field (a unit belongs to the measure in Bencher), so the measure's name
//!   carries it: `per_call (tsc_cycles)`.
//! - github-action-benchmark's `customSmallerIsBetter` and
//!   `customBiggerIsBetter` tools (benchmark-action/github-action-benchmark,
//!   `src/extract.ts`, `extractCustomBenchmarkResult`): a JSON array of
//!   `{"name", "unit", "value", "range"?, "extra"?}`, `range` and `extra`
//!   free strings (shown in the chart's tooltip). One file per direction:
//!   costs (cycles, ns) are smaller-is-better, rates bigger-is-better.
//!
//! Every value is the cell's median; its bounds the 95% interval of that
//! median (hierarchical bootstrap over rounds, then batches), absent where a
//! run kept no samples.

use crate::analysis::uncertainty::verdict::Thresholds;
use crate::data::compare::{self, Judged, verdict_word};
use crate::data::results::{Better, CaseResult, CaseStatus, Metric, RunDoc, params_label};
use serde_json::{Map, Value, json};

/// A metric as the exports name it.
struct Entry<'a> {
    /// Benchmark, parameters, and where it was measured when that is not native, idle, pinned.
    name: String,
    metric: &'a Metric,
    /// Where it was measured, for `extra`.
    context: String,
    /// Against the first run, in a comparison.
    judged: Option<Judged>,
}

fn case_name(r: &CaseResult, doc: &RunDoc) -> String {
    let (l, i) = r.load_isolation(doc);
    let mut name = format!("{} {}", r.benchmark, params_label(&r.params));
    if r.env(doc) != "native" {
        name += &format!(" [{}]", r.env(doc));
    }
    if (l, i.as_ref()) != ("idle", "pinned") {
        name += &format!(" [{l}/{i}]");
    }
    tidy(&name)
}

/// Single spaces between words.
fn tidy(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The metrics of `docs`' last run (every metric of every measured case),
/// each judged against the first run when there are two.
fn entries<'a>(docs: &'a [RunDoc], policy: &Thresholds) -> Vec<Entry<'a>> {
    let Some(b) = docs.last() else { return vec![] };
    let rows = if docs.len() == 2 { compare::rows(&docs[0], b, policy) } else { vec![] };
    let mut out = Vec::new();
    for r in b.results.iter().filter(|r| r.status == CaseStatus::Ok) {
        let name = case_name(r, b);
        let (l, i) = r.load_isolation(b);
        let context = format!(
            "host {}, kernel {}, environment {}, load {l}, isolation {i}, run {}",
            b.host.hostname,
            b.host.kernel_release,
            r.env(b),
            b.id
        );
        for m in &r.metrics {
            // A compare row's label is the parameters and the same context as the name.
            let same = |row: &&compare::Row| row.metric == m.name && tidy(&format!("{} {}", row.benchmark, row.params)) == name;
            let judged = rows.iter().find(same).map(|row| row.judged);
            out.push(Entry { name: name.clone(), metric: m, context: context.clone(), judged });
        }
    }
    out
}

/// The measure name of a metric: its name and unit.
fn measure(m: &Metric) -> String {
    format!("{} ({})", m.name, m.unit)
}

/// A measure name within BMF's 64 characters.
fn within_64(s: String) -> String {
    s.chars().take(64).collect()
}

/// What an export left out: a cell with no finite value (JSON has no NaN
/// or infinity, and a `null` breaks the services that read it).
pub type LeftOut = Vec<String>;

/// An export's JSON and what it left out.
pub type CiExport = (Value, LeftOut);

/// `lo` and `hi` when both are finite.
fn finite_pair(lo: f64, hi: f64) -> Option<(f64, f64)> {
    (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
}

/// Bencher Metric Format JSON of the last run (and, of two, its ratio to
/// the first), and the cells left out for want of a finite value.
pub fn bmf(docs: &[RunDoc], policy: &Thresholds) -> (Value, LeftOut) {
    let mut top = Map::new();
    let mut left = LeftOut::new();
    for e in entries(docs, policy) {
        let bench = top.entry(e.name.clone()).or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(measures) = bench else { continue };
        if e.metric.summary.median.is_finite() {
            let mut v = json!({ "value": e.metric.summary.median });
            if let Some((lo, hi)) = e.metric.estimate.and_then(|est| finite_pair(est.interval.lo, est.interval.hi)) {
                v["lower_value"] = json!(lo);
                v["upper_value"] = json!(hi);
            }
            measures.insert(within_64(measure(e.metric)), v);
        } else {
            left.push(format!("{} {}: its median is not a finite number", e.name, e.metric.name));
        }
        if let Some(j) = e.judged {
            if !j.ratio.is_finite() {
                left.push(format!("{} {} against the baseline: the ratio is not a finite number", e.name, e.metric.name));
                continue;
            }
            let mut r = json!({ "value": j.ratio });
            if let Some((lo, hi)) = j.interval.and_then(|iv| finite_pair(iv.lo, iv.hi)) {
                r["lower_value"] = json!(lo);
                r["upper_value"] = json!(hi);
            }
            measures.insert(within_64(format!("{} vs baseline (ratio, >1 better)", e.metric.name)), r);
        }
    }
    top.retain(|_, v| v.as_object().is_some_and(|m| !m.is_empty()));
    (Value::Object(top), left)
}

/// github-action-benchmark custom JSON of the last run's metrics that
/// improve in direction `better` (`Lower`: customSmallerIsBetter; `Higher`:
/// customBiggerIsBetter), and the cells left out for want of a finite value.
pub fn github_action_benchmark(docs: &[RunDoc], better: Better, policy: &Thresholds) -> (Value, LeftOut) {
    let mut left = LeftOut::new();
    let items: Vec<Value> = entries(docs, policy)
        .into_iter()
        .filter(|e| e.metric.better == better)
        .filter_map(|e| {
            let m = e.metric;
            if !m.summary.median.is_finite() {
                left.push(format!("{} {}: its median is not a finite number", e.name, m.name));
                return None;
            }
            let mut extra = format!("median of {} rounds; {}", m.samples.len().max(1), e.context);
            let mut v = json!({ "name": format!("{} {}", e.name, m.name), "unit": m.unit, "value": m.summary.median });
            if let Some(est) = m.estimate {
                let half = est.interval.relative_half_width(est.median) * est.median.abs();
                if half.is_finite() {
                    v["range"] = json!(format!("± {}", fmt(half)));
                }
                if let Some((lo, hi)) = finite_pair(est.interval.lo, est.interval.hi) {
                    extra = format!("95% interval {}..{}; {extra}", fmt(lo), fmt(hi));
                }
            }
            if let Some(j) = e.judged {
                let iv = j
                    .interval
                    .and_then(|iv| finite_pair(iv.lo, iv.hi))
                    .map_or(String::new(), |(lo, hi)| format!(" [{}, {}]", fmt(lo), fmt(hi)));
                let ratio =
                    if j.ratio.is_finite() { format!("ratio {}{iv}, above 1 better", fmt(j.ratio)) } else { "no finite ratio".to_string() };
                extra += &format!("; against the baseline run: {} ({ratio})", verdict_word(j.verdict));
            }
            v["extra"] = json!(extra);
            Some(v)
        })
        .collect();
    (Value::Array(items), left)
}

/// A number in a few significant digits.
fn fmt(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}
