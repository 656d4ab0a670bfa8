//! Doubt: intervals of a cell's median over rounds and batches, and verdicts
//! when two cells are compared.
//!
//! A cell (one benchmark at one parameter point) rests on R *rounds*, each a
//! fresh process, and each round yields B *batch samples*. On a shared
//! machine the spread between rounds is often several times the spread
//! between the batches of one round, and the batches of one round are not
//! independent of each other; so every interval here comes from resampling
//! rounds first (a hierarchical bootstrap), and every significance test
//! takes rounds, not batches, as its independent units.
//!
//! Everything here is pure: no I/O, no clock, and every random choice comes
//! from a small seeded generator, so a given seed always gives the same
//! answer.

use serde::{Deserialize, Serialize};

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

/// The most rounds `rounds_needed` ever suggests. Projecting beyond that
/// (two hundred times the usual 5 rounds, an interval 14x narrower) assumes
/// a machine that does not drift for hours; a cap reached means "the
/// difference sits on the edge of the margin: no number of rounds will
/// settle it".
pub const ROUNDS_NEEDED_CAP: usize = 1000;

/// Largest sample size (on each side) for which `mann_whitney` enumerates
/// the exact distribution of U (a table of m x n + 1 counts, built in
/// m x m x n steps); beyond it the normal approximation with continuity
/// correction serves. Rounds, the units compared here, rarely number more.
pub const EXACT_MAX: usize = 20;

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

/// Two levels of one cell: the median of each cluster and the share of units (rounds, or
/// batches of a single round) in the lower one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Levels {
    pub low: f64,
    pub high: f64,
    /// Fraction of the units in the lower level (0..1).
    pub low_share: f64,
    /// "rounds" or "batches": what was clustered.
    pub of_rounds: bool,
}

/// The smallest number of units clustering is tried on, and the smallest cluster: two of
/// them and at least 15% of the units, so one outlier never makes a level.
const LEVELS_MIN_UNITS: usize = 4;
const LEVELS_MIN_SHARE: f64 = 0.15;
/// The gap between two levels must exceed this multiple of the larger cluster's range,
/// and this fraction of the overall median: separate clusters, not the tail of one.
const LEVELS_GAP_TO_RANGE: f64 = 2.0;
const LEVELS_MIN_GAP: f64 = 0.05;

/// Two clusters in `units`, if there are: the split of the sorted values with the widest gap,
/// taken when each side holds at least two units and 15% of them, the gap exceeds twice the
/// wider side's range and 5% of the median. None for fewer than four units or one cluster.
pub fn two_levels(units: &[f64]) -> Option<(f64, f64, f64)> {
    let mut x: Vec<f64> = units.iter().copied().filter(|v| v.is_finite()).collect();
    if x.len() < LEVELS_MIN_UNITS {
        return None;
    }
    x.sort_by(f64::total_cmp);
    let n = x.len();
    let min_side = 2usize.max((LEVELS_MIN_SHARE * n as f64).ceil() as usize);
    let overall = quantile_sorted(&x, 0.5);
    let (k, gap) = (min_side..=n.saturating_sub(min_side)).map(|k| (k, x[k] - x[k - 1])).max_by(|a, b| a.1.total_cmp(&b.1))?;
    let range = (x[k - 1] - x[0]).max(x[n - 1] - x[k]);
    if gap <= LEVELS_GAP_TO_RANGE * range || gap <= LEVELS_MIN_GAP * overall.abs() {
        return None;
    }
    Some((quantile_sorted(&x[..k], 0.5), quantile_sorted(&x[k..], 0.5), k as f64 / n as f64))
}

