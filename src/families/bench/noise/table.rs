//! The L4Re "Detaching Linux threads" slides' FWQ table, "Deltas to minimum in CPU cycles":
//! rows are loads, columns isolation modes, each cell "cycles (percent)"; a
//! detail table per measurement says what else happened (load throughput,
//! interrupts on the CPU, involuntary switches) so that a spike can be
//! traced. The grid and the detail lines are the control loop's too
//! (`control/table.rs`); the histograms of both are drawn here.

use crate::base::sources::Source;
use crate::data::results::{CaseResult, CaseStatus, RunDoc, params_label};
use crate::data::schema_core::attribution::{ATTRIBUTION, INTERRUPTS, INVOLUNTARY_CONTEXT_SWITCHES, SOFTIRQS};
use crate::families::bench::schema::{condition, control, noise};
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::figures::{Clock, Histogram, Plots, context, environments};
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, worst};
use crate::tables::tabular::table::TextTable;
use crate::tables::tabular::tables::Layout;
use crate::tables::tabular::{distinct, num};

pub(crate) fn pct(v: f64, of: f64) -> String {
    format!("{v:.0} ({:.2}%)", 100.0 * v / of)
}

/// The top interrupt sources on the measured CPU during the case.
fn causes(r: &CaseResult) -> String {
    let Some(a) = r.details.get(ATTRIBUTION) else { return String::new() };
    let mut all: Vec<(String, u64)> = [INTERRUPTS, SOFTIRQS]
        .iter()
        .filter_map(|k| a.get(*k).and_then(|v| v.as_object()))
        .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0))))
        .collect();
    all.sort_by_key(|(_, v)| std::cmp::Reverse(*v));
    let top: Vec<String> = all.iter().take(3).map(|(k, v)| format!("{k} {v}")).collect();
    let ivcsw = a.get(INVOLUNTARY_CONTEXT_SWITCHES).and_then(|v| v.as_u64()).unwrap_or(0);
    format!("{}; {ivcsw} invol. switches", if top.is_empty() { "no interrupts".into() } else { top.join(", ") })
}

/// A result's cell text when it has no measurement.
pub(crate) fn unmeasured(r: &CaseResult) -> Option<String> {
    match r.status {
        CaseStatus::Ok => None,
        CaseStatus::NotApplicable => Some("n/a".into()),
        CaseStatus::Failed => Some("failed".into()),
    }
}

fn load_rate(r: &CaseResult) -> String {
    r.condition.as_ref().map_or_else(String::new, |c| crate::tables::tabular::describe_rates(&c.facts))
}

/// Notes under a table: why cells are n/a or failed, and what each isolation did.
/// What the table's cycles are: CPU cycles, or emulated cycles where an
/// environment ran under QEMU's TCG (never put on one axis unnamed).
pub(crate) fn cycles_of(doc: &RunDoc, rs: &[&CaseResult]) -> String {
    let emulated: Vec<String> =
        environments(doc).into_iter().filter(|e| rs.iter().any(|r| r.env(doc) == e) && Clock::of(doc, e) == Clock::Emulated).collect();
    match emulated.len() {
        0 => "CPU cycles".into(),
        n if n == distinct(rs.iter().map(|r| r.env(doc).to_string())).len() => {
            "emulated cycles (the host's TSC while QEMU's TCG ran the guest)".into()
        }
        _ => format!("cycles (emulated cycles in {}: the host's TSC while QEMU's TCG ran the guest)", emulated.join(", ")),
    }
}

pub(crate) fn notes(doc: &RunDoc, rs: &[&CaseResult]) -> String {
    let mut out = Vec::new();
    for r in rs {
        let (load, iso) = r.load_isolation(doc);
        if let Some(why) = r.reason.as_deref().filter(|_| r.status != CaseStatus::Ok) {
            let line = format!("  {load}/{iso}: {why}");
            if !out.contains(&line) {
                out.push(line);
            }
        }
        if let Some(cut) = r.details.get(noise::details::CUT).and_then(|v| v.as_str()) {
            out.push(format!("  {load}/{iso} {}: {cut}", params_label(&r.params)));
        }
        if let Some(c) = &r.condition {
            for key in condition::ISOLATION_NOTES {
                if let Some(v) = c.facts.get(key) {
                    let head = format!("  {iso}: {key} = ");
                    if !out.iter().any(|l| l.starts_with(&head)) {
                        let mut line = format!("{head}{}", v.as_str().map_or_else(|| v.to_string(), str::to_string));
                        if key == condition::SCHED_RT_RUNTIME_US && v.as_str().is_some_and(|s| s != "-1") {
                            line += " (RT throttling: a SCHED_FIFO thread that never sleeps, as in fwq and busy-tsc, loses the rest of each second)";
                        }
                        out.push(line);
                    }
                }
            }
        }
    }
    if out.is_empty() { String::new() } else { format!("notes:\n{}\n", out.join("\n")) }
}

/// A grid of loads (rows) by isolations (columns, after the `lead` columns),
/// each in order of first appearance among `rs`.
pub(crate) fn grid<'a>(doc: &'a RunDoc, rs: &[&'a CaseResult], lead: &[&str]) -> (Vec<&'a str>, Vec<String>, TextTable) {
    let loads = distinct(rs.iter().map(|r| r.load_isolation(doc).0));
    let isos = distinct(rs.iter().map(|r| r.load_isolation(doc).1.into_owned()));
    let mut headers = lead.to_vec();
    headers.extend(isos.iter().map(String::as_str));
    let table = TextTable::new(&headers, lead.len());
    (loads, isos, table)
}

