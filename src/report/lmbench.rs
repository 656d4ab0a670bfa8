//! Seed 000's LMBench tables, rows named as in the paper (lat_ctx -s 0 2,
//! lat_pipe, lat_proc fork, bw_mem_wr...), for one run or two side by side
//! with a relative-performance column (above 1: the second run is better).

use super::table::{Table, cycles};
use crate::compare::{judge, seed_of, verdict_word};
use crate::results::{CaseResult, CaseStatus, Metric, Params, RunDoc};
use serde_json::json;

/// One row: which case, which metric, shown how.
struct Row {
    label: String,
    bench: &'static str,
    params: Params,
    metric: &'static str,
    comment: &'static str,
    /// With one run, a metric of the same case shown in the comment (the
    /// ring overhead lat_ctx subtracts).
    aside: Option<&'static str>,
}

fn params(pairs: &[(&str, serde_json::Value)]) -> Params {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn row(label: impl Into<String>, bench: &'static str, p: Params, metric: &'static str, comment: &'static str) -> Row {
    Row { label: label.into(), bench, params: p, metric, comment, aside: None }
}

fn latency_rows() -> Vec<Row> {
    let mut v = Vec::new();
    for ws in [0, 4, 16, 64] {
        for procs in [2, 3, 4, 10] {
            let p = params(&[("procs", json!(procs)), ("ws_kib", json!(ws))]);
            let mut r = row(format!("lat_ctx -s {ws} {procs}"), "ctx.ring", p, "switch", "context switch");
            r.aside = Some("overhead");
            v.push(r);
        }
    }
    for (label, bench, c) in [
        ("lat_fifo", "ipc.fifo", "hot potato: round trip, 8 bytes, one CPU"),
        ("lat_pipe", "ipc.pipe", ""),
        ("lat_unix", "ipc.unix-stream", ""),
    ] {
        let p = params(&[("words", json!(1)), ("space", json!("inter")), ("cores", json!("same"))]);
        v.push(row(label, bench, p, "round_trip", c));
    }
    v.push(row("lat_syscall null", "syscall.getppid", Params::new(), "per_call", "getppid"));
    for (label, bench, c) in [
        ("lat_proc procedure", "proc.procedure", "process creation"),
        ("lat_proc fork", "proc.fork", ""),
        ("lat_proc exec", "proc.exec", "fork + exec of a 132-byte static ELF"),
        ("(posix_spawn)", "proc.spawn", "not in lmbench"),
        ("(vfork + exec)", "proc.vfork-exec", "not in lmbench"),
        ("(thread create)", "proc.thread", "not in lmbench"),
        ("lat_pagefault", "pagefault.file", "per page, cached file, read"),
        ("(anon first touch)", "pagefault.anon", "per page, 4 KiB, written"),
    ] {
        v.push(row(label, bench, Params::new(), "per_op", c));
    }
    // Page faults report per page.
    for r in v.iter_mut().filter(|r| r.bench.starts_with("pagefault.")) {
        r.metric = "per_page";
    }
    v
}

fn bandwidth_rows() -> Vec<Row> {
    let same = || params(&[("cores", json!("same"))]);
    let cross = || params(&[("cores", json!("cross"))]);
    vec![
        row("bw_file_rd 64M io_only", "bw.file-rd", Params::new(), "bandwidth", "read(2) from the page cache"),
        row("bw_mmap_rd 64M", "bw.mmap-rd", Params::new(), "bandwidth", "mmap + sum + munmap"),
        row("bw_mem rd", "bw.mem-rd", Params::new(), "bandwidth", "buffer 4x LLC"),
        row("bw_mem_wr", "bw.mem-wr", Params::new(), "bandwidth", ""),
        row("bw_mem cp", "bw.mem-cp", Params::new(), "bandwidth", "bytes copied"),
        row("bw_pipe", "bw.pipe", same(), "bandwidth", "64 KiB chunks, one CPU"),
        row("bw_pipe (cross core)", "bw.pipe", cross(), "bandwidth", ""),
        row("bw_unix", "bw.unix", same(), "bandwidth", "64 KiB chunks, one CPU"),
        row("bw_unix (cross core)", "bw.unix", cross(), "bandwidth", ""),
    ]
}

fn find<'a>(doc: &'a RunDoc, r: &Row) -> Option<(&'a CaseResult, &'a Metric)> {
    let c = doc.measured(r.bench, |c| c.params == r.params)?;
    Some((c, c.metric(r.metric)?))
}

/// A case of the row that ran but has no number: ("n/a" or "fail", reason).
fn unmeasured<'a>(doc: &'a RunDoc, r: &Row) -> Option<(&'static str, &'a str)> {
    let c = doc.case(r.bench, |c| c.params == r.params && c.status != CaseStatus::Ok)?;
    let mark = if c.status == CaseStatus::NotApplicable { "n/a" } else { "fail" };
    Some((mark, c.reason.as_deref().unwrap_or("")))
}

