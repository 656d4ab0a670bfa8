//! The syscall family on the harness: one pinned thread, one case per call.

use super::pinned;
use crate::bench::syscall::{Prepared, Syscall};
use crate::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family};
use crate::clock::Tsc;
use crate::harness;
use serde_json::json;

fn supported(s: Syscall) -> Result<(), String> {
    Prepared::new(s).map(|_| ()).map_err(|e| format!("cannot prepare {}: {e}", s.name()))
}

fn run(s: Syscall, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let call = Prepared::new(s).map_err(|e| CaseError::Failed(e.to_string()))?;
    let (m, placement) = pinned(ctx, || {
        harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| call.run(n)).map_err(|e| CaseError::from_io(s.name(), e))
    })?;
    let mut details = serde_json::Map::new();
    details.insert("inner".into(), json!(m.inner));
    details.insert("calibration".into(), json!(m.calibration));
    Ok(CaseData { placement, metrics: vec![super::per_op_metric("per_call", &m, ctx.clock)?], details })
}

/// syscall.*: one pinned thread, one case per call.
pub struct Syscalls;

impl Family for Syscalls {
    fn name(&self) -> &'static str {
        "syscall"
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::each(self, &Syscall::ALL, |s| (s.name(), s.description(), "none (one pinned thread)", "-"))
    }
    fn supported(&self, variant: usize) -> Result<(), String> {
        supported(Syscall::ALL[variant])
    }
    fn run(&self, variant: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        run(Syscall::ALL[variant], ctx)
    }
    fn repeats_in_rounds(&self) -> bool {
        true
    }
}
