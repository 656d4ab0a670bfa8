//! The program's command line: `key=value` words: `mode=`, `benches=` (the
//! planned benchmark ids), the harness (`batch_cycles=`, `batches=`,
//! `inner=`, and `mark=1` where the kernel counters' plugin counts the
//! timed batches), STREAM's `array_bytes=`, and `cases.<benchmark>=` lists
//! of parameters ([`case_lists`]).

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
    // Only when marking: the words of an uncounted run stay as they were.
    let mark = if spec.run.mark_batches { " mark=1" } else { "" };
    format!(
        "mode={} benches={benches} batch_cycles={} batches={} inner={}{mark} array_bytes={array}{lists}",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::env::program::document::tests::{plan, spec};

    /// guest/freestanding/harness.c, compiled for the host with its
    /// self-test, reads the words the host makes for a plan as they are
    /// meant: the harness's settings, every planned case with parameters
    /// with exactly its parameters (in the plan's order), the IPC rows'
    /// space and cores, and the inner-count rule.
    #[test]
    fn the_freestanding_library_reads_the_words_of_a_plan() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/freestanding");
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("selftest");
        let out = std::process::Command::new("cc")
            .args(["-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function", "-o"])
            .arg(&exe)
            .arg(root.join("harness-selftest.c"))
            .arg(root.join("harness.c"))
            .output()
            .expect("cc (scripts/setup installs gcc)");
        assert!(out.status.success(), "cc: {}", String::from_utf8_lossy(&out.stderr));
        let plan = plan(&spec(&["l4-ipc", "hermit-basic", "syscall"]));
        let ids = benchmark_ids(&plan);
        let words =
            format!("mode=hang benches={} batch_cycles=5000 batches=7 inner=0 mark=1 array_bytes=1{}", ids.join(","), case_lists(&plan));
        let run = std::process::Command::new(&exe).arg(&words).output().unwrap();
        assert!(run.status.success(), "the answer fits its buffer");
        let mut dec = crate::run::env::frame::Decoder::default();
        dec.feed(&String::from_utf8(run.stdout).unwrap());
        let got = dec.take();
        let v: serde_json::Value = serde_json::from_slice(&got[0].1).expect("valid JSON");
        assert_eq!((v["target_batch"].as_u64(), v["batches"].as_u64(), v["fixed_inner"].as_u64()), (Some(5000), Some(7), Some(0)));
        assert_eq!(v["mode_is_hang"], 1);
        let cases = v["cases"].as_array().unwrap();
        let with_params: Vec<&PlannedCase> = plan.iter().filter(|p| !p.params.is_empty()).collect();
        let rows: Vec<&serde_json::Value> = cases.iter().filter(|c| c.get("params").is_some()).collect();
        assert_eq!(rows.len(), with_params.len(), "{v}");
        for (p, c) in with_params.iter().zip(&rows) {
            assert_eq!(c["benchmark"], p.benchmark.id.as_str());
            assert_eq!(serde_json::to_value(&p.params).unwrap(), c["params"], "{c}");
            if p.benchmark.family.name() == crate::families::bench::schema::ipc::FAMILY {
                let same = p.params.get("cores").and_then(Value::as_str) == Some("same");
                let want = if same { p.params["space"].as_str().unwrap() } else { "cross-core" };
                assert_eq!(c["reason"], want, "{c}");
            }
        }
        assert!(ids.iter().all(|id| cases.iter().any(|c| c["benchmark"] == id.as_str())), "every planned id is planned()");
        let measured = cases.last().unwrap();
        assert_eq!((measured["inner"].as_u64(), measured["batch_cycles"].as_array().map(Vec::len)), (Some(8192), Some(7)), "{measured}");
        assert!(measured["batch_cycles"].as_array().unwrap().iter().all(|b| b == 8192), "{measured}");
        // mark=1: its 7 timed batches marked (marks.h: a no-op here), windows 0..7.
        assert_eq!(measured["windows"], serde_json::json!([0, 7]), "{measured}");
    }
}
