//! The mach environment: GNU Mach (Debian's i386 kernel) booted by QEMU
//! with oscycles' bootstrap task returns results naming the kernel, in
//! guest instructions under --accel icount, the same counts twice; a kernel
//! panic and a task that never says hello are n/a within the init timeout
//! with the console's words; SIGKILL leaves no QEMU behind; a missing
//! kernel is n/a with the command that installs it.
//!
//! The booting tests need what scripts/setup-mach unpacks
//! (/var/cache/oscycles/mach): they are `#[ignore]`d, so that `cargo test`
//! says they did not run, and scripts/test runs them (`--include-ignored`)
//! once setup-mach has succeeded; a kernel that is missing then fails them.

use std::path::Path;
use std::time::Duration;

use crate::common;
use common::tempdir;

const KERNEL: &str = "/var/cache/oscycles/mach/gnumach";

/// The kernel setup-mach unpacked here: the test fails, saying so, without it.
fn needs_kernel() {
    assert!(Path::new(KERNEL).is_file(), "{KERNEL} missing (scripts/setup-mach unpacks it)");
}

/// `oscycles run --env mach` with `args` into a fresh directory; the
/// document and how long it took.
fn run_mach(name: &str, cache: Option<&Path>, args: &[&str]) -> (serde_json::Value, Duration) {
    common::run_guest("mach", "OSCYCLES_MACH_CACHE", name, cache, &["--rounds", "1"], args)
}

fn results<'a>(doc: &'a serde_json::Value, bench: &str) -> Vec<&'a serde_json::Value> {
    common::results_of(doc, bench)
}

fn result<'a>(doc: &'a serde_json::Value, bench: &str) -> &'a serde_json::Value {
    results(doc, bench).into_iter().next().unwrap_or_else(|| panic!("no {bench} in {doc}"))
}

const GETPID: [&str; 6] = ["--suite", "syscall", "--bench", "syscall.getpid", "--batches", "3"];

