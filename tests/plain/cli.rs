//! The binary as a user meets it: refusals with exit code 2, a tiny real run
//! whose JSON reads back, and an interrupted run that keeps what it measured.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common;
use common::{only_json, tempdir};

fn oscycles(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oscycles")).args(args).output().expect("the binary runs")
}

/// A tiny run of the syscall suite into `d`, with extra arguments (the
/// number of batches among them).
fn tiny_syscall_run(d: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", "--suite", "syscall", "--batch-ms", "0.05", "--quiet", "--results", d.to_str().unwrap()];
    args.extend_from_slice(extra);
    oscycles(&args)
}

fn refused(args: &[&str], needle: &str) {
    let out = oscycles(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?} should exit 2; stderr: {err}");
    assert!(err.contains(needle), "{args:?}: stderr should mention '{needle}': {err}");
}

#[test]
fn bad_input_is_refused_with_exit_code_2() {
    let d = tempdir("refusals");
    let r = d.to_str().unwrap();
    refused(&["run", "--results", r, "--suite", "nope"], "unknown suite 'nope'; valid suites: quick");
    refused(&["run", "--results", r, "--suite", ""], "at least one suite");
    refused(&["run", "--results", r, "--bench", "ipc.carrier-pigeon"], "unknown benchmark 'ipc.carrier-pigeon'");
    refused(&["run", "--results", r, "--suite", "syscall", "--bench", "ipc.pipe"], "not part of the suites chosen");
    refused(&["run", "--results", r, "--cpus", "zero"], "invalid CPU list 'zero'");
    refused(&["run", "--results", r, "--cpus", "4000"], "not available to this process");
    refused(&["run", "--results", r, "--iterations", "0"], "--iterations");
    refused(&["run", "--results", r, "--batches", "0"], "--batches");
    refused(&["run", "--results", r, "--batch-ms=-3"], "--batch-ms");
    refused(&["run", "--results", r, "--batch-ms", "0"], "--batch-ms");
    refused(&["run", "--results", r, "--timeout", "0"], "--timeout");
    refused(&["run", "--results", "/proc/oscycles-cannot-be-here"], "cannot write results to '/proc/oscycles-cannot-be-here'");
    refused(&["run", "--no-such-flag"], "--no-such-flag");
    refused(&["run", "--results", r, "--load", "idle,party"], "--load: unknown 'party'; valid: idle, build, io");
    refused(&["run", "--results", r, "--load", ","], "--load needs at least one of");
    refused(&["run", "--results", r, "--isolation", "total"], "--isolation: unknown 'total'; valid: none, pinned, rt, isolated");
    refused(&["run", "--results", r, "--isolation", "rt", "--rt"], "cannot be used with");
    refused(&["run", "--results", r, "--preempt", "rt"], "--preempt: unknown 'rt'; valid: none, voluntary, full, lazy");
    refused(&["run", "--results", r, "--preempt", ","], "--preempt needs at least one of");
    refused(&["run", "--results", r, "--rounds", "many"], "neither a number of rounds from 1 to 1000 nor 'auto'");
    refused(&["run", "--results", r, "--rounds", "5", "--budget", "3"], "steer --rounds auto, not --rounds 5");
    refused(&["run", "--results", r, "--target", "5"], "steer --rounds auto: add it");
    refused(&["run", "--results", r, "--rounds", "auto", "--target", "0"], "percentage above 0");
    refused(&["run", "--results", r, "--rounds", "auto", "--budget=-1"], "number of minutes");
    refused(&["run", "--results", r, "--rounds", "5", "--until-verdict", "main"], "leave out --rounds 5");
    refused(&["run", "--results", r, "--until-verdict", "nosuch"], "--until-verdict nosuch: neither a run document nor a baseline");
    refused(&["run", "--results", r, "--load-cpus", "0"], "--load-cpus places a load");
    refused(&["run", "--results", r, "--load", "build", "--load-cpus", "4000"], "--load-cpus");
    refused(&["load", "nothing"], "unknown 'nothing'");
    refused(&["run", "--results", r, "--env", "native,xen"], "--env: unknown 'xen'; valid: native, container, qemu-tcg, qemu-kvm");
    refused(&["run", "--results", r, "--vm-mem", "12"], "--vm-mem");
    refused(&["frobnicate"], "frobnicate");
    refused(&["show", d.join("missing.json").to_str().unwrap()], "cannot read");
    let not_a_run = d.join("other.json");
    std::fs::write(&not_a_run, "{\"hello\": 1}").unwrap();
    refused(&["show", not_a_run.to_str().unwrap()], "not an oscycles run document");
    let future = d.join("future.json");
    std::fs::write(&future, "{\"schema\": \"oscycles.run\", \"schema_version\": 999}").unwrap();
    refused(&["show", future.to_str().unwrap()], "schema version 999");
    // Nothing was measured, so nothing was written.
    let written: Vec<_> =
        std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with("20")).collect();
    assert!(written.is_empty(), "refused runs must not leave run documents");
}

