//! Each family on the harness: which cases it has at each scale, whether it
//! can run here, and how one case runs and becomes a CaseData.

pub mod aim;
pub mod alloc;
pub mod blk;
pub mod boot;
pub mod bw;
pub mod control;
pub mod ctx;
pub mod hermit;
pub mod ipc;
pub mod memcpy;
pub mod microvm;
pub mod net;
pub mod noise;
pub mod packet_stream;
pub mod pagefault;
pub mod parallel;
pub mod proc;
pub mod stream;
pub mod syscall;

use super::{CaseCtx, CaseError};
use crate::harness::Measurement;
use crate::placement::{self, Placement};
use crate::stats::Summary;

/// The CPUs a single-threaded case may run on: the first of the context's,
/// or (isolation `none`) every CPU the process may use.
pub fn case_cpus(ctx: &CaseCtx) -> Vec<usize> {
    if ctx.pin { vec![ctx.cpus[0]] } else { placement::allowed_cpus() }
}

/// Runs `f` on the context's first CPU (or unpinned, if the context says so)
/// under its policy, restoring both afterwards, and records the placement.
pub fn pinned<T>(ctx: &CaseCtx, f: impl FnOnce() -> Result<T, CaseError>) -> Result<(T, Placement), CaseError> {
    let cpus = case_cpus(ctx);
    let _affinity = placement::AffinityGuard::save();
    let _policy = placement::PolicyGuard::save();
    placement::set_affinity(&cpus).map_err(|e| CaseError::Failed(format!("cannot run on CPUs {}: {e}", placement::format_cpus(&cpus))))?;
    if ctx.policy != placement::Policy::Other {
        placement::set_policy(ctx.policy).map_err(|e| CaseError::Failed(e.to_string()))?;
    }
    let v = f()?;
    let placement = Placement {
        actors: "thread".into(),
        cpus,
        observed_cpus: vec![placement::current_cpu()],
        policy: placement::current_policy().to_string(),
        memory_locked: ctx.memory_locked,
    };
    Ok((v, placement))
}

/// The summary of a measurement's per-operation samples.
pub fn summary(m: &Measurement) -> Result<Summary, CaseError> {
    Summary::of(&m.per_op_cycles).ok_or_else(|| CaseError::Failed("no samples".into()))
}

/// A cost in cycles per operation, keeping the batches' samples.
pub fn per_op_metric(name: &str, m: &Measurement, clock: &crate::clock::ClockInfo) -> Result<crate::results::Metric, CaseError> {
    Ok(crate::results::Metric::cycles(name, summary(m)?, clock).with_samples(&m.per_op_cycles))
}

/// Per-operation samples turned into a rate: `units_per_op` units each,
/// reported per second / `per` (1e6 for MB/s), keeping the batches' samples.
pub fn rate_metric(
    name: &str,
    unit: &str,
    m: &Measurement,
    tsc_hz: f64,
    units_per_op: f64,
    per: f64,
) -> Result<crate::results::Metric, CaseError> {
    let rates = rates(m, tsc_hz, units_per_op, per);
    let s = Summary::of(&rates).ok_or_else(|| CaseError::Failed("no samples".into()))?;
    Ok(crate::results::Metric::rate(name, unit, s).with_samples(&rates))
}

fn rates(m: &Measurement, tsc_hz: f64, units_per_op: f64, per: f64) -> Vec<f64> {
    m.per_op_cycles.iter().map(|&c| units_per_op * tsc_hz / c.max(1e-9) / per).collect()
}
