//! Keeping runs: the run document is rewritten after every case (to a
//! temporary file, then renamed over the old one), so the file on disk is
//! always a complete, parseable document and a crash loses nothing measured.

use crate::results::{CaseResult, RunDoc, RunStatus, SCHEMA, SCHEMA_VERSION, now_rfc3339};
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot write {what} to '{path}': {err}; choose a writable directory with {option}")]
    Unwritable { path: PathBuf, err: std::io::Error, what: &'static str, option: &'static str },
    #[error("cannot read '{path}': {err}")]
    Read { path: PathBuf, err: std::io::Error },
    #[error("'{path}' is not an oscycles run document: {err}")]
    Parse { path: PathBuf, err: String },
    #[error("'{path}' has schema version {found}; this oscycles reads version {SCHEMA_VERSION}")]
    Version { path: PathBuf, found: u64 },
}

/// Checks that `dir` exists (creating it) and accepts files, before any
/// measuring starts. `what` goes there ("results"), chosen by `option`.
pub fn check_writable(dir: &Path, what: &'static str, option: &'static str) -> Result<(), StoreError> {
    let unwritable = |err| StoreError::Unwritable { path: dir.to_path_buf(), err, what, option };
    std::fs::create_dir_all(dir).map_err(unwritable)?;
    let probe = dir.join(format!(".oscycles-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(unwritable)?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Replaces `path` with `bytes` so that a reader sees the old content or
/// the new, never a part: written beside it, then renamed over it.
pub fn write_atomically(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

pub struct RunWriter {
    path: PathBuf,
    pub doc: RunDoc,
}

impl RunWriter {
    pub fn create(dir: &Path, doc: RunDoc) -> Result<Self, StoreError> {
        check_writable(dir, "results", "--results")?;
        let w = RunWriter { path: dir.join(format!("{}.json", doc.id)), doc };
        w.save()?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn save(&self) -> Result<(), StoreError> {
        let unwritable = |err| StoreError::Unwritable { path: self.path.clone(), err, what: "results", option: "--results" };
        let text = serde_json::to_string_pretty(&self.doc).expect("a run document always serialises");
        write_atomically(&self.path, text).map_err(unwritable)
    }

    pub fn push(&mut self, r: CaseResult) -> Result<(), StoreError> {
        self.doc.results.push(r);
        self.save()
    }

    pub fn finish(&mut self, status: RunStatus) -> Result<(), StoreError> {
        self.doc.status = status;
        self.doc.finished_at = Some(now_rfc3339());
        self.save()
    }
}

/// Reads a run document, refusing other documents and other schema versions.
pub fn load(path: &Path) -> Result<RunDoc, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|err| StoreError::Read { path: path.into(), err })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| StoreError::Parse { path: path.into(), err: e.to_string() })?;
    if v.get("schema").and_then(|s| s.as_str()) != Some(SCHEMA) {
        return Err(StoreError::Parse { path: path.into(), err: format!("no \"schema\": \"{SCHEMA}\" field") });
    }
    let found = v.get("schema_version").and_then(|s| s.as_u64()).unwrap_or(0);
    if found != SCHEMA_VERSION as u64 {
        return Err(StoreError::Version { path: path.into(), found });
    }
    serde_json::from_value(v).map_err(|e| StoreError::Parse { path: path.into(), err: e.to_string() })
}
