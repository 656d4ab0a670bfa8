//! The one check of the numbers a document brings in (a file, a stored
//! run, a baseline about to be saved): anything another program or user
//! wrote is read as text, and a number that cannot have been measured would
//! otherwise be shown, compared and gated on as if it had been.
//!
//! Every number is finite (JSON has no infinity: an overflowed statistic
//! would be written as `null` and never read back); a summary is ordered
//! (min <= median <= max) with a non-negative spread; a cost in time and a
//! rate have a positive median, and a rate's samples are positive (a cost's
//! samples may dip below zero: some are differences, a hop less the ring's
//! overhead, and where they do, so may its median: in User-Mode Linux or
//! gVisor a hop is often no dearer than the overhead measured apart); the
//! TSC rate is positive; the rounds are within what `run --rounds` allows.

use super::{Better, CaseResult, Metric, RunDoc, UNIT_CYCLES, UNIT_INSTRUCTIONS};
use crate::analysis::stats::Summary;
use thiserror::Error;

/// The most rounds a document may say it has (`run --rounds` allows no more).
pub const MAX_ROUNDS: usize = 1000;

/// A number no measurement gives, and which field holds it.
#[derive(Debug, Error, PartialEq)]
#[error("{field} is {value}, which no measurement gives: it must be {valid}")]
pub struct BadNumber {
    pub field: String,
    pub value: String,
    pub valid: &'static str,
}

fn bad(field: impl Into<String>, value: impl std::fmt::Display, valid: &'static str) -> BadNumber {
    BadNumber { field: field.into(), value: value.to_string(), valid }
}

fn finite(field: &str, x: f64) -> Result<(), BadNumber> {
    if x.is_finite() { Ok(()) } else { Err(bad(field, x, "a finite number")) }
}

fn positive(field: &str, x: f64) -> Result<(), BadNumber> {
    finite(field, x)?;
    if x > 0.0 { Ok(()) } else { Err(bad(field, x, "greater than 0")) }
}

/// Units that are times (or counts of instructions): a cost in them is positive.
fn is_time(unit: &str) -> bool {
    matches!(unit, UNIT_CYCLES | UNIT_INSTRUCTIONS | "cycles" | "ns" | "us" | "ms" | "s")
}

/// Checks every number of `doc`; the first wrong one is named.
pub fn check(doc: &RunDoc) -> Result<(), BadNumber> {
    let clock = &doc.host.clock;
    positive("host.clock.tsc_hz", clock.tsc_hz)?;
    finite("host.clock.tsc_hz_spread", clock.tsc_hz_spread)?;
    if let Some(hz) = clock.cpuid_tsc_hz {
        positive("host.clock.cpuid_tsc_hz", hz)?;
    }
    let rounds = doc.settings.rounds;
    if !(1..=MAX_ROUNDS).contains(&rounds) {
        return Err(bad("settings.rounds", rounds, "from 1 to 1000, the rounds `run --rounds` allows"));
    }
    finite("settings.case_timeout_s", doc.settings.case_timeout_s)?;
    for (i, r) in doc.results.iter().enumerate() {
        check_result(&format!("results[{i}] ({})", r.benchmark), r)?;
    }
    Ok(())
}

fn check_result(at: &str, r: &CaseResult) -> Result<(), BadNumber> {
    finite(&format!("{at}.elapsed_s"), r.elapsed_s)?;
    for m in &r.metrics {
        check_metric(&format!("{at}.metrics[{}]", m.name), m)?;
    }
    Ok(())
}

fn check_metric(at: &str, m: &Metric) -> Result<(), BadNumber> {
    let rate = m.better == Better::Higher;
    let difference = m.samples.iter().flatten().any(|&x| x < 0.0);
    let must_be_positive = rate || (is_time(&m.unit) && !difference);
    check_summary(&format!("{at}.summary"), &m.summary, must_be_positive)?;
    if let Some(ns) = &m.ns {
        check_summary(&format!("{at}.ns"), ns, must_be_positive)?;
    }
    for (round, samples) in m.samples.iter().enumerate() {
        for (k, &x) in samples.iter().enumerate() {
            let field = format!("{at}.samples[{round}][{k}]");
            if rate { positive(&field, x)? } else { finite(&field, x)? }
        }
    }
    if let Some(e) = &m.estimate {
        let f = |name: &str| format!("{at}.estimate.{name}");
        finite(&f("median"), e.median)?;
        finite(&f("interval.lo"), e.interval.lo)?;
        finite(&f("interval.hi"), e.interval.hi)?;
        finite(&f("between_round_cv"), e.between_round_cv)?;
        if e.interval.lo > e.interval.hi {
            return Err(bad(f("interval.lo"), e.interval.lo, "at most interval.hi"));
        }
        if e.rounds > MAX_ROUNDS {
            return Err(bad(f("rounds"), e.rounds, "at most 1000, the rounds `run --rounds` allows"));
        }
    }
    Ok(())
}

