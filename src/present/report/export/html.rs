//! A self-contained HTML report over one or more runs: no scripts, no
//! fetches, plots inline as SVG. Each run gets its header and the tables of the published evaluations;
//! plots per family (histograms of noise and jitter, throughput against
//! size, IPC cost against payload, cost against core count), each with axis
//! units and a caption naming host, environment and condition; two runs
//! also get the compare table.

use super::markup::{Html, Markup, escape_html as esc};
use super::{Export, ExportError, Exporter};
use crate::analysis::uncertainty::verdict::Thresholds;
use crate::data::results::RunDoc;
use crate::present::report::plot;
use crate::present::report::tables::Lineup;
use crate::present::report::{compare, forest, summary};
use crate::tables::tabular::figures::Plots;
use crate::tables::tabular::lines::Lines;
use crate::tables::tabular::lines::Point;

/// Headings of the page.
const HTML: Html = Html { class: "" };

/// A figure: title, SVG, caption; `shared` where it puts every environment
/// of a run on one set of axes ([`Plots::across_environments`]).
pub struct Figure {
    pub id: String,
    pub svg: String,
    pub caption: String,
    pub shared: bool,
}

/// Every plot the run's results allow, from `plots` in order: one set per
/// environment, so that a plot's series stay few enough to tell apart, but
/// for the plots of few series (throughput, scaling), which put every
/// environment on shared axes, which is what a reader compares.
pub fn figures(doc: &RunDoc, run_no: usize, plots: &[&dyn Plots]) -> Vec<Figure> {
    let envs = crate::present::report::env::environments(doc);
    if envs.len() < 2 {
        return figures_of(doc, &format!("run{run_no}"), "", plots);
    }
    let mut out: Vec<Figure> = figures_of(doc, &format!("run{run_no}-all"), " [every environment]", plots)
        .into_iter()
        .filter(|f| f.shared)
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
        out.extend(figures_of(&d, &format!("run{run_no}-env{k}"), &format!(" [{e}]"), plots).into_iter().filter(|f| !f.shared));
    }
    out
}

/// The plots of one environment's results (or, for bars and plots across
/// environments, of the run's); `tag` makes ids unique, `suffix` ends
/// titles. In the order of `plots`, each plot's lines then its bars; the
/// histograms last.
fn figures_of(doc: &RunDoc, tag: &str, suffix: &str, plots: &[&dyn Plots]) -> Vec<Figure> {
    let mut figs: Vec<Figure> = Vec::new();
    for p in plots {
        let shared = p.across_environments();
        for mut l in p.lines(doc) {
            l.title += suffix;
            if let Ok(svg) = plot::lines(&l) {
                figs.push(Figure { id: format!("{tag}-plot{}", figs.len()), svg, caption: format!("{}: {}", l.title, l.caption), shared });
            }
        }
        for b in p.bars(doc) {
            if let Ok(svg) = plot::bars(&b) {
                figs.push(Figure {
                    id: format!("{tag}-bars{}", figs.len()),
                    svg,
                    caption: format!("{}: {}", b.title, b.caption),
                    shared: true,
                });
            }
        }
    }
    for h in plots.iter().flat_map(|p| p.histograms(doc)) {
        if let Ok(svg) = plot::log2_histogram(&h.title, h.what, &h.buckets) {
            figs.push(Figure { id: format!("{tag}-hist{}", figs.len()), svg, caption: h.caption, shared: false });
        }
    }
    figs
}

