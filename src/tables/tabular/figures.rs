//! What the plots of a report are made of, as tables are ([`super::tables`]):
//! a [`Plots`] draws from a run's results and gives lines (y against x, a
//! series each) or histograms; the exporters that draw (HTML) lay out a list
//! of them (`report::Tables`) and know no family. The helpers here build
//! lines from typed results.

use super::lines::{Lines, Point};
use crate::data::results::{CaseResult, CaseStatus, Metric, RunDoc, UNIT_INSTRUCTIONS};
use crate::data::schema_core::CaseParams;
use crate::data::schema_core::environment::Facts;

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
    /// Its bars over `doc`'s results (the published evaluations' tables
    /// across environments), always over every environment of the run.
    fn bars(&self, _doc: &RunDoc) -> Vec<Bars> {
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
    if doc.condition.several() {
        p += &format!("{l}/{i} ");
    }
    p
}

/// Bars of a value per row (a case, a table's row) and series (an
/// environment, or a pair of them), each with its 95% interval where it has
/// one: the published evaluations' tables drawn across environments.
#[derive(Debug, Clone)]
pub struct Bars {
    pub title: String,
    /// The value axis: what it is, with its unit.
    pub value_desc: String,
    /// The rows, top down (a table's labels, as the table says them).
    pub rows: Vec<String>,
    /// Per series its name and a value per row (None: not measured there);
    /// only a point's y, lo and hi are drawn.
    pub series: Vec<(String, Vec<Option<Point>>)>,
    /// A logarithmic value axis, where the values span a decade.
    pub log: bool,
    /// Where the bars grow from, with a line drawn there (1.0 for a
    /// relative performance); None: from the axis.
    pub base: Option<f64>,
    pub caption: String,
}

/// Whose clock a number was read with, which decides the axis it may share:
/// the CPU's TSC, the host's TSC while QEMU's TCG emulated the guest, or
/// QEMU's instruction counter (one tick per guest instruction). Numbers of
/// two clocks are never drawn on one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    Cpu,
    Emulated,
    Instructions,
}

impl Clock {
    /// The clock of environment `e` of `doc`: its facts say how QEMU ran it
    /// (accel), and a metric in guest instructions says the counter ran.
    pub fn of(doc: &RunDoc, e: &str) -> Clock {
        let counted = doc.results.iter().filter(|r| r.env(doc) == e).flat_map(|r| &r.metrics).any(|m| m.unit == UNIT_INSTRUCTIONS);
        let facts = Facts::read(doc.environment.settings.get(e));
        if counted || facts.accel.as_deref() == Some("icount") {
            Clock::Instructions
        } else if facts.emulated(e) {
            Clock::Emulated
        } else {
            Clock::Cpu
        }
    }

    /// A cost's unit, as an axis says it.
    pub fn cost_unit(self) -> &'static str {
        match self {
            Clock::Cpu => "TSC cycles",
            Clock::Emulated => "emulated cycles (host TSC under QEMU's TCG)",
            Clock::Instructions => "guest instructions (QEMU's instruction counter)",
        }
    }

    /// The panel's name in a title.
    pub fn panel(self) -> &'static str {
        match self {
            Clock::Cpu => "CPU cycles",
            Clock::Emulated => "emulated",
            Clock::Instructions => "instruction-counted",
        }
    }

    /// The panel's name in the title of a plot of rates.
    pub fn rate_panel(self) -> &'static str {
        match self {
            Clock::Cpu => "real time",
            Clock::Emulated => "emulated",
            Clock::Instructions => "instruction-counted",
        }
    }

    /// A rate's unit under this clock (`unit`: MB/s...).
    pub fn rate_unit(self, unit: &str) -> String {
        match self {
            Clock::Cpu => unit.to_string(),
            Clock::Emulated => format!("{unit}, emulated (host time under QEMU's TCG)"),
            Clock::Instructions => format!("{unit} by the instruction counter's clock"),
        }
    }
}

/// The environments of `doc`'s results, in the order they first appear.
pub fn environments(doc: &RunDoc) -> Vec<String> {
    super::distinct(doc.results.iter().map(|r| r.env(doc).to_string()))
}

/// `doc` with only environment `e`'s results, named after it.
pub fn of_environment(doc: &RunDoc, e: &str) -> RunDoc {
    let mut d = doc.clone();
    d.results.retain(|r| r.env(doc) == e);
    d.environment.name = e.to_string();
    d
}

/// The environments of `doc` grouped by their clock (a panel each), in
/// the order Cpu, Emulated, Instructions; only when it has two or more
/// environments (a comparison needs them).
pub fn panels(doc: &RunDoc) -> Vec<(Clock, Vec<String>)> {
    let envs = environments(doc);
    if envs.len() < 2 {
        return Vec::new();
    }
    [Clock::Cpu, Clock::Emulated, Clock::Instructions]
        .into_iter()
        .map(|c| (c, envs.iter().filter(|e| Clock::of(doc, e) == c).cloned().collect::<Vec<_>>()))
        .filter(|(_, es)| !es.is_empty())
        .collect()
}

/// A metric's median and 95% interval, as a point at `x`.
pub fn metric_point(x: f64, m: &Metric) -> Point {
    match &m.estimate {
        Some(e) => Point { x, y: e.median, lo: e.interval.lo, hi: e.interval.hi },
        None => Point::bare(x, m.summary.median),
    }
}

/// Grouped bars, a series per environment of one panel: for each of
/// `rows` (its label and how to find its metric in one environment's
/// results) the environments' medians. None where no row has a value.
pub fn bars_of<F: Fn(&RunDoc) -> Option<Metric>>(
    doc: &RunDoc,
    envs: &[String],
    title: String,
    value_desc: String,
    rows: &[(String, F)],
) -> Option<Bars> {
    let per_env: Vec<RunDoc> = envs.iter().map(|e| of_environment(doc, e)).collect();
    let kept: Vec<&(String, F)> = rows.iter().filter(|(_, find)| per_env.iter().any(|d| find(d).is_some())).collect();
    if kept.is_empty() {
        return None;
    }
    // An environment with no value in any row (it failed to start) is no series.
    let series: Vec<(String, Vec<Option<Point>>)> = envs
        .iter()
        .zip(&per_env)
        .map(|(e, d)| (e.clone(), kept.iter().map(|(_, find)| find(d).map(|m| metric_point(0.0, &m))).collect::<Vec<_>>()))
        .filter(|(_, v)| v.iter().any(Option::is_some))
        .collect();
    let envs: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    Some(Bars {
        title,
        value_desc,
        rows: kept.iter().map(|(l, _)| l.clone()).collect(),
        series,
        log: true,
        base: None,
        caption: format!("host {} ({}), environments {}, run {}", doc.host.hostname, doc.host.cpu_model, envs.join(", "), doc.id),
    })
}

/// `s` with its first letter a capital (a source's short name begins a title).
pub fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}