/// Checks one result row of a store as [`check`] checks a document's
/// metric: `report --history` reads rows, not documents, and a crafted
/// store's row is no more a measurement than a crafted document's.
pub fn check_row(
    at: &str,
    median: Option<f64>,
    interval: Option<(f64, f64)>,
    samples: &[Vec<f64>],
    better: Better,
    unit: &str,
) -> Result<(), BadNumber> {
    let rate = better == Better::Higher;
    let median = median.ok_or_else(|| bad(format!("{at}.median"), "null", "a finite number"))?;
    let difference = samples.iter().flatten().any(|&x| x < 0.0);
    if rate || (is_time(unit) && !difference) {
        positive(&format!("{at}.median"), median)?
    } else {
        finite(&format!("{at}.median"), median)?
    }
    if let Some((lo, hi)) = interval {
        finite(&format!("{at}.lo"), lo)?;
        finite(&format!("{at}.hi"), hi)?;
        if lo > hi {
            return Err(bad(format!("{at}.lo"), lo, "at most hi"));
        }
    }
    for (round, xs) in samples.iter().enumerate() {
        for (k, &x) in xs.iter().enumerate() {
            let field = format!("{at}.samples[{round}][{k}]");
            if rate { positive(&field, x)? } else { finite(&field, x)? }
        }
    }
    Ok(())
}

fn check_summary(at: &str, s: &Summary, must_be_positive: bool) -> Result<(), BadNumber> {
    let f = |name: &str| format!("{at}.{name}");
    for (name, x) in s.named() {
        finite(&f(name), x)?;
    }
    if must_be_positive {
        positive(&f("median"), s.median)?;
    }
    if s.stddev < 0.0 {
        return Err(bad(f("stddev"), s.stddev, "0 or more"));
    }
    if s.n > 0 && !(s.min <= s.median && s.median <= s.max) {
        return Err(bad(f("median"), s.median, "between min and max"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::data::results::fixture;

    /// The first result with a metric, and its index.
    fn first_metric(doc: &mut RunDoc) -> &mut Metric {
        doc.results.iter_mut().find(|r| !r.metrics.is_empty()).unwrap().metrics.first_mut().unwrap()
    }

    #[test]
    fn a_measured_document_passes_and_absurd_numbers_are_named() {
        assert_eq!(check(&fixture()), Ok(()));
        let field = |change: &dyn Fn(&mut RunDoc)| {
            let mut d = fixture();
            change(&mut d);
            check(&d).unwrap_err().field
        };
        assert_eq!(field(&|d| d.host.clock.tsc_hz = 0.0), "host.clock.tsc_hz");
        assert_eq!(field(&|d| d.host.clock.tsc_hz = -1.0), "host.clock.tsc_hz");
        assert_eq!(field(&|d| d.settings.rounds = 4_294_967_295), "settings.rounds");
        assert!(field(&|d| first_metric(d).summary.mean = f64::INFINITY).ends_with(".summary.mean"));
        assert!(field(&|d| first_metric(d).summary.median = f64::NAN).ends_with(".summary.median"));
        assert!(
            field(&|d| {
                let m = first_metric(d);
                m.summary.min = -5.0;
                m.summary.median = -1.0;
            })
            .ends_with(".summary.median")
        );
        assert!(field(&|d| first_metric(d).summary.max = 0.0).ends_with(".summary.median"), "median above max");
    }

    #[test]
    fn a_rate_needs_positive_samples_a_cost_may_dip_below_zero() {
        let s = Summary::of(&[1.0, 2.0, 3.0]).unwrap();
        let mut rate = Metric::rate("bw", "MB/s", s).with_samples(&[1.0, 0.0, 3.0]);
        assert_eq!(check_metric("m", &rate).unwrap_err().field, "m.samples[0][1]");
        rate.samples = vec![vec![1.0, 2.0, 3.0]];
        assert_eq!(check_metric("m", &rate), Ok(()));
        let cost = Metric::cost("switch", "ns", s).with_samples(&[-1.0, 2.0, 3.0]);
        assert_eq!(check_metric("m", &cost), Ok(()));
        // A difference whose median is below zero (lat_ctx in User-Mode Linux) is a measurement too.
        let below = Metric::cost("switch", "ns", Summary::of(&[-3.0, -2.0, 1.0]).unwrap()).with_samples(&[-3.0, -2.0, 1.0]);
        assert_eq!(check_metric("m", &below), Ok(()));
        let zero = Metric::cost("t", "s", Summary::of(&[0.0, 0.0]).unwrap());
        assert_eq!(check_metric("m", &zero).unwrap_err().field, "m.summary.median");
    }
}
