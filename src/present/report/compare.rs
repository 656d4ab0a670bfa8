//! `oscycles compare A B`: who A and B are, every common case, then the seed
//! tables side by side where the runs have their rows.

use crate::analysis::uncertainty::{verdict::Thresholds, verdict::Verdict};
use crate::data::compare::{Judged, Method, Row, tally, verdict_word};
use crate::data::results::RunDoc;
use crate::tables::tabular::table::{TextTable, cycles};

fn who(tag: &str, d: &RunDoc) -> String {
    format!(
        "{tag}: {} ({}), {} {}, env {}, load {}, isolation {}, {}\n",
        d.id,
        d.started_at,
        d.host.hostname,
        d.host.kernel_release,
        d.environment.name,
        d.condition.load,
        d.condition.isolation_label(),
        super::header::clock_rate(&d.host.clock, 3)
    )
}

fn value(v: f64, unit: &str) -> String {
    if unit == crate::data::results::UNIT_CYCLES { cycles(v) } else { format!("{v:.1}") }
}

/// The ratio with its interval: "1.02 [0.98, 1.06]".
pub fn ratio_cell(j: &Judged) -> String {
    if j.ratio.is_nan() {
        // Two units (cycles, guest instructions): never one ratio.
        return "other unit".into();
    }
    match j.interval {
        Some(i) => format!("{:.2} [{:.2}, {:.2}]", j.ratio, i.lo, i.hi),
        None => format!("{:.2}", j.ratio),
    }
}

/// The verdict, with the rounds that would settle an unsure one.
pub fn verdict_cell(j: &Judged) -> String {
    match (j.verdict, j.rounds_needed) {
        (Verdict::Unsure, Some(n)) if n >= crate::analysis::uncertainty::verdict::ROUNDS_NEEDED_CAP => "unsure (on the margin)".into(),
        (Verdict::Unsure, Some(n)) => format!("unsure (~{n} rounds)"),
        (v, _) => verdict_word(v).into(),
    }
}

/// The closing lines: counts of each verdict, and what settles the unsure.
pub fn tally_lines(rows: &[Row], policy: &Thresholds) -> String {
    let [f, sl, same, unsure] = tally(rows);
    let mut s = format!(
        "{} cells: {f} faster, {sl} slower, {same} same (interval inside +-{:.0}%), {unsure} unsure\n",
        rows.len(),
        policy.margin * 100.0
    );
    let needs: Vec<usize> = rows.iter().filter(|r| r.judged.verdict == Verdict::Unsure).filter_map(|r| r.judged.rounds_needed).collect();
    if !needs.is_empty() {
        let few = rows.iter().filter(|r| r.judged.rounds.0.min(r.judged.rounds.1) < policy.min_rounds).count();
        let mut sorted = needs.clone();
        sorted.sort_unstable();
        let median = sorted[sorted.len() / 2];
        let settle = |n: usize| sorted.iter().filter(|&&x| x <= n).count();
        s += &format!(
            "unsure: {few} with fewer than {} rounds a side; median rounds needed {median}; {} would settle with 10 rounds, {} with 20\n",
            policy.min_rounds,
            settle(10),
            settle(20)
        );
    }
    s
}

/// Two runs compared apart (`Method::Independent`): see [`render_by`].
pub fn render(a: &RunDoc, b: &RunDoc, rows: &[Row], policy: &Thresholds) -> String {
    render_by(a, b, rows, policy, Method::Independent)
}

/// What the header says of the interval and the verdict: the test the
/// verdicts came from.
fn method_lines(policy: &Thresholds, method: Method) -> String {
    let m = policy.margin * 100.0;
    match method {
        Method::Independent => format!(
            "(bootstrap over rounds, then batches); verdict: faster/slower when the whole interval is beyond +-{m:.0}% and a Mann-Whitney\n\
             test over round medians gives p < {}; same when the interval is inside +-{m:.0}%; unsure otherwise, with the rounds likely to settle it.\n\n",
            policy.alpha,
        ),
        Method::Paired => format!(
            "(the median of per-round ratios, A's round k against B's, bootstrapped over the pairs); verdict: faster/slower when the whole\n\
             interval is beyond +-{m:.0}% and a Wilcoxon signed-rank test over the per-round ratios gives p < {}; same when the interval is\n\
             inside +-{m:.0}%; unsure otherwise, with the rounds likely to settle it.\n\n",
            policy.alpha,
        ),
        Method::Sequential => format!(
            "(a confidence sequence for the median per-pair ratio, valid however often it is looked at: no p-value); verdict, after every\n\
             pair: faster/slower when the whole sequence is beyond +-{m:.0}%, same when it is inside +-{m:.0}%, unsure otherwise, with the\n\
             pairs likely to settle it; cells counted exactly: their one ratio.\n\n"
        ),
    }
}

/// The comparison of B with A: who they are, how the verdicts were
/// reached (`method`), every common cell, the tally, the seed tables.
pub fn render_by(a: &RunDoc, b: &RunDoc, rows: &[Row], policy: &Thresholds, method: Method) -> String {
    let mut s = who("A", a) + &who("B", b);
    s += "rel. = B's performance relative to A's: above 1 means B is better (A/B for costs, B/A for rates), with its 95% interval\n";
    s += &method_lines(policy, method);
    let counts = rows.iter().any(|r| !r.counts_changed.is_empty());
    let mut headers = vec!["benchmark", "case", "metric", "unit", "A median", "B median", "rel. [95% interval]", "p", "verdict"];
    if counts {
        headers.push("counts per op that changed, A -> B");
    }
    let mut t = TextTable::new(&headers, 4);
    if counts {
        t.also_left.push(headers.len() - 1);
    }
    for r in rows {
        let mut cells = vec![
            r.benchmark.clone(),
            r.params.clone(),
            r.metric.clone(),
            r.unit.clone(),
            value(r.a, &r.unit),
            value(r.b, &r.unit),
            ratio_cell(&r.judged),
            r.judged.p.map_or("-".into(), |p| format!("{p:.3}")),
            verdict_cell(&r.judged),
        ];
        if counts {
            cells.push(super::counters::changes(r));
        }
        t.row(cells);
    }
    s += &t.render();
    s += &tally_lines(rows, policy);
    let seed = crate::families::published::lmbench::render(&[a, b], method);
    if !seed.is_empty() {
        s += "\n";
        s += &seed;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_describes_the_test_the_verdicts_came_from() {
        let doc = crate::data::results::fixture();
        let policy = Thresholds::default();
        let rows = crate::data::compare::rows(&doc, &doc, &policy);
        let head = |m: Method| render_by(&doc, &doc, &rows, &policy, m).split("\n\n").next().unwrap().to_string();
        let (apart, paired, sequential) = (head(Method::Independent), head(Method::Paired), head(Method::Sequential));
        assert!(apart.contains("Mann-Whitney") && apart.contains("bootstrap over rounds, then batches"), "{apart}");
        assert!(paired.contains("Wilcoxon signed-rank") && !paired.contains("Mann-Whitney"), "{paired}");
        assert!(sequential.contains("confidence sequence") && !sequential.contains("Mann-Whitney"), "{sequential}");
        assert!(!sequential.contains("Wilcoxon") && !sequential.contains("bootstrap"), "{sequential}");
        assert_eq!(render(&doc, &doc, &rows, &policy), render_by(&doc, &doc, &rows, &policy, Method::Independent));
    }
}
