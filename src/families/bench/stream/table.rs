//! STREAM's table, in the form of the HermitCore PVH/HVM benchmark post (best rate of each
//! function, a column per environment), and its plot of rate by kernel.

use crate::base::named::Named;
use crate::base::sources::Source;
use crate::data::results::{CaseResult, CaseStatus, RunDoc};
use crate::families::bench::schema::stream;
use crate::tables::tabular::figures::{Bars, Plots, bars_of, context, env_prefix, panels, point};
use crate::tables::tabular::headline::{Headline, Headlines, Pick, extreme, headline};
use crate::tables::tabular::lines::{Lines, Point};
use crate::tables::tabular::rows::unmeasured_mark;
use crate::tables::tabular::table::TextTable;
use crate::tables::tabular::tables::Table;

/// The HermitCore post's STREAM table, per thread configuration.
pub fn render_stream(doc: &RunDoc) -> String {
    let mut s = String::new();
    let id = stream::id(stream::KERNELS_BENCH);
    for r in doc.results.iter().filter(|r| r.benchmark == id) {
        let threads = r.params_as::<stream::Params>().map_or("?", |p| p.threads.name());
        let pl = r.placement.as_ref().map(|p| p.actors.clone()).unwrap_or_default();
        if r.status != CaseStatus::Ok {
            s += &format!("stream ({threads}): {}\n", r.reason.as_deref().unwrap_or("failed"));
            continue;
        }
        let detail = |k: &str| r.details.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
        let rule = if r.details.get(stream::details::MEETS_4X_LLC).and_then(|v| v.as_bool()) == Some(false) {
            " -- BELOW the 4x LLC rule (quick or --mem-bytes)"
        } else {
            ""
        };
        s += &format!(
            "\nSTREAM ({threads}: {pl}), based on a variant of the STREAM benchmark; arrays of {} MiB{rule}; best of {} repetitions\n",
            detail(stream::details::ARRAY_BYTES) >> 20,
            detail(stream::details::REPETITIONS_COUNTED)
        );
        let mut t = TextTable::new(&["Function", "Best Rate MB/s", "Avg time", "Min time", "Max time"], 1);
        for k in stream::KERNELS {
            if let Some(cells) = stream_cells(r, k) {
                t.row([vec![title(k)], cells].concat());
            }
        }
        s += &t.render();
    }
    s.trim_start().to_string()
}

fn title(kernel: &str) -> String {
    format!("{}{}", kernel[..1].to_uppercase(), &kernel[1..])
}

/// A STREAM kernel's best rate and its average, shortest and longest time.
fn stream_cells(r: &CaseResult, kernel: &str) -> Option<Vec<String>> {
    let (rate, time) = (r.metric(&stream::rate(kernel))?, r.metric(&stream::time(kernel))?);
    Some(vec![
        format!("{:.1}", rate.summary.max),
        format!("{:.6}", time.summary.mean),
        format!("{:.6}", time.summary.min),
        format!("{:.6}", time.summary.max),
    ])
}

/// The HermitCore post's "Results of the STREAM benchmark": per thread configuration
/// and function, one row per environment (name, its results).
pub fn render_stream_envs(envs: &[(&str, &RunDoc)]) -> String {
    let id = stream::id(stream::KERNELS_BENCH);
    let of = |d: &'_ RunDoc| d.results.iter().filter(|r| r.benchmark == id).cloned().collect::<Vec<CaseResult>>();
    let threads: Vec<String> = crate::tables::tabular::distinct(
        envs.iter().flat_map(|(_, d)| of(d)).filter_map(|r| r.params_as::<stream::Params>().map(|p| p.threads.name().to_string())),
    );
    let mut s = String::new();
    for th in &threads {
        let case = |d: &RunDoc| of(d).into_iter().find(|r| r.params_as::<stream::Params>().is_some_and(|p| p.threads.name() == th));
        s += &format!("\nSTREAM ({th}), in the form of {}: best rate of each function per environment\n", Source::HermitCoreXen.short());
        let mut t = TextTable::new(&["Function", "Environment", "Bandwidth MB/s", "Avg time", "Min time", "Max time"], 2);
        for k in stream::KERNELS {
            for (name, d) in envs {
                let cells = match case(d) {
                    Some(r) if r.status == CaseStatus::Ok => stream_cells(&r, k).unwrap_or_else(|| vec!["-".into()]),
                    Some(r) => vec![unmeasured_mark(r.status).into()],
                    None => vec!["-".into()],
                };
                t.row([vec![title(k), name.to_string()], cells].concat());
            }
        }
        s += &t.render();
    }
    s.trim_start().to_string()
}

