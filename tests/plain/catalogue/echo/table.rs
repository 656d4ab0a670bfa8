//! The echo family's own table (a row per size, the median copy in cycles
//! and in bytes per cycle) and plot (cycles per copy against size).

use super::{CopyParams, FAMILY, PER_COPY};
use oscycles::data::results::{CaseStatus, RunDoc};
use oscycles::tables::tabular::figures::{Plot, Plots, lines_of, point};
use oscycles::tables::tabular::lines::Lines;
use oscycles::tables::tabular::table::TextTable;
use oscycles::tables::tabular::tables::Table;

/// Its title, which the tests look for.
pub const TITLE: &str = "echo: a buffer copied, by size";
/// Its plot's title.
pub const PLOT_TITLE: &str = "echo: cycles per copy by size";

pub struct EchoTable;

impl Table for EchoTable {
    fn families(&self) -> &'static [&'static str] {
        &[FAMILY]
    }
    fn render(&self, doc: &RunDoc) -> String {
        let mut t = TextTable::new(&["bytes", "cycles per copy", "bytes per cycle"], 1);
        for r in doc.results.iter().filter(|r| r.family == FAMILY && r.status == CaseStatus::Ok) {
            let (Some(p), Some(m)) = (r.params_as::<CopyParams>(), r.metric(PER_COPY)) else { continue };
            t.row(vec![p.bytes.to_string(), format!("{:.1}", m.summary.median), format!("{:.2}", p.bytes as f64 / m.summary.median)]);
        }
        if t.rows.is_empty() { String::new() } else { format!("{TITLE}\n{}", t.render()) }
    }
}

pub struct EchoPlots;

impl Plots for EchoPlots {
    fn lines(&self, doc: &RunDoc) -> Vec<Lines> {
        let plot = Plot { title: PLOT_TITLE.into(), x_desc: "bytes copied", y_desc: "TSC cycles per copy", log: (true, true) };
        let lines =
            lines_of::<CopyParams>(doc, plot, |r, _| r.family == FAMILY, |_, _| "copy".into(), |r, p| point(p.bytes as f64, r, PER_COPY));
        lines.into_iter().collect()
    }
}
