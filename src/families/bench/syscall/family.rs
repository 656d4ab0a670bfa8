//! The syscall family on the harness: one pinned thread, one case per call.

use crate::base::named::Named;
use crate::families::bench::schema;
use crate::families::bench::syscall::{Prepared, Syscall};
use crate::families::bench::toolkit::sampling::{measure, measured, per_op_metric};
use crate::families::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family, Unsupported};
use serde_json::json;

fn supported(s: Syscall) -> Result<(), Unsupported> {
    Prepared::new(s).map(|_| ()).map_err(|e| Unsupported(format!("cannot prepare {}: {e}", s.name())))
}

fn run(s: Syscall, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let call = Prepared::new(s).map_err(|e| CaseError::Failed(e.to_string()))?;
    let (m, placement) = measure(ctx, |n| call.run(n), |e| CaseError::from_io(s.name(), e))?;
    let mut details = serde_json::Map::new();
    details.insert("calibration".into(), json!(m.calibration));
    Ok(measured(placement, &m, vec![per_op_metric(schema::syscall::PER_CALL, &m, ctx.clock)?], details))
}

/// syscall.*: one pinned thread, one case per call.
pub struct Syscalls;

impl Family for Syscalls {
    fn name(&self) -> &'static str {
        schema::syscall::FAMILY
    }
    fn benchmarks(&'static self) -> Vec<Benchmark> {
        Benchmark::each(self, Syscall::ALL, |s| (s.name(), s.description(), "none (one pinned thread)", "-"))
    }
    fn supported(&self, variant: usize) -> Result<(), Unsupported> {
        supported(Syscall::ALL[variant])
    }
    fn run(&self, variant: usize, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
        run(Syscall::ALL[variant], ctx)
    }
    fn repeats_in_rounds(&self) -> bool {
        true
    }
}