/// STREAM, as the HermitCore post lays it out; a column per environment.
pub struct StreamTable;

impl Table for StreamTable {
    fn families(&self) -> &'static [&'static str] {
        &[stream::FAMILY]
    }
    fn render(&self, doc: &RunDoc) -> String {
        render_stream(doc)
    }
    fn render_across(&self, envs: &[(&str, &RunDoc)]) -> String {
        render_stream_envs(envs)
    }
}

/// STREAM's rate by kernel.
pub struct StreamPlots;

impl Plots for StreamPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        // STREAM's four kernels are four metrics of one result: one series per result.
        let ok = |r: &&CaseResult| r.family == stream::FAMILY && r.status == CaseStatus::Ok;
        let series: Vec<(String, Vec<Point>)> = doc
            .results
            .iter()
            .filter(ok)
            .map(|r| {
                let pts = stream::KERNELS.iter().enumerate().filter_map(|(i, k)| point(i as f64 + 1.0, r, &stream::rate(k))).collect();
                let threads = r.params_as::<stream::Params>().map_or("", |p| p.threads.name());
                (format!("{}{threads} threads", env_prefix(doc, r)), pts)
            })
            .collect();
        let Some(first) = doc.results.iter().find(ok) else { return Vec::new() };
        vec![Lines {
            title: "STREAM: rate by kernel (1 copy, 2 scale, 3 add, 4 triad)".into(),
            x_desc: "kernel".into(),
            y_desc: "MB/s".into(),
            log_x: false,
            log_y: false,
            caption: context(doc, first),
            series,
            y_range: None,
        }]
    }
    fn across_environments(&self) -> bool {
        true
    }
}

/// The summary's headline: the triad.
pub struct StreamHeadline;

impl Headlines for StreamHeadline {
    fn headlines<'a>(&self, pick: Pick<'a>) -> Vec<Headline<'a>> {
        headline("STREAM triad (median rate)", extreme(pick.of(stream::FAMILY), &stream::rate(stream::TRIAD), true)).into_iter().collect()
    }
}

/// The HermitCore post's STREAM results as a picture: a bar per
/// environment for each kernel (single-threaded), a panel per clock.
pub struct StreamBars;

impl Plots for StreamBars {
    fn bars(&self, doc: &RunDoc) -> Vec<Bars> {
        let single = |d: &RunDoc, k: &str| {
            let r = d.results.iter().find(|r| {
                r.family == stream::FAMILY
                    && r.status == CaseStatus::Ok
                    && r.params_as::<stream::Params>().is_some_and(|p| p.threads == stream::Threads::Single)
            })?;
            r.metric(&stream::rate(k)).cloned()
        };
        let rows: Vec<(String, _)> = stream::KERNELS.iter().map(|k| (k.to_string(), move |d: &RunDoc| single(d, k))).collect();
        panels(doc)
            .into_iter()
            .filter_map(|(clock, envs)| {
                let title = format!("STREAM by environment, single thread ({})", clock.rate_panel());
                let mut b = bars_of(doc, &envs, title, format!("best rate ({}, higher is better)", clock.rate_unit("MB/s")), &rows)?;
                b.log = false;
                Some(b)
            })
            .collect()
    }
    fn across_environments(&self) -> bool {
        true
    }
}
