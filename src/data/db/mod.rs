//! The store of runs: every run document also goes into a database, so runs
//! from many kernels and machines can be listed, queried and laid side by
//! side. Two backends behind one trait ([`Backend`]): an embedded SQLite
//! file (the default, `oscycles.sqlite` beside the JSON results) and a
//! shared PostgreSQL server (`--db postgres://...`), for fleets whose hosts
//! and controllers write one store. The JSON file stays the format of
//! record: the database keeps each document whole, plus one row per case
//! and metric for queries.
//!
//! A backend only runs SQL inside a transaction ([`Conn`]); everything else
//! is written once here, in SQL both dialects accept (`$N` parameters in
//! order of first use, BIGINT, DOUBLE PRECISION, TEXT): the migrations, the
//! import rules, the queries.
//!
//! Migrations: [`migrations::MIGRATIONS`] is a list of versioned steps; a table
//! `oscycles_migrations` holds the versions applied. Opening a store applies
//! the missing steps in one transaction, under the backend's schema lock (an
//! immediate transaction in SQLite, an advisory lock in PostgreSQL), so
//! several processes opening a new store at once apply each step once. A
//! store migrated by a newer oscycles (a version this one does not know) is
//! refused rather than written wrongly. Step 1 is the schema of the first
//! stores, written with `IF NOT EXISTS`: a store made before migrations
//! existed is adopted as it is.
//!
//! Import rules ([`Db::import`]): idempotent by run id (the same document
//! again adds nothing and says so; a different document under an id already
//! stored is refused), a host label appears once per fleet, all or nothing
//! per call, and safe with many writers: each import is one transaction; in
//! PostgreSQL two importers of the same new id race to the primary key and
//! the loser's unique violation makes it retry, when it finds the winner's
//! row and applies the rules above.

pub mod history;
mod import;
mod killed;
pub mod migrations;
pub mod postgres;
pub mod sqlite;

use crate::data::results::RunDoc;
use std::path::{Path, PathBuf};
use thiserror::Error;

use import::{import_one, write_in};
use migrations::migrate;

pub const DEFAULT_NAME: &str = "oscycles.sqlite";

#[derive(Debug, Error)]
pub enum DbError {
    #[error("cannot open the run store '{0}': {1}")]
    Open(String, String),
    #[error("run '{0}' is already in the store")]
    Duplicate(String),
    #[error("run '{0}' is already in the store with different contents; refused (a run id names one document)")]
    Conflict(String),
    #[error("fleet '{fleet}' already has a run labelled '{label}' ({other}); refused (labels name one host per fleet)")]
    LabelTaken { fleet: String, label: String, other: String },
    #[error("run store: {0}")]
    Sql(String),
    /// A unique index refused a row another writer inserted at the same
    /// time (PostgreSQL); the import retries.
    #[error("run store: {0}")]
    Race(String),
    #[error("run store: a stored document does not parse: {0}")]
    Document(String),
    #[error("run store: {0}")]
    Bounded(String),
    #[error("the run store '{0}' was migrated by a newer oscycles (version {1}, this one knows {2}); use that oscycles")]
    Newer(String, i64, i64),
}

/// A value bound to or read from SQL; nulls keep their type (PostgreSQL
/// needs it).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Text(Option<String>),
    Int(Option<i64>),
    Real(Option<f64>),
}

impl Value {
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(t) => t.as_deref(),
            _ => None,
        }
    }
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => *i,
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(Some(s.to_string()))
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(Some(s))
    }
}
impl From<Option<String>> for Value {
    fn from(s: Option<String>) -> Self {
        Value::Text(s)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(Some(i))
    }
}

/// SQL inside one transaction of a backend.
pub trait Conn {
    /// Runs one statement; the rows it changed.
    fn exec(&mut self, sql: &str, args: &[Value]) -> Result<u64, DbError>;
    /// The rows of one query.
    fn query(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Vec<Value>>, DbError>;
    /// Holds the lock that serializes migrations until the transaction ends.
    fn lock_schema(&mut self) -> Result<(), DbError>;
}

/// A database the store lives in.
pub trait Backend {
    /// Runs `f` in one transaction: committed when it returns Ok, rolled
    /// back otherwise. Writers wait for each other rather than fail.
    fn transaction(&mut self, f: &mut dyn FnMut(&mut dyn Conn) -> Result<(), DbError>) -> Result<(), DbError>;
}

/// Where a store is: an SQLite file, or a PostgreSQL URL.
#[derive(Debug, Clone, PartialEq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// `--db`: a `postgres://` or `postgresql://` URL, else an SQLite file.
    pub fn parse(db: &Path) -> Location {
        match db.to_str() {
            Some(s) if s.starts_with("postgres://") || s.starts_with("postgresql://") => Location::Postgres(s.to_string()),
            _ => Location::Sqlite(db.to_path_buf()),
        }
    }

