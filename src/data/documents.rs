//! Run documents on disk: the run document is rewritten after every case (to a
//! temporary file, then renamed over the old one), so the file on disk is
//! always a complete, parseable document and a crash loses nothing measured.

use crate::data::results::time::Spent;
use crate::data::results::{CaseResult, OLDEST_SCHEMA_VERSION, RunDoc, RunStatus, SCHEMA, SCHEMA_VERSION, now_rfc3339};
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum DocumentError {
    #[error("cannot write {what} to '{path}': {err}; choose a writable directory with {option}")]
    Unwritable { path: PathBuf, err: std::io::Error, what: &'static str, option: &'static str },
    #[error("cannot read '{path}': {err}")]
    Read { path: PathBuf, err: std::io::Error },
    #[error("'{path}' is not an oscycles run document: {err}")]
    Parse { path: PathBuf, err: String },
    #[error("'{path}' has schema version {found}; this oscycles reads versions {OLDEST_SCHEMA_VERSION} to {SCHEMA_VERSION}")]
    Version { path: PathBuf, found: u64 },
    #[error("'{path}' is larger than {} MiB, the most a run document may be; is it one?", MAX_DOC_BYTES >> 20)]
    TooLarge { path: PathBuf },
    #[error("'{path}': {err}")]
    BadId { path: PathBuf, err: InvalidRunId },
    #[error("'{path}': {err}")]
    BadNumber { path: PathBuf, err: crate::data::results::check::BadNumber },
    #[error(
        "'{path}': the documents read so far hold more than {} MiB or {} results, the most one command reads; give fewer or smaller documents",
        MAX_TOTAL_BYTES >> 20,
        MAX_TOTAL_RESULTS
    )]
    TooMuch { path: PathBuf },
}

/// The largest run document any command reads (a run of every suite with
/// its raw samples is a few MiB).
pub const MAX_DOC_BYTES: u64 = 64 << 20;

/// The most one command reads over all its documents (files and stored
/// runs): in bytes of JSON, and in results, which cost far more in memory
/// than in JSON (a few KiB each parsed). A run of every suite has a few
/// thousand results; a report over a fleet of dozens of such runs fits.
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;
pub const MAX_TOTAL_RESULTS: u64 = 200_000;

/// What this process has read so far, against the bounds above.
static READ_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static READ_RESULTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts a document read by this process (`bytes` of JSON, `results`
/// results) and refuses it when the total goes beyond the bounds.
pub fn charge(path: &Path, bytes: u64, results: u64) -> Result<(), DocumentError> {
    use std::sync::atomic::Ordering::Relaxed;
    let b = READ_BYTES.fetch_add(bytes, Relaxed) + bytes;
    let r = READ_RESULTS.fetch_add(results, Relaxed) + results;
    if b > MAX_TOTAL_BYTES || r > MAX_TOTAL_RESULTS {
        return Err(DocumentError::TooMuch { path: path.into() });
    }
    Ok(())
}

/// A run id that cannot name files (at most its first 80 characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the run id {0:?} is not a valid run id (1 to 200 characters of A-Z, a-z, 0-9, '.', '_', '+', '-')")]
pub struct InvalidRunId(pub String);

/// Checks a run id: it names files (`report --json`, the results
/// directory), so it is 1 to 200 of `[A-Za-z0-9._+-]` (`+` joins suite
/// names), and neither `.` nor `..`.
pub fn valid_id(id: &str) -> Result<(), InvalidRunId> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+');
    if id.is_empty() || id.len() > 200 || id == "." || id == ".." || !id.chars().all(ok_char) {
        return Err(InvalidRunId(id.chars().take(80).collect()));
    }
    Ok(())
}

/// Checks that `dir` exists (creating it) and accepts files, before any
/// measuring starts. `what` goes there ("results"), chosen by `option`.
pub fn check_writable(dir: &Path, what: &'static str, option: &'static str) -> Result<(), DocumentError> {
    let unwritable = |err| DocumentError::Unwritable { path: dir.to_path_buf(), err, what, option };
    // Every directory on its path this user's or root's, closed to others:
    // what the run then writes or runs there by name stays what it put there.
    crate::base::fsafe::check_dir(dir, true).map_err(|e| unwritable(std::io::Error::other(e.to_string())))?;
    // A randomly named file created exclusively (never a predictable path
    // another user could have planted), removed when dropped.
    tempfile::Builder::new().prefix(".oscycles-probe-").tempfile_in(dir).map_err(unwritable)?;
    Ok(())
}

/// Replaces `path` with `bytes` so that a reader sees the old content or
/// the new, never a part: written beside it, then renamed over it
/// ([`crate::base::fsafe::write_file`]: its directory checked, a link at
/// `path` replaced, never followed).
pub fn write_atomically(path: &Path, bytes: impl AsRef<[u8]>) -> std::io::Result<()> {
    crate::base::fsafe::write_file(path, bytes).map_err(|e| match e {
        crate::base::fsafe::UnsafePath::Io(_, e) => e,
        e => std::io::Error::other(e.to_string()),
    })
}

