//! Helpers shared by the integration tests (each test binary uses some).
#![allow(dead_code)]

pub mod pg;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// oscycles (the binary under test) with `args`, run to its end.
pub fn oscycles(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_oscycles")).args(args).output().expect("the binary runs")
}

/// Its standard output, once it succeeded.
pub fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh, empty, private directory for one test, named after it.
pub fn tempdir(name: &str) -> PathBuf {
    // mkdtemp: a fresh private directory, never a predictable path in /tmp.
    // Kept (the tests remove it when they pass; a failed one leaves it to look at).
    tempfile::Builder::new().prefix(&format!("oscycles-test-{name}-")).tempdir().unwrap().keep()
}

/// The one run document a run wrote into `dir`.
pub fn only_json(dir: &Path) -> PathBuf {
    let docs: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    assert_eq!(docs.len(), 1, "{docs:?}");
    docs.into_iter().next().unwrap()
}

/// That document, parsed.
pub fn only_doc(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(only_json(dir)).unwrap()).unwrap()
}

/// `oscycles run` of the syscall suite, tiny (2 batches of 0.05 ms, quiet),
/// into `dir`, with `extra` arguments and COLUMNS set to `columns`.
pub fn tiny_run(dir: &Path, columns: usize, extra: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .env("COLUMNS", columns.to_string())
        .args(["run", "--suite", "syscall", "--batches", "2", "--batch-ms", "0.05", "--quiet", "--results"])
        .arg(dir)
        .args(extra)
        .output()
        .expect("the binary runs")
}

/// A run ended as its document says: exit 0 when it measured a case; when
/// every case was n/a or failed, exit 1, `failed`, with the reasons (issue
/// 43, item 8: such a run used to end `complete`, exit 0).
pub fn assert_ended_as_measured(out: &std::process::Output, doc: &serde_json::Value) {
    let err = String::from_utf8_lossy(&out.stderr);
    if doc["results"].as_array().is_some_and(|rs| rs.iter().any(|r| r["status"] == "ok")) {
        assert!(out.status.success(), "{err}");
    } else {
        assert_eq!(out.status.code(), Some(1), "a run that measured nothing fails: {err}");
        assert_eq!(doc["status"], "failed", "{}", doc["status"]);
        assert!(err.contains("no case measured successfully"), "{err}");
    }
}

/// What [`getpid_in`] saw: the saved document, how long the run took, its
/// stdout, and the console logs it left beside the document (name, text).
pub type GetpidRun = (serde_json::Value, Duration, String, Vec<(String, String)>);

/// A run of the syscall suite's getpid case alone in `envs`, into a fresh
/// directory, with `args`. The run must succeed (or, where it measured no
/// case, fail as such: [`assert_ended_as_measured`]).
pub fn getpid_in(envs: &str, name: &str, args: &[&str]) -> GetpidRun {
    let d = tempdir(name);
    let t = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--env", envs, "--results"])
        .arg(&d)
        .args(args)
        .output()
        .expect("the binary runs");
    let took = t.elapsed();
    let doc = only_doc(&d);
    assert_ended_as_measured(&out, &doc);
    let consoles = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.ends_with(".console.log").then(|| (name, std::fs::read_to_string(e.path()).unwrap_or_default()))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&d);
    (doc, took, String::from_utf8_lossy(&out.stdout).to_string(), consoles)
}

/// Processes whose command line mentions `needle`: pid and command line (what a killed run may have left).
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                out.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
            }
        }
    }
    out
}

/// `oscycles run --env <env> --guest-mode hang` with `args`, SIGKILLed as
/// soon as its QEMU runs: asserts that no process of the run (found by its
/// scratch directory on their command lines) is left 2 s later.
pub fn sigkill_leaves_no_qemu(env: &str, name: &str, args: &[&str]) {
    let how = StartStop {
        what: "QEMU",
        up: &|ps, _| ps.iter().any(|p| p.contains("qemu-system")),
        poll: Duration::from_millis(50),
        settle: Duration::ZERO,
        stop: Stop::Kill,
        left: &processes_mentioning,
    };
    let mut all = vec!["run", "--env", env, "--quiet", "--guest-mode", "hang", "--init-timeout", "120"];
    all.extend(args);
    let d = start_stop_nothing_left(env!("CARGO_BIN_EXE_oscycles"), &all, name, &how);
    let _ = std::fs::remove_dir_all(&d);
}

