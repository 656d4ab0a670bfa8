//! STREAM: one case single-threaded, one with a pinned thread per CPU given.

use crate::base::named::Named;
use crate::data::results::Metric;
use crate::data::schema_core::Params;
use crate::families::bench::family::round_trip;
use crate::families::bench::schema::{self, stream::Threads, stream::details as keys};
use crate::families::bench::shows::Shows;
use crate::families::bench::stream::table;
use crate::families::bench::stream::{self, Kernel};
use crate::families::bench::toolkit::guest::{GuestCase, GuestMeasured};
use crate::families::bench::toolkit::sampling::{points, summary_of};
use crate::families::bench::{CaseCtx, CaseData, CaseError, Described, Scale};
use crate::measure::placement::Placement;
use serde_json::json;

/// Quick runs use arrays this large (below the 4x LLC rule, and said so).
pub const QUICK_ARRAY_BYTES: u64 = 64 << 20;

fn cases(scale: Scale) -> Vec<Params> {
    let array_bytes = (scale.brief()).then_some(QUICK_ARRAY_BYTES);
    points(Threads::ALL.iter().map(|&threads| schema::stream::Params { threads, array_bytes }))
}

fn run(ctx: &CaseCtx) -> Result<CaseData, CaseError> {
    let p: schema::stream::Params = ctx.typed()?;
    let per_cpu = p.threads == Threads::PerCpu;
    let threads = if per_cpu { ctx.cpus.len() } else { 1 };
    let llc = crate::families::bench::toolkit::sizes::llc_bytes();
    let elements = stream::array_len(llc, p.array_bytes.or(ctx.mem_bytes), crate::families::bench::toolkit::sizes::ram_bytes());
    crate::families::bench::fits_in_memory(3 * 8 * elements as u64, "STREAM's three arrays")?;
    // STREAM's NTIMES, 10 repetitions (the first not counted), in full
    // suites; quick ones (and tests) follow the harness's batches. STREAM
    // runs in the first round only, whose batches are few when rounds are many.
    let reps = if ctx.scale == Scale::Full { stream::NTIMES } else { (ctx.harness.batches + 1).clamp(3, 11) };
    let r = stream::run(elements, reps, ctx.cpus, threads, stream::kernels).map_err(|e| CaseError::Failed(e.to_string()))?;
    let mut metrics = Vec::new();
    for k in &r.kernels {
        let rates: Vec<f64> = k.times.iter().map(|t| k.bytes as f64 / t / 1e6).collect();
        let name = k.kernel.name().to_lowercase();
        metrics.push(Metric::rate(&schema::stream::rate(&name), "MB/s", summary_of(&rates)?));
        metrics.push(Metric::cost(&schema::stream::time(&name), "s", summary_of(&k.times)?));
    }
    let array_bytes = elements as u64 * 8;
    let mut details = serde_json::Map::new();
    details.insert("elements".into(), json!(elements));
    details.insert(keys::ARRAY_BYTES.into(), json!(array_bytes));
    details.insert("llc_bytes".into(), json!(llc));
    details.insert(keys::MEETS_4X_LLC.into(), json!(llc.is_none_or(|l| array_bytes >= 4 * l)));
    details.insert(keys::REPETITIONS_COUNTED.into(), json!(reps - 1));
    details.insert("bytes_per_element".into(), json!(Kernel::ALL.iter().map(|k| (k.name(), k.bytes_per_element())).collect::<Vec<_>>()));
    Ok(CaseData {
        placement: Placement {
            actors: format!("{threads} thread{}", if threads > 1 { "s, one pinned per CPU" } else { "" }),
            cpus: ctx.cpus.iter().copied().take(threads).collect(),
            observed_cpus: vec![],
            policy: ctx.policy.to_string(),
            memory_locked: ctx.memory_locked,
        },
        metrics,
        details,
    })
}

/// A guest program's STREAM (`kernels`: each its name, bytes and times):
/// the rate and time of each kernel, as [`run`] reports them; a thread per
/// CPU is n/a in a guest of one CPU.
fn guest_metrics(case: &GuestCase) -> Result<GuestMeasured, CaseError> {
    use serde_json::Value;
    let c = case.sent;
    let threads = case.params.get("threads").and_then(Value::as_str).unwrap_or("single");
    if case.cpus < 2 && threads != Threads::Single.name() {
        return Err(CaseError::NotApplicable(format!("stream per-cpu in {}: one CPU", case.system)));
    }
    let mut metrics = Vec::new();
    for k in c.get("kernels").and_then(Value::as_array).into_iter().flatten() {
        let name = k.get("name").and_then(Value::as_str).unwrap_or("?").to_lowercase();
        let bytes = k.get("bytes").and_then(Value::as_f64).unwrap_or(0.0);
        let times: Vec<f64> =
            k.get("times").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default();
        let rates: Vec<f64> = times.iter().map(|t| bytes / t / 1e6).collect();
        let (Ok(r), Ok(t)) = (summary_of(&rates), summary_of(&times)) else {
            return Err(CaseError::Failed(format!("STREAM {name}: no times")));
        };
        metrics.push(Metric::rate(&schema::stream::rate(&name), "MB/s", r));
        metrics.push(Metric::cost(&schema::stream::time(&name), "s", t));
    }
    let mut details = serde_json::Map::new();
    details.insert("elements".into(), c.get("elements").cloned().unwrap_or(Value::Null));
    let counted = c.get("repetitions").and_then(Value::as_u64).map(|r| r.saturating_sub(1));
    details.insert(keys::REPETITIONS_COUNTED.into(), json!(counted));
    details.insert(keys::ARRAY_BYTES.into(), json!(c.get("elements").and_then(Value::as_u64).map(|e| e * 8)));
    Ok(GuestMeasured { metrics, details, threads: 1 })
}

/// stream.kernels: a variant of STREAM.
pub const STREAM: Described<()> = Described {
    name: schema::stream::FAMILY,
    variants: &[()],
    info: |()| {
        (
            schema::stream::KERNELS_BENCH,
            concat!(
                "a variant of STREAM: copy, scale, add, triad over three arrays of 4x the LLC (--mem-bytes overrides), validated; ",
                "each kernel the loop gcc -O2 makes of STREAM's C for x86-64, in assembly: one pair of doubles per iteration, ",
                "aligned SSE2 loads and stores through the cache, addpd reading its second array from memory (copy never the C library's memcpy with non-temporal stores); the arrays in one block as STREAM's static ",
                "arrays (OFFSET 0); best of 9 repetitions in full suites; bytes counted as STREAM counts them"
            ),
            "threads single|per-cpu (one pinned per --cpus entry)",
            "3 arrays of memory",
        )
    },
    cases: |(), scale| cases(scale),
    run: |(), ctx| run(ctx),
    // Under QEMU's instruction counter the time it measures is fictitious (STREAM rates are bytes over elapsed time).
    measures_time: true,
    shows: Shows {
        tables: &[&table::StreamTable],
        comparisons: &[&table::StreamBars],
        plots: &[&table::StreamPlots],
        headline: Some(&table::StreamHeadline),
    },
    params: round_trip::<schema::stream::Params>,
    guest: |(), case| guest_metrics(case),
    ..Described::BASE
};
