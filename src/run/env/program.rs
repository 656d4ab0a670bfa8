//! A guest program of oscycles' own, booted whole by an environment (the
//! Hermit program, the seL4 root task, the GNU Mach program): the one code
//! path from the plan to the program's command line, and from the samples
//! it sends back framed (`frame.rs`; guest/freestanding/frame.h for C
//! guests) to the run document.
//!
//! The program's command line is `key=value` words: `mode=`, `benches=` (the
//! planned benchmark ids), the harness (`batch_cycles=`, `batches=`,
//! `inner=`), STREAM's `array_bytes=`, and `cases.<benchmark>=` lists of
//! parameters ([`case_lists`]). Its answer, the message `samples`, is
//! `{"cases": [...]}`, each case `{"benchmark", "params"?, "status"}` with,
//! when `ok`, either `per_op_cycles` (a float per batch) or `inner` and
//! `batch_cycles` (the whole batch's count, an integer, which the host
//! divides), and `reason` when `n/a` or `failed`. A planned case the
//! program does not answer is n/a with the environment's reason.

use crate::analysis::stats::Summary;
use crate::base::named::Named;
use crate::data::results::{CaseStatus, Condition, Metric, RunDoc, RunStatus, now_rfc3339};
use crate::families::bench::schema;
use crate::families::bench::toolkit::sampling as cases;
use crate::measure::clock::ClockInfo;
use crate::run::plan::{PlannedCase, not_measured};
use serde_json::{Map, Value, json};

/// The ticks a second of QEMU's virtual clock under the instruction counter
/// (`-icount shift=0`: one tick, one guest instruction).
const COUNTER_HZ: f64 = 1e9;

/// The guest's clock as the host reads the program's TSC deltas: the host's
/// TSC rate (TCG passes it through, KVM runs it), or, under the instruction
/// counter, QEMU's virtual clock, whose deltas are guest instructions.
pub fn clock(counts_instructions: bool) -> ClockInfo {
    if counts_instructions {
        let mut c = crate::measure::clock::known_tsc(COUNTER_HZ);
        c.source = "the guest's TSC under QEMU's instruction counter (-icount shift=0)".into();
        return c.counting(true);
    }
    crate::measure::clock::known_tsc(crate::measure::clock::tsc_hz_hint())
}

