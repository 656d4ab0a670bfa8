//! The run document of a guest program's answer (the message `samples`:
//! `{"cases": [...]}`, each case `{"benchmark", "params"?, "status"}`, with
//! its samples when `ok` (`crate::families::bench::toolkit::guest`) and
//! `reason` when `n/a` or `failed`; or `{"error": ...}` when the program
//! could not make one): the plan's cases in order, each measured (the
//! metrics its family says), failed, or n/a with the reason. A planned
//! case the program does not answer is n/a with the environment's reason.

use crate::base::named::Named;
use crate::data::results::{CaseResult, CaseStatus, Condition, RunDoc, RunStatus, kernel, now_rfc3339};
use crate::families::bench::CaseError;
use crate::families::bench::toolkit::guest::{GuestCase, GuestMeasured};
use crate::measure::clock::ClockInfo;
use crate::measure::harness::HarnessConfig;
use crate::measure::marks::Marked;
use crate::run::plan::{PlannedCase, not_measured};
use crate::run::spec::RunSpec;
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

/// The guest a program answers for, as its document names it.
pub struct Guest<'a> {
    /// The environment's name (the document's).
    pub env: &'static str,
    /// The system, as reasons name it ("Hermit", "seL4").
    pub system: &'static str,
    /// Why a case the program did not answer is not measured there.
    pub absent: &'a dyn Fn(&PlannedCase) -> String,
    /// The scheduling policy the placement reports.
    pub policy: &'static str,
    /// The guest's CPUs.
    pub cpus: u32,
}

/// The figures of an independent check program's line on the console (the
/// first with `marker`, read from it): its `key=number` words, or why there
/// is none.
pub fn check_line(console: &str, marker: &str) -> Value {
    let Some(line) = console.lines().find_map(|l| l.find(marker).map(|i| &l[i..])) else {
        return json!({ "failed": format!("no figures; last output: {}", crate::run::env::output::tail(console)) });
    };
    let mut v = Map::new();
    for (k, x) in line.split_whitespace().filter_map(|w| w.split_once('=')) {
        let x = x.trim();
        if let Ok(n) = x.parse::<u64>() {
            v.insert(k.into(), json!(n));
        } else if let Ok(f) = x.parse::<f64>() {
            v.insert(k.into(), json!(f));
        }
    }
    Value::Object(v)
}

/// The run document of the program's samples: the plan's cases in order,
/// each measured, failed, or n/a with the reason.
pub fn document(g: &Guest, run: &RunSpec, plan: &[PlannedCase], samples: &Value, h: HarnessConfig, clock: ClockInfo) -> RunDoc {
    let mut doc = run.document(&[g.env], plan.len(), vec![0], h, clock.clone());
    let condition = Condition {
        load: run.loads.first().map_or("idle", |l| l.name()).into(),
        isolation: run.isolations.first().map_or("none", |i| i.name()).into(),
        preempt: None,
        facts: Map::new(),
    };
    let cases = samples.get("cases").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    // A program that could not make its answer says why instead.
    let error = samples.get("error").and_then(Value::as_str).map(|e| crate::run::env::frame::plain(e, 300));
    for p in plan {
        let mut r = not_measured(p, CaseStatus::NotApplicable, &(g.absent)(p), condition.clone());
        let case = cases.iter().find(|c| c.get("benchmark").and_then(Value::as_str) == Some(p.benchmark.id.as_str()) && same_params(p, c));
        match (case, &error) {
            (Some(c), _) => answered(g, p, c, &clock, &mut r),
            (None, Some(e)) => (r.status, r.reason) = (CaseStatus::Failed, Some(format!("{} in {}: {e}", p.benchmark.id, g.system))),
            (None, None) => {}
        }
        doc.results.push(r);
    }
    doc.settings.cpus = vec![0];
    doc.finished_at = Some(now_rfc3339());
    doc.status = RunStatus::Complete;
    doc
}

/// The result `r` of planned case `p` as the program answered it (`c`).
fn answered(g: &Guest, p: &PlannedCase, c: &Value, clock: &ClockInfo, r: &mut CaseResult) {
    let reason = |or: &str| crate::run::env::frame::plain(c.get("reason").and_then(Value::as_str).unwrap_or(or), 300);
    let measured = match c.get("status").and_then(Value::as_str) {
        Some("ok") => {
            let case = GuestCase { params: &p.params, sent: c, clock, system: g.system, cpus: g.cpus };
            p.benchmark.guest_metrics(&case)
        }
        Some("failed") => Err(CaseError::Failed(reason("failed"))),
        Some("n/a") => Err(CaseError::NotApplicable(format!("{} in {}: {}", p.benchmark.id, g.system, reason("not there")))),
        other => Err(CaseError::Failed(format!("the program answered {} with status {other:?}", p.benchmark.id))),
    };
    match measured {
        Ok(GuestMeasured { metrics, details, threads }) => {
            (r.status, r.reason, r.metrics, r.details) = (CaseStatus::Ok, None, metrics, details);
            r.placement = Some(placement(g, threads));
            match marked(c) {
                Ok(m) => r.marked = m,
                Err(why) => {
                    r.details.insert(kernel::MISSING.into(), format!("not counted: {why}").into());
                }
            }
        }
        Err(CaseError::NotApplicable(why)) => (r.status, r.reason) = (CaseStatus::NotApplicable, Some(why)),
        Err(CaseError::Failed(why)) => (r.status, r.reason) = (CaseStatus::Failed, Some(why)),
        Err(CaseError::Interrupted) => (r.status, r.reason) = (CaseStatus::Failed, Some("interrupted".into())),
    }
}

