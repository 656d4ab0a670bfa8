//! Seed 001's tables: "Deltas to minimum in CPU cycles" (FWQ) and "Maximum
//! deviation in CPU cycles" (the control loop). Rows are the load, columns
//! the isolation mode of the run; each cell is "cycles (percent)".

use super::table::Table;
use crate::results::{CaseResult, CaseStatus, RunDoc};

fn num(r: &CaseResult, key: &str) -> f64 {
    r.details.get(key).and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
}

fn pct(v: f64, of: f64) -> String {
    format!("{v:.0} ({:.2}%)", 100.0 * v / of)
}

/// The top interrupt sources on the measured CPU during the case.
fn causes(r: &CaseResult) -> String {
    let Some(a) = r.details.get("attribution") else { return String::new() };
    let mut all: Vec<(String, u64)> = ["interrupts", "softirqs"]
        .iter()
        .filter_map(|k| a.get(*k).and_then(|v| v.as_object()))
        .flat_map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0))))
        .collect();
    all.sort_by_key(|(_, v)| std::cmp::Reverse(*v));
    let top: Vec<String> = all.iter().take(3).map(|(k, v)| format!("{k} {v}")).collect();
    let ivcsw = a.get("involuntary_context_switches").and_then(|v| v.as_u64()).unwrap_or(0);
    format!("{}; {ivcsw} involuntary switches", if top.is_empty() { "no interrupts".into() } else { top.join(", ") })
}

pub fn render_fwq(doc: &RunDoc) -> String {
    let Some(r) = doc.results.iter().find(|r| r.benchmark == "noise.fwq") else { return String::new() };
    if r.status != CaseStatus::Ok {
        return format!("fwq: {}\n", r.reason.as_deref().unwrap_or("failed"));
    }
    let min = num(r, "min_cycles");
    let mut t = Table::new(&["Load", &doc.condition.isolation, "p99.9", "p99", "time lost", "samples", "on the CPU during the run"], 1);
    t.also_left = vec![6];
    t.row(vec![
        doc.condition.load.clone(),
        pct(num(r, "max_delta_cycles"), min),
        pct(num(r, "p999_delta_cycles"), min),
        pct(num(r, "p99_delta_cycles"), min),
        format!("{:.3}%", 100.0 * num(r, "lost_fraction")),
        r.metric("sample").map_or("-".into(), |m| m.summary.n.to_string()),
        causes(r),
    ]);
    format!("fwq: deltas to minimum in CPU cycles (seed 001): max (percent of the {min:.0}-cycle minimum quantum)\n{}", t.render())
}

pub fn render_control(doc: &RunDoc) -> String {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.family == "control").collect();
    if rs.is_empty() {
        return String::new();
    }
    let mut t = Table::new(
        &["Load", "wait", &format!("{} +max", doc.condition.isolation), "-max", "p99 late", "overruns", "on the CPU during the run"],
        2,
    );
    t.also_left = vec![6];
    for r in rs {
        let wait = r.benchmark.trim_start_matches("control.").to_string();
        if r.status != CaseStatus::Ok {
            t.row(vec![doc.condition.load.clone(), wait, r.reason.clone().unwrap_or_default()]);
            continue;
        }
        let period = num(r, "period_cycles");
        let p99 = r.metric("deviation").map_or(f64::NAN, |m| m.summary.p99);
        t.row(vec![
            doc.condition.load.clone(),
            wait,
            pct(num(r, "late_max_cycles"), period),
            pct(num(r, "early_max_cycles").max(0.0), period),
            pct(p99, period),
            format!("{:.0}", num(r, "overruns")),
            causes(r),
        ]);
    }
    format!(
        "control-loop: maximum deviation in CPU cycles from a 1000 us period (seed 001): late (+) and early (-), percent of the period\n{}",
        t.render()
    )
}
