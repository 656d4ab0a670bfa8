//! Exports of run documents, one `Exporter` per format (after hyperfine's
//! `export` module): text tables, Markdown, CSV, JSON and HTML.
//! `exporter(format)` gives the one for a format. Markdown and HTML tables
//! come from one table builder (`markup`).
//!
//! Where an export goes: text, Markdown and CSV are one text
//! (`Export::Text`), for a file or standard output; JSON and HTML are files
//! in a directory (`Export::Files`): JSON one document per run named by its
//! id, HTML one self-contained `index.html` (plots inline) to open.

pub mod ci;
pub mod csv;
pub mod html;
pub mod html_history;
pub mod json;
pub mod markdown;
pub mod markup;
pub mod text;

use crate::data::results::{CaseStatus, RunDoc};
use crate::present::report::tables::Lineup;

/// Why an export cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A run's id cannot name a file (a stored document from an older
    /// oscycles was never checked).
    #[error("{0}")]
    BadRunId(crate::data::documents::InvalidRunId),
    #[error("cannot write run {0} as JSON: {1}")]
    Json(String, serde_json::Error),
}

/// What an exporter produces.
#[derive(Debug, Clone, PartialEq)]
pub enum Export {
    /// One text, for a file (or standard output).
    Text(String),
    /// Files for a directory, by name; `entry` is the one to open.
    Files { files: Vec<(String, String)>, entry: Option<String> },
}

/// One output format.
pub trait Exporter {
    /// The export of `docs` (one or more runs).
    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError>;
}

/// The formats there are exporters for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Each run's header and every table, as `show --full` prints them.
    Text,
    Markdown,
    Csv,
    Json,
    Html,
}

impl Format {
    pub const ALL: [Format; 5] = [Format::Text, Format::Markdown, Format::Csv, Format::Json, Format::Html];

    /// The format's name, as the options name it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Markdown => "markdown",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Html => "html",
        }
    }
}

/// The exporter of `format`, with oscycles' own tables.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    exporter_with(format, Lineup::standard())
}

/// The exporter of `format`; those that lay tables out (text, HTML) lay out
/// `tables` (a family's own table joins the standard ones with [`Lineup::with`]).
pub fn exporter_with(format: Format, tables: Lineup) -> Box<dyn Exporter> {
    match format {
        Format::Text => Box::new(text::TextExporter(tables)),
        Format::Markdown => Box::new(markdown::MarkdownExporter),
        Format::Csv => Box::new(csv::CsvExporter),
        Format::Json => Box::new(json::JsonExporter),
        Format::Html => Box::new(html::HtmlExporter(tables)),
    }
}

/// A case's status as the exports write it.
pub(crate) fn status(s: CaseStatus) -> &'static str {
    match s {
        CaseStatus::Ok => "ok",
        CaseStatus::NotApplicable => "n/a",
        CaseStatus::Failed => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_or_one_text_by_format() {
        for f in Format::ALL {
            let out = exporter(f).export(&[]).unwrap();
            let dir = matches!(f, Format::Json | Format::Html);
            assert_eq!(matches!(out, Export::Files { .. }), dir, "{}", f.name());
        }
        assert_eq!(exporter(Format::Json).export(&[]).unwrap(), Export::Files { files: vec![], entry: None });
        assert_eq!(exporter(Format::Csv).export(&[]).unwrap(), Export::Text(csv::HEADER.into()));
    }
}
