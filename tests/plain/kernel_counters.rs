//! `--kernel-counters` (issue 59): a counted run's document (a real one,
//! tests/fixtures/kernel-counters.json: qemu-tcg under --accel icount with
//! the plugin, getpid, sched_yield, pipe and futex at 0 words on one core)
//! carries the kernel's metrics with their units through show, report and
//! compare; a QEMU that cannot load the plugin makes the cells n/a with
//! the reason.

use std::process::Command;

use crate::common::{ok, only_json, oscycles, tempdir};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/kernel-counters.json");

#[test]
fn a_counted_runs_kernel_metrics_keep_their_units_through_show_report_and_compare() {
    // show's brief layout prints the page's form in kernel instructions too.
    let brief = ok(&oscycles(&["show", FIXTURE]));
    assert!(brief.contains("in the page's own quantity") && brief.contains("(kernel instr)"), "{brief}");
    let shown = ok(&oscycles(&["show", "--full", FIXTURE]));
    for want in ["where the instructions go", "(kernel instr)", "kernel / user / total", "6480 / 255 / 6735"] {
        assert!(shown.contains(want), "show lacks {want:?}:\n{shown}");
    }
    let csv = ok(&oscycles(&["report", FIXTURE, "--csv", "-"]));
    for want in [
        ",kernel_instructions,guest_instructions,median,",
        ",kernel_loads,guest_memory_accesses,",
        ",kernel_entries,guest_kernel_entries,",
        ",cr3_writes,guest_cr3_writes,",
    ] {
        assert!(csv.contains(want), "csv lacks {want:?}");
    }
    let d = tempdir("kcount-report");
    ok(&oscycles(&["report", FIXTURE, "--json", d.join("json").to_str().unwrap()]));
    let copied = std::fs::read_to_string(only_json(&d.join("json"))).unwrap();
    assert!(copied.contains("\"guest_kernel_entries\""), "the JSON copy lacks the kernel entries' unit");
    let html = d.join("report");
    ok(&oscycles(&["report", FIXTURE, "--html", html.to_str().unwrap()]));
    let page = std::fs::read_to_string(html.join("index.html")).unwrap();
    assert!(page.contains("where the instructions go") && page.contains("kernel / user / total"));
    // The same run against itself: every counter of every cell the same.
    let compared = ok(&oscycles(&["compare", FIXTURE, FIXTURE]));
    let rows: Vec<&str> = compared.lines().filter(|l| l.contains("[qemu-tcg]")).collect();
    for metric in ["kernel_instructions", "user_instructions", "kernel_loads", "kernel_stores", "kernel_entries", "cr3_writes"] {
        let of: Vec<&&str> = rows.iter().filter(|l| l.contains(&format!(" {metric} "))).collect();
        assert_eq!(of.len(), 6, "{metric}: a row per cell\n{compared}");
        assert!(of.iter().all(|l| l.trim_end().ends_with("same")), "{metric}\n{compared}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// A fake `qemu-system-x86_64` on PATH that knows its machines but not
/// `-plugin` (a QEMU built without plugins).
#[test]
fn a_qemu_without_plugins_makes_the_cells_na_with_the_reason() {
    let d = tempdir("kcount-noplugin");
    let qemu = d.join("qemu-system-x86_64");
    let script = "#!/bin/sh\ncase \"$*\" in *'-machine help'*) printf 'Supported machines are:\\nq35  Standard PC\\n'; exit 0;; esac\necho \"$0: -plugin: invalid option\" >&2\nexit 1\n";
    std::fs::write(&qemu, script).unwrap();
    std::fs::set_permissions(&qemu, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let kernel = d.join("vmlinuz");
    std::fs::write(&kernel, b"not booted").unwrap();
    let path = format!("{}:{}", d.display(), std::env::var("PATH").unwrap_or_default());
    let results = d.join("results");
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .env("PATH", path)
        .args(["run", "--suite", "syscall", "--bench", "syscall.getpid", "--env", "qemu-tcg", "--kernel-counters", "on", "--quiet"])
        .arg("--kernel")
        .arg(&kernel)
        .arg("--results")
        .arg(&results)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(only_json(&results)).unwrap()).unwrap();
    let r = &doc["results"][0];
    assert_eq!(r["status"], "not_applicable", "{}", String::from_utf8_lossy(&out.stderr));
    let why = r["reason"].as_str().unwrap();
    assert!(why.contains("does not load oscycles' plugin") && why.contains("-plugin: invalid option"), "{why}");
    std::fs::remove_dir_all(d).unwrap();
}
