//! Doubt as the binary reports it: rounds in fresh processes with recorded
//! orders, raw samples and intervals in the document, verdicts and the
//! regression gate of `compare`, baselines, version 1 documents, doctor.
//! Mechanics only: the numbers compared here are synthetic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;
use common::{only_json, tempdir};

fn oscycles(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oscycles")).args(args).output().expect("the binary runs")
}

fn read(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn rounds_run_in_fresh_processes_in_recorded_orders_and_every_cell_has_an_interval() {
    let d = tempdir("rounds");
    let out = common::tiny_run(&d, 100, &["--rounds", "3", "--seed", "42"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = read(&only_json(&d));
    assert_eq!(doc["schema_version"], oscycles::data::results::SCHEMA_VERSION);
    assert_eq!(doc["settings"]["rounds"], 3);
    let log = doc["settings"]["round_log"].as_array().unwrap();
    assert_eq!(log.len(), 3);
    let pids: std::collections::BTreeSet<u64> = log.iter().map(|r| r["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 3, "each round in a process of its own: {log:?}");
    assert!(!pids.contains(&(std::process::id() as u64)));
    for r in log {
        assert_eq!(r["status"], "complete");
        let mut order: Vec<&str> = r["order"].as_array().unwrap().iter().map(|o| o.as_str().unwrap()).collect();
        order.sort();
        assert_eq!(order.len(), 7, "every syscall case ran in every round");
    }
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 7, "one cell per case, rounds merged");
    for r in results {
        let m = &r["metrics"][0];
        let samples = m["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 3, "{}: one list per round", r["benchmark"]);
        assert!(samples.iter().all(|s| s.as_array().unwrap().len() == 2));
        let pooled: Vec<f64> = samples.iter().flat_map(|s| s.as_array().unwrap().iter().map(|v| v.as_f64().unwrap())).collect();
        assert_eq!(m["summary"]["n"], 6, "the summary is over every round's batches");
        let e = &m["estimate"];
        assert_eq!(e["rounds"], 3);
        let (lo, hi, med) = (e["interval"]["lo"].as_f64().unwrap(), e["interval"]["hi"].as_f64().unwrap(), e["median"].as_f64().unwrap());
        assert!(lo <= med && med <= hi, "{e}");
        let (min, max) = pooled.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(min <= med && med <= max);
    }
    // The same seed gives the same orders.
    let d2 = tempdir("rounds-again");
    let out = common::tiny_run(&d2, 100, &["--rounds", "3", "--seed", "42"]);
    assert!(out.status.success());
    let again = read(&only_json(&d2));
    let orders =
        |d: &serde_json::Value| d["settings"]["round_log"].as_array().unwrap().iter().map(|r| r["order"].clone()).collect::<Vec<_>>();
    assert_eq!(orders(&doc), orders(&again));
    let _ = std::fs::remove_dir_all(d);
    let _ = std::fs::remove_dir_all(d2);
}

/// The counting pass runs in the first round only, and its counts stay in
/// the merged cells; every round records what it measured per family and
/// what its process spent besides, and `show --time` adds it up.
#[test]
fn later_rounds_do_not_count_and_the_run_records_where_its_time_went() {
    let d = tempdir("rounds-time");
    let out = common::tiny_run(&d, 100, &["--rounds", "3", "--seed", "7"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let path = only_json(&d);
    let doc = read(&path);
    let log = doc["settings"]["round_log"].as_array().unwrap();
    let counted: Vec<bool> = log.iter().map(|r| r["counted"].as_bool().unwrap()).collect();
    assert_eq!(counted, [true, false, false], "{log:?}");
    for r in log {
        let fam = &r["families"]["syscall"];
        assert_eq!(fam["cases"], 7, "{r}");
        assert!(r["process_s"].as_f64().unwrap() > 0.0, "{r}");
        let spent = &r["spent"];
        // A round's own document is written at its start and end, and at most every second between.
        assert!(spent["writes"].as_u64().unwrap() >= 2, "{spent}");
        // The first round counts its cases once; the later ones none.
        let counting = spent["counted"].as_u64().unwrap();
        assert_eq!(counting > 0, r["round"] == 0, "{spent}");
    }
    for r in doc["results"].as_array().unwrap() {
        assert!(r["inners"].as_array().is_some_and(|i| !i.is_empty()), "round 1's inner counts stay: {r}");
        let c = &r["counters"];
        assert!(c.is_object(), "the counts of round 1 survive the merge: {r}");
        if let Some(cs) = c["events"].get("context_switches") {
            assert_eq!(cs["samples"].as_array().map(Vec::len), Some(1), "counted in one round: {cs}");
        }
    }
    assert!(doc["settings"]["spent"]["merges_s"].as_f64().is_some(), "{}", doc["settings"]);
    let shown = oscycles(&["show", "--time", path.to_str().unwrap()]);
    assert!(shown.status.success());
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("where the time went"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("syscall ") && l.contains(" 7 ")), "{text}");
    let counts = oscycles(&["show", "--counters", path.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&counts.stdout).contains("counting pass of round 1,"), "{}", String::from_utf8_lossy(&counts.stdout));
    let _ = std::fs::remove_dir_all(d);
}

/// A later round's process reads its spec from stdin (however long: here
/// with 5,000 cases' inner counts, past the 128 KiB an argument may hold)
/// and starts each case's calibration at the inner count given for it;
/// its result notes the count it settled on.
#[test]
fn a_later_round_calibrates_from_the_count_its_first_round_settled_on() {
    use std::io::Write;
    let d = tempdir("round-inners");
    let mut spec = oscycles::run::spec::RunSpec {
        suites: vec!["syscall".into()],
        benchmarks: Some(vec!["syscall.getpid".into()]),
        batches: Some(2),
        batch_ms: Some(5.0),
        no_counters: true,
        round: Some(1),
        quiet: true,
        results: d.clone(),
        ..Default::default()
    };
    spec.inners = (0..5000).map(|i| (format!("memcpy.libc bytes={i}"), vec![i])).collect();
    // Used unless the warm-up call predicts a batch of more than 16
    // targets: 16 x 5 ms / 64, over 1.25 ms for one getpid. With 2048 and
    // 0.5 ms (4 us) a cold getpid on a loaded machine crossed it, and the
    // doubling rightly started at 1.
    spec.inners.insert("syscall.getpid".into(), vec![64]);
    let json = serde_json::to_string(&spec).unwrap();
    assert!(json.len() > 128 << 10, "{}", json.len());
    let mut child = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["__round", "--spec", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(json.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = read(&only_json(&d));
    let r = &doc["results"][0];
    assert_eq!(r["benchmark"], "syscall.getpid");
    assert_eq!(r["details"]["calibration"][0][0], 64, "the doubling started at the given count: {r}");
    assert_eq!(r["inners"], serde_json::json!([r["details"]["inner"]]), "the count it settled on: {r}");
    let _ = std::fs::remove_dir_all(d);
}

/// The fixture (a version 2 copy), its first case's cycles replaced by
/// `rounds` rounds of 5 batches around `center`; written to `path`.
fn synthetic(path: &Path, id: &str, center: f64, rounds: usize) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap()).unwrap();
    v["id"] = serde_json::json!(id);
    v["schema_version"] = serde_json::json!(2);
    let samples: Vec<Vec<f64>> =
        (0..rounds).map(|k| (0..5).map(|b| center * (1.0 + 0.003 * (((k * 5 + b) * 7) % 11) as f64)).collect()).collect();
    let mut pooled: Vec<f64> = samples.iter().flatten().copied().collect();
    pooled.sort_by(f64::total_cmp);
    let m = &mut v["results"][0]["metrics"][0];
    m["samples"] = serde_json::json!(samples);
    m["summary"]["median"] = serde_json::json!(pooled[pooled.len() / 2]);
    // Ordered, as every document must be (min <= median <= max).
    m["summary"]["min"] = serde_json::json!(pooled[0]);
    m["summary"]["max"] = serde_json::json!(pooled[pooled.len() - 1]);
    std::fs::write(path, serde_json::to_string(&v).unwrap()).unwrap();
    path.to_path_buf()
}

#[test]
fn compare_gives_verdicts_and_the_gate_fails_only_on_a_significant_regression() {
    let d = tempdir("verdicts");
    let a = synthetic(&d.join("a.json"), "run-a", 1000.0, 6);
    let a2 = synthetic(&d.join("a2.json"), "run-a2", 1000.0, 6);
    let b = synthetic(&d.join("b.json"), "run-b", 1300.0, 6);
    let few = synthetic(&d.join("few.json"), "run-few", 1300.0, 2);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let out = oscycles(&["compare", &s(&a), &s(&b)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    let getpid = text.lines().find(|l| l.starts_with("syscall.getpid")).unwrap();
    assert!(getpid.contains("slower"), "{getpid}");
    // The other cases have no raw samples (version 1 numbers): unsure, with a ratio.
    assert!(text.contains("unsure"), "{text}");
    let few_out = oscycles(&["compare", &s(&a), &s(&few)]);
    let line = String::from_utf8_lossy(&few_out.stdout).lines().find(|l| l.starts_with("syscall.getpid")).unwrap().to_string();
    assert!(line.contains("unsure (~5 rounds)"), "{line}");
    // The gate: A/A passes, A/B fails and lists the cell.
    let aa = oscycles(&["compare", &s(&a), &s(&a2), "--fail-above", "5%"]);
    assert_eq!(aa.status.code(), Some(0), "{}", String::from_utf8_lossy(&aa.stdout));
    let ab = oscycles(&["compare", &s(&a), &s(&b), "--fail-above", "5%"]);
    assert_eq!(ab.status.code(), Some(1));
    let ab_text = String::from_utf8_lossy(&ab.stdout);
    assert!(ab_text.contains("FAIL") && ab_text.contains("  syscall.getpid"), "{ab_text}");
    // A 30% regression does not fail a 50% gate.
    assert_eq!(oscycles(&["compare", &s(&a), &s(&b), "--fail-above", "50%"]).status.code(), Some(0));
    // Baselines: two runs pooled, then the gate against them.
    let res = d.join("res");
    let saved = oscycles(&["baseline", "save", "main", &s(&a), &s(&a2), "--results", &s(&res)]);
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    assert!(String::from_utf8_lossy(&saved.stdout).contains("2 runs"));
    let base = read(&res.join("baselines/main.json"));
    assert_eq!(base["results"][0]["metrics"][0]["samples"].as_array().unwrap().len(), 12, "both runs' rounds");
    assert_eq!(oscycles(&["compare", "--baseline", "main", &s(&a2), "--results", &s(&res), "--fail-above", "5%"]).status.code(), Some(0));
    assert_eq!(oscycles(&["compare", "--baseline", "main", &s(&b), "--results", &s(&res), "--fail-above", "5%"]).status.code(), Some(1));
    assert_eq!(oscycles(&["compare", "--baseline", "nosuch", &s(&b), "--results", &s(&res)]).status.code(), Some(2));
    assert_eq!(oscycles(&["baseline", "save", "../evil", &s(&a), "--results", &s(&res)]).status.code(), Some(2));
    assert_eq!(oscycles(&["compare", &s(&a), &s(&b), "--fail-above", "zero"]).status.code(), Some(2));
    let listed = oscycles(&["baseline", "list", "--results", &s(&res)]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("main"));
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn compare_interleave_measures_both_sides_round_by_round_and_pairs_them() {
    let d = tempdir("interleave");
    let r = d.to_str().unwrap();
    let tiny = "--suite syscall --bench syscall.getpid --batches 2 --batch-ms 0.05 --no-counters";
    let out = oscycles(&["compare", "--interleave", "5", "--a", tiny, "--results", r]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("syscall.getpid") && text.contains("paired rounds"), "{text}");
    // Rounds alternate: A B, then B A.
    let err = String::from_utf8_lossy(&out.stderr);
    let order: Vec<&str> = err.lines().filter(|l| l.starts_with("round ")).map(|l| &l[l.find(": ").unwrap() + 2..][..1]).collect();
    assert_eq!(order, ["A", "B", "B", "A", "A", "B", "B", "A", "A", "B"], "{err}");
    let dir = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir() && p.to_string_lossy().contains("interleaved-"))
        .unwrap();
    for side in ["A", "B"] {
        let doc = read(&dir.join(format!("{side}.json")));
        let getpid = doc["results"].as_array().unwrap().iter().find(|r| r["benchmark"] == "syscall.getpid").unwrap();
        assert_eq!(getpid["metrics"][0]["samples"].as_array().unwrap().len(), 5, "five rounds in order");
    }
    let refused = |args: &[&str], needle: &str| {
        let o = oscycles(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains(needle), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    refused(&["compare", "--interleave", "5", "--a", "--rounds 3", "--results", r], "leave it out of --a and --b");
    refused(&["compare", "--interleave", "3", "--results", r], "--interleave");
    refused(&["compare", "--a", tiny, "x.json", "y.json"], "--interleave");
    refused(&["compare", "--interleave", "5", "--a", "--suite nope", "--results", r], "A's options");
    refused(&["compare", "--interleave", "5", "--a-exe", "/nonexistent/oscycles", "--results", r], "not an oscycles binary");
}

#[test]
fn compare_interleave_auto_runs_pairs_until_settled_or_the_budget_and_later_rounds_take_case_lists() {
    let d = tempdir("interleave-auto");
    let r = d.to_str().unwrap();
    let tiny = "--suite syscall --bench syscall.getpid,syscall.getppid --batches 2 --batch-ms 0.05";
    let out = oscycles(&["compare", "--interleave", "auto", "--budget", "0.25", "--a", tiny, "--results", r]);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{err}");
    assert!(text.contains("confidence sequence") && text.contains(" pairs in "), "{text}");
    // Every pair measures both sides, in either order, each round in a fresh process of this one's.
    let sides: Vec<(usize, &str)> = err
        .lines()
        .filter(|l| l.starts_with("round ") && l.contains("in a fresh process"))
        .map(|l| (l["round ".len()..].split(':').next().unwrap().parse().unwrap(), if l.contains("[A]") { "A" } else { "B" }))
        .collect();
    assert!(sides.len() >= 2 && sides.len().is_multiple_of(2), "{err}");
    for (k, pair) in sides.chunks(2).enumerate() {
        assert!(pair[0].0 == k + 1 && pair[1].0 == k + 1 && pair[0].1 != pair[1].1, "{err}");
    }
    let dir = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir() && p.to_string_lossy().contains("interleaved-"))
        .unwrap();
    let rounds = |side: &str| -> Vec<usize> {
        let doc = read(&dir.join(format!("{side}.json")));
        doc["results"].as_array().unwrap().iter().map(|c| c["metrics"][0]["samples"].as_array().unwrap().len()).collect()
    };
    assert_eq!(rounds("A"), rounds("B"), "every cell has as many rounds on each side");
    // One run held both sides: its document beside theirs, each round's record in it, no case-list files.
    let files: Vec<String> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    let run_path =
        dir.join(files.iter().find(|f| f.ends_with(".json") && *f != "A.json" && *f != "B.json").expect("the run of both sides"));
    let run = read(&run_path);
    assert_eq!(run["settings"]["round_log"].as_array().unwrap().len(), sides.len(), "{files:?}");
    // What a pair cost, part by part, from that run's records (the command names it).
    assert!(text.contains(&format!("oscycles show {} --time", run_path.display())), "{text}");
    let shown = oscycles(&["show", "--time", run_path.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("what a round cost, part by part") && shown.lines().any(|l| l.starts_with("the round ")), "{shown}");
    assert!(files.iter().all(|f| !f.ends_with(".cases")), "{files:?}");
    let refused = |args: &[&str], needle: &str| {
        let o = oscycles(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains(needle), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    refused(&["compare", "--interleave", "5", "--budget", "1", "--a", tiny, "--results", r], "--budget is for --interleave auto");
    refused(&["compare", "--interleave", "auto", "--a", "--cases x", "--results", r], "leave it out of --a and --b");
    refused(&["compare", "--interleave", "often", "--results", r], "nor 'auto'");
    // run --cases: only the cases listed.
    let cases = d.join("cases.txt");
    std::fs::write(&cases, "# a comment\nsyscall.getppid\n").unwrap();
    let out = oscycles(&[
        "run",
        "--suite",
        "syscall",
        "--batches",
        "2",
        "--batch-ms",
        "0.05",
        "--rounds",
        "1",
        "--no-counters",
        "--json",
        "--cases",
        &cases.to_string_lossy(),
        "--results",
        r,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = doc["results"].as_array().unwrap().iter().map(|c| c["benchmark"].as_str().unwrap()).collect();
    assert_eq!(ids, ["syscall.getppid"]);
    std::fs::write(&cases, "nosuch.case\n").unwrap();
    refused(&["run", "--suite", "syscall", "--cases", &cases.to_string_lossy(), "--results", r], "--cases names no case");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn run_of_two_environments_with_rounds_auto_interleaves_them_until_paired_verdicts_or_the_budget() {
    let d = tempdir("env-auto");
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--env", "native,container", "--rounds", "auto", "--budget", "1", "--scale", "test", "--suite", "syscall"])
        .args(["--bench", "syscall.getpid", "--batches", "2", "--batch-ms", "0.05", "--no-counters", "--results"])
        .arg(&d)
        .output()
        .expect("the binary runs");
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{err}");
    let doc = read(&only_json(&d));
    assert_eq!(doc["settings"]["interleaved"], true);
    let outcome = &doc["settings"]["adaptive"][0];
    assert_eq!(outcome["against"], "native", "{outcome}");
    assert!(["settled", "budget"].contains(&outcome["ended"].as_str().unwrap()), "{outcome}");
    let rounds = outcome["rounds"].as_u64().unwrap() as usize;
    assert!(rounds >= 1 && doc["settings"]["rounds"] == rounds, "{outcome}");
    // Round k of both columns before round k+1 of either, in a drawn order.
    let started: Vec<(usize, &str)> = err
        .lines()
        .filter(|l| l.starts_with("round ") && l.contains("in a fresh process"))
        .map(|l| {
            let k: usize = l["round ".len()..].split(':').next().unwrap().parse().unwrap();
            (k, if l.contains("[native]") { "native" } else { "container" })
        })
        .collect();
    assert_eq!(started.len(), 2 * rounds, "{err}");
    for (k, pair) in started.chunks(2).enumerate() {
        assert!(pair[0].0 == k + 1 && pair[1].0 == k + 1 && pair[0].1 != pair[1].1, "{err}");
    }
    // One cell per column, as many rounds in each.
    let cells = doc["results"].as_array().unwrap();
    let envs: Vec<&str> = cells.iter().map(|c| c["environment"].as_str().unwrap()).collect();
    assert_eq!(envs, ["native", "container"]);
    for c in cells {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["metrics"][0]["samples"].as_array().unwrap().len(), rounds, "{}", c["environment"]);
    }
    // The outcome said, and the tables say how the verdicts were reached.
    assert!(err.contains("paired verdicts of every column against native"), "{err}");
    assert!(text.contains("confidence sequence"), "{text}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn version_1_documents_still_load() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
    assert_eq!(read(Path::new(fixture))["schema_version"], 1);
    let out = oscycles(&["show", fixture]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = oscycles(&["compare", fixture, fixture]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("unsure"), "no samples, no verdict");
}

#[test]
fn doctor_reports_and_changes_nothing() {
    let out = oscycles(&["doctor"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("governor") && text.contains("irqbalance") || text.contains("warning") || text.contains("note"), "{text}");
    assert_eq!(oscycles(&["doctor", "--cpus", "0,0"]).status.code(), Some(2));
}
