//! Exports of run documents: Markdown (tables only, for papers and issues)
//! and CSV (one row per case and statistic).

use crate::results::{CaseStatus, RunDoc, params_label};

fn status(s: CaseStatus) -> &'static str {
    match s {
        CaseStatus::Ok => "ok",
        CaseStatus::NotApplicable => "n/a",
        CaseStatus::Failed => "failed",
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// One Markdown table per run: every case with its first metric's median
/// and spread, or the reason it has none.
pub fn markdown(docs: &[RunDoc]) -> String {
    let mut out = String::new();
    for d in docs {
        out += &format!(
            "## {}\n\nhost {} ({}), kernel {}, TSC {:.4} GHz; environment {}; oscycles {}\n\n",
            md_cell(&d.id),
            md_cell(&d.host.hostname),
            md_cell(&d.host.cpu_model),
            md_cell(&d.host.kernel_release),
            d.host.clock.tsc_hz / 1e9,
            md_cell(&d.environment.name),
            md_cell(&d.tool.version)
        );
        out += "| case | parameters | environment | load/isolation | metric | median | unit | min | p99 | CV | status |\n";
        out += "|---|---|---|---|---|---:|---|---:|---:|---:|---|\n";
        for r in &d.results {
            let (l, i) = r.load_isolation(d);
            let head = format!("| {} | {} | {} | {l}/{i} |", md_cell(&r.benchmark), md_cell(&params_label(&r.params)), md_cell(r.env(d)));
            match r.metrics.first().filter(|_| r.status == CaseStatus::Ok) {
                Some(m) => {
                    let s = &m.summary;
                    out += &format!(
                        "{head} {} | {:.4} | {} | {:.4} | {:.4} | {:.1}% | ok |\n",
                        md_cell(&m.name),
                        s.median,
                        md_cell(&m.unit),
                        s.min,
                        s.p99,
                        s.cv * 100.0
                    );
                }
                None => out += &format!("{head} | | | | | | {}: {} |\n", status(r.status), md_cell(r.reason.as_deref().unwrap_or(""))),
            }
        }
        out += "\n";
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// One row per case, metric and statistic; cases without metrics get one
/// row with their status and reason.
pub fn csv(docs: &[RunDoc]) -> String {
    let mut out = String::from("run,environment,load,isolation,suite,benchmark,params,status,reason,metric,unit,statistic,value\n");
    for d in docs {
        for r in &d.results {
            let (l, i) = r.load_isolation(d);
            let lead = [
                d.id.as_str(),
                r.env(d),
                l,
                i,
                &r.suite,
                &r.benchmark,
                &params_label(&r.params),
                status(r.status),
                r.reason.as_deref().unwrap_or(""),
            ]
            .map(csv_field)
            .join(",");
            if r.metrics.is_empty() {
                out += &format!("{lead},,,,\n");
            }
            for m in &r.metrics {
                let s = &m.summary;
                let stats = [
                    ("n", s.n as f64),
                    ("min", s.min),
                    ("median", s.median),
                    ("mean", s.mean),
                    ("p99", s.p99),
                    ("p999", s.p999),
                    ("max", s.max),
                    ("stddev", s.stddev),
                    ("cv", s.cv),
                ];
                for (name, v) in stats {
                    out += &format!("{lead},{},{},{name},{v}\n", csv_field(&m.name), csv_field(&m.unit));
                }
            }
        }
    }
    out
}
