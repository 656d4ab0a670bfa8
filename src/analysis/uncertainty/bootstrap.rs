//! A cell's median with a 95% interval from a hierarchical bootstrap
//! (rounds resampled first, then the batches of each), widened for the
//! few rounds it rests on; and an exact cell's median, with no doubt.

use serde::{Deserialize, Serialize};

use super::levels::{Levels, levels_of};
use super::random::SplitMix64;
use crate::analysis::stats::{Summary, quantile_sorted};

/// Bootstrap resamples per interval.
///
/// The ends of a 95% percentile interval are the 2.5% and 97.5% quantiles
/// of the resampled medians. Estimated from N resamples, such a quantile has
/// a Monte-Carlo standard error of sqrt(0.025 x 0.975 / N) / phi(1.96)
/// = 2.67 / sqrt(N) standard deviations of the bootstrap distribution. With
/// 1000 (the usual minimum for percentile intervals, after Efron and
/// Tibshirani)
/// that is 0.08 sd, 4% of the half-width, with 25 resamples beyond each end;
/// 2000 would make it 3%. Either is small next to what the data leave
/// uncertain (with 8 rounds the spread itself is known only to about
/// 1 / sqrt(2 x 7) = 27%), while time is not: one resample of a cell of
/// 10 rounds x 15 batches is 150 draws, and 1000 of them take about half a
/// millisecond (release build, busy 2-CPU VM). A run of ~300 cells, each
/// estimated on both sides and compared (four bootstraps), stays near half
/// a second; with 2000 it would pass one.
pub const RESAMPLES: usize = 1000;

/// A two-sided 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// Whether `x` lies in the interval (ends included).
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// Half the width relative to `center`: (hi - lo) / 2 / |center|
    /// (infinite for a center of 0).
    pub fn relative_half_width(&self, center: f64) -> f64 {
        (self.hi - self.lo) / 2.0 / center.abs()
    }
}

/// A cell's median with its interval and how its samples spread.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Median of all samples of all rounds pooled (type-7 quantile).
    pub median: f64,
    /// 95% interval of that median (hierarchical bootstrap, widened for
    /// few rounds). With one round it rests on the batches alone and is too
    /// narrow for a statement about the machine: check `rounds`.
    pub interval: Interval,
    /// Rounds that had at least one sample.
    pub rounds: usize,
    /// Samples in all rounds.
    pub samples: usize,
    /// Coefficient of variation of the round medians (0 for one round).
    pub between_round_cv: f64,
    /// Median over rounds of each round's coefficient of variation.
    pub within_round_cv: f64,
    /// Where the rounds (or, with one round, the batches) fall into two separate clusters:
    /// both levels and their shares, which one median with a wide interval would hide.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<Levels>,
}

/// The median of a cell with a 95% interval from a hierarchical bootstrap:
/// each resample draws R rounds with replacement, then, within every drawn
/// round, as many batches as it has, with replacement; the interval is the
/// 2.5% and 97.5% percentiles of the pooled medians of `RESAMPLES` such
/// resamples, widened about the median for the few rounds it rests on
/// (`expansion`).
///
/// Empty rounds are ignored. None when there are no samples or any sample
/// is NaN or infinite. With one round the rounds cannot be resampled and the
/// interval comes from the batches only (`rounds == 1` says so).
pub fn estimate(rounds: &[Vec<f64>], seed: u64) -> Option<Estimate> {
    let cell = Cell::new(rounds)?;
    let mut medians = cell.bootstrap_medians(&mut SplitMix64::new(seed), RESAMPLES);
    medians.sort_by(f64::total_cmp);
    Some(Estimate {
        median: cell.median,
        interval: expand(percentile_interval(&medians), cell.median, expansion(cell.rounds()), false),
        rounds: cell.rounds(),
        samples: cell.values.len(),
        between_round_cv: cell.between_round_cv(),
        within_round_cv: cell.within_round_cv(),
        levels: levels_of(&cell),
    })
}