/// `oscycles run --env ENV --quiet --results <a fresh directory> EXTRA ARGS`,
/// with the environment's cache directory set through `cache_var` when
/// `cache` is given: the one document it wrote and how long it took. The run
/// must succeed (a case that could not be measured is n/a, not a failure).
pub fn run_guest(
    env: &str,
    cache_var: &str,
    name: &str,
    cache: Option<&Path>,
    extra: &[&str],
    args: &[&str],
) -> (serde_json::Value, Duration) {
    let d = tempdir(name);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_oscycles"));
    cmd.args(["run", "--env", env, "--quiet", "--results"]).arg(&d).args(extra).args(args);
    if let Some(c) = cache {
        cmd.env(cache_var, c);
    }
    let t = Instant::now();
    let out = cmd.output().expect("the binary runs");
    let took = t.elapsed();
    let doc = only_doc(&d);
    assert_ended_as_measured(&out, &doc);
    let _ = std::fs::remove_dir_all(&d);
    (doc, took)
}

/// `oscycles run --env ENV` with `args` (one benchmark, `bench`) against an
/// empty cache (given through `cache_var`), then against one whose `failed`
/// holds a reason: the case is n/a both times, naming `script`, the command
/// that builds it, and the second time the recorded reason.
pub fn missing_or_failed_build_is_not_applicable(env: &str, cache_var: &str, script: &str, bench: &str, args: &[&str]) {
    let empty = tempdir(&format!("{env}-none"));
    let (doc, _) = run_guest(env, cache_var, &format!("{env}-missing"), Some(&empty), &[], args);
    let r = results_of(&doc, bench)[0];
    assert_eq!(r["status"], "not_applicable", "{r}");
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("not built") && why.contains(script), "{r}");
    std::fs::write(empty.join("failed"), "building the kernel failed\nmake: *** [kernel.elf] Error 2\n").unwrap();
    let (doc, _) = run_guest(env, cache_var, &format!("{env}-failed"), Some(&empty), &[], args);
    let why = results_of(&doc, bench)[0]["reason"].as_str().unwrap().to_string();
    assert!(why.contains("build failed") && why.contains("Error 2") && why.contains(script), "{why}");
    let _ = std::fs::remove_dir_all(&empty);
}

/// The results of benchmark `bench` in a run document.
pub fn results_of<'a>(doc: &'a serde_json::Value, bench: &str) -> Vec<&'a serde_json::Value> {
    doc["results"].as_array().unwrap().iter().filter(|r| r["benchmark"] == bench).collect()
}

/// Loads a page in headless Chromium (and screenshots it, 1400 pixels wide, `height` high):
/// the DOM and the page's console messages.
pub fn chromium(page: &Path, screenshot: &Path, height: u32) -> (String, Vec<String>) {
    let url = format!("file://{}", page.display());
    let base = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0"];
    let run = |extra: &[&str]| {
        std::process::Command::new("chromium").args(base).args(extra).arg(&url).output().expect("chromium is installed (scripts/setup)")
    };
    let dom = run(&["--dump-dom"]);
    let shot = run(&[&format!("--window-size=1400,{height}"), &format!("--screenshot={}", screenshot.display())]);
    let console: Vec<String> = [&dom, &shot]
        .iter()
        .flat_map(|o| String::from_utf8_lossy(&o.stderr).lines().filter(|l| l.contains(":CONSOLE")).map(String::from).collect::<Vec<_>>())
        .collect();
    (String::from_utf8_lossy(&dom.stdout).into_owned(), console)
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Fails the test, loudly, when this process is not root: a test that
/// needs root is not run as a pass without it (scripts/test runs the
/// binaries that hold such tests as root).
pub fn needs_root(why: &str) {
    assert!(is_root(), "this test needs root ({why}): run it as root, as scripts/test does");
}

/// Fails the test, loudly, when this process may use fewer than `n` CPUs.
pub fn needs_cpus(n: usize, why: &str) {
    let have = oscycles::measure::placement::allowed_cpus().len();
    assert!(have >= n, "this test needs {n} CPUs ({why}); this process may use {have}");
}

/// The tests of the `serial` binary take turns: each watches its own
/// process (its threads, children, descriptors, counted events) or moves
/// every other task off a CPU, which a test running beside it would disturb
/// or notice. scripts/test also runs each file of that binary in a process
/// of its own with --test-threads=1, so that not even libtest starts a
/// thread while one of them measures.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How [`start_stop_nothing_left`] stops the run it started.
#[derive(Clone, Copy, Debug)]
pub enum Stop {
    /// SIGKILL (no chance to clean up), then 2 s for what it started to notice.
    Kill,
    /// SIGTERM, then the run must end within 20 s.
    Term,
}

/// What [`start_stop_nothing_left`] waits for, how it stops the run, and
/// which processes must be gone afterwards.
pub struct StartStop<'a> {
    /// What appears once the run is up, for the message when it does not ("QEMU").
    pub what: &'a str,
    /// Whether the run is up: given the processes that mention its scratch
    /// directory (pid: command line) and the pid of the oscycles started.
    pub up: &'a dyn Fn(&[String], u32) -> bool,
    /// How often to look whether it is up (within 60 s).
    pub poll: Duration,
    /// How long to let it run once up.
    pub settle: Duration,
    pub stop: Stop,
    /// The processes that must be gone, given the scratch directory.
    pub left: &'a dyn Fn(&str) -> Vec<String>,
}

