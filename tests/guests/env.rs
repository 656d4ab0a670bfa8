//! Environments: a container proves its isolation; a QEMU/TCG guest boots
//! the initramfs oscycles writes and returns parseable results; a guest
//! that panics or hangs ends in a clear reason within its timeout.

use oscycles::data::results::{CaseStatus, RunDoc};
use std::process::Command;
use std::time::Duration;

use crate::common;
use common::tempdir;

/// A tiny getpid run in `env` with extra arguments; the saved document, typed.
fn run(env: &str, name: &str, extra: &[&str]) -> (RunDoc, Duration) {
    let mut args = vec!["--batches", "3", "--iterations", "1000", "--quiet"];
    args.extend(extra);
    // Guests boot slower while the other tests' guests share the CPUs: a generous default.
    if !extra.contains(&"--init-timeout") {
        args.extend(["--init-timeout", "120"]);
    }
    let (doc, took, _, _) = common::getpid_in(env, name, &args);
    (serde_json::from_value(doc).expect("a run document"), took)
}

fn host_interfaces() -> Vec<String> {
    std::fs::read_dir("/sys/class/net").unwrap().flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect()
}

#[test]
fn the_container_is_pid_1_without_host_interfaces() {
    let (doc, _) = run("container", "container", &[]);
    let r = &doc.results[0];
    assert_eq!(r.environment.as_deref(), Some("container"));
    assert_eq!(r.status, CaseStatus::Ok, "{r:?}");
    let facts = &doc.environment.settings["container"];
    assert_eq!(facts["pid_inside"], 1, "{facts}");
    assert_eq!(facts["network_interfaces"], serde_json::json!(["lo"]), "{facts}");
    assert_eq!(facts["hostname"], "oscycles-container");
    // The kernel's counters open inside too (the host's kernel counts), or, where
    // perf_event_paranoid is above 1, the container's user namespace (no CAP_PERFMON in the
    // host's) may not open them: then the case is measured and the reason names the setting.
    let counters = r.counters.as_ref();
    let counted = counters.is_some_and(|c| c.events.contains_key("context_switches"));
    let why = counters.and_then(|c| c.reason.as_deref()).unwrap_or("");
    assert!(counted || why.contains("perf_event_paranoid"), "{:?}", r.counters);
    assert!(host_interfaces().iter().any(|i| i != "lo"), "the host has interfaces the container does not see");
}

#[test]
fn a_tcg_guest_boots_the_initramfs_and_returns_results() {
    let (doc, _) = run("qemu-tcg", "tcg", &["--accel", "tcg"]);
    let r = &doc.results[0];
    assert_eq!(r.environment.as_deref(), Some("qemu-tcg"));
    assert_eq!(r.status, CaseStatus::Ok, "{r:?}");
    assert!(r.metrics[0].summary.median > 0.0);
    let facts = &doc.environment.settings["qemu-tcg"];
    assert_eq!(facts["clean_exit"], true, "{facts}");
    assert_eq!(facts["accel"], "tcg");
    assert!(facts["kernel_inside"].as_str().is_some_and(|k| !k.is_empty()));
    // The guest's kernel counted its software events.
    let c = r.counters.as_ref().expect("the guest's counts");
    assert_eq!(facts["kernel_inside"], c.kernel.as_str(), "{c:?}");
    assert!(c.events.contains_key("minor_faults"), "{c:?}");
    assert!(c.unavailable.get("core_cycles").is_some_and(|w| !w.is_empty()) || c.events.contains_key("core_cycles"), "{c:?}");
}

#[test]
fn a_guest_that_panics_ends_with_a_reason() {
    let (doc, took) = run("qemu-tcg", "panic", &["--guest-mode", "panic", "--init-timeout", "60", "--env-timeout", "90"]);
    let r = &doc.results[0];
    assert_eq!(r.status, CaseStatus::NotApplicable, "{r:?}");
    let why = r.reason.as_deref().unwrap();
    assert!(why.contains("without sending results"), "{why}");
    assert!(why.contains("Kernel panic") || why.contains("kill init"), "the console's last lines name the panic: {why}");
    assert!(took < Duration::from_secs(90), "{took:?}");
}

#[test]
fn a_guest_that_hangs_is_given_up_at_its_timeout() {
    let (doc, took) = run("qemu-tcg", "hang", &["--guest-mode", "hang", "--init-timeout", "60", "--env-timeout", "25"]);
    let r = &doc.results[0];
    assert_eq!(r.status, CaseStatus::NotApplicable, "{r:?}");
    assert!(r.reason.as_deref().unwrap().contains("did not finish within 25 s"), "{r:?}");
    assert!(took < Duration::from_secs(40), "{took:?}");
}

#[test]
fn an_environment_that_cannot_start_says_why_and_the_others_go_on() {
    // A missing --kernel is refused before anything runs (exit 2); a file
    // that is no kernel makes the guest unusable, and native goes on.
    let bad = tempdir("notakernel").join("vmlinuz");
    std::fs::write(&bad, b"this is not a kernel").unwrap();
    let (doc, _) = run("native,qemu-tcg", "nokernel", &["--kernel", bad.to_str().unwrap()]);
    let rs = &doc.results;
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].environment.as_deref(), Some("native"));
    assert_eq!(rs[0].status, CaseStatus::Ok);
    assert_eq!(rs[1].status, CaseStatus::NotApplicable);
    assert!(rs[1].reason.as_deref().unwrap().contains("qemu-tcg"), "{:?}", rs[1]);
    let missing = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--suite", "syscall", "--env", "native,qemu-tcg", "--kernel", "/nonexistent/vmlinuz", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}
