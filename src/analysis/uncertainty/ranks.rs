//! Rank tests, with rounds as their independent units: the two-sided
//! Mann-Whitney U test and the Wilcoxon signed-rank test, and the normal
//! tail (`erfc`) both fall back on.

use serde::{Deserialize, Serialize};

/// Largest sample size (on each side) for which `mann_whitney` enumerates
/// the exact distribution of U (a table of m x n + 1 counts, built in
/// m x m x n steps); beyond it the normal approximation with continuity
/// correction serves. Rounds, the units compared here, rarely number more.
pub const EXACT_MAX: usize = 20;

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
pub(super) fn erfc(x: f64) -> f64 {
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
pub(super) fn two_sided_z(p: f64) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uncertainty::sim::close;

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
}
