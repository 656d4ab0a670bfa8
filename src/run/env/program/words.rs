//! The program's command line: `key=value` words: `mode=`, `benches=` (the
//! planned benchmark ids), the harness (`batch_cycles=`, `batches=`,
//! `inner=`), STREAM's `array_bytes=`, and `cases.<benchmark>=` lists of
//! parameters ([`case_lists`]).

use crate::base::named::Named;
use crate::families::bench::toolkit::sizes;
use crate::measure::harness::HarnessConfig;
use crate::run::env::guest::GuestSpec;
use crate::run::env::options::EnvOptions;
use crate::run::plan::{PlannedCase, benchmark_ids};
use serde_json::Value;

/// The program's command line: the benchmarks, the harness, STREAM's array
/// size (the Linux rule, within a fifth of the guest's memory), the cases.
pub fn args(spec: &GuestSpec, plan: &[PlannedCase], h: &HarnessConfig, o: &EnvOptions) -> String {
    let benches = benchmark_ids(plan).join(",");
    let guest_ram = u64::from(o.vm_mem_mib) << 20;
    let quick = plan.iter().any(|p| p.scale.brief());
    let rule = sizes::mem_buffer_bytes(sizes::llc_bytes(), guest_ram);
    let quick_bytes = quick.then_some(crate::families::bench::stream::family::QUICK_ARRAY_BYTES);
    let array = spec.run.mem_bytes.or(quick_bytes).unwrap_or(rule).min(guest_ram / 5);
    let lists = case_lists(plan);
    format!(
        "mode={} benches={benches} batch_cycles={} batches={} inner={} array_bytes={array}{lists}",
        spec.mode.name(),
        h.target_batch_cycles,
        h.batches,
        h.fixed_inner.unwrap_or(0)
    )
}

/// The cases of each benchmark with parameters, as the program reads them:
/// ` cases.<benchmark>=<k1>/<k2>:<v1>/<v2>:<v1>/<v2>`, the parameter names,
/// then each planned case's values. A name or value with a separator in it
/// leaves its benchmark without a list (its cases then fail with the
/// reason; none has one today).
pub fn case_lists(plan: &[PlannedCase]) -> String {
    let clean = |s: &str| !s.is_empty() && !s.contains([' ', ':', '/', '=', '"']);
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let mut out = String::new();
    for id in benchmark_ids(plan) {
        let cases: Vec<&PlannedCase> = plan.iter().filter(|p| p.benchmark.id == id && !p.params.is_empty()).collect();
        let Some(first) = cases.first() else { continue };
        let keys: Vec<&String> = first.params.keys().collect();
        let rows: Vec<Option<String>> = cases
            .iter()
            .map(|p| {
                let values: Vec<String> = keys.iter().map(|k| p.params.get(*k).map(text).unwrap_or_default()).collect();
                (p.params.len() == keys.len() && values.iter().all(|v| clean(v))).then(|| values.join("/"))
            })
            .collect();
        if keys.iter().all(|k| clean(k)) && rows.iter().all(Option::is_some) {
            let names: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
            out.push_str(&format!(" cases.{id}={}:{}", names.join("/"), rows.into_iter().flatten().collect::<Vec<_>>().join(":")));
        }
    }
    out
}
