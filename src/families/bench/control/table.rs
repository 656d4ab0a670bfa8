//! The L4Re "Detaching Linux threads" slides' control-loop table, "Maximum deviation in CPU
//! cycles": rows are loads, columns isolation modes, laid out on the FWQ
//! table's grid (`noise/table.rs`).

use crate::base::sources::Source;
use crate::data::results::{CaseResult, RunDoc};
use crate::families::bench::noise::table::{cycles_of, grid, notes, pct, per_measurement, unmeasured};
use crate::families::bench::schema::control;
use crate::families::bench::shows::FamilyTable;
use crate::tables::tabular::headline::{Headline, Headlines, Pick, worst};
use crate::tables::tabular::tables::Layout;
use crate::tables::tabular::{distinct, num};

/// A control-loop grid cell: the slides' "maximum deviation", peak to peak
/// (their 862,000 is +440k and -422k; their 1809 is +1129 and -680), then
/// the largest period deviation either way, in cycles and percent of the period.
fn control_cell(r: &CaseResult) -> String {
    use control::details::*;
    unmeasured(r).unwrap_or_else(|| {
        let (hi, lo, period) = (num(r, PERIOD_DEV_MAX_CYCLES), -num(r, PERIOD_DEV_MIN_CYCLES), num(r, PERIOD_CYCLES));
        format!(
            "{:.0} ({:.2}%): +{hi:.0} / -{lo:.0} (+{:.2}% / -{:.2}%)",
            peak_to_peak(hi, lo),
            100.0 * peak_to_peak(hi, lo) / period,
            100.0 * hi / period,
            100.0 * lo / period
        )
    })
}

/// The span from the shortest to the longest interval between wake-ups,
/// as the slides give it: `+max` above the period and `-max` below it
/// (each at least 0: a loop never early has no spread below).
pub fn peak_to_peak(plus: f64, minus: f64) -> f64 {
    plus.max(0.0) + minus.max(0.0)
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
                row.push(rs.iter().find(|r| r.measured_under(doc, l, i) && wait(r) == *w).map_or("-".into(), |r| control_cell(r)));
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
        "control-loop: maximum deviation in {} (as in {}): interval between successive wake-ups minus the 1000 us period: peak to peak as the slides' figure (percent of the period), then +max / -max\n{}\n\
         control-loop per measurement: wake-up minus its absolute deadline; overruns = deadlines passed unmet\n{}{}",
        cycles_of(doc, &rs),
        Source::L4ReDetaching.short(),
        grid.render(),
        detail.render(),
        notes(doc, &rs)
    )
}

/// Control-loop jitter, every condition in one grid.
pub static TABLE: FamilyTable = FamilyTable::new(&[control::FAMILY], render_control).laid_out(Layout::Environment);

/// The summary's headline: the control loop's worst deviation.
pub struct ControlHeadline;

impl Headlines for ControlHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        worst("control loop: deviation (nanosleep)", pick.one(control::id(control::NANOSLEEP), control::DEVIATION)).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_maximum_deviation_is_peak_to_peak_as_in_the_slides() {
        // The slides' detached idle loop: +1129 / -680 cycles, 1809 in their table.
        assert_eq!(super::peak_to_peak(1129.0, 680.0), 1809.0);
        assert_eq!(super::peak_to_peak(440_000.0, 422_000.0), 862_000.0);
        assert_eq!(super::peak_to_peak(50.0, -3.0), 50.0);
    }
}
