//! Verdicts: a candidate cell compared with a baseline (unpaired, paired
//! by round, or counted exactly), judged against [`Thresholds`] (the
//! margin, the significance level, the fewest rounds), with the rounds
//! that would settle an `Unsure`, and the gate a CI fails on.

use serde::{Deserialize, Serialize};

use super::bootstrap::{Cell, Interval, RESAMPLES, expand, expansion, percentile_interval};
use super::random::SplitMix64;
use super::ranks::{mann_whitney, signed_rank, two_sided_z};
use crate::analysis::stats::quantile_sorted;

/// The most rounds `rounds_needed` ever suggests. Projecting beyond that
/// (two hundred times the usual 5 rounds, an interval 14x narrower) assumes
/// a machine that does not drift for hours; a cap reached means "the
/// difference sits on the edge of the margin: no number of rounds will
/// settle it".
pub const ROUNDS_NEEDED_CAP: usize = 1000;

/// The verdict of a comparison of a candidate B against a baseline A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// B performs better than A by more than the margin, significantly.
    Faster,
    /// B performs worse than A by more than the margin, significantly.
    Slower,
    /// B and A are within the margin of each other.
    Same,
    /// The data support none of the above.
    Unsure,
}

/// When a difference counts and when it is believed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Equivalence margin: ratios within [1/(1+margin), 1+margin] count as
    /// the same performance.
    pub margin: f64,
    /// Significance level of the Mann-Whitney test on round medians.
    pub alpha: f64,
    /// Fewest rounds on each side before any verdict but `Unsure`.
    pub min_rounds: usize,
}

impl Default for Thresholds {
    /// Margin 5%, alpha 0.05, at least 5 rounds a side. The rounds follow
    /// from the test: with 5 rounds a side the smallest two-sided exact
    /// Mann-Whitney p (every B round beyond every A round) is
    /// 2 / C(10, 5) = 2/252 = 0.008 (and the next ones 0.016, 0.032), while
    /// with 3 it is 2 / C(6, 3) = 0.1, so that 3 rounds could never be
    /// significant, and with 4 it is 2/70 = 0.029 with the next at 0.057,
    /// so only a complete separation of the rounds would be.
    fn default() -> Thresholds {
        Thresholds { margin: 0.05, alpha: 0.05, min_rounds: 5 }
    }
}

/// A candidate B compared with a baseline A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// B's performance relative to A's, above 1 when B is better:
    /// median_A / median_B for costs, median_B / median_A for rates.
    pub ratio: f64,
    /// 95% interval of `ratio` (independent hierarchical bootstraps of A
    /// and B, widened in log terms for the rounds of the smaller side).
    pub interval: Interval,
    /// Two-sided Mann-Whitney p-value on the round medians of A and B.
    pub p: f64,
    pub verdict: Verdict,
    /// For `Unsure`: rounds on each side (in total, not additional) that
    /// would probably settle it, at most `ROUNDS_NEEDED_CAP`. None otherwise.
    pub rounds_needed: Option<usize>,
}

/// Compares a candidate cell `b` with a baseline `a`, each given as rounds
/// of samples of a positive quantity; `lower_is_better` for costs (cycles,
/// ns per operation), not for rates (MiB/s).
///
/// The verdict is a three-way decision against the band
/// [1/(1+margin), 1+margin] around 1:
/// - either side with fewer than `min_rounds` rounds: `Unsure`, needing at
///   least `min_rounds`;
/// - the interval inside the band: `Same`;
/// - the interval entirely above the band and p < alpha: `Faster`;
///   entirely below and p < alpha: `Slower`;
/// - anything else: `Unsure`, with a projection of the rounds needed
///   (see `project_rounds`).
///
/// None when either side has no samples, or any sample is NaN, infinite,
/// zero or negative (a ratio of performance needs positive quantities).
pub fn compare(a: &[Vec<f64>], b: &[Vec<f64>], lower_is_better: bool, policy: &Thresholds, seed: u64) -> Option<Comparison> {
    let (ca, cb) = (Cell::new(a)?, Cell::new(b)?);
    if ca.values[0] <= 0.0 || cb.values[0] <= 0.0 {
        return None;
    }
    let better = |ma: f64, mb: f64| if lower_is_better { ma / mb } else { mb / ma };
    let ratio = better(ca.median, cb.median);
    let ma = ca.bootstrap_medians(&mut SplitMix64::new(seed), RESAMPLES);
    let mb = cb.bootstrap_medians(&mut SplitMix64::new(SplitMix64::new(seed).next_u64()), RESAMPLES);
    let mut ratios: Vec<f64> = ma.iter().zip(&mb).map(|(&x, &y)| better(x, y)).collect();
    ratios.sort_by(f64::total_cmp);
    let interval = expand(percentile_interval(&ratios), ratio, expansion(ca.rounds().min(cb.rounds())), true);
    let p = mann_whitney(&ca.round_medians(), &cb.round_medians()).p;
    let (verdict, rounds_needed) = decide(interval, p, ca.rounds().min(cb.rounds()), policy);
    Some(Comparison { ratio, interval, p, verdict, rounds_needed })
}

