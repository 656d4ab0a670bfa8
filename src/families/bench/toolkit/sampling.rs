//! What the families' cases share (each family's own are its folder's
//! `family.rs`): parameter points and grids, placing a case on its CPU,
//! timing it with the harness, and turning what it measured into metrics.

use crate::analysis::stats::Summary;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::schema::CaseParams;
use crate::families::bench::{CaseCtx, CaseData, CaseError};
use crate::measure::clock::{ClockInfo, Tsc};
use crate::measure::harness::{self, Measurement};
use crate::measure::placement::{self, Placement};
use crate::measure::watchdog::Stop;
use serde_json::{Map, Value, json};

/// Parameter points as the JSON maps results store, in order.
pub fn points<P: CaseParams>(points: impl IntoIterator<Item = P>) -> Vec<Params> {
    points.into_iter().map(|p| p.to_params()).collect()
}

/// What a file case records of the file it read
/// ([`crate::data::schema_core::file_layout`]): bytes per write, and the
/// write calls the kernel counted writing it.
pub fn file_details(
    details: &mut Map<String, Value>,
    writes: crate::measure::scratch::FileWrites,
    f: &crate::measure::scratch::ScratchFile,
) {
    use crate::data::schema_core::file_layout;
    details.insert(file_layout::WRITE_BYTES.into(), json!(writes.bytes()));
    if let Some(calls) = f.write_calls {
        details.insert(file_layout::WRITE_CALLS.into(), json!(calls));
    }
}

/// Every pair of a value of `outer` and one of `inner`, `outer` changing
/// slowest: a sweep's grid in table order.
pub fn grid<A: Copy, B: Copy>(outer: &[A], inner: &[B]) -> Vec<(A, B)> {
    outer.iter().flat_map(|&a| inner.iter().map(move |&b| (a, b))).collect()
}

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

/// `op` (n operations a call) timed by the harness on the context's CPU, as
/// [`pinned`] places it; `err` turns its errors into the case's.
pub fn measure<E: From<Stop>>(
    ctx: &CaseCtx,
    op: impl FnMut(u64) -> Result<(), E>,
    err: impl FnOnce(E) -> CaseError,
) -> Result<(Measurement, Placement), CaseError> {
    pinned(ctx, || harness::measure(&Tsc, ctx.clock.overhead_cycles, &ctx.harness, op).map_err(err))
}

/// What a case measured by the harness gives: its metrics, and its details
/// with the batches' inner count.
pub fn measured(placement: Placement, m: &Measurement, metrics: Vec<Metric>, mut details: Map<String, Value>) -> CaseData {
    details.insert("inner".into(), json!(m.inner));
    CaseData { placement, metrics, details }
}

/// A copy's metrics: its rate in MB/s (`bytes` an operation) as `rate`, and
/// its cycles per operation as `per_op`.
pub fn copy_metrics(rate: &str, per_op: &str, bytes: u64, m: &Measurement, clock: &ClockInfo) -> Result<Vec<Metric>, CaseError> {
    if clock.counts_instructions {
        // Under QEMU's instruction counter a second is 10^9 instructions: no rate, the count per copy only.
        return Ok(vec![per_op_metric(per_op, m, clock)?]);
    }
    Ok(vec![rate_metric(rate, "MB/s", m, clock.tsc_hz, bytes as f64, 1e6)?, per_op_metric(per_op, m, clock)?])
}

/// The summary of samples, or a failure when there are none.
pub fn summary_of(samples: &[f64]) -> Result<Summary, CaseError> {
    Summary::of(samples).ok_or_else(|| CaseError::Failed("no samples".into()))
}

/// The summary of a measurement's per-operation samples.
pub fn summary(m: &Measurement) -> Result<Summary, CaseError> {
    summary_of(&m.per_op_cycles)
}

/// A cost in cycles per operation, keeping the batches' samples.
pub fn per_op_metric(name: &str, m: &Measurement, clock: &ClockInfo) -> Result<Metric, CaseError> {
    Ok(Metric::cycles(name, summary(m)?, clock).with_samples(&m.per_op_cycles))
}

/// Per-operation samples turned into a rate: `units_per_op` units each,
/// reported per second / `per` (1e6 for MB/s), keeping the batches' samples.
pub fn rate_metric(name: &str, unit: &str, m: &Measurement, tsc_hz: f64, units_per_op: f64, per: f64) -> Result<Metric, CaseError> {
    let rates = rates(m, tsc_hz, units_per_op, per);
    let s = summary_of(&rates)?;
    Ok(Metric::rate(name, unit, s).with_samples(&rates))
}

fn rates(m: &Measurement, tsc_hz: f64, units_per_op: f64, per: f64) -> Vec<f64> {
    m.per_op_cycles.iter().map(|&c| units_per_op * tsc_hz / c.max(1e-9) / per).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::bench::Scale;
    use crate::families::bench::schema;

    #[test]
    fn a_grid_runs_its_outer_values_slowest() {
        assert_eq!(grid(&[1, 2], &['a', 'b', 'c']), [(1, 'a'), (1, 'b'), (1, 'c'), (2, 'a'), (2, 'b'), (2, 'c')]);
        assert!(grid::<u8, u8>(&[], &[1]).is_empty());
    }

    #[test]
    fn points_are_the_structs_maps_in_order() {
        let p = points([1, 2].map(|tasks| schema::aim::Params { tasks }));
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"[{"tasks":1},{"tasks":2}]"#);
    }

    #[test]
    fn typed_parameters_read_as_their_struct_or_fail_naming_them() {
        let clock = ClockInfo {
            source: "test".into(),
            tsc_hz: 1e9,
            tsc_hz_spread: 0.0,
            cpuid_tsc_hz: None,
            overhead_cycles: 0,
            step_cycles: None,
            counts_instructions: false,
        };
        let params = schema::ctx::Params { procs: 2, ws_kib: 16 }.to_params();
        let ctx = CaseCtx {
            params: &params,
            cpus: &[0],
            pin: true,
            policy: placement::Policy::Other,
            memory_locked: false,
            harness: crate::measure::harness::HarnessConfig::tiny(),
            scale: Scale::Quick,
            point_ms: None,
            clock: &clock,
            timeout: std::time::Duration::from_secs(1),
            scratch: std::path::Path::new("/nonexistent"),
            mem_bytes: None,
        };
        assert_eq!(ctx.typed::<schema::ctx::Params>(), Ok(schema::ctx::Params { procs: 2, ws_kib: 16 }));
        match ctx.typed::<schema::aim::Params>() {
            Err(CaseError::Failed(why)) => assert!(why.contains("procs=2 ws_kib=16"), "{why}"),
            other => panic!("another family's parameters read as {other:?}"),
        }
        let none = Params::new();
        let ctx = CaseCtx { params: &none, ..ctx };
        assert_eq!(ctx.typed::<schema::syscall::Params>(), Ok(schema::syscall::Params {}));
        assert!(matches!(ctx.typed::<schema::noise::Params>(), Err(CaseError::Failed(why)) if why.contains("(none)")));
    }
}
