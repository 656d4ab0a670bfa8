//! The plan of a run: its cases (`PlannedCase`: a benchmark, its parameters
//! and the suite that names it), made from suites and `--bench`, cut by
//! `--where`, and the result of a case that was not measured. Below the
//! runner, the rounds, the environments and the progress reports, which
//! all read it.

use crate::data::results::{CaseResult, CaseStatus, Condition};
use crate::data::schema_core::Params;
use crate::run::registry::{Benchmark, Scale, Suite};

/// One case to run, and the suite it belongs to.
#[derive(Debug, Clone)]
pub struct PlannedCase {
    pub suite: &'static str,
    pub scale: Scale,
    /// Its suite's shortest batch in seconds (0: none).
    pub min_batch_s: f64,
    pub benchmark: Benchmark,
    pub params: Params,
}

impl PlannedCase {
    pub fn label(&self) -> String {
        case_label(&self.benchmark.id, &self.params)
    }
}

/// `--where` filters by parameter: the values given for each.
type Wanted<'a> = std::collections::BTreeMap<&'a str, Vec<&'a str>>;
/// The parameters of a plan and the values each takes.
type Present<'a> = std::collections::BTreeMap<&'a str, std::collections::BTreeSet<String>>;

fn wanted_and_present<'a>(plan: &'a [PlannedCase], filters: &'a [(String, String)]) -> (Wanted<'a>, Present<'a>) {
    let mut wanted = Wanted::new();
    for (k, v) in filters {
        wanted.entry(k.as_str()).or_default().push(v.as_str());
    }
    let mut present = Present::new();
    for p in plan {
        for (k, v) in &p.params {
            present.entry(k.as_str()).or_default().insert(crate::data::results::param_text(v));
        }
    }
    (wanted, present)
}

/// A `--where` that cannot be kept, with the parameters and values there are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhereError {
    #[error("--where {key}: no case chosen has that parameter; they have: {have}")]
    NoSuchParameter { key: String, have: String },
    #[error("--where keeps no case; the values there are: {values}")]
    KeepsNone { values: String },
    #[error("--cases names no case of the suites chosen (e.g. '{first}')")]
    NoListedCase { first: String },
}

/// Keeps the cases whose label (`PlannedCase::label`) is in `labels`
/// (`--cases`); labels of cases not in the plan are passed over (a guest's
/// child has only its environment's part), a list that keeps nothing is
/// refused.
pub fn keep_cases(plan: &mut Vec<PlannedCase>, labels: &[String]) -> Result<(), WhereError> {
    let wanted: std::collections::HashSet<&str> = labels.iter().map(String::as_str).collect();
    plan.retain(|p| wanted.contains(p.label().as_str()));
    if plan.is_empty() {
        return Err(WhereError::NoListedCase { first: labels.first().cloned().unwrap_or_default() });
    }
    Ok(())
}

/// Keeps the cases whose parameters match `filters` (`--where`): for each
/// parameter named that a case has, its value is one of those given (a
/// case without that parameter is not restricted by it). With `strict`
/// (the run's own process, which has the whole plan), a parameter no case
/// has is refused; a filter that keeps nothing always is. The sentence
/// names the parameters and values there are.
pub fn keep_where(plan: &mut Vec<PlannedCase>, filters: &[(String, String)], strict: bool) -> Result<(), WhereError> {
    let (wanted, present) = wanted_and_present(plan, filters);
    let described = |keys: &mut dyn Iterator<Item = &str>| {
        let values = |k: &str| {
            let mut v: Vec<&String> = present[k].iter().collect();
            // Numbers in numeric order, before words.
            v.sort_by(|a, b| match (a.parse::<f64>(), b.parse::<f64>()) {
                (Ok(x), Ok(y)) => x.total_cmp(&y),
                (x, y) => x.is_err().cmp(&y.is_err()).then(a.cmp(b)),
            });
            v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        };
        keys.map(|k| format!("{k} ({})", values(k))).collect::<Vec<_>>().join("; ")
    };
    if strict && let Some(k) = wanted.keys().find(|k| !present.contains_key(*k)) {
        let have = if present.is_empty() { "none".to_string() } else { described(&mut present.keys().copied()) };
        return Err(WhereError::NoSuchParameter { key: k.to_string(), have });
    }
    let matches = |p: &PlannedCase| {
        wanted.iter().all(|(k, vs)| p.params.get(*k).is_none_or(|v| vs.contains(&crate::data::results::param_text(v).as_str())))
    };
    let kept: Vec<PlannedCase> = plan.iter().filter(|p| matches(p)).cloned().collect();
    if kept.is_empty() {
        return Err(WhereError::KeepsNone { values: described(&mut wanted.keys().copied().filter(|k| present.contains_key(k))) });
    }
    *plan = kept;
    Ok(())
}

/// Every case of the suites, restricted to `only` benchmark ids if given.
/// A case in two suites (same benchmark, same parameters) runs once, under
/// the first.
pub fn plan(suites: &[&'static Suite], only: Option<&[String]>) -> Vec<PlannedCase> {
    plan_at(suites, only, None)
}

/// [`plan`] with every suite at `scale` (`--scale`) if given, else at its own.
pub fn plan_at(suites: &[&'static Suite], only: Option<&[String]>, scale: Option<Scale>) -> Vec<PlannedCase> {
    let mut out: Vec<PlannedCase> = Vec::new();
    for s in suites {
        let scale = scale.unwrap_or(s.scale);
        for (b, params) in s.cases_at(scale) {
            if only.is_some_and(|o| !o.iter().any(|id| id == &b.id)) || out.iter().any(|p| p.benchmark.id == b.id && p.params == params) {
                continue;
            }
            out.push(PlannedCase { suite: s.name, scale, min_batch_s: s.min_batch_s, benchmark: b, params });
        }
    }
    out
}

/// The result of a planned case before anything is known of it: ok, no
/// metrics, no condition or environment yet.
pub fn blank(p: &PlannedCase) -> CaseResult {
    CaseResult {
        suite: p.suite.into(),
        benchmark: p.benchmark.id.clone(),
        family: p.benchmark.family.name().into(),
        params: p.params.clone(),
        status: CaseStatus::Ok,
        reason: None,
        placement: None,
        metrics: vec![],
        details: Default::default(),
        elapsed_s: 0.0,
        condition: None,
        environment: None,
        counters: None,
        inners: vec![],
        marked: None,
    }
}

/// A case's label: its benchmark id and its parameters (`--cases` takes
/// these, round records list them).
pub fn case_label(id: &str, params: &crate::data::schema_core::Params) -> String {
    format!("{id} {}", crate::data::results::params_label(params)).trim().to_string()
}

pub fn not_measured(p: &PlannedCase, status: CaseStatus, why: &str, condition: Condition) -> CaseResult {
    CaseResult { status, reason: Some(why.into()), condition: Some(condition), ..blank(p) }
}

/// The distinct benchmark ids of a plan, in plan order.
pub fn benchmark_ids(plan: &[PlannedCase]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for p in plan {
        if !ids.contains(&p.benchmark.id) {
            ids.push(p.benchmark.id.clone());
        }
    }
    ids
}
