//! Importing a run document into the store of runs: the import rules
//! (idempotent by run id, a conflicting document refused) and the rows a
//! run is written as, in SQL both dialects accept.

use super::{Conn, DbError, Value, history, parse_doc};
use crate::data::results::{CaseStatus, RunDoc, params_label};

const RUN_COLUMNS: &str = "id, started_at, finished_at, status, hostname, cpu_model, kernel, environment, load, isolation, suites, \
                           tool_version, source, document, label, fleet, schema_version";
const RESULT_COLUMNS: &str = "run_id, idx, suite, benchmark, family, params, status, reason, environment, load, isolation, \
                              metric, unit, n, min, median, mean, p99, max, cv, lo, hi, better, samples";

fn placeholders(n: usize) -> String {
    (1..=n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// The document as the store compares it: its canonical JSON.
fn canonical(doc: &RunDoc) -> Result<String, DbError> {
    serde_json::to_string(doc).map_err(|e| DbError::Document(e.to_string()))
}

/// One run of an import: stored (true), already there as it is (false), or refused.
pub(super) fn import_one(c: &mut dyn Conn, doc: &RunDoc, source: &str) -> Result<bool, DbError> {
    if let Some(row) = c.query("SELECT document FROM runs WHERE id = $1", &[doc.id.as_str().into()])?.first() {
        let stored = parse_doc(row[0].text().unwrap_or_default())?;
        return if canonical(&stored)? == canonical(doc)? { Ok(false) } else { Err(DbError::Conflict(doc.id.clone())) };
    }
    if let (Some(fleet), Some(label)) = (&doc.fleet, &doc.label) {
        let other = c.query("SELECT id FROM runs WHERE fleet = $1 AND label = $2", &[fleet.as_str().into(), label.as_str().into()])?;
        if let Some(o) = other.first() {
            let other = o[0].text().unwrap_or_default().to_string();
            return Err(DbError::LabelTaken { fleet: fleet.clone(), label: label.clone(), other });
        }
    }
    write_in(c, doc, source)?;
    Ok(true)
}

/// One run's rows, inserted inside the caller's transaction. Never a
/// delete here: an import that raced another importer of the same run must
/// collide on the runs table's unique id (retried, then found stored), not
/// delete the other's committed run under its results (PostgreSQL's read
/// committed snapshot is per statement).
pub(super) fn write_in(c: &mut dyn Conn, doc: &RunDoc, source: &str) -> Result<(), DbError> {
    let run: Vec<Value> = vec![
        doc.id.as_str().into(),
        doc.started_at.as_str().into(),
        doc.finished_at.clone().into(),
        format!("{:?}", doc.status).to_lowercase().into(),
        doc.host.hostname.as_str().into(),
        doc.host.cpu_model.as_str().into(),
        doc.host.kernel_release.as_str().into(),
        doc.environment.name.as_str().into(),
        doc.condition.load.as_str().into(),
        doc.condition.isolation_label().as_ref().into(),
        doc.settings.suites.join(",").into(),
        doc.tool.version.as_str().into(),
        source.into(),
        canonical(doc)?.into(),
        doc.label.clone().into(),
        doc.fleet.clone().into(),
        i64::from(doc.schema_version).into(),
    ];
    c.exec(&format!("INSERT INTO runs ({RUN_COLUMNS}) VALUES ({})", placeholders(run.len())), &run)?;
    let insert = format!("INSERT INTO results ({RESULT_COLUMNS}) VALUES ({})", placeholders(24));
    for (i, r) in doc.results.iter().enumerate() {
        let (load, iso) = r.load_isolation(doc);
        let status = match r.status {
            CaseStatus::Ok => "ok",
            CaseStatus::NotApplicable => "not_applicable",
            CaseStatus::Failed => "failed",
        };
        let metrics: Vec<Option<&crate::data::results::Metric>> =
            if r.metrics.is_empty() { vec![None] } else { r.metrics.iter().map(Some).collect() };
        for m in metrics {
            let s = m.map(|m| &m.summary);
            let real = |f: fn(&crate::analysis::stats::Summary) -> f64| Value::Real(s.map(f));
            let mut row: Vec<Value> = vec![
                doc.id.as_str().into(),
                (i as i64).into(),
                r.suite.as_str().into(),
                r.benchmark.as_str().into(),
                r.family.as_str().into(),
                params_label(&r.params).into(),
                status.into(),
                r.reason.clone().into(),
                r.env(doc).into(),
                load.into(),
                iso.as_ref().into(),
                m.map(|m| m.name.clone()).into(),
                m.map(|m| m.unit.clone()).into(),
                Value::Int(s.map(|s| s.n as i64)),
                real(|s| s.min),
                real(|s| s.median),
                real(|s| s.mean),
                real(|s| s.p99),
                real(|s| s.max),
                real(|s| s.cv),
            ];
            row.extend(history::columns(m));
            c.exec(&insert, &row)?;
        }
    }
    Ok(())
}
