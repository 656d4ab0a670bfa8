//! A table for a family no table of the report shows (a family added
//! without a table yet, or one from a newer oscycles): every metric of
//! every case, with its median, interval and unit, so that nothing measured
//! is hidden from the text output.

use crate::data::results::{CaseResult, CaseStatus, params_label};
use crate::tables::tabular::table::{TextTable, interval};

/// One table per family of `results`, in the order they first appear.
pub fn render(results: &[&CaseResult]) -> String {
    let mut families: Vec<&str> = Vec::new();
    for r in results {
        if !families.contains(&r.family.as_str()) {
            families.push(&r.family);
        }
    }
    let mut out = String::new();
    for f in families {
        let mut t = TextTable::new(&["benchmark", "parameters", "metric", "median", "unit", "95% interval", "status"], 3);
        for r in results.iter().filter(|r| r.family == f) {
            if r.status != CaseStatus::Ok || r.metrics.is_empty() {
                let why = format!("{}: {}", super::export::status(r.status), r.reason.as_deref().unwrap_or(""));
                t.row(vec![r.benchmark.clone(), params_label(&r.params), "-".into(), "-".into(), "-".into(), "-".into(), why]);
                continue;
            }
            for m in &r.metrics {
                let median = format!("{:.4}", m.summary.median);
                t.row(vec![r.benchmark.clone(), params_label(&r.params), m.name.clone(), median, m.unit.clone(), interval(m), "ok".into()]);
            }
        }
        out += &format!("family {f}: every metric (no table of its own)\n");
        out += &t.render();
    }
    out
}
