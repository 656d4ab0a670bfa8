//! What report tables and plots are made of, below the families that make
//! them: the [`tables::Table`] trait, the plain-text table builder
//! ([`table::TextTable`]) and its cell formats, rows of published tables
//! ([`rows`]), plots of lines ([`lines`], [`figures::Plots`]), and the small
//! helpers every table uses. A family's own table is in its folder
//! (`bench/<family>/table.rs`); the report (`report::Tables`) lays out the
//! registry's list of them.

pub mod compact;
pub mod figures;
pub mod headline;
pub mod lines;
pub mod rows;
pub mod table;
pub mod tables;

use crate::data::results::{CaseResult, CaseStatus};
use crate::data::schema_core::{CaseParams, condition};
use crate::measure::counters::Event;
use serde_json::{Map, Value};
use table::{cycles, percent};

/// The coefficient of variation above which a cell counts as noisy.
pub const NOISY_CV: f64 = 0.10;

/// The environments whose column is Linux on ARM (the tables of the L4
/// performance page quote the page's own ARM figures beside them).
pub const ARM_LINUX: [&str; 1] = ["qemu-arm64"];

/// Whether the column of environment `env` is Linux on ARM.
pub fn is_arm_linux(env: &str) -> bool {
    ARM_LINUX.contains(&env)
}

/// One line on how noisy a table's cells were.
pub fn noise_note(results: &[&CaseResult], metric: &str) -> String {
    let mut cvs: Vec<(f64, String)> = results
        .iter()
        .filter(|r| r.status == CaseStatus::Ok)
        .filter_map(|r| {
            // An exact count (QEMU's instruction counter) has no noise to speak of.
            let m = r.metric(metric).filter(|m| !m.is_exact())?;
            let p: Vec<String> = r.params.values().map(|v| v.as_str().map_or_else(|| v.to_string(), String::from)).collect();
            Some((m.summary.cv, format!("{} {}", r.benchmark, p.join(" ")).trim().to_string()))
        })
        .collect();
    if cvs.is_empty() {
        return String::new();
    }
    cvs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = cvs[cvs.len() / 2].0;
    let (max, which) = cvs.last().cloned().unwrap();
    let noisy = cvs.iter().filter(|c| c.0 > NOISY_CV).count();
    format!(
        "  noise: CV across batches median {}, max {} ({which}); {noisy} of {} cells above {:.0}%\n",
        percent(median),
        percent(max),
        cvs.len(),
        NOISY_CV * 100.0
    )
}

/// The results given, each with its parameters as `P` (those whose
/// parameters do not fit it are left out).
pub fn typed<'a, P: CaseParams>(results: impl IntoIterator<Item = &'a CaseResult>) -> Vec<(&'a CaseResult, P)> {
    results.into_iter().filter_map(|r| Some((r, r.params_as::<P>()?))).collect()
}

/// A numeric detail of a result, NaN where it has none.
pub fn num(r: &CaseResult, key: &str) -> f64 {
    r.detail_f64(key).unwrap_or(f64::NAN)
}

/// Distinct values in order of first appearance.
pub fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// A cell: the median of `metric` in cycles and its CV, or n/a / fail and
/// the reason.
pub fn median_cell(r: Option<&CaseResult>, metric: &str) -> (String, String) {
    match r {
        None => ("-".into(), String::new()),
        Some(r) if r.status == CaseStatus::Ok => match r.metric(metric) {
            Some(m) => (cycles(m.summary.median), format!("{:.1}%", m.summary.cv * 100.0)),
            None => ("-".into(), String::new()),
        },
        Some(r) => (rows::unmeasured_mark(r.status).into(), r.reason.clone().unwrap_or_default()),
    }
}

/// A cell: a measured result's value as `f` writes it, or n/a / failed.
pub fn value_cell(r: Option<&CaseResult>, f: impl Fn(&CaseResult) -> String) -> String {
    match r {
        None => "-".into(),
        Some(r) if r.status == CaseStatus::Ok => f(r),
        Some(r) if r.status == CaseStatus::NotApplicable => "n/a".into(),
        Some(_) => "failed".into(),
    }
}

