//! Loads never outlive a run: after a run completes, and after a SIGTERM in
//! the middle of one, no process of the load remains (checked over the whole
//! process tree: by command line, working directory and cgroup), and the
//! load's cgroup and files are gone.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::tempdir;

fn start(results: &Path, scratch: &Path, loads: &str, suite: &str, batches: &str, scale: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args([
            "run",
            "--suite",
            suite,
            "--load",
            loads,
            "--batches",
            batches,
            "--scale",
            scale,
            "--rounds",
            "1",
            "--full",
            "--quiet",
            "--results",
        ])
        .arg(results)
        .arg("--scratch")
        .arg(scratch)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// Processes that belong to a load under `scratch`: their command line names
/// it, their working directory is in it (gcc under make -C), or they sit in
/// a load cgroup of oscycles process `pid`.
fn load_processes(scratch: &Path, pid: u32) -> Vec<String> {
    let needle = scratch.to_str().unwrap();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let cmd = std::fs::read(e.path().join("cmdline")).map(|b| String::from_utf8_lossy(&b).replace('\0', " ")).unwrap_or_default();
        let cwd = std::fs::read_link(e.path().join("cwd")).map(|c| c.display().to_string()).unwrap_or_default();
        let cg = std::fs::read_to_string(e.path().join("cgroup")).unwrap_or_default();
        if cmd.contains(needle) || cwd.starts_with(needle) || cg.lines().any(|l| l.rsplit('/').next().is_some_and(|g| made_by(g, pid))) {
            found.push(format!("{p}: {cmd} (cwd {cwd})"));
        }
    }
    found
}

/// Whether cgroup `name` is a load group oscycles process `pid` made.
fn made_by(name: &str, pid: u32) -> bool {
    oscycles::measure::cgroup::load_group_owner(name).is_some_and(|o| o.pid == pid)
}

fn no_load_cgroup_left(pid: u32) {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    for line in text.lines().filter(|l| l.contains(" - cgroup2 ")) {
        let root = line.split_whitespace().nth(4).unwrap();
        for e in std::fs::read_dir(root).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            assert!(!made_by(&n, pid), "cgroup {n} outlived the run");
        }
    }
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn no_load_process_remains_after_a_complete_run() {
    let (results, scratch) = (tempdir("loads-done"), tempdir("loads-done-scratch"));
    let child = start(&results, &scratch, "idle,build,io", "fwq", "3", "test");
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    // One result per load and FWQ quantum (the slides' and the short one),
    // each with the load's throughput recorded beside it.
    let json = std::fs::read_dir(&results).unwrap().flatten().find(|e| e.path().extension().is_some_and(|x| x == "json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json.path()).unwrap()).unwrap();
    let rs = doc["results"].as_array().unwrap();
    assert_eq!(rs.len(), 3 * 2, "{text}");
    let facts = |load: &str| rs.iter().find(|r| r["condition"]["load"] == load).map(|r| r["condition"]["facts"].clone()).unwrap();
    assert!(facts("build")["build_units_per_s"].is_number(), "{}", facts("build"));
    assert!(facts("io")["tcp_mb_per_s"].is_number(), "{}", facts("io"));
    for r in rs {
        assert_eq!(r["status"], "ok", "{r}");
    }
    let left = load_processes(&scratch, pid);
    assert!(left.is_empty(), "load processes outlived the run: {left:?}");
    no_load_cgroup_left(pid);
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0, "the loads' files are removed");
    let _ = std::fs::remove_dir_all(results);
    let _ = std::fs::remove_dir_all(scratch);
}

#[test]
fn no_load_process_remains_after_a_sigterm_in_the_middle_of_a_run() {
    let (results, scratch) = (tempdir("loads-term"), tempdir("loads-term-scratch"));
    // A long run: the full-size fwq and control loop under a build load.
    let child = start(&results, &scratch, "build", "fwq,control-loop", "15", "full");
    let pid = child.id();
    // Wait until the compiler is at work (a gcc or cc1 whose cwd is the tree), then stop oscycles.
    wait_for("the build load to compile", Duration::from_secs(60), || {
        load_processes(&scratch, pid).iter().any(|p| p.contains("cc1") || p.contains("gcc"))
    });
    // SAFETY: sending SIGTERM to our own child process.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let left = load_processes(&scratch, pid);
    assert!(left.is_empty(), "load processes outlived the interrupted run: {left:?}");
    no_load_cgroup_left(pid);
    let _ = std::fs::remove_dir_all(results);
    let _ = std::fs::remove_dir_all(scratch);
}

/// Whether the build load of oscycles process `pid` is compiling.
fn compiling(scratch: &Path, pid: u32) -> bool {
    load_processes(scratch, pid).iter().any(|p| p.contains("cc1") || p.contains("gcc"))
}

/// `oscycles load build` into `scratch`, once its load compiles; and its pid.
fn compiling_load(scratch: &Path) -> (Child, u32) {
    let child = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["load", "build", "--scratch"])
        .arg(scratch)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for("the build load to compile", Duration::from_secs(60), || compiling(scratch, pid));
    (child, pid)
}

#[test]
fn a_worker_whose_oscycles_was_killed_kills_its_load() {
    // SIGKILL leaves no chance to clean up: the worker notices its parent is
    // gone and kills its own process group.
    let scratch = tempdir("loads-kill-scratch");
    let (mut child, pid) = compiling_load(&scratch);
    child.kill().unwrap();
    child.wait().unwrap();
    wait_for("the orphaned load to die", Duration::from_secs(10), || load_processes(&scratch, pid).is_empty());
    // Its empty cgroup stays (nobody was left to remove it): the next run removes it.
    let results = tempdir("loads-kill-results");
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "3", "--quiet", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(out.status.success());
    no_load_cgroup_left(pid);
    let _ = std::fs::remove_dir_all(scratch);
    let _ = std::fs::remove_dir_all(results);
}

#[test]
fn a_run_in_another_pid_namespace_leaves_a_live_runs_load_alone() {
    // A run's start removes load groups whose maker is gone; from another pid
    // namespace a live maker's pid is not in /proc, and it once took such a
    // load for a dead run's and killed it.
    let scratch = tempdir("loads-ns-scratch");
    let (mut child, pid) = compiling_load(&scratch);
    let results = tempdir("loads-ns-results");
    let out = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", env!("CARGO_BIN_EXE_oscycles")])
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "3", "--quiet", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(child.try_wait().unwrap().is_none(), "the load's oscycles is still running");
    wait_for("the live load to go on compiling", Duration::from_secs(30), || compiling(&scratch, pid));
    // SAFETY: kill(2) on our own child's pid, which we have not reaped.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    child.wait().unwrap();
    wait_for("the load to end with its oscycles", Duration::from_secs(10), || load_processes(&scratch, pid).is_empty());
    no_load_cgroup_left(pid);
    let _ = std::fs::remove_dir_all(scratch);
    let _ = std::fs::remove_dir_all(results);
}
