//! The commands of the `oscycles` binary, one module per group of commands
//! that share their inputs: `run` (and the processes a run starts: rounds,
//! environment children, a guest's /init) measures a run spec; `show` looks
//! at one thing (the registry, a run, this machine); `compare` sets runs
//! against each other or against baselines; `store` moves runs in and out of
//! the store (runs, import, report); `load` runs the background loads. They
//! are the binary's, not the library's: they print, and their errors are
//! `anyhow` with context, which `main` maps to exit codes.

pub mod compare;
pub mod fleet;
pub mod history;
pub mod load;
pub mod run;
pub mod show;
pub mod store;

use anyhow::Result;
use oscycles::app::cli::UsageError;
use oscycles::data::db::Location;
use oscycles::data::documents as docs;
use oscycles::data::results::RunDoc;
use std::path::{Path, PathBuf};

/// A run document to show or compare. A run that ended mid-round (killed)
/// has raw samples but no intervals yet: they are computed here.
pub fn read_doc(path: &Path) -> Result<RunDoc, UsageError> {
    let mut doc = docs::read(path).map_err(|e| UsageError(e.to_string()))?;
    if doc.results.iter().flat_map(|r| &r.metrics).any(|m| !m.samples.is_empty() && m.estimate.is_none()) {
        let seed = oscycles::data::compare::seed_of(&doc.id);
        oscycles::run::rounds::estimate_all(&mut doc, seed);
    }
    Ok(doc)
}

/// Opens the store at `loc`; a file that is not one is a usage error, and
/// so is a store that refuses (a server that cannot be reached, a store
/// migrated by a newer oscycles).
pub fn open_db(loc: &Location) -> Result<oscycles::data::db::Db> {
    loc.check().map_err(|e| UsageError(e.to_string()))?;
    oscycles::data::db::Db::open(loc).map_err(db_error)
}

/// A store's error as the binary reports it: what the user can change (a
/// store that is not one, too much asked of it) is a usage error.
pub fn db_error(e: oscycles::data::db::DbError) -> anyhow::Error {
    match e {
        oscycles::data::db::DbError::Open(..) | oscycles::data::db::DbError::Newer(..) | oscycles::data::db::DbError::Bounded(..) => {
            UsageError(e.to_string()).into()
        }
        e => anyhow::Error::new(e),
    }
}

/// `--db`: a PostgreSQL URL or an SQLite file, by default
/// oscycles-results/oscycles.sqlite.
pub fn default_db(db: Option<PathBuf>) -> Location {
    Location::parse(&db.unwrap_or_else(|| PathBuf::from("oscycles-results").join(oscycles::data::db::DEFAULT_NAME)))
}

/// The private directory every file of a run (or of `oscycles load`) lives
/// in, under `base`; what dead runs left there is removed first, and said.
pub fn private_dir(base: &Path) -> Result<oscycles::measure::scratch::RunDir, UsageError> {
    let (dir, reaped) = oscycles::measure::scratch::RunDir::create(base)
        .map_err(|e| UsageError(format!("cannot make a private directory in '{}' (--scratch): {e}", base.display())))?;
    for line in reaped {
        eprintln!("oscycles: {line}");
    }
    Ok(dir)
}
