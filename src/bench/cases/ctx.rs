//! lat_ctx: ring size x working set.

use crate::bench::ctx::{self, RingSpec};
use crate::bench::ipc::IpcError;
use crate::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family, Scale};
use crate::placement::Placement;
use crate::results::{Metric, Params};
use crate::stats::Summary;
use serde_json::json;

fn cases(scale: Scale) -> Vec<Params> {
    let (procs, ws): (&[usize], &[usize]) = match scale {
        Scale::Quick => (&[2, 4], &[0, 16]),
        Scale::Full => (&[2, 3, 4, 10], &[0, 4, 16, 64]),
    };
    let mut out = Vec::new();
    for &s in ws {
        for &p in procs {
            let mut m = Params::new();
            m.insert("procs".into(), json!(p));
            m.insert("ws_kib".into(), json!(s));
            out.push(m);
        }
    }
    out
}

fn run(ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let spec = RingSpec {
        procs: ctx.u64_param("procs")? as usize,
        ws_kib: ctx.u64_param("ws_kib")? as usize,
        cpu: ctx.cpus[0],
        policy: ctx.policy,
        timeout: ctx.timeout,
    };
    let r = ctx::run(&spec, ctx.clock.overhead_cycles, &ctx.harness).map_err(|e| match e {
        IpcError::Interrupted => CaseError::Interrupted,
        e => CaseError::Failed(e.to_string()),
    })?;
    let no_samples = || CaseError::Failed("no samples".into());
    let overhead = Summary::of(&r.overhead.per_op_cycles).ok_or_else(no_samples)?;
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
            observed_cpus: vec![crate::placement::current_cpu()],
            policy: ctx.policy.to_string(),
            memory_locked: ctx.memory_locked,
        },
        metrics: vec![
            Metric::cycles("switch", Summary::of(&switch).ok_or_else(no_samples)?, ctx.clock).with_samples(&switch),
            Metric::cycles("hop", Summary::of(&hops).ok_or_else(no_samples)?, ctx.clock).with_samples(&hops),
            Metric::cycles("overhead", overhead, ctx.clock),
        ],
        details,
    })
}

/// ctx.ring: lat_ctx.
pub struct Ctx;

impl Family for Ctx {
    fn name(&self) -> &'static str {
        "ctx"
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::single(
            self,
            "ring",
            "lat_ctx: N processes pass a token round a ring of pipes, each summing its S KiB working set; ring overhead measured in one process and subtracted",
            "procs 2,3,4,10; ws_kib 0,4,16,64 (all on one CPU)",
            "-",
        )
    }
    fn cases(&self, _: usize, scale: Scale) -> Vec<Params> {
        cases(scale)
    }
    fn run(&self, _: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        run(ctx)
    }
    fn repeats_in_rounds(&self) -> bool {
        true
    }
}
