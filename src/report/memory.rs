//! Seed 003's basic-benchmark and STREAM tables, and seed 002's memcpy and
//! allocator comparisons.

use crate::named::Named;
use super::rows::{Row, unmeasured_mark};
use super::table::{Table, bytes_label, cycles};
use crate::results::{CaseResult, CaseStatus, RunDoc};
use crate::schema::{alloc, hermit, memcpy, pagefault, stream, syscall};
use std::collections::BTreeSet;

/// A cell: the median of `metric` in cycles, or n/a / fail.
fn cell(r: Option<&CaseResult>, metric: &str) -> (String, String) {
    match r {
        None => ("-".into(), String::new()),
        Some(r) if r.status == CaseStatus::Ok => match r.metric(metric) {
            Some(m) => (cycles(m.summary.median), format!("{:.1}%", m.summary.cv * 100.0)),
            None => ("-".into(), String::new()),
        },
        Some(r) => (unmeasured_mark(r.status).into(), r.reason.clone().unwrap_or_default()),
    }
}

/// The rows of seed 003's basic benchmark.
fn hermit_rows() -> Vec<Row> {
    let mut rows = Row::each(syscall::id, syscall::PER_CALL, &[("getpid", syscall::GETPID, ""), ("sched_yield", syscall::SCHED_YIELD, "")]);
    rows.extend(Row::each(
        hermit::id,
        hermit::PER_OP,
        &[("sched_yield, 2nd thread runnable", hermit::SCHED_YIELD_BUSY, ""), ("malloc (1 MiB) + free", hermit::MALLOC_1M, "")],
    ));
    rows.extend(Row::each(
        pagefault::id,
        pagefault::PER_PAGE,
        &[
            ("write access (4 KiB page)", pagefault::ANON, ""),
            ("write access, THP (per 4 KiB)", pagefault::ANON_THP, ""),
            ("write access, huge page (per 4 KiB)", pagefault::ANON_HUGETLB, ""),
        ],
    ));
    rows
}

/// Seed 003's "Results of the Basic Benchmark": one column per run's environment.
pub fn render_hermit(doc: &RunDoc) -> String {
    let env = doc.environment.name.clone();
    let mut t = Table::new(&["System activity", &env, "CV", "note"], 1);
    t.also_left = vec![3];
    for row in hermit_rows() {
        let Some(r) = row.case(doc) else { continue };
        let (v, cv) = cell(Some(r), &row.metric);
        let (cv, note) = if v == "n/a" || v == "fail" { (String::new(), cv) } else { (cv, String::new()) };
        t.row(vec![row.label, v, cv, note]);
    }
    if t.rows.is_empty() {
        return String::new();
    }
    format!("hermit-basic: results of the basic benchmark (seed 003), median TSC cycles per operation\n{}", t.render())
}

/// Seed 003's STREAM table, per thread configuration.
pub fn render_stream(doc: &RunDoc) -> String {
    let mut s = String::new();
    let id = stream::id(stream::KERNELS_BENCH);
    for r in doc.results.iter().filter(|r| r.benchmark == id) {
        let threads = r.params_as::<stream::Params>().map_or("?", |p| p.threads.name());
        let pl = r.placement.as_ref().map(|p| p.actors.clone()).unwrap_or_default();
        if r.status != CaseStatus::Ok {
            s += &format!("stream ({threads}): {}\n", r.reason.as_deref().unwrap_or("failed"));
            continue;
        }
        let detail = |k: &str| r.details.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
        let rule = if r.details.get(stream::details::MEETS_4X_LLC).and_then(|v| v.as_bool()) == Some(false) {
            " -- BELOW the 4x LLC rule (quick or --mem-bytes)"
        } else {
            ""
        };
        s += &format!(
            "\nSTREAM ({threads}: {pl}), based on a variant of the STREAM benchmark; arrays of {} MiB{rule}; best of {} repetitions\n",
            detail(stream::details::ARRAY_BYTES) >> 20,
            detail(stream::details::REPETITIONS_COUNTED)
        );
        let mut t = Table::new(&["Function", "Best Rate MB/s", "Avg time", "Min time", "Max time"], 1);
        for k in stream::KERNELS {
            let (Some(rate), Some(time)) = (r.metric(&stream::rate(k)), r.metric(&stream::time(k))) else { continue };
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
    let rs: Vec<(&CaseResult, memcpy::Params)> = super::typed(doc.results.iter().filter(|r| r.family == memcpy::FAMILY));
    if rs.is_empty() {
        return String::new();
    }
    let offsets: Vec<(u64, u64)> = super::distinct(rs.iter().map(|(_, p)| (p.src_off, p.dst_off)));
    let sizes: BTreeSet<u64> = rs.iter().map(|(_, p)| p.bytes).collect();
    let mut s = "memcpy: MB/s by size (rows) and source/destination offset from a page boundary (columns \"src/dst\")\n".to_string();
    for imp in memcpy::IMPLS {
        let bench = memcpy::id(imp);
        if !rs.iter().any(|(r, _)| r.benchmark == bench) {
            continue;
        }
        let mut headers = vec![format!("{imp}: bytes")];
        headers.extend(offsets.iter().map(|(a, b)| format!("{a}/{b}")));
        let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
        for &bytes in &sizes {
            let mut row = vec![bytes_label(bytes)];
            for &(src_off, dst_off) in &offsets {
                let want = memcpy::Params { bytes, src_off, dst_off };
                row.push(match rs.iter().find(|(r, p)| r.benchmark == bench && *p == want).map(|(r, _)| r) {
                    Some(r) if r.status == CaseStatus::Ok => {
                        r.metric(memcpy::BANDWIDTH).map_or("-".into(), |m| format!("{:.0}", m.summary.median))
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

/// Allocators: rows allocator x block size, columns live-set sizes; cycles per free+allocate pair.
pub fn render_alloc(doc: &RunDoc) -> String {
    let rs: Vec<(&CaseResult, alloc::Params)> = super::typed(doc.results.iter().filter(|r| r.family == alloc::FAMILY));
    if rs.is_empty() {
        return String::new();
    }
    let lives: BTreeSet<u64> = rs.iter().map(|(_, p)| p.live).collect();
    let sizes: BTreeSet<u64> = rs.iter().map(|(_, p)| p.bytes).collect();
    let mut headers = vec!["allocator".to_string(), "fill".into(), "block".into()];
    headers.extend(lives.iter().map(|l| format!("live {l}")));
    let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 3);
    for kind in alloc::KINDS {
        let bench = alloc::id(kind);
        for &fill in alloc::Fill::ALL {
            for &size in &sizes {
                let row_rs: Vec<&(&CaseResult, alloc::Params)> =
                    rs.iter().filter(|(r, p)| r.benchmark == bench && p.fill == Some(fill) && p.bytes == size).collect();
                if row_rs.is_empty() {
                    continue;
                }
                let mut row = vec![kind.to_string(), fill.name().into(), bytes_label(size)];
                for &l in &lives {
                    row.push(cell(row_rs.iter().find(|(_, p)| p.live == l).map(|(r, _)| *r), alloc::PER_PAIR).0);
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
