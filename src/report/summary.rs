//! The one-screen answer to "what does this machine cost me": the headline
//! figure of every family that ran, with its interval, and (when several
//! environments ran) each environment against native with its verdict.
//! At most about 25 lines; the full tables are `show RUN --full`.

use super::table::{Table, cycles};
use crate::compare::{judge, seed_of, verdict_word};
use crate::results::{CaseResult, CaseStatus, Metric, RunDoc, UNIT_CYCLES};
use crate::uncertainty::Policy;

/// One headline: what, which case stands for it, its metric.
struct Headline<'a> {
    what: String,
    result: &'a CaseResult,
    metric: &'a Metric,
}

fn p_str<'a>(r: &'a CaseResult, k: &str) -> Option<&'a str> {
    r.params.get(k).and_then(|v| v.as_str())
}

fn p_u64(r: &CaseResult, k: &str) -> Option<u64> {
    r.params.get(k).and_then(|v| v.as_u64())
}

/// Measured results of `env` (native when the run has it).
fn measured<'a>(doc: &'a RunDoc, env: &str) -> impl Iterator<Item = &'a CaseResult> {
    doc.results.iter().filter(move |r| r.status == CaseStatus::Ok && r.env(doc) == env)
}

/// The result among `it` whose metric `name` has the smallest (or largest) median.
fn extreme<'a>(it: impl Iterator<Item = &'a CaseResult>, name: &str, largest: bool) -> Option<(&'a CaseResult, &'a Metric)> {
    let with: Vec<(&CaseResult, &Metric)> = it.filter_map(|r| r.metric(name).map(|m| (r, m))).collect();
    let pick = |a: &&(&CaseResult, &Metric), b: &&(&CaseResult, &Metric)| a.1.summary.median.total_cmp(&b.1.summary.median);
    if largest { with.iter().max_by(pick).copied() } else { with.iter().min_by(pick).copied() }
}

fn headlines<'a>(doc: &'a RunDoc, env: &str) -> Vec<Headline<'a>> {
    let mut out = Vec::new();
    let mut push = |what: String, found: Option<(&'a CaseResult, &'a Metric)>| {
        if let Some((result, metric)) = found {
            out.push(Headline { what, result, metric });
        }
    };
    let one = |bench: &str, metric: &str| extreme(measured(doc, env).filter(|r| r.benchmark == bench), metric, false);
    push("null system call (getpid)".into(), one("syscall.getpid", "per_call"));
    for cores in ["same", "cross"] {
        let ipc0 =
            || measured(doc, env).filter(move |r| r.family == "ipc" && p_u64(r, "words") == Some(0) && p_str(r, "cores") == Some(cores));
        let best = extreme(ipc0(), "one_way", false);
        if let Some((r, _)) = best {
            let label = format!(
                "one-way IPC, {cores}-core, best ({}, {})",
                r.benchmark.trim_start_matches("ipc."),
                p_str(r, "space").unwrap_or("?")
            );
            push(label, best);
        }
        let pipe = extreme(ipc0().filter(|r| r.benchmark == "ipc.pipe" && p_str(r, "space") == Some("inter")), "one_way", false)
            .or_else(|| extreme(ipc0().filter(|r| r.benchmark == "ipc.pipe"), "one_way", false));
        push(format!("one-way IPC, {cores}-core, pipe"), pipe);
    }
    push("context switch (lat_ctx, 2 processes)".into(), extreme(measured(doc, env).filter(|r| r.family == "ctx"), "switch", false));
    push("fork + exit + wait".into(), one("proc.fork", "per_op"));
    push("first touch of a page (anonymous)".into(), one("pagefault.anon", "per_page"));
    push(
        "memcpy peak (C library, aligned)".into(),
        extreme(
            measured(doc, env).filter(|r| r.benchmark == "memcpy.libc" && p_u64(r, "src_off") == Some(0) && p_u64(r, "dst_off") == Some(0)),
            "bandwidth",
            true,
        ),
    );
    push(
        "malloc + free (C library, best case)".into(),
        extreme(measured(doc, env).filter(|r| r.benchmark == "alloc.system"), "per_pair", false),
    );
    push("STREAM triad (best)".into(), extreme(measured(doc, env).filter(|r| r.family == "stream"), "triad_rate", true));
    push("boot to /init".into(), one("boot.start", "to_init"));
    push(
        "FWQ: worst sample (noise)".into(),
        extreme(measured(doc, env).filter(|r| r.family == "noise"), "sample", true).map(|x| (x.0, x.1)),
    );
    push("control loop: deviation (nanosleep)".into(), one("control.nanosleep", "deviation"));
    push("VM exit round trip (microvm, pio)".into(), one("microvm.pio", "vmm_round_trip"));
    push("net peak (UDP/TCP stream)".into(), extreme(measured(doc, env).filter(|r| r.family == "net"), "throughput", true));
    push("block I/O peak".into(), extreme(measured(doc, env).filter(|r| r.family == "blk"), "throughput", true));
    out
}

