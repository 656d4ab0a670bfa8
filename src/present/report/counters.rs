//! The kernel's event counts per operation beside each cell: `show
//! --counters`, the HTML report's section, and the counts `compare` puts
//! beside a verdict.

use crate::base::named::Named;
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::measure::counters::{Counts, Event};
use crate::tables::tabular::table::{TextTable, cycles};
use std::collections::BTreeMap;

/// A count per operation: two decimals below 10, one below 100.
pub fn count(v: f64) -> String {
    if v.abs() < 10.0 {
        format!("{v:.2}")
    } else if v.abs() < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The median, with half the range of the round medians where there are
/// several rounds and they differ.
fn cell(c: &Counts, e: Event) -> String {
    let Some(ev) = c.events.get(e.name()) else { return "n/a".into() };
    let m = ev.round_medians();
    let (lo, hi) = m.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let half = count((hi - lo) / 2.0);
    if m.len() > 1 && !half.trim_start_matches(['0', '.']).is_empty() && hi - lo > 0.005 * ev.summary.median.abs() {
        format!("{} +-{half}", count(ev.summary.median))
    } else {
        count(ev.summary.median)
    }
}

/// Instructions per core cycle, where both were counted.
fn ipc(c: &Counts) -> Option<f64> {
    Some(c.median(Event::Instructions)? / c.median(Event::Cycles)?).filter(|v| v.is_finite())
}

/// Which kernel counted in each environment of the run.
fn kernels(doc: &RunDoc, counted: &[&CaseResult]) -> String {
    let mut by_env: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for r in counted {
        let k = by_env.entry(r.env(doc)).or_default();
        let kernel = r.counters.as_ref().map_or("", |c| c.kernel.as_str());
        if !k.contains(&kernel) {
            k.push(kernel);
        }
    }
    by_env
        .iter()
        .map(|(env, ks)| {
            let whose = |k: &str| if k == doc.host.kernel_release { "the host's kernel" } else { "its own kernel" };
            let list: Vec<String> = ks.iter().map(|k| format!("{k}, {}", whose(k))).collect();
            format!("  counted in {env} by kernel {}\n", list.join("; "))
        })
        .collect()
}

/// The table of counts per operation of every measured case with counts.
pub fn render(doc: &RunDoc) -> String {
    let counted: Vec<&CaseResult> = doc.results.iter().filter(|r| r.status == CaseStatus::Ok && r.counters.is_some()).collect();
    if counted.is_empty() {
        return "kernel event counts: none in this run (written before schema version 3, or with --no-counters)\n".into();
    }
    let with: Vec<&CaseResult> = counted.iter().copied().filter(|r| r.counters.as_ref().is_some_and(|c| !c.events.is_empty())).collect();
    let events: Vec<Event> = Event::SOFTWARE
        .into_iter()
        .chain(Event::HARDWARE)
        .filter(|e| with.iter().any(|r| r.counters.as_ref().is_some_and(|c| c.events.contains_key(e.name()))))
        .collect();
    let has_ipc = with.iter().any(|r| r.counters.as_ref().and_then(ipc).is_some());
    let mut headers = vec!["benchmark", "case", "median", "unit"];
    headers.extend(events.iter().map(|e| e.heading()));
    if has_ipc {
        headers.push("IPC");
    }
    let envs = crate::tables::tabular::distinct(with.iter().map(|r| r.env(doc)));
    let mut t = TextTable::new(&headers, 2);
    for r in &with {
        let c = r.counters.as_ref().expect("filtered on counters");
        let mut label = crate::data::results::params_label(&r.params);
        if envs.len() > 1 {
            label = format!("{label} [{}]", r.env(doc)).trim().to_string();
        }
        let (value, unit) = r.metrics.first().map_or(("-".into(), String::new()), |m| {
            (if m.unit == crate::data::results::UNIT_CYCLES { cycles(m.summary.median) } else { count(m.summary.median) }, m.unit.clone())
        });
        let mut row = vec![r.benchmark.clone(), label, value, unit];
        row.extend(events.iter().map(|&e| cell(c, e)));
        if has_ipc {
            row.push(ipc(c).map_or("n/a".into(), |v| format!("{v:.2}")));
        }
        t.row(row);
    }
    let mut s = match counted_rounds(doc) {
        Some(rounds) => format!(
            "kernel event counts per operation (of the operation the first metric times; median over the counting batches of the counting pass of round {rounds}, \
             after its timed cases: the later rounds ran none)\n{}",
            kernels(doc, &counted)
        ),
        None => format!(
            "kernel event counts per operation (of the operation the first metric times; median over the counting batches of each round's counting pass, after its timed cases, \
             +- half the range of the round medians)\n{}",
            kernels(doc, &counted)
        ),
    };
    s += &t.render();
    s += &reasons(&counted);
    s
}

/// The rounds (from 1) whose counting pass the counts come from, where the
/// document says some rounds ran none; None where every round counted (or
/// the document does not say).
fn counted_rounds(doc: &RunDoc) -> Option<String> {
    let log = &doc.settings.round_log;
    if !log.iter().any(|r| r.counted == Some(false)) {
        return None;
    }
    let mut counted: Vec<usize> = log.iter().filter(|r| r.counted == Some(true)).map(|r| r.round + 1).collect();
    counted.sort_unstable();
    counted.dedup();
    Some(counted.iter().map(usize::to_string).collect::<Vec<_>>().join(", "))
}

/// An event's column heading, from its name in a document.
fn heading(name: &str) -> &str {
    match Event::by_name(name) {
        Some(e) => e.heading(),
        None => name,
    }
}

/// Why events or whole cases were not counted, each reason once.
fn reasons(counted: &[&CaseResult]) -> String {
    let mut events: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut cases: BTreeMap<String, usize> = BTreeMap::new();
    for c in counted.iter().filter_map(|r| r.counters.as_ref()) {
        if let Some(why) = &c.reason {
            *cases.entry(why.clone()).or_default() += 1;
        }
        for (e, why) in &c.unavailable {
            let names = events.entry(why.clone()).or_default();
            let h = heading(e);
            if !names.contains(&h) {
                names.push(h);
            }
        }
    }
    let mut s = String::new();
    for (why, names) in events {
        s += &format!("  n/a ({}): {why}\n", names.join(", "));
    }
    for (why, n) in cases {
        s += &format!("  {n} case{} {why}\n", if n == 1 { "" } else { "s" });
    }
    s
}

/// What `compare` puts beside a verdict: the counts per operation that
/// changed, "switches 2.00 -> 4.00".
pub fn changes(row: &crate::data::compare::Row) -> String {
    row.counts_changed.iter().map(|(e, x, y)| format!("{} {} -> {}", heading(e), count(*x), count(*y))).collect::<Vec<_>>().join(", ")
}
