//! OS noise as FWQ (fixed work quantum) measures it: the same work, timed
//! again and again on a pinned CPU; every sample above the minimum is time
//! the OS (or the hypervisor) took away. Samples go into a preallocated,
//! prefaulted buffer; nothing is allocated while measuring.

pub mod family;
pub mod schema;
pub mod table;

/// A loop of `iterations` decrements the compiler can neither remove nor
/// change (inline assembly, [`crate::measure::arch`]'s `countdown`).
#[inline(always)]
pub fn work(iterations: u64) {
    crate::measure::arch::countdown(iterations);
}

/// Per-sample cycles and when each sample started (TSC).
#[derive(Debug, Clone)]
pub struct Samples {
    pub cycles: Vec<u64>,
    pub starts: Vec<u64>,
}

/// Takes `n` samples of `work(quantum)`. The buffers are allocated and
/// touched before the first sample.
pub fn fwq(quantum: u64, n: usize) -> Samples {
    fwq_until(quantum, n, &|| false)
}

/// [`fwq`], asking `stop` after each sample (outside the timed part): the
/// samples taken until it said yes. A run of the slides' quantum lasts
/// minutes; Ctrl-C must not wait for it.
pub fn fwq_until(quantum: u64, n: usize, stop: &dyn Fn() -> bool) -> Samples {
    let mut cycles = vec![1u64; n];
    let mut starts = vec![1u64; n];
    for i in 0..n {
        let t0 = crate::measure::arch::rdtscp();
        work(quantum);
        let t1 = crate::measure::arch::rdtscp();
        cycles[i] = t1 - t0;
        starts[i] = t0;
        if stop() {
            cycles.truncate(i + 1);
            starts.truncate(i + 1);
            break;
        }
    }
    Samples { cycles, starts }
}

/// What the deltas to the minimum say.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseSummary {
    pub min: u64,
    pub max_delta: u64,
    pub p99_delta: f64,
    pub p999_delta: f64,
    /// Sum of deltas over the sum of samples.
    pub lost_fraction: f64,
    /// Count of samples whose delta falls in [2^k, 2^(k+1)) cycles; bucket 0 holds delta 0 and 1.
    pub histogram: Vec<u64>,
    /// The largest spikes: (microseconds since the first sample, delta cycles).
    pub spikes: Vec<(f64, u64)>,
}

/// Counts per power-of-two bucket: bucket k holds [2^k, 2^(k+1)), bucket 0
/// also holds 0; trailing empty buckets are dropped.
pub fn log2_histogram(values: &[u64]) -> Vec<u64> {
    let mut histogram = vec![0u64; 64];
    for &d in values {
        histogram[(64 - d.leading_zeros()).saturating_sub(1) as usize] += 1;
    }
    while histogram.len() > 1 && histogram.last() == Some(&0) {
        histogram.pop();
    }
    histogram
}

pub fn summarize(s: &Samples, tsc_hz: f64, spikes: usize) -> NoiseSummary {
    let min = s.cycles.iter().copied().min().unwrap_or(0);
    let mut deltas: Vec<u64> = s.cycles.iter().map(|c| c - min).collect();
    let total: u64 = s.cycles.iter().sum();
    let lost: u64 = deltas.iter().sum();
    let histogram = log2_histogram(&deltas);
    let mut order: Vec<usize> = (0..deltas.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(deltas[i]));
    let first = s.starts.first().copied().unwrap_or(0);
    let spikes = order.iter().take(spikes).map(|&i| ((s.starts[i] - first) as f64 * 1e6 / tsc_hz, deltas[i])).collect();
    deltas.sort_unstable();
    let sorted: Vec<f64> = deltas.iter().map(|&d| d as f64).collect();
    NoiseSummary {
        min,
        max_delta: *deltas.last().unwrap_or(&0),
        p99_delta: crate::analysis::stats::quantile_sorted(&sorted, 0.99),
        p999_delta: crate::analysis::stats::quantile_sorted(&sorted, 0.999),
        lost_fraction: if total > 0 { lost as f64 / total as f64 } else { 0.0 },
        histogram,
        spikes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_loop_is_not_optimised_away() {
        // Its cost scales with the quantum: 8x the work takes well over 4x the cycles.
        let small = fwq(10_000, 200).cycles.into_iter().min().unwrap();
        let large = fwq(80_000, 200).cycles.into_iter().min().unwrap();
        assert!(small > 1000, "10,000 decrements in {small} cycles");
        assert!(large > 4 * small, "80,000 iterations took {large} cycles, 10,000 took {small}");
    }

    #[test]
    fn fwq_stops_when_asked() {
        let asked = std::cell::Cell::new(0);
        let s = fwq_until(100, 50, &|| {
            asked.set(asked.get() + 1);
            asked.get() == 7
        });
        assert_eq!((s.cycles.len(), s.starts.len()), (7, 7));
        assert!(s.cycles.iter().all(|&c| c > 1), "every kept sample was measured");
    }

    #[test]
    fn deltas_histogram_and_spikes_on_known_samples() {
        let s = Samples { cycles: vec![100, 100, 101, 103, 200, 100], starts: vec![0, 10, 20, 30, 40, 50] };
        let n = summarize(&s, 10.0, 2);
        assert_eq!(n.min, 100);
        assert_eq!(n.max_delta, 100);
        assert_eq!(n.histogram, vec![4, 1, 0, 0, 0, 0, 1]);
        assert_eq!(n.spikes, vec![(4e6, 100), (3e6, 3)]);
        assert!((n.lost_fraction - 104.0 / 704.0).abs() < 1e-12);
    }
}
