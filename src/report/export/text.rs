//! Text: each run's header and every table, as wide as they are (what
//! `show --full` prints before its summary).

use super::{Export, ExportError, Exporter};
use crate::report::{header, render_tables};
use crate::results::RunDoc;

pub struct TextExporter;

/// One run: its header, a blank line, its tables.
pub fn run(doc: &RunDoc) -> String {
    format!("{}\n{}", header::render(doc, false), render_tables(doc))
}

impl Exporter for TextExporter {
    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError> {
        Ok(Export::Text(docs.iter().map(run).collect::<Vec<_>>().join("\n")))
    }
}
