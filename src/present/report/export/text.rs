//! Text: each run's header and every table, as wide as they are (what
//! `show --full` prints before its summary).

use super::{Export, ExportError, Exporter};
use crate::data::results::RunDoc;
use crate::present::report::tables::Lineup;
use crate::present::report::{header, render_tables_with};

/// Text, its tables those of the list it holds.
pub struct TextExporter(pub Lineup);

/// One run: its header, a blank line, its tables.
pub fn run(doc: &RunDoc, tables: &Lineup) -> String {
    format!("{}\n{}", header::render(doc, false), render_tables_with(doc, tables))
}

impl Exporter for TextExporter {
    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError> {
        Ok(Export::Text(docs.iter().map(|d| run(d, &self.0)).collect::<Vec<_>>().join("\n")))
    }
}
