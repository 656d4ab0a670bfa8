//! scripts/validate's LMBench rows, without lmbench: a stand-in bin
//! directory whose programs print what lmbench's print (to stderr, in its
//! formats) after checking the arguments the script gives them. Its tiny
//! mode must run every row on both sides, parse every line and print the
//! table; a directory that is not an lmbench build is refused (exit 2).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// The LMBench table's rows the script compares (lat_proc exec is left out on purpose).
const ROWS: &[&str] = &[
    "lat_ctx -s 0 2",
    "lat_ctx -s 0 4",
    "lat_ctx -s 16 2",
    "lat_ctx -s 16 4",
    "lat_fifo",
    "lat_pipe",
    "lat_unix",
    "lat_syscall null",
    "lat_proc procedure",
    "lat_proc fork",
    "lat_pagefault",
    "bw_file_rd 64M io_only",
    "bw_mmap_rd 64M mmap_only",
    "bw_mmap_rd 64M open2close",
    "bw_mem rd",
    "bw_mem wr",
    "bw_mem cp",
    "(libc memcpy) / bw_mem bcopy",
    "bw_pipe",
    "bw_unix",
];

/// One shell program standing in for all of lmbench's: it refuses
/// arguments lmbench's would not take from the script (a missing file, a
/// size that is not a number, lat_ctx without -s), and prints its format.
const FAKE: &str = r#"#!/bin/sh
set -e
[ "$1" = -N ] && shift 2
[ "$ENOUGH" -gt 0 ] || { echo "ENOUGH not set" >&2; exit 9; }
case "$(basename "$0")" in
lat_ctx) [ "$1" = -s ] || exit 9; printf '\n"size=%sk ovr=1.50\n%s 2.50\n' "$2" "$3" >&2 ;;
lat_pipe) echo "Pipe latency: 5.1000 microseconds" >&2 ;;
lat_unix) echo "AF_UNIX sock stream latency: 6.2000 microseconds" >&2 ;;
lat_fifo) echo "Fifo latency: 5.3000 microseconds" >&2 ;;
lat_syscall) [ "$1" = null ] || exit 9; echo "Simple syscall: 0.2050 microseconds" >&2 ;;
lat_proc) case "$1" in procedure) echo "Procedure call: 0.0012 microseconds" >&2 ;; fork) echo "Process fork+exit: 120.5000 microseconds" >&2 ;; *) exit 9 ;; esac ;;
lat_pagefault) [ "$(stat -c %s "$1")" = 67108864 ] || exit 9; echo "Pagefaults on $1: 0.1500 microseconds" >&2 ;;
bw_file_rd|bw_mmap_rd) [ "$1" = 64m ] && [ "$(stat -c %s "$3")" = 67108864 ] || exit 9; echo "67.11 9000.00" >&2 ;;
bw_mem) [ "$1" -gt 512 ] || exit 9; echo "16.78 5000.00" >&2 ;;
bw_pipe) echo "Pipe bandwidth: 3000.00 MB/sec" >&2 ;;
bw_unix) echo "AF_UNIX sock stream bandwidth: 3100.00 MB/sec" >&2 ;;
*) exit 9 ;;
esac
"#;

const PROGRAMS: &[&str] = &[
    "lat_ctx",
    "lat_pipe",
    "lat_unix",
    "lat_fifo",
    "lat_syscall",
    "lat_proc",
    "lat_pagefault",
    "bw_file_rd",
    "bw_mmap_rd",
    "bw_mem",
    "bw_pipe",
    "bw_unix",
];

fn fake_lmbench(dir: &Path) {
    for p in PROGRAMS {
        let path = dir.join(p);
        std::fs::write(&path, FAKE).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn the_lmbench_rows_run_and_parse_in_tiny_mode() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = tempfile::tempdir().unwrap();
    fake_lmbench(bin.path());
    let out = Command::new("python3")
        .args(["scripts/validate", "--tiny", "--only", "lmbench", "--lmbench"])
        .arg(bin.path())
        .current_dir(root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}:\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    for row in ROWS {
        let line = stdout.lines().find(|l| l.starts_with(&format!("{row:<40}"))).unwrap_or_else(|| panic!("no row {row} in:\n{stdout}"));
        // unit, oscycles median/min/max, lmbench's median/min/max, ratio, per-round ratio range: all numbers.
        let words: Vec<&str> = line[40..].split_whitespace().collect();
        assert!(words.len() >= 11 && words[1..10].iter().all(|w| w.parse::<f64>().is_ok()), "{line}");
        let lmbench: f64 = words[4].parse().unwrap();
        assert!(lmbench > 0.0, "lmbench's number parsed: {line}");
        assert!(["yes", "named:", "OFF"].contains(&words[10]), "{line}");
    }
    // The stand-in's numbers came through in the right units (us -> ns).
    let syscall = stdout.lines().find(|l| l.starts_with("lat_syscall null")).unwrap();
    assert_eq!(syscall[40..].split_whitespace().nth(4), Some("205"), "{syscall}");
    let pipe = stdout.lines().find(|l| l.starts_with("bw_pipe ")).unwrap();
    assert_eq!(pipe[40..].split_whitespace().nth(4), Some("3000"), "{pipe}");
    assert!(stdout.contains("lat_proc exec: not run"), "{stdout}");
    // Both sides read files written as lmbench's script writes its own.
    assert!(stdout.contains("file rows: both sides read 64 MiB files written in 8 KiB writes (8192 write calls here)"), "{stdout}");
}

/// --file-writes 1m: lmbench's file in 1 MiB writes, and oscycles' file
/// cases at that layout (the script stops where an oscycles case says it
/// wrote its file otherwise); a layout there is not is refused (exit 2).
#[test]
fn the_file_rows_read_files_written_alike_on_both_sides() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = tempfile::tempdir().unwrap();
    fake_lmbench(bin.path());
    let run = |layout: &str| {
        Command::new("python3")
            .args([
                "scripts/validate",
                "--tiny",
                "--only",
                "lmbench",
                "--rows",
                "lat_pagefault,bw_file_rd,bw_mmap_rd",
                "--file-writes",
                layout,
                "--lmbench",
            ])
            .arg(bin.path())
            .current_dir(root)
            .output()
            .unwrap()
    };
    let out = run("1m");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}:\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("written in 1 MiB writes (64 write calls here)") && stdout.contains("--where file_writes=1m"), "{stdout}");
    for row in ["lat_pagefault", "bw_file_rd 64M io_only", "bw_mmap_rd 64M mmap_only", "bw_mmap_rd 64M open2close"] {
        assert!(stdout.lines().any(|l| l.starts_with(&format!("{row:<40}"))), "no row {row} in:\n{stdout}");
    }
    let bad = run("2m");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--file-writes"), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn a_directory_that_is_not_an_lmbench_build_is_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .args(["scripts/validate", "--only", "lmbench", "--lmbench"])
        .arg(empty.path())
        .current_dir(root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not an lmbench bin directory") && err.contains("lat_ctx"), "{err}");
    let none = Command::new("python3")
        .args(["scripts/validate", "--only", "lmbench"])
        .env_remove("LMBENCH_BIN")
        .current_dir(root)
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2), "--only lmbench without a build is bad usage");
}
