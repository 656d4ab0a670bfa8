//! The report that leads with what was measured (`show` without `--full`,
//! the HTML report's first tables): the published evaluations' forms that
//! the run's suites and environments fill, then each environment's tables
//! with every case that is n/a there left out (a line per table says what
//! and why, grouped by reason; a table with nothing measured is that one
//! line), then the environments side by side, of the cases measured in two
//! or more. `--full` (`super::render_tables`) keeps every row.

use super::env;
use super::tables::Lineup;
use crate::data::results::{CaseResult, CaseStatus, RunDoc, param_text, params_label};
use crate::tables::tabular::tables::Table;

/// The results of environment `e` only, named as a run of it alone.
pub(crate) fn of_env(doc: &RunDoc, e: &str) -> RunDoc {
    let mut d = doc.clone();
    d.results.retain(|r| r.env(doc) == e);
    d.environment.name = e.to_string();
    d
}

/// The families of the quick suite's results (in order), and the run
/// without them.
pub(crate) fn without_quick(doc: &RunDoc) -> (Vec<String>, RunDoc) {
    let quick = crate::tables::tabular::distinct(doc.results.iter().filter(|r| r.suite == QUICK).map(|r| r.family.clone()));
    let mut rest = doc.clone();
    rest.results.retain(|r| r.suite != QUICK);
    (quick, rest)
}

/// The suite of every family, briefly.
const QUICK: &str = "quick";

/// The forms of the published evaluations that the run fills, each over
/// every environment of the run, in the line-up's order.
pub fn render_forms(doc: &RunDoc, tables: &Lineup) -> String {
    let per_env: Vec<(String, RunDoc)> = env::environments(doc).into_iter().map(|e| (of_env(doc, &e), e)).map(|(d, e)| (e, d)).collect();
    let mut out = String::new();
    for t in tables.tables() {
        let drawn: Vec<RunDoc> = per_env.iter().map(|(_, d)| tables.drawn(*t, d)).collect();
        let named: Vec<(&str, &RunDoc)> = per_env.iter().map(|(e, _)| e.as_str()).zip(&drawn).collect();
        let form = t.render_form(&named);
        if !form.is_empty() {
            out += &format!("\n{form}");
        }
    }
    out
}

/// The table `t` of `doc` with the cases of its families that are n/a left
/// out, and a line saying which and why (the table alone when none was; the
/// line alone when nothing else was measured); without the cases its form
/// showed and those of the side-by-side table (`side`: benchmark and
/// parameters label), which a line names.
pub(crate) fn table_text(t: &dyn Table, doc: &RunDoc, side: &[(String, String)]) -> String {
    let families = t.families();
    let (na, kept): (Vec<CaseResult>, Vec<CaseResult>) =
        doc.results.iter().cloned().partition(|r| families.contains(&r.family.as_str()) && r.status == CaseStatus::NotApplicable);
    let mut d = doc.clone();
    d.results = kept;
    let line = if na.is_empty() { String::new() } else { left_out(&na, &d) };
    let beside = |r: &CaseResult| families.contains(&r.family.as_str()) && side.contains(&(r.benchmark.clone(), params_label(&r.params)));
    let formed = d.results.iter().filter(|r| t.in_form(r)).count();
    let sided: Vec<&CaseResult> = d.results.iter().filter(|r| !t.in_form(r) && beside(r)).collect();
    let (moved, there) = (formed + sided.len(), elsewhere(formed, &sided));
    d.results.retain(|r| !t.in_form(r) && !beside(r));
    let text = t.render(&d);
    let end = if line.is_empty() { "\n" } else { "; " };
    match (text.is_empty(), moved, line.is_empty()) {
        (false, 0, _) => format!("{text}{}", if line.is_empty() { String::new() } else { format!("  {line}") }),
        (false, _, _) => format!("{text}  {there}{end}{line}"),
        (true, 0, true) => String::new(),
        (true, 0, false) => format!("{}: nothing measured; {line}", families.join(", ")),
        (true, _, _) => format!("{}: {there}{end}{line}", families.join(", ")),
    }
}

/// Where the measured cases left out of a table are: "its 12 measured
/// cases are in the form above", "null, sched_yield: side by side below".
fn elsewhere(formed: usize, sided: &[&CaseResult]) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let form = format!("{formed} measured case{} {} in the form above", plural(formed), if formed == 1 { "is" } else { "are" });
    let names =
        crate::tables::tabular::distinct(sided.iter().map(|r| r.benchmark.split_once('.').map_or(r.benchmark.as_str(), |(_, n)| n)));
    let side = format!("{} ({} case{}) side by side below", names.join(", "), sided.len(), plural(sided.len()));
    match (formed, sided.is_empty()) {
        (_, true) => format!("its {form}"),
        (0, false) => side,
        _ => format!("{form}; {side}"),
    }
}

