//! The headlines of a run's summary (`report::summary`): the one figure
//! that stands for a family, picked from one environment's measured
//! results. Each family that has one says how it picks it
//! ([`Headlines`], in its `table.rs`); the registry lists them in the
//! summary's order.

use crate::data::results::{CaseResult, CaseStatus, Metric, RunDoc};

/// One headline: what it is, the case that stands for it, its metric, and
/// whether its point is the worst case (noise, control deviations: the
/// summary then shows the maximum, not the median).
pub struct Headline<'a> {
    pub what: String,
    pub result: &'a CaseResult,
    pub metric: &'a Metric,
    pub worst: bool,
}

/// The measured results of one environment of a run, to pick headlines from.
#[derive(Clone, Copy)]
pub struct Pick<'a> {
    pub doc: &'a RunDoc,
    pub env: &'a str,
}

impl<'a> Pick<'a> {
    /// Every measured result of the environment.
    pub fn measured(self) -> impl Iterator<Item = &'a CaseResult> + 'a {
        let Pick { doc, env } = self;
        doc.results.iter().filter(move |r| r.status == CaseStatus::Ok && r.env(doc) == env)
    }

    /// The measured results of `family`.
    pub fn of(self, family: &'static str) -> impl Iterator<Item = &'a CaseResult> + 'a {
        self.measured().filter(move |r| r.family == family)
    }

    /// The case of benchmark `bench` with the smallest median of `metric`.
    pub fn one(self, bench: String, metric: &str) -> Option<(&'a CaseResult, &'a Metric)> {
        extreme(self.measured().filter(|r| r.benchmark == bench), metric, false)
    }
}

/// The result among `it` whose metric `name` has the smallest (or largest) median.
pub fn extreme<'a>(it: impl Iterator<Item = &'a CaseResult>, name: &str, largest: bool) -> Option<(&'a CaseResult, &'a Metric)> {
    let with: Vec<(&CaseResult, &Metric)> = it.filter_map(|r| r.metric(name).map(|m| (r, m))).collect();
    let pick = |a: &&(&CaseResult, &Metric), b: &&(&CaseResult, &Metric)| a.1.summary.median.total_cmp(&b.1.summary.median);
    if largest { with.iter().max_by(pick).copied() } else { with.iter().min_by(pick).copied() }
}

/// A headline of `what` where `found` has one.
pub fn headline<'a>(what: impl Into<String>, found: Option<(&'a CaseResult, &'a Metric)>) -> Option<Headline<'a>> {
    found.map(|(result, metric)| Headline { what: what.into(), result, metric, worst: false })
}

/// The same, its point the worst case (the maximum is shown).
pub fn worst<'a>(what: impl Into<String>, found: Option<(&'a CaseResult, &'a Metric)>) -> Option<Headline<'a>> {
    headline(what, found).map(|h| Headline { worst: true, ..h })
}

/// How a family picks its headlines.
pub trait Headlines: Sync {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>>;
}
