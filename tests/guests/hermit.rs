//! The hermit environment: oscycles' Hermit program booted by its own
//! loader under QEMU/TCG returns hermit-basic, STREAM and boot results; a
//! build that is missing or failed makes the cases n/a with the reason; a
//! guest that never says hello is given up at the init timeout; SIGKILL
//! leaves no QEMU behind.
//!
//! The booting tests need the build scripts/setup-hermit makes
//! (/var/cache/oscycles/hermit): they are `#[ignore]`d, so that `cargo test`
//! says they did not run, and scripts/test runs them (`--include-ignored`)
//! once setup-hermit has succeeded; a build that is missing then fails them.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use common::tempdir;

const CACHE: &str = "/var/cache/oscycles/hermit";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_oscycles")
}

/// The build setup-hermit made here: the test fails, saying why, without it.
/// Where the binary and setup-hermit take it from: OSCYCLES_HERMIT_CACHE,
/// else [`CACHE`] (a scratch cache shows the failure without touching the
/// shared one).
fn needs_build() {
    let c = std::env::var_os("OSCYCLES_HERMIT_CACHE").map_or_else(|| Path::new(CACHE).to_path_buf(), std::path::PathBuf::from);
    let at = c.display();
    if let Ok(why) = std::fs::read_to_string(c.join("failed")) {
        panic!("the Hermit build failed here: {why}; see {at}/build.log");
    }
    if let Some(f) = ["loader", "program", "check"].iter().find(|f| !c.join(f).is_file()) {
        panic!("no Hermit build here ({at}/{f} missing; scripts/setup-hermit builds it)");
    }
}

/// `oscycles run --env hermit` with `args` into a fresh directory (the
/// cache taken from `cache` when given); the document and how long it took.
fn run_hermit(name: &str, cache: Option<&Path>, args: &[&str]) -> (serde_json::Value, Duration) {
    // Emulated cycles, whose mechanics these tests check (tests/icount.rs checks the counter's).
    let extra: &[&str] = if args.contains(&"--accel") { &[] } else { &["--accel", "tcg"] };
    common::run_guest("hermit", "OSCYCLES_HERMIT_CACHE", name, cache, extra, args)
}

fn result<'a>(doc: &'a serde_json::Value, bench: &str) -> &'a serde_json::Value {
    doc["results"].as_array().unwrap().iter().find(|r| r["benchmark"] == bench).unwrap_or_else(|| panic!("no {bench} in {doc}"))
}

const GETPID: [&str; 6] = ["--suite", "syscall", "--bench", "syscall.getpid", "--batches", "3"];

