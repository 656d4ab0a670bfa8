//! FWQ and the control loop on the measured CPU, with attribution.

use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::noise;
use crate::families::bench::noise::table;
use crate::families::bench::schema::{self, noise::details as keys};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::attribution::Snapshot;
use crate::families::bench::toolkit::sampling::{case_cpus, pinned, points, summary_of};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use serde_json::json;

/// The slides' quantum: their percentages (434,000 cycles = 10.2%, 450,000
/// = 9.6%) put the minimum at 4.2-4.7 M cycles, about 1.4 ms at their 2993 MHz.
pub const SLIDES_QUANTUM_US: u64 = 1_400;
/// A short quantum (about 14 us), which shows interrupts one by one.
pub const SHORT_QUANTUM_US: u64 = 14;

fn fwq_cases(scale: Scale) -> Vec<Params> {
    // (quanta of the slides' quantum, of the short one): 140 s and 1.4 s at full scale.
    let (long, short) = match scale {
        Scale::Full => (100_000, 100_000),
        Scale::Quick => (2_000, 10_000),
        Scale::Test => (100, 1_000),
    };
    points([
        schema::noise::Params { quantum_us: SLIDES_QUANTUM_US, samples: long },
        schema::noise::Params { quantum_us: SHORT_QUANTUM_US, samples: short },
    ])
}

/// Decrements that take `us` microseconds on this CPU: the fastest of a few
/// timed loops of a million, scaled (at least one).
pub fn calibrate_quantum(us: u64, tsc_hz: f64) -> u64 {
    const PROBE: u64 = 1_000_000;
    let fastest = (0..5)
        .map(|_| {
            let t0 = crate::measure::arch::rdtscp();
            noise::work(PROBE);
            crate::measure::arch::rdtscp().saturating_sub(t0)
        })
        .min()
        .unwrap_or(1)
        .max(1);
    let cycles = us as f64 * tsc_hz / 1e6;
    ((cycles * PROBE as f64 / fastest as f64) as u64).max(1)
}

fn run_fwq(ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let p = ctx.typed::<schema::noise::Params>()?;
    let n = p.samples as usize;
    let cpus = case_cpus(ctx);
    let ((s, quantum, attribution, took), placement) = pinned(ctx, || {
        let quantum = calibrate_quantum(p.quantum_us, ctx.clock.tsc_hz);
        noise::fwq(quantum, 10); // warm-up
        let before = Snapshot::take(&cpus);
        // Between quanta: a signal, or the case's --timeout (a full-size case runs ~140 s).
        let started = std::time::Instant::now();
        let s = noise::fwq_until(quantum, n, &|| crate::measure::watchdog::check().is_err());
        if s.cycles.len() < n && crate::measure::watchdog::interrupted().is_some() {
            return Err(CaseError::Interrupted);
        }
        Ok((s, quantum, Snapshot::take(&cpus).since(&before), started.elapsed()))
    })?;
    let sum = noise::summarize(&s, ctx.clock.tsc_hz, 10);
    let cycles: Vec<f64> = s.cycles.iter().map(|&c| c as f64).collect();
    let mut details = serde_json::Map::new();
    details.insert("quantum_iterations".into(), json!(quantum));
    details.insert("quantum_target_cycles".into(), json!((p.quantum_us as f64 * ctx.clock.tsc_hz / 1e6).round()));
    details.insert(keys::MIN_CYCLES.into(), json!(sum.min));
    details.insert(keys::MAX_DELTA_CYCLES.into(), json!(sum.max_delta));
    details.insert(keys::P99_DELTA_CYCLES.into(), json!(sum.p99_delta));
    details.insert(keys::P999_DELTA_CYCLES.into(), json!(sum.p999_delta));
    details.insert(keys::LOST_FRACTION.into(), json!(sum.lost_fraction));
    details.insert(keys::DELTA_HISTOGRAM_LOG2.into(), json!(sum.histogram));
    details.insert("largest_spikes_us_cycles".into(), json!(sum.spikes));
    details.insert(keys::ATTRIBUTION.into(), attribution);
    if s.cycles.len() < n {
        // What was measured stands, and says it was cut.
        details.insert(
            keys::CUT.into(),
            json!(format!(
                "cut at the case's --timeout ({} s): {} of {n} quanta in {:.2} s",
                ctx.timeout.as_secs_f64(),
                s.cycles.len(),
                took.as_secs_f64()
            )),
        );
    }
    Ok(CaseData { placement, metrics: vec![Metric::cycles(schema::noise::SAMPLE, summary_of(&cycles)?, ctx.clock)], details })
}

/// noise.fwq: FWQ's fixed work quantum, its deltas to the minimum.
pub const NOISE: Described<()> = Described {
    name: schema::noise::FAMILY,
    variants: &[()],
    info: |()| {
        (
            schema::noise::FWQ,
            "FWQ: a fixed work quantum (inline-assembly loop, calibrated to the quantum's time at the start) timed over and over on a pinned CPU; deltas to the minimum are OS noise",
            "quantum_us 1400 (the slides'), 14; samples 100,000 each (quick: 2,000 and 10,000)",
            "-",
        )
    },
    cases: |(), scale| fwq_cases(scale),
    run: |(), ctx| run_fwq(ctx),
    // Its quanta, each of the quantum's time (140 s at full scale).
    planned_s: |(), p| {
        use crate::data::schema_core::CaseParams;
        schema::noise::Params::from_params(p).map(|p| p.quantum_us as f64 * p.samples as f64 / 1e6)
    },
    // Under QEMU's instruction counter the time it measures is fictitious (noise (FWQ) is time lost in fixed work quanta).
    measures_time: true,
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[&table::JitterHistograms], headline: Some(&table::NoiseHeadline) },
    params: round_trip::<schema::noise::Params>,
    ..Described::BASE
};
