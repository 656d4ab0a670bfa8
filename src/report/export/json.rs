//! JSON: each run's document as it is stored, one file per run named by its id.

use super::{Export, ExportError, Exporter};
use crate::results::RunDoc;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn name(&self) -> &'static str {
        "json"
    }

    fn export(&self, docs: &[RunDoc]) -> Result<Export, ExportError> {
        let mut files = Vec::new();
        for d in docs {
            // A stored document from an older oscycles was never checked:
            // its id names a file, so it must name one inside the directory.
            crate::store::check_id(&d.id).map_err(ExportError::BadRunId)?;
            let text = serde_json::to_string_pretty(d).map_err(|e| ExportError::Json(d.id.clone(), e))?;
            files.push((format!("{}.json", d.id), text));
        }
        Ok(Export::Files { files, entry: None })
    }
}
