//! Two levels in one cell: rounds (or the batches of one round) that fall
//! into two separate clusters, which one median with a wide interval
//! would hide.

use serde::{Deserialize, Serialize};

use super::bootstrap::Cell;
use crate::analysis::stats::quantile_sorted;

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
pub(super) fn levels_of(cell: &Cell) -> Option<Levels> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uncertainty::bootstrap::estimate;
    use crate::analysis::uncertainty::random::SplitMix64;
    use crate::analysis::uncertainty::sim::{cell, close, normal};

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
}
