//! The file rows' parameter `file_writes`: by default the file cases read a
//! file written as lmbench's script writes its own (8 KiB writes), another
//! layout only where `--where file_writes=...` names it, and the kernel
//! counted the writes asked for; a layout there is not is refused (exit 2).

use crate::common::{only_doc, tempdir};
use std::process::Command;

const FILE_CASES: &str = "pagefault.file,bw.file-rd,bw.mmap-rd,bw.mmap-rd-open2close";

/// A tiny run of the file cases with `wheres` (`--where` values), its document.
fn file_run(name: &str, wheres: &[&str]) -> serde_json::Value {
    let d = tempdir(name);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_oscycles"));
    cmd.args([
        "run",
        "--suite",
        "lmbench",
        "--bench",
        FILE_CASES,
        "--rounds",
        "1",
        "--batches",
        "2",
        "--batch-ms",
        "1",
        "--quiet",
        "--results",
    ])
    .arg(&d);
    for w in wheres {
        cmd.args(["--where", w]);
    }
    let out = cmd.output().expect("the binary runs");
    assert!(out.status.success(), "{}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    let doc = only_doc(&d);
    let _ = std::fs::remove_dir_all(&d);
    doc
}

/// Per file case: (benchmark, layout, bytes per write, write calls the kernel counted).
fn layouts(doc: &serde_json::Value) -> Vec<(String, String, u64, u64)> {
    let results = doc["results"].as_array().unwrap();
    results
        .iter()
        .map(|r| {
            assert_eq!(r["status"], "ok", "{r}");
            let d = &r["details"];
            (
                r["benchmark"].as_str().unwrap().to_string(),
                r["params"]["file_writes"].as_str().unwrap_or("none").to_string(),
                d["file_write_bytes"].as_u64().unwrap_or(0),
                d["file_write_calls"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn the_file_cases_read_a_file_written_in_the_writes_asked() {
    let default = layouts(&file_run("file-writes-default", &[]));
    assert_eq!(default.len(), 4, "{default:?}");
    for (bench, layout, bytes, calls) in &default {
        // 64 MiB in 8 KiB writes, as lmbench's lmdd writes its file.
        assert_eq!((layout.as_str(), *bytes, *calls), ("8k", 8192, 8192), "{bench}");
    }
    let other = layouts(&file_run("file-writes-other", &["file_writes=1m", "file_writes=4k"]));
    assert_eq!(other.len(), 8, "{other:?}");
    for (bench, layout, bytes, calls) in &other {
        let want: (u64, u64) = if layout == "1m" { (1 << 20, 64) } else { (4096, 16384) };
        assert_eq!((*bytes, *calls), want, "{bench} {layout}");
    }
}

#[test]
fn a_file_layout_there_is_not_is_refused_with_exit_2() {
    let d = tempdir("file-writes-bad");
    let out = Command::new(env!("CARGO_BIN_EXE_oscycles"))
        .args(["run", "--suite", "lmbench", "--where", "file_writes=2m", "--results"])
        .arg(&d)
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--where file_writes=2m: no case has that value") && err.contains("file_writes (1m, 4k, 8k)"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
