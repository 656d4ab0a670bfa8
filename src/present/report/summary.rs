//! The one-screen answer to "what does this machine cost me": the headline
//! figure of every family that ran (each family picks its own, in its
//! `table.rs`; the registry lists them), with its interval, and (when several
//! environments ran) each environment against native (or the first of
//! --env) with its verdict.
//! At most about 25 lines; the full tables are `show RUN --full`.

use crate::analysis::uncertainty::verdict::Thresholds;
use crate::data::compare::{judge_in, seed_of, verdict_word};
use crate::data::results::{CaseStatus, RunDoc, UNIT_CYCLES};
use crate::tables::tabular::headline::{Headline, Pick};
use crate::tables::tabular::table::{TextTable, cycles};

/// The headlines of `env`'s results, the registry's in its order.
fn headlines<'a>(doc: &'a RunDoc, env: &'a str) -> Vec<Headline<'a>> {
    let pick = Pick { doc, env };
    crate::run::registry::headlines().into_iter().flat_map(|h| h.headlines(pick)).collect()
}

/// The value of a headline: the median (the max for noise and control
/// deviations, whose point is the worst case), in its unit.
fn value(h: &Headline) -> (String, String) {
    let v = if h.worst { h.metric.summary.max } else { h.metric.summary.median };
    let unit = crate::data::results::unit_word(&h.metric.unit).to_string();
    let shown = if h.metric.unit == UNIT_CYCLES || h.metric.is_exact() || v >= 100.0 {
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
        _ if h.worst => "max".into(),
        Some(e) => format!(
            "+-{:.1}%{}",
            e.interval.relative_half_width(e.median) * 100.0,
            if crate::tables::tabular::table::uncertain(h.metric) { "?" } else { "" }
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
    if h.metric.unit != UNIT_CYCLES || h.worst {
        return String::new();
    }
    let v = h.metric.summary.median * 1e9 / tsc_hz;
    if v >= 10_000.0 { format!("{:.1} us", v / 1000.0) } else { format!("{v:.0} ns") }
}

/// The summary of a run, to fit `width` columns.
pub fn render(doc: &RunDoc, width: usize) -> String {
    lay_out(parts(doc), |t| t.render_width(width), width)
}

/// The summary of a run for the report that leads with what was measured:
/// an environment none of whose headline cases it measured gets no rel.
/// column (and with none left, the legend of rel. goes too); laid out as
/// that report fits its tables (a long label wraps before the table splits).
pub fn render_brief(doc: &RunDoc, width: usize) -> String {
    lay_out(brief_parts(doc), |t| t.render_compact(width), width)
}

/// [`parts`] without the rel. columns that say nothing.
pub fn brief_parts(doc: &RunDoc) -> Parts {
    let mut p = parts(doc);
    let Some(t) = p.table.as_mut() else { return p };
    let empty: Vec<usize> = (5..t.headers.len())
        .filter(|&i| t.headers[i].ends_with(" rel.") && t.rows.iter().all(|r| r.get(i).is_none_or(|c| c == "-")))
        .collect();
    for &i in empty.iter().rev() {
        t.headers.remove(i);
        t.rows.iter_mut().filter(|r| r.len() > i).for_each(|r| drop(r.remove(i)));
    }
    let rel = t.headers.iter().any(|h| h.ends_with(" rel."));
    let time = measured_share(doc, true);
    let base = base_of(doc).1;
    // Exact counts are compared as they are, never paired by round.
    let paired = lines_of(doc).iter().any(|h| !h.metric.is_exact());
    p.note = p
        .note
        .lines()
        .filter(|l| rel || !l.starts_with("  rel. ="))
        .filter(|l| rel && paired || !l.starts_with("  the environments took turns"))
        .map(|l| match l {
            _ if l.starts_with("  time:") => time.clone(),
            _ if l.starts_with("  rel. =") => {
                format!("  rel. = against {base} (above 1: faster), with its verdict (faster, slower, same, unsure)\n")
            }
            _ => format!("{l}\n"),
        })
        .collect();
    p
}

fn lay_out(p: Parts, table: impl Fn(&TextTable) -> String, width: usize) -> String {
    match &p.table {
        Some(t) => format!("{}\n{}", p.heading, super::fit_text(&(table(t) + &p.note), width)),
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

/// Where a run's time went: its wall time (start to end, whole seconds)
/// and the share of it spent measuring its cases in every round (each
/// case's timed batches with their calibration and warm-up); the rest is the counting
/// pass and its cool-down, process starts, TSC calibration, planning, loads
/// settling, writes.
/// Empty for a run not finished. `brief`: without what the rest is.
fn measured_share(doc: &RunDoc, brief: bool) -> String {
    let secs = |s: &str| crate::data::results::rfc3339_secs(s);
    let Some(wall) = doc.finished_at.as_deref().and_then(secs).zip(secs(&doc.started_at)).map(|(e, s)| e.saturating_sub(s)) else {
        return String::new();
    };
    // Every round's where the document records them, else the cases' own seconds.
    let spent = super::time::breakdown(doc);
    let cases: f64 = spent.families.values().flat_map(|k| k.iter()).map(|s| s.measuring_s).sum();
    if wall == 0 {
        return format!("  time: under a second, {cases:.1} s of it measuring the cases\n");
    }
    let rest = if spent.recorded { "; show --time: where it went" } else { "" };
    if brief {
        return format!(
            "  time: {wall} s, of which {cases:.0} s ({:.0}%) measuring the cases{rest}\n",
            (100.0 * cases / wall as f64).min(100.0)
        );
    }
    format!(
        "  time: {wall} s, of which {cases:.0} s ({:.0}%) measuring the cases (timed batches, their calibration and warm-up; the rest: counting pass, process starts, writes{rest})\n",
        (100.0 * cases / wall as f64).min(100.0)
    )
}

/// The environments of a run in order, and the one the summary stands for
/// (native, or the first).
fn base_of(doc: &RunDoc) -> (Vec<&str>, &str) {
    let mut envs: Vec<&str> = Vec::new();
    for r in &doc.results {
        let e = r.env(doc);
        if !envs.contains(&e) {
            envs.push(e);
        }
    }
    let base = if envs.contains(&"native") { "native" } else { envs.first().copied().unwrap_or("native") };
    (envs, base)
}

/// The summary's headlines: its environment's.
fn lines_of(doc: &RunDoc) -> Vec<Headline<'_>> {
    headlines(doc, base_of(doc).1)
}

/// The summary of a run, in pieces.
pub fn parts(doc: &RunDoc) -> Parts {
    let (envs, base) = base_of(doc);
    let lines = headlines(doc, base);
    let counted = !lines.is_empty() && lines.iter().all(|h| h.metric.is_exact());
    let heading = format!(
        "summary ({base}, load {}, isolation {}{}), {}",
        doc.condition.load,
        doc.condition.isolation_label(),
        if doc.settings.rounds > 1 && !counted { format!(", {} rounds a cell", doc.settings.rounds) } else { ", 1 round".into() },
        if counted {
            "guest instructions (QEMU's instruction counter: exact, no time)".to_string()
        } else {
            super::header::clock_units(&doc.host.clock)
        }
    );
    if lines.is_empty() {
        return Parts { heading, table: None, note: String::new() };
    }
    let twin_of = |h: &Headline, e: &str| {
        doc.results
            .iter()
            .find(|r| r.status == CaseStatus::Ok && r.env(doc) == e && r.benchmark == h.result.benchmark && r.params == h.result.params)
    };
    let others: Vec<&str> = envs.iter().copied().filter(|e| *e != base).collect();
    let mut head = vec!["", "value", "unit", "95% CI", "time"];
    let rel_heads: Vec<String> = others.iter().map(|e| format!("{e} rel.")).collect();
    head.extend(rel_heads.iter().map(String::as_str));
    let mut t = TextTable::new(&head, 1);
    let policy = Thresholds::default();
    for h in &lines {
        let (v, unit) = value(h);
        let mut row = vec![h.what.clone(), v, unit, interval(h), ns(h, doc.host.clock.tsc_hz)];
        for e in &others {
            row.push(match twin_of(h, e).and_then(|r| r.metric(&h.metric.name)) {
                Some(m) => {
                    let j = judge_in(doc, h.metric, m, &policy, seed_of(&format!("{} {e}", h.what)));
                    if j.ratio.is_nan() { super::compare::ratio_cell(&j) } else { format!("{:.2} {}", j.ratio, verdict_word(j.verdict)) }
                }
                None => "-".into(),
            });
        }
        t.row(row);
    }
    let mut note = levels_note(&lines);
    note += &measured_share(doc, false);
    if !others.is_empty() {
        note +=
            &format!("  rel. = performance against {base} (above 1: faster) with its verdict over rounds (faster, slower, same, unsure)\n");
        if let Some(how) = crate::data::compare::method_in(doc).paired_words() {
            note += &format!("  the environments took turns by round: rel. pairs their rounds ({how})\n");
        }
    }
    Parts { heading, table: Some(t), note }
}
