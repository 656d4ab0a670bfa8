//! The one-screen answer to "what does this machine cost me": the headline
//! figure of every family that ran, with its interval, and (when several
//! environments ran) each environment against native (or the first of
//! --env) with its verdict.
//! At most about 25 lines; the full tables are `show RUN --full`.

use super::table::{TextTable, cycles};
use crate::compare::{judge_in, seed_of, verdict_word};
use crate::results::{CaseResult, CaseStatus, Metric, RunDoc, UNIT_CYCLES};
use crate::schema::{alloc, blk, boot, control, ctx, ipc, memcpy, microvm, net, noise, pagefault, proc, stream, syscall};
use crate::uncertainty::Policy;

/// One headline: what, which case stands for it, its metric.
struct Headline<'a> {
    what: String,
    result: &'a CaseResult,
    metric: &'a Metric,
}

/// Whether `r` is an ipc case whose parameters `pred` accepts.
fn ipc_case(r: &CaseResult, pred: impl Fn(&ipc::Params) -> bool) -> bool {
    r.family == ipc::FAMILY && r.params_as::<ipc::Params>().is_some_and(|p| pred(&p))
}

/// Whether a family's headline is its worst case (noise, control deviations).
fn worst_case(family: &str) -> bool {
    matches!(family, noise::FAMILY | control::FAMILY)
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
    let one = |bench: String, metric: &str| extreme(measured(doc, env).filter(|r| r.benchmark == bench), metric, false);
    let of = |family: &'static str| measured(doc, env).filter(move |r| r.family == family);
    push("null system call (getpid)".into(), one(syscall::id(syscall::GETPID), syscall::PER_CALL));
    let pipe = ipc::Mechanism::Pipe.id();
    for cores in ipc::CORES {
        let ipc0 = || measured(doc, env).filter(move |r| ipc_case(r, |p| p.words == 0 && p.cores == cores));
        let best = extreme(ipc0(), ipc::ONE_WAY, false);
        let cn = ipc::cores_name(cores);
        if let Some((r, _)) = best {
            let space = r.params_as::<ipc::Params>().map_or("?", |p| ipc::space_name(p.space));
            push(format!("one-way IPC, {cn}-core, best ({}, {space})", ipc::name_of(&r.benchmark)), best);
        }
        let pipe_inter =
            extreme(ipc0().filter(|r| r.benchmark == pipe && ipc_case(r, |p| p.space == ipc::Space::Inter)), ipc::ONE_WAY, false)
                .or_else(|| extreme(ipc0().filter(|r| r.benchmark == pipe), ipc::ONE_WAY, false));
        push(format!("one-way IPC, {cn}-core, pipe"), pipe_inter);
    }
    push("context switch (lat_ctx, 2 processes)".into(), extreme(of(ctx::FAMILY), ctx::SWITCH, false));
    // The static fork of nothing touched; documents from before touched_mib have it without parameters.
    let static_fork = |p: Option<proc::Params>| p == Some(proc::Params::touched(0, false)) || p == Some(proc::Params::NONE);
    let fork = extreme(
        measured(doc, env).filter(|r| r.benchmark == proc::id(proc::FORK) && static_fork(r.params_as::<proc::Params>())),
        proc::PER_OP,
        false,
    );
    push(fork_line(fork.map(|f| f.0)), fork);
    push("first touch of a page (anonymous)".into(), one(pagefault::id(pagefault::ANON), pagefault::PER_PAGE));
    let libc = memcpy::id(memcpy::LIBC);
    let aligned = |r: &CaseResult| r.params_as::<memcpy::Params>().is_some_and(|p| p.src_off == 0 && p.dst_off == 0);
    push(
        "memcpy peak (C library, aligned)".into(),
        extreme(measured(doc, env).filter(|r| r.benchmark == libc && aligned(r)), memcpy::BANDWIDTH, true),
    );
    let system = alloc::id(alloc::SYSTEM);
    push(
        "malloc + free (C library, best case)".into(),
        extreme(measured(doc, env).filter(|r| r.benchmark == system), alloc::PER_PAIR, false),
    );
    push("STREAM triad (median rate)".into(), extreme(of(stream::FAMILY), &stream::rate(stream::TRIAD), true));
    push("boot to /init".into(), one(boot::id(boot::START_BENCH), boot::TO_INIT));
    push("FWQ: worst sample (noise)".into(), extreme(of(noise::FAMILY), noise::SAMPLE, true));
    push("control loop: deviation (nanosleep)".into(), one(control::id(control::NANOSLEEP), control::DEVIATION));
    push("VM exit round trip (microvm, pio)".into(), one(microvm::id(microvm::PIO), microvm::VMM_ROUND_TRIP));
    push("net peak (UDP/TCP stream)".into(), extreme(of(net::FAMILY), net::THROUGHPUT, true));
    push("block I/O peak".into(), extreme(of(blk::FAMILY), blk::THROUGHPUT, true));
    out
}

