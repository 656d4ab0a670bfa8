//! Output that fits a screen: a run ends with a summary of at most 25 lines;
//! every table fits 80 and 120 columns (wide ones split); `list` fits;
//! completions, a man page and `--json` for scripts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common;
use common::{only_json, tempdir};

const QUICK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quick.json");

fn oscycles_at(columns: usize, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oscycles")).env("COLUMNS", columns.to_string()).args(args).output().expect("the binary runs")
}

fn too_long(text: &str, width: usize) -> Vec<String> {
    text.lines().filter(|l| l.chars().count() > width).map(|l| format!("{} chars: {l}", l.chars().count())).collect()
}

/// The quick fixture with the parallel family measured on 1..=16 CPUs (as a
/// 16-CPU machine would), written to `dir`.
fn sixteen_cpus(dir: &Path) -> PathBuf {
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(QUICK).unwrap()).unwrap();
    let results = v["results"].as_array_mut().unwrap();
    let template: Vec<serde_json::Value> = results.iter().filter(|r| r["family"] == "parallel").cloned().collect();
    assert!(!template.is_empty(), "the fixture has parallel results");
    results.retain(|r| r["family"] != "parallel");
    for t in &template {
        for n in 1..=16u64 {
            let mut r = t.clone();
            r["params"]["instances"] = serde_json::json!(n);
            results.push(r);
        }
    }
    let p = dir.join("sixteen.json");
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    p
}

#[test]
fn the_summary_of_a_quick_run_fits_one_screen() {
    let out = oscycles_at(100, &["show", QUICK]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find("summary (").expect("a summary");
    let summary: Vec<&str> = text[start..].lines().take_while(|l| !l.starts_with("every column") && !l.is_empty()).collect();
    assert!(summary.len() <= 25, "{} lines:\n{}", summary.len(), summary.join("\n"));
    assert!(too_long(&summary.join("\n"), 100).is_empty());
    for headline in ["null system call", "one-way IPC, same-core", "one-way IPC, cross-core", "fork", "STREAM triad"] {
        assert!(text[start..].contains(headline), "{headline} missing:\n{}", &text[start..]);
    }
    assert!(text.contains("+-"), "headlines carry their interval");
}

#[test]
fn every_table_fits_80_and_120_columns() {
    let d = tempdir("screen-widths");
    let sixteen = sixteen_cpus(&d);
    for doc in [Path::new(QUICK), sixteen.as_path()] {
        for width in [80, 120] {
            let out = oscycles_at(width, &["show", doc.to_str().unwrap()]);
            assert!(out.status.success());
            let text = String::from_utf8_lossy(&out.stdout);
            // show leads with the published forms; a quick run's per-family tables are --full's, named in a line.
            assert!(text.contains("lmbench latencies") && text.contains("the quick suite's per-family tables (syscall"), "{text}");
            // A line naming the document's path (the command for more) may be as long as the path.
            let long: Vec<String> = too_long(&text, width).into_iter().filter(|l| !l.contains(doc.to_str().unwrap())).collect();
            assert!(long.is_empty(), "{} at {width} columns: {long:#?}", doc.display());
        }
    }
    // --full is as wide as the tables are (the same on any terminal).
    let full = String::from_utf8_lossy(&oscycles_at(80, &["show", QUICK, "--full"]).stdout).to_string();
    let wide = String::from_utf8_lossy(&oscycles_at(1000, &["show", QUICK, "--full"]).stdout).to_string();
    let tables = |t: &str| t[t.find("syscall: cost per call").unwrap()..t.find("summary (").unwrap()].to_string();
    assert_eq!(tables(&full), tables(&wide));
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn list_fits_and_tells_everything_about_one_benchmark() {
    let out = oscycles_at(100, &["list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(too_long(&text, 100).is_empty(), "{:#?}", too_long(&text, 100));
    assert!(text.contains("ipc.pipe") && text.contains("suites:"));
    let one = String::from_utf8_lossy(&oscycles_at(80, &["list", "ipc.pipe"]).stdout).to_string();
    assert!(one.contains("parameters:") && one.contains("runs here:"), "{one}");
    assert!(too_long(&one, 80).is_empty());
    let long = String::from_utf8_lossy(&oscycles_at(80, &["list", "--long"]).stdout).to_string();
    assert!(long.matches("parameters:").count() > 50 && too_long(&long, 80).is_empty());
    assert_eq!(oscycles_at(80, &["list", "ipc.carrier-pigeon"]).status.code(), Some(2));
}

#[test]
fn completions_man_page_and_json_for_scripts() {
    let bash = oscycles_at(100, &["completions", "bash"]);
    assert!(bash.status.success());
    let b = String::from_utf8_lossy(&bash.stdout);
    assert!(b.contains("complete") && b.contains("oscycles") && b.contains("--rounds"), "a bash completion script");
    let man = oscycles_at(100, &["man"]);
    assert!(man.status.success());
    let m = String::from_utf8_lossy(&man.stdout);
    assert!(m.contains(".TH") && m.contains("oscycles"), "a roff man page");
    // --json: the document, and nothing else, on standard output.
    let d = tempdir("screen-json");
    let out = common::tiny_run(&d, 100, &["--bench", "syscall.getpid", "--rounds", "1", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert_eq!(doc["results"][0]["benchmark"], "syscall.getpid");
    let shown: serde_json::Value =
        serde_json::from_slice(&oscycles_at(100, &["show", only_json(&d).to_str().unwrap(), "--json"]).stdout).unwrap();
    assert_eq!(shown["id"], doc["id"]);
    let cmp = oscycles_at(100, &["compare", QUICK, QUICK, "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&cmp.stdout).unwrap();
    assert!(rows.as_array().is_some_and(|r| !r.is_empty() && r[0]["judged"]["verdict"].is_string()));
    // A run ends with the summary, not 300 lines of tables.
    let plain = common::tiny_run(&d, 100, &["--rounds", "1"]);
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(text.contains("summary (") && !text.contains("syscall: cost per call") && text.contains("oscycles show"), "{text}");
    let _ = std::fs::remove_dir_all(d);
}
