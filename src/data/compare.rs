//! Comparing two runs: every case present in both, the relative performance
//! of B against A (above 1 means B is better, whichever way the metric
//! improves) with its 95% interval, and a verdict (`faster`, `slower`,
//! `same`, `unsure`) that respects rounds: the interval is a bootstrap over
//! rounds then batches, the test a Mann-Whitney U over round medians (see
//! `uncertainty`). Where a document has no raw samples (schema version 1)
//! the ratio stands alone and the verdict is `unsure`.

use crate::analysis::uncertainty::{self, bootstrap::Interval, verdict::Thresholds, verdict::Verdict};
use crate::base::named::Named;
use crate::data::results::{Better, CaseResult, CaseStatus, Metric, RunDoc};

/// B's performance relative to A's: A/B for costs, B/A for rates.
pub fn relative(a: &Metric, b: &Metric) -> f64 {
    match a.better {
        Better::Lower => a.summary.median / b.summary.median,
        Better::Higher => b.summary.median / a.summary.median,
    }
}

/// A comparison of one metric of one cell.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Judged {
    /// B's performance relative to A's (medians).
    pub ratio: f64,
    pub interval: Option<Interval>,
    /// Mann-Whitney U over round medians, two-sided.
    pub p: Option<f64>,
    pub verdict: Verdict,
    /// Rounds a side that would likely settle an `unsure`.
    pub rounds_needed: Option<usize>,
    pub rounds: (usize, usize),
    /// Whether the rounds were paired (columns of one run whose
    /// environments took turns by round): the interval and test are then
    /// over per-round ratios (Wilcoxon signed-rank), not Mann-Whitney.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub paired: bool,
}

impl Judged {
    /// The judgement a comparison gives, over `rounds` (A's, B's).
    fn of(c: &uncertainty::verdict::Comparison, rounds: (usize, usize), paired: bool) -> Judged {
        Judged {
            ratio: c.ratio,
            interval: Some(c.interval),
            p: Some(c.p),
            verdict: c.verdict,
            rounds_needed: c.rounds_needed,
            rounds,
            paired,
        }
    }
}

/// A seed from a cell's name, so that the same two documents always give
/// the same intervals.
pub fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Compares metric B with metric A under `policy`.
pub fn judge(a: &Metric, b: &Metric, policy: &Thresholds, seed: u64) -> Judged {
    let rounds = (a.samples.len(), b.samples.len());
    if a.unit != b.unit {
        // Cycles against guest instructions: no ratio on one axis.
        return Judged { ratio: f64::NAN, interval: None, p: None, verdict: Verdict::Unsure, rounds_needed: None, rounds, paired: false };
    }
    let lower = a.better == Better::Lower;
    let c = (!a.samples.is_empty() && !b.samples.is_empty())
        .then(|| match exact(a, b) {
            // Exact counts, the same on every run: any difference is real.
            true => uncertainty::verdict::compare_exact(&a.samples, &b.samples, lower),
            false => uncertainty::verdict::compare(&a.samples, &b.samples, lower, policy, seed),
        })
        .flatten();
    match c {
        Some(c) => Judged::of(&c, rounds, false),
        None => Judged {
            ratio: relative(a, b),
            interval: None,
            p: None,
            verdict: Verdict::Unsure,
            rounds_needed: Some(policy.min_rounds),
            rounds,
            paired: false,
        },
    }
}

/// Whether both metrics are counted exactly, in the same unit.
fn exact(a: &Metric, b: &Metric) -> bool {
    a.is_exact() && b.unit == a.unit
}

/// How a comparison's verdicts are reached (and what its tables say of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Runs apart: bootstrap intervals of each side, Mann-Whitney over
    /// round medians (`judge`).
    Independent,
    /// Rounds taken in turns, a fixed number: the median of per-round
    /// ratios, Wilcoxon signed-rank (`judge_paired_if`).
    Paired,
    /// Rounds taken in turns until each cell had a verdict, looked at after
    /// every round: a confidence sequence (`judge_sequential`).
    Sequential,
}