/// Compares B with A round by round, where round k of each ran beside the
/// other (environments interleaved by round, so the host's drift falls on
/// both): the ratio is the median of the per-round ratios of round medians,
/// its interval a bootstrap over the pairs (widened for few rounds as
/// `compare`'s), the test a two-sided Wilcoxon signed-rank test on the log
/// ratios. The verdict follows the same rules as `compare`'s. None where the
/// rounds do not pair (different counts, an empty round) or a sample is not
/// positive.
pub fn compare_paired(a: &[Vec<f64>], b: &[Vec<f64>], lower_is_better: bool, policy: &Thresholds, seed: u64) -> Option<Comparison> {
    if a.len() != b.len() || a.iter().chain(b).any(|r| r.is_empty()) {
        return None;
    }
    let (ca, cb) = (Cell::new(a)?, Cell::new(b)?);
    if ca.values[0] <= 0.0 || cb.values[0] <= 0.0 {
        return None;
    }
    let better = |ma: f64, mb: f64| if lower_is_better { ma / mb } else { mb / ma };
    let mut ratios: Vec<f64> = ca.round_medians().iter().zip(cb.round_medians()).map(|(&x, y)| better(x, y)).collect();
    let n = ratios.len();
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    ratios.sort_by(f64::total_cmp);
    let ratio = quantile_sorted(&ratios, 0.5);
    let mut rng = SplitMix64::new(seed);
    let mut medians: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let mut draw: Vec<f64> = (0..n).map(|_| ratios[rng.below(n)]).collect();
            draw.sort_by(f64::total_cmp);
            quantile_sorted(&draw, 0.5)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    let interval = expand(percentile_interval(&medians), ratio, expansion(n), true);
    let p = signed_rank(&logs);
    let (verdict, rounds_needed) = decide(interval, p, n, policy);
    Some(Comparison { ratio, interval, p, verdict, rounds_needed })
}

/// Compares two cells counted exactly (see [`estimate_exact`](super::bootstrap::estimate_exact)): the ratio
/// of their medians with an interval of zero width, and at once, whatever
/// the rounds, `Same` for equal medians and otherwise `Faster` or `Slower`:
/// any difference between two exact counts is real (p 0; 1 when equal).
/// None as for [`compare`].
pub fn compare_exact(a: &[Vec<f64>], b: &[Vec<f64>], lower_is_better: bool) -> Option<Comparison> {
    let (ca, cb) = (Cell::new(a)?, Cell::new(b)?);
    if ca.values == cb.values && ca.median == cb.median {
        // The same count on both sides, none included (no CR3 write in
        // either): the same, whatever the ratio of nothing to nothing.
        let one = Interval { lo: 1.0, hi: 1.0 };
        return Some(Comparison { ratio: 1.0, interval: one, p: 1.0, verdict: Verdict::Same, rounds_needed: None });
    }
    if ca.values[0] <= 0.0 || cb.values[0] <= 0.0 {
        return None;
    }
    let ratio = if lower_is_better { ca.median / cb.median } else { cb.median / ca.median };
    let verdict = if ca.median == cb.median {
        Verdict::Same
    } else if ratio > 1.0 {
        Verdict::Faster
    } else {
        Verdict::Slower
    };
    let p = if verdict == Verdict::Same { 1.0 } else { 0.0 };
    Some(Comparison { ratio, interval: Interval { lo: ratio, hi: ratio }, p, verdict, rounds_needed: None })
}

