//! Seed 003's basic-benchmark and STREAM tables, and seed 002's memcpy and
//! allocator comparisons.

use super::table::{Table, cycles};
use crate::results::{CaseResult, CaseStatus, RunDoc};
use std::collections::BTreeSet;

/// A cell: the median of `metric` in cycles, or n/a / fail.
fn cell(r: Option<&CaseResult>, metric: &str) -> (String, String) {
    match r {
        None => ("-".into(), String::new()),
        Some(r) if r.status == CaseStatus::Ok => match r.metric(metric) {
            Some(m) => (cycles(m.summary.median), format!("{:.1}%", m.summary.cv * 100.0)),
            None => ("-".into(), String::new()),
        },
        Some(r) => (if r.status == CaseStatus::NotApplicable { "n/a" } else { "fail" }.into(), r.reason.clone().unwrap_or_default()),
    }
}

/// Seed 003's "Results of the Basic Benchmark": one column per run's environment.
pub fn render_hermit(doc: &RunDoc) -> String {
    let rows: [(&str, &str, &str); 7] = [
        ("getpid", "syscall.getpid", "per_call"),
        ("sched_yield", "syscall.sched_yield", "per_call"),
        ("sched_yield, 2nd thread runnable", "hermit.sched_yield-busy", "per_op"),
        ("malloc (1 MiB) + free", "hermit.malloc-1m", "per_op"),
        ("write access (4 KiB page)", "pagefault.anon", "per_page"),
        ("write access, THP (per 4 KiB)", "pagefault.anon-thp", "per_page"),
        ("write access, huge page (per 4 KiB)", "pagefault.anon-hugetlb", "per_page"),
    ];
    let env = doc.environment.name.clone();
    let mut t = Table::new(&["System activity", &env, "CV", "note"], 1);
    t.also_left = vec![3];
    for (label, bench, metric) in rows {
        let r = doc.case(bench, |_| true);
        if r.is_none() {
            continue;
        }
        let (v, cv) = cell(r, metric);
        let (cv, note) = if v == "n/a" || v == "fail" { (String::new(), cv) } else { (cv, String::new()) };
        t.row(vec![label.into(), v, cv, note]);
    }
    if t.rows.is_empty() {
        return String::new();
    }
    format!("hermit-basic: results of the basic benchmark (seed 003), median TSC cycles per operation\n{}", t.render())
}

/// Seed 003's STREAM table, per thread configuration.
pub fn render_stream(doc: &RunDoc) -> String {
    let mut s = String::new();
    for r in doc.results.iter().filter(|r| r.benchmark == "stream.kernels") {
        let threads = r.param_str("threads").unwrap_or("?");
        let pl = r.placement.as_ref().map(|p| p.actors.clone()).unwrap_or_default();
        if r.status != CaseStatus::Ok {
            s += &format!("stream ({threads}): {}\n", r.reason.as_deref().unwrap_or("failed"));
            continue;
        }
        let bytes = r.details.get("array_bytes").and_then(|v| v.as_u64()).unwrap_or(0);
        let rule = if r.details.get("meets_4x_llc").and_then(|v| v.as_bool()) == Some(false) {
            " -- BELOW the 4x LLC rule (quick or --mem-bytes)"
        } else {
            ""
        };
        s += &format!(
            "\nSTREAM ({threads}: {pl}), based on a variant of the STREAM benchmark; arrays of {} MiB{rule}; best of {} repetitions\n",
            bytes >> 20,
            r.details.get("repetitions_counted").and_then(|v| v.as_u64()).unwrap_or(0)
        );
        let mut t = Table::new(&["Function", "Best Rate MB/s", "Avg time", "Min time", "Max time"], 1);
        for k in ["copy", "scale", "add", "triad"] {
            let (Some(rate), Some(time)) = (r.metric(&format!("{k}_rate")), r.metric(&format!("{k}_time"))) else { continue };
            let name = format!("{}{}", k[..1].to_uppercase(), &k[1..]);
            t.row(vec![
                name,
                format!("{:.1}", rate.summary.max),
                format!("{:.6}", time.summary.mean),
                format!("{:.6}", time.summary.min),
                format!("{:.6}", time.summary.max),
            ]);
        }
        s += &t.render();
    }
    s.trim_start().to_string()
}

