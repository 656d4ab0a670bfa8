//! The L4Re "Detaching Linux threads" slides' control-loop table, "Maximum deviation in CPU
//! cycles": rows are loads, columns isolation modes, laid out on the FWQ
//! table's grid (`noise/table.rs`).

use crate::bench::noise::table::{grid, notes, pct, per_measurement, unmeasured};
use crate::results::{CaseResult, RunDoc};
use crate::schema::control;
use crate::sources::Source;
use crate::tabular::headline::{Headline, Headlines, Pick, worst};
use crate::tabular::tables::{Layout, Table};
use crate::tabular::{distinct, num};

/// A control-loop grid cell: the largest period deviation either way, in
/// cycles and percent of the period.
fn control_cell(r: &CaseResult) -> String {
    use control::details::*;
    unmeasured(r).unwrap_or_else(|| {
        let (hi, lo, period) = (num(r, PERIOD_DEV_MAX_CYCLES), -num(r, PERIOD_DEV_MIN_CYCLES), num(r, PERIOD_CYCLES));
        format!("+{hi:.0} / -{lo:.0} (+{:.2}% / -{:.2}%)", 100.0 * hi / period, 100.0 * lo / period)
    })
}

pub fn render_control(doc: &RunDoc) -> String {
    use control::details::*;
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.family == control::FAMILY).collect();
    if rs.is_empty() {
        return String::new();
    }
    let wait = |r: &CaseResult| control::name_of(&r.benchmark).to_string();
    let (loads, isos, mut grid) = grid(doc, &rs, &["Load", "wait"]);
    let waits = distinct(rs.iter().map(|r| control::name_of(&r.benchmark)));
    for l in &loads {
        for w in &waits {
            let mut row = vec![l.to_string(), w.to_string()];
            for i in &isos {
                row.push(rs.iter().find(|r| r.load_isolation(doc) == (l, i) && wait(r) == *w).map_or("-".into(), |r| control_cell(r)));
            }
            grid.row(row);
        }
    }
    let detail = per_measurement(doc, &rs, &["wait", "wake late max", "p99 late", "overruns"], 1, |r| {
        let period = num(r, PERIOD_CYCLES);
        vec![
            wait(r),
            pct(num(r, LATE_MAX_CYCLES), period),
            pct(r.metric(control::DEVIATION).map_or(f64::NAN, |m| m.summary.p99), period),
            format!("{:.0}", num(r, OVERRUNS)),
        ]
    });
    format!(
        "control-loop: maximum deviation in CPU cycles (as in {}): interval between successive wake-ups minus the 1000 us period, +max / -max (percent of the period)\n{}\n\
         control-loop per measurement: wake-up minus its absolute deadline; overruns = deadlines passed unmet\n{}{}",
        Source::L4ReDetaching.short(),
        grid.render(),
        detail.render(),
        notes(doc, &rs)
    )
}

/// Control-loop jitter, every condition in one grid.
pub struct Control;

impl Table for Control {
    fn families(&self) -> &'static [&'static str] {
        &[control::FAMILY]
    }
    fn layout(&self) -> Layout {
        Layout::Environment
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_control(doc)
    }
}

/// The summary's headline: the control loop's worst deviation.
pub struct ControlHeadline;

impl Headlines for ControlHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        worst("control loop: deviation (nanosleep)", pick.one(control::id(control::NANOSLEEP), control::DEVIATION)).into_iter().collect()
    }
}