/// The verdict for a ratio interval and p-value when the smaller side has
/// `rounds` rounds, and the rounds needed when it is `Unsure`.
fn decide(interval: Interval, p: f64, rounds: usize, policy: &Thresholds) -> (Verdict, Option<usize>) {
    let (band_lo, band_hi) = (1.0 / (1.0 + policy.margin), 1.0 + policy.margin);
    if rounds < policy.min_rounds {
        // A projection from one round rests on batches alone: meaningless.
        let projected = if rounds > 1 { project_rounds(interval, p, rounds, policy) } else { 0 };
        return (Verdict::Unsure, Some(projected.max(policy.min_rounds)));
    }
    if band_lo <= interval.lo && interval.hi <= band_hi {
        return (Verdict::Same, None);
    }
    if p < policy.alpha {
        if interval.lo > band_hi {
            return (Verdict::Faster, None);
        }
        if interval.hi < band_lo {
            return (Verdict::Slower, None);
        }
    }
    (Verdict::Unsure, Some(project_rounds(interval, p, rounds, policy)))
}

/// Rounds per side that would probably turn an `Unsure` into a verdict.
///
/// In log-ratio terms the band is [-b, b] with b = ln(1 + margin), and the
/// interval has center c and half-width h. Assuming h shrinks as
/// 1/sqrt(rounds) while c stays:
/// - to fit inside the band (|c| < b): n x (h / (b - |c|))^2 rounds;
/// - to clear it (|c| > b): n x (h / (|c| - b))^2 rounds, and also enough
///   for the test: its z grows as sqrt(rounds), so n x (z_alpha / z_p)^2.
///
/// Whichever needs fewer, rounded up, at least one more than now and at
/// most `ROUNDS_NEEDED_CAP`.
fn project_rounds(interval: Interval, p: f64, rounds: usize, policy: &Thresholds) -> usize {
    if !(interval.lo > 0.0 && interval.hi.is_finite() && policy.margin > 0.0) {
        return ROUNDS_NEEDED_CAP;
    }
    let n = rounds as f64;
    let (lo, hi) = (interval.lo.ln(), interval.hi.ln());
    let (c, h, b) = ((lo + hi) / 2.0, (hi - lo) / 2.0, policy.margin.ln_1p());
    let fit = if c.abs() < b { n * (h / (b - c.abs())).powi(2) } else { f64::INFINITY };
    let clear = if c.abs() > b {
        let z_p = if p > 0.0 && p < 1.0 {
            two_sided_z(p)
        } else if p <= 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        let for_test = n * (two_sided_z(policy.alpha) / z_p).powi(2);
        (n * (h / (c.abs() - b)).powi(2)).max(for_test)
    } else {
        f64::INFINITY
    };
    // (Less a hair, so that float dust on an exact answer does not add a round.)
    let need = (fit.min(clear) - 1e-9).ceil();
    if need.is_finite() && need < ROUNDS_NEEDED_CAP as f64 {
        (need as usize).max(rounds + 1).min(ROUNDS_NEEDED_CAP)
    } else {
        ROUNDS_NEEDED_CAP
    }
}

