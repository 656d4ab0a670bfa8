//! Every CPU at once: 1, 2, ... all allowed CPUs, one instance pinned per CPU.

use crate::analysis::stats::Summary;
use crate::base::named::Named;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::parallel::table;
use crate::families::bench::parallel::{self, ParOp};
use crate::families::bench::schema;
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::sampling::points;
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use crate::measure::placement::{self, Placement};
use serde_json::json;

fn cases(_: Scale) -> Vec<Params> {
    points((1..=placement::allowed_cpus().len() as u64).map(|instances| schema::parallel::Params { instances }))
}

fn run(op: ParOp, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let n = ctx.typed::<schema::parallel::Params>()?.instances as usize;
    let all = placement::allowed_cpus();
    let cpus =
        all.get(..n).ok_or_else(|| CaseError::NotApplicable(format!("{n} instances need {n} CPUs; this process may use {}", all.len())))?;
    let inst =
        parallel::run(op, cpus, &ctx.harness, ctx.clock.overhead_cycles, ctx.timeout).map_err(|e| CaseError::Failed(e.to_string()))?;
    let medians: Vec<f64> = inst.iter().map(|i| i.per_op.median).collect();
    // Every batch of every instance: the spread shows both noise and any imbalance between CPUs.
    let all: Vec<f64> = inst.iter().flat_map(|i| i.samples.iter().copied()).collect();
    let per_op = Summary::of(&all).ok_or_else(|| CaseError::Failed("no instance".into()))?;
    let mut details = serde_json::Map::new();
    details.insert(
        "per_cpu".into(),
        json!(inst.iter().map(|i| json!({"cpu": i.cpu, "observed": i.observed, "median_cycles": i.per_op.median, "min_cycles": i.per_op.min, "cv": i.per_op.cv})).collect::<Vec<_>>()),
    );
    details.insert("aggregate_mops".into(), json!(medians.iter().map(|m| ctx.clock.tsc_hz / m / 1e6).sum::<f64>()));
    Ok(CaseData {
        placement: Placement {
            actors: format!("{n} instance{} pinned one per CPU", if n > 1 { "s" } else { "" }),
            cpus: cpus.to_vec(),
            observed_cpus: inst.iter().map(|i| i.observed[0]).collect(),
            policy: "SCHED_OTHER".into(),
            memory_locked: ctx.memory_locked,
        },
        metrics: vec![Metric::cycles(schema::parallel::PER_OP, per_op, ctx.clock)],
        details,
    })
}

/// parallel.*: one instance pinned on each of 1..all CPUs at once.
pub const PARALLEL: Described<ParOp> = Described {
    name: schema::parallel::FAMILY,
    variants: ParOp::ALL,
    info: |op| (op.name(), op.description(), "instances 1..all allowed CPUs", "-"),
    cases: |_, scale| cases(scale),
    run,
    shows: Shows { tables: &[&table::TABLE], comparisons: &[], plots: &[&table::ParallelPlots], headline: None },
    params: round_trip::<schema::parallel::Params>,
    ..Described::BASE
};
