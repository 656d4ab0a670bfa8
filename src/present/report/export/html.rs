//! A self-contained HTML report over one or more runs: no scripts, no
//! fetches, plots inline as SVG. Each run gets its header and the tables of the published evaluations;
//! plots per family (histograms of noise and jitter, throughput against
//! size, IPC cost against payload, cost against core count), each with axis
//! units and a caption naming host, environment and condition; two runs
//! also get the compare table.

use super::markup::{Html, Markup, escape_html as esc};
use super::{Export, ExportError, Exporter};
use crate::named::Named;
use crate::report::Tables;
use crate::report::plot::{self, Lines, Point};
use crate::report::{compare, forest, summary};
use crate::results::{CaseResult, CaseStatus, RunDoc, params_label};
use crate::schema::{CaseParams, blk, control, ipc, memcpy, net, noise, parallel, stream};
use crate::uncertainty::Policy;

/// Headings of the page.
const HTML: Html = Html { class: "" };

/// A figure: title, SVG, caption.
pub struct Figure {
    pub id: String,
    pub svg: String,
    pub caption: String,
}

fn context(doc: &RunDoc, r: &CaseResult) -> String {
    let (l, i) = r.load_isolation(doc);
    format!("host {} ({}), environment {}, load {l}, isolation {i}, run {}", doc.host.hostname, doc.host.cpu_model, r.env(doc), doc.id)
}

/// The point (x, a metric's median and 95% interval) of a result.
fn point(x: f64, r: &CaseResult, name: &str) -> Option<Point> {
    let m = r.metric(name)?;
    Some(match &m.estimate {
        Some(e) => Point { x, y: e.median, lo: e.interval.lo, hi: e.interval.hi },
        None => Point::bare(x, m.summary.median),
    })
}

/// What a plot of lines shows: its title and axes, which of them logarithmic.
struct Plot<'a> {
    title: String,
    x_desc: &'a str,
    y_desc: &'a str,
    log: (bool, bool),
}

