//! FWQ and the control loop on the measured CPU, with attribution.

use super::{case_cpus, pinned};
use crate::bench::attribution::Snapshot;
use crate::bench::control::{self, Wait};
use crate::bench::noise;
use crate::bench::{CaseCtx, CaseData, CaseError};
use crate::registry::Scale;
use crate::results::{Metric, Params};
use crate::stats::Summary;
use serde_json::json;

/// Decrements per FWQ quantum (about 20,000 cycles).
pub const QUANTUM: u64 = 20_000;
pub const CONTROL_PERIOD_NS: u64 = 1_000_000;

fn samples_param(n: u64) -> Vec<Params> {
    let mut p = Params::new();
    p.insert("samples".into(), json!(n));
    vec![p]
}

pub fn fwq_cases(scale: Scale) -> Vec<Params> {
    samples_param(if scale == Scale::Quick { 10_000 } else { 100_000 })
}

pub fn control_cases(scale: Scale) -> Vec<Params> {
    samples_param(if scale == Scale::Quick { 300 } else { 3_000 })
}

pub fn run_fwq(ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let n = ctx.u64_param("samples")? as usize;
    // The harness's batch count scales the run down in tests (tiny: 3 batches).
    let n = if ctx.harness.batches < 5 { n.min(1000) } else { n };
    let cpus = case_cpus(ctx);
    let ((s, attribution), placement) = pinned(ctx, || {
        noise::fwq(QUANTUM, 100); // warm-up
        let before = Snapshot::take(&cpus);
        let s = noise::fwq(QUANTUM, n);
        Ok((s, Snapshot::take(&cpus).since(&before)))
    })?;
    let sum = noise::summarize(&s, ctx.clock.tsc_hz, 10);
    let cycles: Vec<f64> = s.cycles.iter().map(|&c| c as f64).collect();
    let mut details = serde_json::Map::new();
    details.insert("quantum_iterations".into(), json!(QUANTUM));
    details.insert("min_cycles".into(), json!(sum.min));
    details.insert("max_delta_cycles".into(), json!(sum.max_delta));
    details.insert("p99_delta_cycles".into(), json!(sum.p99_delta));
    details.insert("p999_delta_cycles".into(), json!(sum.p999_delta));
    details.insert("lost_fraction".into(), json!(sum.lost_fraction));
    details.insert("delta_histogram_log2".into(), json!(sum.histogram));
    details.insert("largest_spikes_us_cycles".into(), json!(sum.spikes));
    details.insert("attribution".into(), attribution);
    Ok(CaseData {
        placement,
        metrics: vec![Metric::cycles("sample", Summary::of(&cycles).ok_or_else(|| CaseError::Failed("no samples".into()))?, ctx.clock)],
        details,
    })
}

pub fn run_control(wait: Wait, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let n = ctx.u64_param("samples")? as usize;
    let n = if ctx.harness.batches < 5 { n.min(50) } else { n };
    let cpus = case_cpus(ctx);
    let ((r, attribution), placement) = pinned(ctx, || {
        let before = Snapshot::take(&cpus);
        let r = control::run(wait, CONTROL_PERIOD_NS, n, ctx.clock.tsc_hz, |_| {}).map_err(|e| CaseError::from_io(wait.name(), e))?;
        Ok((r, Snapshot::take(&cpus).since(&before)))
    })?;
    // The seed's measure: the interval between successive wake-ups minus
    // the period(s) it spans, i.e. the change in deviation from the grid.
    let period_devs: Vec<i64> = r.deviations.windows(2).map(|w| w[1] - w[0]).collect();
    let period_abs: Vec<u64> = period_devs.iter().map(|d| d.unsigned_abs()).collect();
    let mut period_abs_sorted: Vec<f64> = period_abs.iter().map(|&d| d as f64).collect();
    period_abs_sorted.sort_by(f64::total_cmp);
    let devs: Vec<f64> = r.deviations.iter().map(|&d| d as f64).collect();
    let abs: Vec<u64> = r.deviations.iter().map(|d| d.unsigned_abs()).collect();
    let period_cycles = CONTROL_PERIOD_NS as f64 * ctx.clock.tsc_hz / 1e9;
    let mut details = serde_json::Map::new();
    details.insert("period_cycles".into(), json!(period_cycles));
    details.insert("overruns".into(), json!(r.overruns));
    details.insert("period_dev_max_cycles".into(), json!(period_devs.iter().max()));
    details.insert("period_dev_min_cycles".into(), json!(period_devs.iter().min()));
    details.insert(
        "period_dev_abs_p99_cycles".into(),
        json!((!period_abs_sorted.is_empty()).then(|| crate::stats::quantile_sorted(&period_abs_sorted, 0.99))),
    );
    details.insert("period_dev_abs_histogram_log2".into(), json!(noise::log2_histogram(&period_abs)));
    details.insert("late_max_cycles".into(), json!(r.deviations.iter().max()));
    details.insert("early_max_cycles".into(), json!(r.deviations.iter().min().map(|m| -m)));
    details.insert("abs_deviation_histogram_log2".into(), json!(noise::log2_histogram(&abs)));
    details.insert("attribution".into(), attribution);
    Ok(CaseData {
        placement,
        metrics: vec![Metric::cycles("deviation", Summary::of(&devs).ok_or_else(|| CaseError::Failed("no samples".into()))?, ctx.clock)],
        details,
    })
}
