//! The isolated mode changes system settings (cpusets, IRQ affinity) and
//! must put every one back: after a run, and after a run interrupted while
//! isolated. Where the mode cannot run here (not root, no cpuset), the run
//! says so and the settings must be untouched all the same.
//!
//! These tests run in the serial binary, one at a time: while isolated,
//! oscycles moves every other task off the measured CPU, which tests
//! running beside it would notice.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::tempdir;

/// Everything isolation may touch, as text.
fn settings() -> BTreeMap<String, String> {
    let mut s = BTreeMap::new();
    let mut put = |k: String, v: String| {
        s.insert(k, v);
    };
    for e in std::fs::read_dir("/proc/irq").unwrap().flatten() {
        if let Ok(v) = std::fs::read_to_string(e.path().join("smp_affinity_list")) {
            put(format!("irq {}", e.file_name().to_string_lossy()), v);
        }
    }
    put("irq default".into(), std::fs::read_to_string("/proc/irq/default_smp_affinity").unwrap_or_default());
    for line in std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines() {
        let root = line.split_whitespace().nth(4).unwrap();
        let is_cpuset = line.contains(" - cgroup2 ") || (line.contains(" - cgroup ") && line.split(',').any(|o| o.trim() == "cpuset"));
        if !is_cpuset {
            continue;
        }
        let mut dirs: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        dirs.sort();
        put(format!("{root} children"), dirs.join(" "));
        for f in ["cpuset.sched_load_balance", "cgroup.subtree_control", "cpuset.cpus", "tasks"] {
            if f == "tasks" {
                // Where this test process sits (other tasks come and go).
                let ours = std::fs::read_to_string(Path::new(root).join(f)).unwrap_or_default();
                put(format!("{root} holds this test"), ours.lines().any(|l| l == std::process::id().to_string()).to_string());
            } else if let Ok(v) = std::fs::read_to_string(Path::new(root).join(f)) {
                put(format!("{root}/{f}"), v);
            }
        }
    }
    put(
        "this test's affinity".into(),
        std::fs::read_to_string("/proc/self/status").unwrap().lines().find(|l| l.starts_with("Cpus_allowed_list")).unwrap().into(),
    );
    put("journals".into(), std::fs::read_dir("/run/oscycles").map(|d| d.count()).unwrap_or(0).to_string());
    s
}

fn assert_same(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) {
    for (k, v) in before {
        assert_eq!(after.get(k), Some(v), "{k} changed");
    }
    assert_eq!(before.len(), after.len(), "settings appeared: {:?}", after.keys().filter(|k| !before.contains_key(*k)).collect::<Vec<_>>());
}

