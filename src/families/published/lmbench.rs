//! The LMBench tables of the Trustworthy Systems L4 performance page, rows named as in the paper (lat_ctx -s 0 2,
//! lat_pipe, lat_proc fork, bw_mem_wr...), for one run or two side by side
//! with a relative-performance column (above 1: the second run is better).

use crate::base::sources::Source;
use crate::data::compare::{Method, judge_by, method_in, seed_of, verdict_word};
use crate::data::results::{CaseResult, Metric, RunDoc};
use crate::families::bench::schema::ipc::{Cores, Mechanism, Space};
use crate::families::bench::schema::{NoParams, aim, bw, ctx, ipc, pagefault, proc, syscall};
use crate::measure::scratch::FileWrites;
use crate::tables::tabular::figures::{Bars, Clock, Plots, capitalised, environments, of_environment};
use crate::tables::tabular::is_arm_linux;
use crate::tables::tabular::lines::Point;
use crate::tables::tabular::rows::Row;
use crate::tables::tabular::table::{TextTable, cycles};
use crate::tables::tabular::tables::{Draws, Table};

fn latency_rows() -> Vec<Row> {
    let mut v = Vec::new();
    for ws_kib in [0, 4, 16, 64] {
        for procs in [2, 3, 4, 10] {
            let p = ctx::Params { procs, ws_kib };
            let mut r = Row::new(format!("lat_ctx -s {ws_kib} {procs}"), ctx::id(ctx::RING), p, ctx::SWITCH)
                .comment("per switch, all on one CPU: hop less the ring's pipe + sum cost");
            r.aside = Some(ctx::OVERHEAD);
            v.push(r);
        }
    }
    let hot_potato = ipc::Params { words: 1, space: Space::Inter, cores: Cores::Same };
    for (label, mech, c) in [
        ("lat_fifo", Mechanism::Fifo, "round trip between two processes on one CPU, 8 bytes (lmbench: 1)"),
        ("lat_pipe", Mechanism::Pipe, "the same through two pipes"),
        ("lat_unix", Mechanism::UnixStream, "the same through a UNIX stream socketpair"),
    ] {
        v.push(Row::new(label, mech.id(), hot_potato, ipc::ROUND_TRIP).comment(c));
    }
    v.push(
        Row::new("lat_syscall null", syscall::id(syscall::NULL), NoParams {}, syscall::PER_CALL).comment("getppid() through the C library"),
    );
    v.push(
        Row::new("(raw getppid)", syscall::id(syscall::GETPPID), NoParams {}, syscall::PER_CALL)
            .comment("the syscall instruction inline, no wrapper: the same instructions as lat_syscall null (icount: 338 a call), ~20 cycles less on AMD EPYC (the return after the kernel's)"),
    );
    v.extend(proc_rows());
    // Page faults report per page.
    v.extend(file_rows("lat_pagefault", "per page, random order, munmap timed", |file_writes| {
        Row::new("", pagefault::id(pagefault::FILE), pagefault::Params { file_writes }, pagefault::PER_PAGE)
    }));
    v.push(
        Row::new("(anon first touch)", pagefault::id(pagefault::ANON), NoParams {}, pagefault::PER_PAGE)
            .comment("per page, 4 KiB, written"),
    );
    v
}

/// How a file row's file was written: each layout of `--where
/// file_writes`, lmbench's first (its row bears lmbench's label), then a
/// case of an older oscycles that did not record it.
const LAYOUTS: [Option<FileWrites>; 4] = [Some(FileWrites::LMBENCH), Some(FileWrites::Page), Some(FileWrites::Large), None];

/// A file row per layout of its file: `row` makes the row of a layout,
/// labelled `label` for lmbench's own, with the layout in parentheses for
/// the others; each comment says how its file was written (the page
/// cache's folios follow the writes, and with them the row).
fn file_rows(label: &str, comment: &str, row: impl Fn(Option<FileWrites>) -> Row) -> Vec<Row> {
    LAYOUTS
        .iter()
        .map(|&w| {
            let (label, written) = match w {
                Some(FileWrites::Lmdd) => {
                    (label.to_string(), "file written in 8 KiB writes + fsync, as lmbench's script's lmdd".to_string())
                }
                Some(w) => (format!("{label} ({})", w.words()), format!("file written in {}", w.words())),
                None => (
                    format!("{label} (file layout not recorded)"),
                    "an older oscycles' run, which did not record how it wrote its file".into(),
                ),
            };
            Row { label, ..row(w) }.comment(format!("{written}; {comment}"))
        })
        .collect()
}

