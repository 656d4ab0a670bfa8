//! Markdown: tables only, for papers and issues. One table per run, every
//! case with its first metric's median and spread, or the reason it has none.

use super::markup::{Cell, Markdown, Markup, MarkupTable};
use super::{Export, ExportError, Exporter, status};
use crate::data::results::{CaseResult, CaseStatus, RunDoc, params_label};

pub struct MarkdownExporter;

const COLUMNS: [&str; 11] =
    ["case", "parameters", "environment", "load/isolation", "metric", "median", "unit", "min", "p99", "CV", "status"];
/// The numbers: median, min, p99, CV.
const RIGHT: [usize; 4] = [5, 7, 8, 9];

/// A case's row: its first metric, or why it has none.
fn row(d: &RunDoc, r: &CaseResult) -> Vec<Cell> {
    let (l, i) = r.load_isolation(d);
    let mut cells: Vec<Cell> =
        vec![r.benchmark.as_str().into(), params_label(&r.params).into(), r.env(d).into(), format!("{l}/{i}").into()];
    match r.metrics.first().filter(|_| r.status == CaseStatus::Ok) {
        Some(m) => {
            let s = &m.summary;
            cells.extend(
                [
                    m.name.clone(),
                    format!("{:.4}", s.median),
                    m.unit.clone(),
                    format!("{:.4}", s.min),
                    format!("{:.4}", s.p99),
                    format!("{:.1}%", s.cv * 100.0),
                    "ok".into(),
                ]
                .map(Cell::from),
            );
        }
        None => {
            cells.extend(std::iter::repeat_n(Cell::none(), 6));
            cells.push(format!("{}: {}", status(r.status), r.reason.as_deref().unwrap_or("")).into());
        }
    }
    cells
}

impl Exporter for MarkdownExporter {
    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError> {
        let mut out = String::new();
        for d in docs {
            out += &Markdown.heading(2, &d.id);
            out += &Markdown.paragraph(&format!(
                "host {} ({}), kernel {}, {}; environment {}; oscycles {}",
                d.host.hostname,
                d.host.cpu_model,
                d.host.kernel_release,
                crate::present::report::header::clock_rate(&d.host.clock, 4),
                d.environment.name,
                d.tool.version
            ));
            let mut t = MarkupTable::new(&COLUMNS, &RIGHT);
            for r in &d.results {
                t.row(row(d, r));
            }
            out += &Markdown.table(&t);
            out += "\n";
        }
        Ok(Export::Text(out))
    }
}
