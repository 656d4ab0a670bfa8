//! The user-level kernels: a User-Mode Linux kernel and a gVisor sandbox
//! return results naming their kernel and platform; a gVisor platform that
//! hangs is given up within the init timeout; a SIGKILLed gvisor run leaves
//! no process behind, and no run leaves a cgroup; a missing runsc or
//! linux.uml is n/a naming the command that installs it.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use common::{processes_mentioning, tempdir};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_oscycles")
}

/// A tiny getpid run in `env` with `extra` arguments: the saved document and how long it took.
fn run(env: &str, name: &str, extra: &[&str]) -> (serde_json::Value, Duration) {
    let mut args = vec!["--batches", "3", "--iterations", "1000", "--rounds", "1", "--quiet"];
    args.extend(extra);
    let (doc, took, _, _) = common::getpid_in(env, name, &args);
    (doc, took)
}

fn host_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap().trim().to_string()
}

#[test]
fn a_uml_run_returns_results_naming_its_kernel() {
    let (doc, _) = run("uml", "uml", &["--init-timeout", "120", "--vm-mem", "256"]);
    let r = &doc["results"][0];
    assert_eq!(r["environment"], "uml");
    assert_eq!(r["status"], "ok", "{r}");
    assert!(r["metrics"][0]["summary"]["median"].as_f64().unwrap() > 0.0);
    let facts = &doc["environment"]["settings"]["uml"];
    let version = facts["uml_version"].as_str().unwrap();
    assert!(!version.is_empty(), "{facts}");
    assert!(facts["uml_mode"].as_str().unwrap().contains("SKAS0"), "{facts}");
    assert_eq!(facts["clean_exit"], true, "{facts}");
    // The cases saw the UML kernel, not the host's.
    assert_eq!(facts["kernel_inside"], version, "{facts}");
    assert_eq!(facts["memory_mib"], 256);
}

#[test]
fn a_uml_guest_boots_with_the_appended_parameters() {
    let (doc, _) =
        run("uml", "uml-append", &["--init-timeout", "120", "--vm-mem", "256", "--guest-append", "preempt=full oscycles.probe=1"]);
    assert_eq!(doc["results"][0]["status"], "ok", "{doc}");
    let facts = &doc["environment"]["settings"]["uml"];
    assert!(facts["guest_cmdline"].as_str().unwrap().ends_with(" preempt=full oscycles.probe=1"), "{facts}");
    // What the guest's kernel says it booted with (its /proc/cmdline).
    let inside = facts["host_inside"]["cmdline"].as_str().unwrap();
    assert!(inside.contains("preempt=full oscycles.probe=1"), "{inside}");
}

#[test]
fn a_gvisor_run_returns_results_naming_its_platform() {
    let (doc, _) = run("gvisor", "gvisor", &["--gvisor-platform", "ptrace"]);
    let r = &doc["results"][0];
    assert_eq!(r["environment"], "gvisor");
    assert_eq!(r["status"], "ok", "{r}");
    let facts = &doc["environment"]["settings"]["gvisor"];
    assert_eq!(facts["platform"], "ptrace", "{facts}");
    assert!(facts["runsc"].as_str().unwrap().starts_with("runsc version"), "{facts}");
    // The Sentry answers uname itself, with a release of its own.
    let inside = facts["kernel_inside"].as_str().unwrap();
    assert!(!inside.is_empty() && inside != host_release(), "{facts}");
    assert_eq!(facts["sandbox_uid"], 65534);
}

#[test]
fn a_gvisor_platform_that_hangs_is_given_up_within_the_init_timeout() {
    // gVisor's KVM platform hangs on a KVM that cannot run it (this
    // machine's kvm_pvm); where it runs, the run simply succeeds on it.
    let t = Instant::now();
    let (doc, _) = run("native,gvisor", "gvisor-kvm", &["--gvisor-platform", "kvm", "--init-timeout", "5"]);
    let took = t.elapsed();
    let r = &doc["results"][1];
    assert_eq!(r["environment"], "gvisor");
    if r["status"] == "ok" {
        assert_eq!(doc["environment"]["settings"]["gvisor"]["platform"], "kvm");
        return;
    }
    assert_eq!(r["status"], "not_applicable", "{r}");
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("platform kvm") && why.contains("within 5 s"), "{why}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(doc["results"][0]["status"], "ok", "native goes on");
}