#[test]
fn list_names_every_benchmark_and_suite() {
    let out = oscycles(&["list"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for b in oscycles::run::registry::benchmarks() {
        assert!(s.contains(&b.id), "list lacks {}", b.id);
    }
    for su in oscycles::run::registry::SUITES {
        assert!(s.contains(su.name), "list lacks suite {}", su.name);
    }
}

#[test]
fn a_tiny_run_saves_a_document_that_show_prints_again() {
    let d = tempdir("tiny");
    let out = tiny_syscall_run(&d, &["--batches", "3", "--rounds", "1", "--full"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("syscall: cost per call"), "{stdout}");
    let path = only_json(&d);
    let doc = oscycles::data::documents::load(&path).unwrap();
    assert_eq!(doc.status, oscycles::data::results::RunStatus::Complete);
    assert_eq!(doc.results.len(), doc.planned_cases);
    assert_eq!(doc.results.len(), 7);
    for r in &doc.results {
        let m = r.metric("per_call").unwrap();
        assert_eq!(m.summary.n, 3);
        assert_eq!(m.unit, "tsc_cycles");
        assert!(m.ns.is_some());
        assert_eq!(r.placement.as_ref().unwrap().cpus.len(), 1);
    }
    let shown = oscycles(&["show", path.to_str().unwrap(), "--full"]);
    assert!(shown.status.success());
    let shown = String::from_utf8_lossy(&shown.stdout);
    // The same table, from the file.
    let table = |s: &str| s.lines().skip_while(|l| !l.starts_with("syscall:")).take(9).collect::<Vec<_>>().join("\n");
    assert_eq!(table(&shown), table(&stdout));
}

#[test]
fn an_interrupted_run_keeps_what_it_measured() {
    let d = tempdir("interrupt");
    let child = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--suite", "l4-ipc", "--batch-ms", "5", "--quiet", "--results", d.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until at least two cases are saved, then interrupt.
    let start = Instant::now();
    loop {
        let saved = std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| oscycles::data::documents::load(&e.path()).ok())
            .map(|doc| doc.results.len())
            .next()
            .unwrap_or(0);
        if saved >= 2 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no case saved within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = oscycles::data::documents::load(&only_json(&d)).unwrap();
    assert_eq!(doc.status, oscycles::data::results::RunStatus::Interrupted);
    assert!(doc.results.len() >= 2 && doc.results.len() < doc.planned_cases);
    assert!(
        doc.results.iter().all(|r| r.status != oscycles::data::results::CaseStatus::Failed),
        "an interrupted case is dropped, not saved as failed"
    );
    let shown = oscycles(&["show", only_json(&d).to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&shown.stdout).contains("INTERRUPTED"));
}

#[test]
fn rt_runs_under_sched_fifo_with_memory_locked_or_says_why_not() {
    let d = tempdir("rt");
    let out = tiny_syscall_run(&d, &["--batches", "2", "--rt", "--bench", "syscall.getpid"]);
    if out.status.success() {
        let doc = oscycles::data::documents::load(&only_json(&d)).unwrap();
        assert_eq!(doc.condition.isolation, "rt");
        let p = doc.results[0].placement.as_ref().unwrap();
        assert_eq!(p.policy, "SCHED_FIFO 50");
        assert!(p.memory_locked);
    } else {
        // Not permitted here: a clear sentence and exit 1, nothing measured.
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("needs root"), "{err}");
    }
}

/// Two crafted runs: a real document as a template, with medians and CVs
/// set to known values.
fn crafted_pair(d: &Path) -> (PathBuf, PathBuf) {
    let out = tiny_syscall_run(d, &["--batches", "2", "--bench", "syscall.getpid,syscall.getppid,syscall.read"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let template = oscycles::data::documents::load(&only_json(d)).unwrap();
    // Six rounds of three batches at the median wanted; `spread` moves
    // every other round up and down by that fraction.
    let set =
        |doc: &mut oscycles::data::results::RunDoc, bench: &str, median: f64, spread: f64, better: oscycles::data::results::Better| {
            let r = doc.results.iter_mut().find(|r| r.benchmark == bench).unwrap();
            let m = &mut r.metrics[0];
            m.samples = (0..6)
                .map(|k| {
                    let f = if k % 2 == 0 { 1.0 - spread } else { 1.0 + spread };
                    (0..3).map(|b| median * f * (1.0 + 0.001 * b as f64)).collect()
                })
                .collect();
            m.summary.median = median;
            // A document's summary is ordered (oscycles refuses one that is not): min and max
            // around the crafted samples and median.
            let all = m.samples.iter().flatten().copied();
            m.summary.min = all.clone().fold(median, f64::min);
            m.summary.max = all.fold(median, f64::max);
            m.better = better;
        };
    use oscycles::data::results::Better::{Higher, Lower};
    let (mut a, mut b) = (template.clone(), template);
    // getpid: B twice as fast. getppid: B 10% slower, but A's rounds move
    // by 20% either way. read, as a rate: B 1.5x A.
    set(&mut a, "syscall.getpid", 200.0, 0.0, Lower);
    set(&mut b, "syscall.getpid", 100.0, 0.0, Lower);
    set(&mut a, "syscall.getppid", 100.0, 0.2, Lower);
    set(&mut b, "syscall.getppid", 110.0, 0.0, Lower);
    set(&mut a, "syscall.read", 1000.0, 0.0, Higher);
    set(&mut b, "syscall.read", 1500.0, 0.0, Higher);
    b.id = "crafted-b".into();
    let (pa, pb) = (d.join("a.json.crafted"), d.join("b.json.crafted"));
    std::fs::write(&pa, serde_json::to_string(&a).unwrap()).unwrap();
    std::fs::write(&pb, serde_json::to_string(&b).unwrap()).unwrap();
    (pa, pb)
}

#[test]
fn compare_gives_the_expected_ratios_and_verdicts() {
    let d = tempdir("compare");
    let (a, b) = crafted_pair(&d);
    let out = oscycles(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = String::from_utf8_lossy(&out.stdout);
    let line =
        |bench: &str| s.lines().find(|l| l.starts_with(&format!("{bench} "))).unwrap_or_else(|| panic!("no {bench} row:\n{s}")).to_string();
    assert!(line("syscall.getpid").contains(" 2.00 [") && line("syscall.getpid").ends_with("faster"), "{s}");
    assert!(line("syscall.getppid").contains("unsure"), "{s}");
    assert!(line("syscall.read").contains(" 1.50 [") && line("syscall.read").ends_with("faster"), "{s}");
    assert!(s.contains("above 1 means B is better"), "the header says which way the column points");
    assert!(s.contains("3 cells: 2 faster, 0 slower, 0 same"), "{s}");
}

#[test]
fn compare_refuses_incomparable_runs_with_exit_code_2() {
    let d = tempdir("compare-refuse");
    let (a, b) = crafted_pair(&d);
    let mut future: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    // A version after this oscycles' own (the schema's version moves on with the format).
    let next = oscycles::data::results::SCHEMA_VERSION + 1;
    future["schema_version"] = serde_json::json!(next);
    let fb = d.join("future.json.crafted");
    std::fs::write(&fb, future.to_string()).unwrap();
    refused(&["compare", a.to_str().unwrap(), fb.to_str().unwrap()], &format!("schema version {next}"));
    let mut empty: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    empty["results"] = serde_json::json!([]);
    let eb = d.join("empty.json.crafted");
    std::fs::write(&eb, empty.to_string()).unwrap();
    refused(&["compare", a.to_str().unwrap(), eb.to_str().unwrap()], "no measured case in common");
    refused(&["compare", a.to_str().unwrap()], "compare needs two runs A B, or --baseline NAME and one run");
}

#[test]
fn run_help_names_every_suite_and_benchmark_from_the_registry() {
    let out = oscycles(&["run", "--help"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for su in oscycles::run::registry::SUITES {
        assert!(s.contains(su.name), "run --help lacks suite {}", su.name);
    }
    for b in oscycles::run::registry::benchmarks() {
        assert!(s.contains(&b.id), "run --help lacks {}", b.id);
    }
}

/// A reader that goes away early (`oscycles list | head -1`) ends the
/// command quietly: no panic on the closed pipe. The pipe holds one page,
/// so the listing cannot fit in it before the reader goes.
#[test]
fn a_reader_that_goes_away_early_ends_the_command_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two new descriptors into the array it is given.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: fcntl on a descriptor this test owns.
    assert!(unsafe { libc::fcntl(fds[1], libc::F_SETPIPE_SZ, 4096) } >= 4096);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["list", "--long"])
        .stdout(std::process::Stdio::from(write))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(std::fs::File::from(read));
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(!first.is_empty());
    drop(reader);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{stderr}");
}

/// A run SIGKILLed inside a store transaction leaves SQLite's hot journal
/// beside the store: the next command rolls it back and goes on, never
/// calling the store "not an oscycles run store" (a read-only check
/// connection cannot roll a journal back: seen after a killed gvisor run).
#[test]
fn a_store_left_with_a_hot_journal_by_a_killed_writer_is_recovered() {
    let d = tempdir("hot-journal");
    let (live, left) = (d.join("live.sqlite"), d.join("left.sqlite"));
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json");
    let out = oscycles(&["import", fixture, "--db", live.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The files as a writer killed mid-transaction leaves them: copied while
    // the transaction is open (its journal holds the pages it changed).
    let c = rusqlite::Connection::open(&live).unwrap();
    c.execute_batch("PRAGMA foreign_keys=OFF; PRAGMA cache_size=1; BEGIN IMMEDIATE;").unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type='table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for t in &tables {
        c.execute(&format!("DELETE FROM \"{t}\""), []).unwrap();
    }
    std::fs::copy(&live, &left).unwrap();
    std::fs::copy(d.join("live.sqlite-journal"), d.join("left.sqlite-journal")).unwrap();
    c.execute_batch("ROLLBACK").unwrap();
    let out = oscycles(&["runs", "--db", left.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("20261121T143638Z"), "the transaction rolled back, the run there again:\n{text}");
    let _ = std::fs::remove_dir_all(d);
}