impl Method {
    /// How a table's verdicts were reached, as its legend says it.
    pub fn verdict_words(self) -> &'static str {
        match self {
            Method::Independent => "the interval over rounds and a Mann-Whitney test, as in compare",
            Method::Paired => "paired rounds: the median of per-round ratios and a Wilcoxon signed-rank test",
            Method::Sequential => "paired rounds judged after every round by a confidence sequence, as the comparison's cells",
        }
    }

    /// How the rounds were paired and judged, as a table's note says it
    /// (None: they were not paired).
    pub fn paired_words(self) -> Option<&'static str> {
        match self {
            Method::Independent => None,
            Method::Paired => Some("median of per-round ratios, Wilcoxon signed-rank test"),
            Method::Sequential => {
                Some("median of per-round ratios, judged after every round until a verdict by a confidence sequence valid at every look")
            }
        }
    }
}

/// How the columns of one run are compared: paired where the run
/// interleaved its environments, sequentially where it did so until the
/// cells had verdicts between the columns (`run --env a,b --rounds auto`).
pub fn method_in(doc: &RunDoc) -> Method {
    let until_verdicts = doc.settings.adaptive.iter().any(|o| o.against.is_some());
    match (doc.settings.interleaved, until_verdicts) {
        (true, true) => Method::Sequential,
        (true, false) => Method::Paired,
        (false, _) => Method::Independent,
    }
}

/// Compares metric B with metric A, two columns of one run `doc`: as the
/// run's rounds were judged ([`method_in`]: sequentially with the margin
/// the run settled its cells on), falling back to `judge` where the rounds
/// do not pair.
pub fn judge_in(doc: &RunDoc, a: &Metric, b: &Metric, policy: &Thresholds, seed: u64) -> Judged {
    let target = doc.settings.adaptive.iter().find(|o| o.against.is_some()).map(|o| o.asked.target_pct / 100.0);
    let policy = Thresholds { margin: target.unwrap_or(policy.margin), ..*policy };
    judge_by(method_in(doc), a, b, &policy, seed)
}

/// Compares metric B with metric A as `method` says (sequentially or on
/// paired rounds where the rounds pair, else as `judge`).
pub fn judge_by(method: Method, a: &Metric, b: &Metric, policy: &Thresholds, seed: u64) -> Judged {
    match method {
        Method::Sequential => judge_sequential(a, b, policy).unwrap_or_else(|| judge(a, b, policy, seed)),
        m => judge_paired_if(m == Method::Paired, a, b, policy, seed),
    }
}

/// Compares metric B with metric A on paired rounds where `paired` and
/// the rounds pair (as many on each side), else as `judge`.
pub fn judge_paired_if(paired: bool, a: &Metric, b: &Metric, policy: &Thresholds, seed: u64) -> Judged {
    let rounds = (a.samples.len(), b.samples.len());
    // Exact counts need no pairing (`judge` compares them as they are).
    let paired = (paired && !exact(a, b) && a.unit == b.unit)
        .then(|| uncertainty::verdict::compare_paired(&a.samples, &b.samples, a.better == Better::Lower, policy, seed))
        .flatten();
    match paired {
        Some(c) => Judged::of(&c, rounds, true),
        None => judge(a, b, policy, seed),
    }
}

