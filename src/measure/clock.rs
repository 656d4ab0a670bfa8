//! The clock every measurement reads: the TSC (on aarch64 the generic
//! timer's counter, [`arch`]'s `rdtscp` either way), calibrated against
//! CLOCK_MONOTONIC_RAW, with the cost of reading it measured so that the
//! harness can subtract it.

use crate::measure::arch;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A source of timestamps in cycles. The harness is generic over it so that
/// tests can drive the calibration loop with a fake clock.
pub trait Clock {
    fn now(&self) -> u64;
}

/// The time-stamp counter, read with `rdtscp; lfence` (on aarch64:
/// CNTVCT_EL0 between `isb`s).
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
    /// When the TSC moves in steps (see [`steps`]): the median step in
    /// cycles; batches then last many steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_cycles: Option<u64>,
    /// The TSC counts guest instructions (QEMU's instruction counter,
    /// `-icount shift=0`): one tick per instruction retired, user and kernel
    /// together; `tsc_hz` is then the emulator's virtual clock (10^9 ticks
    /// a virtual second), no rate of a CPU, and cycles measured with it are
    /// guest instructions ([`crate::data::results::Metric::cycles`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counts_instructions: bool,
}

/// The counter a clock read: x86-64's TSC, or aarch64's generic timer
/// (its virtual counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    Tsc,
    Cntvct,
}

impl Counter {
    /// Its name in a report.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Tsc => "TSC",
            Counter::Cntvct => "CNTVCT_EL0",
        }
    }

    /// What states its rate besides the calibration (`cpuid_tsc_hz`).
    pub fn stated_by(self) -> &'static str {
        match self {
            Counter::Tsc => "cpuid",
            Counter::Cntvct => "CNTFRQ_EL0",
        }
    }
}

impl ClockInfo {
    /// The counter it read, as its `source` names it (`cntvct_el0 ...` on
    /// aarch64; `tsc ...` on x86-64, as every document before aarch64 ran).
    pub fn counter(&self) -> Counter {
        if self.source.starts_with("cntvct_el0") { Counter::Cntvct } else { Counter::Tsc }
    }

    /// The same clock, said to count guest instructions where `counts`.
    pub fn counting(mut self, counts: bool) -> ClockInfo {
        self.counts_instructions = counts;
        if counts {
            self.source = format!("{}; under QEMU's instruction counter: one tick per guest instruction", self.source);
        }
        self
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

/// Whether `clock` moves in steps, and by how much. A hypervisor that
/// emulates the TSC (Xen in a PVH dom0 whose CPU has no invariant TSC, as
/// under QEMU's TCG) can hand out its last value plus one until it next
/// updates its own time: back-to-back reads then differ by a cycle or two,
/// where reading a real TSC takes tens of cycles, and a short batch can
/// measure nothing (a few cycles) or a whole step. Reads up to `reads`
/// times; the TSC steps if most back-to-back differences are under 8
/// cycles, and the step is the median of the differences over 1000 (at
/// least 3 seen, else `reads` as a lower bound of one step's reads).
pub fn steps<C: Clock>(clock: &C, reads: usize) -> Option<u64> {
    let (mut tiny, mut jumps, mut n) = (0usize, Vec::new(), 0usize);
    let mut last = clock.now();
    while n < reads && !(n >= 2000 && (tiny * 2 < n || jumps.len() >= 3)) {
        let now = clock.now();
        match now.saturating_sub(last) {
            d if d < 8 => tiny += 1,
            d if d > 1000 => jumps.push(d),
            _ => {}
        }
        last = now;
        n += 1;
    }
    if tiny * 2 < n {
        return None;
    }
    jumps.sort_unstable();
    Some(jumps.get(jumps.len() / 2).copied().unwrap_or(u64::MAX))
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
        source: format!("{}; rate from the run's parent", arch::counter_source()),
        tsc_hz: hz,
        tsc_hz_spread: 0.0,
        cpuid_tsc_hz: arch::cpuid_tsc_hz(),
        overhead_cycles: read_overhead(&Tsc, 10_000),
        step_cycles: if arch::COUNTER_MAY_STEP { steps(&Tsc, 100_000) } else { None },
        counts_instructions: false,
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
        source: arch::counter_source(),
        tsc_hz: median,
        tsc_hz_spread: spread,
        cpuid_tsc_hz: arch::cpuid_tsc_hz(),
        overhead_cycles: read_overhead(&Tsc, 10_000),
        step_cycles: if arch::COUNTER_MAY_STEP { steps(&Tsc, 100_000) } else { None },
        counts_instructions: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A clock that advances by `by(read number)` each read.
    struct Fake<F: Fn(u64) -> u64> {
        t: Cell<u64>,
        n: Cell<u64>,
        by: F,
    }

    impl<F: Fn(u64) -> u64> Clock for Fake<F> {
        fn now(&self) -> u64 {
            self.n.set(self.n.get() + 1);
            self.t.set(self.t.get() + (self.by)(self.n.get()));
            self.t.get()
        }
    }

    fn fake<F: Fn(u64) -> u64>(by: F) -> Fake<F> {
        Fake { t: Cell::new(0), n: Cell::new(0), by }
    }

    #[test]
    fn a_tsc_emulated_in_steps_is_told_from_a_real_one() {
        // Xen's emulated TSC between updates: last + 1, a jump every 500 reads.
        let stepped = fake(|n| if n % 500 == 0 { 2_000_000 + n } else { 1 });
        assert_eq!(steps(&stepped, 100_000).map(|s| s / 1_000_000), Some(2));
        // A real TSC: tens of cycles a read, now and then a preemption.
        assert_eq!(steps(&fake(|n| if n % 997 == 0 { 50_000 } else { 30 }), 100_000), None);
        // Steps but no update within the reads: one step is at least all of them.
        assert_eq!(steps(&fake(|_| 1), 5_000), Some(u64::MAX));
    }

    #[test]
    fn the_counter_is_named_by_the_source_the_document_records() {
        let here = calibrate_tsc(1, Duration::from_millis(1));
        let native = if cfg!(target_arch = "aarch64") { Counter::Cntvct } else { Counter::Tsc };
        assert_eq!((here.counter(), known_tsc(1e9).counter()), (native, native), "{}", here.source);
        let of = |source: &str| ClockInfo { source: source.into(), ..here.clone() }.counter();
        assert_eq!(of("cntvct_el0 (isb; mrs), 62.5 MHz, its ticks x 16; under QEMU's instruction counter"), Counter::Cntvct);
        assert_eq!((of("tsc (rdtscp; lfence)"), of("rdtsc")), (Counter::Tsc, Counter::Tsc), "older documents: the TSC");
        assert_eq!((Counter::Cntvct.name(), Counter::Cntvct.stated_by()), ("CNTVCT_EL0", "CNTFRQ_EL0"));
    }

    #[test]
    fn batches_span_fifty_steps_within_the_cap() {
        let h = crate::measure::harness::HarnessConfig::tiny();
        assert_eq!(h.spanning_steps(None, 1 << 30).target_batch_cycles, h.target_batch_cycles);
        assert_eq!(h.spanning_steps(Some(1000), 1 << 30).target_batch_cycles, 50_000);
        assert_eq!(h.spanning_steps(Some(u64::MAX), 1 << 30).target_batch_cycles, 1 << 30);
    }
}
