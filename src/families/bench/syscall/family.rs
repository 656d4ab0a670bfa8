//! The syscall family on the harness: one pinned thread, one case per call.

use crate::base::named::Named;
use crate::families::bench::family::round_trip;
use crate::families::bench::schema;
use crate::families::bench::shows::Shows;
use crate::families::bench::syscall::table;
use crate::families::bench::syscall::{Prepared, Syscall};
use crate::families::bench::toolkit::sampling::{measure, measured, per_op_metric};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Unsupported};
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
pub const SYSCALL: Described<Syscall> = Described {
    name: schema::syscall::FAMILY,
    variants: Syscall::ALL,
    info: |s| (s.name(), s.description(), "none (one pinned thread)", "-"),
    supported,
    run,
    repeats_in_rounds: true,
    shows: Shows { tables: &[&table::SyscallTable], comparisons: &[], plots: &[], headline: Some(&table::SyscallHeadline) },
    params: round_trip::<schema::syscall::Params>,
    guest: |_, case| case.per_op(schema::syscall::PER_CALL),
    ..Described::BASE
};