    /// Whether the location can serve as a store (an SQLite file: an SQLite
    /// database or a file yet to be made; a URL: checked when connecting). A
    /// sentence if not.
    pub fn check(&self) -> Result<(), sqlite::PathError> {
        match self {
            Location::Sqlite(p) => sqlite::check_path(p),
            Location::Postgres(_) => Ok(()),
        }
    }

    /// Whether there is a store there already (a URL: assumed).
    pub fn exists(&self) -> bool {
        match self {
            Location::Sqlite(p) => p.exists(),
            Location::Postgres(_) => true,
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            // A password in the URL is not printed.
            Location::Postgres(u) => write!(f, "{}", postgres::redact(u)),
        }
    }
}

/// A store: a backend with the migrations applied.
pub struct Db {
    backend: Box<dyn Backend>,
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

/// What an import did: the runs it added, and those already there as they are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    pub added: Vec<String>,
    pub unchanged: Vec<String>,
}

/// The columns of `runs` a document fills, in order.
impl Db {
    /// Opens (creating and migrating) the store, then records as `killed`
    /// every run of this machine still marked `running` whose process is gone.
    pub fn open(loc: &Location) -> Result<Db, DbError> {
        let backend: Box<dyn Backend> = match loc {
            Location::Sqlite(p) => Box::new(sqlite::Sqlite::open(p)?),
            Location::Postgres(u) => Box::new(postgres::Postgres::open(u)?),
        };
        let mut db = Db { backend };
        migrate(db.backend.as_mut(), &loc.to_string())?;
        // A write a reader does on the side: a store that cannot take it
        // (a full disk) is still read.
        if let Err(e) = db.mark_killed(matches!(loc, Location::Sqlite(_))) {
            eprintln!("oscycles: warning: runs whose process died are not yet marked killed in the store: {e}");
        }
        Ok(db)
    }

    /// Opens an SQLite store at `path` (tests and callers with a path).
    pub fn open_path(path: &Path) -> Result<Db, DbError> {
        Db::open(&Location::Sqlite(path.to_path_buf()))
    }

    /// The rows of one query in its own transaction.
    fn query(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        let mut out = Vec::new();
        self.backend.transaction(&mut |c| {
            out = c.query(sql, args)?;
            Ok(())
        })?;
        Ok(out)
    }

    /// Runs of this host marked `running` whose process no longer lives are
    /// stored as `killed`; their JSON (which holds every result saved before
    /// the end) is read and rewritten only when it is this user's own
    /// document of the run ([`killed::own_document`]), and only for a store
    /// of files (`files`), never for rows a server shared by a fleet holds.
    fn mark_killed(&mut self, files: bool) -> Result<(), DbError> {
        let rows = self.query("SELECT document, source FROM runs WHERE status = 'running'", &[])?;
        let host = crate::measure::host::hostname();
        for row in rows {
            let (Some(text), source) = (row[0].text(), row[1].text().unwrap_or_default().to_string()) else { continue };
            let Ok(stored) = serde_json::from_str::<RunDoc>(text) else { continue };
            let Some(owner) = &stored.owner else { continue };
            if stored.host.hostname != host || owner.alive() {
                continue;
            }
            let own = if files { killed::own_document(&source, &stored) } else { None }
                .filter(|(_, _, d)| crate::data::results::check::check(d).is_ok());
            let mut doc = own.as_ref().map_or_else(|| stored.clone(), |(_, _, d)| d.clone());
            doc.status = crate::data::results::RunStatus::Killed;
            doc.owner = None;
            if let Some((dir, name, _)) = &own
                && let Ok(text) = serde_json::to_string_pretty(&doc)
            {
                let _ = dir.write(name, text);
            }
            self.upsert(&doc, &source)?;
        }
        Ok(())
    }