/// Compares metric B with metric A on paired rounds by the sequential rule
/// (`sequential`: a confidence sequence for the median per-pair ratio,
/// valid at every look), for comparisons judged after every pair. A cell
/// counted exactly (guest instructions, no spread on either side) is judged
/// on its one number. `alpha` and `margin` from `policy`; None where the
/// rounds do not pair or a value is not positive.
pub fn judge_sequential(a: &Metric, b: &Metric, policy: &Thresholds) -> Option<Judged> {
    let lower = a.better == Better::Lower;
    let rounds = (a.samples.len(), b.samples.len());
    if rounds.0 != rounds.1 || rounds.0 == 0 || a.unit != b.unit {
        return None;
    }
    let exact = exact(a, b).then(|| crate::analysis::sequential::exact(&a.samples, &b.samples, lower, policy.margin)).flatten();
    if let Some((verdict, ratio)) = exact {
        let interval = Some(Interval { lo: ratio, hi: ratio });
        return Some(Judged { ratio, interval, p: None, verdict, rounds_needed: None, rounds, paired: true });
    }
    let median = |r: &Vec<f64>| {
        let mut s = r.clone();
        s.sort_by(f64::total_cmp);
        crate::analysis::stats::quantile_sorted(&s, 0.5)
    };
    let mut logs = Vec::with_capacity(rounds.0);
    for (ra, rb) in a.samples.iter().zip(&b.samples) {
        let (x, y) = (median(ra), median(rb));
        if !(x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite()) {
            return None;
        }
        logs.push(if lower { (x / y).ln() } else { (y / x).ln() });
    }
    let j = crate::analysis::sequential::judge(&logs, policy.alpha, policy.margin);
    Some(Judged {
        ratio: j.ratio,
        interval: j.interval.map(|(lo, hi)| Interval { lo, hi }),
        p: None,
        verdict: j.verdict,
        rounds_needed: j.pairs_needed,
        rounds,
        paired: true,
    })
}

/// The verdict as a table shows it.
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::Same => "same",
        Verdict::Unsure => "unsure",
    }
}

/// One compared case.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Row {
    pub benchmark: String,
    pub params: String,
    pub family: String,
    pub metric: String,
    pub unit: String,
    pub a: f64,
    pub b: f64,
    pub judged: Judged,
    /// Kernel event counts per operation that changed from A to B: (event,
    /// A's, B's), see `counters::changed`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counts_changed: Vec<(String, f64, f64)>,
}

/// Where a result was measured, as compared: environment, load, isolation.
fn context(r: &CaseResult, doc: &RunDoc) -> (String, String, String) {
    let (l, i) = r.load_isolation(doc);
    (r.env(doc).to_string(), l.to_string(), i.to_string())
}

/// Whether two contexts (environment, load, isolation) count as the same
/// cell: each part equal, or different where each run has a single value
/// for it (a run under `--load build` against one at idle, a qemu-tcg run
/// against a native one: the difference being compared).
fn comparable(ca: &(String, String, String), cb: &(String, String, String), a: &RunDoc, b: &RunDoc) -> bool {
    let single = |v: &str| !v.contains(',');
    (ca.0 == cb.0 || (single(&a.environment.name) && single(&b.environment.name)))
        && (ca.1 == cb.1 || (single(&a.condition.load) && single(&b.condition.load)))
        && (ca.2 == cb.2 || (single(&a.condition.isolation_label()) && single(&b.condition.isolation_label())))
}

/// The first metric of every case measured in both runs (same benchmark,
/// parameters, and environment, load and isolation unless that is what the
/// runs differ in as a whole), in A's order.
pub fn rows(a: &RunDoc, b: &RunDoc, policy: &Thresholds) -> Vec<Row> {
    rows_paired_if(false, a, b, policy)
}

/// As `rows`, judging on paired rounds where `paired` (runs measured
/// round by round alternately, `compare --interleave`).
pub fn rows_paired_if(paired: bool, a: &RunDoc, b: &RunDoc, policy: &Thresholds) -> Vec<Row> {
    rows_with(a, b, &|ma, mb, seed| judge_paired_if(paired, ma, mb, policy, seed))
}

/// The metrics of a cell a comparison judges: its main one, then the
/// kernel's counts where a QEMU plugin counted them (each its own row).
fn judged_metrics(r: &CaseResult) -> impl Iterator<Item = &Metric> {
    let kernel = crate::data::results::kernel::ALL.into_iter().filter_map(|k| k.of(r));
    r.metrics.first().into_iter().chain(kernel)
}

