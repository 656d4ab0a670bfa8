//! Every registered benchmark runs once, in a tiny-iteration mode, through the
//! same runner `oscycles run` uses; and a run document survives a JSON round trip.

use oscycles::data::documents::{self, RunWriter};
use oscycles::data::results::{CaseStatus, RunStatus};
use oscycles::measure::clock;
use oscycles::measure::harness::HarnessConfig;
use oscycles::measure::placement::{self, Policy};
use oscycles::run::execute::{self, Execution, Mode};
use oscycles::run::isolation::Isolation;
use oscycles::run::plan::{self, PlannedCase};
use oscycles::run::prepared;
use oscycles::run::registry;
use oscycles::run::spec::RunSpec;
use std::time::Duration;

/// An in-process execution whose cases lay out their files in `scratch`
/// (a private directory of the test's); small buffers: the tests check
/// mechanics, and CI is a small machine.
fn execution(scratch: &tempfile::TempDir) -> Execution {
    let cpus = placement::allowed_cpus().into_iter().take(2).collect();
    let mut ex = Execution::in_process(cpus, HarnessConfig::tiny(), scratch.path().to_path_buf());
    ex.spec.mem_bytes = Some(64 << 20);
    ex
}

fn pinned() -> Mode {
    Mode::of(Isolation::Pinned)
}

#[test]
fn every_registered_benchmark_runs_once_in_tiny_mode() {
    let scratch = tempfile::tempdir().unwrap();
    let ex = execution(&scratch);
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let all: Vec<&'static registry::Suite> = registry::SUITES.iter().collect();
    let full = plan::plan(&all, None);
    for b in registry::benchmarks() {
        assert!(full.iter().any(|p| p.benchmark.id == b.id), "{} is in no suite's plan", b.id);
    }
    // At the test scale, explicitly (FWQ 100 and 1,000 quanta, 50 control periods,
    // 30 ms net and blk points, a 4 MiB file); a benchmark that scale leaves
    // out (the memory bandwidths, full only) with its full cases at the
    // test scale's harness.
    let mut plan = plan::plan_at(&all, None, Some(registry::Scale::Test));
    let left_out: Vec<_> = full.into_iter().filter(|f| !plan.iter().any(|p| p.benchmark.id == f.benchmark.id)).collect();
    plan.extend(left_out.into_iter().map(|p| PlannedCase { scale: registry::Scale::Test, ..p }));
    for p in &plan {
        let r = execute::run_case(p, &ex, &clock, pinned());
        // A benchmark this host cannot run says why, and its cases are n/a.
        if let Err(why) = p.benchmark.supported() {
            assert!(!why.is_empty(), "{}", p.benchmark.id);
            assert_eq!(r.status, CaseStatus::NotApplicable, "{} is unsupported ({why}) yet {:?}", p.label(), r.status);
            continue;
        }
        match r.status {
            CaseStatus::Ok => {
                assert!(!r.metrics.is_empty(), "{}", p.label());
                for m in &r.metrics {
                    assert!(m.summary.n >= 3, "{}: {} samples", p.label(), m.summary.n);
                    // Differences may be zero or negative: a switch after subtracting the ring overhead,
                    // a control loop waking exactly at (or before) its deadline.
                    let signed = ["switch", "deviation"].contains(&m.name.as_str());
                    assert!(m.summary.min > 0.0 || (signed && m.summary.min.is_finite()), "{}: {} must be positive", p.label(), m.name);
                }
                assert!(r.placement.is_some(), "{}", p.label());
            }
            CaseStatus::NotApplicable => assert!(r.reason.as_deref().is_some_and(|s| !s.is_empty()), "{}", p.label()),
            CaseStatus::Failed => panic!("{} failed: {:?}", p.label(), r.reason),
        }
    }
}

#[test]
fn a_run_document_survives_a_json_round_trip() {
    let scratch = tempfile::tempdir().unwrap();
    let ex = execution(&scratch);
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("results");
    let spec = RunSpec { suites: vec!["quick".into()], ..RunSpec::default() };
    let doc = spec.document(&["native"], 0, ex.cpus.clone(), ex.quick, clock);
    let mut w = RunWriter::create(&dir, doc).unwrap();
    let quick = registry::find_suite("quick").unwrap();
    let plan: Vec<_> = plan::plan(&[quick], Some(&["syscall.getpid".into(), "ipc.spin".into()]));
    w.doc.planned_cases = plan.len();
    let status = prepared::execute(&plan, &ex, &mut w, &mut oscycles::run::progress::Quiet).unwrap();
    assert_eq!(status, RunStatus::Complete);
    let back = documents::load(w.path()).unwrap();
    assert_eq!(back, w.doc);
    assert!(back.results.iter().any(|r| r.status == CaseStatus::NotApplicable), "spin same-core is n/a");
}

