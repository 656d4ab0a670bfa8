//! JSON: each run's document as it is stored, one file per run named by its id.

use super::{Export, ExportError, Exporter};
use crate::data::results::RunDoc;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError> {
        // A stored document from an older oscycles was never checked: its
        // id names a file, so it must name one inside the directory.
        let file = |d: &RunDoc| -> Result<(String, String), ExportError> {
            crate::data::documents::valid_id(&d.id).map_err(ExportError::BadRunId)?;
            Ok((format!("{}.json", d.id), serde_json::to_string_pretty(d).map_err(|e| ExportError::Json(d.id.clone(), e))?))
        };
        let files = docs.iter().map(file).collect::<Result<Vec<_>, _>>()?;
        Ok(Export::Files { files, entry: None })
    }
}
