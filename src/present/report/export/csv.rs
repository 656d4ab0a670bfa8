//! CSV: one row per case, metric and statistic; cases without metrics get
//! one row with their status and reason.

use super::{Export, ExportError, Exporter, status};
use crate::data::results::{RunDoc, params_label};

pub struct CsvExporter;

/// The first line: the columns.
pub const HEADER: &str = "run,environment,load,isolation,suite,benchmark,params,status,reason,metric,unit,statistic,value\n";

/// One CSV field, quoted where it must be. A field a spreadsheet would
/// take for a formula (beginning with `=`, `+`, `-`, `@`, a tab or a
/// carriage return) and that is not a plain number gets a leading `'`, as
/// OWASP's CSV-injection advice says (issue 43, item 15).
pub fn field(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.trim().parse::<f64>().is_err();
    let s = if formula { format!("'{s}") } else { s.to_string() };
    if s.contains([',', '"', '\n', '\r']) || formula { format!("\"{}\"", s.replace('"', "\"\"")) } else { s }
}

impl Exporter for CsvExporter {
    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError> {
        let mut out = String::from(HEADER);
        for d in docs {
            for r in &d.results {
                let (l, i) = r.load_isolation(d);
                let lead = [
                    d.id.as_str(),
                    r.env(d),
                    l,
                    &i,
                    &r.suite,
                    &r.benchmark,
                    &params_label(&r.params),
                    status(r.status),
                    r.reason.as_deref().unwrap_or(""),
                ]
                .map(field)
                .join(",");
                if r.metrics.is_empty() {
                    out += &format!("{lead},,,,\n");
                }
                for m in &r.metrics {
                    let s = &m.summary;
                    for (name, v) in [("n", s.n as f64)].into_iter().chain(s.named()) {
                        out += &format!("{lead},{},{},{name},{v}\n", field(&m.name), field(&m.unit));
                    }
                }
            }
        }
        Ok(Export::Text(out))
    }
}