    /// Whether a run with this id is stored.
    pub fn contains(&mut self, id: &str) -> Result<bool, DbError> {
        Ok(!self.query("SELECT id FROM runs WHERE id = $1", &[id.into()])?.is_empty())
    }

    /// Stores a run (refused if its id is there already); `source` says where it came from.
    pub fn insert(&mut self, doc: &RunDoc, source: &str) -> Result<(), DbError> {
        if self.contains(&doc.id)? {
            return Err(DbError::Duplicate(doc.id.clone()));
        }
        self.upsert(doc, source)
    }

    /// Stores a run, replacing an earlier state of the same run (a run
    /// recording itself case by case).
    pub fn upsert(&mut self, doc: &RunDoc, source: &str) -> Result<(), DbError> {
        self.backend.transaction(&mut |c| {
            c.exec("DELETE FROM results WHERE run_id = $1", &[doc.id.as_str().into()])?;
            c.exec("DELETE FROM runs WHERE id = $1", &[doc.id.as_str().into()])?;
            write_in(c, doc, source)
        })
    }

    /// Imports runs, all or none, by the rules of the module: a run already
    /// stored as it is adds nothing; one stored with other contents, or a
    /// label its fleet already has for another run, refuses the whole import.
    pub fn import(&mut self, docs: &[(&RunDoc, String)]) -> Result<Imported, DbError> {
        let mut tries = 0;
        loop {
            let mut out = Imported::default();
            let r = self.backend.transaction(&mut |c| {
                out = Imported::default();
                for (doc, source) in docs {
                    if import_one(c, doc, source)? {
                        out.added.push(doc.id.clone());
                    } else {
                        out.unchanged.push(doc.id.clone());
                    }
                }
                Ok(())
            });
            match r {
                Err(DbError::Race(_)) if tries < 5 => tries += 1,
                Err(e) => return Err(e),
                Ok(()) => return Ok(out),
            }
        }
    }

    /// The stored document of run `id`.
    pub fn load(&mut self, id: &str) -> Result<Option<RunDoc>, DbError> {
        let rows = self.query("SELECT document FROM runs WHERE id = $1", &[id.into()])?;
        let doc = rows.first().and_then(|r| r[0].text()).map(parse_doc).transpose()?;
        // A store whose row answers for another run is refused (issue 43, item 17).
        match doc {
            Some(d) if d.id != id => Err(DbError::Document(format!(
                "the row of run '{id}' holds the document of run '{}'; refused (the store was changed by hand?)",
                d.id.chars().take(80).collect::<String>()
            ))),
            d => Ok(d),
        }
    }

    /// Every stored document, or those of one fleet, by label then start.
    pub fn documents(&mut self, fleet: Option<&str>) -> Result<Vec<RunDoc>, DbError> {
        let rows = match fleet {
            Some(f) => self.query("SELECT document FROM runs WHERE fleet = $1 ORDER BY label, started_at, id", &[f.into()])?,
            None => self.query("SELECT document FROM runs ORDER BY label, started_at, id", &[])?,
        };
        rows.iter().filter_map(|r| r[0].text()).map(parse_doc).collect()
    }

    /// The stored runs, newest first, filtered.
    pub fn list(&mut self, f: &Filter) -> Result<Vec<RunRow>, DbError> {
        let like = |o: &Option<String>| Value::from(format!("%{}%", o.clone().unwrap_or_default()));
        let rows = self.query(
            "SELECT r.id, r.started_at, r.status, r.hostname, r.kernel, r.environment, r.suites, r.source,
                    (SELECT COUNT(DISTINCT idx) FROM results WHERE run_id = r.id)
             FROM runs r
             WHERE r.suites LIKE $1 AND r.hostname LIKE $2 AND r.environment LIKE $3 AND r.started_at >= $4
             ORDER BY r.started_at DESC, r.id",
            &[like(&f.suite), like(&f.host), like(&f.environment), f.since.clone().unwrap_or_default().into()],
        )?;
        let s = |v: &Value| v.text().unwrap_or_default().to_string();
        Ok(rows
            .iter()
            .map(|r| RunRow {
                id: s(&r[0]),
                started_at: s(&r[1]),
                status: s(&r[2]),
                hostname: s(&r[3]),
                kernel: s(&r[4]),
                environment: s(&r[5]),
                suites: s(&r[6]),
                source: s(&r[7]),
                cases: r[8].int().unwrap_or(0),
            })
            .collect())
    }

