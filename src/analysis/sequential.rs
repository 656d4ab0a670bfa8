//! Verdicts that may be looked at after every pair of rounds.
//!
//! `compare --interleave auto` measures A and B in pairs of rounds and
//! judges every cell again after each pair, stopping a cell once it has a
//! verdict. A fixed-sample test read that way is wrong: look often enough
//! and a p-value dips below 0.05 by chance (with 100 looks at an A/A, a
//! Wilcoxon test at 0.05 calls a difference in about a third of the
//! cells). What is used here instead is a *confidence sequence*: intervals
//! that hold at every look at once, so that stopping at any look, chosen
//! by the data or not, keeps the error rate promised.
//!
//! The quantity is the median of the paired log-ratios d_k = ln(ratio of
//! pair k), the cell's "typical" difference, and the sequence comes from
//! signs only (Howard and Ramdas, "Sequential estimation of quantiles with
//! applications to A/B-testing and best-arm identification", Bernoulli
//! 28(3), 2022; the time-uniform bounds of Howard, Ramdas, McAuliffe and
//! Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence
//! sequences", Ann. Statist. 49(2), 2021). For a candidate median m, let
//! X_k = 1 when d_k < m. If m is the median of pair k's distribution given
//! the past, P(X_k = 1) <= 1/2, so for any p in [1/2, 1) the product
//! L_n(p) = prod_k (2p)^{X_k} (2(1-p))^{1-X_k} is a non-negative
//! supermartingale (each factor's expectation is at most 1), and so is any
//! mixture of them over p (a sign-test sequential probability ratio,
//! Wald's SPRT mixed over alternatives). By Ville's inequality the
//! probability that the mixture *ever* reaches 2/alpha is at most alpha/2.
//! The same with X_k = 1 when d_k > m. The m that neither rejects form the
//! confidence sequence: [d_(n-K+1), d_(K)] of the sorted d's, K the least
//! count of one sign that reaches 2/alpha after n pairs.
//!
//! Why signs: the cells of a shared machine are two-level (a round lands in
//! a slow mode for the whole process), and the host drifts over minutes. No
//! normal or sub-Gaussian model of the ratios survives that, while the sign
//! argument needs none: only that, in an A/A, the pair's two rounds are
//! exchangeable. That holds exactly when the order within each pair is
//! drawn at random (`pair_order`): whatever the drift, the first and the
//! second round of a pair are then equally likely to be A's. The price is
//! power: no verdict before 8 pairs, and a 10% difference with 5% of noise
//! takes a few dozen pairs (the simulation tests below).
//!
//! The verdict against the equivalence band [-b, b], b = ln(1 + margin):
//! the sequence inside it `Same`; wholly above `Faster`, below `Slower`. An
//! A/A's true median is 0, inside the band, so a false `Faster`/`Slower`
//! needs the sequence to miss it: at most alpha over every look together.
//!
//! Cells counted exactly (the instruction counter, every sample of each
//! side the same number) have no noise to test: one pair says all
//! (`exact`).

use crate::analysis::uncertainty::{random::SplitMix64, verdict::Verdict};

/// The alternatives mixed (P(d < m) under each), with equal weights: from
/// a slight lean to near-certainty, so that both a small difference over
/// many pairs and a plain one over few find their evidence.
const ALTERNATIVES: [f64; 9] = [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];

/// The most pairs a projection ever names.
pub const PAIRS_CAP: usize = crate::analysis::uncertainty::verdict::ROUNDS_NEEDED_CAP;

/// ln of the mixture martingale after `n` pairs of which `k` fell on one
/// side of the candidate median.
fn log_mixture(k: usize, n: usize) -> f64 {
    let terms: Vec<f64> = ALTERNATIVES.iter().map(|&p| k as f64 * (2.0 * p).ln() + (n - k) as f64 * (2.0 * (1.0 - p)).ln()).collect();
    let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln() - (ALTERNATIVES.len() as f64).ln()
}

/// The least count K of one sign among `n` pairs at which the mixture
/// reaches 2/alpha (rejects), or None when even n of n would not. At the
/// usual level (0.05) from a table made once: every look projects the
/// pairs a cell needs by asking up to `PAIRS_CAP` counts.
pub fn threshold(n: usize, alpha: f64) -> Option<usize> {
    static USUAL: std::sync::OnceLock<Vec<Option<usize>>> = std::sync::OnceLock::new();
    if alpha == 0.05 && n <= PAIRS_CAP {
        return USUAL.get_or_init(|| (0..=PAIRS_CAP).map(|m| threshold_of(m, 0.05)).collect())[n];
    }
    threshold_of(n, alpha)
}