/// Directories under the cgroup hierarchies named after a gVisor sandbox of oscycles.
fn sandbox_cgroups() -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from("/sys/fs/cgroup")];
    for depth in 0..4 {
        let mut next = Vec::new();
        for d in dirs {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if !e.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                if e.file_name().to_string_lossy().contains("oscycles-gvisor") {
                    out.push(p.display().to_string());
                }
                if depth < 3 {
                    next.push(p);
                }
            }
        }
        dirs = next;
    }
    out
}

#[test]
fn a_sigkilled_gvisor_run_leaves_no_sandbox_and_no_cgroup() {
    // Up once the sandbox is: its processes name runsc's state directory in the scratch directory.
    let how = common::StartStop {
        what: "sandbox",
        up: &|ps, _| ps.iter().any(|p| p.contains("runsc-sandbox")),
        poll: Duration::from_millis(50),
        settle: Duration::from_millis(500),
        stop: common::Stop::Kill,
        left: &processes_mentioning,
    };
    let args = ["run", "--suite", "syscall", "--env", "gvisor", "--gvisor-platform", "ptrace", "--quiet"];
    let d = common::start_stop_nothing_left(bin(), &args, "gvisor-sigkill", &how);
    let (scratch, results) = (d.join("scratch"), d.join("results"));
    let needle = scratch.to_str().unwrap().to_string();
    // The next run (a gvisor one) leaves neither cgroup nor files.
    let out = Command::new(bin())
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "2", "--batch-ms", "0.05", "--quiet"])
        .args(["--env", "gvisor", "--gvisor-platform", "ptrace"])
        .args(["--scratch", scratch.to_str().unwrap(), "--results", results.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(sandbox_cgroups().is_empty(), "{:?}", sandbox_cgroups());
    assert!(processes_mentioning(&needle).is_empty());
    let leftovers: Vec<_> = std::fs::read_dir(&scratch).unwrap().flatten().map(|e| e.path()).collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn without_runsc_or_linux_uml_the_environment_is_na_naming_the_install() {
    let d = tempdir("no-runsc");
    let out = Command::new(bin())
        .env("PATH", d.to_str().unwrap())
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "2", "--batch-ms", "0.05", "--quiet"])
        .args(["--env", "native,gvisor,uml", "--results", d.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = common::only_doc(&d);
    let rs = doc["results"].as_array().unwrap();
    assert_eq!(rs.len(), 3);
    assert_eq!(rs[0]["status"], "ok");
    for (r, install) in rs[1..].iter().zip(["apt-get install runsc", "apt-get install user-mode-linux"]) {
        assert_eq!(r["status"], "not_applicable", "{r}");
        assert!(r["reason"].as_str().unwrap().contains(install), "{r}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_uml_guest_that_mounts_hostfs_sees_nothing_of_the_host() {
    let d = tempdir("uml-hostfs");
    let out = Command::new(bin())
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--env", "uml", "--guest-mode", "probe-host"])
        .args(["--init-timeout", "120", "--vm-mem", "256", "--rounds", "1", "--quiet", "--results"])
        .arg(&d)
        .output()
        .unwrap();
    let doc = common::only_doc(&d);
    let why = doc["results"][0]["reason"].as_str().unwrap_or_default().to_string();
    assert!(why.contains("probe-host: hostfs of ''"), "the guest's probe did not run: {why} {}", String::from_utf8_lossy(&out.stderr));
    assert!(!why.contains("mounted"), "a UML guest mounted the host's files: {why}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Checks a column's placement fact: asked `at`, the intercepting side on
/// `intercepting`, the program's on CPU 0, and /proc's Cpus_allowed_list
/// read back during the run saying so for every thread of each side.
fn assert_placed(doc: &serde_json::Value, col: &str, at: &str, intercepting: u64) {
    let r = doc["results"].as_array().unwrap().iter().find(|r| r["environment"] == col).unwrap_or_else(|| panic!("no {col}: {doc}"));
    assert_eq!(r["status"], "ok", "{r}");
    let p = &doc["environment"]["settings"][col]["helper_placement"];
    assert_eq!(p["placement"], at, "{p}");
    assert_eq!(p["default"], "same", "{p}");
    assert_eq!(p["intercepting_cpu"], intercepting, "{p}");
    assert_eq!(p["program_cpu"], 0, "{p}");
    assert_eq!(p["failed"], 0, "{p}");
    assert_eq!(p["applied_from_hello"], true, "the placement asked for applied once the guest said hello: {p}");
    for (side, n) in [("intercepting", p["processes"]["intercepting"].as_u64()), ("program", p["processes"]["program"].as_u64())] {
        assert!(n.unwrap() >= 1, "no {side} process found: {p}");
    }
    let want = |cpu: u64| serde_json::json!([cpu.to_string()]);
    assert_eq!(p["cpus_allowed_read_back"]["intercepting"], want(intercepting), "{p}");
    assert_eq!(p["cpus_allowed_read_back"]["program"], want(0), "{p}");
}

/// Whether this process may run on CPUs 0 and 1 (the placements need two;
/// a run's CPUs are then 0 and 1 by default: --cpus would be checked again
/// by the guest's own run, which has one).
fn two_cpus() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap_or("").trim().to_string();
    list.starts_with("0-") || list.starts_with("0,1")
}

#[test]
fn uml_and_gvisor_at_both_helper_placements_are_a_column_each_placed_as_they_say() {
    assert!(two_cpus(), "this test needs CPUs 0 and 1 (the helper placements); this process may not use both");
    // 100 calls a batch: cross-CPU beside a CPU hog (stress-ng --cpu 2),
    // each of UML's system calls waits for the host's scheduler tick on the
    // partner CPU (3.8 ms a getpid, 10 to 100 times a quiet machine's run):
    // the placement is what this test is about, not the number.
    let args = ["--batches", "3", "--iterations", "100", "--rounds", "1", "--quiet", "--init-timeout", "120", "--vm-mem", "256"];
    let both = [&args[..], &["--gvisor-platform", "ptrace", "--helper-placement", "cross,same"]].concat();
    let (doc, _, _, _) = common::getpid_in("uml,gvisor", "helper-placement", &both);
    let cols: Vec<&str> = doc["results"].as_array().unwrap().iter().map(|r| r["environment"].as_str().unwrap()).collect();
    assert_eq!(cols, ["uml helper=same", "uml helper=cross", "gvisor helper=same", "gvisor helper=cross"]);
    for env in ["uml", "gvisor"] {
        assert_placed(&doc, &format!("{env} helper=same"), "same", 0);
        assert_placed(&doc, &format!("{env} helper=cross"), "cross", 1);
    }
    // One placement: the plain column, the placement a fact of it.
    let (doc, _, _, _) = common::getpid_in("uml", "helper-placement-default", &args);
    assert_placed(&doc, "uml", "same", 0);
}

#[test]
fn a_helper_placement_that_cannot_be_is_refused_with_exit_code_2() {
    for (args, needle) in [
        (vec!["--helper-placement", "diagonal"], "diagonal"),
        (vec!["--helper-placement", "cross", "--cpus", "0"], "--helper-placement cross needs a partner CPU"),
    ] {
        let d = tempdir("helper-placement-refused");
        let out = Command::new(bin())
            .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--env", "native,uml", "--quiet", "--results"])
            .arg(&d)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "nothing measured, nothing written");
        let _ = std::fs::remove_dir_all(&d);
    }
}