/// Lines of y(x) over the measured results with parameters `P` that `pick`
/// accepts, one series per `series` name (after the result's environment
/// and condition where the run has several).
fn lines_of<P: CaseParams>(
    doc: &RunDoc,
    plot: Plot,
    pick: impl Fn(&CaseResult, &P) -> bool,
    series: impl Fn(&CaseResult, &P) -> String,
    xy: impl Fn(&CaseResult, &P) -> Option<Point>,
) -> Option<Lines> {
    let rs: Vec<(&CaseResult, P)> =
        crate::report::typed(doc.results.iter().filter(|r| r.status == CaseStatus::Ok)).into_iter().filter(|(r, p)| pick(r, p)).collect();
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

fn env_prefix(doc: &RunDoc, r: &CaseResult) -> String {
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

/// Every plot the run's results allow: one set per environment, so that a
/// plot's series stay few enough to tell apart.
pub fn figures(doc: &RunDoc, run_no: usize) -> Vec<Figure> {
    let envs = crate::report::env::environments(doc);
    if envs.len() < 2 {
        return figures_of(doc, &format!("run{run_no}"), "");
    }
    // Throughput and scaling plots have few series: every environment on
    // shared axes, which is what a reader compares. IPC plots (a series per
    // mechanism) and histograms stay one set per environment.
    let shared_kinds = ["Network", "Block", "memcpy", "STREAM", "Cost against"];
    let mut out: Vec<Figure> = figures_of(doc, &format!("run{run_no}-all"), " [every environment]")
        .into_iter()
        .filter(|f| shared_kinds.iter().any(|k| f.caption.starts_with(k)))
        .map(|mut f| {
            // The caption's context names the first result's environment; these span all of them.
            for e in &envs {
                f.caption = f.caption.replacen(&format!("environment {e},"), &format!("environments {},", envs.join(", ")), 1);
            }
            f
        })
        .collect();
    for (k, e) in envs.iter().enumerate() {
        let mut d = doc.clone();
        d.results.retain(|r| r.env(doc) == e);
        d.environment.name = e.clone();
        out.extend(
            figures_of(&d, &format!("run{run_no}-env{k}"), &format!(" [{e}]"))
                .into_iter()
                .filter(|f| !shared_kinds.iter().any(|k| f.caption.starts_with(k))),
        );
    }
    out
}

/// One-way IPC cost against payload, one plot per space and cores, a series per mechanism.
fn ipc_lines(doc: &RunDoc) -> Vec<Lines> {
    let mut lines = Vec::new();
    for cores in ipc::CORES {
        for space in ipc::SPACES {
            let (sn, cn) = (ipc::space_name(space), ipc::cores_name(cores));
            let title = format!("One-way IPC by payload ({sn}-process, {cn} core)");
            lines.extend(lines_of::<ipc::Params>(
                doc,
                Plot { title, x_desc: "payload (64-bit words)", y_desc: "one-way cost (TSC cycles)", log: (false, true) },
                |r, p| r.family == ipc::FAMILY && p.space == space && p.cores == cores,
                |r, _| ipc::name_of(&r.benchmark).into(),
                |r, p| point(p.words as f64, r, ipc::ONE_WAY),
            ));
        }
    }
    lines
}

/// Network throughput against payload size, block throughput against block size.
fn io_lines(doc: &RunDoc) -> Vec<Lines> {
    let streams = [net::id(net::UDP), net::id(net::TCP)];
    let net = lines_of::<net::Params>(
        doc,
        Plot {
            title: "Network throughput by payload size".into(),
            x_desc: "payload (bytes)",
            y_desc: "MiB/s at the receiver",
            log: (true, false),
        },
        |r, _| streams.contains(&r.benchmark),
        |r, p| format!("{} {}", p.path.name(), net::name_of(&r.benchmark)),
        |r, p| Some(Point::bare(p.bytes as f64, r.detail_f64(net::details::MIB_PER_S)?)),
    );
    let blk = lines_of::<blk::Params>(
        doc,
        Plot { title: "Block I/O throughput by block size".into(), x_desc: "block (bytes)", y_desc: "MiB/s", log: (true, true) },
        |r, _| r.family == blk::FAMILY,
        |r, p| format!("{} {}", blk::name_of(&r.benchmark), p.mode.name()),
        |r, p| Some(Point::bare(p.block as f64, r.detail_f64(blk::details::MIB_PER_S)?)),
    );
    net.into_iter().chain(blk).collect()
}

/// memcpy bandwidth against size (aligned), and STREAM's rate by kernel.
fn memory_lines(doc: &RunDoc) -> Vec<Lines> {
    let mut lines: Vec<Lines> = Vec::new();
    lines.extend(lines_of::<memcpy::Params>(
        doc,
        Plot { title: "memcpy bandwidth by size (aligned)".into(), x_desc: "bytes copied", y_desc: "MB/s", log: (true, false) },
        |r, p| r.family == memcpy::FAMILY && p.src_off == 0 && p.dst_off == 0,
        |r, _| memcpy::name_of(&r.benchmark).into(),
        |r, p| point(p.bytes as f64, r, memcpy::BANDWIDTH),
    ));
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
    if let Some(first) = doc.results.iter().find(ok) {
        lines.push(Lines {
            title: "STREAM: rate by kernel (1 copy, 2 scale, 3 add, 4 triad)".into(),
            x_desc: "kernel".into(),
            y_desc: "MB/s".into(),
            log_x: false,
            log_y: false,
            caption: context(doc, first),
            series,
            y_range: None,
        });
    }
    lines
}

/// Cost per operation against the number of CPUs busy at once.
fn parallel_lines(doc: &RunDoc) -> Option<Lines> {
    let title = "Cost against the number of CPUs busy at once".into();
    lines_of::<parallel::Params>(
        doc,
        Plot { title, x_desc: "instances (one pinned per CPU)", y_desc: "cost per operation (TSC cycles)", log: (false, false) },
        |r, _| r.family == parallel::FAMILY,
        |r, _| parallel::name_of(&r.benchmark).into(),
        |r, p| point(p.instances as f64, r, parallel::PER_OP),
    )
}

/// The histograms of noise and jitter, one per measured result.
fn histograms(doc: &RunDoc, tag: &str, first: usize) -> Vec<Figure> {
    let mut figs: Vec<Figure> = Vec::new();
    for r in doc.results.iter().filter(|r| r.status == CaseStatus::Ok) {
        let (key, what) = match r.family.as_str() {
            noise::FAMILY => (noise::details::DELTA_HISTOGRAM_LOG2, "FWQ: delta to the minimum quantum (cycles, log2 buckets)"),
            control::FAMILY => (control::details::PERIOD_DEV_ABS_HISTOGRAM_LOG2, "control loop: |period deviation| (cycles, log2 buckets)"),
            _ => continue,
        };
        let Some(b) = r.details.get(key).and_then(|v| serde_json::from_value::<Vec<u64>>(v.clone()).ok()) else { continue };
        let (l, i) = r.load_isolation(doc);
        let title = format!("{} {} ({}, load {l}, isolation {i})", r.benchmark, params_label(&r.params), r.env(doc));
        if let Ok(svg) = plot::log2_histogram(&title, what, &b) {
            figs.push(Figure { id: format!("{tag}-hist{}", first + figs.len()), svg, caption: context(doc, r) });
        }
    }
    figs
}

/// The plots of one environment's results; `tag` makes ids unique, `suffix` ends titles.
fn figures_of(doc: &RunDoc, tag: &str, suffix: &str) -> Vec<Figure> {
    let mut lines: Vec<Lines> = ipc_lines(doc);
    lines.extend(io_lines(doc));
    lines.extend(memory_lines(doc));
    lines.extend(parallel_lines(doc));
    let mut figs: Vec<Figure> = Vec::new();
    for (i, l) in lines.iter_mut().enumerate() {
        l.title += suffix;
        if let Ok(svg) = plot::lines(l) {
            figs.push(Figure { id: format!("{tag}-plot{i}"), svg, caption: format!("{}: {}", l.title, l.caption) });
        }
    }
    let hist = histograms(doc, tag, figs.len());
    figs.extend(hist);
    figs
}

/// 1. The answer first: each run's one-screen summary.
fn summary_section(docs: &[RunDoc]) -> String {
    let mut s = "<section id=\"summary\"><h2>Summary</h2>\n".to_string();
    for d in docs {
        s += &HTML.heading(3, &format!("{} ({}, {}, {})", d.id, d.host.hostname, d.environment.name, d.started_at));
        let p = summary::parts(d);
        s += &HTML.paragraph(&p.heading);
        if let Some(t) = &p.table {
            s += &Html { class: "cmp" }.table(&super::markup::MarkupTable::from_table(t));
        }
        if !p.note.is_empty() {
            s += &HTML.paragraph(p.note.trim());
        }
    }
    s + "</section>\n"
}

/// 2. Contents.
fn contents(docs: &[RunDoc], compared: bool, figs: &[Vec<Figure>]) -> String {
    let mut s = "<nav id=\"contents\"><h2>Contents</h2><ul>\n<li><a href=\"#summary\">Summary</a></li>\n".to_string();
    if compared {
        s += "<li><a href=\"#compare\">B against A: verdicts and intervals</a></li>\n";
    }
    for (i, d) in docs.iter().enumerate() {
        if !figs[i].is_empty() {
            s += &format!("<li><a href=\"#plots{i}\">Plots of {}</a> ({} plots)</li>\n", esc(&d.id), figs[i].len());
        }
    }
    for (i, d) in docs.iter().enumerate().filter(|(_, d)| has_counts(d)) {
        s += &format!("<li><a href=\"#counters{i}\">Kernel events per operation in {}</a></li>\n", esc(&d.id));
    }
    for (i, d) in docs.iter().enumerate() {
        s += &format!("<li><a href=\"#tables{i}\">Full tables of {}</a></li>\n", esc(&d.id));
    }
    s + "</ul></nav>\n"
}

/// 3. The comparison of two runs: what changed, with its doubt.
fn compare_section(a: &RunDoc, b: &RunDoc, rows: &[crate::compare::Row], policy: &Policy) -> String {
    format!(
        "<section id=\"compare\"><h2>B against A</h2>\n<p>A = {}, B = {}. {}</p>\n<figure class=\"plot\">{}<figcaption>B relative to A, \
         cell by cell: ratio of medians (above 1: B better) with its 95% interval (bootstrap over rounds, then batches), grouped by family; \
         green faster, red slower, blue same (inside +-{:.0}%), grey unsure</figcaption></figure>\n{}\n\
         <details><summary>the comparison as text</summary><pre>{}</pre></details></section>\n",
        esc(&a.id),
        esc(&b.id),
        esc(&compare::tally_lines(rows, policy)).replace('\n', "<br>\n"),
        forest::svg(rows, policy),
        policy.margin * 100.0,
        forest::table(rows),
        esc(&compare::render(a, b, rows, policy))
    )
}

/// Section 4: the kernel's event counts per operation beside each cell, a
/// section per run that has them.
fn counter_sections(docs: &[RunDoc]) -> String {
    let mut s = String::new();
    for (i, d) in docs.iter().enumerate().filter(|(_, d)| has_counts(d)) {
        s += &format!(
            "<section id=\"counters{i}\"><h2>Kernel events per operation in {}</h2>\n<pre>{}</pre></section>\n",
            esc(&d.id),
            esc(&crate::report::counters::render(d))
        );
    }
    s
}

fn has_counts(d: &RunDoc) -> bool {
    d.results.iter().any(|r| r.counters.as_ref().is_some_and(|c| !c.events.is_empty()))
}

/// 5. Plots, a section per run that has any.
fn plot_sections(docs: &[RunDoc], figs: &[Vec<Figure>]) -> String {
    let mut s = String::new();
    for (i, d) in docs.iter().enumerate().filter(|(i, _)| !figs[*i].is_empty()) {
        s += &format!("<section id=\"plots{i}\"><h2>Plots of {}</h2>\n<div class=\"plots\">\n", esc(&d.id));
        for f in &figs[i] {
            s += &format!("<figure id=\"{}\" class=\"plot\">{}<figcaption>{}</figcaption></figure>\n", f.id, f.svg, esc(&f.caption));
        }
        s += "</div></section>\n";
    }
    s
}

/// 6. Everything else, collapsed: each run's header and tables as text.
fn table_sections(docs: &[RunDoc], tables: &Tables) -> String {
    let mut s = String::new();
    for (i, d) in docs.iter().enumerate() {
        s += &format!(
            "<section id=\"tables{i}\"><h2>Full tables of {}</h2>\n<details><summary>header and every table</summary><pre>{}</pre></details></section>\n",
            esc(&d.id),
            esc(&super::text::run(d, tables))
        );
    }
    s
}

/// The whole page, its tables those of `tables`.
pub fn page(docs: &[RunDoc], tables: &Tables) -> String {
    let policy = Policy::default();
    let rows = if docs.len() == 2 { crate::compare::rows(&docs[0], &docs[1], &policy) } else { vec![] };
    let figs: Vec<Vec<Figure>> = docs.iter().enumerate().map(|(i, d)| figures(d, i)).collect();
    let mut body = "<h1>oscycles report</h1>\n".to_string();
    body += &summary_section(docs);
    body += &contents(docs, !rows.is_empty(), &figs);
    if !rows.is_empty() {
        body += &compare_section(&docs[0], &docs[1], &rows, &policy);
    }
    body += &counter_sections(docs);
    body += &plot_sections(docs, &figs);
    body += &table_sections(docs, tables);
    wrap(&body)
}

/// A page around `body`, with the report's style.
pub fn wrap(body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>oscycles report</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 2em; max-width: 1400px; }}\n\
         pre {{ font-size: 12px; overflow-x: auto; background: #f6f6f6; padding: 1em; }}\n\
         div.plots {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 620px), 1fr)); gap: 0.8em; }}\n\
         figure.plot {{ display: inline-block; margin: 0.5em; border: 1px solid #ddd; }}\n\
         div.plots figure.plot {{ display: block; margin: 0; }}\n\
         figure.plot svg {{ display: block; width: 100%; height: auto; }}\n\
         figcaption {{ font-size: 12px; color: #444; padding: 0.3em; }}\n\
         table.cmp {{ border-collapse: collapse; font-size: 12px; }} table.cmp td, table.cmp th {{ border: 1px solid #ddd; padding: 2px 6px; }}\n\
         </style></head>\n<body>\n{body}</body></html>\n"
    )
}

/// The page of `report --by`: host facts, each set's tables (verdicts
/// coloured), and per table a plot of every column's performance relative
/// to the baseline by case, all plots on one y axis.
pub fn by_page(r: &crate::report::by::ByReport, policy: &Policy) -> String {
    use crate::report::by;
    let mut body = format!("<h1>oscycles report by {}</h1>\n", esc(&format!("{:?}", r.by).to_lowercase()));
    let mut all: Vec<f64> = Vec::new();
    let mut plots: Vec<Vec<Lines>> = Vec::new();
    for s in &r.sets {
        plots.push(s.grids.iter().map(|g| by_lines(s, g, policy)).collect());
    }
    for l in plots.iter().flatten() {
        all.extend(l.series.iter().flat_map(|s| s.1.iter().flat_map(|p| [p.y, p.hi])));
    }
    let hi = all.iter().copied().filter(|v| v.is_finite()).fold(1.0, f64::max) * 1.05;
    for (s, lines) in r.sets.iter().zip(&mut plots) {
        body += &HTML.heading(2, &s.version);
        body += &s.facts.iter().map(|f| HTML.paragraph(f)).collect::<String>();
        body += &HTML.paragraph(&by::legend(s));
        for (g, l) in s.grids.iter().zip(lines.iter_mut()) {
            body += &HTML.heading(3, &g.family);
            body += &Html { class: "cmp" }.table(&by::markup(s, g, policy));
            l.y_range = Some((0.0, hi));
            match plot::lines(l) {
                Ok(svg) => body += &format!("<figure class=\"plot\">{svg}<figcaption>{}</figcaption></figure>\n", esc(&l.caption)),
                Err(e) => body += &HTML.paragraph(&format!("(no plot: {e})")),
            }
        }
    }
    wrap(&body)
}

/// A table's plot: x the case's number in the table, y each column's
/// performance relative to the baseline.
fn by_lines(s: &crate::report::by::Set, g: &crate::report::by::Grid, policy: &Policy) -> Lines {
    let series = s
        .columns
        .iter()
        .enumerate()
        .map(|(c, name)| {
            let pts = g
                .lines
                .iter()
                .enumerate()
                .filter_map(|(i, l)| {
                    let x = (i + 1) as f64;
                    if c == s.baseline {
                        return l.cells[c].map(|_| Point::bare(x, 1.0));
                    }
                    let j = l.judged(s.baseline, c, policy)?;
                    Some(match j.interval {
                        Some(iv) => Point { x, y: j.ratio, lo: iv.lo, hi: iv.hi },
                        None => Point::bare(x, j.ratio),
                    })
                })
                .collect();
            (name.clone(), pts)
        })
        .collect();
    Lines {
        title: format!("{}: performance relative to {}", g.family, s.columns[s.baseline]),
        x_desc: "case (row of the table)".into(),
        y_desc: "relative (above 1 = better)".into(),
        log_x: false,
        log_y: false,
        caption: format!("{}; one series per column, every plot on the same y axis", s.version),
        series,
        y_range: None,
    }
}

/// HTML: one self-contained page (`index.html`) over the runs.
pub struct HtmlExporter(pub Tables);

impl Exporter for HtmlExporter {
    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError> {
        let index = "index.html".to_string();
        Ok(Export::Files { files: vec![(index.clone(), page(docs, &self.0))], entry: Some(index) })
    }
}
