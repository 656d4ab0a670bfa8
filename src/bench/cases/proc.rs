//! lat_proc: one case per operation.

use super::{measure, measured, per_op_metric};
use crate::bench::proc::{Prepared, ProcOp};
use crate::bench::{Benchmark, CaseCtx, CaseData, CaseError, Family};
use crate::schema;

fn supported(op: ProcOp) -> Result<(), String> {
    Prepared::new(op, &std::env::temp_dir()).and_then(|mut p| p.run(1)).map_err(|e| format!("{} does not work here: {e}", op.name()))
}

fn run(op: ProcOp, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    // A system without a C library (a guest's initramfs) cannot run the
    // dynamically linked programs: n/a there, not a failure.
    let mut p = Prepared::new(op, ctx.scratch).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => CaseError::NotApplicable(format!("{}: {e}", op.name())),
        _ => CaseError::Failed(format!("cannot prepare {} in {}: {e}", op.name(), ctx.scratch.display())),
    })?;
    let (m, placement) = measure(ctx, |n| p.run(n), |e| CaseError::from_io(op.name(), e))?;
    Ok(measured(placement, &m, vec![per_op_metric(schema::proc::PER_OP, &m, ctx.clock)?], serde_json::Map::new()))
}

/// proc.*: lat_proc's fork, fork+exec, fork+sh.
pub struct Procs;

impl Family for Procs {
    fn name(&self) -> &'static str {
        schema::proc::FAMILY
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