#[test]
fn a_missing_kernel_makes_the_cases_not_applicable_with_the_command_that_installs_it() {
    let empty = tempdir("mach-none");
    let (doc, _) = run_mach("mach-missing", Some(&empty), &GETPID);
    let r = result(&doc, "syscall.getpid");
    assert_eq!(r["status"], "not_applicable", "{r}");
    assert!(r["reason"].as_str().unwrap().contains("scripts/setup-mach"), "{r}");
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
#[ignore = "needs scripts/setup-mach"]
fn a_mach_run_names_the_kernel_and_counts_the_same_instructions_twice() {
    needs_kernel();
    let args = [
        "--suite",
        "l4-ipc,syscall",
        "--bench",
        "ipc.mach-msg,syscall.getpid,syscall.null",
        "--where",
        "words=0",
        "--where",
        "words=16",
        "--batches",
        "3",
        "--accel",
        "icount",
    ];
    let (a, _) = run_mach("mach-a", None, &args);
    let (b, _) = run_mach("mach-b", None, &args);
    let facts = &a["environment"]["settings"]["mach"];
    assert!(facts["kernel_version"].as_str().unwrap().contains("GNU Mach 2:1.8+git20221224-2"), "{facts}");
    assert_eq!(facts["arch"], "i386");
    assert_eq!(facts["accel"], "icount");
    let one_way = |doc: &serde_json::Value, space: &str, words: u64| {
        let r = results(doc, "ipc.mach-msg")
            .into_iter()
            .find(|r| r["params"]["space"] == space && r["params"]["words"] == words && r["params"]["cores"] == "same")
            .unwrap_or_else(|| panic!("no mach-msg {space} {words}w"))
            .clone();
        assert_eq!(r["status"], "ok", "{r}");
        let m = r["metrics"].as_array().unwrap().iter().find(|m| m["name"] == "one_way").unwrap().clone();
        assert_eq!(m["unit"], "guest_instructions", "{m}");
        assert_eq!(r["details"]["requests_verified_by_server"], r["details"]["round_trips"], "{r}");
        m["summary"]["median"].as_f64().unwrap()
    };
    for space in ["intra", "inter"] {
        let (small, large) = (one_way(&a, space, 0), one_way(&a, space, 16));
        assert!(small > 0.0 && large > small, "{space}: {small} then {large} with 16 words");
        assert_eq!(small, one_way(&b, space, 0), "{space}: the counter is exact");
    }
    let cross = results(&a, "ipc.mach-msg").into_iter().find(|r| r["params"]["cores"] == "cross").unwrap();
    assert_eq!(cross["status"], "not_applicable");
    assert!(cross["reason"].as_str().unwrap().contains("uniprocessor"), "{cross}");
    let check = &facts["independent_check"];
    assert!(check["mach_msg_one_way"].as_f64().is_some_and(|x| x > 0.0), "{check}");
    let pipe = result(&a, "syscall.getpid");
    assert_eq!(pipe["status"], "ok", "{pipe}");
}

/// `--kernel-counters cache` (issue 59): every measured cell carries the
/// kernel's metrics, its kernel told by GNU Mach's own ELF; an RPC between
/// two tasks writes CR3, one between two threads of a task does not; the
/// independent check's bare loop, counted by the same plugin in the same
/// invocation, runs the same kernel path as the 0-word cell between threads.
#[test]
#[ignore = "needs scripts/setup-mach"]
fn a_counted_run_carries_the_kernels_metrics() {
    needs_kernel();
    let (doc, _) = run_mach("mach-counted", None, &common::counted_args("ipc.mach-msg,syscall.getpid,syscall.null", "cache", &[]));
    common::assert_every_cell_counted(&doc, "mach");
    let base = &doc["environment"]["settings"]["mach"]["kernel_counters"]["kernel_base"];
    assert_eq!(base, "0xc1000000", "GNU Mach's text, from its ELF");
    common::assert_counted_ipc(&doc, "mach", "ipc.mach-msg", 1.0);
}

#[test]
#[ignore = "needs scripts/setup-mach"]
fn a_kernel_panic_is_not_applicable_with_the_consoles_words() {
    needs_kernel();
    let (doc, took) = run_mach("mach-panic", None, &[&GETPID[..], &["--guest-mode", "panic", "--init-timeout", "15"]].concat());
    let r = result(&doc, "syscall.getpid");
    assert_eq!(r["status"], "not_applicable", "{r}");
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("panic") && why.contains("Cannot load user executable module"), "{why}");
    assert!(took < Duration::from_secs(60), "{took:?}");
}

#[test]
#[ignore = "needs scripts/setup-mach"]
fn a_task_that_never_says_hello_is_given_up_at_the_init_timeout() {
    needs_kernel();
    let (doc, took) = run_mach("mach-silent", None, &[&GETPID[..], &["--guest-mode", "hang", "--init-timeout", "5"]].concat());
    let r = result(&doc, "syscall.getpid");
    assert_eq!(r["status"], "not_applicable", "{r}");
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("within 20 s") && why.contains("start"), "4 x --init-timeout: {why}");
    assert!(took < Duration::from_secs(60), "{took:?}");
}

#[test]
#[ignore = "needs scripts/setup-mach"]
fn a_sigkilled_run_leaves_no_mach_qemu() {
    needs_kernel();
    common::sigkill_leaves_no_qemu("mach", "mach-sigkill", &GETPID);
}

/// A kernel that panics is stopped, and its console is kept beside the
/// run's document (the reason says where).
#[test]
#[ignore = "needs scripts/setup-mach"]
fn a_failed_mach_guest_leaves_its_console_beside_the_run() {
    let args = [&GETPID[..], &["--rounds", "1", "--guest-mode", "panic", "--init-timeout", "15"]].concat();
    common::assert_failed_guest_console_kept("mach", "mach-kept", &args, "Cannot load user executable module");
}
