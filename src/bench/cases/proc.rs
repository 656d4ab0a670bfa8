//! lat_proc: one case per operation.

use super::pinned;
use crate::bench::proc::{Prepared, ProcOp};
use crate::bench::{CaseCtx, CaseData, CaseError};
use crate::clock::Tsc;
use crate::harness;
use serde_json::json;

pub fn supported(op: ProcOp) -> Result<(), String> {
    Prepared::new(op, &std::env::temp_dir()).and_then(|mut p| p.run(1)).map_err(|e| format!("{} does not work here: {e}", op.name()))
}

pub fn run(op: ProcOp, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let mut p = Prepared::new(op, ctx.scratch)
        .map_err(|e| CaseError::Failed(format!("cannot prepare {} in {}: {e}", op.name(), ctx.scratch.display())))?;
    let (m, placement) = pinned(ctx, || {
        harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| p.run(n)).map_err(|e| CaseError::from_io(op.name(), e))
    })?;
    let mut details = serde_json::Map::new();
    details.insert("inner".into(), json!(m.inner));
    Ok(CaseData { placement, metrics: vec![super::per_op_metric("per_op", &m, ctx.clock)?], details })
}
