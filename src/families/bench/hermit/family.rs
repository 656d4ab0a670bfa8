//! HermitCore's basic benchmark extras: sched_yield with a second runnable
//! thread on the CPU, and malloc(1 MiB) + free.

use crate::base::named::Named;
use crate::families::bench::family::round_trip;
use crate::families::bench::hermit::{self, Yielder};
use crate::families::bench::schema;
use crate::families::bench::toolkit::sampling::{measured, per_op_metric, pinned};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described};
use crate::measure::clock::Tsc;
use crate::measure::harness;

crate::named_enum! {
    pub enum HermitOp {
        YieldBusy = schema::hermit::SCHED_YIELD_BUSY,
        Malloc1M = schema::hermit::MALLOC_1M,
    }
}

impl HermitOp {
    pub fn description(self) -> &'static str {
        match self {
            HermitOp::YieldBusy => "sched_yield with a second thread yielding on the same CPU (each call switches to it and back)",
            HermitOp::Malloc1M => "malloc(1 MiB) + free through the C library (untouched block)",
        }
    }
}

fn run(op: HermitOp, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let (m, placement) = pinned(ctx, || {
        let _partner = match op {
            HermitOp::YieldBusy => Some(Yielder::start(ctx.cpus[0]).map_err(|e| CaseError::from_io("yield partner", e))?),
            HermitOp::Malloc1M => None,
        };
        harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, |n| match op {
            HermitOp::YieldBusy => hermit::yields(n),
            HermitOp::Malloc1M => hermit::malloc_free(n, 1 << 20),
        })
        .map_err(|e| CaseError::from_io(op.name(), e))
    })?;
    Ok(measured(placement, &m, vec![per_op_metric(schema::hermit::PER_OP, &m, ctx.clock)?], serde_json::Map::new()))
}

/// hermit.*: the HermitCore post's basic benchmark beyond syscalls and page faults.
pub const HERMIT: Described<HermitOp> = Described {
    name: schema::hermit::FAMILY,
    variants: HermitOp::ALL,
    info: |op| (op.name(), op.description(), "none (one pinned thread)", "-"),
    run,
    repeats_in_rounds: true,
    params: round_trip::<schema::hermit::Params>,
    ..Described::BASE
};
