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

fn wanted_and_present<'a>(plan: &'a [(PlannedCase, bool)], filters: &'a [(String, String)]) -> (Wanted<'a>, Present<'a>) {
    let mut wanted = Wanted::new();
    for (k, v) in filters {
        wanted.entry(k.as_str()).or_default().push(v.as_str());
    }
    let mut present = Present::new();
    for (p, _) in plan {
        for (k, v) in &p.params {
            present.entry(k.as_str()).or_default().insert(crate::data::results::param_text(v));
        }
    }
    (wanted, present)
}

/// The plan with, after each benchmark's cases, the points it offers
/// beyond them ([`Benchmark::offered`](crate::run::registry::Benchmark::offered)),
/// each marked: true for a case of the plan, false for an offered one.
fn with_offered(plan: &[PlannedCase]) -> Vec<(PlannedCase, bool)> {
    let mut out: Vec<(PlannedCase, bool)> = Vec::with_capacity(plan.len());
    for (i, p) in plan.iter().enumerate() {
        out.push((p.clone(), true));
        if plan.get(i + 1).is_some_and(|next| next.benchmark.id == p.benchmark.id) {
            continue;
        }
        for params in p.benchmark.offered() {
            let known = |q: &PlannedCase| q.benchmark.id == p.benchmark.id && q.params == params;
            if !plan.iter().any(known) && !out.iter().any(|(q, _)| known(q)) {
                out.push((PlannedCase { params, ..p.clone() }, false));
            }
        }
    }
    out
}

/// A `--where` that cannot be kept, with the parameters and values there are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhereError {
    #[error("--where {key}: no case chosen has that parameter; they have: {have}")]
    NoSuchParameter { key: String, have: String },
    #[error("--where {key}={value}: no case has that value; the values there are: {values}")]
    NoSuchValue { key: String, value: String, values: String },
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
/// case without that parameter is not restricted by it). A point a
/// benchmark offers beyond its cases joins where a filter names its value
/// (`--where file_writes=1m`). With `strict` (the run's own process, which
/// has the whole plan), a parameter no case has, or a value no case has or
/// offers, is refused; a filter that keeps nothing always is. The sentence names the parameters and values
/// there are.
pub fn keep_where(plan: &mut Vec<PlannedCase>, filters: &[(String, String)], strict: bool) -> Result<(), WhereError> {
    let all = with_offered(plan);
    let (wanted, present) = wanted_and_present(&all, filters);
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
    // A value no case has (nor offers) is a mistake where the plan is whole.
    if strict
        && let Some((k, v)) = wanted.iter().flat_map(|(k, vs)| vs.iter().map(move |v| (*k, *v))).find(|(k, v)| !present[k].contains(*v))
    {
        return Err(WhereError::NoSuchValue { key: k.to_string(), value: v.to_string(), values: described(&mut std::iter::once(k)) });
    }
    let value_of = |p: &PlannedCase, k: &str| p.params.get(k).map(crate::data::results::param_text);
    let matches = |p: &PlannedCase| wanted.iter().all(|(k, vs)| value_of(p, k).is_none_or(|v| vs.contains(&v.as_str())));
    // An offered point only where a filter names its value.
    let asked = |p: &PlannedCase| wanted.iter().any(|(k, vs)| value_of(p, k).is_some_and(|v| vs.contains(&v.as_str())));
    let kept: Vec<PlannedCase> = all.iter().filter(|(p, planned)| matches(p) && (*planned || asked(p))).map(|(p, _)| p.clone()).collect();
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
    // A reason may carry what a guest or a child wrote: cut to the one limit of a document's texts.
    CaseResult { status, reason: Some(crate::data::results::check::bounded_text(why)), condition: Some(condition), ..blank(p) }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn filters(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// The file cases read lmbench's file (8 KiB writes) unless `--where`
    /// names another layout, which joins the plan then (and only then); a
    /// layout there is not is refused with the ones there are.
    #[test]
    fn offered_points_join_only_where_a_filter_names_them() {
        let suites = [crate::run::registry::find_suite("lmbench").unwrap()];
        let only: Vec<String> = ["pagefault.file", "pagefault.anon", "bw.file-rd", "ctx.ring"].map(String::from).to_vec();
        let all = plan(&suites, Some(&only));
        let layouts = |p: &[PlannedCase], id: &str| -> Vec<String> {
            p.iter()
                .filter(|c| c.benchmark.id == id)
                .map(|c| c.params.get("file_writes").map_or("-".into(), crate::data::results::param_text))
                .collect()
        };
        assert_eq!(layouts(&all, "pagefault.file"), ["8k"]);
        assert_eq!(layouts(&all, "bw.file-rd"), ["8k"]);
        let mut p = all.clone();
        keep_where(&mut p, &filters(&[("procs", "2")]), true).unwrap();
        assert_eq!(layouts(&p, "pagefault.file"), ["8k"], "a filter on another parameter adds no layout");
        let mut p = all.clone();
        keep_where(&mut p, &filters(&[("file_writes", "1m")]), true).unwrap();
        assert_eq!(layouts(&p, "pagefault.file"), ["1m"]);
        assert_eq!(layouts(&p, "bw.file-rd"), ["1m"]);
        assert_eq!(layouts(&p, "pagefault.anon"), ["-"], "a case without the parameter stays");
        assert_eq!(p.iter().filter(|c| c.benchmark.id == "ctx.ring").count(), all.iter().filter(|c| c.benchmark.id == "ctx.ring").count());
        let mut p = all.clone();
        keep_where(&mut p, &filters(&[("file_writes", "8k"), ("file_writes", "4k")]), true).unwrap();
        assert_eq!(layouts(&p, "bw.file-rd"), ["8k", "4k"]);
        let mut p = all.clone();
        let e = keep_where(&mut p, &filters(&[("file_writes", "8k"), ("file_writes", "2m")]), true).unwrap_err().to_string();
        assert!(e.contains("--where file_writes=2m: no case has that value") && e.contains("file_writes (1m, 4k, 8k)"), "{e}");
    }
}
