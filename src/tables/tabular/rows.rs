//! Rows of the published evaluations' tables (lmbench, hermit-basic): a label and the case it
//! shows, given by benchmark, parameters and metric, looked up in a run.

use crate::data::results::{CaseResult, CaseStatus, Metric, RunDoc};
use crate::data::schema_core::Params;
use crate::data::schema_core::{CaseParams, NoParams};

/// One row: which case, which metric, shown how.
pub struct Row {
    pub label: String,
    pub bench: String,
    pub params: Params,
    pub metric: String,
    pub comment: String,
    /// With one run, a metric of the same case shown in the comment (the
    /// ring overhead lat_ctx subtracts).
    pub aside: Option<&'static str>,
}

impl Row {
    pub fn new(label: impl Into<String>, bench: String, params: impl CaseParams, metric: &str) -> Row {
        Row { label: label.into(), bench, params: params.to_params(), metric: metric.into(), comment: String::new(), aside: None }
    }

    pub fn comment(mut self, comment: impl Into<String>) -> Row {
        self.comment = comment.into();
        self
    }

    /// Rows of one family's parameterless benchmarks, all showing `metric`:
    /// (label, benchmark name, comment) each, `id` making the benchmark id.
    pub fn each(id: fn(&str) -> String, metric: &str, rows: &[(&str, &str, &'static str)]) -> Vec<Row> {
        rows.iter().map(|&(label, name, comment)| Row::new(label, id(name), NoParams {}, metric).comment(comment)).collect()
    }

    /// The first result of the row's case, whatever its status.
    pub fn case<'a>(&self, doc: &'a RunDoc) -> Option<&'a CaseResult> {
        doc.case(&self.bench, |c| c.params == self.params)
    }

    /// The row's measured case and its metric.
    pub fn find<'a>(&self, doc: &'a RunDoc) -> Option<(&'a CaseResult, &'a Metric)> {
        let c = doc.measured(&self.bench, |c| c.params == self.params)?;
        Some((c, c.metric(&self.metric)?))
    }

    /// The row's number, where it resolves one: a difference (a row with
    /// an aside) whose median is not above zero resolves nothing.
    pub fn value<'a>(&self, doc: &'a RunDoc) -> Option<&'a Metric> {
        self.find(doc).map(|(_, m)| m).filter(|m| self.aside.is_none() || m.summary.median > 0.0)
    }

    /// A case of the row that ran but has no number: ("n/a" or "fail", reason).
    pub fn unmeasured<'a>(&self, doc: &'a RunDoc) -> Option<(&'static str, &'a str)> {
        if self.find(doc).is_some() && self.value(doc).is_none() {
            return Some(("n/a", UNRESOLVED));
        }
        if let Some(c) = doc.measured(&self.bench, |c| c.params == self.params).filter(|c| c.metric(&self.metric).is_none()) {
            let counted = c.metrics.iter().any(|m| m.unit == crate::data::results::UNIT_INSTRUCTIONS);
            return Some(("n/a", if counted { NO_RATE_COUNTED } else { NO_METRIC }));
        }
        let c = doc.case(&self.bench, |c| c.params == self.params && c.status != CaseStatus::Ok)?;
        Some((unmeasured_mark(c.status), c.reason.as_deref().unwrap_or("")))
    }
}

/// Why a difference row shows no number: where each hop costs no more
/// than the overhead measured apart (system calls of tens of thousands of
/// cycles, as in User-Mode Linux or gVisor, and their noise), the
/// difference says nothing; lmbench's lat_ctx prints nothing for it either.
pub const UNRESOLVED: &str =
    "the hop is not above the ring's pipe + sum overhead: no switch cost resolved (lmbench's lat_ctx prints none either)";

/// Why a case measured under QEMU's instruction counter has no row of a rate.
pub const NO_RATE_COUNTED: &str = "measured in guest instructions (QEMU's instruction counter), where a second is 10^9 instructions: no rate; its cost per operation is in `oscycles show --full`";

/// Why a measured case has no number of the row's metric otherwise.
pub const NO_METRIC: &str =
    "measured, but without this row's metric (an older oscycles', or another unit): `oscycles show --full` has what it measured";

/// "n/a" for a case that cannot run here, "fail" for one that failed.
pub fn unmeasured_mark(status: CaseStatus) -> &'static str {
    if status == CaseStatus::NotApplicable { "n/a" } else { "fail" }
}
