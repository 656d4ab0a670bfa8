//! AIM7-style jobs/min/task for 1 .. 2 x CPUs concurrent tasks.

use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::aim;
use crate::families::bench::family::round_trip;
use crate::families::bench::schema;
use crate::families::bench::toolkit::sampling::{points, summary_of};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use crate::measure::placement::Placement;
use serde_json::json;
use std::time::Duration;

fn cases(scale: Scale) -> Vec<Params> {
    let n = crate::measure::placement::allowed_cpus().len().clamp(1, aim::MAX_TASKS / 2) as u64;
    let tasks: Vec<u64> = match scale {
        Scale::Quick | Scale::Test => vec![1, 2 * n],
        Scale::Full => (1..=2 * n).collect(),
    };
    points(tasks.into_iter().map(|tasks| schema::aim::Params { tasks }))
}

fn run(ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let tasks = ctx.typed::<schema::aim::Params>()?.tasks as usize;
    // A round lasts 50 batch targets (100 ms in quick, 250 ms in full), within 50 ms .. 2 s;
    // rounds = batches, at most 5.
    let target_s = ctx.harness.target_batch_cycles as f64 / ctx.clock.tsc_hz;
    let duration = Duration::from_secs_f64((target_s * 50.0).clamp(0.05, 2.0));
    let rounds = ctx.harness.batches.clamp(1, 5);
    let mut per_round = Vec::new();
    let mut observed = Vec::new();
    for _ in 0..rounds {
        if crate::measure::watchdog::interrupted().is_some() {
            return Err(CaseError::Interrupted);
        }
        let r = aim::round(tasks, ctx.cpus, duration, ctx.scratch).map_err(|e| CaseError::from_io("aim", e))?;
        per_round.push(r.per_task.iter().sum::<f64>() / tasks as f64);
        observed = r.cpus;
    }
    let s = summary_of(&per_round)?;
    let mut details = serde_json::Map::new();
    details.insert("round_seconds".into(), json!(duration.as_secs_f64()));
    details.insert("rounds".into(), json!(rounds));
    details.insert("jobs_per_min_total".into(), json!(s.median * tasks as f64));
    Ok(CaseData {
        placement: Placement {
            actors: format!("{tasks} processes, free to move among the CPUs"),
            cpus: ctx.cpus.to_vec(),
            observed_cpus: observed,
            policy: "SCHED_OTHER".into(),
            memory_locked: ctx.memory_locked,
        },
        metrics: vec![Metric::rate(schema::aim::JOBS_PER_MIN_PER_TASK, "jobs/min/task", s)],
        details,
    })
}

/// aim.mix: AIM7-style jobs/min/task.
pub const AIM: Described<()> = Described {
    name: schema::aim::FAMILY,
    variants: &[()],
    info: |()| {
        (
            schema::aim::MIX,
            "AIM7-style jobs/min/task: T processes repeat a fixed compute+memory+file+fork job",
            "tasks 1..2 x CPUs",
            "--scratch space",
        )
    },
    cases: |(), scale| cases(scale),
    run: |(), ctx| run(ctx),
    // Under QEMU's instruction counter the time it measures is fictitious (jobs per minute over a fixed time).
    measures_time: true,
    params: round_trip::<schema::aim::Params>,
    ..Described::BASE
};
