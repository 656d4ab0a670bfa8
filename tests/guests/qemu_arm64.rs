//! The qemu-arm64 environment: Debian's arm64 kernel under
//! qemu-system-aarch64 with the aarch64 oscycles as /init returns its cells
//! in guest instructions, beside qemu-tcg's in the same run, identical
//! across two runs; `--accel tcg` gives emulated time; `--accel kvm` is
//! refused with a sentence; a missing or failed kernel, a missing or
//! foreign guest binary make the cases n/a with the command that makes
//! them; a guest that panics ends with the reason; SIGKILL leaves no QEMU.
//!
//! The booting tests need the kernel scripts/setup-qemu-arm64 unpacks
//! (/var/cache/oscycles/qemu-arm64) and the aarch64 build scripts/build-aarch64
//! makes: they are ignored unless asked for (`--include-ignored`, after
//! those), and fail, saying why, where either is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::{only_doc, results_of, tempdir};

const CACHE: &str = "/var/cache/oscycles/qemu-arm64";

/// scripts/build-aarch64's output beside this test's oscycles.
fn aarch64_build() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_oscycles"));
    exe.ancestors().nth(3).unwrap().join("aarch64/aarch64-unknown-linux-gnu/release/oscycles")
}

/// What the booting tests need: the test fails, saying why, without it.
fn needs_setup() {
    let c = Path::new(CACHE);
    if let Ok(why) = std::fs::read_to_string(c.join("failed")) {
        panic!("setting up qemu-arm64's kernel failed here: {why}");
    }
    assert!(c.join("version").is_file(), "no arm64 kernel here ({CACHE}/version missing; scripts/setup-qemu-arm64 unpacks it)");
    assert!(aarch64_build().is_file(), "no aarch64 oscycles at {} (scripts/build-aarch64 builds it)", aarch64_build().display());
}

/// `oscycles run` with `args` into `dir`; its exit status must be 0.
fn run_into(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--quiet", "--init-timeout", "240", "--results"])
        .arg(dir)
        .args(args)
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// getpid, sched_yield and the pipe at 0 words between processes on one core.
const CELLS: [&str; 12] = [
    "--suite",
    "syscall,l4-ipc",
    "--bench",
    "syscall.getpid,syscall.sched_yield,ipc.pipe",
    "--where",
    "words=0",
    "--where",
    "space=inter",
    "--where",
    "cores=same",
    "--batches",
    "3",
];

/// The one case of `bench` in `env`.
fn cell<'a>(doc: &'a serde_json::Value, env: &str, bench: &str) -> &'a serde_json::Value {
    results_of(doc, bench).into_iter().find(|r| r["environment"] == env).unwrap_or_else(|| panic!("no {bench} in {env}: {doc}"))
}