/// The median of a cell counted exactly (guest instructions under QEMU's
/// instruction counter: the same samples on every run), with an interval
/// of zero width: a rerun gives the same median, so nothing is left to be
/// unsure of. The spreads are still reported (batches differ by the timer
/// interrupts they took). None as for [`estimate`].
pub fn estimate_exact(rounds: &[Vec<f64>]) -> Option<Estimate> {
    let cell = Cell::new(rounds)?;
    Some(Estimate {
        median: cell.median,
        interval: Interval { lo: cell.median, hi: cell.median },
        rounds: cell.rounds(),
        samples: cell.values.len(),
        between_round_cv: cell.between_round_cv(),
        within_round_cv: cell.within_round_cv(),
        levels: None,
    })
}

/// The samples of one cell, prepared for fast resampling: all samples
/// sorted once, and each round's batches replaced by their positions in
/// that order, so a resample is a vector of counts and its median a walk
/// along it (no sort per resample).
pub(super) struct Cell {
    /// Every sample of every round, sorted.
    pub(super) values: Vec<f64>,
    /// Per round, the position in `values` of each of its batches.
    pub(super) ranks: Vec<Vec<u32>>,
    /// Per round, its samples sorted (for round medians and CVs).
    pub(super) sorted_rounds: Vec<Vec<f64>>,
    /// Median of `values`.
    pub(super) median: f64,
}

impl Cell {
    /// None for no samples or any NaN or infinite sample.
    pub(super) fn new(rounds: &[Vec<f64>]) -> Option<Cell> {
        let rounds: Vec<&Vec<f64>> = rounds.iter().filter(|r| !r.is_empty()).collect();
        if rounds.is_empty() || rounds.iter().any(|r| r.iter().any(|x| !x.is_finite())) {
            return None;
        }
        let mut tagged: Vec<(f64, usize, usize)> =
            rounds.iter().enumerate().flat_map(|(r, round)| round.iter().enumerate().map(move |(i, &x)| (x, r, i))).collect();
        tagged.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut ranks: Vec<Vec<u32>> = rounds.iter().map(|r| vec![0; r.len()]).collect();
        for (pos, &(_, r, i)) in tagged.iter().enumerate() {
            ranks[r][i] = u32::try_from(pos).ok()?;
        }
        let values: Vec<f64> = tagged.iter().map(|t| t.0).collect();
        let sorted_rounds = rounds
            .iter()
            .map(|r| {
                let mut s = r.to_vec();
                s.sort_by(f64::total_cmp);
                s
            })
            .collect();
        Some(Cell { median: quantile_sorted(&values, 0.5), values, ranks, sorted_rounds })
    }

    /// Number of (non-empty) rounds.
    pub(super) fn rounds(&self) -> usize {
        self.ranks.len()
    }

    /// The median of each round.
    pub(super) fn round_medians(&self) -> Vec<f64> {
        self.sorted_rounds.iter().map(|s| quantile_sorted(s, 0.5)).collect()
    }

    /// CV of the round medians (0 for a single round).
    pub(super) fn between_round_cv(&self) -> f64 {
        Summary::of(&self.round_medians()).map_or(0.0, |s| s.cv)
    }

    /// Median over rounds of each round's CV.
    pub(super) fn within_round_cv(&self) -> f64 {
        let mut cvs: Vec<f64> = self.sorted_rounds.iter().filter_map(|s| Summary::of(s)).map(|s| s.cv).collect();
        cvs.sort_by(f64::total_cmp);
        quantile_sorted(&cvs, 0.5)
    }

    /// Pooled medians of `n` hierarchical resamples (unsorted).
    pub(super) fn bootstrap_medians(&self, rng: &mut SplitMix64, n: usize) -> Vec<f64> {
        let mut counts = vec![0u32; self.values.len()];
        (0..n)
            .map(|_| {
                counts.fill(0);
                let mut total = 0;
                for _ in 0..self.rounds() {
                    let round = &self.ranks[rng.below(self.rounds())];
                    let len = round.len();
                    // Two draws per random word: half the generator's work.
                    for _ in 0..len / 2 {
                        let (i, j) = rng.two_below(len);
                        counts[round[i] as usize] += 1;
                        counts[round[j] as usize] += 1;
                    }
                    if len % 2 == 1 {
                        counts[round[rng.below(len)] as usize] += 1;
                    }
                    total += len;
                }
                median_of_counts(&self.values, &counts, total)
            })
            .collect()
    }
}

