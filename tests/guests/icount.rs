//! QEMU's instruction counter (`--accel icount`): a guest's cells are guest
//! instructions per operation, two runs of the same plan give identical
//! figures, `compare` calls every counted cell `same`, and what measures
//! time is n/a with the reason.

use std::path::Path;
use std::process::Command;

use crate::common;
use common::{only_doc, only_json, tempdir};

/// getpid and sched_yield in a qemu-tcg guest under the counter, into `dir`.
fn counted_run(dir: &Path, extra: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--suite", "syscall,boot", "--bench", "syscall.getpid,syscall.sched_yield,boot.start"])
        .args(["--env", "qemu-tcg", "--accel", "icount", "--batches", "3", "--iterations", "2000", "--quiet"])
        .args(["--init-timeout", "180", "--results"])
        .arg(dir)
        .args(extra)
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn cell<'a>(doc: &'a serde_json::Value, bench: &str) -> &'a serde_json::Value {
    doc["results"].as_array().unwrap().iter().find(|r| r["benchmark"] == bench).unwrap_or_else(|| panic!("no {bench}: {doc}"))
}

#[test]
fn two_counted_runs_give_identical_figures_and_compare_calls_them_same() {
    let (a, b) = (tempdir("icount-a"), tempdir("icount-b"));
    // Different seeds: the guest's order is fixed under the counter anyway.
    counted_run(&a, &["--seed", "1"]);
    counted_run(&b, &["--seed", "2"]);
    let (da, db) = (only_doc(&a), only_doc(&b));
    let facts = &da["environment"]["settings"]["qemu-tcg"];
    assert_eq!(facts["accel"], "icount", "{facts}");
    assert_eq!(facts["vcpus"], 1, "{facts}");
    assert_eq!(facts["host_inside"]["counts_instructions"], true, "{facts}");
    for bench in ["syscall.getpid", "syscall.sched_yield"] {
        let (ca, cb) = (cell(&da, bench), cell(&db, bench));
        assert_eq!(ca["status"], "ok", "{ca}");
        let (ma, mb) = (&ca["metrics"][0], &cb["metrics"][0]);
        assert_eq!(ma["unit"], "guest_instructions", "{ma}");
        assert!(ma.get("ns").is_none(), "no nanoseconds that are really instructions: {ma}");
        assert!(!ma["samples"].as_array().unwrap().is_empty(), "{ma}");
        assert_eq!(ma["samples"], mb["samples"], "{bench}: two runs, the same counts");
        let e = &ma["estimate"];
        assert_eq!((&e["interval"]["lo"], &e["interval"]["hi"]), (&e["median"], &e["median"]), "an exact cell: {e}");
        // A getpid takes some hundreds of instructions, not tens or tens of thousands.
        let m = ma["summary"]["median"].as_f64().unwrap();
        assert!((100.0..20_000.0).contains(&m), "{bench}: {m}");
    }
    // Boot time is time: n/a under the counter, with the reason.
    let boot = cell(&da, "boot.start");
    assert_eq!(boot["status"], "not_applicable", "{boot}");
    assert!(boot["reason"].as_str().unwrap().contains("instruction counter"), "{boot}");
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["compare", "--json"])
        .arg(only_json(&a))
        .arg(only_json(&b))
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.get("rows").unwrap_or(&rows).as_array().unwrap_or_else(|| panic!("{rows}")).clone();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in &rows {
        assert_eq!(r["judged"]["verdict"], "same", "{r}");
        assert_eq!(r["unit"], "guest_instructions", "{r}");
    }
    let text = Command::new(env!("CARGO_BIN_EXE_oscycles")).arg("show").arg(only_json(&a)).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("guest instructions") && text.contains("instruction counter"), "{text}");
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn qemu_tcg_refuses_kvm_and_names_qemu_kvm() {
    let d = tempdir("icount-kvm");
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--suite", "syscall", "--env", "qemu-tcg", "--accel", "kvm", "--quiet", "--results"])
        .arg(&d)
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("qemu-kvm"), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&d);
}