pub struct RunWriter {
    path: PathBuf,
    pub doc: RunDoc,
    /// Seconds the last write took, counted in by the next.
    unsaved_s: f64,
    /// A round's document ([`RunWriter::create_private`]): written without
    /// indentation, and at most every [`PRIVATE_SAVE_EVERY`] until its end.
    private: bool,
    /// When the document was last written.
    saved_at: std::time::Instant,
}

/// How often a round's own document is written while results come: its
/// process ends in a few seconds (and writes it then, before the next round
/// starts), and the run's process reads it every 5 s at the most while it
/// runs; a round killed outright loses at most this much of its cases.
pub const PRIVATE_SAVE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl RunWriter {
    /// Where the document of `doc` goes in results directory `dir`.
    pub fn path_in(dir: &Path, doc: &RunDoc) -> PathBuf {
        dir.join(format!("{}.json", doc.id))
    }

    pub fn create(dir: &Path, doc: RunDoc) -> Result<Self, DocumentError> {
        Self::create_as(dir, doc, false)
    }

    /// A round's document, which only the run's own process reads: the same
    /// document, written without indentation (pretty-printed, its arrays of
    /// samples take a line per number: the file is about twice as large, and
    /// it is read again by the run's process), and as results come at most
    /// every [`PRIVATE_SAVE_EVERY`] (a round of 0.3 s wrote it nine times,
    /// a tenth of the round), always at its end.
    pub fn create_private(dir: &Path, doc: RunDoc) -> Result<Self, DocumentError> {
        Self::create_as(dir, doc, true)
    }

    fn create_as(dir: &Path, doc: RunDoc, private: bool) -> Result<Self, DocumentError> {
        check_writable(dir, "results", "--results")?;
        let mut w = RunWriter { path: Self::path_in(dir, &doc), doc, unsaved_s: 0.0, private, saved_at: std::time::Instant::now() };
        w.save()?;
        Ok(w)
    }

    /// What this process spent outside its cases, as the document keeps it
    /// (`settings.spent`), for the caller to add to.
    pub fn spent(&mut self) -> &mut Spent {
        self.doc.settings.spent.get_or_insert_default()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the document on disk, counting the write into the
    /// document's `spent`: this write, and the time of the writes before
    /// (a write's own time is known only after it, so the last one's is
    /// not in the file; the document in memory is always the file's).
    fn save(&mut self) -> Result<(), DocumentError> {
        let t = std::time::Instant::now();
        let unsaved = std::mem::take(&mut self.unsaved_s);
        let spent = self.spent();
        spent.writes += 1;
        spent.writes_s += unsaved;
        let unwritable = |err| DocumentError::Unwritable { path: self.path.clone(), err, what: "results", option: "--results" };
        let text = if self.private { serde_json::to_string(&self.doc) } else { serde_json::to_string_pretty(&self.doc) };
        write_atomically(&self.path, text.expect("a run document always serialises")).map_err(unwritable)?;
        self.unsaved_s = t.elapsed().as_secs_f64();
        self.saved_at = std::time::Instant::now();
        Ok(())
    }

    /// Saves the document, a round's only when [`PRIVATE_SAVE_EVERY`] has passed since it last was.
    fn save_soon(&mut self) -> Result<(), DocumentError> {
        if self.private && self.saved_at.elapsed() < PRIVATE_SAVE_EVERY { Ok(()) } else { self.save() }
    }

    /// Adds a result and saves the document: a crash loses nothing measured
    /// (a round's process: nothing older than [`PRIVATE_SAVE_EVERY`]).
    pub fn push(&mut self, r: CaseResult) -> Result<(), DocumentError> {
        self.doc.results.push(r);
        self.save_soon()
    }

    /// Changes the document (a round merged, intervals computed) and saves it
    /// (a round's: as [`RunWriter::push`]).
    pub fn update(&mut self, change: impl FnOnce(&mut RunDoc)) -> Result<(), DocumentError> {
        change(&mut self.doc);
        self.save_soon()
    }

    pub fn finish(&mut self, status: RunStatus) -> Result<(), DocumentError> {
        self.doc.status = status;
        self.doc.finished_at = Some(now_rfc3339());
        self.save()
    }

    /// Ends the run `failed` for `reason` (a write that failed: a full
    /// disk). Saved as usual if it can be; else, in place, the document
    /// in compact JSON (it needs no new space where it is no longer than
    /// the file), or failing that the file's own document with the status
    /// and reason: so that the document does not stay `running`.
    pub fn fail(&mut self, reason: &str) -> Result<(), DocumentError> {
        self.doc.reason = Some(reason.to_string());
        if self.finish(RunStatus::Failed).is_ok() {
            return Ok(());
        }
        let unwritable = |err| DocumentError::Unwritable { path: self.path.clone(), err, what: "results", option: "--results" };
        let mut on_disk = load(&self.path)?;
        (on_disk.status, on_disk.reason, on_disk.finished_at) = (self.doc.status, self.doc.reason.clone(), self.doc.finished_at.clone());
        let mut last = std::io::Error::other("no form of the document fits");
        for d in [&self.doc, &on_disk] {
            let text = serde_json::to_string(d).expect("a run document always serialises");
            match overwrite_in_place(&self.path, text.as_bytes()) {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
        }
        Err(unwritable(last))
    }
}

/// Writes `bytes` over the start of the file at `path` and cuts it there,
/// when they are no longer than the file (no block is added, so this works
/// on a full disk); never through a link. Not atomic: only for a document
/// that could not be replaced whole.
fn overwrite_in_place(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)?;
    let m = f.metadata()?;
    if !m.is_file() || bytes.len() as u64 > m.len() {
        return Err(std::io::Error::other("the document no longer fits in its file"));
    }
    f.write_all_at(bytes, 0)?;
    f.set_len(bytes.len() as u64)?;
    f.sync_data()
}

/// Reads a run document, refusing other documents and other schema versions.
pub fn load(path: &Path) -> Result<RunDoc, DocumentError> {
    parse(path, read_bounded(path)?)
}

/// [`load`], for a command reading documents it was given (which anyone may
/// have written): counted against the bounds of what one command reads
/// ([`charge`]), and its numbers checked ([`crate::data::results::check`]). A run
/// merging its own rounds' documents uses [`load`].
pub fn read(path: &Path) -> Result<RunDoc, DocumentError> {
    let text = read_bounded(path)?;
    charge(path, text.len() as u64, 0)?;
    let doc = parse(path, text)?;
    charge(path, 0, doc.results.len() as u64)?;
    crate::data::results::check::check(&doc).map_err(|err| DocumentError::BadNumber { path: path.into(), err })?;
    Ok(doc)
}

/// A run document from its text (`path` names it in messages): its schema,
/// version and id checked.
pub fn parse_text(path: &Path, text: String) -> Result<RunDoc, DocumentError> {
    parse(path, text)
}

fn parse(path: &Path, text: String) -> Result<RunDoc, DocumentError> {
    // A document of a version this oscycles reads, in one pass straight into
    // its type (a run reads its rounds' documents again and again); anything
    // else through a generic value first, for the error that names what is wrong.
    if let Ok(doc) = serde_json::from_str::<RunDoc>(&text)
        && doc.schema == SCHEMA
        && (OLDEST_SCHEMA_VERSION..=SCHEMA_VERSION).contains(&doc.schema_version)
    {
        valid_id(&doc.id).map_err(|err| DocumentError::BadId { path: path.into(), err })?;
        return Ok(doc);
    }
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| DocumentError::Parse { path: path.into(), err: e.to_string() })?;
    if v.get("schema").and_then(|s| s.as_str()) != Some(SCHEMA) {
        return Err(DocumentError::Parse { path: path.into(), err: format!("no \"schema\": \"{SCHEMA}\" field") });
    }
    let found = v.get("schema_version").and_then(|s| s.as_u64()).unwrap_or(0);
    if !(OLDEST_SCHEMA_VERSION as u64..=SCHEMA_VERSION as u64).contains(&found) {
        return Err(DocumentError::Version { path: path.into(), found });
    }
    let doc: RunDoc = serde_json::from_value(v).map_err(|e| DocumentError::Parse { path: path.into(), err: e.to_string() })?;
    valid_id(&doc.id).map_err(|err| DocumentError::BadId { path: path.into(), err })?;
    Ok(doc)
}

/// The file's text, refusing more than MAX_DOC_BYTES (read with a limit, so
/// `/dev/zero` or a pipe that never ends costs nothing).
fn read_bounded(path: &Path) -> Result<String, DocumentError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let read = |err| DocumentError::Read { path: path.into(), err };
    // Never blocking on a FIFO: opened without waiting, and a FIFO or socket is not read
    // (a device is, under the bound, as a file).
    let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(read)?;
    let m = f.metadata().map_err(read)?;
    if m.is_dir() {
        return Err(read(std::io::Error::other("it is a directory")));
    }
    {
        use std::os::unix::fs::FileTypeExt;
        if m.file_type().is_fifo() || m.file_type().is_socket() {
            return Err(read(std::io::Error::other("it is a FIFO or a socket, not a file")));
        }
    }
    let mut bytes = Vec::new();
    f.take(MAX_DOC_BYTES + 1).read_to_end(&mut bytes).map_err(read)?;
    if bytes.len() as u64 > MAX_DOC_BYTES {
        return Err(DocumentError::TooLarge { path: path.into() });
    }
    String::from_utf8(bytes).map_err(|e| DocumentError::Parse { path: path.into(), err: e.to_string() })
}
