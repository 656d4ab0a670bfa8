//! The basic-benchmark and STREAM tables of the HermitCore PVH/HVM benchmark post, and the memcpy and
//! allocator comparisons.

use super::figures::{Plot, Plots, context, env_prefix, lines_of, point};
use super::plot::{Lines, Point};
use super::rows::{Row, unmeasured_mark};
use super::table::{TextTable, bytes_label, cycles};
use super::tables::{Draws, Table};
use crate::named::Named;
use crate::results::{CaseResult, CaseStatus, RunDoc};
use crate::schema::{alloc, hermit, memcpy, pagefault, stream, syscall};
use crate::sources::Source;
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

/// The rows of the HermitCore post's basic benchmark.
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

/// The HermitCore post's "Results of the Basic Benchmark": one column for the run's environment.
pub fn render_hermit(doc: &RunDoc) -> String {
    render_hermit_envs(&[(doc.environment.name.as_str(), doc)])
}

/// The HermitCore post's basic table with one column per environment (name, its results).
pub fn render_hermit_envs(envs: &[(&str, &RunDoc)]) -> String {
    let mut head = vec!["System activity"];
    head.extend(envs.iter().map(|e| e.0));
    let one = envs.len() == 1;
    if one {
        head.push("CV");
    }
    head.push("note");
    let mut t = TextTable::new(&head, 1);
    t.also_left = vec![head.len() - 1];
    for row in hermit_rows() {
        let cases: Vec<Option<&CaseResult>> = envs.iter().map(|(_, d)| row.case(d)).collect();
        if cases.iter().all(Option::is_none) {
            continue;
        }
        let mut cells = vec![row.label.clone()];
        // Why a cell has no number, each reason once with the environments it holds for.
        let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
        for (c, (name, _)) in cases.iter().zip(envs) {
            let (v, cv) = cell(*c, &row.metric);
            let failed = v == "n/a" || v == "fail";
            if failed && !cv.is_empty() {
                match notes.iter_mut().find(|n| n.0 == cv) {
                    Some(n) => n.1.push(name),
                    None => notes.push((cv.clone(), vec![name])),
                }
            }
            cells.push(v);
            if one {
                cells.push(if failed { String::new() } else { cv });
            }
        }
        let said: Vec<String> = notes.into_iter().map(|(why, who)| if one { why } else { format!("{}: {why}", who.join(", ")) }).collect();
        cells.push(said.join("; "));
        t.row(cells);
    }
    if t.rows.is_empty() {
        return String::new();
    }
    format!("hermit-basic: the basic benchmark of {}, median TSC cycles per operation\n{}", Source::HermitCoreXen.short(), t.render())
}

/// The HermitCore post's STREAM table, per thread configuration.
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
        let mut t = TextTable::new(&["Function", "Best Rate MB/s", "Avg time", "Min time", "Max time"], 1);
        for k in stream::KERNELS {
            if let Some(cells) = stream_cells(r, k) {
                t.row([vec![title(k)], cells].concat());
            }
        }
        s += &t.render();
    }
    s.trim_start().to_string()
}

fn title(kernel: &str) -> String {
    format!("{}{}", kernel[..1].to_uppercase(), &kernel[1..])
}

/// A STREAM kernel's best rate and its average, shortest and longest time.
fn stream_cells(r: &CaseResult, kernel: &str) -> Option<Vec<String>> {
    let (rate, time) = (r.metric(&stream::rate(kernel))?, r.metric(&stream::time(kernel))?);
    Some(vec![
        format!("{:.1}", rate.summary.max),
        format!("{:.6}", time.summary.mean),
        format!("{:.6}", time.summary.min),
        format!("{:.6}", time.summary.max),
    ])
}

