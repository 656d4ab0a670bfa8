//! lat_proc: one case per operation.

use super::pinned;
use crate::bench::proc::{Prepared, ProcOp};
use crate::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family};
use crate::clock::Tsc;
use crate::harness;
use serde_json::json;

fn supported(op: ProcOp) -> Result<(), String> {
    Prepared::new(op, &std::env::temp_dir()).and_then(|mut p| p.run(1)).map_err(|e| format!("{} does not work here: {e}", op.name()))
}

fn run(op: ProcOp, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let mut p = Prepared::new(op, ctx.scratch)
        .map_err(|e| CaseError::Failed(format!("cannot prepare {} in {}: {e}", op.name(), ctx.scratch.display())))?;
    let (m, placement) = pinned(ctx, || {
        harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| p.run(n)).map_err(|e| CaseError::from_io(op.name(), e))
    })?;
    let mut details = serde_json::Map::new();
    details.insert("inner".into(), json!(m.inner));
    Ok(CaseData { placement, metrics: vec![super::per_op_metric("per_op", &m, ctx.clock)?], details })
}

/// proc.*: lat_proc's fork, fork+exec, fork+sh.
pub struct Procs;

impl Family for Procs {
    fn name(&self) -> &'static str {
        "proc"
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::each(self, &ProcOp::ALL, |op| (op.name(), op.description(), "none (one pinned thread)", "exec from --scratch"))
    }
    fn supported(&self, variant: usize) -> Result<(), String> {
        supported(ProcOp::ALL[variant])
    }
    fn run(&self, variant: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        run(ProcOp::ALL[variant], ctx)
    }
    fn repeats_in_rounds(&self) -> bool {
        true
    }
}