/// Start, stop, nothing left: `bin ARGS --scratch D/scratch --results
/// D/results` in a fresh directory D (named after `name`), with no output;
/// once `how.up` says the run is up, waits `how.settle`, stops it as
/// `how.stop` says and asserts that `how.left` finds no process left. Returns
/// D, for what the test checks next (the scratch directory, the results).
pub fn start_stop_nothing_left(bin: &str, args: &[&str], name: &str, how: &StartStop) -> PathBuf {
    let d = tempdir(name);
    let scratch = d.join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let mut child = std::process::Command::new(bin)
        .args(args)
        .args(["--scratch", scratch.to_str().unwrap(), "--results", d.join("results").to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let needle = scratch.to_str().unwrap().to_string();
    let t = Instant::now();
    while !(how.up)(&processes_mentioning(&needle), child.id()) {
        assert!(t.elapsed() < Duration::from_secs(60), "no {} appeared", how.what);
        std::thread::sleep(how.poll);
    }
    std::thread::sleep(how.settle);
    match how.stop {
        Stop::Kill => {
            child.kill().unwrap();
            child.wait().unwrap();
            std::thread::sleep(Duration::from_secs(2));
            let left = (how.left)(&needle);
            assert!(left.is_empty(), "still running 2 s after SIGKILL: {left:?}");
        }
        Stop::Term => {
            // SAFETY: kill with a pid this test spawned and has not reaped yet.
            assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
            let t = Instant::now();
            while child.try_wait().unwrap().is_none() {
                assert!(t.elapsed() < Duration::from_secs(20), "oscycles did not end within 20 s of SIGTERM");
                std::thread::sleep(Duration::from_millis(100));
            }
            let left = (how.left)(&needle);
            assert!(left.is_empty(), "{} still running after the run ended: {left:?}", how.what);
        }
    }
    d
}

/// `oscycles run --env ENV` of `args` whose guest fails (`mode`: its
/// panic or hang): its one case is n/a, the reason names where its console
/// was kept, beside the run's document, and the kept console has `said`.
pub fn assert_failed_guest_console_kept(env: &str, name: &str, args: &[&str], said: &str) {
    let d = tempdir(name);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--env", env, "--quiet", "--results"])
        .arg(&d)
        .args(args)
        .output()
        .expect("the binary runs");
    let doc = only_doc(&d);
    assert_ended_as_measured(&out, &doc);
    let r = &doc["results"][0];
    assert_eq!(r["status"], "not_applicable", "{r}");
    let why = r["reason"].as_str().unwrap();
    let kept = why.split("(console: ").nth(1).and_then(|k| k.split(')').next()).unwrap_or_else(|| panic!("no console kept: {why}"));
    let beside = only_json(&d).with_extension("");
    assert!(kept.starts_with(&format!("{}.", beside.display())), "{kept} is not beside {}", beside.display());
    let console = std::fs::read_to_string(kept).unwrap_or_else(|e| panic!("{kept}: {e}"));
    assert!(console.contains(said), "the kept console has no {said:?}: {console}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The median of metric `name` of result `r`, if it has that metric.
pub fn metric_median(r: &serde_json::Value, name: &str) -> Option<f64> {
    r["metrics"].as_array()?.iter().find(|m| m["name"] == name)?["summary"]["median"].as_f64()
}

/// A run counted with `--kernel-counters cache`: every measured cell of
/// `env` carries the kernel's metrics, each in its unit, and its kernel and
/// user instructions add up to the cell's own count; the facts say what
/// counted (the kernel's base, the cache model). (Medians of batches:
/// the kernel's and the user's need not be one batch's, hence within 2%.)
pub fn assert_every_cell_counted(doc: &serde_json::Value, env: &str) {
    let facts = &doc["environment"]["settings"][env]["kernel_counters"];
    assert!(facts["kernel_base"].as_str().is_some_and(|b| b.starts_with("0x")) && facts["cache_model"] != "off", "{facts}");
    let measured: Vec<&serde_json::Value> = doc["results"].as_array().unwrap().iter().filter(|r| r["status"] == "ok").collect();
    assert!(!measured.is_empty(), "nothing measured: {doc}");
    for r in measured {
        let units: Vec<(&str, &str)> =
            r["metrics"].as_array().unwrap().iter().map(|m| (m["name"].as_str().unwrap(), m["unit"].as_str().unwrap())).collect();
        for (name, unit) in [
            ("kernel_instructions", "guest_instructions"),
            ("user_instructions", "guest_instructions"),
            ("kernel_loads", "guest_memory_accesses"),
            ("kernel_stores", "guest_memory_accesses"),
            ("kernel_entries", "guest_kernel_entries"),
            ("cr3_writes", "guest_cr3_writes"),
            ("kernel_lines_cold", "guest_cache_lines"),
        ] {
            assert!(units.contains(&(name, unit)), "{} {}: no {name} in {unit}: {units:?} {}", r["benchmark"], r["params"], r["details"]);
        }
        let (k, u) = (metric_median(r, "kernel_instructions").unwrap(), metric_median(r, "user_instructions").unwrap());
        let total = r["metrics"][0]["summary"]["median"].as_f64().unwrap();
        assert!(k > 0.0 && u >= 0.0 && (k + u - total).abs() <= 0.02 * total, "{}: {k} + {u} is not {total}", r["benchmark"]);
    }
}

/// The arguments of a guest's counted run (`--kernel-counters COUNTERS`) of
/// `benches` at 0 words on one core, briefly, then `extra`.
pub fn counted_args<'a>(benches: &'a str, counters: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--suite",
        "l4-ipc,syscall",
        "--bench",
        benches,
        "--where",
        "words=0",
        "--where",
        "cores=same",
        "--batches",
        "3",
        "--batch-ms",
        "1",
        "--kernel-counters",
        counters,
    ];
    args.extend_from_slice(extra);
    args
}

/// A counted run's IPC cells of `bench` in `env` (0 words, one core): a
/// trip between address spaces writes CR3, one within an address space
/// does not; the one within runs the independent check's path, its kernel
/// instructions one way the check's (its bare loop, counted by the same
/// plugin in the same invocation) within `within`.
pub fn assert_counted_ipc(doc: &serde_json::Value, env: &str, bench: &str, within: f64) {
    let trip = |space: &str| {
        *results_of(doc, bench).iter().find(|r| r["params"]["space"] == space).unwrap_or_else(|| panic!("no {space} {bench}"))
    };
    let cr3 = |space: &str| metric_median(trip(space), "cr3_writes").unwrap();
    assert!(cr3("inter") >= 0.9 && cr3("intra") < 0.1, "CR3 writes one way: inter {}, intra {}", cr3("inter"), cr3("intra"));
    let kernel = metric_median(trip("intra"), "kernel_instructions").unwrap();
    let facts = &doc["environment"]["settings"][env];
    let check = facts["independent_check"]["kernel_instructions_one_way"].as_f64().unwrap_or_else(|| panic!("{facts}"));
    assert!((kernel - check).abs() <= within, "the cell's kernel instructions {kernel} against the bare check's {check}");
}
