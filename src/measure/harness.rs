//! The measurement loop: warm up, double the inner count until one batch lasts
//! the target time, then time K batches. Each batch yields one sample, the
//! cost of one operation: (batch cycles - clock overhead) / inner count.

use crate::measure::clock::Clock;
use crate::measure::counters;
use crate::measure::marks;
use crate::measure::watchdog::{self, Stop};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HarnessConfig {
    /// A batch should last at least this many cycles.
    pub target_batch_cycles: u64,
    /// How many timed batches make the samples.
    pub batches: usize,
    /// Skip calibration and run exactly this many operations per batch.
    pub fixed_inner: Option<u64>,
    /// Upper bound of the doubling.
    pub max_inner: u64,
}

impl HarnessConfig {
    /// Batches of at least 50 steps of a clock that moves in steps of
    /// `step` cycles (see `clock::steps`), so that a step lands in each and
    /// weighs 2% at most; never longer than `cap` cycles.
    pub fn spanning_steps(self, step: Option<u64>, cap: u64) -> Self {
        match step {
            Some(s) => HarnessConfig { target_batch_cycles: self.target_batch_cycles.max(s.saturating_mul(50).min(cap)), ..self },
            None => self,
        }
    }

    /// Batches of at least `seconds` of a TSC at `tsc_hz`.
    pub fn at_least_s(self, seconds: f64, tsc_hz: f64) -> Self {
        HarnessConfig { target_batch_cycles: self.target_batch_cycles.max((seconds * tsc_hz) as u64), ..self }
    }

    /// The smallest configuration that still exercises every step; for tests.
    pub fn tiny() -> Self {
        HarnessConfig { target_batch_cycles: 20_000, batches: 3, fixed_inner: None, max_inner: 1 << 10 }
    }
}

/// What the harness hands back: samples in cycles per operation, and how it
/// got them.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub per_op_cycles: Vec<f64>,
    pub inner: u64,
    /// (inner count, cycles) of each calibration step, in order.
    pub calibration: Vec<(u64, u64)>,
    pub overhead_cycles: u64,
}

/// Runs `f(n)` (which performs n operations) as the configuration says.
/// `overhead` is the cost of the two clock reads around a batch.
///
/// The calling thread's deadline (`watchdog::Deadline`, armed by the runner
/// for every case) is honoured between batches, and before a batch that the
/// cost measured so far says would end after it: `--iterations 10^12` stops
/// at once instead of running for a day.
pub fn measure<C: Clock, E: From<Stop>>(
    clock: &C,
    overhead: u64,
    cfg: &HarnessConfig,
    mut f: impl FnMut(u64) -> Result<(), E>,
) -> Result<Measurement, E> {
    measure_prepared(clock, overhead, cfg, Ok, |n: &mut u64| f(*n))
}

/// Like `measure`, for operations that need untimed set-up: before each
/// batch `prepare(n)` builds the state for n operations (a fresh mapping of
/// n pages, say), then only `run` is timed, and the state is dropped untimed.
pub fn measure_prepared<C: Clock, S, E: From<Stop>>(
    clock: &C,
    overhead: u64,
    cfg: &HarnessConfig,
    mut prepare: impl FnMut(u64) -> Result<S, E>,
    mut run: impl FnMut(&mut S) -> Result<(), E>,
) -> Result<Measurement, E> {
    // Cycles per operation seen so far (for the prediction), and the TSC
    // rate to turn a prediction into time (learnt from the clock itself).
    let mut per_op: Option<f64> = None;
    // A timed batch: its count and, when marked for a counting plugin
    // (`marks`, only the timed batches), its window.
    let mut timed = |n: u64, mark: bool| -> Result<(u64, Option<u64>), E> {
        watchdog::check()?;
        if let (Some(left), Some(c)) = (watchdog::remaining(), per_op) {
            let predicted_s = c * n as f64 / crate::measure::clock::tsc_hz_hint();
            if predicted_s > left.as_secs_f64() {
                return Err(Stop::TimedOut.into());
            }
        }
        let mut state = prepare(n)?;
        let marked = mark && marks::begin();
        let t0 = clock.now();
        run(&mut state)?;
        let t1 = clock.now();
        let window = marks::end(marked);
        drop(state);
        let c = t1.saturating_sub(t0);
        per_op = Some(c as f64 / n.max(1) as f64);
        Ok((c, window))
    };
    let mut calibration = Vec::new();
    // Warm-up: one operation alone, then the doubling itself (or one
    // discarded batch when the inner count is fixed).
    let (first, _) = timed(1, false)?;
    let inner = match cfg.fixed_inner {
        Some(n) => {
            let (c, _) = timed(n, false)?;
            calibration.push((n, c));
            n
        }
        None => {
            // From the count an earlier round settled on, where one is
            // known and plausible, else from one operation.
            let mut n = known_start(first, cfg).unwrap_or(1);
            loop {
                let (c, _) = timed(n, false)?;
                calibration.push((n, c));
                if c >= cfg.target_batch_cycles || n >= cfg.max_inner {
                    break n;
                }
                n = n.saturating_mul(2).min(cfg.max_inner);
            }
        }
    };
    settled(inner);
    let mut per_op_cycles = Vec::with_capacity(cfg.batches);
    let (mut counts, mut windows) = (Vec::with_capacity(cfg.batches), Vec::with_capacity(cfg.batches));
    for _ in 0..cfg.batches {
        let (c, window) = timed(inner, true)?;
        per_op_cycles.push(c.saturating_sub(overhead) as f64 / inner as f64);
        counts.push(c);
        windows.push(window);
    }
    marks::record(&windows, inner, overhead, counts);
    match counters::armed_batches() {
        // The timed pass: only note that this case times batches here; the
        // runner counts it after the round's timed cases.
        Some(0) => counters::record(counters::Counted::Deferred),
        Some(k) => {
            let cost = per_op.unwrap_or(0.0) * inner as f64 / crate::measure::clock::tsc_hz_hint();
            counters::record(count_batches(k, inner, cost, &mut prepare, &mut run)?);
        }
        None => {}
    }
    Ok(Measurement { per_op_cycles, inner, calibration, overhead_cycles: overhead })
}

