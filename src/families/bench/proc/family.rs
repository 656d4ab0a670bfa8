//! lat_proc: one case per operation; the static fork also by the size of
//! the process that forks.

use crate::base::named::Named;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::pagefault::FaultKind;
use crate::families::bench::proc::prepared::Prepared;
use crate::families::bench::proc::table;
use crate::families::bench::proc::{ProcOp, Touch};
use crate::families::bench::schema::{self, proc::Params as ProcParams};
use crate::families::bench::shows::Shows;
use crate::families::bench::toolkit::sampling::{measure, measured, per_op_metric, points};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale, Unsupported, fits_in_memory};

/// Memory the static fork's process has written, in MiB (full scale): fork
/// cost against process size.
pub const TOUCHED_MIB: [u64; 3] = [0, 64, 512];

fn cases(op: ProcOp, scale: Scale) -> Vec<Params> {
    if op != ProcOp::Fork {
        return points([ProcParams::NONE]);
    }
    let touched: &[u64] = if scale.brief() { &TOUCHED_MIB[..1] } else { &TOUCHED_MIB };
    let sizes = touched.iter().flat_map(|&mib| if mib == 0 { vec![(0, false)] } else { vec![(mib, false), (mib, true)] });
    points(sizes.map(|(mib, thp)| ProcParams::touched(mib, thp)))
}

fn supported(op: ProcOp) -> Result<(), Unsupported> {
    Prepared::new(op, &std::env::temp_dir(), Touch::default())
        .and_then(|mut p| p.run(1))
        .map_err(|e| Unsupported(format!("{} does not work here: {e}", op.name())))
}

/// The memory the case's process writes before it forks; n/a where THP is
/// asked for and off, or the memory is not there.
fn touch(ctx: &CaseCtx) -> Result<Touch, CaseError> {
    let p: ProcParams = ctx.typed()?;
    let touch = Touch { mib: p.touched_mib.unwrap_or(0), thp: p.thp.unwrap_or(false) };
    if let Some(why) = FaultKind::AnonThp.unavailable().filter(|_| touch.thp) {
        return Err(CaseError::NotApplicable(why));
    }
    fits_in_memory(touch.mib << 20, "the process to fork")?;
    Ok(touch)
}

fn run(op: ProcOp, ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let touch = touch(ctx)?;
    // A system without a C library (a guest's initramfs) cannot run the
    // dynamically linked programs: n/a there, not a failure.
    let mut p = Prepared::new(op, ctx.scratch, touch).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => CaseError::NotApplicable(format!("{}: {e}", op.name())),
        _ => CaseError::Failed(format!("cannot prepare {} in {}: {e}", op.name(), ctx.scratch.display())),
    })?;
    let (m, placement) = measure(ctx, |n| p.run(n), |e| CaseError::from_io(op.name(), e))?;
    let mut details = serde_json::Map::new();
    if let Some(size) = p.forker_size() {
        let size = size.map_err(|e| CaseError::Failed(format!("{}: the size of the process that forked: {e}", op.name())))?;
        // Huge pages asked for and not given: the case would be the 4 KiB one.
        if touch.thp && size.anon_huge_kib < (touch.mib << 10) / 2 {
            return Err(CaseError::NotApplicable(format!(
                "the kernel backed {} KiB of the {} MiB written with huge pages (transparent_hugepage defrag, fragmented memory)",
                size.anon_huge_kib, touch.mib
            )));
        }
        details.insert(schema::proc::FORKER.into(), serde_json::to_value(size).map_err(|e| CaseError::Failed(e.to_string()))?);
    }
    Ok(measured(placement, &m, vec![per_op_metric(schema::proc::PER_OP, &m, ctx.clock)?], details))
}

/// proc.*: lat_proc's procedure, fork, fork+exec; posix_spawn, vfork, threads.
pub const PROC: Described<ProcOp> = Described {
    name: schema::proc::FAMILY,
    variants: ProcOp::ALL,
    info: |op| {
        let params = if op == ProcOp::Fork { "touched_mib 0,64,512 (quick: 0); thp true|false above 0" } else { "none" };
        let needs = match op {
            ProcOp::Procedure | ProcOp::Thread => "one pinned thread",
            _ => "a C helper (embedded) exec'd from --scratch",
        };
        (op.name(), op.description(), params, needs)
    },
    cases,
    supported,
    run,
    repeats_in_rounds: true,
    shows: Shows { tables: &[], comparisons: &[], plots: &[], headline: Some(&table::ProcHeadline) },
    params: round_trip::<schema::proc::Params>,
    ..Described::BASE
};