/// memcpy: one table per implementation, rows sizes, columns src/dst offsets; MB/s.
pub fn render_memcpy(doc: &RunDoc) -> String {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.family == "memcpy").collect();
    if rs.is_empty() {
        return String::new();
    }
    let offsets: Vec<(u64, u64)> = {
        let mut seen = Vec::new();
        for r in &rs {
            let o = (r.param_u64("src_off").unwrap_or(0), r.param_u64("dst_off").unwrap_or(0));
            if !seen.contains(&o) {
                seen.push(o);
            }
        }
        seen
    };
    let sizes: BTreeSet<u64> = rs.iter().filter_map(|r| r.param_u64("bytes")).collect();
    let mut s = "memcpy: MB/s by size (rows) and source/destination offset from a page boundary (columns \"src/dst\")\n".to_string();
    for imp in ["libc", "bytes", "words"] {
        let bench = format!("memcpy.{imp}");
        if !rs.iter().any(|r| r.benchmark == bench) {
            continue;
        }
        let mut headers = vec![format!("{imp}: bytes")];
        headers.extend(offsets.iter().map(|(a, b)| format!("{a}/{b}")));
        let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
        for &size in &sizes {
            let mut row = vec![human(size)];
            for &(so, dof) in &offsets {
                let r = rs.iter().find(|r| {
                    r.benchmark == bench
                        && r.param_u64("bytes") == Some(size)
                        && r.param_u64("src_off") == Some(so)
                        && r.param_u64("dst_off") == Some(dof)
                });
                row.push(match r {
                    Some(r) if r.status == CaseStatus::Ok => {
                        r.metric("bandwidth").map_or("-".into(), |m| format!("{:.0}", m.summary.median))
                    }
                    Some(_) => "fail".into(),
                    None => "-".into(),
                });
            }
            t.row(row);
        }
        s += &t.render();
    }
    s
}

fn human(b: u64) -> String {
    match b {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// Allocators: rows allocator x block size, columns live-set sizes; cycles per free+allocate pair.
pub fn render_alloc(doc: &RunDoc) -> String {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.family == "alloc").collect();
    if rs.is_empty() {
        return String::new();
    }
    let lives: BTreeSet<u64> = rs.iter().filter_map(|r| r.param_u64("live")).collect();
    let sizes: BTreeSet<u64> = rs.iter().filter_map(|r| r.param_u64("bytes")).collect();
    let mut headers = vec!["allocator".to_string(), "fill".into(), "block".into()];
    headers.extend(lives.iter().map(|l| format!("live {l}")));
    let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 3);
    for kind in ["system", "slab", "bitmap", "best-fit"] {
        for fill in ["half", "nearly-full"] {
            for &size in &sizes {
                let row_rs: Vec<&&CaseResult> = rs
                    .iter()
                    .filter(|r| {
                        r.benchmark == format!("alloc.{kind}") && r.param_str("fill") == Some(fill) && r.param_u64("bytes") == Some(size)
                    })
                    .collect();
                if row_rs.is_empty() {
                    continue;
                }
                let mut row = vec![kind.to_string(), fill.into(), human(size)];
                for &l in &lives {
                    row.push(cell(row_rs.iter().find(|r| r.param_u64("live") == Some(l)).map(|r| **r), "per_pair").0);
                }
                t.row(row);
            }
        }
    }
    format!(
        "alloc: median TSC cycles per free + allocate pair (a pseudo-random live block replaced); half = arena twice the live set, nearly-full = 1% spare\n{}",
        t.render()
    )
}