/// Inner counts carried from one measurement of a case to the next of the
/// same case (from round 1 to the later rounds, from the timed pass to the
/// counting pass), per thread, in the order the case's harness
/// measurements run.
struct Carried {
    /// Counts to start the doubling at, in order (one per measurement).
    known: std::collections::VecDeque<u64>,
    /// The counts this case's measurements settled on, in order.
    settled: Vec<u64>,
}

thread_local! {
    static CARRIED: std::cell::RefCell<Option<Carried>> = const { std::cell::RefCell::new(None) };
}

/// While alive, the harness on this thread starts each measurement's
/// doubling at the next of `known` (the count an earlier run of the same
/// case settled on) instead of at 1, and notes the count it settles on.
/// Made by the runner around a case. The doubling then costs one batch
/// instead of about two: the batches before the last ones double from 1
/// add up to as much as the last. A known count is only a starting
/// point: the batch must still last the target, or the doubling goes on;
/// one that the warm-up operation says would last more than 16 targets
/// (a case whose measurements changed order or nature) is not used.
///
/// That one batch is a whole batch of the known count because it is also
/// the warm-up: timing an eighth of it first and going straight on to the
/// timed batches where the eighth predicted the target (tried 2026-11-27:
/// later rounds 15% cheaper) left the first timed batch cold: THP page
/// faults 22,000 cycles instead of 460 in it, the lat_ctx rings 1-1.5%
/// cheaper in it.
pub struct Inners(());

impl Inners {
    pub fn arm(known: &[u64]) -> Inners {
        let carried = Carried { known: known.iter().copied().collect(), settled: vec![] };
        CARRIED.with(|c| *c.borrow_mut() = Some(carried));
        Inners(())
    }

    /// The inner counts the case's measurements settled on, in order.
    pub fn finish(self) -> Vec<u64> {
        CARRIED.with(|c| c.borrow_mut().take()).map(|c| c.settled).unwrap_or_default()
    }
}

impl Drop for Inners {
    fn drop(&mut self) {
        CARRIED.with(|c| c.borrow_mut().take());
    }
}

/// Longest a known count may predict a batch to last, in targets.
const KNOWN_AT_MOST_TARGETS: u64 = 16;

/// Where the doubling starts when a count is known for this measurement:
/// that count, if it is within `max_inner` and the warm-up operation
/// (`first_cycles`, an upper bound of a warm one) does not predict a batch
/// longer than [`KNOWN_AT_MOST_TARGETS`] targets.
fn known_start(first_cycles: u64, cfg: &HarnessConfig) -> Option<u64> {
    let n = CARRIED.with(|c| c.borrow_mut().as_mut().and_then(|c| c.known.pop_front()))?;
    let predicted = first_cycles.saturating_mul(n);
    (n >= 1 && n <= cfg.max_inner && predicted <= cfg.target_batch_cycles.saturating_mul(KNOWN_AT_MOST_TARGETS)).then_some(n)
}

fn settled(inner: u64) {
    CARRIED.with(|c| c.borrow_mut().as_mut().map(|c| c.settled.push(inner)));
}