/// Which of the kernel counters' windows the timed batches of case `c`
/// are, where the program marked them (`"windows": [first, count]`, with
/// mark=1; None where it did not): one window a batch, in order, the count
/// each batch read beside it (its `batch_cycles`); an error where its
/// batches made other windows than one each (a batch of several timed
/// stretches). What the windows hold is checked against the batches when
/// they are read ([`crate::run::env::kcount`]).
fn marked(c: &Value) -> Result<Option<Marked>, String> {
    let Some(w) = c.get("windows") else { return Ok(None) };
    let numbers = |v: Option<&Value>| v.and_then(Value::as_array).map(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>());
    let (Some(Some(w)), Some(Some(batches))) = (numbers(Some(w)), numbers(c.get("batch_cycles"))) else {
        return Err("the program's windows or batches are not counts".into());
    };
    let inner = c.get("inner").and_then(Value::as_u64).unwrap_or(0);
    match w[..] {
        [first, n] if n == batches.len() as u64 && n > 0 && inner > 0 => Ok(Some(Marked { first, inner, overhead: 0, batches })),
        [_, n] => Err(format!("its {} timed batches made {n} windows, not one each", batches.len())),
        _ => Err("the program's windows are not [first, count]".into()),
    }
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

/// Where the program measures: its `threads` on the one CPU.
fn placement(g: &Guest, threads: usize) -> crate::measure::placement::Placement {
    crate::measure::placement::Placement {
        actors: if threads > 1 { "threads" } else { "1 thread" }.into(),
        cpus: vec![0; threads.max(1)],
        observed_cpus: vec![],
        policy: g.policy.into(),
        memory_locked: false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::data::results::{UNIT_CYCLES, UNIT_INSTRUCTIONS};
    use crate::families::bench::schema;

    pub fn spec(suites: &[&str]) -> RunSpec {
        RunSpec { suites: suites.iter().map(|s| s.to_string()).collect(), ..Default::default() }
    }

    /// The plan of `run`, as the run layer makes a part's.
    pub fn plan(run: &RunSpec) -> Vec<PlannedCase> {
        crate::run::prepared::plan_part(run).unwrap()
    }

    pub const GUEST: Guest =
        Guest { env: "test", system: "Test", absent: &|p| format!("{} in Test: absent", p.benchmark.id), policy: "its own", cpus: 1 };

    #[test]
    fn whole_batches_are_divided_and_instructions_have_no_ns_twin() {
        let run = spec(&["syscall"]);
        let plan = plan(&run);
        let samples = json!({"cases": [
            {"benchmark": "syscall.getpid", "status": "ok", "inner": 1000, "batch_cycles": [363000, 364000, 365000]},
        ]});
        let clock = crate::measure::clock::known_tsc(1e9);
        let doc = document(&GUEST, &run, &plan, &samples, HarnessConfig::tiny(), clock.clone().counting(true));
        let m = doc.case("syscall.getpid", |_| true).unwrap().metric(schema::syscall::PER_CALL).unwrap();
        assert_eq!((m.summary.median, m.unit.as_str(), m.ns.is_none()), (364.0, UNIT_INSTRUCTIONS, true));
        let doc = document(&GUEST, &run, &plan, &samples, HarnessConfig::tiny(), clock);
        let m = doc.case("syscall.getpid", |_| true).unwrap().metric(schema::syscall::PER_CALL).unwrap();
        assert_eq!((m.unit.as_str(), m.ns.map(|s| s.median)), (UNIT_CYCLES, Some(364.0)));
        let other = doc.results.iter().find(|r| r.benchmark != "syscall.getpid").unwrap();
        assert_eq!(other.status, CaseStatus::NotApplicable);
        assert!(other.reason.as_deref().unwrap().ends_with("in Test: absent"), "{:?}", other.reason);
        let none = json!({"cases": [{"benchmark": "syscall.getpid", "status": "ok", "inner": 0, "batch_cycles": [1]}]});
        let doc = document(&GUEST, &run, &plan, &none, HarnessConfig::tiny(), crate::measure::clock::known_tsc(1e9));
        let r = doc.case("syscall.getpid", |_| true).unwrap();
        assert_eq!((r.status, r.reason.as_deref()), (CaseStatus::Failed, Some("the program sent no samples")), "no inner: no samples");
    }

    /// A program that could not make its answer (its document outgrew its
    /// buffer) fails the cases with its reason; a status it should not
    /// send fails its case; neither is a silent n/a.
    #[test]
    fn a_programs_error_and_an_unknown_status_fail_with_the_reason() {
        let run = spec(&["syscall"]);
        let plan = plan(&run);
        let clock = crate::measure::clock::known_tsc(1e9);
        let outgrown = json!({"program": "oscycles-mach", "error": "the document outgrew its buffer", "cases": []});
        let doc = document(&GUEST, &run, &plan, &outgrown, HarnessConfig::tiny(), clock.clone());
        assert!(!doc.results.is_empty());
        for r in &doc.results {
            assert_eq!(r.status, CaseStatus::Failed, "{r:?}");
            assert!(r.reason.as_deref().unwrap().ends_with("in Test: the document outgrew its buffer"), "{:?}", r.reason);
        }
        let odd = json!({"cases": [{"benchmark": "syscall.getpid", "status": "overflowed"}]});
        let doc = document(&GUEST, &run, &plan, &odd, HarnessConfig::tiny(), clock);
        let r = doc.case("syscall.getpid", |_| true).unwrap();
        assert_eq!(r.status, CaseStatus::Failed);
        assert!(r.reason.as_deref().unwrap().contains("\"overflowed\""), "{:?}", r.reason);
    }

    #[test]
    fn a_guests_nonsense_costs_are_refused_and_its_reasons_bounded() {
        // Issue 58, items 6 and 9: what a seL4 or Mach guest sends.
        let run = spec(&["syscall"]);
        let plan = plan(&run);
        let one = |case: Value| {
            let samples = json!({ "cases": [case] });
            let clock = crate::measure::clock::known_tsc(1e9);
            let doc = document(&GUEST, &run, &plan, &samples, HarnessConfig::tiny(), clock);
            crate::data::results::check::check(&doc).unwrap();
            doc.case("syscall.getpid", |_| true).unwrap().clone()
        };
        for bad in [json!([-5.5, -5.5, -5.5]), json!([5.4e280, 5.4e280, 5.4e280]), json!([100.0, 0.0, 100.0])] {
            let r = one(json!({"benchmark": "syscall.getpid", "status": "ok", "inner": 1, "per_op_cycles": bad}));
            assert_eq!(r.status, CaseStatus::Failed, "{bad}");
            assert!(r.reason.as_deref().unwrap().contains("per_op_cycles"), "{:?}", r.reason);
        }
        let r = one(json!({"benchmark": "syscall.getpid", "status": "failed", "reason": "x".repeat(200_000)}));
        assert!(r.reason.as_deref().unwrap().chars().count() <= crate::data::results::check::MAX_TEXT, "{:?}", r.reason.map(|r| r.len()));
    }

    /// A case the program marked (mark=1) says which windows its batches
    /// are; one whose batches made other windows than one each is not
    /// counted, saying why; an unmarked one has neither.
    #[test]
    fn a_marked_cases_windows_become_its_marked_batches() {
        let run = spec(&["syscall"]);
        let plan = plan(&run);
        let clock = crate::measure::clock::known_tsc(1e9).counting(true);
        let one = |case: Value| {
            let doc = document(&GUEST, &run, &plan, &json!({ "cases": [case] }), HarnessConfig::tiny(), clock.clone());
            doc.case("syscall.getpid", |_| true).unwrap().clone()
        };
        let case = |windows: Value| json!({"benchmark": "syscall.getpid", "status": "ok", "inner": 100, "batch_cycles": [3630, 3640], "windows": windows});
        let r = one(case(json!([5, 2])));
        assert_eq!(r.marked, Some(Marked { first: 5, inner: 100, overhead: 0, batches: vec![3630, 3640] }));
        assert!(r.details.get(kernel::MISSING).is_none());
        for (bad, why) in
            [(json!([5, 512]), "2 timed batches made 512 windows"), (json!([5]), "not [first, count]"), (json!("x"), "not counts")]
        {
            let r = one(case(bad.clone()));
            assert_eq!((r.status, r.marked.as_ref()), (CaseStatus::Ok, None), "{bad}");
            assert!(r.details[kernel::MISSING].as_str().unwrap().contains(why), "{bad}: {:?}", r.details);
        }
        let unmarked = one(json!({"benchmark": "syscall.getpid", "status": "ok", "inner": 100, "batch_cycles": [3630, 3640]}));
        assert!(unmarked.marked.is_none() && unmarked.details.get(kernel::MISSING).is_none());
    }

    #[test]
    fn a_check_line_is_read_from_within_a_console_line() {
        let v = check_line("[0.1] boot\nstart /x: sel4-check round_trips=100000 total=51509000 rate=1.5\n", "sel4-check ");
        assert_eq!(v, json!({"round_trips": 100000, "total": 51509000, "rate": 1.5}));
        assert!(check_line("nothing", "sel4-check ").get("failed").is_some());
    }
}