/// As `rows`, each cell judged by `judge` (A's metric, B's, a seed).
pub fn rows_with(a: &RunDoc, b: &RunDoc, judge: &dyn Fn(&Metric, &Metric, u64) -> Judged) -> Vec<Row> {
    let pairs = a.results.iter().filter(|r| r.status == CaseStatus::Ok).filter_map(|ra| {
        let ctx = context(ra, a);
        let rb = b.results.iter().find(|rb| {
            rb.status == CaseStatus::Ok && rb.benchmark == ra.benchmark && rb.params == ra.params && comparable(&ctx, &context(rb, b), a, b)
        })?;
        Some((ra, rb, ctx))
    });
    pairs
        .flat_map(|(ra, rb, ctx)| judged_metrics(ra).map(move |ma| (ra, rb, ctx.clone(), ma)))
        .filter_map(|(ra, rb, ctx, ma)| {
            // Never across units (a run's cycles against another's guest instructions).
            let mb = rb.metric(&ma.name).filter(|mb| mb.unit == ma.unit)?;
            let mut label = crate::data::results::params_label(&ra.params);
            if ctx.0 != "native" {
                label = format!("{label} [{}]", ctx.0).trim().to_string();
            }
            if (ctx.1.as_str(), ctx.2.as_str()) != ("idle", "pinned") {
                label = format!("{label} [{}/{}]", ctx.1, ctx.2).trim().to_string();
            }
            let seed = seed_of(&format!("{} {label} {}", ra.benchmark, ma.name));
            Some(Row {
                benchmark: ra.benchmark.clone(),
                params: label,
                family: ra.family.clone(),
                metric: ma.name.clone(),
                unit: ma.unit.clone(),
                a: ma.summary.median,
                b: mb.summary.median,
                judged: judge(ma, mb, seed),
                counts_changed: match (&ra.counters, &rb.counters) {
                    (Some(ca), Some(cb)) => {
                        crate::measure::counters::changed(ca, cb).into_iter().map(|(e, x, y)| (e.name().to_string(), x, y)).collect()
                    }
                    _ => vec![],
                },
            })
        })
        .collect()
}

/// The rows that fail a regression gate: B significantly worse than A by
/// more than `fail_above` (0.05 = 5%).
pub fn regressions(rows: &[Row], fail_above: f64) -> Vec<&Row> {
    rows.iter()
        .filter(|r| {
            r.judged.interval.is_some_and(|i| {
                let c = uncertainty::verdict::Comparison {
                    ratio: r.judged.ratio,
                    interval: i,
                    p: r.judged.p.unwrap_or(1.0),
                    verdict: r.judged.verdict,
                    rounds_needed: r.judged.rounds_needed,
                };
                uncertainty::verdict::gate(&c, fail_above)
            })
        })
        .collect()
}

