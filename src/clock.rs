//! The clock every measurement reads: the TSC, calibrated against
//! CLOCK_MONOTONIC_RAW, with the cost of reading it measured so that the
//! harness can subtract it.

use crate::arch;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A source of timestamps in cycles. The harness is generic over it so that
/// tests can drive the calibration loop with a fake clock.
pub trait Clock {
    fn now(&self) -> u64;
}

/// The time-stamp counter, read with `rdtscp; lfence`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tsc;

impl Clock for Tsc {
    #[inline(always)]
    fn now(&self) -> u64 {
        arch::rdtscp()
    }
}

/// What we know about the clock on this host.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClockInfo {
    pub source: String,
    /// TSC ticks per second, calibrated against CLOCK_MONOTONIC_RAW.
    pub tsc_hz: f64,
    /// Spread of the calibration rounds, (max - min) / median.
    pub tsc_hz_spread: f64,
    /// The frequency cpuid states, when it states one.
    pub cpuid_tsc_hz: Option<f64>,
    /// Minimum cost of two back-to-back reads, subtracted from every batch.
    pub overhead_cycles: u64,
}

impl ClockInfo {
    pub fn cycles_to_ns(&self, cycles: f64) -> f64 {
        cycles * 1e9 / self.tsc_hz
    }
}

pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_MONOTONIC_RAW is always available on Linux");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One calibration round: TSC ticks over an interval of CLOCK_MONOTONIC_RAW.
/// Each end is bracketed by two TSC reads and the tighter bracket is kept, so
/// a preemption between the reads cannot skew the result much.
fn calibration_round(interval: Duration) -> f64 {
    let stamp = || {
        let mut best = (u64::MAX, 0u64, 0u64);
        for _ in 0..5 {
            let t0 = arch::rdtscp();
            let ns = monotonic_raw_ns();
            let t1 = arch::rdtscp();
            if t1 - t0 < best.0 {
                best = (t1 - t0, t0 + (t1 - t0) / 2, ns);
            }
        }
        (best.1, best.2)
    };
    let (tsc0, ns0) = stamp();
    std::thread::sleep(interval);
    let (tsc1, ns1) = stamp();
    (tsc1 - tsc0) as f64 * 1e9 / (ns1 - ns0) as f64
}

/// Minimum of many back-to-back reads of `clock`.
pub fn read_overhead<C: Clock>(clock: &C, rounds: usize) -> u64 {
    (0..rounds)
        .map(|_| {
            let a = clock.now();
            let b = clock.now();
            b.saturating_sub(a)
        })
        .min()
        .unwrap_or(0)
}

static LAST_TSC_HZ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The TSC rate of the last calibration in this process, or CPUID's, or
/// 2 GHz: good enough to predict whether a batch would outlast a deadline.
pub fn tsc_hz_hint() -> f64 {
    match LAST_TSC_HZ.load(std::sync::atomic::Ordering::Relaxed) {
        0 => arch::cpuid_tsc_hz().unwrap_or(2e9),
        hz => hz as f64,
    }
}

/// The clock with a TSC rate calibrated elsewhere (a run's parent process);
/// the read overhead is measured here.
pub fn known_tsc(hz: f64) -> ClockInfo {
    LAST_TSC_HZ.store(hz as u64, std::sync::atomic::Ordering::Relaxed);
    ClockInfo {
        source: "tsc (rdtscp; lfence); rate from the run's parent".into(),
        tsc_hz: hz,
        tsc_hz_spread: 0.0,
        cpuid_tsc_hz: arch::cpuid_tsc_hz(),
        overhead_cycles: read_overhead(&Tsc, 10_000),
    }
}

/// Calibrates the TSC: median of `rounds` rounds of `interval` each.
pub fn calibrate_tsc(rounds: usize, interval: Duration) -> ClockInfo {
    let mut hz: Vec<f64> = (0..rounds.max(1)).map(|_| calibration_round(interval)).collect();
    hz.sort_by(f64::total_cmp);
    let median = hz[hz.len() / 2];
    LAST_TSC_HZ.store(median as u64, std::sync::atomic::Ordering::Relaxed);
    let spread = (hz[hz.len() - 1] - hz[0]) / median;
    ClockInfo {
        source: "tsc (rdtscp; lfence)".into(),
        tsc_hz: median,
        tsc_hz_spread: spread,
        cpuid_tsc_hz: arch::cpuid_tsc_hz(),
        overhead_cycles: read_overhead(&Tsc, 10_000),
    }
}