#[test]
fn page_faults_are_not_measured_where_mlockall_would_prefault_them() {
    let scratch = tempfile::tempdir().unwrap();
    let ex = execution(&scratch);
    let locked = Mode { pin: true, policy: Policy::Other, memory_locked: true };
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let quick = registry::find_suite("quick").unwrap();
    for p in plan::plan(&[quick], Some(&["pagefault.anon".into(), "pagefault.file".into()])) {
        let r = execute::run_case(&p, &ex, &clock, locked);
        assert_eq!(r.status, CaseStatus::NotApplicable, "{}", p.label());
        assert!(r.reason.unwrap().contains("mlockall"));
    }
}

#[test]
fn the_packet_stream_sweep_counts_fewer_notifications_than_packets_when_batching() {
    let scratch = tempfile::tempdir().unwrap();
    let ex = execution(&scratch);
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let suite = registry::find_suite("packet-stream").unwrap();
    let plan = plan::plan(&[suite], None);
    let batched: Vec<_> = plan.iter().filter(|p| p.params["mode"] == "stream" && p.params["batch"].as_u64().unwrap() > 1).take(6).collect();
    assert!(!batched.is_empty());
    for p in batched {
        let r = execute::run_case(p, &ex, &clock, pinned());
        assert_eq!(r.status, CaseStatus::Ok, "{}: {:?}", p.label(), r.reason);
        let packets = r.details["packets"].as_u64().unwrap();
        let notifications = r.details["notifications"].as_u64().unwrap();
        assert!(packets > 0);
        assert!(notifications < packets, "{}: {notifications} notifications for {packets} packets", p.label());
    }
}

#[test]
fn a_family_runs_small_through_the_test_scale_whatever_its_batches() {
    let scratch = tempfile::tempdir().unwrap();
    // Batches as a full run has them: the size comes from the scale alone.
    let ex = Execution { quick: HarnessConfig { batches: 15, ..HarnessConfig::tiny() }, ..execution(&scratch) };
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let suites = [registry::find_suite("fwq").unwrap(), registry::find_suite("control-loop").unwrap()];
    let only: Vec<String> = ["noise.fwq", "control.busy-tsc"].map(String::from).to_vec();
    let plan = plan::plan_at(&suites, Some(&only), Some(registry::Scale::Test));
    let labels: Vec<String> = plan.iter().map(|p| p.label()).collect();
    assert_eq!(labels, ["noise.fwq quantum_us=1400 samples=100", "noise.fwq quantum_us=14 samples=1000", "control.busy-tsc samples=50"]);
    for p in &plan {
        let r = execute::run_case(p, &ex, &clock, pinned());
        assert_eq!(r.status, CaseStatus::Ok, "{}: {:?}", p.label(), r.reason);
        let n = r.metrics[0].summary.n as u64;
        let samples = p.params["samples"].as_u64().unwrap();
        assert!(n <= samples && n + 1 >= samples, "{}: {n} samples measured", p.label());
    }
}

#[test]
fn fwq_stops_at_the_cases_timeout_and_keeps_what_it_measured() {
    let scratch = tempfile::tempdir().unwrap();
    let mut ex = execution(&scratch);
    ex.spec.timeout_s = 1;
    let clock = clock::calibrate_tsc(1, Duration::from_millis(10));
    let only = vec!["noise.fwq".to_string()];
    let plan = plan::plan_at(&[registry::find_suite("fwq").unwrap()], Some(&only), Some(registry::Scale::Test));
    // The test scale's case of the slides' quantum, 2,000 quanta long (2.8 s) against a 1 s timeout.
    let mut long = plan.iter().find(|p| p.params["quantum_us"] == 1400).unwrap().clone();
    long.params.insert("samples".into(), serde_json::json!(2000));
    let r = execute::run_case(&long, &ex, &clock, pinned());
    assert_eq!(r.status, CaseStatus::Ok, "what was measured stands: {:?}", r.reason);
    let n = r.metrics[0].summary.n as u64;
    assert!((1..2000).contains(&n), "{n} of 2000 quanta in 1 s");
    let cut = r.details["cut"].as_str().unwrap();
    assert!(cut.contains(&format!("{n} of 2000 quanta")) && cut.contains("--timeout (1 s)"), "{cut}");
    // A case that fits its time says nothing of a cut.
    let short = plan.iter().find(|p| p.params["quantum_us"] == 14).unwrap();
    let r = execute::run_case(short, &ex, &clock, pinned());
    assert!(r.status == CaseStatus::Ok && !r.details.contains_key("cut"), "{:?}", r.reason);
}