#[test]
#[ignore = "needs scripts/setup-qemu-arm64"]
fn two_counted_runs_beside_qemu_tcg_give_identical_columns_in_guest_instructions() {
    needs_setup();
    let (a, b) = (tempdir("arm64-a"), tempdir("arm64-b"));
    for (d, seed) in [(&a, "1"), (&b, "2")] {
        run_into(d, &[&["--env", "qemu-tcg,qemu-arm64", "--iterations", "2000", "--seed", seed], &CELLS[..]].concat());
    }
    let (da, db) = (only_doc(&a), only_doc(&b));
    let facts = &da["environment"]["settings"]["qemu-arm64"];
    assert_eq!((facts["accel"].as_str(), facts["vcpus"].as_u64()), (Some("icount"), Some(1)), "{facts}");
    assert_eq!((facts["vmm"].as_str(), facts["cpu_model"].as_str()), (Some("qemu-system-aarch64"), Some("cortex-a53")), "{facts}");
    assert!(facts["machine"].as_str().unwrap().contains("dtb-randomness=off"), "{facts}");
    assert!(facts["guest_cmdline"].as_str().unwrap().contains("randomize_kstack_offset=off"), "{facts}");
    assert!(facts["kernel_package"].as_str().is_some_and(|p| p.starts_with("linux-image-") && p.contains("-arm64")), "{facts}");
    assert_eq!(facts["clean_exit"], true, "the guest powered off through PSCI: {facts}");
    for env in ["qemu-tcg", "qemu-arm64"] {
        for bench in ["syscall.getpid", "syscall.sched_yield", "ipc.pipe"] {
            let (ca, cb) = (cell(&da, env, bench), cell(&db, env, bench));
            assert_eq!(ca["status"], "ok", "{ca}");
            let (ma, mb) = (&ca["metrics"][0], &cb["metrics"][0]);
            assert_eq!(ma["unit"], "guest_instructions", "{env} {bench}: {ma}");
            assert!(!ma["samples"].as_array().unwrap().is_empty(), "{ma}");
            assert_eq!(ma["samples"], mb["samples"], "{env} {bench}: two runs, the same counts");
            let m = ma["summary"]["median"].as_f64().unwrap();
            assert!((100.0..50_000.0).contains(&m), "{env} {bench}: {m}");
        }
    }
    // Two instruction sets, two kernels' paths: the columns are not one copied.
    let getpid = |env| cell(&da, env, "syscall.getpid")["metrics"][0]["summary"]["median"].as_f64().unwrap();
    assert_ne!(getpid("qemu-tcg"), getpid("qemu-arm64"));
    let inside = &facts["host_inside"];
    assert_eq!(inside["counts_instructions"], true, "{facts}");
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
#[ignore = "needs scripts/setup-qemu-arm64"]
fn tcg_gives_emulated_time_not_instructions() {
    needs_setup();
    let d = tempdir("arm64-tcg");
    run_into(&d, &["--env", "qemu-arm64", "--accel", "tcg", "--suite", "syscall", "--bench", "syscall.getpid", "--batches", "3"]);
    let doc = only_doc(&d);
    let r = cell(&doc, "qemu-arm64", "syscall.getpid");
    assert_eq!(r["status"], "ok", "{r}");
    assert_ne!(r["metrics"][0]["unit"], "guest_instructions", "{r}");
    assert_eq!(doc["environment"]["settings"]["qemu-arm64"]["accel"], "tcg");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
#[ignore = "needs scripts/setup-qemu-arm64"]
fn a_guest_that_panics_ends_with_a_reason() {
    needs_setup();
    let args = ["--suite", "syscall", "--bench", "syscall.getpid", "--guest-mode", "panic", "--init-timeout", "120"];
    let (doc, _) = common::run_guest("qemu-arm64", "OSCYCLES_QEMU_ARM64_CACHE", "arm64-panic", None, &[], &args);
    let r = results_of(&doc, "syscall.getpid")[0];
    assert_eq!(r["status"], "not_applicable", "{r}");
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("Kernel panic") || why.contains("kill init"), "the console's last lines name the panic: {why}");
}

#[test]
#[ignore = "needs scripts/setup-qemu-arm64"]
fn a_sigkilled_run_leaves_no_arm64_qemu() {
    needs_setup();
    common::sigkill_leaves_no_qemu("qemu-arm64", "arm64-sigkill", &["--suite", "syscall", "--bench", "syscall.getpid"]);
}

#[test]
fn accelerators_other_than_tcg_and_icount_are_refused_with_a_sentence() {
    let d = tempdir("arm64-kvm");
    for accel in ["kvm", "hvf"] {
        let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
            .args(["run", "--suite", "syscall", "--env", "qemu-arm64", "--accel", accel, "--quiet", "--results"])
            .arg(&d)
            .output()
            .expect("the binary runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--accel {accel}: {err}");
        assert!(err.contains(accel) && err.contains("icount") && err.contains("tcg"), "--accel {accel}: {err}");
    }
    assert!(std::fs::read_dir(&d).map_or(true, |mut e| e.next().is_none()), "nothing measured, nothing saved");
    let _ = std::fs::remove_dir_all(&d);
}

const GETPID: [&str; 6] = ["--suite", "syscall", "--bench", "syscall.getpid", "--batches", "3"];

/// The reason of the one getpid case of a run against the kernel directory `cache`.
fn reason_with(cache: &Path, name: &str, extra: &[&str]) -> String {
    let (doc, _) = common::run_guest("qemu-arm64", "OSCYCLES_QEMU_ARM64_CACHE", name, Some(cache), extra, &GETPID);
    let r = results_of(&doc, "syscall.getpid")[0];
    assert_eq!(r["status"], "not_applicable", "{r}");
    r["reason"].as_str().unwrap().to_string()
}

#[test]
fn a_missing_or_failed_kernel_makes_the_cases_not_applicable_with_the_command_that_sets_it_up() {
    let empty = tempdir("arm64-none");
    let why = reason_with(&empty, "arm64-missing", &[]);
    assert!(why.contains("no arm64 kernel") && why.contains("scripts/setup-qemu-arm64"), "{why}");
    std::fs::write(empty.join("failed"), "downloading or unpacking Debian's arm64 kernel failed\nE: 404  Not Found\n").unwrap();
    let why = reason_with(&empty, "arm64-failed", &[]);
    assert!(why.contains("failed") && why.contains("404") && why.contains("scripts/setup-qemu-arm64"), "{why}");
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn a_missing_or_foreign_guest_binary_makes_the_cases_not_applicable_with_the_command_that_builds_it() {
    let cache = tempdir("arm64-fake-kernel");
    std::fs::create_dir_all(cache.join("boot")).unwrap();
    std::fs::write(cache.join("boot/vmlinuz-6.1.0-1-arm64"), b"never booted").unwrap();
    std::fs::write(cache.join("version"), "linux-image-6.1.0-1-arm64 6.1.1-1\n").unwrap();
    let missing = cache.join("no-such-oscycles");
    let why = reason_with(&cache, "arm64-no-exe", &["--arm64-exe", missing.to_str().unwrap()]);
    assert!(why.contains("no aarch64 oscycles") && why.contains("scripts/build-aarch64"), "{why}");
    // This very binary: an x86-64 executable.
    let why = reason_with(&cache, "arm64-x86-exe", &["--arm64-exe", env!("CARGO_BIN_EXE_oscycles")]);
    assert!(why.contains("no static aarch64 executable") && why.contains("scripts/build-aarch64"), "{why}");
    let _ = std::fs::remove_dir_all(&cache);
}