#[test]
fn a_missing_or_failed_build_makes_the_cases_not_applicable_with_the_reason() {
    let empty = tempdir("hermit-none");
    let (doc, _) = run_hermit("hermit-missing", Some(&empty), &GETPID);
    let r = result(&doc, "syscall.getpid");
    assert_eq!(r["status"], "not_applicable", "{r}");
    assert!(r["reason"].as_str().unwrap().contains("not built"), "{r}");
    std::fs::write(empty.join("failed"), "building the Hermit kernel failed\nerror[E0000]: the compiler said no\n").unwrap();
    let (doc, _) = run_hermit("hermit-failed", Some(&empty), &GETPID);
    let why = result(&doc, "syscall.getpid")["reason"].as_str().unwrap().to_string();
    assert!(why.contains("build failed") && why.contains("the compiler said no"), "{why}");
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
#[ignore = "needs scripts/setup-hermit"]
fn the_hermit_program_boots_under_tcg_and_measures_the_basic_benchmark_stream_and_boot() {
    needs_build();
    let args = ["--suite", "hermit-basic,stream,boot", "--batches", "3", "--batch-ms", "2", "--mem-bytes", "8M", "--init-timeout", "120"];
    let (doc, _) = run_hermit("hermit-tcg", None, &args);
    for bench in ["syscall.getpid", "syscall.sched_yield", "hermit.sched_yield-busy", "hermit.malloc-1m", "pagefault.anon"] {
        let r = result(&doc, bench);
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["environment"], "hermit", "{r}");
        let m = &r["metrics"][0];
        assert!(m["summary"]["median"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(m["unit"], "tsc_cycles", "{r}");
        assert_eq!(m["samples"][0].as_array().unwrap().len(), 3, "three batches: {r}");
    }
    let stream =
        doc["results"].as_array().unwrap().iter().find(|r| r["benchmark"] == "stream.kernels" && r["params"]["threads"] == "single");
    let stream = stream.expect("a single-threaded STREAM case");
    assert_eq!(stream["status"], "ok", "{stream}");
    let triad = stream["metrics"].as_array().unwrap().iter().find(|m| m["name"] == "triad_rate").expect("a triad rate");
    assert!(triad["summary"]["median"].as_f64().unwrap() > 0.0, "{stream}");
    let boot = result(&doc, "boot.start");
    assert_eq!(boot["status"], "ok", "{boot}");
    let (to_init, to_result) =
        (boot["metrics"][0]["summary"]["median"].as_f64().unwrap(), boot["metrics"][1]["summary"]["median"].as_f64().unwrap());
    assert!(to_init > 0.0 && to_result >= to_init, "{boot}");
    let facts = &doc["environment"]["settings"]["hermit"];
    assert_eq!(facts["accel"], "tcg", "{facts}");
    assert_eq!(facts["clean_exit"], true, "{facts}");
    let check = &facts["independent_check"];
    assert!(check["getpid_cycles"].as_f64().is_some_and(|c| c > 0.0) && check["yield_cycles"].as_f64().is_some(), "{check}");
}

/// memcpy, the allocators and IPC between threads, from the same source as
/// the Linux families: every case the plan names comes back with its
/// parameters, measured (copies intact, every message verified by both
/// sides) or n/a with the reason a unikernel gives.
#[test]
#[ignore = "needs scripts/setup-hermit"]
fn the_hermit_program_measures_memcpy_the_allocators_and_futex_ipc_case_by_case() {
    needs_build();
    let mut args = vec!["--suite", "memcpy,alloc,l4-ipc", "--batches", "3", "--batch-ms", "1", "--init-timeout", "120"];
    for w in ["bytes=64", "bytes=4096", "words=0", "words=1"] {
        args.extend(["--where", w]);
    }
    let (doc, _) = run_hermit("hermit-families", None, &args);
    let results = doc["results"].as_array().unwrap();
    let of = |family: &str| results.iter().filter(|r| r["family"] == family).collect::<Vec<_>>();
    let (copies, allocs) = (of("memcpy"), of("alloc"));
    assert!(copies.len() >= 12 && allocs.len() >= 4, "{} memcpy, {} alloc cases", copies.len(), allocs.len());
    for r in copies.iter().chain(&allocs) {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["metrics"].as_array().unwrap().iter().all(|m| m["summary"]["median"].as_f64().unwrap() > 0.0), "{r}");
    }
    let futex: Vec<_> = of("ipc").into_iter().filter(|r| r["benchmark"] == "ipc.futex").collect();
    assert_eq!(futex.len(), 2 * 2 * 2, "words 0,1 x space x cores: {futex:?}");
    for r in &futex {
        let (intra, same) = (r["params"]["space"] == "intra", r["params"]["cores"] == "same");
        if intra && same {
            assert_eq!(r["status"], "ok", "{r}");
            let d = &r["details"];
            assert!(d["round_trips"].as_u64().unwrap() > 0, "{r}");
            assert_eq!(d["round_trips"], d["requests_verified_by_server"], "every request verified: {r}");
            let (one, rt) = (&r["metrics"][0], &r["metrics"][1]);
            assert_eq!((one["name"].as_str(), rt["name"].as_str()), (Some("one_way"), Some("round_trip")), "{r}");
            assert_eq!(one["summary"]["median"].as_f64().unwrap() * 2.0, rt["summary"]["median"].as_f64().unwrap(), "{r}");
        } else {
            assert_eq!(r["status"], "not_applicable", "{r}");
            let why = r["reason"].as_str().unwrap();
            assert!(why.contains(if intra { "smp" } else { "address space" }), "{why}");
        }
    }
    let pipe = results.iter().find(|r| r["benchmark"] == "ipc.pipe").expect("ipc.pipe planned");
    assert_eq!(pipe["status"], "not_applicable", "{pipe}");
    assert!(pipe["reason"].as_str().unwrap().contains("futex"), "{pipe}");
}

/// oscycles' own KVM VMM boots the same loader and program (uhyve's way, no
/// QEMU): measured where KVM runs ordinary guests, n/a with the reason where
/// it cannot (no /dev/kvm; kvm_pvm's instruction emulator), never a hang.
#[test]
#[ignore = "needs scripts/setup-hermit"]
fn hermit_in_oscycles_own_vmm_is_measured_or_not_applicable_with_the_reason() {
    needs_build();
    let d = tempdir("hermit-microvm");
    let t = Instant::now();
    let out = Command::new(bin())
        .args(["run", "--env", "hermit-microvm", "--quiet", "--init-timeout", "60", "--results"])
        .arg(&d)
        .args(GETPID)
        .output()
        .expect("the binary runs");
    let doc = common::only_doc(&d);
    // Measured, or n/a (a run that measured nothing fails: issue 43, item 8).
    common::assert_ended_as_measured(&out, &doc);
    assert!(t.elapsed() < Duration::from_secs(90), "{:?}", t.elapsed());
    let r = result(&doc, "syscall.getpid");
    assert_eq!(r["environment"], "hermit-microvm", "{r}");
    match r["status"].as_str() {
        Some("ok") => assert!(r["metrics"][0]["summary"]["median"].as_f64().unwrap() > 0.0, "{r}"),
        Some("not_applicable") => {
            let why = r["reason"].as_str().unwrap();
            assert!(why.starts_with("hermit-microvm: ") && why.contains("KVM"), "{why}");
        }
        _ => panic!("neither measured nor n/a: {r}"),
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
#[ignore = "needs scripts/setup-hermit"]
fn a_hermit_guest_that_never_says_hello_is_given_up_at_the_init_timeout() {
    needs_build();
    let (doc, took) = run_hermit("hermit-silent", None, &[&GETPID[..], &["--guest-mode", "no-init", "--init-timeout", "10"]].concat());
    let r = result(&doc, "syscall.getpid");
    assert_eq!(r["status"], "not_applicable", "{r}");
    assert!(r["reason"].as_str().unwrap().contains("did not reach its /init within 10 s"), "{r}");
    assert!(took < Duration::from_secs(40), "{took:?}");
}

#[test]
#[ignore = "needs scripts/setup-hermit"]
fn a_sigkilled_run_leaves_no_hermit_qemu() {
    needs_build();
    common::sigkill_leaves_no_qemu("hermit", "hermit-sigkill", &GETPID);
}

/// A Hermit program that never says hello is given up, and its console is
/// kept beside the run's document (the reason says where).
#[test]
#[ignore = "needs scripts/setup-hermit"]
fn a_failed_hermit_guest_leaves_its_console_beside_the_run() {
    let args = [&GETPID[..], &["--accel", "tcg", "--guest-mode", "no-init", "--init-timeout", "10"]].concat();
    common::assert_failed_guest_console_kept("hermit", "hermit-kept", &args, "");
}