/// How many rows got each verdict: faster, slower, same, unsure.
pub fn tally(rows: &[Row]) -> [usize; 4] {
    let mut t = [0; 4];
    for r in rows {
        t[match r.judged.verdict {
            Verdict::Faster => 0,
            Verdict::Slower => 1,
            Verdict::Same => 2,
            Verdict::Unsure => 3,
        }] += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::stats::Summary;

    fn metric(rounds: &[Vec<f64>], better: Better) -> Metric {
        let pooled: Vec<f64> = rounds.iter().flatten().copied().collect();
        let s = Summary::of(&pooled).unwrap();
        Metric { name: "m".into(), unit: "u".into(), summary: s, ns: None, better, samples: rounds.to_vec(), estimate: None }
    }

    fn rounds(center: f64, n: usize) -> Vec<Vec<f64>> {
        (0..n).map(|k| (0..5).map(|b| center * (1.0 + 0.002 * ((k * 5 + b) % 7) as f64)).collect()).collect()
    }

    #[test]
    fn relative_is_above_one_when_b_is_better() {
        assert_eq!(relative(&metric(&[vec![200.0]], Better::Lower), &metric(&[vec![100.0]], Better::Lower)), 2.0);
        assert_eq!(relative(&metric(&[vec![100.0]], Better::Higher), &metric(&[vec![300.0]], Better::Higher)), 3.0);
    }

    #[test]
    fn verdicts_from_rounds() {
        let p = Thresholds::default();
        let a = metric(&rounds(100.0, 6), Better::Lower);
        assert_eq!(judge(&a, &metric(&rounds(100.0, 6), Better::Lower), &p, 1).verdict, Verdict::Same);
        assert_eq!(judge(&a, &metric(&rounds(150.0, 6), Better::Lower), &p, 1).verdict, Verdict::Slower);
        assert_eq!(judge(&a, &metric(&rounds(50.0, 6), Better::Lower), &p, 1).verdict, Verdict::Faster);
        // Too few rounds: unsure, and it says how many would do.
        let j = judge(&metric(&rounds(100.0, 2), Better::Lower), &metric(&rounds(150.0, 2), Better::Lower), &p, 1);
        assert_eq!((j.verdict, j.rounds_needed), (Verdict::Unsure, Some(p.min_rounds)));
        // No raw samples (a version 1 document): the ratio, unsure.
        let mut old = a.clone();
        old.samples.clear();
        let j = judge(&old, &metric(&rounds(150.0, 6), Better::Lower), &p, 1);
        assert_eq!(j.verdict, Verdict::Unsure);
        assert!(j.interval.is_none());
    }

    #[test]
    fn a_run_whose_columns_settled_on_paired_verdicts_is_judged_sequentially_with_its_margin() {
        let mut doc = crate::data::results::fixture();
        assert_eq!(method_in(&doc), Method::Independent);
        doc.settings.interleaved = true;
        assert_eq!(method_in(&doc), Method::Paired);
        let auto = crate::data::results::adaptive::Auto { budget_min: 1.0, target_pct: 10.0, until_verdict: None };
        doc.settings.adaptive.push(crate::data::results::adaptive::Outcome {
            asked: auto,
            environment: None,
            against: Some("native".into()),
            rounds: 8,
            round_s: vec![],
            elapsed_s: 1.0,
            ended: crate::data::results::adaptive::Ended::Settled,
            unsettled: vec![],
        });
        assert_eq!(method_in(&doc), Method::Sequential);
        assert!(Method::Sequential.paired_words().unwrap().contains("confidence sequence"));
        // Eight pairs 8% apart: `same` within the run's 10%, not within the default 5%.
        let a = metric(&rounds(100.0, 8), Better::Lower);
        let b = metric(&rounds(108.0, 8), Better::Lower);
        let p = Thresholds::default();
        let j = judge_in(&doc, &a, &b, &p, 1);
        assert_eq!((j.verdict, j.p, j.paired), (Verdict::Same, None, true), "{j:?}");
        assert_eq!(judge_sequential(&a, &b, &p).unwrap().verdict, Verdict::Slower);
        // Other units: no ratio, never a sequential verdict.
        let counted = Metric { unit: crate::data::results::UNIT_INSTRUCTIONS.into(), ..b.clone() };
        assert!(judge_sequential(&a, &counted, &p).is_none());
        assert!(judge_in(&doc, &a, &counted, &p, 1).ratio.is_nan());
    }

    #[test]
    fn exact_counts_are_same_or_different_at_once() {
        let p = Thresholds::default();
        let counted =
            |rounds: &[Vec<f64>]| Metric { unit: crate::data::results::UNIT_INSTRUCTIONS.into(), ..metric(rounds, Better::Lower) };
        let a = counted(&[vec![311.0, 311.0, 330.0]]);
        for paired in [false, true] {
            let j = judge_paired_if(paired, &a, &a.clone(), &p, 1);
            assert_eq!((j.verdict, j.rounds_needed, j.paired), (Verdict::Same, None, false), "one round is enough");
            let j = judge_paired_if(paired, &a, &counted(&[vec![311.5, 311.5, 330.0]]), &p, 1);
            assert_eq!(j.verdict, Verdict::Slower, "any difference is real");
        }
        // Cycles against instructions: no ratio at all.
        let cycles = metric(&[vec![311.0, 311.0, 330.0]], Better::Lower);
        let j = judge_paired_if(true, &cycles, &a, &p, 1);
        assert!(j.verdict == Verdict::Unsure && j.ratio.is_nan() && j.interval.is_none(), "{j:?}");
    }
}
