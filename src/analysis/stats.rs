//! Summaries of samples: the statistics every result carries.

use serde::{Deserialize, Serialize};

/// A summary of `n` samples in one unit. Percentiles interpolate linearly
/// between the two nearest ranks (the "type 7" rule of R and numpy).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1 in the denominator).
    pub stddev: f64,
    /// Coefficient of variation: stddev / mean (0 when the mean is 0).
    pub cv: f64,
}

/// The q-quantile (0 <= q <= 1) of sorted data, linear between ranks.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty(), "quantile of no samples");
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

impl Summary {
    /// Its statistics but n, by the names run documents and exports give
    /// them, in their order.
    pub fn named(&self) -> [(&'static str, f64); 8] {
        [
            ("min", self.min),
            ("median", self.median),
            ("mean", self.mean),
            ("p99", self.p99),
            ("p999", self.p999),
            ("max", self.max),
            ("stddev", self.stddev),
            ("cv", self.cv),
        ]
    }

    /// Summarises samples; returns None for an empty slice or any NaN.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|x| x.is_nan()) {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let mean = s.iter().sum::<f64>() / n as f64;
        let var = if n > 1 { s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
        let stddev = var.sqrt();
        Some(Summary {
            n,
            min: s[0],
            median: quantile_sorted(&s, 0.5),
            mean,
            p99: quantile_sorted(&s, 0.99),
            p999: quantile_sorted(&s, 0.999),
            max: s[n - 1],
            stddev,
            cv: if mean != 0.0 { stddev / mean } else { 0.0 },
        })
    }

    /// The same summary in another unit, `factor` units per old unit.
    /// (A linear change of unit leaves the CV as it is.)
    pub fn scaled(&self, factor: f64) -> Summary {
        Summary {
            n: self.n,
            min: self.min * factor,
            median: self.median * factor,
            mean: self.mean * factor,
            p99: self.p99 * factor,
            p999: self.p999 * factor,
            max: self.max * factor,
            stddev: self.stddev * factor.abs(),
            cv: self.cv,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn one_to_hundred() {
        let data: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = Summary::of(&data).unwrap();
        assert_eq!(s.n, 100);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert!(close(s.median, 50.5));
        assert!(close(s.mean, 50.5));
        assert!(close(s.p99, 99.01));
        assert!(close(s.p999, 99.901));
        // sample stddev of 1..=100 is sqrt(841.666...)
        assert!(close(s.stddev, (25250.0f64 / 30.0).sqrt()));
        assert!(close(s.cv, s.stddev / 50.5));
    }

    #[test]
    fn odd_count_median_is_middle_sample() {
        let s = Summary::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 3.0);
        assert!(close(s.stddev, 2.0));
    }

    #[test]
    fn single_sample_and_constant_data() {
        let s = Summary::of(&[7.0]).unwrap();
        assert_eq!((s.min, s.median, s.p99, s.max, s.stddev, s.cv), (7.0, 7.0, 7.0, 7.0, 0.0, 0.0));
        let c = Summary::of(&[4.0; 10]).unwrap();
        assert_eq!(c.cv, 0.0);
    }

    #[test]
    fn empty_or_nan_gives_none() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn scaling_keeps_cv() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 10.0]).unwrap();
        let t = s.scaled(0.5);
        assert!(close(t.median, s.median * 0.5));
        assert!(close(t.stddev, s.stddev * 0.5));
        assert_eq!(t.cv, s.cv);
    }
}