/// lat_proc's rows and the extra ones: every process is created from a
/// small C helper started for the case, whose size the case records.
fn proc_rows() -> Vec<Row> {
    let row = |label: &str, name: &str, params: proc::Params, comment: &'static str| {
        Row::new(label, proc::id(name), params, proc::PER_OP).comment(comment)
    };
    let none = proc::Params::NONE;
    let mut v = vec![
        row("lat_proc procedure", proc::PROCEDURE, none, "a call that adds its argument into a global, in lmbench's instructions"),
        row(
            "lat_proc fork",
            proc::FORK_DYNAMIC,
            none,
            "fork + child exit() + wait in a small dynamically linked C process's worker, as lmbench's",
        ),
        row("(static fork)", proc::FORK, proc::Params::touched(0, false), "fork + child _exit + wait in a small static C process"),
    ];
    for mib in crate::families::bench::proc::family::TOUCHED_MIB.into_iter().filter(|&m| m > 0) {
        for thp in [false, true] {
            let label = format!("(static fork, {mib} MiB touched{})", if thp { ", THP" } else { "" });
            let comment =
                if thp { "the same, the memory in transparent huge pages" } else { "the same with that much memory written, 4 KiB pages" };
            v.push(row(&label, proc::FORK, proc::Params::touched(mib, thp), comment));
        }
    }
    v.extend([
        row(
            "lat_proc exec",
            proc::EXEC_DYNAMIC,
            none,
            "fork + execve of /bin/true (dynamically linked) + wait, from lat_proc fork's process",
        ),
        row("(static exec)", proc::EXEC, none, "fork + execve of a 132-byte static ELF + wait, from the small static process"),
        row("(posix_spawn)", proc::SPAWN, none, "not in lmbench; of the 132-byte ELF, from the small static process"),
        row("(vfork + exec)", proc::VFORK_EXEC, none, "not in lmbench; the same"),
        row("(thread create)", proc::THREAD, none, "not in lmbench"),
    ]);
    v
}

/// What a process-creation case forked, as its details record it.
fn forked_from(c: &CaseResult) -> Option<String> {
    let s: proc::ProcessSize = serde_json::from_value(c.details.get(proc::FORKER)?.clone()).ok()?;
    let mib = |kib: u64| format!("{:.1} MiB", kib as f64 / 1024.0);
    let huge = if s.anon_huge_kib > 0 { format!(" ({} in huge pages)", mib(s.anon_huge_kib)) } else { String::new() };
    Some(format!(
        "{}: VmSize {}, RSS {}{huge}, {} mappings, {} thread{}",
        s.program,
        mib(s.vm_size_kib),
        mib(s.rss_kib),
        s.mappings,
        s.threads,
        if s.threads == 1 { "" } else { "s" }
    ))
}

fn bandwidth_rows() -> Vec<Row> {
    let row = |label: &str, name: &str, cores: Option<Cores>, comment: &'static str| {
        Row::new(label, bw::id(name), bw::Params { cores, file_writes: None }, bw::BANDWIDTH).comment(comment)
    };
    let (same, cross) = (Some(Cores::Same), Some(Cores::Cross));
    let file = |name: &'static str| move |file_writes| Row::new("", bw::id(name), bw::Params { cores: None, file_writes }, bw::BANDWIDTH);
    let mut v = file_rows(
        "bw_file_rd 64M io_only",
        "64 KiB read(2)s, each summed; bytes read; files written alike read up to 2x apart",
        file(bw::FILE_RD),
    );
    v.extend(file_rows("bw_mmap_rd 64M mmap_only", "sum of a file mapped once; bytes of the file", file(bw::MMAP_RD)));
    v.extend(file_rows("bw_mmap_rd 64M open2close", "open + mmap + sum + close + munmap", file(bw::MMAP_RD_OPEN)));
    v.extend([
        row("bw_mem rd", bw::MEM_RD, None, "4 bytes read every 16, buffer 4x LLC; bytes of the buffer"),
        row("bw_mem wr", bw::MEM_WR, None, "4 bytes written every 16; bytes of the buffer"),
        row("bw_mem cp", bw::MEM_CP, None, "4 bytes copied every 16; bytes of one buffer"),
        row("(libc memcpy)", bw::MEM_CP_LIBC, None, "not bw_mem cp: the C library's memcpy (bw_mem bcopy); bytes of one buffer"),
        row("bw_pipe", bw::PIPE, same, "64 KiB chunks, one CPU"),
        row("bw_pipe (cross core)", bw::PIPE, cross, ""),
        row("bw_unix", bw::UNIX, same, "64 KiB chunks, one CPU"),
        row("bw_unix (cross core)", bw::UNIX, cross, ""),
    ]);
    v
}

