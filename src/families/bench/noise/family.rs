//! FWQ and the control loop on the measured CPU, with attribution.

use crate::bench::attribution::Snapshot;
use crate::bench::cases::{case_cpus, pinned, points, summary_of};
use crate::bench::noise;
use crate::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family, Scale};
use crate::results::{Metric, Params};
use crate::schema::{self, noise::details as keys};
use serde_json::json;

/// Decrements per FWQ quantum (about 20,000 cycles).
pub const QUANTUM: u64 = 20_000;

fn fwq_cases(scale: Scale) -> Vec<Params> {
    let samples = match scale {
        Scale::Full => 100_000,
        Scale::Quick => 10_000,
        Scale::Test => 1_000,
    };
    points([schema::noise::Params { samples }])
}

fn run_fwq(ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let n = ctx.typed::<schema::noise::Params>()?.samples as usize;
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
    details.insert(keys::MIN_CYCLES.into(), json!(sum.min));
    details.insert(keys::MAX_DELTA_CYCLES.into(), json!(sum.max_delta));
    details.insert(keys::P99_DELTA_CYCLES.into(), json!(sum.p99_delta));
    details.insert(keys::P999_DELTA_CYCLES.into(), json!(sum.p999_delta));
    details.insert(keys::LOST_FRACTION.into(), json!(sum.lost_fraction));
    details.insert(keys::DELTA_HISTOGRAM_LOG2.into(), json!(sum.histogram));
    details.insert("largest_spikes_us_cycles".into(), json!(sum.spikes));
    details.insert(keys::ATTRIBUTION.into(), attribution);
    Ok(CaseData { placement, metrics: vec![Metric::cycles(schema::noise::SAMPLE, summary_of(&cycles)?, ctx.clock)], details })
}

/// noise.fwq: FWQ's fixed work quantum, its deltas to the minimum.
pub struct Noise;

impl Family for Noise {
    fn name(&self) -> &'static str {
        schema::noise::FAMILY
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::single(
            self,
            schema::noise::FWQ,
            "FWQ: a fixed work quantum (inline-assembly loop) timed over and over on a pinned CPU; deltas to the minimum are OS noise",
            "samples 10,000 (quick) / 100,000",
            "-",
        )
    }
    fn cases(&self, _: usize, scale: Scale) -> Vec<Params> {
        fwq_cases(scale)
    }
    fn run(&self, _: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        run_fwq(ctx)
    }
}