fn threshold_of(n: usize, alpha: f64) -> Option<usize> {
    let bar = (2.0 / alpha).ln();
    if n == 0 || log_mixture(n, n) < bar {
        return None;
    }
    // log_mixture grows with k (every alternative leans the same way).
    let (mut lo, mut hi) = (n / 2, n);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if log_mixture(mid, n) >= bar { hi = mid } else { lo = mid }
    }
    Some(hi)
}

/// A sequential judgement of one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// The confidence sequence's interval for the median ratio (B's
    /// performance relative to A's), None while it is unbounded.
    pub interval: Option<(f64, f64)>,
    /// The median of the per-pair ratios.
    pub ratio: f64,
    /// For `Unsure`: pairs in all that would likely settle it if the
    /// ratios kept their spread (at most `PAIRS_CAP`).
    pub pairs_needed: Option<usize>,
    pub pairs: usize,
}

/// The verdict a sorted sample of log-ratios gives after `n` pairs, with
/// the interval's ends in log terms.
fn verdict_of(sorted: &[f64], n: usize, alpha: f64, margin: f64) -> (Verdict, Option<(f64, f64)>) {
    let Some(k) = threshold(n, alpha) else { return (Verdict::Unsure, None) };
    // Positions in a sample of n (the current one, or projected to n).
    let at = |i: usize| {
        let q = (i as f64 - 0.5) / n as f64;
        crate::analysis::stats::quantile_sorted(sorted, q.clamp(0.0, 1.0))
    };
    let (lo, hi) = if sorted.len() == n { (sorted[n - k], sorted[k - 1]) } else { (at(n - k + 1), at(k)) };
    let b = margin.ln_1p();
    let v = if -b <= lo && hi <= b {
        Verdict::Same
    } else if lo > b {
        Verdict::Faster
    } else if hi < -b {
        Verdict::Slower
    } else {
        Verdict::Unsure
    };
    (v, Some((lo, hi)))
}