/// Whether B is *significantly worse* than A by more than `fail_above`
/// (0.05 = 5%), for a CI gate.
///
/// "Worse by more than X" means B's median above A's x (1 + X) for a cost,
/// below A's / (1 + X) for a rate: in both, ratio < 1/(1 + X). The gate
/// demands the verdict `Slower` and the whole interval below that line,
/// i.e. even its upper end (the reading most favourable to B) is worse by
/// more than X.
pub fn gate(c: &Comparison, fail_above: f64) -> bool {
    c.verdict == Verdict::Slower && c.interval.hi < 1.0 / (1.0 + fail_above)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uncertainty::bootstrap::estimate_exact;
    use crate::analysis::uncertainty::random::SplitMix64;
    use crate::analysis::uncertainty::ranks::erfc;
    use crate::analysis::uncertainty::sim::{cell, close};

    #[test]
    fn paired_rounds_see_through_drift_that_unpaired_ones_cannot() {
        // Both sides drift together from round to round (the host), B 10% dearer in every round.
        let drift = [1.0, 1.3, 0.9, 1.25, 1.0, 0.85, 1.2, 1.1, 0.95, 1.3];
        let a: Vec<Vec<f64>> = drift.iter().map(|d| vec![100.0 * d, 101.0 * d]).collect();
        let b: Vec<Vec<f64>> = drift.iter().map(|d| vec![110.0 * d, 111.1 * d]).collect();
        let policy = Thresholds::default();
        let paired = compare_paired(&a, &b, true, &policy, 7).unwrap();
        assert!(close(paired.ratio, 1.0 / 1.1, 1e-3), "{paired:?}");
        assert_eq!(paired.verdict, Verdict::Slower, "{paired:?}");
        let unpaired = compare(&a, &b, true, &policy, 7).unwrap();
        assert_eq!(unpaired.verdict, Verdict::Unsure, "{unpaired:?}");
        assert!(compare_paired(&a, &b[..9], true, &policy, 7).is_none(), "rounds that do not pair");
    }

    #[test]
    fn exact_cells_have_no_doubt() {
        // Batches differ (a timer interrupt in one), reruns do not.
        let a = vec![vec![311.0, 311.0, 340.5, 311.0]];
        let e = estimate_exact(&a).unwrap();
        assert_eq!((e.median, e.interval.lo, e.interval.hi, e.rounds), (311.0, 311.0, 311.0, 1));
        let same = compare_exact(&a, &a.clone(), true).unwrap();
        assert_eq!((same.verdict, same.ratio, same.rounds_needed), (Verdict::Same, 1.0, None));
        // One instruction more is slower, at once, with one round.
        let b = vec![vec![312.0, 312.0, 341.5, 312.0]];
        let c = compare_exact(&a, &b, true).unwrap();
        assert_eq!((c.verdict, c.interval.lo, c.interval.hi), (Verdict::Slower, c.ratio, c.ratio));
        assert_eq!(compare_exact(&b, &a, true).unwrap().verdict, Verdict::Faster);
        assert!(compare_exact(&a, &[vec![0.0]], true).is_none());
        let none = [vec![0.0, 0.0]];
        assert_eq!(compare_exact(&none, &none, true).unwrap().verdict, Verdict::Same, "no CR3 write on either side");
    }

    #[test]
    fn too_few_rounds_is_unsure() {
        let mut rng = SplitMix64::new(5);
        let policy = Thresholds::default();
        let a = cell(&mut rng, 100.0, 3, 10, 1.0, 1.0);
        let b = cell(&mut rng, 200.0, 8, 10, 1.0, 1.0);
        for (x, y) in [(&a, &b), (&b, &a)] {
            let c = compare(x, y, true, &policy, 1).unwrap();
            assert_eq!(c.verdict, Verdict::Unsure);
            assert!(c.rounds_needed.unwrap() >= policy.min_rounds);
        }
        let one = vec![vec![100.0, 101.0, 99.0]];
        let c = compare(&one, &one, true, &policy, 1).unwrap();
        assert_eq!((c.verdict, c.rounds_needed), (Verdict::Unsure, Some(5)));
    }

    #[test]
    fn compare_refuses_what_has_no_ratio() {
        let good = vec![vec![1.0, 2.0]];
        assert!(compare(&[], &good, true, &Thresholds::default(), 0).is_none());
        assert!(compare(&good, &[vec![0.0, 1.0]], true, &Thresholds::default(), 0).is_none());
        assert!(compare(&good, &[vec![f64::NAN]], true, &Thresholds::default(), 0).is_none());
    }

    #[test]
    fn identical_runs_are_the_same() {
        let mut rng = SplitMix64::new(9);
        let a = cell(&mut rng, 500.0, 8, 15, 3.0, 2.0);
        let c = compare(&a, &a, true, &Thresholds::default(), 4).unwrap();
        assert_eq!(c.ratio, 1.0);
        assert_eq!(c.verdict, Verdict::Same);
        assert_eq!(c.rounds_needed, None);
        assert!(!gate(&c, 0.05));
    }

    #[test]
    fn a_a_is_rarely_a_difference() {
        // Same distribution on both sides, rounds scattered 3% (a noisy VM).
        let mut rng = SplitMix64::new(11);
        let policy = Thresholds::default();
        let trials = 200;
        let mut differences = 0;
        let mut gated = 0;
        let mut covered = 0;
        for i in 0..trials {
            let a = cell(&mut rng, 1000.0, 6, 10, 30.0, 10.0);
            let b = cell(&mut rng, 1000.0, 6, 10, 30.0, 10.0);
            let c = compare(&a, &b, true, &policy, i).unwrap();
            if matches!(c.verdict, Verdict::Faster | Verdict::Slower) {
                differences += 1;
            }
            if c.verdict == Verdict::Unsure {
                assert!(c.rounds_needed.is_some_and(|n| n > 6 && n <= ROUNDS_NEEDED_CAP));
            }
            gated += usize::from(gate(&c, 0.05));
            covered += usize::from(c.interval.contains(1.0));
        }
        // The ratio's interval covers the true ratio, 1, about 95% of the time.
        assert!((0.88..=1.0).contains(&(covered as f64 / trials as f64)), "{covered} of {trials}");
        assert!(differences * 20 <= trials, "{differences} of {trials} A/A trials differ");
        assert_eq!(gated, 0);
    }

    #[test]
    fn a_clear_slowdown_is_slower_and_gated() {
        let mut rng = SplitMix64::new(13);
        let policy = Thresholds::default();
        // Costs: B 30% higher in every round.
        let a = cell(&mut rng, 1000.0, 6, 10, 5.0, 5.0);
        let b = cell(&mut rng, 1300.0, 6, 10, 5.0, 5.0);
        let c = compare(&a, &b, true, &policy, 2).unwrap();
        assert_eq!(c.verdict, Verdict::Slower);
        assert!(close(c.ratio, 1.0 / 1.3, 0.02));
        assert!(c.interval.contains(c.ratio));
        assert!(close(c.p, 2.0 / 924.0, 1e-9));
        assert!(gate(&c, 0.05));
        assert!(!gate(&c, 0.5));
        // The other way round it is faster, and passes the gate.
        let c = compare(&b, &a, true, &policy, 2).unwrap();
        assert_eq!(c.verdict, Verdict::Faster);
        assert!(!gate(&c, 0.05));
        // Rates: B 30% higher is faster.
        let c = compare(&a, &b, false, &policy, 2).unwrap();
        assert_eq!(c.verdict, Verdict::Faster);
        assert!(close(c.ratio, 1.3, 0.02));
    }

    #[test]
    fn small_overlapping_difference_is_unsure_with_a_projection() {
        // 4% apart with 3% round scatter: neither inside the 5% band nor
        // clear of it; more rounds would tell.
        let policy = Thresholds::default();
        let mut rng = SplitMix64::new(17);
        let a = cell(&mut rng, 1000.0, 5, 10, 30.0, 10.0);
        let b = cell(&mut rng, 1040.0, 5, 10, 30.0, 10.0);
        let c = compare(&a, &b, true, &policy, 3).unwrap();
        assert_eq!(c.verdict, Verdict::Unsure, "{c:?}");
        let n = c.rounds_needed.unwrap();
        assert!(n > 5 && n <= ROUNDS_NEEDED_CAP);
    }

    #[test]
    fn projection_arithmetic() {
        let policy = Thresholds::default();
        let b = 1.05f64.ln();
        // Centered on 1, half-width 2b in log terms: fitting inside needs
        // the half-width / 2, i.e. 4x the rounds.
        let i = Interval { lo: (-2.0 * b).exp(), hi: (2.0 * b).exp() };
        assert_eq!(project_rounds(i, 0.5, 5, &policy), 20);
        assert_eq!(decide(i, 0.5, 5, &policy), (Verdict::Unsure, Some(20)));
        // Centered at 3b, half-width 4b, p tiny: clearing needs h / (2b)
        // = 2, 4x the rounds.
        let i = Interval { lo: (-b).exp(), hi: (7.0 * b).exp() };
        assert_eq!(project_rounds(i, 1e-6, 5, &policy), 20);
        // Outside the band but p not small enough: the test decides.
        let i = Interval { lo: (1.5 * b).exp(), hi: (2.5 * b).exp() };
        let p = erfc(1.0 / std::f64::consts::SQRT_2); // z = 1
        let n = project_rounds(i, p, 5, &policy);
        assert!(n == (5.0 * 1.959_964f64.powi(2)).ceil() as usize, "{n}");
        assert_eq!(decide(i, p, 5, &policy).0, Verdict::Unsure);
        // On the edge of the band: never.
        let i = Interval { lo: 1.0, hi: (2.0 * b).exp() };
        assert_eq!(project_rounds(i, 1e-6, 5, &policy), ROUNDS_NEEDED_CAP);
    }

    #[test]
    fn verdict_serializes_snake_case() {
        assert_eq!(serde_json::to_string(&Verdict::Unsure).unwrap(), "\"unsure\"");
        assert_eq!(serde_json::from_str::<Verdict>("\"faster\"").unwrap(), Verdict::Faster);
    }
}