/// Why the plan cannot be made or the program's answer read.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    #[error("unknown suite {0:?}")]
    UnknownSuite(String),
    #[error(transparent)]
    Where(#[from] crate::run::plan::WhereError),
    #[error("the program's samples do not parse: {0}")]
    Samples(#[source] serde_json::Error),
}

/// The environment a program answers for.
pub struct Guest {
    /// The environment's name (the document's).
    pub env: &'static str,
    /// The system, as reasons name it ("Hermit", "seL4").
    pub system: &'static str,
    /// Why a case the program did not answer is not measured there.
    pub absent: fn(&PlannedCase) -> String,
    /// The scheduling policy the placement reports.
    pub policy: &'static str,
    /// Whether the guest has one CPU only (STREAM per-cpu is then n/a).
    pub one_cpu: bool,
}

/// The cases of `run` (its suites, benchmarks and --where), as a round plans them.
pub fn plan_of(run: &crate::run::spec::RunSpec) -> Result<Vec<PlannedCase>, ProgramError> {
    let suites = run
        .suites
        .iter()
        .map(|s| crate::run::registry::find_suite(s).ok_or_else(|| ProgramError::UnknownSuite(s.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    let mut plan = crate::run::plan::plan_at(&suites, run.benchmarks.as_deref(), run.scale);
    crate::run::plan::keep_where(&mut plan, &run.cases_where, false)?;
    Ok(plan)
}

/// The program's command line: the benchmarks, the harness, STREAM's array
/// size (the Linux rule, within a fifth of the guest's memory), the cases.
pub fn args(
    spec: &super::guest::GuestSpec,
    plan: &[PlannedCase],
    h: &crate::measure::harness::HarnessConfig,
    o: &super::options::EnvOptions,
) -> String {
    let benches = crate::run::plan::benchmark_ids(plan).join(",");
    let guest_ram = u64::from(o.vm_mem_mib) << 20;
    let quick = plan.iter().any(|p| p.scale.brief());
    let rule = crate::families::bench::toolkit::sizes::mem_buffer_bytes(crate::families::bench::toolkit::sizes::llc_bytes(), guest_ram);
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
    for id in crate::run::plan::benchmark_ids(plan) {
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

/// The figures of an independent check program's line on the console (the
/// first with `marker`): its `key=number` words, or why there is none.
pub fn check_line(console: &str, marker: &str) -> Value {
    let Some(line) = console.lines().find(|l| l.contains(marker)) else {
        return json!({ "failed": format!("no figures; last output: {}", super::output::tail(console)) });
    };
    let mut v = Map::new();
    for (k, x) in line.split_whitespace().filter_map(|w| w.split_once('=')) {
        if let Ok(x) = x.trim().parse::<f64>() {
            v.insert(k.into(), json!(x));
        }
    }
    Value::Object(v)
}

/// The samples message's bytes as JSON.
pub fn parse_samples(bytes: &[u8]) -> Result<Value, ProgramError> {
    serde_json::from_slice(bytes).map_err(ProgramError::Samples)
}

/// The run document of the program's samples: the plan's cases in order,
/// each measured, failed, or n/a with the reason.
pub fn document(
    g: &Guest,
    run: &crate::run::spec::RunSpec,
    plan: &[PlannedCase],
    samples: &Value,
    h: crate::measure::harness::HarnessConfig,
    clock: ClockInfo,
) -> RunDoc {
    let mut doc = run.document(&[g.env], plan.len(), vec![0], h, clock.clone());
    let condition = Condition {
        load: run.loads.first().map_or("idle", |l| l.name()).into(),
        isolation: run.isolations.first().map_or("none", |i| i.name()).into(),
        preempt: None,
        facts: Map::new(),
    };
    let cases = samples.get("cases").and_then(Value::as_array).cloned().unwrap_or_default();
    for p in plan {
        let case = cases.iter().find(|c| c.get("benchmark").and_then(Value::as_str) == Some(p.benchmark.id.as_str()) && same_params(p, c));
        let status = case.and_then(|c| c.get("status")).and_then(Value::as_str).unwrap_or("absent");
        let mut r = not_measured(p, CaseStatus::NotApplicable, &(g.absent)(p), condition.clone());
        let reason = |c: &Value, or: &str| c.get("reason").and_then(Value::as_str).unwrap_or(or).to_string();
        let measured = match (status, case) {
            ("ok", Some(c)) => metrics_of(g, p, c, &clock),
            ("failed", Some(c)) => Err((CaseStatus::Failed, reason(c, "failed"))),
            ("n/a", Some(c)) => Err((CaseStatus::NotApplicable, format!("{} in {}: {}", p.benchmark.id, g.system, reason(c, "not there")))),
            _ => Err((CaseStatus::NotApplicable, (g.absent)(p))),
        };
        match measured {
            Ok((metrics, details)) => {
                (r.status, r.reason, r.metrics, r.details) = (CaseStatus::Ok, None, metrics, details);
                r.placement = Some(placement(g, p));
            }
            Err((status, why)) => (r.status, r.reason) = (status, Some(crate::data::results::check::bounded_text(&why))),
        }
        doc.results.push(r);
    }
    doc.settings.cpus = vec![0];
    doc.finished_at = Some(now_rfc3339());
    doc.status = RunStatus::Complete;
    doc
}

/// Whether the program's case `c` is the planned case `p`: the same
/// parameters (a case sent without any stands for every case of its
/// benchmark).
fn same_params(p: &PlannedCase, c: &Value) -> bool {
    match c.get("params").and_then(Value::as_object) {
        Some(sent) if !sent.is_empty() => sent == &p.params,
        _ => true,
    }
}

/// Where the program measures: its main thread on the one CPU (and, for
/// IPC, the server thread beside it).
fn placement(g: &Guest, p: &PlannedCase) -> crate::measure::placement::Placement {
    let ipc = p.benchmark.family.name() == schema::ipc::FAMILY;
    crate::measure::placement::Placement {
        actors: if ipc { "threads" } else { "1 thread" }.into(),
        cpus: if ipc { vec![0, 0] } else { vec![0] },
        observed_cpus: vec![],
        policy: g.policy.into(),
        memory_locked: false,
    }
}

type Measured = Result<(Vec<Metric>, Map<String, Value>), (CaseStatus, String)>;

/// A measured case's metrics, named as the Linux family names them (in
/// guest instructions where the clock counts them).
fn metrics_of(g: &Guest, p: &PlannedCase, c: &Value, clock: &ClockInfo) -> Measured {
    if p.benchmark.is_of(&crate::families::bench::stream::family::STREAM) {
        return stream_metrics(g, p, c);
    }
    let m = measurement(c)?;
    let failed = |e: crate::families::bench::CaseError| (CaseStatus::Failed, format!("{e:?}"));
    let metrics = match p.benchmark.family.name() {
        schema::syscall::FAMILY => vec![cases::per_op_metric(schema::syscall::PER_CALL, &m, clock).map_err(failed)?],
        schema::pagefault::FAMILY => vec![cases::per_op_metric(schema::pagefault::PER_PAGE, &m, clock).map_err(failed)?],
        schema::alloc::FAMILY => vec![cases::per_op_metric(schema::alloc::PER_PAIR, &m, clock).map_err(failed)?],
        schema::ipc::FAMILY => crate::families::bench::ipc::family::metrics(&m.per_op_cycles, clock).map_err(failed)?,
        schema::memcpy::FAMILY => {
            let bytes = p.params.get("bytes").and_then(Value::as_u64).unwrap_or(0);
            cases::copy_metrics(schema::memcpy::BANDWIDTH, schema::memcpy::PER_COPY, bytes, &m, clock).map_err(failed)?
        }
        _ => vec![cases::per_op_metric(schema::hermit::PER_OP, &m, clock).map_err(failed)?],
    };
    let mut details = Map::new();
    details.insert("inner".into(), json!(m.inner));
    details.insert("calibration".into(), json!(m.calibration));
    for k in ["round_trips", "requests_verified_by_server", "path", "words_checked"] {
        if let Some(v) = c.get(k) {
            details.insert(k.into(), v.clone());
        }
    }
    Ok((metrics, details))
}

/// The harness's measurement as the program sent it: `per_op_cycles`, or
/// `batch_cycles` divided by `inner`.
fn measurement(c: &Value) -> Result<crate::measure::harness::Measurement, (CaseStatus, String)> {
    let numbers = |k: &str| -> Vec<f64> {
        c.get(k).and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default()
    };
    let inner = c.get("inner").and_then(Value::as_u64).unwrap_or(0);
    let mut samples = numbers("per_op_cycles");
    if samples.is_empty() && inner > 0 {
        samples = numbers("batch_cycles").iter().map(|b| b / inner as f64).collect();
    }
    if samples.is_empty() {
        return Err((CaseStatus::Failed, "the program sent no samples".to_string()));
    }
    crate::data::results::check::guest_costs(&samples).map_err(|e| (CaseStatus::Failed, format!("the program sent {e}")))?;
    let calibration: Vec<(u64, u64)> = c.get("calibration").cloned().and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
    Ok(crate::measure::harness::Measurement { per_op_cycles: samples, inner, calibration, overhead_cycles: 0 })
}

/// STREAM's rates and times per kernel, as the stream family reports them;
/// a thread per CPU is n/a in a one-CPU guest.
fn stream_metrics(g: &Guest, p: &PlannedCase, c: &Value) -> Measured {
    let threads = p.params.get("threads").and_then(Value::as_str).unwrap_or("single");
    if g.one_cpu && threads != schema::stream::Threads::Single.name() {
        return Err((CaseStatus::NotApplicable, format!("stream per-cpu in {}: one CPU", g.system)));
    }
    let mut metrics = Vec::new();
    for k in c.get("kernels").and_then(Value::as_array).into_iter().flatten() {
        let name = k.get("name").and_then(Value::as_str).unwrap_or("?").to_lowercase();
        let bytes = k.get("bytes").and_then(Value::as_f64).unwrap_or(0.0);
        let times: Vec<f64> =
            k.get("times").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default();
        let rates: Vec<f64> = times.iter().map(|t| bytes / t / 1e6).collect();
        let (Some(r), Some(t)) = (Summary::of(&rates), Summary::of(&times)) else {
            return Err((CaseStatus::Failed, format!("STREAM {name}: no times")));
        };
        metrics.push(Metric::rate(&schema::stream::rate(&name), "MB/s", r));
        metrics.push(Metric::cost(&schema::stream::time(&name), "s", t));
    }
    let mut details = Map::new();
    details.insert("elements".into(), c.get("elements").cloned().unwrap_or(Value::Null));
    let counted = c.get("repetitions").and_then(Value::as_u64).map(|r| r.saturating_sub(1));
    details.insert(schema::stream::details::REPETITIONS_COUNTED.into(), json!(counted));
    let array_bytes = c.get("elements").and_then(Value::as_u64).map(|e| e * 8);
    details.insert(schema::stream::details::ARRAY_BYTES.into(), json!(array_bytes));
    Ok((metrics, details))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(suites: &[&str]) -> crate::run::spec::RunSpec {
        crate::run::spec::RunSpec { suites: suites.iter().map(|s| s.to_string()).collect(), ..Default::default() }
    }

    use crate::data::results::{UNIT_CYCLES, UNIT_INSTRUCTIONS};

    const GUEST: Guest =
        Guest { env: "test", system: "Test", absent: |p| format!("{} in Test: absent", p.benchmark.id), policy: "its own", one_cpu: true };

    #[test]
    fn whole_batches_are_divided_and_instructions_have_no_ns_twin() {
        let run = spec(&["syscall"]);
        let plan = plan_of(&run).unwrap();
        let samples = json!({"cases": [
            {"benchmark": "syscall.getpid", "status": "ok", "inner": 1000, "batch_cycles": [363000, 364000, 365000]},
        ]});
        let clock = crate::measure::clock::known_tsc(1e9);
        let doc = document(&GUEST, &run, &plan, &samples, crate::measure::harness::HarnessConfig::tiny(), clock.clone().counting(true));
        let m = doc.case("syscall.getpid", |_| true).unwrap().metric(schema::syscall::PER_CALL).unwrap();
        assert_eq!((m.summary.median, m.unit.as_str(), m.ns.is_none()), (364.0, UNIT_INSTRUCTIONS, true));
        let doc = document(&GUEST, &run, &plan, &samples, crate::measure::harness::HarnessConfig::tiny(), clock);
        let m = doc.case("syscall.getpid", |_| true).unwrap().metric(schema::syscall::PER_CALL).unwrap();
        assert_eq!((m.unit.as_str(), m.ns.map(|s| s.median)), (UNIT_CYCLES, Some(364.0)));
        let other = doc.results.iter().find(|r| r.benchmark != "syscall.getpid").unwrap();
        assert_eq!(other.status, CaseStatus::NotApplicable);
        assert!(other.reason.as_deref().unwrap().ends_with("in Test: absent"), "{:?}", other.reason);
        let none = json!({"cases": [{"benchmark": "syscall.getpid", "status": "ok", "inner": 0, "batch_cycles": [1]}]});
        let doc =
            document(&GUEST, &run, &plan, &none, crate::measure::harness::HarnessConfig::tiny(), crate::measure::clock::known_tsc(1e9));
        assert_eq!(doc.case("syscall.getpid", |_| true).unwrap().status, CaseStatus::Failed, "no inner: no samples");
    }

    #[test]
    fn a_guests_nonsense_costs_are_refused_and_its_reasons_bounded() {
        // Issue 58, items 6 and 9: what a seL4 or Mach guest sends.
        let run = spec(&["syscall"]);
        let plan = plan_of(&run).unwrap();
        let one = |case: Value| {
            let samples = json!({ "cases": [case] });
            let clock = crate::measure::clock::known_tsc(1e9);
            let doc = document(&GUEST, &run, &plan, &samples, crate::measure::harness::HarnessConfig::tiny(), clock);
            crate::data::results::check::check(&doc).unwrap();
            doc.case("syscall.getpid", |_| true).unwrap().clone()
        };
        for bad in [json!([-5.5, -5.5, -5.5]), json!([5.4e280, 5.4e280, 5.4e280]), json!([100.0, 0.0, 100.0])] {
            let r = one(json!({"benchmark": "syscall.getpid", "status": "ok", "inner": 1, "per_op_cycles": bad}));
            assert_eq!(r.status, CaseStatus::Failed, "{bad}");
            assert!(r.reason.as_deref().unwrap().contains("per_op_cycles"), "{:?}", r.reason);
        }
        let r = one(json!({"benchmark": "syscall.getpid", "status": "failed", "reason": "x".repeat(200_000)}));
        assert_eq!(r.reason.as_deref().unwrap().chars().count(), crate::data::results::check::MAX_TEXT);
    }
}