/// Judges paired log-ratios `logs` (ln of B's performance relative to A's,
/// one per pair, in any order) at level `alpha` against `margin`; for an
/// `Unsure`, the pairs it would likely need.
pub fn judge(logs: &[f64], alpha: f64, margin: f64) -> Judgement {
    let mut sorted: Vec<f64> = logs.iter().copied().filter(|x| x.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let mut j = look(&sorted, alpha, margin);
    j.pairs_needed = (j.verdict == Verdict::Unsure).then(|| pairs_needed(&sorted, alpha, margin));
    j
}

/// The verdict and interval of sorted finite log-ratios, without a
/// projection (what every look needs; cheap).
pub fn look(sorted: &[f64], alpha: f64, margin: f64) -> Judgement {
    let n = sorted.len();
    let ratio = if n == 0 { f64::NAN } else { crate::analysis::stats::quantile_sorted(sorted, 0.5).exp() };
    let (verdict, interval) = if n == 0 { (Verdict::Unsure, None) } else { verdict_of(sorted, n, alpha, margin) };
    Judgement { verdict, interval: interval.map(|(lo, hi)| (lo.exp(), hi.exp())), ratio, pairs_needed: None, pairs: n }
}

/// Pairs in all that would likely settle a cell whose log-ratios so far
/// are `sorted`, if they kept their spread: the first count at which the
/// same quantiles would give a verdict (at most `PAIRS_CAP`).
fn pairs_needed(sorted: &[f64], alpha: f64, margin: f64) -> usize {
    let n = sorted.len();
    if n < 2 {
        // Nothing is known of the spread: the fewest pairs that can decide.
        return (1..=PAIRS_CAP).find(|&m| threshold(m, alpha).is_some()).unwrap_or(PAIRS_CAP);
    }
    (n + 1..=PAIRS_CAP).find(|&m| verdict_of(sorted, m, alpha, margin).0 != Verdict::Unsure).unwrap_or(PAIRS_CAP)
}

/// The verdict of a cell counted exactly: every sample of A one number,
/// every sample of B one number (the instruction counter of a
/// deterministic guest). Nothing varies, so one pair is the whole truth:
/// `Same` within the margin, else `Faster` or `Slower`. None when a side
/// varies at all, or has no positive sample.
pub fn exact(a: &[Vec<f64>], b: &[Vec<f64>], lower_is_better: bool, margin: f64) -> Option<(Verdict, f64)> {
    let (x, y) = (one_number(a)?, one_number(b)?);
    let ratio = if lower_is_better { x / y } else { y / x };
    let b = margin.ln_1p();
    let v = match ratio.ln() {
        l if l.abs() <= b => Verdict::Same,
        l if l > 0.0 => Verdict::Faster,
        _ => Verdict::Slower,
    };
    Some((v, ratio))
}

/// The one number every sample of a cell's rounds is, if they are all one
/// positive finite number (a cell counted exactly: the instruction counter
/// of a deterministic guest): such a cell is settled by its first round.
pub fn one_number(rounds: &[Vec<f64>]) -> Option<f64> {
    let first = *rounds.iter().flatten().next()?;
    (first > 0.0 && first.is_finite() && rounds.iter().flatten().all(|&x| x == first)).then_some(first)
}

/// Which side runs first in pair k: a seeded coin (true: A first). Drawn
/// at random, not alternated, so that in an A/A a pair's two rounds are
/// exchangeable whatever the host's drift does (see the module's text).
pub fn a_first(seed: u64, k: usize) -> bool {
    SplitMix64::new(seed ^ (k as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64() & 1 == 0
}

/// A simulated host for the tests of the rules built on this one (the
/// stopping rule here, the loop that measures until cells settle).
#[cfg(test)]
pub(crate) mod sim {
    use crate::analysis::uncertainty::random::SplitMix64;

    /// A slow drift over the whole run (a sine of `drift` amplitude), each
    /// round (process) landing in a slow mode with probability `slow_p`
    /// (+`slow` in log terms), plus noise of `noise` sd (Box-Muller from
    /// the seeded generator).
    pub struct Host {
        pub rng: SplitMix64,
        pub drift: f64,
        pub slow_p: f64,
        pub slow: f64,
        pub noise: f64,
    }

    impl Host {
        /// The host of the tests: a 30% drift, 30% of rounds 25% slower, 4% of noise.
        pub fn shared(seed: u64) -> Host {
            Host { rng: SplitMix64::new(seed), drift: 0.3, slow_p: 0.3, slow: 0.25, noise: 0.04 }
        }
        fn uniform(&mut self) -> f64 {
            (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform().max(1e-300), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
        /// ln of the cost of a round at time t (rounds so far).
        pub fn round(&mut self, t: f64, true_log: f64) -> f64 {
            let level = if self.uniform() < self.slow_p { self.slow } else { 0.0 };
            true_log + self.drift * (t / 40.0).sin() + level + self.noise * self.normal()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sim::Host;
    use super::*;

    /// Runs one simulated comparison, looking after every pair until a
    /// verdict or `budget` pairs; B's true cost is `b_log` above A's.
    fn simulate(seed: u64, b_log: f64, budget: usize) -> Judgement {
        simulate_with(seed, b_log, budget, 0.05)
    }

    fn simulate_with(seed: u64, b_log: f64, budget: usize, margin: f64) -> Judgement {
        let mut host = Host::shared(seed);
        let mut logs = Vec::new();
        for k in 0..budget {
            let t = 2.0 * k as f64;
            let (a, b) = if a_first(seed, k) {
                (host.round(t, 0.0), host.round(t + 1.0, b_log))
            } else {
                let b = host.round(t, b_log);
                (host.round(t + 1.0, 0.0), b)
            };
            // A cost: B's performance relative to A's is A / B.
            let d = a - b;
            logs.insert(logs.partition_point(|x| *x < d), d);
            let j = look(&logs, 0.05, margin);
            if j.verdict != Verdict::Unsure {
                return j;
            }
        }
        look(&logs, 0.05, margin)
    }

    #[test]
    fn aa_with_drift_and_two_levels_rarely_gives_a_false_verdict_however_often_looked_at() {
        let runs = 1000;
        let mut false_verdicts = 0;
        let mut same = 0;
        for s in 0..runs {
            match simulate(1000 + s, 0.0, 300).verdict {
                Verdict::Faster | Verdict::Slower => false_verdicts += 1,
                Verdict::Same => same += 1,
                Verdict::Unsure => {}
            }
        }
        let rate = false_verdicts as f64 / runs as f64;
        eprintln!("A/A: {false_verdicts} false verdicts, {same} same of {runs}");
        assert!(rate <= 0.05, "false verdicts in {:.1}% of A/A's", 100.0 * rate);
        assert!(same > runs / 2, "the A/A's should mostly end `same` within 300 pairs: {same} of {runs}");
    }

    #[test]
    fn aa_that_can_never_be_same_is_looked_at_300_times_and_still_rarely_called() {
        // A margin of nothing: `same` is out of reach, so every A/A is
        // looked at all 300 times unless it is (falsely) called.
        let runs = 1000;
        let called = (0..runs).filter(|&s| simulate_with(7000 + s, 0.0, 300, 1e-9).verdict != Verdict::Unsure).count();
        eprintln!("A/A, no margin, 300 looks: {called} false verdicts of {runs}");
        assert!(called as f64 <= 0.05 * runs as f64, "false verdicts in {called} of {runs}");
    }

    #[test]
    fn a_ten_percent_slower_b_is_found_slower_in_bounded_pairs() {
        let runs = 300;
        let mut found = 0;
        let mut pairs = Vec::new();
        for s in 0..runs {
            let j = simulate(5000 + s, 0.10_f64.ln_1p(), 200);
            if j.verdict == Verdict::Slower {
                found += 1;
                pairs.push(j.pairs);
            }
            assert_ne!(j.verdict, Verdict::Faster, "run {s}: a slower B called faster");
        }
        pairs.sort();
        eprintln!("10% slower: found in {found} of {runs}, median pairs {}", pairs[pairs.len() / 2]);
        assert!(found as f64 >= 0.9 * runs as f64, "only {found} of {runs} found slower in 200 pairs");
        assert!(pairs[pairs.len() / 2] <= 120, "median pairs to find it: {}", pairs[pairs.len() / 2]);
    }

    #[test]
    fn the_threshold_needs_eight_pairs_and_then_falls_towards_half() {
        assert_eq!(threshold(7, 0.05), None);
        assert_eq!(threshold(8, 0.05), Some(8));
        let frac = |n: usize| threshold(n, 0.05).unwrap() as f64 / n as f64;
        assert!(frac(100) < frac(30) && frac(1000) < frac(100) && frac(1000) > 0.5);
    }

    #[test]
    fn the_verdicts_follow_the_interval_and_project_pairs() {
        // Ten equal signs of a 20% gain: faster. Ten within 1%: same.
        assert_eq!(judge(&[0.2f64.ln_1p(); 10], 0.05, 0.05).verdict, Verdict::Faster);
        assert_eq!(judge(&[-0.2f64.ln_1p(); 10], 0.05, 0.05).verdict, Verdict::Slower);
        let close: Vec<f64> = (0..10).map(|i| 0.01 * ((i % 3) as f64 - 1.0)).collect();
        assert_eq!(judge(&close, 0.05, 0.05).verdict, Verdict::Same);
        let j = judge(&close[..5], 0.05, 0.05);
        assert_eq!((j.verdict, j.pairs_needed, j.interval), (Verdict::Unsure, Some(8), None));
        assert_eq!(judge(&[], 0.05, 0.05).pairs_needed, Some(8));
    }

    #[test]
    fn exact_cells_settle_at_once() {
        let a = vec![vec![1000.0; 3]];
        assert_eq!(exact(&a, &[vec![1000.0; 3]], true, 0.05), Some((Verdict::Same, 1.0)));
        assert_eq!(exact(&a, &[vec![1200.0; 3]], true, 0.05).map(|x| x.0), Some(Verdict::Slower));
        assert_eq!(exact(&a, &[vec![800.0; 3]], true, 0.05).map(|x| x.0), Some(Verdict::Faster));
        assert_eq!(exact(&a, &[vec![800.0, 801.0]], true, 0.05), None, "a spread is not exact");
    }

    #[test]
    fn pair_orders_are_seeded_and_mixed() {
        let firsts = (0..1000).filter(|&k| a_first(9, k)).count();
        assert!((400..600).contains(&firsts));
        assert_eq!(a_first(9, 3), a_first(9, 3));
    }
}