/// The table of every measurement: load and isolation, the `heads` columns
/// (the first `labels` of them row labels) with their `cells`, then what
/// the load did and what happened on the CPU.
pub(crate) fn per_measurement(
    doc: &RunDoc,
    rs: &[&CaseResult],
    heads: &[&str],
    labels: usize,
    cells: impl Fn(&CaseResult) -> Vec<String>,
) -> TextTable {
    let mut headers = vec!["Load", "isolation"];
    headers.extend(heads);
    headers.extend(["load during", "on the CPU during"]);
    let mut t = TextTable::new(&headers, 2 + labels);
    t.also_left = vec![headers.len() - 2, headers.len() - 1];
    for r in rs.iter().filter(|r| r.status == CaseStatus::Ok) {
        let (l, i) = r.load_isolation(doc);
        let mut row = vec![l.to_string(), i.to_string()];
        row.extend(cells(r));
        row.extend([load_rate(r), causes(r)]);
        t.row(row);
    }
    t
}

/// A result's quantum as its row label, "quantum_us=1400" ("-" in a
/// document from before the quantum was a parameter).
fn quantum(r: &CaseResult) -> String {
    r.params.get("quantum_us").map_or("-".into(), |v| format!("quantum_us={}", crate::data::results::param_text(v)))
}

pub fn render_fwq(doc: &RunDoc) -> String {
    use noise::details::*;
    let id = noise::id(noise::FWQ);
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.benchmark == id).collect();
    if rs.is_empty() {
        return String::new();
    }
    let (loads, isos, mut grid) = grid(doc, &rs, &["quantum", "Load"]);
    let quanta = distinct(rs.iter().map(|r| quantum(r)));
    let find = |q: &str, l: &str, i: &str| rs.iter().copied().find(|r| quantum(r) == q && r.measured_under(doc, l, i));
    for q in &quanta {
        for l in &loads {
            let mut row = vec![q.to_string(), l.to_string()];
            for i in &isos {
                row.push(
                    find(q, l, i)
                        .map_or("-".into(), |r| unmeasured(r).unwrap_or_else(|| pct(num(r, MAX_DELTA_CYCLES), num(r, MIN_CYCLES)))),
                );
            }
            grid.row(row);
        }
    }
    let detail = per_measurement(doc, &rs, &["quantum", "min", "max", "p99.9", "p99", "lost", "samples"], 1, |r| {
        let min = num(r, MIN_CYCLES);
        vec![
            quantum(r),
            format!("{min:.0}"),
            pct(num(r, MAX_DELTA_CYCLES), min),
            pct(num(r, P999_DELTA_CYCLES), min),
            pct(num(r, P99_DELTA_CYCLES), min),
            format!("{:.3}%", 100.0 * num(r, LOST_FRACTION)),
            r.metric(noise::SAMPLE).map_or("-".into(), |m| m.summary.n.to_string()),
        ]
    });
    format!(
        "fwq: deltas to minimum in {} (as in {}): largest delta (percent of the minimum quantum; the slides' quantum is \
         about 1.4 ms, quantum_us=1400)\n{}\nfwq per measurement:\n{}{}",
        cycles_of(doc, &rs),
        Source::L4ReDetaching.short(),
        grid.render(),
        detail.render(),
        notes(doc, &rs)
    )
}

/// OS noise (FWQ), every condition in one grid.
pub static TABLE: FamilyTable = FamilyTable::new(&[noise::FAMILY], render_fwq).laid_out(Layout::Environment);

/// The histograms of noise and jitter, one per measured result (FWQ's
/// deltas to the minimum quantum, the control loop's period deviations).
pub struct JitterHistograms;

impl Plots for JitterHistograms {
    fn histograms(&self, doc: &RunDoc) -> Vec<Histogram> {
        let mut out = Vec::new();
        for r in doc.results.iter().filter(|r| r.status == CaseStatus::Ok) {
            let (key, what) = match r.family.as_str() {
                noise::FAMILY => (noise::details::DELTA_HISTOGRAM_LOG2, "FWQ: delta to the minimum quantum (cycles, log2 buckets)"),
                control::FAMILY => {
                    (control::details::PERIOD_DEV_ABS_HISTOGRAM_LOG2, "control loop: |period deviation| (cycles, log2 buckets)")
                }
                _ => continue,
            };
            let Some(buckets) = r.details.get(key).and_then(|v| serde_json::from_value::<Vec<u64>>(v.clone()).ok()) else { continue };
            let (l, i) = r.load_isolation(doc);
            let title = format!("{} {} ({}, load {l}, isolation {i})", r.benchmark, params_label(&r.params), r.env(doc));
            out.push(Histogram { title, what, buckets, caption: context(doc, r) });
        }
        out
    }
}

/// The summary's headline: FWQ's worst sample.
pub struct NoiseHeadline;

impl Headlines for NoiseHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        worst("FWQ: worst sample (noise)", extreme(pick.of(noise::FAMILY), noise::SAMPLE, true)).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_emulated_environments_cycles_are_named_so() {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/multi-env.json"));
        let doc = crate::data::documents::load(path).unwrap();
        let of = |e: &str| doc.results.iter().filter(|r| e.is_empty() || r.env(&doc) == e).collect::<Vec<_>>();
        assert_eq!(super::cycles_of(&doc, &of("native")), "CPU cycles");
        assert!(super::cycles_of(&doc, &of("qemu-tcg")).starts_with("emulated cycles"), "{}", super::cycles_of(&doc, &of("qemu-tcg")));
        assert!(super::cycles_of(&doc, &of("")).contains("emulated cycles in qemu-tcg"), "{}", super::cycles_of(&doc, &of("")));
    }
}