/// One line: the n/a cases of `na`, grouped by reason, each group named by
/// its benchmarks (and, where a benchmark was measured too, by the
/// parameters that set its n/a cases apart).
pub(crate) fn left_out(na: &[CaseResult], measured: &RunDoc) -> String {
    let mut groups: Vec<(String, Vec<&CaseResult>)> = Vec::new();
    for r in na {
        let why = reason(r);
        match groups.iter_mut().find(|g| g.0 == why) {
            Some(g) => g.1.push(r),
            None => groups.push((why, vec![r])),
        }
    }
    let mut parts: Vec<String> = groups
        .iter()
        .map(|(why, cases)| {
            let benches = crate::tables::tabular::distinct(cases.iter().map(|r| r.benchmark.as_str()));
            let mut names: Vec<String> = benches.iter().map(|b| named(b, cases, measured)).collect();
            // The parameters that set every benchmark's cases apart alike, said once.
            let apart = |n: &String| n.split_once(' ').map(|(_, a)| a.to_string());
            let shared = names.first().and_then(apart).filter(|a| names.len() > 1 && names.iter().all(|n| apart(n).as_ref() == Some(a)));
            if shared.is_some() {
                names.iter_mut().for_each(|n| *n = n.split_once(' ').map_or(n.clone(), |(b, _)| b.to_string()));
            }
            if names.len() > 4 {
                let more = names.len() - 3;
                names.truncate(3);
                names.push(format!("{more} more"));
            }
            let n = cases.len();
            let with = shared.map(|a| format!(" with {a}")).unwrap_or_default();
            format!("{}{with} ({n} case{}): {why}", names.join(", "), if n == 1 { "" } else { "s" })
        })
        .collect();
    // About two lines: the reasons after them are counted, and in `--full`.
    let mut shown = 0;
    while shown < parts.len() && (shown == 0 || parts[..=shown].iter().map(|p| p.len() + 2).sum::<usize>() <= LEFT_OUT_CHARS) {
        shown += 1;
    }
    if shown < parts.len() {
        let cases: usize = groups[shown..].iter().map(|g| g.1.len()).sum();
        parts.truncate(shown);
        parts.push(format!(
            "{} more reason{} ({cases} cases): show --full",
            groups.len() - shown,
            if groups.len() - shown == 1 { "" } else { "s" }
        ));
    }
    format!("left out, n/a: {}\n", parts.join("; "))
}

/// About what two lines of a terminal hold: a left-out line names the
/// reasons that fit, and counts the others.
const LEFT_OUT_CHARS: usize = 180;

/// A benchmark's n/a cases in a left-out line: its short name, and where
/// the benchmark was measured too, the parameter values of its n/a cases
/// that no measured case of it has.
fn named(bench: &str, cases: &[&CaseResult], measured: &RunDoc) -> String {
    let short = bench.split_once('.').map_or(bench, |(_, n)| n).to_string();
    let ok: Vec<&CaseResult> = measured.results.iter().filter(|r| r.benchmark == bench && r.status == CaseStatus::Ok).collect();
    if ok.is_empty() {
        return short;
    }
    let mine: Vec<&&CaseResult> = cases.iter().filter(|r| r.benchmark == bench).collect();
    let keys = crate::tables::tabular::distinct(mine.iter().flat_map(|r| r.params.keys().cloned()));
    let apart: Vec<String> = keys
        .iter()
        .filter_map(|k| {
            let values = crate::tables::tabular::distinct(mine.iter().filter_map(|r| r.params.get(k)).map(param_text));
            let seen = |v: &String| ok.iter().any(|r| r.params.get(k).map(param_text).as_ref() == Some(v));
            (!values.iter().any(seen)).then(|| format!("{k}={}", values.join("/")))
        })
        .collect();
    if apart.is_empty() { short } else { format!("{short} {}", apart.join(" ")) }
}

/// Why a case is n/a, in brief: without the "BENCH in ENV: " the guests
/// put before it, its first clause (up to a "; ") without parentheses (the
/// whole reason is in `show --full` and the JSON).
pub(crate) fn reason(r: &CaseResult) -> String {
    let why = r.reason.as_deref().unwrap_or("no reason given");
    let why = match why.strip_prefix(&format!("{} in ", r.benchmark)).and_then(|rest| rest.split_once(": ")) {
        Some((_, rest)) => rest,
        None => why,
    };
    let first = why.split("; ").next().unwrap_or(why);
    let mut out = String::new();
    let mut depth = 0usize;
    for c in first.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ").replace(" ,", ",").replace(" :", ":");
    if out.is_empty() { first.to_string() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_loses_the_guests_prefix_and_cases_group_by_it() {
        let mut doc = crate::data::results::fixture();
        let spin: Vec<CaseResult> = doc.results.iter().filter(|r| r.status == CaseStatus::NotApplicable).cloned().collect();
        assert!(!spin.is_empty(), "the fixture has n/a cases");
        let mut prefixed = spin[0].clone();
        prefixed.reason = Some(format!("{} in seL4: {}", prefixed.benchmark, spin[0].reason.clone().unwrap()));
        assert_eq!(reason(&prefixed), reason(&spin[0]));
        doc.results.retain(|r| r.status == CaseStatus::Ok);
        let line = left_out(&[spin[0].clone(), prefixed], &doc);
        assert_eq!(line.matches("(2 cases)").count(), 1, "one group: {line}");
        // ipc.spin is measured across cores: its n/a cases are the same-core ones.
        assert!(line.contains("spin cores=same"), "{line}");
    }
}
