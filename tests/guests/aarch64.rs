//! oscycles built for aarch64 (scripts/build-aarch64) runs the quick suite
//! to completion under `qemu-aarch64` (QEMU's user mode, on this x86-64
//! machine): every case measured or n/a with its reason, the clock the
//! generic timer. The time is emulated: a check of the mechanics (the
//! aarch64 clock, assembly loops, system calls, the run document), not of
//! any figure.
//!
//! Needs the aarch64 toolchain (scripts/setup-aarch64) and the binary
//! scripts/build-aarch64 builds: ignored unless asked for
//! (`--include-ignored`; scripts/test runs it after building), and fails,
//! saying why, where the binary is missing.

use std::path::{Path, PathBuf};

use crate::common;

/// Where scripts/build-aarch64 leaves the binary.
const BIN: &str = "target/aarch64/aarch64-unknown-linux-gnu/release/oscycles";

/// The aarch64 binary: the test fails, saying why, without it.
fn needs_build() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join(BIN);
    assert!(
        bin.is_file(),
        "no aarch64 build of oscycles ({} missing; scripts/build-aarch64 builds it, after scripts/setup-aarch64)",
        bin.display()
    );
    bin
}

#[test]
#[ignore = "needs scripts/setup-aarch64 and scripts/build-aarch64"]
fn the_aarch64_binary_runs_the_quick_suite_under_qemu_user_mode() {
    let bin = needs_build();
    let dir = common::tempdir("aarch64-quick");
    // The children it starts run under qemu-aarch64 too (scripts/setup-aarch64
    // registers it with binfmt_misc), the dynamically linked ones (proc's
    // forker) with the aarch64 C library of libc6-arm64-cross.
    let out = std::process::Command::new("qemu-aarch64")
        .env("QEMU_LD_PREFIX", "/usr/aarch64-linux-gnu")
        .arg(&bin)
        .args(["run", "--quiet", "--results"])
        .arg(&dir)
        .output()
        .expect("qemu-aarch64 runs (package qemu-user, scripts/setup-aarch64)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the quick suite under qemu-aarch64 failed ({}): {err}", out.status);
    let doc = common::only_doc(&dir);
    assert_eq!(doc["status"], "complete", "{err}");
    let results = doc["results"].as_array().expect("the document lists its results");
    assert!(results.iter().any(|r| r["status"] == "ok"), "nothing measured: {err}");
    for r in results {
        let (id, status) = (&r["benchmark"], r["status"].as_str().unwrap_or("?"));
        assert!(matches!(status, "ok" | "not_applicable"), "{id}: {status}: {}", r["reason"]);
        if status == "not_applicable" {
            assert!(r["reason"].as_str().is_some_and(|w| !w.is_empty()), "{id} is n/a without a reason");
        }
    }
    let text = doc.to_string();
    assert!(text.contains("cntvct_el0"), "the clock is aarch64's generic timer");
    std::fs::remove_dir_all(&dir).unwrap();
}
