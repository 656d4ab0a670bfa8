//! A self-contained HTML report over one or more runs: no scripts, no
//! fetches, plots inline as SVG. Each run gets its header and seed tables;
//! plots per family (histograms of noise and jitter, throughput against
//! size, IPC cost against payload, cost against core count), each with axis
//! units and a caption naming host, environment and condition; two runs
//! also get the compare table.

use super::plot::{self, Lines};
use crate::results::{CaseResult, CaseStatus, RunDoc, params_label};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

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

fn num(r: &CaseResult, key: &str) -> Option<f64> {
    r.details.get(key).and_then(|v| v.as_f64())
}

fn metric(r: &CaseResult, name: &str) -> Option<f64> {
    r.metric(name).map(|m| m.summary.median)
}

/// Lines of y(x) for the results `pick` selects, one series per `series` key.
#[allow(clippy::too_many_arguments)]
fn lines_of(
    doc: &RunDoc,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    log: (bool, bool),
    pick: impl Fn(&CaseResult) -> bool,
    series: impl Fn(&CaseResult) -> String,
    xy: impl Fn(&CaseResult) -> Option<(f64, f64)>,
) -> Option<Lines> {
    let rs: Vec<&CaseResult> = doc.results.iter().filter(|r| r.status == CaseStatus::Ok && pick(r)).collect();
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in &rs {
        let Some(p) = xy(r) else { continue };
        let name = series(r);
        match out.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1.push(p),
            None => out.push((name, vec![p])),
        }
    }
    out.retain(|s| s.1.len() >= 2);
    for s in &mut out {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    if out.is_empty() {
        return None;
    }
    Some(Lines {
        title: title.into(),
        x_desc: x_desc.into(),
        y_desc: y_desc.into(),
        log_x: log.0,
        log_y: log.1,
        caption: rs.first().map(|r| context(doc, r)).unwrap_or_default(),
        series: out,
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
    let envs = super::env::environments(doc);
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

/// The plots of one environment's results; `tag` makes ids unique, `suffix` ends titles.
fn figures_of(doc: &RunDoc, tag: &str, suffix: &str) -> Vec<Figure> {
    let mut lines: Vec<Lines> = Vec::new();
    let p = |r: &CaseResult, k: &str| r.params.get(k).and_then(|v| v.as_f64());
    let s = |r: &CaseResult, k: &str| r.param_str(k).unwrap_or("").to_string();
    for (space, cores) in [("intra", "same"), ("inter", "same"), ("intra", "cross"), ("inter", "cross")] {
        lines.extend(lines_of(
            doc,
            &format!("One-way IPC by payload ({space}-process, {cores} core)"),
            "payload (64-bit words)",
            "one-way cost (TSC cycles)",
            (false, true),
            |r| r.family == "ipc" && r.param_str("space") == Some(space) && r.param_str("cores") == Some(cores),
            |r| format!("{}{}", env_prefix(doc, r), r.benchmark.trim_start_matches("ipc.")),
            |r| Some((p(r, "words")?, metric(r, "one_way")?)),
        ));
    }
    lines.extend(lines_of(
        doc,
        "Network throughput by payload size",
        "payload (bytes)",
        "MiB/s at the receiver",
        (true, false),
        |r| r.benchmark == "net.udp" || r.benchmark == "net.tcp",
        |r| format!("{}{} {}", env_prefix(doc, r), s(r, "path"), r.benchmark.trim_start_matches("net.")),
        |r| Some((p(r, "bytes")?, num(r, "mib_per_s")?)),
    ));
    lines.extend(lines_of(
        doc,
        "Block I/O throughput by block size",
        "block (bytes)",
        "MiB/s",
        (true, true),
        |r| r.family == "blk",
        |r| format!("{}{} {}", env_prefix(doc, r), r.benchmark.trim_start_matches("blk."), s(r, "mode")),
        |r| Some((p(r, "block")?, num(r, "mib_per_s")?)),
    ));
    lines.extend(lines_of(
        doc,
        "memcpy bandwidth by size (aligned)",
        "bytes copied",
        "MB/s",
        (true, false),
        |r| r.family == "memcpy" && p(r, "src_off") == Some(0.0) && p(r, "dst_off") == Some(0.0),
        |r| format!("{}{}", env_prefix(doc, r), r.benchmark.trim_start_matches("memcpy.")),
        |r| Some((p(r, "bytes")?, metric(r, "bandwidth")?)),
    ));
    // STREAM's four kernels are four metrics of one result: one series per result.
    let stream: Vec<(String, Vec<(f64, f64)>)> = doc
        .results
        .iter()
        .filter(|r| r.family == "stream" && r.status == CaseStatus::Ok)
        .map(|r| {
            let pts = ["copy_rate", "scale_rate", "add_rate", "triad_rate"]
                .iter()
                .enumerate()
                .filter_map(|(i, m)| Some((i as f64 + 1.0, metric(r, m)?)))
                .collect();
            (format!("{}{} threads", env_prefix(doc, r), s(r, "threads")), pts)
        })
        .collect();
    if let Some(first) = doc.results.iter().find(|r| r.family == "stream" && r.status == CaseStatus::Ok) {
        lines.push(Lines {
            title: "STREAM: rate by kernel (1 copy, 2 scale, 3 add, 4 triad)".into(),
            x_desc: "kernel".into(),
            y_desc: "MB/s".into(),
            log_x: false,
            log_y: false,
            caption: context(doc, first),
            series: stream,
        });
    }
    lines.extend(lines_of(
        doc,
        "Cost against the number of CPUs busy at once",
        "instances (one pinned per CPU)",
        "cost per operation (TSC cycles)",
        (false, false),
        |r| r.family == "parallel",
        |r| format!("{}{}", env_prefix(doc, r), r.benchmark.trim_start_matches("parallel.")),
        |r| Some((p(r, "instances")?, metric(r, "per_op")?)),
    ));
    let mut figs: Vec<Figure> = Vec::new();
    for (i, l) in lines.iter_mut().enumerate() {
        l.title += suffix;
        if let Ok(svg) = plot::lines(l) {
            figs.push(Figure { id: format!("{tag}-plot{i}"), svg, caption: format!("{}: {}", l.title, l.caption) });
        }
    }
    for r in doc.results.iter().filter(|r| r.status == CaseStatus::Ok) {
        let (key, what) = match r.family.as_str() {
            "noise" => ("delta_histogram_log2", "FWQ: delta to the minimum quantum (cycles, log2 buckets)"),
            "control" => ("period_dev_abs_histogram_log2", "control loop: |period deviation| (cycles, log2 buckets)"),
            _ => continue,
        };
        let Some(b) = r.details.get(key).and_then(|v| serde_json::from_value::<Vec<u64>>(v.clone()).ok()) else { continue };
        let (l, i) = r.load_isolation(doc);
        let title = format!("{} {} ({}, load {l}, isolation {i})", r.benchmark, params_label(&r.params), r.env(doc));
        if let Ok(svg) = plot::log2_histogram(&title, what, &b) {
            figs.push(Figure { id: format!("{tag}-hist{}", figs.len()), svg, caption: context(doc, r) });
        }
    }
    figs
}

/// The whole page.
pub fn page(docs: &[RunDoc]) -> String {
    let mut body = String::new();
    body += "<h1>oscycles report</h1>\n";
    // 1. The answer first: each run's one-screen summary.
    body += "<section id=\"summary\"><h2>Summary</h2>\n";
    for d in docs {
        body += &format!(
            "<h3>{} ({}, {}, {})</h3>\n<pre>{}</pre>\n",
            esc(&d.id),
            esc(&d.host.hostname),
            esc(&d.environment.name),
            esc(&d.started_at),
            esc(&super::summary::render(d, 110))
        );
    }
    body += "</section>\n";
    let policy = crate::uncertainty::Policy::default();
    let rows = if docs.len() == 2 { crate::compare::rows(&docs[0], &docs[1], &policy) } else { vec![] };
    let figs: Vec<Vec<Figure>> = docs.iter().enumerate().map(|(i, d)| figures(d, i)).collect();
    // 2. Contents.
    body += "<nav id=\"contents\"><h2>Contents</h2><ul>\n<li><a href=\"#summary\">Summary</a></li>\n";
    if !rows.is_empty() {
        body += "<li><a href=\"#compare\">B against A: verdicts and intervals</a></li>\n";
    }
    for (i, d) in docs.iter().enumerate() {
        if !figs[i].is_empty() {
            body += &format!("<li><a href=\"#plots{i}\">Plots of {}</a> ({} plots)</li>\n", esc(&d.id), figs[i].len());
        }
    }
    for (i, d) in docs.iter().enumerate() {
        body += &format!("<li><a href=\"#tables{i}\">Full tables of {}</a></li>\n", esc(&d.id));
    }
    body += "</ul></nav>\n";
    // 3. The comparison: what changed, with its doubt.
    if !rows.is_empty() {
        body += &format!(
            "<section id=\"compare\"><h2>B against A</h2>\n<p>A = {}, B = {}. {}</p>\n<figure class=\"plot\">{}<figcaption>B relative to A, \
             cell by cell: ratio of medians (above 1: B better) with its 95% interval (bootstrap over rounds, then batches), grouped by family; \
             green faster, red slower, blue same (inside +-{:.0}%), grey unsure</figcaption></figure>\n{}\n\
             <details><summary>the comparison as text</summary><pre>{}</pre></details></section>\n",
            esc(&docs[0].id),
            esc(&docs[1].id),
            esc(&super::compare::tally_lines(&rows, &policy)).replace('\n', "<br>\n"),
            super::forest::svg(&rows, &policy),
            policy.margin * 100.0,
            super::forest::table(&rows),
            esc(&super::compare::render(&docs[0], &docs[1], &rows, &policy))
        );
    }
    // 4. Plots.
    for (i, d) in docs.iter().enumerate() {
        if figs[i].is_empty() {
            continue;
        }
        body += &format!("<section id=\"plots{i}\"><h2>Plots of {}</h2>\n", esc(&d.id));
        for f in &figs[i] {
            body += &format!("<figure id=\"{}\" class=\"plot\">{}<figcaption>{}</figcaption></figure>\n", f.id, f.svg, esc(&f.caption));
        }
        body += "</section>\n";
    }
    // 5. Everything else, collapsed.
    for (i, d) in docs.iter().enumerate() {
        body += &format!(
            "<section id=\"tables{i}\"><h2>Full tables of {}</h2>\n<details><summary>header and every table</summary><pre>{}\n{}</pre></details></section>\n",
            esc(&d.id),
            esc(&super::header::render(d, false)),
            esc(&super::render_tables(d))
        );
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>oscycles report</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 2em; max-width: 1400px; }}\n\
         pre {{ font-size: 12px; overflow-x: auto; background: #f6f6f6; padding: 1em; }}\n\
         figure.plot {{ display: inline-block; margin: 0.5em; border: 1px solid #ddd; }}\n\
         figcaption {{ font-size: 12px; color: #444; max-width: 760px; padding: 0.3em; }}\n\
         table.cmp {{ border-collapse: collapse; font-size: 12px; }} table.cmp td, table.cmp th {{ border: 1px solid #ddd; padding: 2px 6px; }}\n\
         </style></head>\n<body>\n{body}</body></html>\n"
    )
}
