//! The syscall family on the harness: one pinned thread, one case per call.

use super::syscall::{Prepared, Syscall};
use super::{CaseCtx, CaseData, CaseError};
use crate::clock::Tsc;
use crate::harness;
use crate::placement::{self, Placement};
use crate::registry::Scale;
use crate::results::{Metric, Params};
use crate::stats::Summary;
use serde_json::json;

pub fn supported(s: Syscall) -> Result<(), String> {
    Prepared::new(s).map(|_| ()).map_err(|e| format!("cannot prepare {}: {e}", s.name()))
}

pub fn cases(_: Scale) -> Vec<Params> {
    vec![Params::new()]
}

pub fn run(s: Syscall, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let cpu = ctx.cpus[0];
    let _affinity = placement::AffinityGuard::save();
    let _policy = placement::PolicyGuard::save();
    placement::pin_current_thread(cpu).map_err(|e| CaseError::Failed(e.to_string()))?;
    if ctx.policy != placement::Policy::Other {
        placement::set_policy(ctx.policy).map_err(|e| CaseError::Failed(e.to_string()))?;
    }
    let call = Prepared::new(s).map_err(|e| CaseError::Failed(e.to_string()))?;
    let m = harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| call.run(n)).map_err(|e| {
        if crate::watchdog::interrupted().is_some() { CaseError::Interrupted } else { CaseError::Failed(format!("{}: {e}", s.name())) }
    })?;
    let summary = Summary::of(&m.per_op_cycles).ok_or_else(|| CaseError::Failed("no samples".into()))?;
    let mut details = serde_json::Map::new();
    details.insert("inner".into(), json!(m.inner));
    details.insert("calibration".into(), json!(m.calibration));
    Ok(CaseData {
        placement: Placement {
            actors: "thread".into(),
            cpus: vec![cpu],
            observed_cpus: vec![placement::current_cpu()],
            policy: placement::current_policy().to_string(),
            memory_locked: ctx.memory_locked,
        },
        metrics: vec![Metric::cycles("per_call", summary, ctx.clock)],
        details,
    })
}