/// The value of a headline: the median (the max for noise and control
/// deviations, whose point is the worst case), in its unit.
fn value(h: &Headline) -> (String, String) {
    let worst = matches!(h.result.family.as_str(), "noise" | "control");
    let v = if worst { h.metric.summary.max } else { h.metric.summary.median };
    let unit = if h.metric.unit == UNIT_CYCLES { "cycles".to_string() } else { h.metric.unit.clone() };
    let shown = if h.metric.unit == UNIT_CYCLES || v >= 100.0 {
        cycles(v)
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    };
    (shown, unit)
}

fn interval(h: &Headline) -> String {
    match (&h.metric.estimate, h.result.family.as_str()) {
        (_, "noise" | "control") => "max".into(),
        (Some(e), _) => format!(
            "+-{:.1}%{}",
            e.interval.relative_half_width(e.median) * 100.0,
            if super::table::uncertain(h.metric) { "?" } else { "" }
        ),
        (None, _) => format!("CV {:.0}%", h.metric.summary.cv * 100.0),
    }
}

fn ns(h: &Headline, tsc_hz: f64) -> String {
    if h.metric.unit != UNIT_CYCLES || h.result.family == "noise" || h.result.family == "control" {
        return String::new();
    }
    let v = h.metric.summary.median * 1e9 / tsc_hz;
    if v >= 10_000.0 { format!("{:.1} us", v / 1000.0) } else { format!("{v:.0} ns") }
}

/// The summary of a run, to fit `width` columns.
pub fn render(doc: &RunDoc, width: usize) -> String {
    let mut envs: Vec<&str> = Vec::new();
    for r in &doc.results {
        let e = r.env(doc);
        if !envs.contains(&e) {
            envs.push(e);
        }
    }
    let base = if envs.contains(&"native") { "native" } else { envs.first().copied().unwrap_or("native") };
    let lines = headlines(doc, base);
    let mut s = format!(
        "summary ({base}, load {}, isolation {}{}), TSC cycles at {:.2} GHz\n",
        doc.condition.load,
        doc.condition.isolation,
        if doc.settings.rounds > 1 { format!(", {} rounds a cell", doc.settings.rounds) } else { ", 1 round".into() },
        doc.host.clock.tsc_hz / 1e9
    );
    if lines.is_empty() {
        return s + "  (no headline case measured)\n";
    }
    let others: Vec<&str> = envs.iter().copied().filter(|e| *e != base).collect();
    let mut head = vec!["", "value", "unit", "95% CI", "time"];
    let rel_heads: Vec<String> = others.iter().map(|e| format!("{e} rel.")).collect();
    head.extend(rel_heads.iter().map(String::as_str));
    let mut t = Table::new(&head, 1);
    let policy = Policy::default();
    for h in &lines {
        let (v, unit) = value(h);
        let mut row = vec![h.what.clone(), v, unit, interval(h), ns(h, doc.host.clock.tsc_hz)];
        for e in &others {
            let twin = doc.results.iter().find(|r| {
                r.status == CaseStatus::Ok && r.env(doc) == *e && r.benchmark == h.result.benchmark && r.params == h.result.params
            });
            row.push(match twin.and_then(|r| r.metric(&h.metric.name)) {
                Some(m) => {
                    let j = judge(h.metric, m, &policy, seed_of(&format!("{} {e}", h.what)));
                    format!("{:.2} {}", j.ratio, verdict_word(j.verdict))
                }
                None => "-".into(),
            });
        }
        t.row(row);
    }
    s += &t.render_width(width);
    if !others.is_empty() {
        s += "  rel. = performance against native (above 1: faster) with its verdict over rounds (faster, slower, same, unsure)\n";
    }
    s
}
