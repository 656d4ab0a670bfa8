//! The store of runs: every run document also goes into an embedded SQLite
//! database (by default `oscycles.sqlite` beside the JSON results), so runs
//! from many kernels and machines can be listed and queried. The JSON file
//! stays the format of record: the database keeps each document whole, plus
//! one row per case and metric for queries.

use crate::results::{CaseStatus, RunDoc, params_label};
use rusqlite::{Connection, params};
use std::path::{Path, PathBuf};
use thiserror::Error;

pub const DEFAULT_NAME: &str = "oscycles.sqlite";

#[derive(Debug, Error)]
pub enum DbError {
    #[error("cannot open the run store '{path}': {err}")]
    Open { path: PathBuf, err: rusqlite::Error },
    #[error("run '{0}' is already in the store")]
    Duplicate(String),
    #[error("run store: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("run store: a stored document does not parse: {0}")]
    Document(String),
}

pub struct Db {
    conn: Connection,
}

/// One line of `oscycles runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: String,
    pub started_at: String,
    pub status: String,
    pub hostname: String,
    pub kernel: String,
    pub environment: String,
    pub suites: String,
    pub cases: i64,
    pub source: String,
}

/// What `oscycles runs` filters on (substring matches; `since` compares dates).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub suite: Option<String>,
    pub host: Option<String>,
    pub environment: Option<String>,
    pub since: Option<String>,
}

impl Db {
    /// Opens (creating) the store, then records as `killed` every run of this
    /// machine still marked `running` whose process is gone.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        let db = Db::open_only(path)?;
        db.mark_killed()?;
        Ok(db)
    }

    /// Checks that `path` can serve as a store: an SQLite database, or a file
    /// that does not exist yet in a directory that does. A sentence if not.
    pub fn check_path(path: &Path) -> Result<(), String> {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return Err(format!("--db '{}' is a directory; give the path of an SQLite file", path.display())),
            Ok(_) => {}
            Err(_) => return Ok(()),
        }
        let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| format!("--db '{}' cannot be opened as an SQLite store: {e}", path.display()))?;
        conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))
            .map_err(|e| format!("--db '{}' is not an oscycles run store (an SQLite database): {e}", path.display()))?;
        Ok(())
    }

    fn open_only(path: &Path) -> Result<Db, DbError> {
        let conn = Connection::open(path).map_err(|err| DbError::Open { path: path.to_path_buf(), err })?;
        // Several oscycles may write one store at once: wait for a writer
        // instead of failing with "database is locked".
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS runs (
                 id TEXT PRIMARY KEY, started_at TEXT, finished_at TEXT, status TEXT, hostname TEXT,
                 cpu_model TEXT, kernel TEXT, environment TEXT, load TEXT, isolation TEXT, suites TEXT,
                 tool_version TEXT, source TEXT, document TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS results (
                 run_id TEXT NOT NULL REFERENCES runs(id), idx INTEGER, suite TEXT, benchmark TEXT, family TEXT,
                 params TEXT, status TEXT, reason TEXT, environment TEXT, load TEXT, isolation TEXT,
                 metric TEXT, unit TEXT, n INTEGER, min REAL, median REAL, mean REAL, p99 REAL, max REAL, cv REAL);
             CREATE INDEX IF NOT EXISTS results_bench ON results(benchmark);",
        )?;
        Ok(Db { conn })
    }

    /// Runs of this host marked `running` whose process no longer lives are
    /// re-read from their JSON (which holds every result saved before the
    /// end) and stored as `killed`.
    fn mark_killed(&self) -> Result<(), DbError> {
        let mut st = self.conn.prepare("SELECT document, source FROM runs WHERE status = 'running'")?;
        let rows: Vec<(String, String)> = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        drop(st);
        let host = crate::host::hostname();
        for (text, source) in rows {
            let Ok(stored) = serde_json::from_str::<RunDoc>(&text) else { continue };
            let Some(owner) = &stored.owner else { continue };
            if stored.host.hostname != host || owner.alive() {
                continue;
            }
            let mut doc = crate::store::load(Path::new(&source)).ok().filter(|d| d.id == stored.id).unwrap_or(stored);
            doc.status = crate::results::RunStatus::Killed;
            doc.owner = None;
            // The JSON is the record: say it there too, when it is ours to say.
            if Path::new(&source).is_file() {
                let _ = crate::store::write_atomically(Path::new(&source), serde_json::to_string_pretty(&doc).unwrap_or_default());
            }
            self.write(&doc, &source)?;
        }
        Ok(())
    }

    /// Whether a run with this id is stored.
    pub fn contains(&self, id: &str) -> Result<bool, DbError> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM runs WHERE id = ?1", [id], |r| r.get::<_, i64>(0))? > 0)
    }

    /// Stores a run (refused if its id is there already); `source` says where it came from.
    pub fn insert(&mut self, doc: &RunDoc, source: &str) -> Result<(), DbError> {
        if self.contains(&doc.id)? {
            return Err(DbError::Duplicate(doc.id.clone()));
        }
        self.write(doc, source)
    }

    /// Stores a run, replacing an earlier state of the same run.
    pub fn upsert(&mut self, doc: &RunDoc, source: &str) -> Result<(), DbError> {
        self.write(doc, source)
    }

    /// Stores several runs, all or none: a duplicate among them stores nothing.
    pub fn insert_all(&mut self, docs: &[(&RunDoc, String)]) -> Result<(), DbError> {
        let tx = self.conn.transaction()?;
        for (doc, source) in docs {
            if tx.query_row("SELECT COUNT(*) FROM runs WHERE id = ?1", [&doc.id], |r| r.get::<_, i64>(0))? > 0 {
                return Err(DbError::Duplicate(doc.id.clone()));
            }
            write_in(&tx, doc, source)?;
        }
        tx.commit()?;
        Ok(())
    }

    fn write(&self, doc: &RunDoc, source: &str) -> Result<(), DbError> {
        let tx = self.conn.unchecked_transaction()?;
        write_in(&tx, doc, source)?;
        tx.commit()?;
        Ok(())
    }

    /// The stored document of run `id`.
    pub fn load(&self, id: &str) -> Result<Option<RunDoc>, DbError> {
        let mut st = self.conn.prepare("SELECT document FROM runs WHERE id = ?1")?;
        let mut rows = st.query([id])?;
        match rows.next()? {
            Some(r) => {
                let text: String = r.get(0)?;
                serde_json::from_str(&text).map(Some).map_err(|e| DbError::Document(e.to_string()))
            }
            None => Ok(None),
        }
    }

    /// The stored runs, newest first, filtered.
    pub fn list(&self, f: &Filter) -> Result<Vec<RunRow>, DbError> {
        let like = |o: &Option<String>| format!("%{}%", o.clone().unwrap_or_default());
        let mut st = self.conn.prepare(
            "SELECT r.id, r.started_at, r.status, r.hostname, r.kernel, r.environment, r.suites, r.source,
                    (SELECT COUNT(DISTINCT idx) FROM results WHERE run_id = r.id)
             FROM runs r
             WHERE r.suites LIKE ?1 AND r.hostname LIKE ?2 AND r.environment LIKE ?3 AND r.started_at >= ?4
             ORDER BY r.started_at DESC, r.id",
        )?;
        let rows =
            st.query_map(params![like(&f.suite), like(&f.host), like(&f.environment), f.since.clone().unwrap_or_default()], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    status: r.get(2)?,
                    hostname: r.get(3)?,
                    kernel: r.get(4)?,
                    environment: r.get(5)?,
                    suites: r.get(6)?,
                    source: r.get(7)?,
                    cases: r.get(8)?,
                })
            })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Rows in the results table for a run (one per case and metric).
    pub fn result_rows(&self, id: &str) -> Result<i64, DbError> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM results WHERE run_id = ?1", [id], |r| r.get(0))?)
    }
}