#[test]
fn a_default_run_measures_and_records_the_published_sizes() {
    use oscycles::families::bench::{blk, net};
    let spec = RunSpec { suites: ["fwq", "control-loop", "net", "blk"].map(String::from).to_vec(), ..RunSpec::default() };
    assert_eq!(spec.scale, None, "no --scale: each suite at its own");
    let clock = oscycles::measure::clock::known_tsc(3e9);
    let doc = spec.document(&["native"], 0, vec![0], HarnessConfig::tiny(), clock.clone());
    assert_eq!(doc.settings.scale.as_deref(), Some("full"));
    let suites: Vec<&'static registry::Suite> = spec.suites.iter().map(|s| registry::find_suite(s).unwrap()).collect();
    let plan = plan::plan_at(&suites, None, spec.scale);
    let samples =
        |id: &str| -> Vec<u64> { plan.iter().filter(|p| p.benchmark.id == id).map(|p| p.params["samples"].as_u64().unwrap()).collect() };
    assert_eq!(samples("noise.fwq"), [100_000, 100_000]);
    assert_eq!(plan.iter().find(|p| p.benchmark.id == "noise.fwq").unwrap().params["quantum_us"], 1400);
    assert_eq!(samples("control.nanosleep"), [3_000]);
    assert!(plan.iter().all(|p| p.scale == registry::Scale::Full));
    assert_eq!(net::family::point_ms(spec.point_ms, registry::Scale::Full), (200, 1000));
    assert_eq!(blk::family::file_bytes(registry::Scale::Full), 128 << 20);
    // The quick suite records its own scale, and --scale the one asked for.
    let quick = RunSpec::default();
    assert_eq!(quick.document(&["native"], 0, vec![0], HarnessConfig::tiny(), clock.clone()).settings.scale.as_deref(), Some("quick"));
    let test = RunSpec { scale: Some(registry::Scale::Test), ..spec };
    assert_eq!(test.document(&["native"], 0, vec![0], HarnessConfig::tiny(), clock).settings.scale.as_deref(), Some("test"));
}

/// The guide (docs/src) has a page for every environment and every family
/// the registry has, which names it (`name`, as `--env` and `list` spell
/// it): a new one added without its page fails here.
#[test]
fn the_guide_names_every_environment_and_family_the_registry_has() {
    use oscycles::base::named::Named;
    use oscycles::run::env::environment::Env;
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src");
    let pages = |dir: &str| -> String {
        let mut all = String::new();
        for e in std::fs::read_dir(docs.join(dir)).unwrap() {
            all += &std::fs::read_to_string(e.unwrap().path()).unwrap();
        }
        all
    };
    let (envs, families) = (pages("environments"), pages("families"));
    // `name`, `--env name` or `--suite name` (a code span), or a page's title.
    let names = |text: &str, n: &str| {
        let spans = [format!("`{n}`"), format!("# {n}:"), format!("# {n} ")];
        let flags = ["--env ", "--suite "].map(|f| format!("{f}{n}"));
        spans.iter().any(|s| text.contains(s.as_str()))
            || flags.iter().any(|f| text.match_indices(f.as_str()).any(|(i, _)| text[i + f.len()..].starts_with(['`', ' ', ','])))
    };
    let unnamed = |text: &str, all: Vec<&'static str>| all.into_iter().filter(|n| !names(text, n)).collect::<Vec<_>>();
    let missing = unnamed(&envs, Env::ALL.iter().map(|e| e.name()).collect());
    assert!(missing.is_empty(), "environments no page of docs/src/environments/ names: {missing:?}");
    let missing = unnamed(&families, registry::FAMILIES.iter().map(|f| f.name()).collect());
    assert!(missing.is_empty(), "families no page of docs/src/families/ names: {missing:?}");
    // Each of those pages is in the guide's table of contents.
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).unwrap();
    for dir in ["environments", "families"] {
        for e in std::fs::read_dir(docs.join(dir)).unwrap() {
            let page = format!("({dir}/{})", e.unwrap().file_name().to_string_lossy());
            assert!(summary.contains(&page), "docs/src/SUMMARY.md does not list {page}");
        }
    }
}
