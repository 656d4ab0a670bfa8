//! The syscall family on the harness: one pinned thread, one case per call.

use super::pinned;
use crate::bench::syscall::{Prepared, Syscall};
use crate::bench::{CaseCtx, CaseData, CaseError};
use crate::clock::Tsc;
use crate::harness;
use crate::registry::Scale;
use crate::results::Params;
use serde_json::json;

pub fn supported(s: Syscall) -> Result<(), String> {
    Prepared::new(s).map(|_| ()).map_err(|e| format!("cannot prepare {}: {e}", s.name()))
}

pub fn cases(_: Scale) -> Vec<Params> {
    vec![Params::new()]
}

pub fn run(s: Syscall, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let call = Prepared::new(s).map_err(|e| CaseError::Failed(e.to_string()))?;
    let (m, placement) = pinned(ctx, || {
        harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| call.run(n)).map_err(|e| CaseError::from_io(s.name(), e))
    })?;
    let mut details = serde_json::Map::new();
    details.insert("inner".into(), json!(m.inner));
    details.insert("calibration".into(), json!(m.calibration));
    Ok(CaseData { placement, metrics: vec![super::per_op_metric("per_call", &m, ctx.clock)?], details })
}