/// The counting batches after the timed ones: `k` more batches of `inner`
/// operations (set up by `prepare` as the timed ones), with the case's
/// counters enabled around `run` only. Batches that the deadline would not
/// leave time for (each takes about `batch_s`) are not run; counters that
/// cannot be opened give the reason, never an error.
fn count_batches<S, E: From<Stop>>(
    k: usize,
    inner: u64,
    batch_s: f64,
    prepare: &mut impl FnMut(u64) -> Result<S, E>,
    run: &mut impl FnMut(&mut S) -> Result<(), E>,
) -> Result<counters::Counted, E> {
    let set = match counters::open_for_case() {
        Ok(set) => set,
        Err(e) => return Ok(counters::Counted::NotCounted(format!("not counted: {e}"))),
    };
    let mut batches = Vec::with_capacity(k);
    for _ in 0..k {
        watchdog::check()?;
        if watchdog::remaining().is_some_and(|left| 2.0 * batch_s > left.as_secs_f64()) {
            break;
        }
        let mut state = prepare(inner)?;
        let before = set.read();
        set.enable();
        run(&mut state)?;
        set.disable();
        let after = set.read();
        drop(state);
        let per_op = |(b, a): (&Option<f64>, &Option<f64>)| Some((a.as_ref()? - b.as_ref()?) / inner as f64);
        batches.push(set.events.iter().copied().zip(before.iter().zip(&after).map(per_op)).collect());
    }
    if batches.is_empty() {
        return Ok(counters::Counted::NotCounted("not counted: the case's deadline left no time for a counting batch".into()));
    }
    Ok(counters::Counted::Batches { batches, unavailable: set.unavailable.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A clock that advances by `read_cost` on every read, and by whatever the
    /// workload adds.
    struct FakeClock {
        t: Cell<u64>,
        read_cost: u64,
    }
    impl Clock for FakeClock {
        fn now(&self) -> u64 {
            let v = self.t.get();
            self.t.set(v + self.read_cost);
            v
        }
    }

    #[test]
    fn doubles_to_target_and_subtracts_overhead() {
        let clock = FakeClock { t: Cell::new(0), read_cost: 30 };
        let overhead = crate::measure::clock::read_overhead(&clock, 10);
        assert_eq!(overhead, 30);
        let cfg = HarnessConfig { target_batch_cycles: 100_000, batches: 7, fixed_inner: None, max_inner: 1 << 30 };
        let mut ops = 0u64;
        let m = measure(&clock, overhead, &cfg, |n| {
            ops += n;
            clock.t.set(clock.t.get() + n * 250);
            Ok::<(), Stop>(())
        })
        .unwrap();
        // 250 cycles an op: 2^9 = 512 ops is the first power of two whose
        // batch (128,000 + 30 cycles) reaches 100,000.
        assert_eq!(m.inner, 512);
        let steps: Vec<u64> = m.calibration.iter().map(|s| s.0).collect();
        assert_eq!(steps, (0..=9).map(|k| 1u64 << k).collect::<Vec<_>>());
        assert!(m.calibration.iter().all(|&(n, c)| c == n * 250 + 30));
        assert_eq!(m.per_op_cycles, vec![250.0; 7]);
        assert_eq!(ops, 1 + (1 << 10) - 1 + 7 * 512);
    }

    /// 250 cycles an operation against a target of 100,000 (512 settles).
    fn at_250(clock: &FakeClock, ops: &mut u64) -> Measurement {
        let cfg = HarnessConfig { target_batch_cycles: 100_000, batches: 2, fixed_inner: None, max_inner: 1 << 30 };
        measure(clock, 0, &cfg, |n| {
            *ops += n;
            clock.t.set(clock.t.get() + n * 250);
            Ok::<(), Stop>(())
        })
        .unwrap()
    }

    #[test]
    fn a_known_inner_count_starts_the_doubling_and_the_settled_ones_are_noted() {
        let clock = FakeClock { t: Cell::new(0), read_cost: 0 };
        let mut ops = 0;
        // Known right, known too small (doubles on), known implausibly
        // large (4096 x 250 > 16 targets would not be, 2^20 is: from 1).
        let carried = Inners::arm(&[512, 128, 1 << 20]);
        let steps = |m: &Measurement| m.calibration.iter().map(|s| s.0).collect::<Vec<_>>();
        let right = at_250(&clock, &mut ops);
        assert_eq!((right.inner, steps(&right)), (512, vec![512]));
        assert_eq!(ops, 1 + 512 + 2 * 512, "warm-up operation, one calibration batch, the timed ones");
        let small = at_250(&clock, &mut ops);
        assert_eq!((small.inner, steps(&small)), (512, vec![128, 256, 512]));
        let wild = at_250(&clock, &mut ops);
        assert_eq!((wild.inner, steps(&wild).len()), (512, 10), "doubled from 1");
        let none_left = at_250(&clock, &mut ops);
        assert_eq!(steps(&none_left).len(), 10);
        assert_eq!(carried.finish(), vec![512; 4]);
        // Disarmed: nothing carried, nothing noted.
        assert_eq!(steps(&at_250(&clock, &mut ops)).len(), 10);
    }

    #[test]
    fn fixed_inner_skips_doubling() {
        let clock = FakeClock { t: Cell::new(0), read_cost: 0 };
        let cfg = HarnessConfig { target_batch_cycles: 1 << 40, batches: 3, fixed_inner: Some(10), max_inner: 1 << 30 };
        let m = measure(&clock, 0, &cfg, |n| {
            clock.t.set(clock.t.get() + n * 3);
            Ok::<(), Stop>(())
        })
        .unwrap();
        assert_eq!(m.inner, 10);
        assert_eq!(m.calibration, vec![(10, 30)]);
        assert_eq!(m.per_op_cycles, vec![3.0; 3]);
    }

    #[test]
    fn doubling_stops_at_max_inner() {
        let clock = FakeClock { t: Cell::new(0), read_cost: 0 };
        let cfg = HarnessConfig { target_batch_cycles: u64::MAX, batches: 1, fixed_inner: None, max_inner: 100 };
        let m = measure(&clock, 0, &cfg, |n| {
            clock.t.set(clock.t.get() + n);
            Ok::<(), Stop>(())
        })
        .unwrap();
        assert_eq!(m.inner, 100);
        assert_eq!(m.calibration.last().unwrap().0, 100);
    }

    #[derive(Debug, PartialEq)]
    enum PeerDied {
        Yes,
        Stopped(Stop),
    }
    impl From<Stop> for PeerDied {
        fn from(s: Stop) -> Self {
            PeerDied::Stopped(s)
        }
    }

    #[test]
    fn a_batch_that_would_outlast_the_deadline_is_not_started() {
        // Real time: one operation costs 2 ms of the TSC's time, a batch of
        // 10^6 would take half an hour; the deadline is 300 ms away.
        let clock = FakeClock { t: Cell::new(0), read_cost: 0 };
        let per_op = (0.002 * crate::measure::clock::tsc_hz_hint()) as u64;
        let cfg = HarnessConfig { target_batch_cycles: 1, batches: 3, fixed_inner: Some(1_000_000), max_inner: 1 << 40 };
        let _d = watchdog::Deadline::arm(std::time::Duration::from_millis(300)).unwrap();
        let mut ran = 0u64;
        let t = std::time::Instant::now();
        let r = measure(&clock, 0, &cfg, |n| {
            ran += n;
            clock.t.set(clock.t.get() + n * per_op);
            Ok::<(), PeerDied>(())
        });
        assert_eq!(r.unwrap_err(), PeerDied::Stopped(Stop::TimedOut));
        assert_eq!(ran, 1, "only the warm-up operation ran");
        assert!(t.elapsed() < std::time::Duration::from_millis(300));
    }

    #[test]
    fn a_passed_deadline_stops_between_batches() {
        let clock = FakeClock { t: Cell::new(0), read_cost: 0 };
        let cfg = HarnessConfig { target_batch_cycles: 1, batches: 1000, fixed_inner: Some(1), max_inner: 1 << 40 };
        let _d = watchdog::Deadline::arm(std::time::Duration::from_millis(50)).unwrap();
        let r = measure(&clock, 0, &cfg, |_| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            Ok::<(), PeerDied>(())
        });
        assert_eq!(r.unwrap_err(), PeerDied::Stopped(Stop::TimedOut));
    }

    #[test]
    fn workload_error_propagates() {
        let clock = FakeClock { t: Cell::new(0), read_cost: 0 };
        let mut calls = 0;
        let r = measure(&clock, 0, &HarnessConfig::tiny(), |_| {
            calls += 1;
            if calls == 3 { Err(PeerDied::Yes) } else { Ok(()) }
        });
        assert_eq!(r.unwrap_err(), PeerDied::Yes);
    }

    #[test]
    fn prepared_state_is_built_untimed_and_sized_per_batch() {
        let clock = FakeClock { t: Cell::new(0), read_cost: 0 };
        let cfg = HarnessConfig { target_batch_cycles: 1000, batches: 2, fixed_inner: None, max_inner: 1 << 20 };
        let mut sizes = Vec::new();
        let m = measure_prepared(
            &clock,
            0,
            &cfg,
            |n| {
                // Expensive set-up that must not be counted.
                clock.t.set(clock.t.get() + 1_000_000);
                sizes.push(n);
                Ok::<_, Stop>(n)
            },
            |n| {
                clock.t.set(clock.t.get() + *n * 10);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(m.inner, 128);
        assert_eq!(m.per_op_cycles, vec![10.0, 10.0]);
        assert_eq!(sizes, vec![1, 1, 2, 4, 8, 16, 32, 64, 128, 128, 128]);
    }
}