fn aim_rows() -> Vec<Row> {
    (1..=aim::MAX_TASKS)
        .map(|t| {
            let label = format!("{t} Task{}", if t > 1 { "s" } else { "" });
            Row::new(label, aim::id(aim::MIX), aim::Params { tasks: t as u64 }, aim::JOBS_PER_MIN_PER_TASK)
        })
        .collect()
}

fn us(m: &Metric) -> String {
    m.ns.map_or("-".into(), |ns| {
        let v = ns.median / 1000.0;
        if v < 10.0 { format!("{v:.3}") } else { format!("{v:.1}") }
    })
}

/// A latency cell in guest instructions (QEMU's instruction counter has no microseconds).
fn instr(m: &Metric) -> String {
    if m.unit == crate::data::results::UNIT_INSTRUCTIONS { cycles(m.summary.median) } else { us(m) }
}

fn mbs(m: &Metric) -> String {
    format!("{:.0}", m.summary.median)
}

/// The runs a table shows (one or two), their columns' names, how two
/// are judged, and whether one is an ARM column (the page's XScale
/// figures then stand beside them as the reference, [`PAGE_XSCALE`]).
#[derive(Clone, Copy)]
struct Sides<'a> {
    runs: &'a [&'a RunDoc],
    names: [&'a str; 2],
    method: Method,
    arm: bool,
}

/// The L4 performance page's native Linux column on the XScale PXA255 at
/// 200 MHz (the PLEB2), by oscycles' row label, in the page's units (us,
/// MB/s, jobs/min/task). Its bw_file_rd and bw_mmap_rd read 1024 (not 64M),
/// its bw_mem is a read of 1024; its second "lat_ctx -s 4 4" row (285.1,
/// likely -s 4 10) is left out.
const PAGE_XSCALE: [(&str, f64); 23] = [
    ("lat_ctx -s 0 2", 190.8),
    ("lat_ctx -s 0 3", 197.1),
    ("lat_ctx -s 0 4", 199.5),
    ("lat_ctx -s 0 10", 215.7),
    ("lat_ctx -s 4 2", 257.7),
    ("lat_ctx -s 4 3", 259.3),
    ("lat_ctx -s 4 4", 293.4),
    ("lat_fifo", 377.0),
    ("lat_pipe", 378.4),
    ("lat_unix", 764.5),
    ("lat_syscall null", 0.82),
    ("lat_proc procedure", 0.21),
    ("lat_proc fork", 4334.0),
    ("lat_proc exec", 4600.0),
    ("bw_file_rd 64M io_only", 39.38),
    ("bw_mmap_rd 64M mmap_only", 106.7),
    ("bw_mem rd", 416.0),
    ("bw_mem wr", 229.9),
    ("bw_pipe", 10.15),
    ("bw_unix", 24.23),
    ("1 Task", 47.52),
    ("2 Tasks", 24.77),
    ("3 Tasks", 16.74),
];

/// The page's XScale figure of a row, if it has one.
fn page_xscale(label: &str) -> Option<f64> {
    PAGE_XSCALE.iter().find(|(l, _)| *l == label).map(|(_, v)| *v)
}

/// The header of the reference column.
const XSCALE_COLUMN: &str = "page: XScale Linux";

/// What the reference column is, said under an ARM table's title (`unit`
/// and what else differs).
fn xscale_note(unit: &str) -> String {
    format!(
        "  {XSCALE_COLUMN}: the reference, not a column of this run: {}'s native Linux on an XScale PXA255 at 200 MHz (PLEB2), in {unit} on real hardware; not guest instructions, not this ARM core\n",
        Source::L4Performance.short()
    )
}

