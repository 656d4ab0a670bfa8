//! What the plots of a report are made of, as tables are ([`super::tables`]):
//! a [`Plots`] draws from a run's results and gives lines (y against x, a
//! series each) or histograms; the exporters that draw (HTML) lay out a list
//! of them (`report::Tables`) and know no family. The helpers here build
//! lines from typed results.

use super::lines::{Lines, Point};
use crate::results::{CaseResult, CaseStatus, RunDoc};
use crate::schema_core::CaseParams;

/// A histogram of one result in log2 buckets.
pub struct Histogram {
    pub title: String,
    /// What its buckets count.
    pub what: &'static str,
    pub buckets: Vec<u64>,
    pub caption: String,
}

/// The plots of a family (or of several that share axes).
pub trait Plots: Sync {
    /// Its plots of lines over `doc`'s results.
    fn lines(&self, _doc: &RunDoc) -> Vec<Lines> {
        Vec::new()
    }
    /// Its histograms, one per result that has one.
    fn histograms(&self, _doc: &RunDoc) -> Vec<Histogram> {
        Vec::new()
    }
    /// Whether its lines put every environment of a run on shared axes
    /// (few series: throughput, scaling, which is what a reader compares)
    /// rather than one set per environment.
    fn across_environments(&self) -> bool {
        false
    }
}

/// The caption's context of a result: host, environment, condition, run.
pub fn context(doc: &RunDoc, r: &CaseResult) -> String {
    let (l, i) = r.load_isolation(doc);
    format!("host {} ({}), environment {}, load {l}, isolation {i}, run {}", doc.host.hostname, doc.host.cpu_model, r.env(doc), doc.id)
}

/// The point (x, a metric's median and 95% interval) of a result.
pub fn point(x: f64, r: &CaseResult, name: &str) -> Option<Point> {
    let m = r.metric(name)?;
    Some(match &m.estimate {
        Some(e) => Point { x, y: e.median, lo: e.interval.lo, hi: e.interval.hi },
        None => Point::bare(x, m.summary.median),
    })
}

/// What a plot of lines shows: its title and axes, which of them logarithmic.
pub struct Plot<'a> {
    pub title: String,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub log: (bool, bool),
}

/// Lines of y(x) over the measured results with parameters `P` that `pick`
/// accepts, one series per `series` name (after the result's environment
/// and condition where the run has several).
pub fn lines_of<P: CaseParams>(
    doc: &RunDoc,
    plot: Plot,
    pick: impl Fn(&CaseResult, &P) -> bool,
    series: impl Fn(&CaseResult, &P) -> String,
    xy: impl Fn(&CaseResult, &P) -> Option<Point>,
) -> Option<Lines> {
    let rs: Vec<(&CaseResult, P)> =
        super::typed(doc.results.iter().filter(|r| r.status == CaseStatus::Ok)).into_iter().filter(|(r, p)| pick(r, p)).collect();
    let mut out: Vec<(String, Vec<Point>)> = Vec::new();
    for (r, p) in &rs {
        let Some(point) = xy(r, p) else { continue };
        let name = format!("{}{}", env_prefix(doc, r), series(r, p));
        match out.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1.push(point),
            None => out.push((name, vec![point])),
        }
    }
    out.retain(|s| s.1.len() >= 2);
    for s in &mut out {
        s.1.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    if out.is_empty() {
        return None;
    }
    Some(Lines {
        title: plot.title,
        x_desc: plot.x_desc.into(),
        y_desc: plot.y_desc.into(),
        log_x: plot.log.0,
        log_y: plot.log.1,
        caption: rs.first().map(|(r, _)| context(doc, r)).unwrap_or_default(),
        series: out,
        y_range: None,
    })
}

/// What a series' name starts with: the environment and the condition of
/// its result, where the run has several.
pub fn env_prefix(doc: &RunDoc, r: &CaseResult) -> String {
    let (l, i) = r.load_isolation(doc);
    let mut p = String::new();
    if doc.environment.name.contains(',') {
        p += &format!("{} ", r.env(doc));
    }
    if doc.condition.load.contains(',') || doc.condition.isolation.contains(',') {
        p += &format!("{l}/{i} ");
    }
    p
}