/// The type-7 median of a multiset given as `counts[i]` copies of the
/// sorted `values[i]`, `total` elements in all (total >= 1).
fn median_of_counts(values: &[f64], counts: &[u32], total: usize) -> f64 {
    let pos = 0.5 * (total - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let mut seen = 0;
    let mut at_lo = None;
    for (&v, &c) in values.iter().zip(counts) {
        seen += c as usize;
        if at_lo.is_none() && seen > lo {
            at_lo = Some(v);
        }
        if seen > hi {
            let l = at_lo.unwrap_or(v);
            return l + (v - l) * (pos - lo as f64);
        }
    }
    values.last().copied().unwrap_or(f64::NAN)
}

/// The 2.5% and 97.5% percentiles of sorted, non-empty resampled values.
pub(super) fn percentile_interval(sorted: &[f64]) -> Interval {
    Interval { lo: quantile_sorted(sorted, 0.025), hi: quantile_sorted(sorted, 0.975) }
}

/// Widens `interval` about `center` by `factor`: linearly, or in log terms
/// (for a ratio, which must stay positive).
pub(super) fn expand(interval: Interval, center: f64, factor: f64, log: bool) -> Interval {
    if log {
        let out = |end: f64| center * (factor * (end / center).ln()).exp();
        Interval { lo: out(interval.lo), hi: out(interval.hi) }
    } else {
        Interval { lo: center - factor * (center - interval.lo), hi: center + factor * (interval.hi - center) }
    }
}

/// How much to widen a percentile interval resting on `rounds`
/// independent rounds: sqrt(R / (R - 1)) x t(R-1) / z, where t and z are
/// the 97.5% points of Student's t and of the normal (1.58 for 5 rounds,
/// 1.29 for 8, 1.22 for 10, 9.2 for 2; 1 for one round, whose interval rests on
/// batches only).
///
/// A bootstrap knows the spread between rounds only as well as R rounds
/// show it: it underestimates it by (R - 1) / R and, like a z interval,
/// ignores that the spread itself is uncertain. Where rounds scatter more
/// than batches, the plain percentile interval covers the true median in
/// about 89% of cases at 5 rounds and 91% at 8 (73% at 3); widened, in 94 to
/// 97% (1000 simulated cells each). Where batches dominate, resampling them
/// inside resampled rounds already counts their spread twice, and the
/// widened interval is conservative (99%+ instead of 97-99%): too wide on a
/// quiet machine, where intervals are narrow anyway, rather than too narrow
/// on a noisy one. The same factor as Hesterberg's "expanded percentile
/// interval" (The American Statistician 69(4), 2015), applied to the width
/// instead of the percentile levels, which 1000 resamples could not resolve.
pub(super) fn expansion(rounds: usize) -> f64 {
    if rounds < 2 {
        return 1.0;
    }
    let r = rounds as f64;
    (r / (r - 1.0)).sqrt() * t975(rounds - 1) / Z975
}

/// The 97.5% point of the standard normal.
const Z975: f64 = 1.959_963_984_540_054;

/// The 97.5% point of Student's t with `df` >= 1 degrees of freedom: a
/// table to 30, then the Cornish-Fisher expansion (within 1e-4 there).
fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    if (1..=30).contains(&df) {
        return TABLE[df - 1];
    }
    let (z, v) = (Z975, df.max(1) as f64);
    z + (z.powi(3) + z) / (4.0 * v) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uncertainty::sim::{cell, close, normal};

    #[test]
    fn interval_helpers() {
        let i = Interval { lo: 90.0, hi: 110.0 };
        assert!(i.contains(90.0) && i.contains(100.0) && i.contains(110.0));
        assert!(!i.contains(89.9) && !i.contains(110.1));
        assert!(close(i.relative_half_width(100.0), 0.1, 1e-12));
        assert!(close(i.relative_half_width(-100.0), 0.1, 1e-12));
    }

    #[test]
    fn median_of_counts_matches_quantile_sorted() {
        let mut rng = SplitMix64::new(7);
        for len in 1..40 {
            let mut values: Vec<f64> = (0..len).map(|_| normal(&mut rng)).collect();
            values.sort_by(f64::total_cmp);
            let counts: Vec<u32> = (0..len).map(|_| rng.below(4) as u32).collect();
            let total: usize = counts.iter().map(|&c| c as usize).sum();
            if total == 0 {
                continue;
            }
            let expanded: Vec<f64> = values.iter().zip(&counts).flat_map(|(&v, &c)| std::iter::repeat_n(v, c as usize)).collect();
            assert_eq!(median_of_counts(&values, &counts, total), quantile_sorted(&expanded, 0.5));
        }
    }

    #[test]
    fn estimate_pools_and_spreads() {
        let rounds = vec![vec![1.0, 2.0, 3.0], vec![10.0, 11.0, 12.0], vec![], vec![4.0, 5.0, 6.0]];
        let e = estimate(&rounds, 1).unwrap();
        assert_eq!((e.rounds, e.samples), (3, 9));
        assert_eq!(e.median, 5.0);
        assert!(e.interval.contains(e.median));
        // Round medians 2, 11, 5: mean 6, sample sd sqrt(21).
        assert!(close(e.between_round_cv, 21f64.sqrt() / 6.0, 1e-12));
        // Round CVs 1/2, 1/11, 1/5: median 1/5.
        assert!(close(e.within_round_cv, 0.2, 1e-12));
        // Same seed, same answer.
        assert_eq!(estimate(&rounds, 1), Some(e));
    }

    #[test]
    fn expansion_for_few_rounds() {
        assert_eq!(expansion(0), 1.0);
        assert_eq!(expansion(1), 1.0);
        assert!(close(expansion(5), 1.25f64.sqrt() * 2.776 / Z975, 1e-12));
        assert!(close(expansion(2), 2f64.sqrt() * 12.706 / Z975, 1e-12));
        // Past the table the expansion continues it smoothly towards z.
        assert!(close(t975(31), 2.0395, 1e-4));
        assert!(close(t975(120), 1.9799, 1e-4));
        assert!(expansion(10_000) > 1.0 && expansion(10_000) < 1.001);
        // Widening: linear about the center, or in log terms.
        let i = Interval { lo: 8.0, hi: 11.0 };
        assert_eq!(expand(i, 10.0, 2.0, false), Interval { lo: 6.0, hi: 12.0 });
        let w = expand(Interval { lo: 0.5, hi: 2.0 }, 1.0, 2.0, true);
        assert!(close(w.lo, 0.25, 1e-12) && close(w.hi, 4.0, 1e-12));
    }

    #[test]
    fn estimate_of_one_round_says_so() {
        let e = estimate(&[vec![10.0, 11.0, 9.0, 10.5, 9.5]], 3).unwrap();
        assert_eq!(e.rounds, 1);
        assert_eq!(e.median, 10.0);
        assert_eq!(e.between_round_cv, 0.0);
        assert!(e.interval.lo < 10.0 && e.interval.hi > 10.0 && e.interval.lo >= 9.0 && e.interval.hi <= 11.0);
    }

    #[test]
    fn estimate_of_nothing_or_nan_is_none() {
        assert_eq!(estimate(&[], 0), None);
        assert_eq!(estimate(&[vec![], vec![]], 0), None);
        assert_eq!(estimate(&[vec![1.0, 2.0], vec![f64::NAN]], 0), None);
        assert_eq!(estimate(&[vec![1.0, f64::INFINITY]], 0), None);
    }

    #[test]
    fn interval_covers_the_true_median_about_95_percent() {
        // 400 runs of 8 rounds x 10 batches, rounds scattered three times
        // as widely as batches, symmetric around 1000.
        let mut rng = SplitMix64::new(42);
        let runs = 400;
        let covered = (0..runs)
            .filter(|&i| {
                let data = cell(&mut rng, 1000.0, 8, 10, 30.0, 10.0);
                estimate(&data, i).unwrap().interval.contains(1000.0)
            })
            .count();
        let rate = covered as f64 / runs as f64;
        assert!((0.88..=0.99).contains(&rate), "coverage {rate}");
    }
}
