//! The net and blk suites leave nothing behind: the veth pair's network
//! namespaces are gone (no process holds them) and the block test file is
//! removed, after a run and after a SIGTERM in the middle of one.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::tempdir;

/// The network namespaces process `pid` holds open as descriptors.
fn held_netns(pid: u32) -> BTreeSet<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .map(|l| l.display().to_string())
                .filter(|l| l.starts_with("net:"))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether any process anywhere still has namespace `ns` (as its own or as a descriptor).
fn anyone_holds(ns: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read_link(e.path().join("ns/net")).is_ok_and(|l| l.display().to_string() == ns)
            || std::fs::read_dir(e.path().join("fd"))
                .is_ok_and(|d| d.flatten().any(|f| std::fs::read_link(f.path()).is_ok_and(|l| l.display().to_string() == ns)))
    })
}

fn run(results: &Path, scratch: &Path, point_ms: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args([
            "run",
            "--suite",
            "net,blk",
            "--bench",
            "net.udp,net.tcp,blk.read,blk.write",
            "--point-ms",
            point_ms,
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
        .unwrap()
}

#[test]
fn a_run_leaves_no_namespace_and_no_file() {
    let (results, scratch) = (tempdir("io-done"), tempdir("io-done-scratch"));
    let mut child = run(&results, &scratch, "10");
    let pid = child.id();
    let mut seen = BTreeSet::new();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(120) {
        seen.extend(held_netns(pid));
        std::thread::sleep(Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("net: payload throughput") && text.contains("blk: sequential throughput"), "{text}");
    if common::is_root() {
        assert!(text.contains("veth UDP"), "{text}");
        assert!(!seen.is_empty(), "the veth cases held no namespace while running");
    }
    for ns in &seen {
        assert!(!anyone_holds(ns), "{ns} outlived the run");
    }
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0, "the block test files are removed");
    let _ = std::fs::remove_dir_all(results);
    let _ = std::fs::remove_dir_all(scratch);
}

#[test]
fn a_sigterm_mid_run_leaves_no_namespace_and_no_file() {
    let (results, scratch) = (tempdir("io-term"), tempdir("io-term-scratch"));
    let child = run(&results, &scratch, "400");
    let pid = child.id();
    let t = Instant::now();
    let mut seen = BTreeSet::new();
    // Wait for a veth case (root) or the first blk file, then interrupt.
    loop {
        seen.extend(held_netns(pid));
        let files = std::fs::read_dir(&scratch).map(|d| d.count()).unwrap_or(0);
        if (common::is_root() && !seen.is_empty()) || files > 0 || t.elapsed() > Duration::from_secs(60) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: sending SIGTERM to our own child process.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    for ns in &seen {
        assert!(!anyone_holds(ns), "{ns} outlived the interrupted run");
    }
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0, "the block test file is removed on interrupt");
    let _ = std::fs::remove_dir_all(results);
    let _ = std::fs::remove_dir_all(scratch);
}