/// The HermitCore post's "Results of the STREAM benchmark": per thread configuration
/// and function, one row per environment (name, its results).
pub fn render_stream_envs(envs: &[(&str, &RunDoc)]) -> String {
    let id = stream::id(stream::KERNELS_BENCH);
    let of = |d: &'_ RunDoc| d.results.iter().filter(|r| r.benchmark == id).cloned().collect::<Vec<CaseResult>>();
    let threads: Vec<String> = super::distinct(
        envs.iter().flat_map(|(_, d)| of(d)).filter_map(|r| r.params_as::<stream::Params>().map(|p| p.threads.name().to_string())),
    );
    let mut s = String::new();
    for th in &threads {
        let case = |d: &RunDoc| of(d).into_iter().find(|r| r.params_as::<stream::Params>().is_some_and(|p| p.threads.name() == th));
        s += &format!("\nSTREAM ({th}), in the form of {}: best rate of each function per environment\n", Source::HermitCoreXen.short());
        let mut t = TextTable::new(&["Function", "Environment", "Bandwidth MB/s", "Avg time", "Min time", "Max time"], 2);
        for k in stream::KERNELS {
            for (name, d) in envs {
                let cells = match case(d) {
                    Some(r) if r.status == CaseStatus::Ok => stream_cells(&r, k).unwrap_or_else(|| vec!["-".into()]),
                    Some(r) => vec![unmeasured_mark(r.status).into()],
                    None => vec!["-".into()],
                };
                t.row([vec![title(k), name.to_string()], cells].concat());
            }
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
        let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
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
    let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 3);
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

/// The HermitCore PVH/HVM benchmark post's basic benchmark: the
/// hermit-basic suite's cases (and the quick suite's), a column per environment.
pub struct HermitBasic;

impl Table for HermitBasic {
    fn families(&self) -> &'static [&'static str] {
        &[hermit::FAMILY, syscall::FAMILY, pagefault::FAMILY]
    }
    fn draws(&self) -> Draws {
        Draws::Suites { own: &["hermit-basic"], also: &["quick"] }
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_hermit(doc)
    }
    fn render_across(&self, envs: &[(&str, &RunDoc)]) -> String {
        render_hermit_envs(envs)
    }
}

/// STREAM, as the HermitCore post lays it out; a column per environment.
pub struct Stream;

impl Table for Stream {
    fn families(&self) -> &'static [&'static str] {
        &[stream::FAMILY]
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_stream(doc)
    }
    fn render_across(&self, envs: &[(&str, &RunDoc)]) -> String {
        render_stream_envs(envs)
    }
}

/// memcpy by size and alignment.
pub struct Memcpy;

impl Table for Memcpy {
    fn families(&self) -> &'static [&'static str] {
        &[memcpy::FAMILY]
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_memcpy(doc)
    }
}

/// The allocators by block size.
pub struct Alloc;

impl Table for Alloc {
    fn families(&self) -> &'static [&'static str] {
        &[alloc::FAMILY]
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_alloc(doc)
    }
}

/// memcpy bandwidth against size (aligned), and STREAM's rate by kernel.
pub struct MemoryPlots;

impl Plots for MemoryPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        let mut lines: Vec<Lines> = Vec::new();
        lines.extend(lines_of::<memcpy::Params>(
            doc,
            Plot { title: "memcpy bandwidth by size (aligned)".into(), x_desc: "bytes copied", y_desc: "MB/s", log: (true, false) },
            |r, p| r.family == memcpy::FAMILY && p.src_off == 0 && p.dst_off == 0,
            |r, _| memcpy::name_of(&r.benchmark).into(),
            |r, p| point(p.bytes as f64, r, memcpy::BANDWIDTH),
        ));
        // STREAM's four kernels are four metrics of one result: one series per result.
        let ok = |r: &&CaseResult| r.family == stream::FAMILY && r.status == CaseStatus::Ok;
        let series: Vec<(String, Vec<Point>)> = doc
            .results
            .iter()
            .filter(ok)
            .map(|r| {
                let pts = stream::KERNELS.iter().enumerate().filter_map(|(i, k)| point(i as f64 + 1.0, r, &stream::rate(k))).collect();
                let threads = r.params_as::<stream::Params>().map_or("", |p| p.threads.name());
                (format!("{}{threads} threads", env_prefix(doc, r)), pts)
            })
            .collect();
        if let Some(first) = doc.results.iter().find(ok) {
            lines.push(Lines {
                title: "STREAM: rate by kernel (1 copy, 2 scale, 3 add, 4 triad)".into(),
                x_desc: "kernel".into(),
                y_desc: "MB/s".into(),
                log_x: false,
                log_y: false,
                caption: context(doc, first),
                series,
                y_range: None,
            });
        }
        lines
    }
    fn across_environments(&self) -> bool {
        true
    }
}