/// One run's rows, inside the caller's transaction (replacing an earlier
/// state of the same run).
fn write_in(tx: &rusqlite::Transaction, doc: &RunDoc, source: &str) -> Result<(), DbError> {
    tx.execute("DELETE FROM results WHERE run_id = ?1", [&doc.id])?;
    tx.execute("DELETE FROM runs WHERE id = ?1", [&doc.id])?;
    let json = serde_json::to_string(doc).map_err(|e| DbError::Document(e.to_string()))?;
    tx.execute(
        "INSERT INTO runs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            doc.id,
            doc.started_at,
            doc.finished_at,
            format!("{:?}", doc.status).to_lowercase(),
            doc.host.hostname,
            doc.host.cpu_model,
            doc.host.kernel_release,
            doc.environment.name,
            doc.condition.load,
            doc.condition.isolation,
            doc.settings.suites.join(","),
            doc.tool.version,
            source,
            json
        ],
    )?;
    {
        let mut st = tx.prepare(
            "INSERT INTO results VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
        )?;
        for (i, r) in doc.results.iter().enumerate() {
            let (load, iso) = r.load_isolation(doc);
            let status = match r.status {
                CaseStatus::Ok => "ok",
                CaseStatus::NotApplicable => "not_applicable",
                CaseStatus::Failed => "failed",
            };
            let metrics: Vec<Option<&crate::results::Metric>> =
                if r.metrics.is_empty() { vec![None] } else { r.metrics.iter().map(Some).collect() };
            for m in metrics {
                let s = m.map(|m| &m.summary);
                st.execute(params![
                    doc.id,
                    i as i64,
                    r.suite,
                    r.benchmark,
                    r.family,
                    params_label(&r.params),
                    status,
                    r.reason,
                    r.env(doc),
                    load,
                    iso,
                    m.map(|m| m.name.clone()),
                    m.map(|m| m.unit.clone()),
                    s.map(|s| s.n as i64),
                    s.map(|s| s.min),
                    s.map(|s| s.median),
                    s.map(|s| s.mean),
                    s.map(|s| s.p99),
                    s.map(|s| s.max),
                    s.map(|s| s.cv),
                ])?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> RunDoc {
        serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run.json")).unwrap()).unwrap()
    }

    #[test]
    fn the_database_and_the_json_agree() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("db-test.sqlite");
        let doc = fixture();
        let mut db = Db::open(&path).unwrap();
        db.insert(&doc, "test").unwrap();
        assert_eq!(db.load(&doc.id).unwrap().as_ref(), Some(&doc), "the stored document is the document");
        let rows: i64 = doc.results.iter().map(|r| r.metrics.len().max(1) as i64).sum();
        assert_eq!(db.result_rows(&doc.id).unwrap(), rows, "one row per case and metric");
        assert!(matches!(db.insert(&doc, "again"), Err(DbError::Duplicate(_))));
        let listed = db.list(&Filter::default()).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].cases, doc.results.len() as i64);
        assert!(db.list(&Filter { host: Some("no-such-host".into()), ..Default::default() }).unwrap().is_empty());
        db.upsert(&doc, "replaced").unwrap();
        assert_eq!(db.list(&Filter::default()).unwrap()[0].source, "replaced");
        drop(db);
        std::fs::remove_file(&path).unwrap();
    }
}