/// The summary's fork line names its fork: the static one, and the size of
/// the process that forked where the case recorded it.
fn fork_line(r: Option<&CaseResult>) -> String {
    let size = r.and_then(|r| r.details.get(proc::FORKER)).and_then(|v| serde_json::from_value::<proc::ProcessSize>(v.clone()).ok());
    match size {
        Some(s) => format!("fork + _exit + wait ((static fork): a {:.1} MiB static C process)", s.vm_size_kib as f64 / 1024.0),
        None => "fork + _exit + wait ((static fork), forker's size not recorded)".into(),
    }
}

/// The value of a headline: the median (the max for noise and control
/// deviations, whose point is the worst case), in its unit.
fn value(h: &Headline) -> (String, String) {
    let worst = worst_case(&h.result.family);
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
    match &h.metric.estimate {
        _ if worst_case(&h.result.family) => "max".into(),
        Some(e) => format!(
            "+-{:.1}%{}",
            e.interval.relative_half_width(e.median) * 100.0,
            if super::table::uncertain(h.metric) { "?" } else { "" }
        ),
        None => format!("CV {:.0}%", h.metric.summary.cv * 100.0),
    }
}

/// One line per headline whose rounds (or batches) fall into two levels: both, with shares.
fn levels_note(lines: &[Headline]) -> String {
    let mut s = String::new();
    for h in lines {
        if let Some(l) = h.metric.estimate.and_then(|e| e.levels) {
            let units = if l.of_rounds { "rounds" } else { "batches" };
            let unit = value(h).1;
            let text = format!(
                "two levels in {}: {} {unit} ({:.0}% of {units}) and {} ({:.0}%); the median above lies in one of them",
                h.what,
                cycles(l.low),
                100.0 * l.low_share,
                cycles(l.high),
                100.0 * (1.0 - l.low_share)
            );
            s += &format!("  {text}\n");
        }
    }
    s
}

fn ns(h: &Headline, tsc_hz: f64) -> String {
    if h.metric.unit != UNIT_CYCLES || worst_case(&h.result.family) {
        return String::new();
    }
    let v = h.metric.summary.median * 1e9 / tsc_hz;
    if v >= 10_000.0 { format!("{:.1} us", v / 1000.0) } else { format!("{v:.0} ns") }
}

/// The summary of a run, to fit `width` columns.
pub fn render(doc: &RunDoc, width: usize) -> String {
    let p = parts(doc);
    match &p.table {
        Some(t) => format!("{}\n{}{}", p.heading, t.render_width(width), super::fit_text(&p.note, width)),
        None => format!("{}\n  (no headline case measured)\n", p.heading),
    }
}

/// The summary's pieces, for text and for HTML: its heading line, its table
/// (None when no headline case was measured), and the note under it.
pub struct Parts {
    pub heading: String,
    pub table: Option<TextTable>,
    pub note: String,
}

/// The summary of a run, in pieces.
pub fn parts(doc: &RunDoc) -> Parts {
    let mut envs: Vec<&str> = Vec::new();
    for r in &doc.results {
        let e = r.env(doc);
        if !envs.contains(&e) {
            envs.push(e);
        }
    }
    let base = if envs.contains(&"native") { "native" } else { envs.first().copied().unwrap_or("native") };
    let lines = headlines(doc, base);
    let heading = format!(
        "summary ({base}, load {}, isolation {}{}), TSC cycles at {:.2} GHz",
        doc.condition.load,
        doc.condition.isolation,
        if doc.settings.rounds > 1 { format!(", {} rounds a cell", doc.settings.rounds) } else { ", 1 round".into() },
        doc.host.clock.tsc_hz / 1e9
    );
    if lines.is_empty() {
        return Parts { heading, table: None, note: String::new() };
    }
    let others: Vec<&str> = envs.iter().copied().filter(|e| *e != base).collect();
    let mut head = vec!["", "value", "unit", "95% CI", "time"];
    let rel_heads: Vec<String> = others.iter().map(|e| format!("{e} rel.")).collect();
    head.extend(rel_heads.iter().map(String::as_str));
    let mut t = TextTable::new(&head, 1);
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
                    let j = judge_in(doc, h.metric, m, &policy, seed_of(&format!("{} {e}", h.what)));
                    format!("{:.2} {}", j.ratio, verdict_word(j.verdict))
                }
                None => "-".into(),
            });
        }
        t.row(row);
    }
    let mut note = levels_note(&lines);
    if !others.is_empty() {
        note +=
            &format!("  rel. = performance against {base} (above 1: faster) with its verdict over rounds (faster, slower, same, unsure)\n");
        if doc.settings.interleaved {
            note +=
                "  the environments took turns by round: rel. pairs their rounds (median of per-round ratios, Wilcoxon signed-rank test)\n";
        }
    }
    Parts { heading, table: Some(t), note }
}