    /// Rows in the results table for a run (one per case and metric).
    pub fn result_rows(&mut self, id: &str) -> Result<i64, DbError> {
        Ok(self.query("SELECT COUNT(*) FROM results WHERE run_id = $1", &[id.into()])?.first().and_then(|r| r[0].int()).unwrap_or(0))
    }
}

/// A stored document, read under the bounds of [`crate::data::documents::charge`]
/// and checked as a file would be.
fn parse_doc(text: &str) -> Result<RunDoc, DbError> {
    let bounded = |e: crate::data::documents::DocumentError| DbError::Bounded(e.to_string());
    crate::data::documents::charge(Path::new("the store"), text.len() as u64, 0).map_err(bounded)?;
    let doc: RunDoc = serde_json::from_str(text).map_err(|e| DbError::Document(e.to_string()))?;
    crate::data::documents::charge(Path::new(&doc.id), 0, doc.results.len() as u64).map_err(bounded)?;
    crate::data::results::check::check(&doc).map_err(|e| DbError::Document(format!("run '{}': {e}", doc.id)))?;
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::migrations::MIGRATIONS;
    use super::*;

    use crate::data::results::fixture;

    /// The rules every backend keeps (the PostgreSQL test runs them too).
    pub(crate) fn store_rules(db: &mut Db) {
        let doc = fixture();
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
        // Import: the same document adds nothing; another under its id is refused, and so is all of its import.
        let same = db.import(&[(&doc, "again".into())]).unwrap();
        assert_eq!(same, Imported { added: vec![], unchanged: vec![doc.id.clone()] });
        let mut other = doc.clone();
        other.started_at = "2000-01-01T00:00:00Z".into();
        let mut fresh = doc.clone();
        fresh.id = "fresh-run".into();
        assert!(matches!(db.import(&[(&fresh, "x".into()), (&other, "x".into())]), Err(DbError::Conflict(_))));
        assert!(!db.contains("fresh-run").unwrap(), "all or nothing");
        // One label per fleet.
        let (mut a, mut b) = (doc.clone(), doc.clone());
        (a.id, b.id) = ("fleet-a".into(), "fleet-b".into());
        for d in [&mut a, &mut b] {
            (d.fleet, d.label) = (Some("f1".into()), Some("h1".into()));
        }
        assert_eq!(db.import(&[(&a, "x".into())]).unwrap().added, vec!["fleet-a".to_string()]);
        assert!(matches!(db.import(&[(&b, "x".into())]), Err(DbError::LabelTaken { .. })));
        assert_eq!(db.documents(Some("f1")).unwrap(), vec![a]);
        assert_eq!(db.documents(None).unwrap().len(), 2);
    }

    #[test]
    fn the_sqlite_store_keeps_the_rules() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("db-test.sqlite");
        store_rules(&mut Db::open_path(&path).unwrap());
        // Opening again applies no step twice.
        let mut db = Db::open_path(&path).unwrap();
        assert_eq!(db.query("SELECT COUNT(*) FROM oscycles_migrations", &[]).unwrap()[0][0].int(), Some(MIGRATIONS.len() as i64));
    }

    #[test]
    fn a_store_from_before_migrations_is_adopted_and_a_newer_one_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("old.sqlite");
        let conn = rusqlite::Connection::open(&path).unwrap();
        let first = MIGRATIONS[0].1.replace("BIGINT", "INTEGER").replace("DOUBLE PRECISION", "REAL");
        conn.execute_batch(&first).unwrap();
        drop(conn);
        let mut db = Db::open_path(&path).unwrap();
        db.insert(&fixture(), "test").unwrap();
        db.upsert(&fixture(), "test").unwrap();
        let mut newer = rusqlite::Connection::open(&path).unwrap();
        newer.execute("INSERT INTO oscycles_migrations VALUES (999, 'x')", []).unwrap();
        drop(newer.transaction().unwrap());
        assert!(matches!(Db::open_path(&path), Err(DbError::Newer(_, 999, _))));
    }
}
