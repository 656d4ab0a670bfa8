//! The control loop: a 1000 us periodic task's deviation from its deadlines,
//! one benchmark per way of waiting.

use crate::base::named::Named;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::control::table;
use crate::families::bench::control::{self, Wait};
use crate::families::bench::family::round_trip;
use crate::families::bench::noise;
use crate::families::bench::schema::{self, control::details as keys};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::attribution::Snapshot;
use crate::families::bench::toolkit::sampling::{case_cpus, pinned, points, summary_of};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use serde_json::json;

pub const CONTROL_PERIOD_NS: u64 = 1_000_000;

fn cases(scale: Scale) -> Vec<Params> {
    let samples = match scale {
        Scale::Full => 3_000,
        Scale::Quick => 300,
        Scale::Test => 50,
    };
    points([schema::control::Params { samples }])
}

fn run(wait: Wait, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let n = ctx.typed::<schema::control::Params>()?.samples as usize;
    let cpus = case_cpus(ctx);
    let ((r, attribution), placement) = pinned(ctx, || {
        let before = Snapshot::take(&cpus);
        let r = control::run(wait, CONTROL_PERIOD_NS, n, ctx.clock.tsc_hz, |_| {}).map_err(|e| CaseError::from_io(wait.name(), e))?;
        Ok((r, Snapshot::take(&cpus).since(&before)))
    })?;
    // The slides' measure: the interval between successive wake-ups minus
    // the period(s) it spans, i.e. the change in deviation from the grid.
    let period_devs: Vec<i64> = r.deviations.windows(2).map(|w| w[1] - w[0]).collect();
    let period_abs: Vec<u64> = period_devs.iter().map(|d| d.unsigned_abs()).collect();
    let mut period_abs_sorted: Vec<f64> = period_abs.iter().map(|&d| d as f64).collect();
    period_abs_sorted.sort_by(f64::total_cmp);
    let devs: Vec<f64> = r.deviations.iter().map(|&d| d as f64).collect();
    let abs: Vec<u64> = r.deviations.iter().map(|d| d.unsigned_abs()).collect();
    let period_cycles = CONTROL_PERIOD_NS as f64 * ctx.clock.tsc_hz / 1e9;
    let mut details = serde_json::Map::new();
    details.insert(keys::PERIOD_CYCLES.into(), json!(period_cycles));
    details.insert(keys::OVERRUNS.into(), json!(r.overruns));
    details.insert(keys::PERIOD_DEV_MAX_CYCLES.into(), json!(period_devs.iter().max()));
    details.insert(keys::PERIOD_DEV_MIN_CYCLES.into(), json!(period_devs.iter().min()));
    details.insert(
        "period_dev_abs_p99_cycles".into(),
        json!((!period_abs_sorted.is_empty()).then(|| crate::analysis::stats::quantile_sorted(&period_abs_sorted, 0.99))),
    );
    details.insert(keys::PERIOD_DEV_ABS_HISTOGRAM_LOG2.into(), json!(noise::log2_histogram(&period_abs)));
    details.insert(keys::LATE_MAX_CYCLES.into(), json!(r.deviations.iter().max()));
    details.insert("early_max_cycles".into(), json!(r.deviations.iter().min().map(|m| -m)));
    details.insert("abs_deviation_histogram_log2".into(), json!(noise::log2_histogram(&abs)));
    details.insert(keys::ATTRIBUTION.into(), attribution);
    Ok(CaseData { placement, metrics: vec![Metric::cycles(schema::control::DEVIATION, summary_of(&devs)?, ctx.clock)], details })
}

/// control.*: the control loop, one benchmark per way of waiting.
pub const CONTROL: Described<Wait> = Described {
    name: schema::control::FAMILY,
    variants: Wait::ALL,
    info: |w| (w.name(), w.description(), "iterations 300 (quick) / 3,000", "-"),
    cases: |_, scale| cases(scale),
    run,
    // Its periods, each of the period's length (3 s at full scale).
    planned_s: |_, p| {
        use crate::data::schema_core::CaseParams;
        schema::control::Params::from_params(p).map(|p| p.samples as f64 * CONTROL_PERIOD_NS as f64 / 1e9)
    },
    // Under QEMU's instruction counter the time it measures is fictitious (the control loop wakes on a timer period).
    measures_time: true,
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[], headline: Some(&table::ControlHeadline) },
    params: round_trip::<schema::control::Params>,
    ..Described::BASE
};