/// One table: with one run, value, cycles and CV; with two, their columns
/// (named `names`) and Rel.
fn table(title: &str, head: &str, rows: &[Row], sides: Sides, value: fn(&Metric) -> String, show_cycles: bool) -> String {
    let Sides { runs, names, method, arm } = sides;
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
            headers.extend([names[0].to_string(), names[1].to_string(), "Rel. Perf".to_string()]);
        }
    }
    if arm {
        headers.push(XSCALE_COLUMN.into());
    }
    headers.push("Comment".into());
    let ncols = headers.len();
    let mut t = TextTable::new(&headers.iter().map(String::as_str).collect::<Vec<_>>(), 1);
    t.also_left = vec![ncols - 1];
    for r in rows {
        let found: Vec<Option<&Metric>> = runs.iter().map(|d| r.value(d)).collect();
        let missing: Vec<Option<(&str, &str)>> = runs.iter().map(|d| r.unmeasured(d)).collect();
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
                cells.push(if m.estimate.is_some() {
                    crate::tables::tabular::table::interval(m)
                } else {
                    format!("CV {:.1}%", m.summary.cv * 100.0)
                });
                if let Some(aside) = r.aside.and_then(|a| r.find(runs[0]).and_then(|(c, _)| c.metric(a))) {
                    comment = format!("{comment}; ring overhead {} us subtracted", us(aside));
                }
                if let Some(forker) = r.find(runs[0]).and_then(|(c, _)| forked_from(c)) {
                    comment = format!("{comment}; forks: {forker}");
                }
            }
            (_, [a, b]) => {
                cells.push(a.map_or_else(|| no_value(0), value));
                cells.push(b.map_or_else(|| no_value(1), value));
                cells.push(match (a, b) {
                    (Some(a), Some(b)) => {
                        let j = judge_by(method, a, b, &crate::analysis::uncertainty::verdict::Thresholds::default(), seed_of(&r.label));
                        format!("{:.2} {}", j.ratio, verdict_word(j.verdict))
                    }
                    _ => "-".into(),
                });
            }
            _ => {
                cells.push(no_value(0));
                cells.extend(std::iter::repeat_n(String::new(), ncols - 3 - usize::from(arm)));
            }
        }
        if arm {
            cells.push(page_xscale(&r.label).map_or_else(String::new, |v| format!("{v}")));
        }
        cells.push(comment);
        t.row(cells);
    }
    if t.rows.is_empty() { String::new() } else { t.render() }
}

/// The LMBench tables for the runs given (one or two, named A and B),
/// two judged as `method` says (as the comparison they are part of was).
pub fn render(runs: &[&RunDoc], method: Method) -> String {
    render_named(runs, ["A", "B"], method)
}

/// The LMBench tables for one or two runs, the two named `names` (two
/// environments of one run: Linux and para-virtualised Linux).
pub fn render_named(runs: &[&RunDoc], names: [&str; 2], method: Method) -> String {
    let mut s = String::new();
    let two = runs.len() == 2;
    let rel = if two {
        format!(" Rel. Perf above 1: {} is better; then the verdict (faster, slower, same, unsure: {}).", names[1], method.verdict_words())
    } else {
        String::new()
    };
    let arm = runs.iter().zip(names).any(|(d, n)| is_arm_linux(n) || is_arm_linux(&d.environment.name));
    let sides = Sides { runs, names, method, arm };
    let note = |unit: &str| if arm { xscale_note(unit) } else { String::new() };
    let counted =
        runs.iter().any(|d| d.results.iter().any(|r| r.metrics.iter().any(|m| m.unit == crate::data::results::UNIT_INSTRUCTIONS)));
    let lat = if counted {
        table("instr", "Latencies", &latency_rows(), sides, instr, false)
    } else {
        table("us", "Latencies", &latency_rows(), sides, us, true)
    };
    if !lat.is_empty() {
        let what = if counted {
            "medians in guest instructions per operation (QEMU's instruction counter: no microseconds)"
        } else {
            "medians in microseconds (TSC cycles beside them)"
        };
        s += &format!("lmbench latencies: {what}, lower is better.{rel}\n{}", note("microseconds"));
        s += &lat;
    }
    let bw = table("MB/s", "Bandwidth", &bandwidth_rows(), sides, mbs, false);
    if !bw.is_empty() {
        s += &format!(
            "\nlmbench bandwidths: MB/s (1e6 bytes/s), higher is better; bytes as each row's benchmark counts them (see `oscycles list`).{rel}\n{}",
            note("MB/s (its bw_file_rd and bw_mmap_rd read 1024, its bw_mem 1024)")
        );
        s += &bw;
    }
    let aim = table("jobs/min/task", "Metric", &aim_rows(), sides, |m| format!("{:.1}", m.summary.median), false);
    if !aim.is_empty() {
        s += &format!("\nAIM7-style mix: jobs/min/task, higher is better.{rel}\n{}", note("jobs/min/task"));
        s += &aim;
    }
    s
}