/// Section 1, what was run and where: each run's header (host,
/// environments, condition, harness) and its one-screen summary.
fn summary_section(docs: &[RunDoc]) -> String {
    let mut s = "<section id=\"summary\"><h2>What was run, and where</h2>\n".to_string();
    for d in docs {
        s += &HTML.heading(3, &format!("{} ({}, {}, {})", d.id, d.host.hostname, d.environment.name, d.started_at));
        s += &format!("<pre class=\"header\">{}</pre>\n", esc(&crate::present::report::header::render_brief(d)));
        let p = summary::brief_parts(d);
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

/// Text with tables in it (as [`crate::tables::tabular::table::marked`] renders
/// them) as HTML: each table an HTML table with the terminal's headers and
/// labels, the text between them kept as it is (titles, notes).
pub fn text_with_tables(text: &str) -> String {
    let mut out = String::new();
    let mut prose: Vec<String> = Vec::new();
    let flush = |prose: &mut Vec<String>, out: &mut String| {
        let t = prose.join("\n");
        if !t.trim().is_empty() {
            *out += &format!("<pre class=\"prose\">{}</pre>\n", esc(t.trim_matches('\n')));
        }
        prose.clear();
    };
    for line in text.lines() {
        match crate::tables::tabular::table::parse_marked(line) {
            Some((before, t)) => {
                prose.push(before.trim_end().to_string());
                flush(&mut prose, &mut out);
                out += &Html { class: "t" }.table(&super::markup::MarkupTable::from_table(&t));
            }
            None => prose.push(line.to_string()),
        }
    }
    flush(&mut prose, &mut out);
    out
}

/// 2. Contents.
fn contents(docs: &[RunDoc], compared: bool, figs: &[Vec<Figure>]) -> String {
    let mut s = "<nav id=\"contents\"><h2>Contents</h2><ul>\n<li><a href=\"#summary\">What was run, and where</a></li>\n".to_string();
    if compared {
        s += "<li><a href=\"#compare\">B against A: verdicts and intervals</a></li>\n";
    }
    for (i, d) in docs.iter().enumerate() {
        if !figs[i].is_empty() {
            s += &format!("<li><a href=\"#plots{i}\">Figures of {}</a> ({} figures)</li>\n", esc(&d.id), figs[i].len());
        }
    }
    for (i, d) in docs.iter().enumerate() {
        s += &format!("<li><a href=\"#tables{i}\">Tables of {}</a></li>\n", esc(&d.id));
    }
    for (i, d) in docs.iter().enumerate().filter(|(_, d)| has_counts(d)) {
        s += &format!("<li><a href=\"#counters{i}\">Kernel events per operation in {}</a></li>\n", esc(&d.id));
    }
    s + "</ul></nav>\n"
}

/// 3. The comparison of two runs: what changed, with its doubt.
fn compare_section(a: &RunDoc, b: &RunDoc, rows: &[crate::data::compare::Row], policy: &Thresholds) -> String {
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

/// The kernel's event counts per operation beside each cell, a
/// section per run that has them.
fn counter_sections(docs: &[RunDoc]) -> String {
    let mut s = String::new();
    for (i, d) in docs.iter().enumerate().filter(|(_, d)| has_counts(d)) {
        s += &format!(
            "<section id=\"counters{i}\"><h2>Kernel events per operation in {}</h2>\n{}</section>\n",
            esc(&d.id),
            text_with_tables(&crate::tables::tabular::table::marked(|| crate::present::report::counters::render(d)))
        );
    }
    s
}

fn has_counts(d: &RunDoc) -> bool {
    d.results.iter().any(|r| r.counters.as_ref().is_some_and(|c| !c.events.is_empty()))
}

/// Section 4, figures, a section per run that has any: the published
/// evaluations' comparisons across environments first, then each family's plots.
fn plot_sections(docs: &[RunDoc], figs: &[Vec<Figure>]) -> String {
    let mut s = String::new();
    for (i, d) in docs.iter().enumerate().filter(|(i, _)| !figs[*i].is_empty()) {
        s += &format!("<section id=\"plots{i}\"><h2>Figures of {}</h2>\n<div class=\"plots\">\n", esc(&d.id));
        for f in &figs[i] {
            s += &format!("<figure id=\"{}\" class=\"plot\">{}<figcaption>{}</figcaption></figure>\n", f.id, f.svg, esc(&f.caption));
        }
        s += "</div></section>\n";
    }
    s
}

/// Section 1b, what was measured, as `show` leads with it: the published
/// evaluations' forms the run fills, then the tables without what is n/a
/// (a line says what and why), as HTML tables.
fn brief_sections(docs: &[RunDoc], tables: &Lineup) -> String {
    let mut s = String::new();
    for (i, d) in docs.iter().enumerate() {
        let text = crate::tables::tabular::table::marked(|| crate::present::report::render_brief(d, tables));
        s += &format!("<section id=\"brief{i}\"><h2>What {} measured</h2>\n{}</section>\n", esc(&d.id), text_with_tables(&text));
    }
    s
}

/// Section 5, the tables, as HTML tables with the terminal's labels: each
/// run's every table (per environment, then side by side), as `show --full`
/// lays them out, one click away.
fn table_sections(docs: &[RunDoc], tables: &Lineup) -> String {
    let mut s = String::new();
    for (i, d) in docs.iter().enumerate() {
        let text = crate::tables::tabular::table::marked(|| crate::present::report::render_tables_with(d, tables));
        s += &format!(
            "<section id=\"tables{i}\"><h2>Tables of {}</h2>\n<details><summary>every table, row and column (as show --full)</summary>\n{}</details></section>\n",
            esc(&d.id),
            text_with_tables(&text)
        );
    }
    s
}

/// The whole page, its tables those of `tables`.
pub fn page(docs: &[RunDoc], tables: &Lineup) -> String {
    let policy = Thresholds::default();
    let rows = if docs.len() == 2 { crate::data::compare::rows(&docs[0], &docs[1], &policy) } else { vec![] };
    let figs: Vec<Vec<Figure>> = docs.iter().enumerate().map(|(i, d)| figures(d, i, tables.plots())).collect();
    let mut body = "<h1>oscycles report</h1>\n".to_string();
    body += &summary_section(docs);
    body += &brief_sections(docs, tables);
    body += &contents(docs, !rows.is_empty(), &figs);
    if !rows.is_empty() {
        body += &compare_section(&docs[0], &docs[1], &rows, &policy);
    }
    body += &plot_sections(docs, &figs);
    body += &table_sections(docs, tables);
    body += &counter_sections(docs);
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
         table.cmp, table.t {{ border-collapse: collapse; font-size: 12px; margin: 0.3em 0 1em 0; }}\n\
         table.cmp td, table.cmp th, table.t td, table.t th {{ border: 1px solid #ddd; padding: 2px 6px; }}\n\
         table.t th {{ background: #f0f0f0; }} table.t td {{ font-variant-numeric: tabular-nums; }}\n\
         pre.prose {{ background: none; padding: 0; margin: 1em 0 0.2em 0; white-space: pre-wrap; font-size: 13px; }}\n\
         </style></head>\n<body>\n{body}</body></html>\n"
    )
}

/// The page of `report --by`: host facts, each set's tables (verdicts
/// coloured), and per table a plot of every column's performance relative
/// to the baseline by case, all plots on one y axis.
pub fn by_page(r: &crate::present::report::by::ByReport, docs: &[RunDoc], policy: &Thresholds) -> String {
    use crate::present::report::by;
    let mut body = format!("<h1>oscycles report by {}</h1>\n", esc(&format!("{:?}", r.by).to_lowercase()));
    body += &by_figures(r.by, docs);
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

/// The published evaluations' comparisons with a column (host, kernel,
/// environment) where a run has an environment.
fn by_figures(by: crate::present::report::by::By, docs: &[RunDoc]) -> String {
    let Some(merged) = crate::present::report::by::merged(docs, by) else { return String::new() };
    let figs: Vec<Figure> = figures(&merged, 0, Lineup::standard().plots()).into_iter().filter(|f| f.shared).collect();
    if figs.is_empty() {
        return String::new();
    }
    let mut s = "<section id=\"plots0\"><h2>The published evaluations, a column each</h2>\n<div class=\"plots\">\n".to_string();
    for f in &figs {
        s += &format!("<figure id=\"{}\" class=\"plot\">{}<figcaption>{}</figcaption></figure>\n", f.id, f.svg, esc(&f.caption));
    }
    s + "</div></section>\n"
}

/// A table's plot: x the case's number in the table, y each column's
/// performance relative to the baseline.
fn by_lines(s: &crate::present::report::by::Set, g: &crate::present::report::by::Grid, policy: &Thresholds) -> Lines {
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
pub struct HtmlExporter(pub Lineup);

impl Exporter for HtmlExporter {
    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError> {
        let index = "index.html".to_string();
        Ok(Export::Files { files: vec![(index.clone(), page(docs, &self.0))], entry: Some(index) })
    }
}
