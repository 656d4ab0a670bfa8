//! Where a run's time goes apart from its cases' timed batches: what each
//! process of a run (the run's own, each round's) spent preparing, counting,
//! cooling down and writing, and what each round measured per family. Read
//! by `show RUN --time`; absent in documents written before it (they load).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one process of a run spent outside its cases' timed batches, in
/// seconds (each a sum over the process).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spent {
    /// Resolving the spec: suites, plan, directories, `--rt` tried, the TSC
    /// calibrated (or the parent's rate taken).
    pub prepare_s: f64,
    /// Of which the TSC calibration (0 where the parent handed its rate).
    pub calibration_s: f64,
    /// Collecting the host's facts for the document.
    pub facts_s: f64,
    /// Saving the document (it is replaced whole after every case), and how often.
    pub writes_s: f64,
    pub writes: u64,
    /// The counting pass, per family: each counted case run again briefly
    /// with the kernel's counters armed.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub counting_s: BTreeMap<String, f64>,
    /// Cases counted.
    pub counted: usize,
    /// The pause after each counting pass (the kernel's perf hooks going off).
    pub cool_down_s: f64,
    /// The run's own process: reading its rounds' documents and merging them in.
    pub merges_s: f64,
}

impl Spent {
    /// The counting pass over every family.
    pub fn counting_total(&self) -> f64 {
        self.counting_s.values().copied().map(secs).sum()
    }
}

/// What one round measured in a family: its cases and the seconds they took
/// (timed batches with their calibration and warm-up: the cases' `elapsed_s`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FamilyTime {
    pub cases: usize,
    pub measuring_s: f64,
}

/// Seconds as read from a document: a negative, NaN or infinite value (a
/// document anyone may have written) counts as none.
pub fn secs(v: f64) -> f64 {
    if v.is_finite() && v > 0.0 { v } else { 0.0 }
}

/// Per family (a result's `family`), its cases and the seconds they took.
pub fn by_family<'a>(results: impl IntoIterator<Item = &'a super::CaseResult>) -> BTreeMap<String, FamilyTime> {
    let mut out: BTreeMap<String, FamilyTime> = BTreeMap::new();
    for r in results {
        let f = out.entry(r.family.clone()).or_default();
        f.cases += 1;
        f.measuring_s += secs(r.elapsed_s);
    }
    out
}