/// The LMBench tables of the Trustworthy Systems L4 performance page: the
/// lmbench suite's cases (and the quick suite's); across environments, two
/// at a time (the two of the run, else native beside each other one).
pub struct LmbenchTable;

impl Table for LmbenchTable {
    fn families(&self) -> &'static [&'static str] {
        &[syscall::FAMILY, ipc::FAMILY, ctx::FAMILY, proc::FAMILY, bw::FAMILY, pagefault::FAMILY, aim::FAMILY]
    }
    fn draws(&self) -> Draws {
        Draws::Suites { own: &["lmbench"], also: &["quick"] }
    }
    fn render(&self, doc: &RunDoc) -> String {
        render(&[doc], Method::Independent)
    }
    fn render_across(&self, envs: &[(&str, &RunDoc)]) -> String {
        type Named<'a> = (&'a str, &'a RunDoc);
        let pairs: Vec<(&Named, &Named)> = match envs {
            [a, b] => vec![(a, b)],
            all => {
                let native = all.iter().filter(|n| n.0 == "native");
                native.flat_map(|n| all.iter().filter(|o| o.0 != "native").map(move |o| (n, o))).collect()
            }
        };
        let tables: Vec<String> =
            pairs.into_iter().map(|((a, da), (b, db))| render_named(&[da, db], [a, b], method_in(da))).filter(|t| !t.is_empty()).collect();
        tables.join("\n")
    }
    fn render_form(&self, envs: &[(&str, &RunDoc)]) -> String {
        match envs {
            [(_, doc)] => self.render(doc),
            _ => self.render_across(envs),
        }
    }
    fn is_form(&self) -> bool {
        true
    }
}

/// The Wombat table as a picture: per row of the L4 performance page's
/// LMBench tables (latencies, bandwidths, AIM7) the Rel. Perf of each
/// environment against the one it is compared with (the pairs of the
/// tables), a bar from 1.0 with its 95% interval; a plot per table and per
/// pair of clocks (a ratio of instruction counts to cycles means nothing,
/// so such pairs are left out).
pub struct RelPerfBars;

impl Plots for RelPerfBars {
    fn bars(&self, doc: &RunDoc) -> Vec<Bars> {
        let envs = environments(doc);
        let pairs: Vec<(&String, &String)> = match envs.as_slice() {
            [_] | [] => return Vec::new(),
            [a, b] => vec![(a, b)],
            all => all.iter().filter(|n| *n == "native").flat_map(|n| all.iter().filter(|o| *o != "native").map(move |o| (n, o))).collect(),
        };
        let clocks = |(a, b): &(&String, &String)| (Clock::of(doc, a), Clock::of(doc, b));
        let mut out = Vec::new();
        for kinds in crate::tables::tabular::distinct(pairs.iter().map(clocks)) {
            if (kinds.0 == Clock::Instructions) != (kinds.1 == Clock::Instructions) {
                continue;
            }
            let mine: Vec<&(&String, &String)> = pairs.iter().filter(|p| clocks(p) == kinds).collect();
            let panel =
                if kinds.0 == kinds.1 { kinds.0.panel().to_string() } else { format!("{} against {}", kinds.1.panel(), kinds.0.panel()) };
            for (name, rows) in [("latencies", latency_rows()), ("bandwidths", bandwidth_rows()), ("AIM7", aim_rows())] {
                out.extend(rel_bars(
                    doc,
                    &mine,
                    &rows,
                    format!("{}: LMBench {name}, Rel. Perf ({panel})", capitalised(Source::L4Performance.short())),
                ));
            }
        }
        out
    }
    fn across_environments(&self) -> bool {
        true
    }
}

