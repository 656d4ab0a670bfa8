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

/// The longest text a field may hold (a reason, a hostname, a parameter):
/// a document holding a longer one is refused; a guest's text is cut to it
/// where it enters ([`bounded_text`]).
pub const MAX_TEXT: usize = 4096;

/// `text` within [`MAX_TEXT`] characters: its start, "..." marking a cut.
pub fn bounded_text(text: &str) -> String {
    if text.chars().count() <= MAX_TEXT {
        return text.to_string();
    }
    text.chars().take(MAX_TEXT - 3).chain("...".chars()).collect()
}

/// Fields shown as one line (`show`'s header, tables' labels): no control
/// character, line separator or format character.
const ONE_LINE: &[&str] = &[
    "id",
    "label",
    "host.hostname",
    "host.cpu_model",
    "host.kernel_release",
    "host.kernel_version",
    "environment.name",
    "results[].suite",
    "results[].benchmark",
    "results[].family",
    "results[].environment",
    "results[].params.*",
];

/// Checks every text of `v` (at `at`, `shape` its path with indices left
/// out): within [`MAX_TEXT`], and one line where [`ONE_LINE`] says.
fn check_texts(at: &str, shape: &str, v: &serde_json::Value) -> Result<(), BadNumber> {
    use serde_json::Value;
    match v {
        Value::String(t) => {
            let n = t.chars().count();
            if n > MAX_TEXT {
                return Err(bad(at, format!("a text of {n} characters"), "at most 4096 characters"));
            }
            let params = shape.strip_prefix("results[].params.").is_some_and(|k| !k.contains('.'));
            let one_line = params || ONE_LINE.contains(&shape);
            if one_line && t.chars().any(crate::base::text::bends_line) {
                return Err(bad(
                    at,
                    format!("{:?}", t.chars().take(80).collect::<String>()),
                    "one line of text: no control, line separator or format character",
                ));
            }
            Ok(())
        }
        Value::Array(a) => a.iter().enumerate().try_for_each(|(i, x)| check_texts(&format!("{at}[{i}]"), &format!("{shape}[]"), x)),
        Value::Object(m) => m.iter().try_for_each(|(k, x)| {
            let key: String = k.chars().take(80).collect();
            if k.chars().count() > MAX_TEXT {
                return Err(bad(format!("{at}.{key}..."), format!("a key of {} characters", k.chars().count()), "at most 4096 characters"));
            }
            let join = |p: &str| if p.is_empty() { k.to_string() } else { format!("{p}.{k}") };
            check_texts(&join(at), &join(shape), x)
        }),
        _ => Ok(()),
    }
}

/// Checks every number of `doc`; the first wrong one is named. Its texts
/// too: each within [`MAX_TEXT`], and the fields shown as one line on one.
pub fn check(doc: &RunDoc) -> Result<(), BadNumber> {
    check_texts("", "", &serde_json::to_value(doc).unwrap_or_default())?;
    check_numbers(doc)
}

fn check_numbers(doc: &RunDoc) -> Result<(), BadNumber> {
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

/// More cycles (or instructions) than any one operation of a benchmark
/// costs: over an hour at 3 GHz.
pub const MAX_COST: f64 = 1e13;

/// The per-operation costs a guest's program sent: each finite, positive
/// (a program's timings are not differences) and at most [`MAX_COST`].
pub fn guest_costs(samples: &[f64]) -> Result<(), BadNumber> {
    for (k, &x) in samples.iter().enumerate() {
        positive(&format!("per_op_cycles[{k}]"), x)?;
        if x > MAX_COST {
            return Err(bad(format!("per_op_cycles[{k}]"), x, "at most 1e13 cycles, more than any one operation costs"));
        }
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
    fn texts_are_bounded_and_one_line_fields_hold_one_line() {
        // Issue 58, items 6 and 10.
        let field = |change: &dyn Fn(&mut RunDoc)| {
            let mut d = fixture();
            change(&mut d);
            check(&d).map_err(|e| e.field)
        };
        assert_eq!(field(&|d| d.host.hostname = "h".repeat(65_536)), Err("host.hostname".into()));
        assert_eq!(field(&|d| d.host.hostname = "h".repeat(MAX_TEXT)), Ok(()));
        assert_eq!(field(&|d| d.results[0].reason = Some("r".repeat(MAX_TEXT + 1))), Err("results[0].reason".into()));
        assert_eq!(field(&|d| d.results[0].reason = Some("two\nlines".into())), Ok(()), "a reason may hold lines");
        assert_eq!(field(&|d| d.host.hostname = "h\nkernel: forged".into()), Err("host.hostname".into()));
        assert_eq!(field(&|d| d.host.cpu_model = "cpu\u{2028}forged".into()), Err("host.cpu_model".into()));
        assert_eq!(field(&|d| d.host.kernel_release = "6.1\u{202e}1.6".into()), Err("host.kernel_release".into()));
        assert_eq!(field(&|d| d.environment.name = "native\r\nforged".into()), Err("environment.name".into()));
        assert_eq!(field(&|d| d.results[0].benchmark = "b\u{1b}[2J".into()), Err("results[0].benchmark".into()));
        assert_eq!(bounded_text(&"y".repeat(10_000)).chars().count(), MAX_TEXT);
        assert!(guest_costs(&[1.0, 2.0]).is_ok() && guest_costs(&[-5.5]).is_err() && guest_costs(&[5.4e280]).is_err());
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
