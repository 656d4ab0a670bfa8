//! The schema of the store of runs as versioned steps, and applying the
//! ones a store lacks (see the folder's notes on migrations).

use super::{Backend, DbError};

/// The versioned steps of the schema, in both dialects. Never edit a step
/// that has shipped: add one.
pub const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        "CREATE TABLE IF NOT EXISTS runs (
             id TEXT PRIMARY KEY, started_at TEXT, finished_at TEXT, status TEXT, hostname TEXT,
             cpu_model TEXT, kernel TEXT, environment TEXT, load TEXT, isolation TEXT, suites TEXT,
             tool_version TEXT, source TEXT, document TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS results (
             run_id TEXT NOT NULL REFERENCES runs(id), idx BIGINT, suite TEXT, benchmark TEXT, family TEXT,
             params TEXT, status TEXT, reason TEXT, environment TEXT, load TEXT, isolation TEXT,
             metric TEXT, unit TEXT, n BIGINT, min DOUBLE PRECISION, median DOUBLE PRECISION, mean DOUBLE PRECISION,
             p99 DOUBLE PRECISION, max DOUBLE PRECISION, cv DOUBLE PRECISION);
         CREATE INDEX IF NOT EXISTS results_bench ON results(benchmark)",
    ),
    (
        2,
        "ALTER TABLE runs ADD COLUMN label TEXT;
         ALTER TABLE runs ADD COLUMN fleet TEXT;
         ALTER TABLE runs ADD COLUMN schema_version BIGINT;
         CREATE UNIQUE INDEX runs_fleet_label ON runs(fleet, label) WHERE fleet IS NOT NULL AND label IS NOT NULL;
         CREATE INDEX runs_fleet ON runs(fleet);
         CREATE INDEX results_run ON results(run_id)",
    ),
    (
        3,
        // A cell's history (`report --history`) reads these instead of whole
        // documents: the interval of the median, which way the metric
        // improves, and the raw samples per round (JSON) that steps are judged on.
        "ALTER TABLE results ADD COLUMN lo DOUBLE PRECISION;
         ALTER TABLE results ADD COLUMN hi DOUBLE PRECISION;
         ALTER TABLE results ADD COLUMN better TEXT;
         ALTER TABLE results ADD COLUMN samples TEXT;
         CREATE INDEX results_cell ON results(benchmark, metric, run_id)",
    ),
];

/// Applies the steps of [`MIGRATIONS`] the store lacks.
pub(super) fn migrate(b: &mut dyn Backend, name: &str) -> Result<(), DbError> {
    b.transaction(&mut |c| {
        c.lock_schema()?;
        c.exec("CREATE TABLE IF NOT EXISTS oscycles_migrations (version BIGINT PRIMARY KEY, applied_at TEXT)", &[])?;
        let done: Vec<i64> = c.query("SELECT version FROM oscycles_migrations", &[])?.iter().filter_map(|r| r[0].int()).collect();
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        if let Some(&v) = done.iter().find(|&&v| v > known) {
            return Err(DbError::Newer(name.to_string(), v, known));
        }
        for (v, sql) in MIGRATIONS.iter().filter(|m| !done.contains(&m.0)) {
            for stmt in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                c.exec(stmt, &[])?;
            }
            c.exec(
                "INSERT INTO oscycles_migrations (version, applied_at) VALUES ($1, $2)",
                &[(*v).into(), crate::data::results::now_rfc3339().into()],
            )?;
        }
        Ok(())
    })
}