/// One table's Rel. Perf bars: a series per pair, a row per table row
/// that some pair has both sides of.
fn rel_bars(doc: &RunDoc, pairs: &[&(&String, &String)], rows: &[Row], title: String) -> Option<Bars> {
    let docs: Vec<(RunDoc, RunDoc)> = pairs.iter().map(|(a, b)| (of_environment(doc, a), of_environment(doc, b))).collect();
    let policy = crate::analysis::uncertainty::verdict::Thresholds::default();
    let rel = |r: &Row, (da, db): &(RunDoc, RunDoc)| {
        let j = judge_by(method_in(doc), r.value(da)?, r.value(db)?, &policy, seed_of(&r.label));
        Some(match j.interval {
            Some(iv) => Point { x: 0.0, y: j.ratio, lo: iv.lo, hi: iv.hi },
            None => Point::bare(0.0, j.ratio),
        })
    };
    let kept: Vec<&Row> = rows.iter().filter(|r| docs.iter().any(|d| rel(r, d).is_some())).collect();
    if kept.is_empty() {
        return None;
    }
    Some(Bars {
        title,
        value_desc: "Rel. Perf (above 1: better than the first of the pair; log)".into(),
        rows: kept.iter().map(|r| r.label.clone()).collect(),
        series: pairs.iter().zip(&docs).map(|((a, b), d)| (format!("{b} against {a}"), kept.iter().map(|r| rel(r, d)).collect())).collect(),
        log: true,
        base: Some(1.0),
        caption: format!(
            "host {} ({}), run {}; each bar the ratio of medians with its 95% interval (bootstrap over rounds, then batches), as compare judges it",
            doc.host.hostname, doc.host.cpu_model, doc.id
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::bench::schema::CaseParams;

    /// A run whose only case is lat_ctx -s 0 2 with the switch (a hop less
    /// the overhead measured apart) at `switch` cycles.
    fn ring_run(switch: f64) -> RunDoc {
        let mut doc = crate::data::results::fixture();
        let mut case = doc.results[0].clone();
        case.benchmark = ctx::id(ctx::RING);
        case.params = ctx::Params { procs: 2, ws_kib: 0 }.to_params();
        let mut metric = case.metrics[0].clone();
        (metric.name, metric.summary.median, metric.estimate) = (ctx::SWITCH.into(), switch, None);
        let mut overhead = metric.clone();
        (overhead.name, overhead.summary.median) = (ctx::OVERHEAD.into(), 30_000.0);
        case.metrics = vec![metric, overhead];
        doc.results = vec![case];
        doc
    }

    fn ctx_line(doc: &RunDoc) -> String {
        render(&[doc], Method::Independent)
            .lines()
            .find(|l| l.starts_with("lat_ctx -s 0 2"))
            .unwrap_or_else(|| panic!("no row: {}", render(&[doc], Method::Independent)))
            .to_string()
    }

    /// Two runs' verdicts come from the comparison's own method, and the
    /// legend names it (a sequential comparison's table said Mann-Whitney).
    #[test]
    fn two_runs_are_judged_and_described_as_their_comparison_was() {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quick.json"));
        let doc = crate::data::documents::load(path).unwrap();
        let legend = |m: Method| render(&[&doc, &doc], m).lines().next().unwrap_or_default().to_string();
        assert!(legend(Method::Independent).contains("Mann-Whitney"), "{}", legend(Method::Independent));
        assert!(legend(Method::Paired).contains("Wilcoxon"), "{}", legend(Method::Paired));
        let seq = legend(Method::Sequential);
        assert!(seq.contains("confidence sequence") && !seq.contains("Mann-Whitney"), "{seq}");
    }

    /// The rows whose number depends on how their file was written (the
    /// page cache's folios follow the writes) say how, per layout; the
    /// row under lmbench's own label reads the file lmbench's script makes
    /// (scripts/validate counts a row outside 0.90-1.10 of lmbench's as
    /// named by this).
    #[test]
    fn the_file_rows_name_how_their_file_was_written() {
        let rows: Vec<Row> = latency_rows().into_iter().chain(bandwidth_rows()).collect();
        for label in ["lat_pagefault", "bw_file_rd 64M io_only", "bw_mmap_rd 64M mmap_only", "bw_mmap_rd 64M open2close"] {
            let r = rows.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no row {label}"));
            assert!(r.comment.starts_with("file written in 8 KiB writes + fsync, as lmbench's script's lmdd"), "{label}: {}", r.comment);
            assert_eq!(r.params.get("file_writes").and_then(|v| v.as_str()), Some("8k"), "{label}");
            for w in ["4 KiB", "1 MiB"] {
                let other =
                    rows.iter().find(|r| r.label == format!("{label} ({w} writes)")).unwrap_or_else(|| panic!("no {w} row of {label}"));
                assert!(other.comment.starts_with(&format!("file written in {w} writes;")), "{}", other.comment);
            }
        }
    }

    /// An ARM column (qemu-arm64) has the page's own XScale Linux figures
    /// beside it as the reference they are; another has none.
    #[test]
    fn an_arm_column_has_the_pages_xscale_figures_beside_it() {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quick.json"));
        let mut doc = crate::data::documents::load(path).unwrap();
        let row = |text: &str, label: &str| text.lines().find(|l| l.starts_with(label)).map(str::to_string);
        let x86 = render(&[&doc], Method::Independent);
        assert!(!x86.contains(XSCALE_COLUMN), "{x86}");
        doc.environment.name = "qemu-arm64".into();
        let arm = render(&[&doc], Method::Independent);
        assert!(arm.contains(XSCALE_COLUMN) && arm.contains("PXA255") && arm.contains("not guest instructions"), "{arm}");
        let ctx = row(&arm, "lat_ctx -s 0 2 ").unwrap_or_else(|| panic!("{arm}"));
        assert!(ctx.contains(" 190.8 "), "{ctx}");
        let raw = row(&arm, "(raw getppid)").unwrap_or_else(|| panic!("{arm}"));
        assert!(!raw.contains("190.8") && raw.split_whitespace().count() > 3, "a row the page has not: no figure: {raw}");
        let two = render_named(&[&doc, &doc], ["qemu-tcg", "qemu-arm64"], Method::Independent);
        assert!(row(&two, "bw_pipe ").unwrap_or_else(|| panic!("{two}")).contains(" 10.15 "), "{two}");
    }

    /// Under QEMU's instruction counter the latencies are guest
    /// instructions (no microseconds), and a bandwidth row, which has no
    /// rate there, is n/a with the reason rather than left out.
    #[test]
    fn counted_runs_show_instructions_and_say_why_a_rate_is_missing() {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quick.json"));
        let mut doc = crate::data::documents::load(path).unwrap();
        for r in &mut doc.results {
            r.metrics.retain(|m| m.name != bw::BANDWIDTH);
            for m in &mut r.metrics {
                (m.unit, m.ns) = (crate::data::results::UNIT_INSTRUCTIONS.into(), None);
            }
        }
        let text = render(&[&doc], Method::Independent);
        assert!(text.contains("guest instructions per operation") && !text.contains("microseconds (TSC"), "{text}");
        let header = text.lines().find(|l| l.starts_with("Latencies")).unwrap();
        assert!(header.contains("instr") && !header.contains(" us ") && !header.contains("cycles"), "{header}");
        let pipe = text.lines().find(|l| l.starts_with("bw_pipe ")).unwrap_or_else(|| panic!("the row is kept: {text}"));
        assert!(pipe.contains("n/a") && pipe.contains("no rate"), "{pipe}");
    }

    #[test]
    fn a_switch_not_above_the_overhead_is_not_shown_as_a_number() {
        for switch in [-1234.0, 0.0] {
            let line = ctx_line(&ring_run(switch));
            assert!(line.contains("n/a") && line.contains("no switch cost resolved"), "{line}");
            assert!(!line.contains("1234") && !line.contains("-0"), "{line}");
        }
        let line = ctx_line(&ring_run(5000.0));
        assert!(!line.contains("n/a") && line.contains("ring overhead"), "{line}");
    }
}
