//! lat_ctx: ring size x working set.

use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::ctx::table;
use crate::families::bench::ctx::{self, RingSpec};
use crate::families::bench::family::round_trip;
use crate::families::bench::schema;
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::fds::IpcError;
use crate::families::bench::toolkit::sampling::{grid, points, summary_of};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use crate::measure::placement::Placement;
use serde_json::json;

fn cases(scale: Scale) -> Vec<Params> {
    let (procs, ws): (&[u64], &[u64]) = match scale {
        Scale::Quick | Scale::Test => (&[2, 4], &[0, 16]),
        Scale::Full => (&[2, 3, 4, 10], &[0, 4, 16, 64]),
    };
    points(grid(ws, procs).into_iter().map(|(ws_kib, procs)| schema::ctx::Params { procs, ws_kib }))
}

fn run(ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let p: schema::ctx::Params = ctx.typed()?;
    let spec = RingSpec { procs: p.procs as usize, ws_kib: p.ws_kib as usize, cpu: ctx.cpus[0], policy: ctx.policy, timeout: ctx.timeout };
    let r = ctx::run(&spec, ctx.clock.overhead_cycles, &ctx.harness).map_err(|e| match e {
        IpcError::Interrupted => CaseError::Interrupted,
        e => CaseError::Failed(e.to_string()),
    })?;
    let overhead = summary_of(&r.overhead.per_op_cycles)?;
    let hops: Vec<f64> = r.rounds.per_op_cycles.iter().map(|c| c / spec.procs as f64).collect();
    let switch: Vec<f64> = hops.iter().map(|h| h - overhead.median).collect();
    let mut details = serde_json::Map::new();
    details.insert("rounds_inner".into(), json!(r.rounds.inner));
    details.insert("overhead_inner".into(), json!(r.overhead.inner));
    details.insert("visits_logged".into(), json!(r.visits.len()));
    Ok(CaseData {
        placement: Placement {
            actors: format!("{} processes in a ring", spec.procs),
            cpus: vec![spec.cpu; spec.procs],
            observed_cpus: vec![crate::measure::placement::current_cpu()],
            policy: ctx.policy.to_string(),
            memory_locked: ctx.memory_locked,
        },
        metrics: vec![
            Metric::cycles(schema::ctx::SWITCH, summary_of(&switch)?, ctx.clock).with_samples(&switch),
            Metric::cycles(schema::ctx::HOP, summary_of(&hops)?, ctx.clock).with_samples(&hops),
            Metric::cycles(schema::ctx::OVERHEAD, overhead, ctx.clock),
        ],
        details,
    })
}

/// ctx.ring: lat_ctx.
pub const CTX: Described<()> = Described {
    name: schema::ctx::FAMILY,
    variants: &[()],
    info: |()| {
        (
            schema::ctx::RING,
            "lat_ctx: N processes pass a token round a ring of pipes, each summing its S KiB working set; ring overhead measured in one process and subtracted",
            "procs 2,3,4,10; ws_kib 0,4,16,64 (all on one CPU)",
            "-",
        )
    },
    cases: |(), scale| cases(scale),
    run: |(), ctx| run(ctx),
    repeats_in_rounds: true,
    shows: Shows { tables: &[], comparisons: &[], plots: &[], headline: Some(&table::CtxHeadline) },
    params: round_trip::<schema::ctx::Params>,
    ..Described::BASE
};