fn us(m: &Metric) -> String {
    m.ns.map_or("-".into(), |ns| {
        let v = ns.median / 1000.0;
        if v < 10.0 { format!("{v:.3}") } else { format!("{v:.1}") }
    })
}

fn mbs(m: &Metric) -> String {
    format!("{:.0}", m.summary.median)
}

/// One table: with one run, value, cycles and CV; with two, A, B and Rel.
fn table(title: &str, head: &str, rows: &[Row], runs: &[&RunDoc], value: fn(&Metric) -> String, show_cycles: bool) -> String {
    let mut headers: Vec<String> = vec![head.into()];
    match runs {
        [_] => {
            headers.push(title.into());
            if show_cycles {
                headers.push("cycles".into());
            }
            headers.push("95% CI".into());
        }
        _ => {
            headers.extend(["A".to_string(), "B".to_string(), "Rel. Perf".to_string()]);
        }
    }
    headers.push("Comment".into());
    let ncols = headers.len();
    let mut t = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    t.also_left = vec![ncols - 1];
    for r in rows {
        let found: Vec<Option<&Metric>> = runs.iter().map(|d| find(d, r).map(|x| x.1)).collect();
        let missing: Vec<Option<(&str, &str)>> = runs.iter().map(|d| unmeasured(d, r)).collect();
        if found.iter().all(Option::is_none) && missing.iter().all(Option::is_none) {
            continue;
        }
        let mut cells = vec![r.label.clone()];
        let mut comment = r.comment.to_string();
        // Where a run has no number, its cell says why.
        let no_value = |i: usize| missing[i].map_or("-".to_string(), |(mark, _)| mark.to_string());
        for (mark, why) in missing.iter().flatten() {
            comment = format!("{mark}: {why}");
        }
        match (runs.len(), found.as_slice()) {
            (1, [Some(m)]) => {
                cells.push(value(m));
                if show_cycles {
                    cells.push(cycles(m.summary.median));
                }
                cells.push(if m.estimate.is_some() { super::table::interval(m) } else { format!("CV {:.1}%", m.summary.cv * 100.0) });
                if let Some(aside) = r.aside.and_then(|a| find(runs[0], r).and_then(|(c, _)| c.metric(a))) {
                    comment = format!("{comment}; ring overhead {} us subtracted", us(aside));
                }
            }
            (_, [a, b]) => {
                cells.push(a.map_or_else(|| no_value(0), value));
                cells.push(b.map_or_else(|| no_value(1), value));
                cells.push(match (a, b) {
                    (Some(a), Some(b)) => {
                        let j = judge(a, b, &crate::uncertainty::Policy::default(), seed_of(&r.label));
                        format!("{:.2} {}", j.ratio, verdict_word(j.verdict))
                    }
                    _ => "-".into(),
                });
            }
            _ => {
                cells.push(no_value(0));
                cells.extend(std::iter::repeat_n(String::new(), ncols - 3));
            }
        }
        cells.push(comment);
        t.row(cells);
    }
    if t.rows.is_empty() { String::new() } else { t.render() }
}

/// The seed's tables for the runs given (one or two).
pub fn render(runs: &[&RunDoc]) -> String {
    let mut s = String::new();
    let two = runs.len() == 2;
    let rel = if two {
        " Rel. Perf above 1: B is better; then the verdict (faster, slower, same, unsure: the interval over rounds and a Mann-Whitney test, as in compare)."
    } else {
        ""
    };
    let lat = table("us", "Latencies", &latency_rows(), runs, us, true);
    if !lat.is_empty() {
        s += &format!("lmbench latencies: medians in microseconds (TSC cycles beside them), lower is better.{rel}\n");
        s += &lat;
    }
    let bw = table("MB/s", "Bandwidth", &bandwidth_rows(), runs, mbs, false);
    if !bw.is_empty() {
        s += &format!(
            "\nlmbench bandwidths: MB/s (1e6 bytes/s), higher is better; bytes as each row's benchmark counts them (see `oscycles list`).{rel}\n"
        );
        s += &bw;
    }
    let mut aim_rows: Vec<Row> = Vec::new();
    for t in 1..=crate::bench::aim::MAX_TASKS {
        aim_rows.push(row(
            format!("{t} Task{}", if t > 1 { "s" } else { "" }),
            "aim.mix",
            params(&[("tasks", json!(t))]),
            "jobs_per_min_per_task",
            "",
        ));
    }
    let aim = table("jobs/min/task", "Metric", &aim_rows, runs, |m| format!("{:.1}", m.summary.median), false);
    if !aim.is_empty() {
        s += &format!("\nAIM7-style mix: jobs/min/task, higher is better.{rel}\n");
        s += &aim;
    }
    s
}