/// A control-loop run under pinned and isolated at `scale` (test: a few periods; full: 3,000).
fn run(results: &Path, batches: &str, scale: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscycles"));
    c.args([
        "run",
        "--suite",
        "control-loop",
        "--isolation",
        "pinned,isolated",
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
    .arg(results);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

#[test]
fn isolation_settings_are_as_before_after_a_run() {
    let _serial = common::one_at_a_time();
    let d = tempdir("isolation-done");
    let before = settings();
    let out = run(&d, "3", "test").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("isolated"), "{text}");
    // Isolated either measured (and says how) or says what it lacks.
    assert!(text.contains("cpuset = ") || text.contains("isolated: isolated needs"), "{text}");
    assert_same(&before, &settings());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn isolation_settings_are_as_before_after_an_interrupted_run() {
    let _serial = common::one_at_a_time();
    let d = tempdir("isolation-term");
    let before = settings();
    let child = run(&d, "5", "full").spawn().unwrap();
    let pid = child.id();
    // Interrupt while isolated: its journal exists from the first change to the restore.
    let journal = format!("/run/oscycles/isolation-{pid}.json");
    let t = Instant::now();
    let mut seen = false;
    while t.elapsed() < Duration::from_secs(60) {
        if Path::new(&journal).exists() {
            seen = true;
            break;
        }
        if std::fs::metadata(format!("/proc/{pid}")).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: sending SIGTERM to our own child process.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    if seen {
        assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_same(&before, &settings());
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn the_run_after_a_sigkilled_isolated_run_uses_the_cpus_it_would_have_used() {
    let _serial = common::one_at_a_time();
    let d = tempdir("isolation-kill");
    let before = settings();
    // What a run chooses on an undisturbed machine.
    let cpus_of = |out: &std::process::Output| {
        let doc = common::only_doc(&d);
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "json") {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (doc["settings"]["cpus"].clone(), doc["host"]["cpus_allowed"].clone())
    };
    let quick = || common::tiny_run(&d, 100, &["--bench", "syscall.getpid"]);
    let expected = cpus_of(&quick());
    let mut child = run(&d, "5", "full").spawn().unwrap();
    let pid = child.id();
    let journal = format!("/run/oscycles/isolation-{pid}.json");
    let t = Instant::now();
    let mut seen = false;
    while t.elapsed() < Duration::from_secs(60) && !seen {
        seen = Path::new(&journal).exists() && std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("cpuset"));
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    child.wait().unwrap();
    for e in std::fs::read_dir(&d).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "json") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let after_kill = quick();
    assert!(String::from_utf8_lossy(&after_kill.stderr).contains("restor") || !seen, "{}", String::from_utf8_lossy(&after_kill.stderr));
    assert_eq!(cpus_of(&after_kill), expected, "the first run after the killed one measured elsewhere");
    assert_same(&before, &settings());
    let _ = std::fs::remove_dir_all(d);
}

/// Where the cgroup v1 cpuset hierarchy is mounted, if it is.
fn v1_cpuset() -> Option<std::path::PathBuf> {
    std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines().find_map(|line| {
        let is_v1_cpuset = line.contains(" - cgroup ") && line.rsplit(' ').next().is_some_and(|o| o.split(',').any(|o| o == "cpuset"));
        is_v1_cpuset.then(|| std::path::PathBuf::from(line.split_whitespace().nth(4).unwrap()))
    })
}

#[test]
fn isolated_names_the_cpuset_that_holds_its_cpu_exclusively() {
    let _serial = common::one_at_a_time();
    common::needs_root("it makes a cpuset that holds a CPU exclusively");
    let root = v1_cpuset().expect("this test needs the cpuset controller on cgroup v1 (cpuset.cpu_exclusive)");
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    assert_ne!(online.trim(), "0", "this test needs two CPUs");
    // A sibling cpuset holding CPU 1 exclusively, as another tool's shield would.
    struct Sibling(std::path::PathBuf);
    impl Drop for Sibling {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let sibling = Sibling(root.join(format!("oscycles-test-holder-{}", std::process::id())));
    std::fs::create_dir(&sibling.0).unwrap();
    std::fs::write(sibling.0.join("cpuset.cpus"), "1").unwrap();
    std::fs::write(sibling.0.join("cpuset.mems"), std::fs::read_to_string(root.join("cpuset.mems")).unwrap().trim()).unwrap();
    std::fs::write(sibling.0.join("cpuset.cpu_exclusive"), "1").unwrap();
    let d = tempdir("isolation-held");
    let before = settings();
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--isolation", "isolated", "--cpus", "1,0"])
        .args(["--batches", "2", "--batch-ms", "0.05", "--rounds", "1", "--quiet", "--results"])
        .arg(&d)
        .output()
        .unwrap();
    // Its only case n/a: the run measured nothing, and fails saying why (issue 43, item 8; it used to exit 0).
    let doc = common::only_doc(&d);
    common::assert_ended_as_measured(&out, &doc);
    let r = &doc["results"][0];
    assert_eq!(r["status"], "not_applicable", "{r}");
    let why = r["reason"].as_str().unwrap();
    assert!(
        why.contains(&sibling.0.display().to_string()) && why.contains("exclusively"),
        "the reason names the cpuset that holds the CPU: {why}"
    );
    assert_same(&before, &settings());
    drop(sibling);
    let _ = std::fs::remove_dir_all(d);
}

/// What `--preempt` may touch: where debugfs is mounted, the kernel's mode
/// (where it can be read), the journals.
fn preempt_settings() -> (Vec<String>, String, usize) {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let debugfs = mounts.lines().filter(|l| l.contains(" - debugfs ")).map(|l| l.split_whitespace().nth(4).unwrap().to_string()).collect();
    let mode = std::fs::read_to_string("/sys/kernel/debug/sched/preempt").unwrap_or_else(|e| e.to_string());
    (debugfs, mode, std::fs::read_dir("/run/oscycles").map(|d| d.count()).unwrap_or(0))
}

#[test]
fn a_preemption_mode_is_a_condition_measured_or_refused_with_the_reason_and_put_back() {
    let _serial = common::one_at_a_time();
    let d = tempdir("isolation-preempt");
    let before = preempt_settings();
    let mut c = Command::new(env!("CARGO_BIN_EXE_oscycles"));
    c.args(["run", "--suite", "control-loop", "--bench", "control.busy-tsc", "--scale", "test", "--preempt", "none,full"]);
    c.args(["--batches", "3", "--rounds", "1", "--full", "--quiet", "--results"]).arg(&d);
    let out = c.output().unwrap();
    let doc = common::only_doc(&d);
    // Measured, or (where the kernel lets no mode be switched, as on a VM
    // whose debugfs refuses) every case n/a: a run that measured nothing
    // fails (issue 43, item 8).
    common::assert_ended_as_measured(&out, &doc);
    assert_eq!(preempt_settings(), before, "debugfs, the kernel's mode and the journals as they were");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("pinned preempt=none") && text.contains("pinned preempt=full"), "a column per mode: {text}");
    assert_eq!(doc["condition"]["preempt"], "none,full");
    let results = doc["results"].as_array().unwrap();
    let modes: Vec<&str> = results.iter().map(|r| r["condition"]["preempt"].as_str().unwrap()).collect();
    assert_eq!(modes, ["none", "full"]);
    for r in results {
        // Measured under the mode (the fact says which), or n/a with the kernel's reason.
        match r["status"].as_str().unwrap() {
            "ok" => assert!(r["condition"]["facts"]["preempt"].as_str().unwrap().starts_with(r["condition"]["preempt"].as_str().unwrap())),
            "not_applicable" => assert!(r["reason"].as_str().unwrap().starts_with("--preempt "), "{r}"),
            s => panic!("{s}: {r}"),
        }
    }
    // The header's preemption fact says what the condition found: switchable
    // where a mode was switched, and where the kernel refused, the same refusal.
    let fixed = doc["host"]["preempt"]["fixed_because"].as_str();
    for r in results {
        let reason = r["reason"].as_str().unwrap_or_default();
        if r["status"] == "ok" && r["condition"]["facts"]["preempt"].as_str().unwrap().contains("switched from") {
            assert_eq!(fixed, None, "a mode was switched, the host facts say it cannot be: {}", doc["host"]["preempt"]);
        }
        if let Some(os) = reason.split_once("does not let root switch it: ").and_then(|(_, why)| why.rsplit_once(": ")).map(|(_, os)| os) {
            assert!(fixed.is_some_and(|f| f.ends_with(os)), "the header says {fixed:?}, the condition found {reason}");
        }
    }
    let _ = std::fs::remove_dir_all(d);
}