/// The levels of a cell: over its round medians when it has enough rounds, else over the
/// batches of its one round.
fn levels_of(cell: &Cell) -> Option<Levels> {
    let medians = cell.round_medians();
    let (units, of_rounds) = if medians.len() >= LEVELS_MIN_UNITS {
        (medians, true)
    } else if medians.len() == 1 {
        (cell.sorted_rounds[0].clone(), false)
    } else {
        return None;
    };
    two_levels(&units).map(|(low, high, low_share)| Levels { low, high, low_share, of_rounds })
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
struct Cell {
    /// Every sample of every round, sorted.
    values: Vec<f64>,
    /// Per round, the position in `values` of each of its batches.
    ranks: Vec<Vec<u32>>,
    /// Per round, its samples sorted (for round medians and CVs).
    sorted_rounds: Vec<Vec<f64>>,
    /// Median of `values`.
    median: f64,
}

impl Cell {
    /// None for no samples or any NaN or infinite sample.
    fn new(rounds: &[Vec<f64>]) -> Option<Cell> {
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
    fn rounds(&self) -> usize {
        self.ranks.len()
    }

    /// The median of each round.
    fn round_medians(&self) -> Vec<f64> {
        self.sorted_rounds.iter().map(|s| quantile_sorted(s, 0.5)).collect()
    }

    /// CV of the round medians (0 for a single round).
    fn between_round_cv(&self) -> f64 {
        Summary::of(&self.round_medians()).map_or(0.0, |s| s.cv)
    }

    /// Median over rounds of each round's CV.
    fn within_round_cv(&self) -> f64 {
        let mut cvs: Vec<f64> = self.sorted_rounds.iter().filter_map(|s| Summary::of(s)).map(|s| s.cv).collect();
        cvs.sort_by(f64::total_cmp);
        quantile_sorted(&cvs, 0.5)
    }

    /// Pooled medians of `n` hierarchical resamples (unsorted).
    fn bootstrap_medians(&self, rng: &mut SplitMix64, n: usize) -> Vec<f64> {
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
fn percentile_interval(sorted: &[f64]) -> Interval {
    Interval { lo: quantile_sorted(sorted, 0.025), hi: quantile_sorted(sorted, 0.975) }
}

/// Widens `interval` about `center` by `factor`: linearly, or in log terms
/// (for a ratio, which must stay positive).
fn expand(interval: Interval, center: f64, factor: f64, log: bool) -> Interval {
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
fn expansion(rounds: usize) -> f64 {
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

/// splitmix64 (Steele, Lea and Flood 2014): a tiny generator that passes
/// BigCrush; all the bootstrap needs is uniform indices from a seed.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n >= 1), by Lemire's multiply-shift; its bias is
    /// below n / 2^64, far beneath anything a bootstrap could notice.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Two indices uniform in 0..n (1 <= n < 2^32) from one word, each
    /// from 32 of its bits (bias below n / 2^32: for a round of 1000
    /// batches, 2e-7).
    fn two_below(&mut self, n: usize) -> (usize, usize) {
        let x = self.next_u64();
        let n = n as u64;
        ((((x >> 32) * n) >> 32) as usize, (((x & 0xFFFF_FFFF) * n) >> 32) as usize)
    }
}

/// The outcome of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the first sample `a`: the number of pairs (a_i, b_j) with
    /// a_i > b_j, ties counting one half. 0 when every a is below every b,
    /// m x n when every a is above; U_a + U_b = m x n.
    pub u: f64,
    /// Two-sided p-value: the chance of a U at least as far from m x n / 2
    /// if a and b come from one distribution.
    pub p: f64,
}

/// Two-sided Mann-Whitney U test of `a` against `b`.
///
/// Exact p-value (the distribution of U enumerated) when there are no ties
/// and both samples have at most `EXACT_MAX` values; otherwise the normal
/// approximation with tie correction and continuity correction. An empty
/// side gives U = 0 and p = 1; any NaN gives NaN for both.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> MannWhitney {
    if a.is_empty() || b.is_empty() {
        return MannWhitney { u: 0.0, p: 1.0 };
    }
    if a.iter().chain(b).any(|x| x.is_nan()) {
        return MannWhitney { u: f64::NAN, p: f64::NAN };
    }
    let (m, n) = (a.len(), b.len());
    let (rank_sum_a, tie_groups) = rank_sum(a, b);
    let u = rank_sum_a - (m * (m + 1)) as f64 / 2.0;
    let p = if tie_groups.is_empty() && m <= EXACT_MAX && n <= EXACT_MAX { exact_p(u, m, n) } else { normal_p(u, m, n, &tie_groups) };
    MannWhitney { u, p }
}

/// The sum of `a`'s ranks in `a` and `b` pooled (ties get their mean rank),
/// and the size of every group of tied values.
fn rank_sum(a: &[f64], b: &[f64]) -> (f64, Vec<usize>) {
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut sum, mut ties, mut i) = (0.0, Vec::new(), 0);
    while i < pooled.len() {
        let j = i + pooled[i..].iter().take_while(|p| p.0 == pooled[i].0).count();
        // Ranks i+1 ..= j, all tied: each gets their mean.
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        sum += mean_rank * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        if j - i > 1 {
            ties.push(j - i);
        }
        i = j;
    }
    (sum, ties)
}

/// Exact two-sided p-value of U for sizes m and n without ties:
/// 2 x min(P(U <= u), P(U >= u)), at most 1.
fn exact_p(u: f64, m: usize, n: usize) -> f64 {
    let counts = u_distribution(m, n);
    let total: f64 = counts.iter().sum();
    // Without ties U is a whole number; round away float dust.
    let k = (u.round().max(0.0) as usize).min(counts.len() - 1);
    let below: f64 = counts[..=k].iter().sum();
    let above: f64 = counts[k..].iter().sum();
    (2.0 * below.min(above) / total).min(1.0)
}

/// How many of the C(m+n, m) orderings give U = 0, 1, ..., m x n.
///
/// These are the coefficients of the Gaussian binomial [m+n choose m]_q
/// = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), built one factor at a time:
/// after step i the polynomial is [n+i choose i]_q, whose coefficients are
/// the counts for sizes (i, n) and so stay whole and non-negative.
/// Multiplying by (1 - q^k) subtracts a shifted copy; dividing by
/// (1 - q^i) is a running sum with stride i. Integers are exact (C(40, 20)
/// is about 1.4e11); the result is returned as f64 for the p-value.
fn u_distribution(m: usize, n: usize) -> Vec<f64> {
    let mut poly = vec![0i128; m * n + 1];
    poly[0] = 1;
    for i in 1..=m {
        let k = n + i;
        for d in (k..poly.len()).rev() {
            poly[d] -= poly[d - k];
        }
        for d in i..poly.len() {
            poly[d] += poly[d - i];
        }
    }
    poly.into_iter().map(|c| c as f64).collect()
}

/// Two-sided p-value of U by the normal approximation, with the variance
/// corrected for ties and a continuity correction of 1/2.
fn normal_p(u: f64, m: usize, n: usize, tie_groups: &[usize]) -> f64 {
    let (mf, nf) = (m as f64, n as f64);
    let big_n = mf + nf;
    let ties: f64 = tie_groups.iter().map(|&t| (t * t * t - t) as f64).sum();
    let var = mf * nf / 12.0 * ((big_n + 1.0) - ties / (big_n * (big_n - 1.0)));
    if var <= 0.0 {
        // Every value tied: no evidence of any difference.
        return 1.0;
    }
    let z = ((u - mf * nf / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// The complementary error function, by the Chebyshev fit of Numerical
/// Recipes (`erfcc`): relative error below 1.2e-7 everywhere.
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07 + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * (-z * z + poly).exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// The z with P(|Z| > z) = p for a standard normal Z (0 < p <= 1), by
/// bisection on `erfc` (monotone; 100 halvings of [0, 40] leave only the
/// error of `erfc` itself).
fn two_sided_z(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 40.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if erfc(mid / std::f64::consts::SQRT_2) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

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

/// Compares two cells counted exactly (see [`estimate_exact`]): the ratio
/// of their medians with an interval of zero width, and at once, whatever
/// the rounds, `Same` for equal medians and otherwise `Faster` or `Slower`:
/// any difference between two exact counts is real (p 0; 1 when equal).
/// None as for [`compare`].
pub fn compare_exact(a: &[Vec<f64>], b: &[Vec<f64>], lower_is_better: bool) -> Option<Comparison> {
    let (ca, cb) = (Cell::new(a)?, Cell::new(b)?);
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

/// Pairs up to which the signed-rank distribution is counted exactly.
const SIGNED_RANK_EXACT_MAX: usize = 60;

/// Two-sided p-value of the Wilcoxon signed-rank test that `d` is centred
/// on zero: zeros dropped, ties given their mean rank, the null
/// distribution of the positive rank sum counted exactly (ranks doubled to
/// keep half ranks whole). 1 for no non-zero difference.
pub fn signed_rank(d: &[f64]) -> f64 {
    let mut nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0 && x.is_finite()).collect();
    if nz.is_empty() {
        return 1.0;
    }
    nz.sort_by(|x, y| x.abs().total_cmp(&y.abs()));
    let n = nz.len();
    // Doubled ranks: a tie group over positions i..j (1-based i+1..=j) gets i + j + 1.
    let mut ranks2 = vec![0usize; n];
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && nz[j].abs() == nz[i].abs() {
            j += 1;
        }
        ranks2[i..j].iter_mut().for_each(|r| *r = i + j + 1);
        i = j;
    }
    let total: usize = ranks2.iter().sum();
    let w: usize = nz.iter().zip(&ranks2).filter(|(x, _)| **x > 0.0).map(|(_, r)| r).sum();
    if n > SIGNED_RANK_EXACT_MAX {
        // Normal approximation, continuity-corrected (one rank unit is 2 here).
        let var = ranks2.iter().map(|&r| (r * r) as f64).sum::<f64>() / 4.0;
        let z = ((w as f64 - total as f64 / 2.0).abs() - 1.0).max(0.0) / var.sqrt();
        return erfc(z / std::f64::consts::SQRT_2).min(1.0);
    }
    // counts[s]: sign assignments whose doubled positive rank sum is s.
    let mut counts = vec![0f64; total + 1];
    counts[0] = 1.0;
    for &r in &ranks2 {
        for s in (r..=total).rev() {
            counts[s] += counts[s - r];
        }
    }
    let all: f64 = counts.iter().sum();
    let (lo, hi) = (w.min(total - w), w.max(total - w));
    let tail: f64 = counts[..=lo].iter().sum::<f64>() + counts[hi..].iter().sum::<f64>();
    (if lo == hi { 1.0 } else { tail / all }).min(1.0)
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

    #[test]
    fn signed_rank_p_values_match_the_counted_distribution() {
        // All of 5 positive: 2 of the 32 sign patterns are as extreme: 0.0625 (never below 0.05).
        assert!(close(signed_rank(&[1.0, 2.0, 3.0, 4.0, 5.0]), 0.0625, 1e-12));
        assert!(close(signed_rank(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 2.0 / 64.0, 1e-12));
        // One negative of rank 2 among 8: W- = 2; subsets of 1..8 summing to 2 or less: {}, {1}, {2}.
        assert!(close(signed_rank(&[1.0, -2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]), 6.0 / 256.0, 1e-12));
        assert_eq!(signed_rank(&[0.0, 0.0]), 1.0);
        assert!(signed_rank(&[1.0, -1.0, 2.0, -2.0]) > 0.99, "symmetric differences");
        // Past the exact range the normal approximation agrees in size.
        let many: Vec<f64> = (1..=80).map(|i| if i % 3 == 0 { -(i as f64) } else { i as f64 }).collect();
        let p = signed_rank(&many);
        assert!(p > 0.0 && p < 0.05, "{p}");
    }

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

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    /// Standard normal draws by Box-Muller, from the module's generator.
    fn normal(rng: &mut SplitMix64) -> f64 {
        let u1 = ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// R rounds x B batches around `center`: each round offset by
    /// N(0, between), each batch by N(0, within).
    fn cell(rng: &mut SplitMix64, center: f64, rounds: usize, batches: usize, between: f64, within: f64) -> Vec<Vec<f64>> {
        (0..rounds)
            .map(|_| {
                let offset = between * normal(rng);
                (0..batches).map(|_| center + offset + within * normal(rng)).collect()
            })
            .collect()
    }

    #[test]
    fn two_levels_are_found_where_the_rounds_fall_into_two_clusters() {
        // getpid as the issue saw it: two rounds at 276-277, three at 341-348.
        let (low, high, share) = two_levels(&[341.0, 276.0, 345.0, 277.0, 348.0]).expect("two levels");
        assert_eq!((low, high), (276.5, 345.0));
        assert!(close(share, 0.4, 1e-12));
        // The same through a cell's estimate: five rounds of three batches each.
        let rounds: Vec<Vec<f64>> = [276.0, 277.0, 341.0, 345.0, 348.0].iter().map(|c| vec![c - 0.5, *c, c + 0.5]).collect();
        let l = estimate(&rounds, 1).unwrap().levels.expect("levels over rounds");
        assert!(l.of_rounds && l.low < 280.0 && l.high > 340.0, "{l:?}");
        // Batches of one round: 60 near 78 and 40 near 230.
        let mut rng = SplitMix64::new(7);
        let one: Vec<f64> = (0..100).map(|i| if i % 5 < 3 { 78.0 } else { 230.0 } + normal(&mut rng)).collect();
        let l = estimate(&[one], 1).unwrap().levels.expect("levels over batches");
        assert!(!l.of_rounds && close(l.low_share, 0.6, 1e-12) && (l.low - 78.0).abs() < 2.0 && (l.high - 230.0).abs() < 2.0);
    }

    #[test]
    fn one_cluster_is_never_split() {
        // 1000 cells of 10 rounds with between-round noise alone (CV 5%): no levels.
        let mut rng = SplitMix64::new(11);
        let split = (0..1000).filter(|_| estimate(&cell(&mut rng, 100.0, 10, 3, 5.0, 1.0), 3).unwrap().levels.is_some()).count();
        assert!(split <= 5, "{split} of 1000 single-cluster cells were split");
        // One outlier is not a level, nor are too few units.
        assert_eq!(two_levels(&[100.0, 101.0, 99.0, 100.5, 160.0, 100.2]), None);
        assert_eq!(two_levels(&[100.0, 200.0, 201.0]), None);
        // A gap under 5% of the median is not a level, however tight the clusters.
        assert_eq!(two_levels(&[100.0, 100.0, 100.0, 103.0, 103.0, 103.0]), None);
    }

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

    #[test]
    fn mann_whitney_exact_hand_cases() {
        // Complete separation, 3 + 3: 1 of C(6,3) = 20 orderings has U = 0.
        let r = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert_eq!(r.u, 0.0);
        assert!(close(r.p, 0.1, 1e-12));
        // U is a's: the mirror image has U = m x n and the same p.
        let r = mann_whitney(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]);
        assert_eq!(r.u, 9.0);
        assert!(close(r.p, 0.1, 1e-12));
        // 5 + 5: 2 / C(10,5) = 2/252.
        let a: Vec<f64> = (1..=5).map(f64::from).collect();
        let b: Vec<f64> = (6..=10).map(f64::from).collect();
        let r = mann_whitney(&a, &b);
        assert_eq!(r.u, 0.0);
        assert!(close(r.p, 2.0 / 252.0, 1e-12));
        // a = [1, 3], b = [2, 4]: U = 1 (3 > 2). U for 2 + 2 takes 0..4
        // with counts 1, 1, 2, 1, 1 of 6; P(U <= 1) = 2/6, so p = 4/6.
        let r = mann_whitney(&[1.0, 3.0], &[2.0, 4.0]);
        assert_eq!(r.u, 1.0);
        assert!(close(r.p, 4.0 / 6.0, 1e-12));
        // Interleaved perfectly: U = m n / 2, p = 1.
        let r = mann_whitney(&[1.0, 4.0, 5.0, 8.0], &[2.0, 3.0, 6.0, 7.0]);
        assert_eq!(r.u, 8.0);
        assert_eq!(r.p, 1.0);
    }

    #[test]
    fn u_distribution_sums_to_binomial() {
        // For 3 + 4 the count for U = u is the number of partitions of u
        // into at most 3 parts of at most 4, e.g. u = 6: 4+2, 4+1+1, 3+3,
        // 3+2+1, 2+2+2.
        let d = u_distribution(3, 4);
        assert_eq!(d, vec![1.0, 1.0, 2.0, 3.0, 4.0, 4.0, 5.0, 4.0, 4.0, 3.0, 2.0, 1.0, 1.0]);
        assert_eq!(d.iter().sum::<f64>(), 35.0);
        let d = u_distribution(20, 20);
        assert_eq!(d.iter().sum::<f64>(), 137_846_528_820.0);
        assert!(d.iter().all(|&c| c >= 1.0));
    }

    #[test]
    fn mann_whitney_with_ties_uses_the_corrected_normal() {
        // a = [1, 2, 2], b = [2, 3, 4]. Pooled 1, 2, 2, 2, 3, 4: ranks
        // 1, 3, 3, 3, 5, 6; a's rank sum 7, U = 7 - 3 x 4 / 2 = 1.
        // mean U = 4.5; one tie group of 3: 3^3 - 3 = 24;
        // var = 3 x 3 / 12 x (7 - 24 / (6 x 5)) = 0.75 x 6.2 = 4.65;
        // z = (|1 - 4.5| - 0.5) / sqrt(4.65) = 1.391217;
        // p = erfc(z / sqrt 2) = 0.164160.
        let r = mann_whitney(&[1.0, 2.0, 2.0], &[2.0, 3.0, 4.0]);
        assert_eq!(r.u, 1.0);
        assert!(close(r.p, 0.164_159_73, 1e-6), "p {}", r.p);
        // All tied: no evidence.
        assert_eq!(mann_whitney(&[5.0, 5.0], &[5.0, 5.0, 5.0]).p, 1.0);
    }

    #[test]
    fn mann_whitney_large_samples_use_the_normal() {
        // 25 + 25, completely separated: z = (312.5 - 0.5) / sqrt(25 x 25
        // x 51 / 12) = 6.052, p about 1.4e-9.
        let a: Vec<f64> = (0..25).map(f64::from).collect();
        let b: Vec<f64> = (100..125).map(f64::from).collect();
        let r = mann_whitney(&a, &b);
        assert_eq!(r.u, 0.0);
        let z: f64 = 312.0 / (25.0f64 * 25.0 * 51.0 / 12.0).sqrt();
        assert!(close(r.p, erfc(z / std::f64::consts::SQRT_2), 1e-12));
        assert!(r.p < 1e-8);
    }

    #[test]
    fn mann_whitney_edge_inputs() {
        assert_eq!(mann_whitney(&[], &[1.0]), MannWhitney { u: 0.0, p: 1.0 });
        assert!(mann_whitney(&[f64::NAN], &[1.0]).p.is_nan());
    }

    #[test]
    fn erfc_and_its_inverse() {
        assert!(close(erfc(0.0), 1.0, 1e-7));
        assert!(close(erfc(1.959_963_985 / std::f64::consts::SQRT_2), 0.05, 1e-6));
        assert!(close(erfc(-1.0), 2.0 - 0.157_299_207, 1e-7));
        assert!(close(two_sided_z(0.05), 1.959_964, 1e-6));
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