/// Why cases have no number: each result with the parameter that tells it apart (path, mode).
pub fn unmeasured_reasons<'a>(rs: impl IntoIterator<Item = (&'a CaseResult, &'a str)>) -> String {
    let mut out: Vec<String> = Vec::new();
    for (r, what) in rs.into_iter().filter(|(r, _)| r.status != CaseStatus::Ok) {
        let line = format!("  {} {what}: {}", r.benchmark, r.reason.as_deref().unwrap_or(""));
        if !out.contains(&line) {
            out.push(line);
        }
    }
    if out.is_empty() { String::new() } else { format!("n/a and failed:\n{}\n", out.join("\n")) }
}

/// The values in ascending order, each once.
pub fn ascending(it: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = it.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The median of a result's metric, NaN where it has none.
pub fn median_of(r: &CaseResult, metric: &str) -> f64 {
    r.metric(metric).map_or(f64::NAN, |m| m.summary.median)
}

/// What a background load achieved, as a line for people: the rates of a load's facts (`Load::facts_since`, a result's condition facts).
pub fn describe_rates(f: &Map<String, Value>) -> String {
    let g = |k: &str| f.get(k).and_then(Value::as_f64).unwrap_or(f64::NAN);
    match f.get(condition::LOAD).and_then(Value::as_str) {
        Some("build") => format!("build {:.1} units/s", g(condition::BUILD_UNITS_PER_S)),
        Some("io") => format!(
            "disk w {:.0} r {:.0} MB/s, tcp {:.0} MB/s",
            g(condition::DISK_WRITE_MB_PER_S),
            g(condition::DISK_READ_MB_PER_S),
            g(condition::TCP_MB_PER_S)
        ),
        _ => "idle".into(),
    }
}

/// The L4Re performance overview's three counters of one operation, where
/// the hardware counted: (unhalted core cycles, instructions) per operation
/// of the case, times `per` (0.5 for a one-way figure of a round trip).
pub fn core_and_instructions(r: &CaseResult, per: f64) -> Option<(f64, f64)> {
    let c = r.counters.as_ref()?;
    Some((c.median(Event::Cycles)? * per, c.median(Event::Instructions)? * per))
}

/// The unit of a table's cost cells, as its heading and headers name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostUnit {
    /// In the heading: "TSC cycles", "guest instructions", or both.
    pub long: &'static str,
    /// In a column header: "cyc" or "instr".
    pub short: &'static str,
}

/// The unit of the measured cells of `results`: guest instructions where
/// every one was counted (QEMU's instruction counter), TSC cycles where
/// none was, and both named (each column its own, never one axis) where
/// the columns differ.
pub fn cost_unit<'a>(results: impl IntoIterator<Item = &'a CaseResult>) -> CostUnit {
    let units: Vec<bool> = results
        .into_iter()
        .filter(|r| r.status == CaseStatus::Ok)
        .filter_map(|r| r.metrics.first())
        .map(crate::data::results::Metric::is_exact)
        .collect();
    match (units.iter().any(|&e| e), units.iter().all(|&e| e)) {
        (true, true) => CostUnit { long: "guest instructions (QEMU's instruction counter)", short: "instr" },
        (true, false) => CostUnit {
            long: "TSC cycles, or guest instructions where a column ran under QEMU's instruction counter (two units: compare within one)",
            short: "cyc|instr",
        },
        (false, _) => CostUnit { long: "TSC cycles", short: "cyc" },
    }
}

/// Whether any of `results` has hardware counts (then the published evaluations' tables take
/// the L4Re page's form: TSC cycles, core cycles, instructions).
pub fn any_hardware(results: &[&CaseResult]) -> bool {
    results.iter().any(|r| core_and_instructions(r, 1.0).is_some())
}
